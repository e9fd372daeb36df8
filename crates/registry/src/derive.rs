//! What each family derives from state.db, declared by the family itself, and how the drift
//! check compares it with what is there.
//!
//! A family's handlers implement [`Derive`] beside [`Purge`](crate::Purge): the hook lists
//! everything the family derives now, each item with the state the node would make now (the
//! owner's own renderer, from the view) and the state found:
//!
//! - [`DerivedPath`]: a file (or directory) at a path as the node sees it, with the bytes it
//!   must hold, or only that it must exist (a key the node generated, a home), or that it must
//!   not exist;
//! - [`DerivedTable`]: a table many resources share (a Postfix map, Dovecot's passwd-file,
//!   pure-ftpd's passwd), with the lines each of this family's resources contributes and the
//!   whole table as the owner renders it;
//! - [`DerivedSetting`]: a setting outside any file (a MariaDB user's hosts, a grant's
//!   privileges), in words, as recorded and as found.
//!
//! A [`Handlers`](crate::Handlers) table takes an operation only if its family has a derive
//! hook, so a family that says nothing about what it derives does not compile into a node; a
//! family that derives nothing returns an empty list and says why. [`findings`] turns every
//! family's items into drift findings without naming a family: a path several families
//! derive into (a vhost) is compared once and reported under the first family in the
//! declarations' order that lists it, a table's entries are checked for each resource and
//! its lines no resource derives are reported once, under the node.
//!
//! This module does no I/O: the hooks read what is there, through the node's provider.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::declare::{Family, Owner};
use crate::error::OpError;
use crate::job::{Drift, DriftAspect};
use crate::types::Hex32;

/// The resource a finding is reported under: its id and owner. What one account's rows
/// derive together (its `authorized_keys`, its FPM pools, its crontab) is the account's:
/// the account's id under the account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Of {
    pub id: Hex32,
    pub owner: Owner,
}

impl Of {
    pub fn new(id: &Hex32, owner: &Owner) -> Of {
        Of {
            id: id.clone(),
            owner: owner.clone(),
        }
    }

    /// What the account `account` derives as a whole.
    pub fn account(account: &Hex32) -> Of {
        Of {
            id: account.clone(),
            owner: Owner::Tenant(account.clone()),
        }
    }
}

/// What a path holds: as the node would make it now, or as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Nothing is there.
    Absent,
    /// Something is there whose bytes are not compared: a directory, a file whose content
    /// the node generated rather than derived (a private key), or one that could not be read
    /// as the node reads its own (a symlink in a tenant's home).
    Present,
    /// A file holding exactly these bytes.
    Bytes(Vec<u8>),
}

impl Content {
    /// `Bytes` when there is a file, `Absent` when there is none.
    pub fn file(bytes: Option<Vec<u8>>) -> Content {
        bytes.map_or(Content::Absent, Content::Bytes)
    }
}

/// The aspect a finding has when what is derived is not there, and when it is there but not
/// as derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aspects {
    pub missing: DriftAspect,
    pub differs: DriftAspect,
}

impl Aspects {
    pub const fn new(missing: DriftAspect, differs: DriftAspect) -> Aspects {
        Aspects { missing, differs }
    }
}

/// A path the family derives: `expected` is what the owner would make now, `actual` what is
/// there. Expected [`Content::Present`] is met by anything there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedPath {
    pub of: Of,
    /// As the node sees it (mapped under its root).
    pub path: PathBuf,
    pub expected: Content,
    pub actual: Content,
    pub aspects: Aspects,
}

/// A table many resources share, derived whole by its owner: `expected` is the whole table as
/// the owner renders it now, `entries` the lines each of this family's resources contributes
/// (every one must be there), `actual` the table as it is. A line there that the whole table
/// does not hold is reported once, under the node, with `aspects.differs`; order and blank
/// lines do not count (none of these services reads them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedTable {
    pub path: PathBuf,
    pub expected: Vec<u8>,
    pub actual: Option<Vec<u8>>,
    pub entries: Vec<(Of, Vec<String>)>,
    /// `missing`: a resource's line is not there; `differs`: the table holds a line no
    /// resource derives.
    pub aspects: Aspects,
}

