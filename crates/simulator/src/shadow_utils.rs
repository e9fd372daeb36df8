//! Models of useradd, usermod, userdel, groupadd and groupdel on a sysroot.
//!
//! Behaviour follows shadow-utils 4.13 (Debian 12) with the distribution defaults
//! USERGROUPS_ENAB=yes and UMASK 022, and the UID/GID ranges of the sysroot's `login.defs`
//! (1000..=60000 without one), as checked against the real programs run with `--prefix` (see
//! the crate's integration tests). `--uid` and `--gid` take the id the node chose; useradd
//! warns, like the real one, about a uid outside UID_MIN..UID_MAX. userdel refuses a user with
//! a running process (exit 8) only without `--prefix`, as the real one does (with a prefix it
//! does not look): the model scans this machine's `/proc` then, skipping zombies, whose
//! `/proc/PID/root` cannot be read, as shadow-utils' `user_busy` does. Not modelled: skel
//! copying, NSS, lastlog/faillog.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use provider::{Platform, Provider, ProviderError, parse_passwd_line};

use super::etc_files::{DbLock, Table, lock};
use super::{CommandLine, Outcome, today};

/// useradd creates the home with `0777 & !UMASK`; the provider then sets `HOME_MODE`.
const USERADD_HOME_MODE: u32 = 0o755;

struct Db {
    passwd: Table,
    group: Table,
    shadow: Table,
    gshadow: Table,
    _lock: DbLock,
}

impl Db {
    fn open(provider: &Provider) -> Result<Db, ProviderError> {
        let lock = lock(&provider.sysconf("/etc"))?;
        Ok(Db {
            passwd: Table::load(provider.sysconf("/etc/passwd"), 0o644)?,
            group: Table::load(provider.sysconf("/etc/group"), 0o644)?,
            shadow: Table::load(provider.sysconf("/etc/shadow"), 0o640)?,
            gshadow: Table::load(provider.sysconf("/etc/gshadow"), 0o640)?,
            _lock: lock,
        })
    }

    /// Writes back the tables; gshadow only if the sysroot has one (the real tools maintain
    /// it only where it exists). Each file is replaced on its own, in the order shadow-utils
    /// 4.13 renames them (passwd, shadow, group, gshadow), so a process killed in between
    /// leaves what the real tools would: a user in passwd without its shadow entry after
    /// useradd, a shadow entry without its user after userdel.
    fn save(&self, passwd: bool, group: bool) -> Result<(), ProviderError> {
        if passwd {
            self.passwd.save()?;
            self.shadow.save()?;
        }
        if group {
            self.group.save()?;
            if self.gshadow.exists() {
                self.gshadow.save()?;
            }
        }
        Ok(())
    }
}

/// An I/O failure inside the model, reported like a real program's "cannot update" error.
fn io_failure(program: &str, err: &ProviderError) -> Outcome {
    let mut text = format!("{program}: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text.push('\n');
    Outcome::fail(1, text)
}

/// Parses the command line, checks `--prefix` against the provider root, and returns the
/// single operand (the user or group name).
fn prelude(
    provider: &Provider,
    program: &str,
    args: &[String],
    with_value: &[&str],
    flags: &[&str],
) -> Result<(CommandLine, String), Outcome> {
    let line = CommandLine::parse(program, args, with_value, flags)?;
    let expected = if provider.root_is_slash() {
        None
    } else {
        Some(provider.root().to_string_lossy().into_owned())
    };
    if line.value("--prefix").map(str::to_owned) != expected {
        return Err(Outcome::fail(
            2,
            format!(
                "layerone sim: {program} --prefix {:?} does not match the provider root {}\n",
                line.value("--prefix"),
                provider.root().display()
            ),
        ));
    }
    match line.operands.as_slice() {
        [name] => {
            let name = name.clone();
            Ok((line, name))
        }
        _ => Err(Outcome::fail(
            2,
            format!("Usage: {program} [options] NAME\n"),
        )),
    }
}

/// shadow-utils' rules, relaxed the Debian way: no leading `-`, `+` or `~`, no `:`, `,`,
/// `/`, whitespace or control characters, at most 32 bytes.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.starts_with(['-', '+', '~'])
        && !name
            .chars()
            .any(|c| matches!(c, ':' | ',' | '/') || c.is_whitespace() || c.is_control())
        && name != "."
        && name != ".."
}

