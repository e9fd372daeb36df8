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

use std::collections::BTreeMap;

use registry::types::{CronSchedule, Presence, TaskKind};
use registry::{Apply, Family, Hex32, OpError, Owner, Purge};
use serde_json::{Value, json};

use crate::account::{Account, account_info, store_error};
use crate::context::{Ctx, provider_error};
use crate::php::{provider_version, require_version};

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
                .php_fpm_layout(provider_version(t.php_version))
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

/// Re-derives and installs `account`'s crontab with `change` (task id, new row or `None`)
/// applied over state.db.
fn sync_crontab(
    ctx: &mut Ctx,
    account: &Hex32,
    change: Option<(&Hex32, Option<&Value>)>,
) -> Result<usize, OpError> {
    let info = account_info(ctx, account)?;
    let mut rows: BTreeMap<Hex32, Value> = ctx
        .state
        .resources_of(&Owner::Tenant(account.clone()), ScheduledTask::NAME)
        .map_err(store_error)?
        .into_iter()
        .map(|r| (r.resource_id, r.data))
        .collect();
    if let Some((id, row)) = change {
        match row {
            Some(data) => rows.insert(id.clone(), data.clone()),
            None => rows.remove(id),
        };
    }
    let home = ctx.provider.sysconf(&info.home);
    let mut lines = Vec::new();
    for (id, data) in &rows {
        let schedule: CronSchedule = data["schedule"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| corrupt(id))?;
        let task: TaskKind =
            serde_json::from_value(data["task"].clone()).map_err(|_| corrupt(id))?;
        lines.push((
            id.clone(),
            render_line(&schedule, &command_words(ctx, &home, &task)),
        ));
    }
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
    crash::point("scheduled_task.after_crontab");
    Ok(lines.len())
}

fn corrupt(id: &Hex32) -> OpError {
    OpError::permanent(
        "state_corrupt",
        format!("the recorded scheduled task {id} does not parse"),
    )
}

impl Purge<Ctx> for ScheduledTask {
    /// Removes the account's crontab and forgets its tasks. Runs before the account's own
    /// purge, while the user still exists.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let username = ctx
            .state
            .resource(Account::NAME, account)
            .map_err(store_error)?
            .and_then(|row| row.data["username"].as_str().map(str::to_owned));
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
        ctx.state
            .forget_resources_of(account, ScheduledTask::NAME)
            .map_err(store_error)?;
        Ok(())
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
                .php_cli_installed(provider_version(t.php_version))
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
        let data = json!({"schedule": req.schedule, "task": req.task});
        let count = sync_crontab(ctx, &req.account, Some((&req.id, Some(&data))))?;
        let home = ctx.provider.sysconf(&info.home);
        let line = render_line(&req.schedule, &command_words(ctx, &home, &req.task));
        ctx.set_resource(data);
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
        let count = match ctx
            .state
            .resource(Account::NAME, &req.account)
            .map_err(store_error)?
        {
            Some(_) => sync_crontab(ctx, &req.account, Some((&req.id, None)))?,
            // No account, no crontab: the purge already removed it.
            None => 0,
        };
        ctx.forget_row();
        Ok(ScheduledTaskResult {
            state: Presence::Absent,
            line: None,
            tasks_in_crontab: count as u64,
        })
    }
}