/// A setting outside any file, in words: `expected` as state.db records it, `actual` as
/// found (`None`: there is none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedSetting {
    pub of: Of,
    /// What the setting is, for an operator (`privileges of shop1_app@localhost on shop1_main`).
    pub name: String,
    pub expected: String,
    pub actual: Option<String>,
    pub aspects: Aspects,
}

/// One thing a family derives, with what it should be now and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Derived {
    Path(DerivedPath),
    Table(DerivedTable),
    Setting(DerivedSetting),
}

impl Derived {
    /// A path: see [`DerivedPath`].
    pub fn path(
        of: Of,
        path: PathBuf,
        expected: Content,
        actual: Content,
        aspects: Aspects,
    ) -> Derived {
        Derived::Path(DerivedPath {
            of,
            path,
            expected,
            actual,
            aspects,
        })
    }

    /// A setting: see [`DerivedSetting`].
    pub fn setting(
        of: Of,
        name: impl Into<String>,
        expected: impl Into<String>,
        actual: Option<String>,
        aspects: Aspects,
    ) -> Derived {
        Derived::Setting(DerivedSetting {
            of,
            name: name.into(),
            expected: expected.into(),
            actual,
            aspects,
        })
    }
}

/// The derive hook of a declared family, working with the context `C`: everything the
/// family derives now, across the node, with what is there (see the module documentation).
/// It reads only, and must not fail because something derived is missing or altered (that
/// is what it reports); it fails when it cannot look (a database it cannot reach).
///
/// A handler table ([`crate::Handlers`]) takes an operation only if its family has a derive
/// hook as well as a purge hook, so the drift check covers every family of a node:
///
/// ```compile_fail
/// use registry::{Apply, Family, Handlers, Hex32, Module, OpError, Operation, Owner, Purge, Resource, Scope};
///
/// struct Underived;
/// impl Family for Underived {
///     const NAME: &'static str = "underived";
///     const MODULE: Module = Module::Core;
/// }
/// impl Purge<()> for Underived {
///     fn purge(_: &mut (), _: &Hex32) -> Result<(), OpError> {
///         Ok(())
///     }
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Req { id: Hex32 }
/// impl Resource for Req {
///     fn resource_id(&self) -> &Hex32 { &self.id }
///     fn owner(&self) -> Owner { Owner::Tenant(self.id.clone()) }
/// }
///
/// struct Ensure;
/// impl Operation for Ensure {
///     const NAME: &'static str = "ensure_underived";
///     const SCOPE: Scope = Scope::Tenant;
///     const SUMMARY: &'static str = "an operation of a family without a derive hook";
///     type Family = Underived;
///     type Request = Req;
///     type Result = Req;
///     fn example() -> Req { Req { id: "0".repeat(32).parse().unwrap() } }
/// }
/// impl Apply<()> for Ensure {
///     fn apply(_: &mut (), req: &Req) -> Result<Req, OpError> { Ok(Req { id: req.id.clone() }) }
/// }
///
/// let _ = Handlers::<()>::builder().op::<Ensure>();
/// ```
pub trait Derive<C>: Family {
    fn derive(ctx: &C) -> Result<Vec<Derived>, OpError>;
}

/// The subject of a message: the family and the resource, or the family alone for the node.
fn subject(family: &str, resource_id: &str) -> String {
    let family = family.replace('_', " ");
    if resource_id == Owner::NODE {
        family
    } else {
        format!("{family} {resource_id}")
    }
}

/// Collects findings, one per (family, resource, aspect): a second one of the same key (two
/// files of one resource, two hosts of one grant) adds its message to the first.
#[derive(Default)]
struct Found {
    findings: Vec<Drift>,
    index: BTreeMap<(String, String, DriftAspect), usize>,
}