/// A passwd/shadow field value: no separator, no line break.
fn valid_field(value: &str) -> bool {
    !value.contains([':', '\n'])
}

/// max(existing ids in MIN..=MAX, MIN - 1) + 1, as shadow-utils picks uids/gids.
fn next_id(ids: impl Iterator<Item = u32>, (min, max): (u32, u32)) -> Option<u32> {
    let highest = ids
        .filter(|id| (min..=max).contains(id))
        .max()
        .unwrap_or(min - 1);
    (highest < max).then_some(highest + 1)
}

/// An id given on the command line (`--uid`, `--gid`): decimal, below 2^32 - 1 (`-1` is
/// "no id" to the kernel).
fn parse_id(value: &str) -> Option<u32> {
    value
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| value.parse::<u32>().ok())
        .flatten()
        .filter(|&id| id != u32::MAX)
}

fn ids_in(table: &Table, field: usize) -> impl Iterator<Item = u32> + '_ {
    table
        .lines
        .iter()
        .filter_map(move |line| line.split(':').nth(field)?.parse().ok())
}

macro_rules! tri {
    ($program:expr, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(err) => return io_failure($program, &err),
        }
    };
}

pub(super) fn useradd(provider: &Provider, args: &[String]) -> Outcome {
    let (line, name) = match prelude(
        provider,
        "useradd",
        args,
        &[
            "--prefix",
            "--gid",
            "--home-dir",
            "--shell",
            "--comment",
            "--password",
            "--uid",
        ],
        &["--create-home"],
    ) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if !valid_name(&name) {
        return Outcome::fail(3, format!("useradd: invalid user name '{name}'\n"));
    }
    let comment = line.value("--comment").unwrap_or("");
    if !valid_field(comment) {
        return Outcome::fail(3, format!("useradd: invalid comment '{comment}'\n"));
    }
    let Some(home) = line.value("--home-dir") else {
        return Outcome::fail(
            2,
            "layerone sim: useradd without --home-dir (the login.defs default) is not modelled\n",
        );
    };
    if !home.starts_with('/') || !valid_field(home) {
        return Outcome::fail(3, format!("useradd: invalid home directory '{home}'\n"));
    }
    let shell = line.value("--shell").unwrap_or("");
    if !(shell.is_empty() || shell.starts_with('/')) || !valid_field(shell) {
        return Outcome::fail(3, format!("useradd: invalid shell '{shell}'\n"));
    }
    let password = line.value("--password");
    if let Some(pw) = password
        && !valid_field(pw)
    {
        return Outcome::fail(3, "useradd: invalid field\n");
    }
    let Some(group) = line.value("--gid") else {
        return Outcome::fail(
            2,
            "layerone sim: useradd without --gid (a user-private group) is not modelled\n",
        );
    };
    let wanted_uid = match line.value("--uid") {
        None => None,
        Some(v) => match parse_id(v) {
            Some(uid) => Some(uid),
            None => return Outcome::fail(3, format!("useradd: invalid user ID '{v}'\n")),
        },
    };
    let range = tri!("useradd", provider.login_uid_range());

    let mut db = tri!("useradd", Db::open(provider));
    if db.passwd.find(&name).is_some() {
        return Outcome::fail(9, format!("useradd: user '{name}' already exists\n"));
    }
    if db.shadow.find(&name).is_some() {
        return Outcome::fail(
            9,
            format!("useradd: user '{name}' already exists in /etc/shadow\n"),
        );
    }
    let gid = match group.parse::<u32>() {
        Ok(gid) if ids_in(&db.group, 2).any(|g| g == gid) => Some(gid),
        Ok(_) => None,
        Err(_) => db
            .group
            .find(group)
            .and_then(|i| db.group.fields(i).get(2)?.parse().ok()),
    };
    let Some(gid) = gid else {
        return Outcome::fail(6, format!("useradd: group '{group}' does not exist\n"));
    };
    let mut outcome = Outcome::ok();
    let uid = match wanted_uid {
        Some(uid) if ids_in(&db.passwd, 2).any(|u| u == uid) => {
            return Outcome::fail(4, format!("useradd: UID {uid} is not unique\n"));
        }
        Some(uid) => {
            if !(range.0..=range.1).contains(&uid) {
                outcome = outcome.warn(format!(
                    "useradd warning: {name}'s uid {uid} outside of the UID_MIN {} and UID_MAX {} range.",
                    range.0, range.1
                ));
            }
            uid
        }
        None => match next_id(ids_in(&db.passwd, 2), range) {
            Some(uid) => uid,
            None => {
                return Outcome::fail(
                    4,
                    "useradd: Can't get unique UID (no more available UIDs)\n",
                );
            }
        },
    };
    // Debian's useradd writes `!` for "no password yet", Red Hat's (CloudLinux) `!!`.
    let locked_empty = match provider.platform() {
        Platform::Debian => "!",
        Platform::CloudLinux => "!!",
    };
    let hash = password.unwrap_or(locked_empty);
    db.passwd
        .lines
        .push(format!("{name}:x:{uid}:{gid}:{comment}:{home}:{shell}"));
    db.shadow
        .lines
        .push(format!("{name}:{hash}:{}:0:99999:7:::", today(provider)));
    tri!("useradd", db.save(true, false));
    drop(db);

    if !line.has("--create-home") {
        return outcome;
    }
    let path = provider.sysconf(home);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => outcome
            .warn(format!(
                "useradd: warning: the home directory {home} already exists."
            ))
            .warn("useradd: Not copying any file from skel directory into it."),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match create_home(&path, provider.is_root().then_some((uid, gid))) {
                Ok(()) => outcome,
                Err(e) => Outcome::fail(
                    12,
                    format!("useradd: cannot create directory {home}: {e}\n"),
                ),
            }
        }
        Err(e) => Outcome::fail(
            12,
            format!("useradd: cannot create directory {home}: {e}\n"),
        ),
    }
}

