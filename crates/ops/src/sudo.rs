//! The node administrator scope (docs/design.md sections 5 and 9): who of the platform's
//! administrators may use sudo, and what sudo recorded. Both families are node-scope: their
//! requests use the envelope `{request_id, action, node_id, resource}`, root checks the node id
//! again before admitting them, and their resources live under the reserved owner `node:`.
//!
//! - `sudo_allowlist` (`set_sudo_allowlist`, `remove_sudo_allowlist`): one allowlist per node,
//!   with a generation the control plane raises on every change; a request whose generation is
//!   not greater than the installed one is refused (`stale_generation`), so a late or replayed
//!   request can never undo a newer one. Every listed user must exist in the local passwd, be
//!   a member of the platform's admin group (`sudo` on Debian, `wheel` on CloudLinux), have
//!   a UID within `UID_MIN..=UID_MAX` of the system's `login.defs`, and not be one of the
//!   node's tenant accounts (`sudo_user_is_tenant`). Each listed name and uid is recorded in
//!   state.db (`identities`) before the drop-in names it, and kept for good: the drop-in
//!   grants by name, so no tenant is ever given a name or a uid once an administrator's
//!   (`crates/ops/src/account/identity.rs` refuses the name and never allocates the uid), even after
//!   the administrator's user is deleted and its name and uid are free on the system. The drop-in
//!   (`/etc/sudoers.d/layerone`) denies sudo to the admin group and grants it to the listed
//!   users (sudoers applies the last matching rule, and sudo reads the drop-in after the main
//!   file's `%group` rule), and points sudo's own log at a file the node reads. It is checked
//!   with `visudo -c` before it is moved into place (`Provider::install_sudoers`); a failed
//!   check leaves the previous one.
//!   `remove_sudo_allowlist` removes the drop-in, so sudo falls back to the main sudoers file
//!   alone; the row stays as a tombstone carrying the generation, so a stale `set` replayed
//!   afterwards is still refused.
//! - `sudo_events` (`read_sudo_events`): a bounded page of sudo's native log, parsed and
//!   sanitized, with a cursor (byte offset and file identity: a rotated file restarts at its
//!   beginning and says so). A line that does not parse is returned as such, never dropped.
//!
//! Purge: these resources belong to the node, never to a tenant, so a tenant's purge leaves
//! them alone (both hooks are no-ops by design); removing the node's allowlist is
//! `remove_sudo_allowlist`. Reads leave no resource.

pub use declarations::sudo::*;

use registry::types::{Generation, Hex32, Presence, Username};
use registry::{Apply, Aspects, Content, Derive, Derived, Family, Of, OpError, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::AccountRow;
use crate::context::{Ctx, provider_error, store_error};

crash::points! {}

/// The node's sudo allowlist as stored: what is installed (`absent` after
/// `remove_sudo_allowlist`, a tombstone keeping the generation) and who it lists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SudoAllowlistRow {
    pub state: Presence,
    pub generation: u64,
    pub users: Vec<Username>,
}

impl StoredRow for SudoAllowlistRow {
    const FAMILY: &'static str = SudoAllowlist::NAME;
}

impl Purge<Ctx> for SudoAllowlist {
    const ROW: Option<RowType> = Some(store::row_type::<SudoAllowlistRow>());

