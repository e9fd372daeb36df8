//! The `scheduled_task` family: a tenant's cron jobs, run as the tenant by the system's cron.
//!
//! The tenant's crontab is derived whole from state.db on every change (every task of the
//! account, the running job's change applied) and installed with `crontab -u USER FILE`
//! after the installer's own dry run (`Provider::install_crontab`): the cron package keeps
//! its spool's ownership and modes, and a file it refuses is never installed, so the user
//! keeps the previous crontab. No task, no crontab (`crontab -u USER -r`).
//!
//! A task is typed: a validated schedule ([`CronSchedule`]) and one of two kinds, a PHP
//! script beneath the home run with a named, installed PHP version's command-line binary, or
//! an HTTP(S) URL fetched with curl under a timeout. cron hands the command to `/bin/sh -c`,
//! so the command is built from validated pieces only (paths from the provider's tables, a
//! [`HomePath`], an [`HttpUrl`], numbers), each single-quoted, with cron's `%` escaped:
//! [`command_words`] and [`render_line`] are tested by parsing the line back with a real
//! shell.

pub use declarations::scheduled_task::*;

use registry::types::{CronSchedule, Presence, TaskKind};
use registry::{Apply, Aspects, Content, Derive, Derived, Family, Hex32, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::{AccountInfo, AccountRow, account_info, live_accounts_of};
use crate::context::{Ctx, provider_error, store_error};
use crate::php::require_version;

crash::points! {
    AFTER_CRONTAB = "scheduled_task.after_crontab",
}

/// One task as stored: when, and what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledTaskRow {
    pub schedule: CronSchedule,
    pub task: TaskKind,
}

impl StoredRow for ScheduledTaskRow {
    const FAMILY: &'static str = ScheduledTask::NAME;
}

/// The curl the fetch tasks run (Debian and CloudLinux both ship it here).
pub const CURL: &str = "/usr/bin/curl";

/// The largest response a fetch task downloads (and throws away).
pub const FETCH_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// The words of a task's command: an absolute program from a table, then its arguments.
pub fn command_words(ctx: &Ctx, home: &std::path::Path, task: &TaskKind) -> Vec<String> {
    match task {
        TaskKind::PhpScript(t) => {
            let cli = ctx
                .provider
                .php_fpm_layout(t.php_version)
                .cli;
            vec![
                cli,
                "-f".into(),
                home.join(t.path.as_str()).display().to_string(),
            ]
        }
        TaskKind::FetchUrl(t) => vec![
            CURL.into(),
            "--silent".into(),
            "--show-error".into(),
            "--fail".into(),
            "--max-time".into(),
            t.timeout_s.get().to_string(),
            "--max-filesize".into(),
            FETCH_MAX_BYTES.to_string(),
            "--proto".into(),
            "=http,https".into(),
            "--output".into(),
            "/dev/null".into(),
            t.url.as_str().into(),
        ],
    }
}

/// One word for `/bin/sh`, single-quoted (a `'` inside closes, escapes and reopens), with
/// `%` escaped for cron, which would otherwise end the command there.
pub fn quote_word(word: &str) -> String {
    let quoted = format!("'{}'", word.replace('\'', "'\\''"));
    quoted.replace('%', "\\%")
}

/// The crontab line of one task.
pub fn render_line(schedule: &CronSchedule, words: &[String]) -> String {
    let command: Vec<String> = words.iter().map(|w| quote_word(w)).collect();
    format!("{schedule} {}", command.join(" "))
}

/// The whole crontab of an account.
pub fn render_crontab(account: &Hex32, lines: &[(Hex32, String)]) -> String {
    let mut out = format!(
        "# Managed by layerone node for account {account}. Changes made here are replaced.\n\
         MAILTO=\"\"\n\
         SHELL=/bin/sh\n\
         PATH=/usr/bin:/bin\n"
    );
    for (id, line) in lines {
        out.push_str(&format!("# task {id}\n{line}\n"));
    }
    out
}

/// The lines of `account`'s crontab from the view: every task of the account, this job's
/// change included, by id.
fn crontab_lines(
    ctx: &Ctx,
    account: &Hex32,
    info: &AccountInfo,
) -> Result<Vec<(Hex32, String)>, OpError> {
    let tasks = ctx
        .view()
        .of_account::<ScheduledTaskRow>(account)
        .map_err(store_error)?;
    let home = ctx.provider.sysconf(&info.home);
    Ok(tasks
        .into_iter()
        .map(|stored| {
            let words = command_words(ctx, &home, &stored.row.task);
            (stored.id, render_line(&stored.row.schedule, &words))
        })
        .collect())
}