fn create_home(path: &Path, owner: Option<(u32, u32)>) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::DirBuilder::new()
        .mode(USERADD_HOME_MODE)
        .create(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(USERADD_HOME_MODE))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    }
    Ok(())
}

pub(super) fn usermod(provider: &Provider, args: &[String]) -> Outcome {
    let (line, name) = match prelude(
        provider,
        "usermod",
        args,
        &["--prefix", "--expiredate", "--shell", "--password", "--gid"],
        &["--lock", "--unlock"],
    ) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let lock_flag = line.has("--lock");
    let unlock_flag = line.has("--unlock");
    let password = line.value("--password");
    if (lock_flag && (password.is_some() || unlock_flag)) || (password.is_some() && unlock_flag) {
        return Outcome::fail(2, "usermod: the -L, -p, and -U flags are exclusive\n");
    }
    let expire = line.value("--expiredate");
    let shell = line.value("--shell");
    let new_group = line.value("--gid");
    if !(lock_flag || unlock_flag)
        && password.is_none()
        && expire.is_none()
        && shell.is_none()
        && new_group.is_none()
    {
        return Outcome::fail(2, "usermod: no options\n");
    }
    let expire_field = match expire {
        None => None,
        Some("") | Some("-1") => Some(String::new()),
        Some(days) if !days.is_empty() && days.bytes().all(|b| b.is_ascii_digit()) => {
            match days.parse::<i64>() {
                Ok(n) => Some(n.to_string()),
                Err(_) => return Outcome::fail(3, format!("usermod: invalid date '{days}'\n")),
            }
        }
        Some(other) => return Outcome::fail(3, format!("usermod: invalid date '{other}'\n")),
    };
    if let Some(shell) = shell
        && !valid_field(shell)
    {
        return Outcome::fail(3, format!("usermod: invalid field '{shell}'\n"));
    }
    if let Some(pw) = password
        && !valid_field(pw)
    {
        return Outcome::fail(3, "usermod: invalid field\n");
    }

    let mut db = tri!("usermod", Db::open(provider));
    let Some(pw_index) = db.passwd.find(&name) else {
        return Outcome::fail(6, format!("usermod: user '{name}' does not exist\n"));
    };
    // The new primary group, by gid or name; it must exist.
    let new_gid = match new_group {
        None => None,
        Some(group) => {
            let gid = match parse_id(group) {
                Some(gid) => ids_in(&db.group, 2).find(|&g| g == gid),
                None => db
                    .group
                    .find(group)
                    .and_then(|i| db.group.fields(i).get(2)?.parse().ok()),
            };
            match gid {
                Some(gid) => Some(gid),
                None => {
                    return Outcome::fail(6, format!("usermod: group '{group}' does not exist\n"));
                }
            }
        }
    };
    let mut outcome = Outcome::ok();
    if lock_flag || unlock_flag || password.is_some() || expire_field.is_some() {
        // Like usermod, a new password or expiry date gives a user without a shadow entry
        // one (its password field moved there); a lock alone is not modelled.
        let sp_index = match db.shadow.find(&name) {
            Some(index) => index,
            None if password.is_some() || expire_field.is_some() => {
                let mut pw = db.passwd.fields(pw_index);
                let moved = std::mem::replace(&mut pw[1], "x".to_owned());
                db.passwd.set_fields(pw_index, &pw);
                db.shadow
                    .lines
                    .push(format!("{name}:{moved}:{}:0:99999:7:::", today(provider)));
                db.shadow.lines.len() - 1
            }
            None => {
                return Outcome::fail(
                    1,
                    format!("layerone sim: usermod: user '{name}' has no /etc/shadow entry\n"),
                );
            }
        };
        let mut sp = db.shadow.fields(sp_index);
        if sp.len() != 9 {
            return Outcome::fail(
                1,
                format!("usermod: malformed /etc/shadow entry for '{name}'\n"),
            );
        }
        if unlock_flag && sp[1].starts_with('!') {
            if sp[1].len() == 1 {
                outcome = outcome
                    .warn("usermod: unlocking the user's password would result in a passwordless account.")
                    .warn("You should set a password with usermod -p to unlock this user's password.");
            } else {
                sp[1].remove(0);
            }
        }
        if lock_flag && !sp[1].starts_with('!') {
            sp[1].insert(0, '!');
        }
        if let Some(pw) = password {
            sp[1] = pw.to_owned();
            sp[2] = today(provider).to_string();
        }
        if let Some(field) = expire_field {
            sp[7] = field;
        }
        db.shadow.set_fields(sp_index, &sp);
    }
    let mut regroup = None;
    if shell.is_some() || new_gid.is_some() {
        let mut pw = db.passwd.fields(pw_index);
        if pw.len() != 7 {
            return Outcome::fail(
                1,
                format!("usermod: malformed /etc/passwd entry for '{name}'\n"),
            );
        }
        if let Some(shell) = shell {
            pw[6] = shell.to_owned();
        }
        if let Some(gid) = new_gid {
            let old: Option<u32> = pw[3].parse().ok();
            if old != Some(gid) {
                regroup = old.map(|old| (PathBuf::from(&pw[5]), old, gid));
                pw[3] = gid.to_string();
            } else if shell.is_none()
                && !(lock_flag || unlock_flag)
                && password.is_none()
                && expire.is_none()
            {
                outcome = outcome.warn("usermod: no changes");
            }
        }
        db.passwd.set_fields(pw_index, &pw);
    }
    tri!("usermod", db.save(true, false));
    drop(db);
    // Like the real usermod: what in the home had the old primary group gets the new one
    // (never following a symlink; the home itself included).
    if let Some((home, old, new)) = regroup
        && provider.is_root()
        && home.is_absolute()
    {
        regroup_tree(&provider.sysconf(&home), old, new, 0);
    }
    outcome
}