    /// Nothing of a tenant's: the allowlist is the node's (owner `node:`), and a tenant purge
    /// never touches it. It is removed by `remove_sudo_allowlist`.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

impl Purge<Ctx> for SudoEvents {
    /// Reads leave nothing behind, for a tenant or for the node.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

const DROPIN: Aspects = Aspects::new(
    SUDO_DROPIN_MISSING,
    SUDO_DROPIN_DIFFERS,
);

impl Derive<Ctx> for SudoAllowlist {
    /// The drop-in as the allowlist's row renders it ([`render_dropin`]), or no drop-in
    /// while the row is the tombstone `remove_sudo_allowlist` leaves.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let layout = ctx.provider.sudo_layout();
        let path = ctx.provider.sysconf(layout.dropin);
        let mut items = Vec::new();
        for stored in ctx
            .view()
            .of_owner::<SudoAllowlistRow>(&Owner::Node)
            .map_err(store_error)?
        {
            let expected = match stored.row.state {
                Presence::Present => {
                    Content::Bytes(render_dropin(&stored.id, &stored.row, &layout).into_bytes())
                }
                Presence::Absent => Content::Absent,
            };
            let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
            items.push(Derived::path(
                Of::new(&stored.id, &Owner::Node),
                path.clone(),
                expected,
                Content::file(actual),
                DROPIN,
            ));
        }
        Ok(items)
    }
}

impl Derive<Ctx> for SudoEvents {
    /// Nothing: reading sudo's log derives nothing.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

impl Apply<Ctx> for SetSudoAllowlist {
    fn apply(ctx: &mut Ctx, req: &SetSudoAllowlistRequest) -> Result<SudoAllowlistResult, OpError> {
        check_generation(ctx, &req.id, req.generation)?;
        let layout = ctx.provider.sudo_layout();
        let (uid_min, uid_max) = ctx.provider.login_uid_range().map_err(provider_error)?;
        let group = ctx
            .provider
            .lookup_group(layout.admin_group)
            .map_err(provider_error)?
            .ok_or_else(|| {
                OpError::permanent(
                    "admin_group_missing",
                    format!("this node has no {} group", layout.admin_group),
                )
            })?;
        let (tenant_names, tenant_uids) = tenant_identities(ctx)?;
        let mut administrators = Vec::new();
        for user in req.users.iter() {
            let name = user.as_str();
            let entry = ctx
                .provider
                .lookup_user(name)
                .map_err(provider_error)?
                .ok_or_else(|| {
                    OpError::permanent(
                        "sudo_user_missing",
                        format!("{name} is not a local user of this node"),
                    )
                })?;
            if !(group.members.iter().any(|m| m == name) || entry.gid == group.gid) {
                return Err(OpError::permanent(
                    "sudo_user_not_admin",
                    format!("{name} is not a member of the {} group", layout.admin_group),
                ));
            }
            if !(uid_min..=uid_max).contains(&entry.uid) {
                return Err(OpError::permanent(
                    "sudo_user_uid_out_of_range",
                    format!(
                        "{name} has UID {}, outside the login range {uid_min}..={uid_max}",
                        entry.uid
                    ),
                ));
            }
            if tenant_names.contains(name) || tenant_uids.contains(&entry.uid) {
                return Err(OpError::permanent(
                    "sudo_user_is_tenant",
                    format!(
                        "{name} (UID {}) is a tenant account of this node, never an administrator",
                        entry.uid
                    ),
                ));
            }
            administrators.push((name, entry.uid));
        }
        // Before the drop-in names them: from here on no tenant gets these names or uids.
        for (name, uid) in administrators {
            ctx.state
                .record_administrator(name, uid)
                .map_err(store_error)?;
        }
        // The drop-in is derived from the allowlist's row, the one this job records.
        let row = SudoAllowlistRow {
            state: Presence::Present,
            generation: req.generation.get(),
            users: req.users.iter().cloned().collect(),
        };
        ctx.set_row(&row);
        let content = render_dropin(&req.id, &row, &layout);
        ensure_dir_if_missing(ctx, layout.dropin_dir, 0o755)?;
        // sudo creates the log file but not its directory; root only (the log names commands).
        if let Some(parent) = std::path::Path::new(layout.logfile).parent() {
            ensure_dir_if_missing(ctx, &parent.to_string_lossy(), 0o700)?;
        }
        ctx.provider
            .install_sudoers(&ctx.provider.sysconf(layout.dropin), content.as_bytes())
            .map_err(|e| match e {
                provider::ProviderError::Failed { .. } => OpError::permanent(
                    "sudoers_invalid",
                    format!("visudo refused the drop-in; the previous one is kept: {e}"),
                ),
                other => provider_error(other),
            })?;
        let users: Vec<String> = req.users.iter().map(|u| u.to_string()).collect();
        Ok(SudoAllowlistResult {
            state: Presence::Present,
            generation: req.generation.get(),
            users,
            admin_group: layout.admin_group.to_owned(),
        })
    }
}

impl Apply<Ctx> for RemoveSudoAllowlist {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveSudoAllowlistRequest,
    ) -> Result<SudoAllowlistResult, OpError> {
        check_generation(ctx, &req.id, req.generation)?;
        let layout = ctx.provider.sudo_layout();
        ctx.provider
            .remove_config(&ctx.provider.sysconf(layout.dropin))
            .map_err(provider_error)?;
        // A tombstone, not a deletion: the generation must outlive the drop-in.
        ctx.set_row(&SudoAllowlistRow {
            state: Presence::Absent,
            generation: req.generation.get(),
            users: Vec::new(),
        });
        Ok(SudoAllowlistResult {
            state: Presence::Absent,
            generation: req.generation.get(),
            users: Vec::new(),
            admin_group: layout.admin_group.to_owned(),
        })
    }
}

/// The names and uids of the node's tenant accounts: their resource rows and their live
/// recorded identities.
fn tenant_identities(
    ctx: &Ctx,
) -> Result<
    (
        std::collections::BTreeSet<String>,
        std::collections::BTreeSet<u32>,
    ),
    OpError,
> {
    let (mut names, mut uids) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for stored in ctx.view().all::<AccountRow>().map_err(store_error)? {
        names.insert(stored.row.username);
        uids.insert(stored.row.uid);
    }
    for row in ctx.state.identities().map_err(store_error)? {
        if row.kind == state::IdentityKind::Account && !row.removed {
            names.insert(row.name);
            uids.insert(row.uid);
        }
    }
    Ok((names, uids))
}

/// Refuses a request for another allowlist than the node's, or one not newer than it.
fn check_generation(ctx: &Ctx, id: &Hex32, generation: Generation) -> Result<(), OpError> {
    let rows = ctx
        .view()
        .of_owner::<SudoAllowlistRow>(&Owner::Node)
        .map_err(store_error)?;
    for row in rows {
        if &row.id != id {
            return Err(OpError::permanent(
                "allowlist_id_mismatch",
                format!(
                    "this node's sudo allowlist is {}; requests must name it",
                    row.id
                ),
            ));
        }
        let stored = row.row.generation;
        if generation.get() <= stored {
            return Err(OpError::permanent(
                "stale_generation",
                format!(
                    "generation {} is not newer than the installed generation {stored}",
                    generation.get()
                ),
            ));
        }
    }
    Ok(())
}

/// Creates a system directory with `mode` if it does not exist; an existing one (the
/// distribution's, or the installer's) keeps its mode.
fn ensure_dir_if_missing(ctx: &Ctx, system_path: &str, mode: u32) -> Result<(), OpError> {
    let path = ctx.provider.sysconf(system_path);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    ctx.provider.ensure_dir(&path, mode).map_err(provider_error)
}

/// The drop-in. Every value in it is a validated type ([`Username`] is `[a-z][a-z0-9_-]*`,
/// the rest are the node's constants), so no request can add a line or a rule to it.
pub fn render_dropin(id: &Hex32, row: &SudoAllowlistRow, layout: &provider::SudoLayout) -> String {
    let (admin_group, logfile) = (layout.admin_group, layout.logfile);
    let mut out = format!(
        "# Managed by layerone node (allowlist {id}, generation {}): changes made here are replaced.\n\
         # Members of %{admin_group} may use sudo only when listed below; sudo logs to {logfile}.\n\
         Defaults logfile=\"{logfile}\", log_year, loglinelen=0\n\
         %{admin_group} ALL=(ALL:ALL) !ALL\n",
        row.generation
    );
    for user in &row.users {
        out.push_str(&user_line(user));
    }
    out
}

fn user_line(user: &Username) -> String {
    format!("{user} ALL=(ALL:ALL) ALL\n")
}

/// How many bytes of the log one page reads at most.
const PAGE_BYTES: usize = 256 * 1024;
/// The longest kept field, in characters; the command gets more.
const FIELD_MAX: usize = 256;
const COMMAND_MAX: usize = 1024;

impl Apply<Ctx> for ReadSudoEvents {
    fn apply(ctx: &mut Ctx, req: &ReadSudoEventsRequest) -> Result<SudoEventsResult, OpError> {
        let path = ctx.provider.sysconf(ctx.provider.sudo_layout().logfile);
        let from = req.cursor.map(|c| provider::LogPosition {
            device: c.device,
            inode: c.inode,
            offset: c.offset,
        });
        let chunk = ctx
            .provider
            .read_log_chunk(&path, from, PAGE_BYTES)
            .map_err(provider_error)?;
        let Some(start) = chunk.start else {
            return Ok(SudoEventsResult {
                entries: Vec::new(),
                next_cursor: None,
                restarted: chunk.restarted,
            });
        };
        let limit = req.limit.get() as usize;
        let (entries, used) = parse_page(&chunk.bytes, limit, chunk.truncated_line);
        let next_offset = if used == chunk.bytes.len() {
            chunk.next_offset
        } else {
            start.offset + used as u64
        };
        Ok(SudoEventsResult {
            entries,
            next_cursor: Some(SudoLogCursor {
                device: start.device,
                inode: start.inode,
                offset: next_offset,
            }),
            restarted: chunk.restarted,
        })
    }
}

/// Parses whole entries (a line and the indented lines sudo wraps it onto) from `bytes`, up
/// to `limit` of them. Returns them and how many bytes they took.
pub fn parse_page(bytes: &[u8], limit: usize, last_line_cut: bool) -> (Vec<SudoEntry>, usize) {
    let mut entries = Vec::new();
    let mut used = 0;
    let mut pos = 0;
    while pos < bytes.len() && entries.len() < limit {
        let mut end = next_line_end(bytes, pos);
        // Continuation lines (sudo's `loglinelen` wrapping) start with four spaces.
        while end < bytes.len() && bytes[end..].starts_with(b"    ") {
            end = next_line_end(bytes, end);
        }
        let raw = String::from_utf8_lossy(&bytes[pos..end]);
        let joined = raw
            .split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let cut = last_line_cut && end == bytes.len();
        if !joined.is_empty() {
            entries.push(if cut {
                SudoEntry::Unparseable {
                    line: clean(&joined, FIELD_MAX),
                    reason: format!("the line is longer than {PAGE_BYTES} bytes"),
                }
            } else {
                parse_entry(&joined)
            });
        }
        pos = end;
        used = end;
    }
    (entries, used)
}

fn next_line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| from + i + 1)
}