impl Found {
    fn add(&mut self, family: &str, of: Option<&Of>, aspect: DriftAspect, detail: String) {
        let (resource_id, owner) = match of {
            Some(of) => (of.id.to_string(), of.owner.as_str().to_owned()),
            None => (Owner::NODE.to_owned(), Owner::NODE.to_owned()),
        };
        let key = (family.to_owned(), resource_id.clone(), aspect.clone());
        if let Some(&i) = self.index.get(&key) {
            let message = &mut self.findings[i].message;
            message.push_str("; ");
            message.push_str(&detail);
            return;
        }
        self.index.insert(key, self.findings.len());
        self.findings.push(Drift {
            message: format!("{}: {detail}", subject(family, &resource_id)),
            family: family.to_owned(),
            resource_id,
            owner,
            aspect,
        });
    }
}

/// A table as several families list it: the first family's expected and actual bytes (every
/// family renders the same table from the same view), every family's entries.
struct SharedTable {
    family: &'static str,
    table: DerivedTable,
    entries: Vec<(&'static str, Of, Vec<String>)>,
}

fn compare_path(found: &mut Found, family: &str, item: &DerivedPath) {
    let shown = item.path.display();
    let finding = match (&item.expected, &item.actual) {
        (Content::Absent, Content::Absent) => None,
        (Content::Absent, _) => Some((
            item.aspects.differs.clone(),
            format!("{shown} is there and state.db derives none"),
        )),
        (_, Content::Absent) => Some((item.aspects.missing.clone(), format!("{shown} is missing"))),
        (Content::Present, _) => None,
        (Content::Bytes(expected), Content::Bytes(actual)) if expected == actual => None,
        (Content::Bytes(_), _) => Some((
            item.aspects.differs.clone(),
            format!("{shown} is not what state.db derives"),
        )),
    };
    if let Some((aspect, detail)) = finding {
        found.add(family, Some(&item.of), aspect, detail);
    }
}

fn compare_setting(found: &mut Found, family: &str, item: &DerivedSetting) {
    let finding = match &item.actual {
        None => Some((
            item.aspects.missing.clone(),
            format!(
                "{} is missing (state.db records {})",
                item.name, item.expected
            ),
        )),
        Some(actual) if *actual == item.expected => None,
        Some(actual) => Some((
            item.aspects.differs.clone(),
            format!(
                "{} is {actual}; state.db records {}",
                item.name, item.expected
            ),
        )),
    };
    if let Some((aspect, detail)) = finding {
        found.add(family, Some(&item.of), aspect, detail);
    }
}

fn lines(bytes: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn compare_table(found: &mut Found, shared: &SharedTable) {
    let table = &shared.table;
    let shown = table.path.display();
    let there = table.actual.as_deref().map(lines).unwrap_or_default();
    for (family, of, entry) in &shared.entries {
        let lacking = entry.iter().filter(|line| !there.contains(*line)).count();
        if lacking > 0 {
            let detail = if table.actual.is_none() {
                format!("{shown} is missing")
            } else {
                format!(
                    "{shown} lacks {lacking} of its {} line(s) as state.db derives them",
                    entry.len()
                )
            };
            found.add(family, Some(of), table.aspects.missing.clone(), detail);
        }
    }
    let derived = lines(&table.expected);
    let unrecorded = there.difference(&derived).count();
    if unrecorded > 0 {
        found.add(
            shared.family,
            None,
            table.aspects.differs.clone(),
            format!("{shown} holds {unrecorded} line(s) state.db does not derive"),
        );
    }
}

/// The drift findings of every family's derivations, given in the declarations' order (see
/// the module documentation for how shared paths and tables are reported). A finding's
/// message names its subject and what differs; its key is (family, resource, aspect).
pub fn findings(families: Vec<(&'static str, Vec<Derived>)>) -> Vec<Drift> {
    let mut found = Found::default();
    let mut paths = BTreeSet::new();
    let mut tables: Vec<SharedTable> = Vec::new();
    for (family, items) in families {
        for item in items {
            match item {
                Derived::Path(item) => {
                    if paths.insert(item.path.clone()) {
                        compare_path(&mut found, family, &item);
                    }
                }
                Derived::Setting(item) => compare_setting(&mut found, family, &item),
                Derived::Table(mut item) => {
                    let entries = std::mem::take(&mut item.entries)
                        .into_iter()
                        .map(|(of, lines)| (family, of, lines));
                    match tables.iter_mut().find(|t| t.table.path == item.path) {
                        Some(shared) => shared.entries.extend(entries),
                        None => tables.push(SharedTable {
                            family,
                            entries: entries.collect(),
                            table: item,
                        }),
                    }
                }
            }
        }
    }
    for shared in &tables {
        compare_table(&mut found, shared);
    }
    found.findings
}

/// What a drift check found: every finding of the families it could look at, and the
/// families it could not (their hook failed), whose findings recorded earlier stand.
#[derive(Debug, Default)]
pub struct DriftCheck {
    pub found: Vec<Drift>,
    pub unchecked: Vec<(&'static str, OpError)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(c: char) -> Hex32 {
        c.to_string().repeat(32).parse().unwrap()
    }

    fn keys(found: &[Drift]) -> Vec<(&str, &str, DriftAspect)> {
        found
            .iter()
            .map(|d| (d.family.as_str(), d.resource_id.as_str(), d.aspect.clone()))
            .collect()
    }

    /// `found` is one missing and one differing finding of `family`'s resource `id`.
    fn assert_missing_and_differs(found: &[Drift], family: &str, id: &str, aspects: Aspects) {
        assert_eq!(
            keys(found),
            [(family, id, aspects.missing), (family, id, aspects.differs)]
        );
    }

    const VHOST: Aspects = Aspects::new(
        DriftAspect::declared("vhost_missing"),
        DriftAspect::declared("vhost_differs"),
    );

    fn file(of: Of, path: &str, expected: Content, actual: Content) -> Derived {
        Derived::path(of, path.into(), expected, actual, VHOST)
    }

    #[test]
    fn a_path_is_missing_differs_or_is_there_when_it_must_not_be() {
        let of = Of::account(&hex('a'));
        let bytes = |s: &str| Content::Bytes(s.as_bytes().to_vec());
        let found = findings(vec![(
            "web_domain",
            vec![
                file(of.clone(), "/a", bytes("x"), bytes("x")),
                file(of.clone(), "/b", bytes("x"), Content::Absent),
                file(of.clone(), "/c", bytes("x"), bytes("y")),
                file(of.clone(), "/d", bytes("x"), Content::Present),
                file(of.clone(), "/e", Content::Absent, bytes("y")),
                file(of.clone(), "/f", Content::Absent, Content::Absent),
                file(of.clone(), "/g", Content::Present, bytes("anything")),
                file(of.clone(), "/h", Content::Present, Content::Absent),
            ],
        )]);
        let a = hex('a').to_string();
        assert_missing_and_differs(&found, "web_domain", &a, VHOST);
        // One finding per key, naming every path.
        assert_eq!(
            found[0].message,
            format!("web domain {a}: /b is missing; /h is missing")
        );
        assert_eq!(
            found[1].message,
            format!(
                "web domain {a}: /c is not what state.db derives; /d is not what state.db derives; /e is there and state.db derives none"
            )
        );
        assert_eq!(found[0].owner, a);
    }

    #[test]
    fn a_path_two_families_derive_is_compared_once_under_the_first() {
        let domain = Of::new(&hex('d'), &Owner::Tenant(hex('a')));
        let redirect = Of::new(&hex('e'), &Owner::Tenant(hex('a')));
        let edited = || {
            file(
                domain.clone(),
                "/vhost",
                Content::Bytes(b"x".to_vec()),
                Content::Absent,
            )
        };
        let mut second = edited();
        if let Derived::Path(p) = &mut second {
            p.of = redirect.clone();
        }
        let found = findings(vec![
            ("web_domain", vec![edited()]),
            ("redirect", vec![second]),
        ]);
        let d = hex('d').to_string();
        assert_eq!(
            keys(&found),
            [(
                "web_domain",
                d.as_str(),
                DriftAspect::declared("vhost_missing")
            )]
        );
    }

    #[test]
    fn a_shared_table_reports_each_resources_missing_lines_and_once_what_no_resource_derives() {
        let aspects = Aspects::new(
            DriftAspect::declared("ftp_login_missing"),
            DriftAspect::declared("ftp_passwd_differs"),
        );
        let owner = Owner::Tenant(hex('a'));
        let table = |entries: Vec<(Of, Vec<String>)>, actual: Option<&str>| {
            Derived::Table(DerivedTable {
                path: "/passwd".into(),
                expected: b"one\ntwo\n".to_vec(),
                actual: actual.map(|a| a.as_bytes().to_vec()),
                entries,
                aspects: aspects.clone(),
            })
        };
        let one = (Of::new(&hex('1'), &owner), vec!["one".to_owned()]);
        let two = (Of::new(&hex('2'), &owner), vec!["two".to_owned()]);
        // In order, with a blank line: nothing.
        let found = findings(vec![(
            "ftp_account",
            vec![table(vec![one.clone(), two.clone()], Some("two\n\none\n"))],
        )]);
        assert!(found.is_empty(), "{found:?}");
        // Emptied: each login's line is missing, nothing is unrecorded.
        let found = findings(vec![(
            "ftp_account",
            vec![table(vec![one.clone(), two.clone()], Some(""))],
        )]);
        let (h1, h2) = (hex('1').to_string(), hex('2').to_string());
        assert_eq!(
            keys(&found),
            [
                (
                    "ftp_account",
                    h1.as_str(),
                    DriftAspect::declared("ftp_login_missing")
                ),
                (
                    "ftp_account",
                    h2.as_str(),
                    DriftAspect::declared("ftp_login_missing")
                ),
            ]
        );
        // Listed by two families, each with its entries: one line changed is that resource's
        // line missing and one unrecorded line, under the first family and the node.
        let found = findings(vec![
            (
                "mail_domain",
                vec![table(vec![one], Some("one\ntwo changed\n"))],
            ),
            ("mailbox", vec![table(vec![two], None)]),
        ]);
        assert_eq!(
            keys(&found),
            [
                (
                    "mailbox",
                    h2.as_str(),
                    DriftAspect::declared("ftp_login_missing")
                ),
                (
                    "mail_domain",
                    Owner::NODE,
                    DriftAspect::declared("ftp_passwd_differs")
                ),
            ]
        );
        assert_eq!(found[1].owner, Owner::NODE);
        assert_eq!(
            found[1].message,
            "mail domain: /passwd holds 1 line(s) state.db does not derive"
        );
    }

    #[test]
    fn a_setting_is_missing_or_differs_in_words() {
        let of = Of::new(&hex('c'), &Owner::Tenant(hex('a')));
        let aspects = Aspects::new(
            DriftAspect::declared("mysql_grant_missing"),
            DriftAspect::declared("mysql_grant_differs"),
        );
        let setting = |actual: Option<&str>| {
            Derived::setting(
                of.clone(),
                "privileges of u@localhost on d",
                "SELECT,INSERT",
                actual.map(str::to_owned),
                aspects.clone(),
            )
        };
        let found = findings(vec![(
            "mysql_grant",
            vec![
                setting(Some("SELECT,INSERT")),
                setting(None),
                setting(Some("SELECT")),
            ],
        )]);
        let g = hex('c').to_string();
        assert_missing_and_differs(&found, "mysql_grant", &g, aspects);
        assert_eq!(
            found[1].message,
            format!(
                "mysql grant {g}: privileges of u@localhost on d is SELECT; state.db records SELECT,INSERT"
            )
        );
    }
}