/// Gives every entry beneath (and including) `path` whose group is `old` the group `new`,
/// without following symlinks or descending more than 256 levels. Errors are ignored, as the
/// real usermod's chown of the home only warns.
fn regroup_tree(path: &Path, old: u32, new: u32, depth: usize) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.gid() == old {
        let _ = std::os::unix::fs::lchown(path, None, Some(new));
    }
    if meta.is_dir() && depth < 256 {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            regroup_tree(&entry.path(), old, new, depth + 1);
        }
    }
}

pub(super) fn userdel(provider: &Provider, args: &[String]) -> Outcome {
    let (line, name) = match prelude(provider, "userdel", args, &["--prefix"], &["--remove"]) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let mut db = tri!("userdel", Db::open(provider));
    let Some(user) = db
        .passwd
        .find(&name)
        .and_then(|i| parse_passwd_line(&db.passwd.lines[i]))
    else {
        return Outcome::fail(6, format!("userdel: user '{name}' does not exist\n"));
    };
    // Without --prefix the real userdel refuses a user that runs a process; with one (every
    // sysroot but `/`) it does not look.
    if provider.root_is_slash()
        && let Some(pid) = running_process_of(user.uid)
    {
        return Outcome::fail(
            8,
            format!("userdel: user {name} is currently used by process {pid}\n"),
        );
    }
    db.passwd.remove(&name);
    db.shadow.remove(&name);
    let mut outcome = Outcome::ok();

    // Drop the user from supplementary member lists (group field 4, gshadow fields 3 and 4).
    for (table, member_fields) in [(&mut db.group, &[3][..]), (&mut db.gshadow, &[2, 3][..])] {
        for index in 0..table.lines.len() {
            let mut fields = table.fields(index);
            let mut changed = false;
            for &f in member_fields {
                if let Some(list) = fields.get_mut(f) {
                    let kept: Vec<&str> = list
                        .split(',')
                        .filter(|m| !m.is_empty() && *m != name)
                        .collect();
                    let joined = kept.join(",");
                    if joined != *list {
                        *list = joined;
                        changed = true;
                    }
                }
            }
            if changed {
                table.set_fields(index, &fields);
            }
        }
    }

    // USERGROUPS_ENAB: the user's private group goes with it when nothing else needs it.
    if let Some(gi) = db.group.find(&name) {
        let fields = db.group.fields(gi);
        let gid: Option<u32> = fields.get(2).and_then(|g| g.parse().ok());
        let has_members = fields.get(3).is_some_and(|m| !m.is_empty());
        let other_primary = db
            .passwd
            .lines
            .iter()
            .filter_map(|l| parse_passwd_line(l))
            .any(|u| Some(u.gid) == gid);
        if gid != Some(user.gid) {
            outcome = outcome.warn(format!(
                "userdel: group {name} not removed because it is not the primary group of user {name}."
            ));
        } else if has_members {
            outcome = outcome.warn(format!(
                "userdel: group {name} not removed because it has other members."
            ));
        } else if !other_primary {
            db.group.remove(&name);
            db.gshadow.remove(&name);
        }
    }
    tri!("userdel", db.save(true, true));
    drop(db);

    if !line.has("--remove") {
        return outcome;
    }
    let spool = provider.sysconf("/var/mail").join(&name);
    match std::fs::remove_file(&spool) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            outcome = outcome.warn(format!(
                "userdel: {name} mail spool (/var/mail/{name}) not found"
            ));
        }
        Err(e) => {
            outcome = outcome.warn(format!("userdel: error removing /var/mail/{name}: {e}"));
        }
    }
    let home: PathBuf = provider.sysconf(&user.home);
    match std::fs::symlink_metadata(&home) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => outcome.warn(format!(
            "userdel: {name} home directory ({}) not found",
            user.home.display()
        )),
        Err(e) => Outcome::fail(
            12,
            format!(
                "userdel: error removing directory {}: {e}\n",
                user.home.display()
            ),
        ),
        // std's remove_dir_all never follows symlinks inside the tree; a symlink at the home
        // path itself is unlinked, not followed.
        Ok(meta) => {
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(&home)
            } else {
                std::fs::remove_file(&home)
            };
            match removed {
                Ok(()) => outcome,
                Err(e) => Outcome::fail(
                    12,
                    format!(
                        "userdel: error removing directory {}: {e}\n",
                        user.home.display()
                    ),
                ),
            }
        }
    }
}

