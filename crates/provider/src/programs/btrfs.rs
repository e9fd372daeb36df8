//! `btrfs` (btrfs-progs): a tenant's home as a subvolume, and every subvolume under it
//! counted in one qgroup of the tenant's that limits their bytes.
//!
//! The forms the node runs, as btrfs-progs 6.2 (Debian 12) takes and prints them. Every
//! `PATH` below is a path on the homes' file system (the home itself): the commands that
//! act on the file system take any path in it.
//!
//! - `btrfs subvolume create PATH`: the home, created before `useradd` finds it there;
//! - `btrfs subvolume show PATH`: exit 0 for a subvolume, 1 ("Not a Btrfs subvolume") for a
//!   plain directory; of its text, only the `Subvolume ID:` line is read;
//! - `btrfs inspect-internal rootid PATH`: the id of the subvolume holding `PATH`;
//! - `btrfs subvolume list PATH`: every subvolume of the file system, one line each,
//!   `ID <id> gen <gen> top level <parent id> path <path from the top level>`;
//! - `btrfs subvolume delete --subvolid ID PATH`: one subvolume by its id, so that no path a
//!   tenant controls is resolved (the kernel refuses one that still holds another);
//! - `btrfs quota enable PATH`: quota groups on the file system (a no-op when they are on);
//! - `btrfs qgroup create 1/<uid> PATH`, `btrfs qgroup destroy 1/<uid> PATH`: the tenant's
//!   level-1 qgroup;
//! - `btrfs qgroup assign 0/<id> 1/<uid> PATH`: a subvolume's own qgroup made a member of the
//!   tenant's (a rescan is scheduled when the figures need one, btrfs-progs' default), and
//!   `btrfs qgroup remove 0/<id> 1/<uid> PATH` undoing it;
//! - `btrfs quota rescan -w PATH`: the qgroups' figures counted again, waiting for the end.
//!   An assignment whose figures the kernel cannot carry over (a member that shares extents,
//!   as a snapshot does) leaves them inconsistent, and an inconsistent qgroup counts nothing
//!   and limits nothing until a rescan: so every assignment is followed by one (seen on
//!   Linux 6.18: 30 MiB written under a 20 MiB limit after an assignment, `EDQUOT` at 20 MiB
//!   after the rescan). It reads the whole file system's extent tree;
//! - `btrfs qgroup limit BYTES|none QGROUP PATH`: the maximum referenced bytes of a qgroup;
//! - `btrfs qgroup show -re --raw -p PATH`: a header, a dashed line, then one row per qgroup
//!   of the file system, `Qgroupid Referenced Exclusive Max-referenced Max-exclusive Parent
//!   Path`, sizes in bytes (`--raw`), an absent limit printed `none`, the parents
//!   comma-separated or `-`.
//!
//! A level-1 qgroup's referenced bytes count once what its members share (a snapshot of the
//! home costs only what it changes), and its limit stops a write in any member with
//! `EDQUOT`. btrfs limits bytes, never inodes: the caller refuses an inode quota on a btrfs
//! home.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// One row of `btrfs qgroup show -re --raw -p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QgroupShown {
    /// `level/id`, as btrfs prints it: `0/257`, `1/1001`.
    pub qgroup: String,
    /// Bytes referenced by the qgroup's subvolumes, shared extents counted once.
    pub referenced: u64,
    /// The limit on the referenced bytes, `None` when it is `none`.
    pub max_referenced: Option<u64>,
    /// The qgroups it is a member of.
    pub parents: Vec<String>,
}

/// One line of `btrfs subvolume list`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubvolumeListed {
    pub id: u64,
    /// The id of the subvolume it is in (`top level`).
    pub parent: u64,
    /// Its path from the file system's top level.
    pub path: String,
}

/// The tenant's level-1 qgroup: `1/<uid>`, one per uid, so that it is found again from the
/// uid alone.
pub fn tenant_qgroup(uid: u32) -> String {
    format!("1/{uid}")
}

pub(crate) fn subvolume_argv(verb: &str, path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("subvolume").arg(verb).arg(path);
    argv
}

pub(crate) fn subvolume_delete_id_argv(id: u64, path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("subvolume")
        .arg("delete")
        .arg("--subvolid")
        .arg(id.to_string())
        .arg(path);
    argv
}

pub(crate) fn rootid_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("inspect-internal").arg("rootid").arg(path);
    argv
}

pub(crate) fn quota_enable_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("quota").arg("enable").arg(path);
    argv
}