/// Removes control characters and cuts to `max` characters.
fn clean(s: &str, max: usize) -> String {
    s.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// `Nov 29 08:44:57 2026 : alice : [MESSAGE ; ]TTY=pts/0 ; PWD=/home/alice ; USER=root ;
/// COMMAND=/usr/bin/id` (with `log_year`; without, the date has no year).
pub fn parse_entry(line: &str) -> SudoEntry {
    let unparseable = |reason: &str| SudoEntry::Unparseable {
        line: clean(line, FIELD_MAX),
        reason: reason.to_owned(),
    };
    let mut parts = line.splitn(3, " : ");
    let (Some(time), Some(user), Some(mut rest)) = (parts.next(), parts.next(), parts.next())
    else {
        return unparseable("not `DATE : USER : DETAILS`");
    };
    if !looks_like_sudo_time(time) {
        return unparseable("the date is not sudo's `Mon DD HH:MM:SS [YYYY]`");
    }
    if user.is_empty() || user.contains(char::is_whitespace) {
        return unparseable("no user name");
    }
    // With `log_host`, the host comes as its own ` : ` segment.
    if let Some(after_host) = rest.strip_prefix("HOST=")
        && let Some((_, tail)) = after_host.split_once(" : ")
    {
        rest = tail;
    }
    let Some((before, command)) = rest.split_once("COMMAND=") else {
        return unparseable("no COMMAND=");
    };
    let (mut message, mut tty, mut pwd, mut runas_user, mut runas_group) =
        (Vec::new(), None, None, None, None);
    for item in before.split(" ; ").map(str::trim).filter(|i| !i.is_empty()) {
        let item = item.trim_end_matches(" ;").trim_end_matches(';').trim();
        match item.split_once('=') {
            Some(("TTY", v)) => tty = Some(clean(v, FIELD_MAX)),
            Some(("PWD", v)) => pwd = Some(clean(v, FIELD_MAX)),
            Some(("USER", v)) => runas_user = Some(clean(v, FIELD_MAX)),
            Some(("GROUP", v)) => runas_group = Some(clean(v, FIELD_MAX)),
            Some((key, _))
                if !key.is_empty() && key.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') =>
            {
                // ENV=, TSID=, CHROOT=...: known to sudo, not part of the page's contract.
            }
            _ if item.is_empty() => {}
            _ => message.push(item),
        }
    }
    SudoEntry::Event {
        time: clean(time, 32),
        user: clean(user, FIELD_MAX),
        message: (!message.is_empty()).then(|| clean(&message.join("; "), FIELD_MAX)),
        tty,
        pwd,
        runas_user,
        runas_group,
        command: clean(command, COMMAND_MAX),
    }
}

/// `Mon DD HH:MM:SS` with an optional ` YYYY`.
fn looks_like_sudo_time(time: &str) -> bool {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let words: Vec<&str> = time.split_whitespace().collect();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let clock = |s: &str| {
        let f: Vec<&str> = s.split(':').collect();
        f.len() == 3 && f.iter().all(|p| digits(p, 2))
    };
    match words.as_slice() {
        [month, day, hms] | [month, day, hms, _] => {
            MONTHS.contains(month)
                && (digits(day, 1) || digits(day, 2))
                && clock(hms)
                && words.get(3).is_none_or(|y| digits(y, 4))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sudo_log_lines_parse_into_events() {
        // Lines as sudo 1.9.13 wrote them with the drop-in's Defaults.
        let e = parse_entry(
            "Nov 29 08:44:57 2026 : root : PWD=/tmp/vt ; USER=nobody ; COMMAND=/usr/bin/sh -c 'echo \"a;b\"'",
        );
        assert_eq!(
            e,
            SudoEntry::Event {
                time: "Nov 29 08:44:57 2026".into(),
                user: "root".into(),
                message: None,
                tty: None,
                pwd: Some("/tmp/vt".into()),
                runas_user: Some("nobody".into()),
                runas_group: None,
                command: "/usr/bin/sh -c 'echo \"a;b\"'".into(),
            }
        );
        let e = parse_entry(
            "Nov 29 08:44:57 2026 : nobody : a password is required ; TTY=pts/1 ; PWD=/tmp ; USER=root ; COMMAND=/usr/bin/true",
        );
        let SudoEntry::Event {
            message, tty, user, ..
        } = e
        else {
            panic!("{e:?}")
        };
        assert_eq!(message.as_deref(), Some("a password is required"));
        assert_eq!(tty.as_deref(), Some("pts/1"));
        assert_eq!(user, "nobody");
    }

    #[test]
    fn garbage_is_reported_not_dropped_and_controls_are_stripped() {
        let text = b"hello world\nNov  1 01:02:03 : al\x1bice : TTY=x ; COMMAND=/bin/id\x07\n";
        let (entries, used) = parse_page(text, 10, false);
        assert_eq!(used, text.len());
        assert!(matches!(entries[0], SudoEntry::Unparseable { .. }));
        let SudoEntry::Event { user, command, .. } = &entries[1] else {
            panic!("{:?}", entries[1])
        };
        assert_eq!(user, "alice");
        assert_eq!(command, "/bin/id");
        let long = format!(
            "Nov 29 08:44:57 2026 : a : COMMAND=/bin/{}",
            "x".repeat(5000)
        );
        let SudoEntry::Event { command, .. } = parse_entry(&long) else {
            panic!()
        };
        assert_eq!(command.chars().count(), COMMAND_MAX);
    }

    #[test]
    fn wrapped_lines_join_and_the_limit_leaves_the_rest_for_the_cursor() {
        let text = b"Nov 29 08:44:57 2026 : a : PWD=/ ; USER=root ;\n    COMMAND=/bin/id\nNov 29 08:44:58 2026 : b : COMMAND=/bin/true\n";
        let (entries, used) = parse_page(text, 1, false);
        assert_eq!(entries.len(), 1);
        let SudoEntry::Event { command, .. } = &entries[0] else {
            panic!("{:?}", entries[0])
        };
        assert_eq!(command, "/bin/id");
        let (rest, _) = parse_page(&text[used..], 10, false);
        assert_eq!(rest.len(), 1);
    }
}