pub(super) fn groupadd(provider: &Provider, args: &[String]) -> Outcome {
    let (line, name) = match prelude(provider, "groupadd", args, &["--prefix", "--gid"], &[]) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if !valid_name(&name) {
        return Outcome::fail(3, format!("groupadd: '{name}' is not a valid group name\n"));
    }
    let wanted_gid = match line.value("--gid") {
        None => None,
        Some(v) => match parse_id(v) {
            Some(gid) => Some(gid),
            None => return Outcome::fail(3, format!("groupadd: invalid group ID '{v}'\n")),
        },
    };
    let range = tri!("groupadd", provider.login_gid_range());
    let mut db = tri!("groupadd", Db::open(provider));
    if db.group.find(&name).is_some() {
        return Outcome::fail(9, format!("groupadd: group '{name}' already exists\n"));
    }
    let gid = match wanted_gid {
        Some(gid) if ids_in(&db.group, 2).any(|g| g == gid) => {
            return Outcome::fail(4, format!("groupadd: GID '{gid}' already exists\n"));
        }
        Some(gid) => gid,
        None => match next_id(ids_in(&db.group, 2), range) {
            Some(gid) => gid,
            None => {
                return Outcome::fail(
                    4,
                    "groupadd: Can't get unique GID (no more available GIDs)\n",
                );
            }
        },
    };
    db.group.lines.push(format!("{name}:x:{gid}:"));
    if db.gshadow.exists() {
        db.gshadow.lines.push(format!("{name}:!::"));
    }
    tri!("groupadd", db.save(false, true));
    Outcome::ok()
}