pub(crate) fn qgroup_argv(verb: &str, qgroups: &[&str], path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("qgroup").arg(verb);
    for q in qgroups {
        argv.arg(q);
    }
    argv.arg(path);
    argv
}

pub(crate) fn qgroup_limit_argv(bytes: Option<u64>, qgroup: &str, path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("qgroup")
        .arg("limit")
        .arg(bytes.map_or_else(|| "none".to_owned(), |b| b.to_string()))
        .arg(qgroup)
        .arg(path);
    argv
}

pub(crate) fn qgroup_show_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("qgroup")
        .arg("show")
        .arg("-re")
        .arg("--raw")
        .arg("-p")
        .arg(path);
    argv
}

/// The rows of `btrfs qgroup show -re --raw -p`, or `None` when a row that names a qgroup
/// does not read as one.
pub fn parse_qgroup_show(text: &str) -> Option<Vec<QgroupShown>> {
    let size = |s: &str| -> Option<Option<u64>> {
        if s == "none" {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(first) = f.first() else { continue };
        let named = first
            .split_once('/')
            .is_some_and(|(l, i)| l.parse::<u16>().is_ok() && i.parse::<u64>().is_ok());
        if !named {
            continue;
        }
        if f.len() < 6 {
            return None;
        }
        rows.push(QgroupShown {
            qgroup: (*first).to_owned(),
            referenced: f[1].parse().ok()?,
            max_referenced: size(f[3])?,
            parents: match f[5] {
                "-" => Vec::new(),
                list => list.split(',').map(str::to_owned).collect(),
            },
        });
    }
    Some(rows)
}

/// The lines of `btrfs subvolume list`, or `None` when one does not read as the documented
/// form.
pub fn parse_subvolume_list(text: &str) -> Option<Vec<SubvolumeListed>> {
    let mut listed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // `ID 257 gen 9 top level 256 path shop1/x`; the path may hold spaces.
        let rest = line.strip_prefix("ID ")?;
        let (id, rest) = rest.split_once(" gen ")?;
        let (_, rest) = rest.split_once(" top level ")?;
        let (parent, path) = rest.split_once(" path ")?;
        listed.push(SubvolumeListed {
            id: id.trim().parse().ok()?,
            parent: parent.trim().parse().ok()?,
            path: path.to_owned(),
        });
    }
    Some(listed)
}

/// The `Subvolume ID:` of `btrfs subvolume show`'s text.
pub fn parse_subvolume_id(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix("Subvolume ID:"))
        .and_then(|id| id.trim().parse().ok())
}