/// Re-derives and installs `account`'s crontab from the view: every task of the account,
/// this job's change included. Returns how many tasks it holds.
fn sync_crontab(ctx: &mut Ctx, account: &Hex32) -> Result<usize, OpError> {
    let info = account_info(ctx, account)?;
    let lines = crontab_lines(ctx, account, &info)?;
    if lines.is_empty() {
        ctx.provider
            .remove_crontab(&info.username)
            .map_err(provider_error)?;
    } else {
        let text = render_crontab(account, &lines);
        ctx.provider
            .install_crontab(&info.username, text.as_bytes())
            .map_err(provider_error)?;
    }
    crash::point(AFTER_CRONTAB);
    Ok(lines.len())
}

const CRONTAB_FILE: Aspects =
    Aspects::new(CRONTAB_MISSING, CRONTAB_DIFFERS);

impl Derive<Ctx> for ScheduledTask {
    /// The crontab of each account with tasks, as installed in the cron spool (read there,
    /// without the installer's header). An account without a task is left out: the node
    /// removed its crontab then, and what the tenant installs itself is the tenant's.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = Vec::new();
        for (account, info) in live_accounts_of::<ScheduledTaskRow>(ctx)? {
            let lines = crontab_lines(ctx, &account, &info)?;
            let actual = ctx
                .provider
                .installed_crontab(&info.username)
                .map_err(provider_error)?;
            items.push(Derived::path(
                Of::account(&account),
                ctx.provider.crontab_spool_file(&info.username),
                Content::Bytes(render_crontab(&account, &lines).into_bytes()),
                Content::file(actual),
                CRONTAB_FILE,
            ));
        }
        Ok(items)
    }
}

impl Purge<Ctx> for ScheduledTask {
    const ROW: Option<RowType> = Some(store::row_type::<ScheduledTaskRow>());

    /// Removes the account's crontab and forgets its tasks. Runs before the account's own
    /// purge, while the user still exists.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let username = ctx
            .view()
            .get::<AccountRow>(account)
            .map_err(store_error)?
            .map(|stored| stored.row.username);
        if let Some(username) = username
            && ctx
                .provider
                .lookup_user(&username)
                .map_err(provider_error)?
                .is_some()
        {
            ctx.provider
                .remove_crontab(&username)
                .map_err(provider_error)?;
        }
        ctx.forget_rows_of::<ScheduledTaskRow>(account)
    }
}

impl Apply<Ctx> for EnsureScheduledTask {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureScheduledTaskRequest,
    ) -> Result<ScheduledTaskResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        if let TaskKind::PhpScript(t) = &req.task {
            require_version(ctx, t.php_version)?;
            if !ctx
                .provider
                .php_cli_installed(t.php_version)
            {
                return Err(OpError::permanent(
                    "php_cli_unavailable",
                    format!(
                        "PHP {} has no command-line binary on this node",
                        t.php_version.as_str()
                    ),
                ));
            }
        }
        ctx.set_row(&ScheduledTaskRow {
            schedule: req.schedule.clone(),
            task: req.task.clone(),
        });
        let count = sync_crontab(ctx, &req.account)?;
        let home = ctx.provider.sysconf(&info.home);
        let line = render_line(&req.schedule, &command_words(ctx, &home, &req.task));
        Ok(ScheduledTaskResult {
            state: Presence::Present,
            line: Some(line),
            tasks_in_crontab: count as u64,
        })
    }
}

impl Apply<Ctx> for RemoveScheduledTask {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveScheduledTaskRequest,
    ) -> Result<ScheduledTaskResult, OpError> {
        ctx.forget_row();
        let count = match ctx
            .view()
            .get::<AccountRow>(&req.account)
            .map_err(store_error)?
        {
            Some(_) => sync_crontab(ctx, &req.account)?,
            // No account, no crontab: the purge already removed it.
            None => 0,
        };
        Ok(ScheduledTaskResult {
            state: Presence::Absent,
            line: None,
            tasks_in_crontab: count as u64,
        })
    }
}