pub(super) fn groupdel(provider: &Provider, args: &[String]) -> Outcome {
    let (_, name) = match prelude(provider, "groupdel", args, &["--prefix"], &[]) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let mut db = tri!("groupdel", Db::open(provider));
    let Some(gi) = db.group.find(&name) else {
        return Outcome::fail(6, format!("groupdel: group '{name}' does not exist\n"));
    };
    let gid: Option<u32> = db.group.fields(gi).get(2).and_then(|g| g.parse().ok());
    if let Some(user) = db
        .passwd
        .lines
        .iter()
        .filter_map(|l| parse_passwd_line(l))
        .find(|u| Some(u.gid) == gid)
    {
        return Outcome::fail(
            8,
            format!(
                "groupdel: cannot remove the primary group of user '{}'\n",
                user.name
            ),
        );
    }
    db.group.remove(&name);
    db.gshadow.remove(&name);
    tri!("groupdel", db.save(false, true));
    Outcome::ok()
}

/// A process of this machine (not this one) whose real, effective or saved uid is `uid` and
/// that is not a zombie: what shadow-utils' `user_busy` finds (it skips a process whose
/// `/proc/PID/root` it cannot stat, which a zombie's is).
fn running_process_of(uid: u32) -> Option<u32> {
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || std::fs::metadata(format!("/proc/{pid}/root")).is_err() {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let uids = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .map(|rest| {
                rest.split_whitespace()
                    .take(3)
                    .filter_map(|v| v.parse::<u32>().ok())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        if uids.contains(&uid) {
            return Some(pid);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_id_follows_shadow_utils() {
        let range = (1000, 60000);
        assert_eq!(next_id([0, 1, 65534].into_iter(), range), Some(1000));
        assert_eq!(
            next_id([0, 1000, 1005, 65534].into_iter(), range),
            Some(1006)
        );
        assert_eq!(next_id([60000].into_iter(), range), None);
        assert_eq!(next_id([1000].into_iter(), (5000, 6000)), Some(5000));
    }

    #[test]
    fn ids_on_the_command_line_are_decimal_and_never_minus_one() {
        assert_eq!(parse_id("1500"), Some(1500));
        assert_eq!(parse_id("4294967294"), Some(4_294_967_294));
        for bad in ["", "-1", "4294967295", "1e3", " 1", "0x10", "99999999999"] {
            assert_eq!(parse_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn names_are_checked_like_shadow_utils() {
        for good in ["acme", "a_b-c", "web1", "u$"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in [
            "",
            "-x",
            "a:b",
            "a b",
            "a,b",
            "a/b",
            "a\nb",
            &"x".repeat(33),
        ] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