/// The subvolumes under subvolume `root` (not `root` itself), each with its depth below it
/// (1 for one directly inside), deepest first: the order they can be deleted in.
pub fn nested_subvolumes(all: &[SubvolumeListed], root: u64) -> Vec<(SubvolumeListed, usize)> {
    let mut found: Vec<(SubvolumeListed, usize)> = Vec::new();
    let mut frontier = vec![(root, 0usize)];
    while let Some((parent, depth)) = frontier.pop() {
        for sub in all.iter().filter(|s| s.parent == parent && s.id != root) {
            // A subvolume is listed once; a loop in what was printed would be a corrupt tree.
            if found.iter().any(|(f, _)| f.id == sub.id) {
                continue;
            }
            found.push((sub.clone(), depth + 1));
            frontier.push((sub.id, depth + 1));
        }
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
    found
}

fn unreadable(what: &str, text: &str) -> ProviderError {
    // Exit 0 with output the node cannot read: a failure, as `dbctl list` does.
    ProviderError::Failed {
        program: Program::Btrfs,
        status: 0,
        stderr: format!("{what}: unreadable output {text:?}"),
    }
}

impl Provider {
    fn btrfs(&self, argv: &Argv) -> Result<crate::executor::Output, ProviderError> {
        self.execute(Program::Btrfs, argv, None, Program::Btrfs.default_timeout())
    }

    /// `btrfs subvolume create HOME` (the system path `home` mapped under the root).
    pub fn btrfs_subvolume_create(&self, home: &Path) -> Result<(), ProviderError> {
        self.btrfs(&subvolume_argv("create", &self.sysconf(home)))
            .map(drop)
    }

    /// `btrfs subvolume delete --subvolid ID HOME`: the subvolume `id` of the file system
    /// holding `home`.
    pub fn btrfs_subvolume_delete_id(&self, id: u64, home: &Path) -> Result<(), ProviderError> {
        self.btrfs(&subvolume_delete_id_argv(id, &self.sysconf(home)))
            .map(drop)
    }

    /// Whether `home` is a subvolume (`btrfs subvolume show` exits 0), not a plain directory
    /// (exit 1). A missing path is not one.
    pub fn btrfs_is_subvolume(&self, home: &Path) -> Result<bool, ProviderError> {
        self.btrfs_subvolume_id(home).map(|id| id.is_some())
    }

    /// The id of subvolume `home` (the `Subvolume ID:` line of `btrfs subvolume show`), or
    /// `None` when it is a plain directory (exit 1) or missing.
    pub fn btrfs_subvolume_id(&self, home: &Path) -> Result<Option<u64>, ProviderError> {
        let out = match self.btrfs(&subvolume_argv("show", &self.sysconf(home))) {
            Ok(out) => out,
            Err(e) if e.exit_status() == Some(1) => return Ok(None),
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&out.stdout);
        parse_subvolume_id(&text)
            .map(Some)
            .ok_or_else(|| unreadable("btrfs subvolume show", &text))
    }

    /// The id of the subvolume holding `path` (`btrfs inspect-internal rootid`).
    pub fn btrfs_root_id(&self, path: &Path) -> Result<u64, ProviderError> {
        let out = self.btrfs(&rootid_argv(&self.sysconf(path)))?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim()
            .parse()
            .map_err(|_| unreadable("btrfs inspect-internal rootid", &text))
    }

    /// Every subvolume of the file system holding `path` (`btrfs subvolume list`).
    pub fn btrfs_subvolumes(&self, path: &Path) -> Result<Vec<SubvolumeListed>, ProviderError> {
        let out = self.btrfs(&subvolume_argv("list", &self.sysconf(path)))?;
        let text = String::from_utf8_lossy(&out.stdout);
        parse_subvolume_list(&text).ok_or_else(|| unreadable("btrfs subvolume list", &text))
    }

    /// `btrfs quota enable PATH`.
    pub fn btrfs_quota_enable(&self, path: &Path) -> Result<(), ProviderError> {
        self.btrfs(&quota_enable_argv(&self.sysconf(path)))
            .map(drop)
    }

    /// Every qgroup of the file system holding `path` (`btrfs qgroup show -re --raw -p`).
    pub fn btrfs_qgroups(&self, path: &Path) -> Result<Vec<QgroupShown>, ProviderError> {
        let out = self.btrfs(&qgroup_show_argv(&self.sysconf(path)))?;
        let text = String::from_utf8_lossy(&out.stdout);
        parse_qgroup_show(&text).ok_or_else(|| unreadable("btrfs qgroup show", &text))
    }

    /// `btrfs qgroup VERB QGROUP... PATH`.
    fn btrfs_qgroup_verb(
        &self,
        verb: &str,
        qgroups: &[&str],
        path: &Path,
    ) -> Result<(), ProviderError> {
        self.btrfs(&qgroup_argv(verb, qgroups, &self.sysconf(path)))
            .map(drop)
    }

    /// `btrfs qgroup create QGROUP PATH`.
    pub fn btrfs_qgroup_create(&self, qgroup: &str, path: &Path) -> Result<(), ProviderError> {
        self.btrfs_qgroup_verb("create", &[qgroup], path)
    }

    /// `btrfs qgroup destroy QGROUP PATH`.
    pub fn btrfs_qgroup_destroy(&self, qgroup: &str, path: &Path) -> Result<(), ProviderError> {
        self.btrfs_qgroup_verb("destroy", &[qgroup], path)
    }

    /// `btrfs qgroup assign MEMBER PARENT PATH`.
    pub fn btrfs_qgroup_assign(
        &self,
        member: &str,
        parent: &str,
        path: &Path,
    ) -> Result<(), ProviderError> {
        self.btrfs_qgroup_verb("assign", &[member, parent], path)
    }

    /// `btrfs qgroup remove MEMBER PARENT PATH`: the membership undone.
    pub fn btrfs_qgroup_unassign(
        &self,
        member: &str,
        parent: &str,
        path: &Path,
    ) -> Result<(), ProviderError> {
        self.btrfs_qgroup_verb("remove", &[member, parent], path)
    }

    /// `btrfs quota rescan -w PATH`: the qgroups' figures counted again, waited for.
    pub fn btrfs_quota_rescan(&self, path: &Path) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("quota")
            .arg("rescan")
            .arg("-w")
            .arg(self.sysconf(path));
        self.btrfs(&argv).map(drop)
    }

    /// `btrfs qgroup limit BYTES|none QGROUP PATH`.
    pub fn btrfs_qgroup_limit(
        &self,
        bytes: Option<u64>,
        qgroup: &str,
        path: &Path,
    ) -> Result<(), ProviderError> {
        self.btrfs(&qgroup_limit_argv(bytes, qgroup, &self.sysconf(path)))
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btrfs_argv_forms_are_the_documented_ones() {
        let home = Path::new("/home/shop1");
        assert_eq!(
            subvolume_argv("create", home).for_audit(),
            ["subvolume", "create", "/home/shop1"]
        );
        assert_eq!(
            subvolume_delete_id_argv(258, home).for_audit(),
            ["subvolume", "delete", "--subvolid", "258", "/home/shop1"]
        );
        assert_eq!(
            rootid_argv(home).for_audit(),
            ["inspect-internal", "rootid", "/home/shop1"]
        );
        assert_eq!(
            quota_enable_argv(home).for_audit(),
            ["quota", "enable", "/home/shop1"]
        );
        assert_eq!(
            qgroup_argv("assign", &["0/257", "1/1001"], home).for_audit(),
            ["qgroup", "assign", "0/257", "1/1001", "/home/shop1"]
        );
        assert_eq!(
            qgroup_limit_argv(Some(20 * 1024 * 1024), "1/1001", home).for_audit(),
            ["qgroup", "limit", "20971520", "1/1001", "/home/shop1"]
        );
        assert_eq!(
            qgroup_limit_argv(None, "0/256", home).for_audit(),
            ["qgroup", "limit", "none", "0/256", "/home/shop1"]
        );
        assert_eq!(
            qgroup_show_argv(home).for_audit(),
            ["qgroup", "show", "-re", "--raw", "-p", "/home/shop1"]
        );
        assert_eq!(tenant_qgroup(1001), "1/1001");
    }

    #[test]
    fn qgroups_are_read_with_their_limits_and_parents() {
        // As btrfs-progs 6.2 prints it on Debian 12.
        let text = "Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive Parent     Path \n\
                    --------    ----------    ---------  --------------  ------------- ------     ---- \n\
                    0/5              16384        16384            none           none -          <toplevel>\n\
                    0/256            16384        16384            none           none 1/1001     shop1\n\
                    0/258         20889600     20889600            none           none 1/1001,1/7 shop1/a/b/y\n\
                    1/1001        20955136     20955136        20971520           none -          <0 member qgroups>\n";
        let rows = parse_qgroup_show(text).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[2],
            QgroupShown {
                qgroup: "0/258".into(),
                referenced: 20_889_600,
                max_referenced: None,
                parents: vec!["1/1001".into(), "1/7".into()],
            }
        );
        assert_eq!(rows[3].max_referenced, Some(20_971_520));
        assert!(rows[0].parents.is_empty());
        assert_eq!(
            parse_qgroup_show("ERROR: can't list qgroups\n"),
            Some(vec![])
        );
        assert_eq!(parse_qgroup_show("0/256 many 1 2 none - x\n"), None);
    }

    #[test]
    fn a_subvolumes_id_is_read_from_its_show_text() {
        // As btrfs-progs 6.2 prints it on Debian 12.
        let text = "shop1\n\tName: \t\t\tshop1\n\tUUID: \t\t\t5a6472bb-c417-2d46-96c9-b427735d7865\n\
                    \tSubvolume ID: \t\t257\n\tGeneration: \t\t9\n";
        assert_eq!(parse_subvolume_id(text), Some(257));
        assert_eq!(parse_subvolume_id("shop1\n\tName: shop1\n"), None);
    }

    #[test]
    fn nested_subvolumes_are_found_by_their_parents_deepest_first() {
        let text = "ID 256 gen 9 top level 5 path shop1\n\
                    ID 257 gen 9 top level 256 path shop1/x\n\
                    ID 258 gen 9 top level 256 path shop1/a/b/y z\n\
                    ID 259 gen 9 top level 257 path shop1/x/z\n\
                    ID 260 gen 9 top level 256 path shop1/snap\n\
                    ID 261 gen 9 top level 5 path shop2\n";
        let all = parse_subvolume_list(text).unwrap();
        assert_eq!(all[2].path, "shop1/a/b/y z");
        let nested = nested_subvolumes(&all, 256);
        let order: Vec<(u64, usize)> = nested.iter().map(|(s, d)| (s.id, *d)).collect();
        assert_eq!(order, [(259, 2), (257, 1), (258, 1), (260, 1)]);
        assert!(nested_subvolumes(&all, 261).is_empty());
        assert_eq!(
            parse_subvolume_list("ID x gen 1 top level 5 path a\n"),
            None
        );
        assert_eq!(parse_subvolume_list(""), Some(vec![]));
    }
}
