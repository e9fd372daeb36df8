//! CloudLinux's control-panel integration ("CPAPI") scripts, answered from state.db.
//!
//! CloudLinux's own tools (LVE Manager, lve-stats, the selectors, CageFS) learn a panel's
//! users, domains, packages, databases and PHP versions by running the executables named in
//! `/opt/cpvendor/etc/integration.ini` (section `[integration_scripts]`) and reading the JSON
//! they print: `{"data": ..., "metadata": {"result": "ok"}}`, or `"data": null` with
//! `metadata.result` one of `InternalAPIError`, `PermissionDenied`, `BadRequest`, `NotFound`
//! and a `message` (CloudLinux documentation, "Control panel integration").
//!
//! On a node the panel is the node itself, and every script is `layerone cloudlinux SCRIPT`
//! (the ini may give an executable with arguments; filters are appended after them). The
//! answers come from state.db through the store's read-only path ([`store::StateReader`]),
//! never from the OS, except `php`, which lists the alt-php versions whose binaries exist (as
//! `observe_php_versions` does): the node never offers what it cannot run. Nothing here
//! writes anything.
//!
//! What each script answers, from what the node records:
//!
//! - `panel_info`: the node's name and version and the CloudLinux features it drives
//!   (CageFS, LVE limits through `lvectl`, the PHP selector's extensions, MySQL Governor).
//! - `users`: one entry per account: its uid, username, owner `root` (the node has no
//!   resellers), main domain (the first of its web domains in name order; `""` without one),
//!   and package (below). `email` and `locale_code` are null: the node keeps neither.
//! - `packages`: the node has no plans; LVE limits are set per account
//!   (`set_account_limits`). Each distinct set of limits is reported as one package named
//!   after its values (`cpu150-mem1024m-io2048k-nproc50-ep10`), owned by `root`, so LVE
//!   Manager groups accounts with the same limits. The per-user limits the node set with
//!   `lvectl set-user --save-all-parameters` take precedence over package limits.
//! - `domains`: every web domain and alias, owner, document root, `is_main` (the users'
//!   main domain); with `--with-php` the domain's alt-php version and handler (`fpm`).
//! - `resellers`: none. `admins`: `root`, the main administrator.
//! - `db_info`: MariaDB as the node reaches it (root over the local socket, no password:
//!   unix-socket authentication of root processes such as lve-stats) and, per account, its
//!   database users.
//! - `php`: the installed alt-php versions with their directories.
//!
//! Every script but `panel_info` answers `PermissionDenied` to a caller other than root: the
//! node's state is readable by root (and the API's group) only.

use std::collections::{BTreeMap, BTreeSet};

use provider::{PhpVersion, Platform, Provider};
use serde_json::{Map, Value, json};
use store::{ReadError, ResourceRow, StateReader};

/// Where CloudLinux reads which scripts to run.
pub const INTEGRATION_INI: &str = "/opt/cpvendor/etc/integration.ini";

/// The owner of every account, package and admin entry: the node has no resellers.
const ADMIN: &str = "root";

/// One integration script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    PanelInfo,
    DbInfo,
    Packages,
    Users,
    Domains,
    Resellers,
    Admins,
    Php,
}

impl Script {
    pub const ALL: &'static [Script] = &[
        Script::PanelInfo,
        Script::DbInfo,
        Script::Packages,
        Script::Users,
        Script::Domains,
        Script::Resellers,
        Script::Admins,
        Script::Php,
    ];

    /// The name CloudLinux gives it in `[integration_scripts]`, and the subcommand's.
    pub fn name(self) -> &'static str {
        match self {
            Script::PanelInfo => "panel_info",
            Script::DbInfo => "db_info",
            Script::Packages => "packages",
            Script::Users => "users",
            Script::Domains => "domains",
            Script::Resellers => "resellers",
            Script::Admins => "admins",
            Script::Php => "php",
        }
    }

    pub fn parse(name: &str) -> Option<Script> {
        Script::ALL.iter().copied().find(|s| s.name() == name)
    }
}

/// `/opt/cpvendor/etc/integration.ini`: every script is `EXECUTABLE cloudlinux NAME`.
/// `--with-php` is never written here: CloudLinux adds it itself when it wants it.
pub fn integration_ini(executable: &str) -> String {
    let mut text = String::from(
        "# Derived by `layerone install` (cloudlinux profile); edits here are moved to\n\
         # /etc/layerone/override/ by the next install.\n\
         [integration_scripts]\n",
    );
    for script in Script::ALL {
        text.push_str(&format!(
            "{} = {executable} cloudlinux {}\n",
            script.name(),
            script.name()
        ));
    }
    text
}

/// What the node gives the scripts: its state (read-only), its provider (the platform, and
/// where alt-php is installed), who is asking, and the version to report.
pub struct Node<'a> {
    pub state: &'a StateReader,
    pub provider: &'a Provider,
    /// The caller's effective uid: every script but `panel_info` is root's.
    pub caller_uid: u32,
    pub version: &'a str,
}

/// A script's answer: the JSON to print, and whether it is an `ok` one (exit status 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub ok: bool,
    pub json: Value,
}

/// The documented error answers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Failure {
    Internal(String),
    PermissionDenied(String),
    BadRequest(String),
    NotFound(String),
}

impl Failure {
    fn reply(self) -> Reply {
        let (result, message) = match self {
            Failure::Internal(m) => ("InternalAPIError", m),
            Failure::PermissionDenied(m) => ("PermissionDenied", m),
            Failure::BadRequest(m) => ("BadRequest", m),
            Failure::NotFound(m) => ("NotFound", m),
        };
        Reply {
            ok: false,
            json: json!({"data": null, "metadata": {"result": result, "message": message}}),
        }
    }
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Failure {
        match e {
            ReadError::Unavailable { .. } => {
                Failure::Internal("the node's state is briefly unavailable, try again later".into())
            }
            ReadError::Failed(e) => Failure::Internal(format!("cannot read the node's state: {e}")),
        }
    }
}

/// Runs `script` with the arguments CloudLinux passed.
pub fn answer(script: &str, args: &[String], node: &Node<'_>) -> Reply {
    match run(script, args, node) {
        Ok(data) => Reply {
            ok: true,
            json: json!({"data": data, "metadata": {"result": "ok"}}),
        },
        Err(failure) => failure.reply(),
    }
}

fn run(script: &str, args: &[String], node: &Node<'_>) -> Result<Value, Failure> {
    let script = Script::parse(script)
        .ok_or_else(|| Failure::BadRequest(format!("Unknown script '{script}'")))?;
    if node.provider.platform() != Platform::CloudLinux {
        return Err(Failure::Internal(format!(
            "the panel-integration scripts serve the cloudlinux profile; this node is {}",
            node.provider.platform()
        )));
    }
    if script != Script::PanelInfo && node.caller_uid != 0 {
        return Err(Failure::PermissionDenied(format!(
            "Only root can run {}: the node's state is not readable by users",
            script.name()
        )));
    }
    match script {
        Script::PanelInfo => {
            Args::parse(args, &[], &[])?;
            Ok(panel_info(node))
        }
        Script::DbInfo => {
            Args::parse(args, &[], &[])?;
            db_info(node)
        }
        Script::Packages => packages(&Args::parse(args, &[("--owner", "-o")], &[])?, node),
        Script::Users => users(
            &Args::parse(
                args,
                &[
                    ("--owner", "-o"),
                    ("--package-name", ""),
                    ("--package-owner", ""),
                    ("--username", ""),
                    ("--unix-id", ""),
                    ("--fields", ""),
                ],
                &[],
            )?,
            node,
        ),
        Script::Domains => domains(
            &Args::parse(
                args,
                &[("--owner", "-o"), ("--name", "-n")],
                &["--with-php"],
            )?,
            node,
        ),
        Script::Resellers => {
            let args = Args::parse(args, &[("--id", ""), ("--name", "-n")], &[])?;
            if let Some(id) = args.value("--id") {
                return Err(Failure::NotFound(format!("No such reseller id `{id}`")));
            }
            if let Some(name) = args.value("--name") {
                return Err(Failure::NotFound(format!("No such reseller `{name}`")));
            }
            Ok(json!([]))
        }
        Script::Admins => admins(&Args::parse(
            args,
            &[("--name", "-n"), ("--is-main", "-m")],
            &[],
        )?),
        Script::Php => {
            Args::parse(args, &[], &[])?;
            Ok(php(node))
        }
    }
}

/// The arguments of one script: `--opt=value`, `--opt value`, `-o value`, flags.
#[derive(Debug, Default)]
struct Args {
    values: BTreeMap<&'static str, String>,
    flags: BTreeSet<&'static str>,
}

impl Args {
    /// `with_value`: (long, short or "") pairs; `flags`: long options without a value.
    /// Anything else is the documented `BadRequest`.
    fn parse(
        args: &[String],
        with_value: &[(&'static str, &'static str)],
        flags: &[&'static str],
    ) -> Result<Args, Failure> {
        let mut out = Args::default();
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (arg.as_str(), None),
            };
            if let Some(&(long, _)) = with_value
                .iter()
                .find(|(long, short)| *long == name || (!short.is_empty() && *short == name))
            {
                let value = match inline {
                    Some(v) => v,
                    None => iter.next().cloned().ok_or_else(|| {
                        Failure::BadRequest(format!("Argument '{long}' needs a value"))
                    })?,
                };
                if out.values.insert(long, value).is_some() {
                    return Err(Failure::BadRequest(format!(
                        "Argument '{long}' is given twice"
                    )));
                }
            } else if let Some(&flag) = flags.iter().find(|f| **f == name)
                && inline.is_none()
            {
                out.flags.insert(flag);
            } else {
                return Err(Failure::BadRequest(format!("Unknown argument '{arg}'")));
            }
        }
        Ok(out)
    }

    fn value(&self, long: &str) -> Option<&str> {
        self.values.get(long).map(String::as_str)
    }

    fn flag(&self, long: &str) -> bool {
        self.flags.contains(long)
    }
}

// ---------------------------------------------------------------------------------------
// What state.db records, as the scripts need it.

struct Account {
    id: String,
    username: String,
    uid: u64,
    /// The production path of the home, as `ensure_account` recorded it.
    home: String,
    /// `None` until `set_account_limits` succeeded.
    package: Option<String>,
}

struct Domain {
    name: String,
    owner: String,
    document_root: String,
    is_main: bool,
    php: Option<PhpVersion>,
}

struct Snapshot {
    accounts: Vec<Account>,
    domains: Vec<Domain>,
}

/// The package name of a set of recorded limits (`row["limits"]` of an account).
fn package_of(limits: &Value) -> Option<String> {
    let n = |key: &str| limits.get(key).and_then(Value::as_u64);
    Some(format!(
        "cpu{}-mem{}m-io{}k-nproc{}-ep{}",
        n("cpu_percent")?,
        n("memory_mib")?,
        n("io_kib_per_sec")?,
        n("processes")?,
        n("entry_processes")?
    ))
}

fn text(row: &ResourceRow, key: &str) -> Result<String, Failure> {
    row.data[key].as_str().map(str::to_owned).ok_or_else(|| {
        Failure::Internal(format!(
            "{} {} has no {key} in state.db",
            row.family, row.resource_id
        ))
    })
}

fn snapshot(node: &Node<'_>) -> Result<Snapshot, Failure> {
    let mut accounts = Vec::new();
    for row in node.state.resources_of_family("account")? {
        accounts.push(Account {
            id: row.resource_id.to_string(),
            username: text(&row, "username")?,
            home: text(&row, "home")?,
            uid: row.data["uid"].as_u64().ok_or_else(|| {
                Failure::Internal(format!(
                    "account {} has no uid in state.db",
                    row.resource_id
                ))
            })?,
            package: package_of(&row.data["limits"]),
        });
    }
    accounts.sort_by(|a, b| a.username.cmp(&b.username));
    let php: BTreeMap<String, PhpVersion> = node
        .state
        .resources_of_family("php_version")?
        .into_iter()
        .filter_map(|row| {
            let version = serde_json::from_value(row.data["version"].clone()).ok()?;
            Some((row.resource_id.to_string(), version))
        })
        .collect();
    let web_rows = node.state.resources_of_family("web_domain")?;
    let mut domains = Vec::new();
    for row in &web_rows {
        // A domain whose account row is gone is being purged: not the panel's any more.
        let Some(account) = accounts.iter().find(|a| a.id == row.owner.as_str()) else {
            continue;
        };
        let docroot = format!(
            "{}/{}",
            account.home.trim_end_matches('/'),
            text(row, "docroot")?
        );
        let version = php.get(row.resource_id.as_str()).copied();
        domains.push(Domain {
            name: text(row, "domain")?,
            owner: account.username.clone(),
            document_root: docroot.clone(),
            is_main: false,
            php: version,
        });
        for alias in row.data["aliases"].as_array().into_iter().flatten() {
            if let Some(alias) = alias.as_str() {
                domains.push(Domain {
                    name: alias.to_owned(),
                    owner: account.username.clone(),
                    document_root: docroot.clone(),
                    is_main: false,
                    php: version,
                });
            }
        }
    }
    domains.sort_by(|a, b| a.name.cmp(&b.name));
    // An account's main domain: the first of its web domains (not aliases) in name order.
    let web_domains: BTreeSet<String> = web_rows
        .iter()
        .filter_map(|r| r.data["domain"].as_str().map(str::to_owned))
        .collect();
    let mut seen = BTreeSet::new();
    for domain in &mut domains {
        if web_domains.contains(&domain.name) && seen.insert(domain.owner.clone()) {
            domain.is_main = true;
        }
    }
    Ok(Snapshot { accounts, domains })
}

impl Snapshot {
    fn main_domain(&self, username: &str) -> String {
        self.domains
            .iter()
            .find(|d| d.is_main && d.owner == username)
            .map(|d| d.name.clone())
            .unwrap_or_default()
    }

    fn has_user(&self, username: &str) -> bool {
        self.accounts.iter().any(|a| a.username == username)
    }
}

// ---------------------------------------------------------------------------------------
// The scripts.

fn panel_info(node: &Node<'_>) -> Value {
    json!({
        "name": "layerone",
        "version": node.version,
        // The node has no user interface of its own; the control plane's is not known here.
        "user_login_url": "",
        "supported_cl_features": {
            "php_selector": true,
            "ruby_selector": false,
            "python_selector": false,
            "nodejs_selector": false,
            "mod_lsapi": false,
            "mysql_governor": node.provider.mysql_governor_present(),
            "cagefs": true,
            "reseller_limits": false,
            "xray": false,
            "accelerate_wp": false,
            "autotracing": false,
            "wizard": false,
        }
    })
}

fn db_info(node: &Node<'_>) -> Result<Value, Failure> {
    let accounts: BTreeMap<String, String> = node
        .state
        .resources_of_family("account")?
        .iter()
        .map(|r| Ok((r.resource_id.to_string(), text(r, "username")?)))
        .collect::<Result<_, Failure>>()?;
    let mut mapping: BTreeMap<String, Vec<String>> = accounts
        .values()
        .map(|user| (user.clone(), Vec::new()))
        .collect();
    for row in node.state.resources_of_family("mysql_user")? {
        if let Some(user) = accounts.get(row.owner.as_str()) {
            mapping
                .entry(user.clone())
                .or_default()
                .push(text(&row, "name")?);
        }
    }
    Ok(json!({
        "mysql": {
            "access": {"login": "root", "password": "", "host": "localhost", "port": 3306},
            "mapping": mapping,
        }
    }))
}

fn packages(args: &Args, node: &Node<'_>) -> Result<Value, Failure> {
    if let Some(owner) = args.value("--owner")
        && owner != ADMIN
    {
        return Err(Failure::NotFound(format!("No such owner `{owner}`")));
    }
    let snap = snapshot(node)?;
    let names: BTreeSet<&String> = snap
        .accounts
        .iter()
        .filter_map(|a| a.package.as_ref())
        .collect();
    Ok(Value::Array(
        names
            .into_iter()
            .map(|name| json!({"name": name, "owner": ADMIN}))
            .collect(),
    ))
}

const USER_FIELDS: &[&str] = &[
    "id",
    "username",
    "owner",
    "domain",
    "package",
    "email",
    "locale_code",
];

fn users(args: &Args, node: &Node<'_>) -> Result<Value, Failure> {
    let fields: Vec<&str> = match args.value("--fields") {
        None => USER_FIELDS.to_vec(),
        Some(list) => list
            .split(',')
            .map(|f| {
                USER_FIELDS
                    .iter()
                    .copied()
                    .find(|k| *k == f)
                    .ok_or_else(|| Failure::BadRequest(format!("Unknown field '{f}'")))
            })
            .collect::<Result<_, _>>()?,
    };
    let unix_id = args
        .value("--unix-id")
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| Failure::BadRequest(format!("--unix-id '{v}' is not a number")))
        })
        .transpose()?;
    let package = match (args.value("--package-name"), args.value("--package-owner")) {
        (None, None) => None,
        (Some(name), Some(owner)) => Some((name, owner)),
        _ => {
            return Err(Failure::BadRequest(
                "--package-name and --package-owner are used together".into(),
            ));
        }
    };
    let snap = snapshot(node)?;
    if let Some(owner) = args.value("--owner")
        && owner != ADMIN
    {
        return Err(Failure::NotFound(format!("No such owner `{owner}`")));
    }
    if let Some(username) = args.value("--username")
        && !snap.has_user(username)
    {
        return Err(Failure::NotFound(format!("No such user `{username}`")));
    }
    if let Some(uid) = unix_id
        && !snap.accounts.iter().any(|a| a.uid == uid)
    {
        return Err(Failure::NotFound(format!("No such user with id `{uid}`")));
    }
    if let Some((name, owner)) = package
        && (owner != ADMIN
            || !snap
                .accounts
                .iter()
                .any(|a| a.package.as_deref() == Some(name)))
    {
        return Err(Failure::NotFound(format!(
            "No such package `{name}` of `{owner}`"
        )));
    }
    let mut out = Vec::new();
    for account in &snap.accounts {
        if args
            .value("--username")
            .is_some_and(|u| u != account.username)
            || unix_id.is_some_and(|uid| uid != account.uid)
            || package.is_some_and(|(name, _)| account.package.as_deref() != Some(name))
        {
            continue;
        }
        let mut entry = Map::new();
        for field in &fields {
            let value = match *field {
                "id" => json!(account.uid),
                "username" => json!(account.username),
                "owner" => json!(ADMIN),
                "domain" => json!(snap.main_domain(&account.username)),
                "package" => match &account.package {
                    Some(name) => json!({"name": name, "owner": ADMIN}),
                    None => Value::Null,
                },
                // The node keeps neither: CloudLinux falls back to its defaults.
                "email" | "locale_code" => Value::Null,
                other => unreachable!("{other} is not in USER_FIELDS"),
            };
            entry.insert((*field).to_owned(), value);
        }
        out.push(Value::Object(entry));
    }
    Ok(Value::Array(out))
}

/// `82` for 8.2: alt-php's directory suffix.
fn compact(version: PhpVersion) -> String {
    version.as_str().replace('.', "")
}

fn domains(args: &Args, node: &Node<'_>) -> Result<Value, Failure> {
    let snap = snapshot(node)?;
    if let Some(owner) = args.value("--owner")
        && !snap.has_user(owner)
    {
        return Err(Failure::NotFound(format!("No such user `{owner}`")));
    }
    if let Some(name) = args.value("--name")
        && !snap.domains.iter().any(|d| d.name == name)
    {
        return Err(Failure::NotFound(format!("No such domain `{name}`")));
    }
    let mut out = Map::new();
    for domain in &snap.domains {
        if args.value("--owner").is_some_and(|o| o != domain.owner)
            || args.value("--name").is_some_and(|n| n != domain.name)
        {
            continue;
        }
        let mut entry = json!({
            "owner": domain.owner,
            "document_root": domain.document_root,
            "is_main": domain.is_main,
        });
        if args.flag("--with-php") {
            entry["php"] = match domain.php {
                Some(version) => {
                    let v = compact(version);
                    json!({
                        "php_version_id": format!("alt-php{v}"),
                        "version": v,
                        "ini_path": format!("/opt/alt/php{v}/link/conf"),
                        "fpm": format!("alt-php{v}-fpm"),
                        "handler": "fpm",
                    })
                }
                None => Value::Null,
            };
        }
        out.insert(domain.name.clone(), entry);
    }
    Ok(Value::Object(out))
}

fn admins(args: &Args) -> Result<Value, Failure> {
    let is_main = match args.value("--is-main") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(Failure::BadRequest(format!(
                "--is-main '{other}' is neither true nor false"
            )));
        }
    };
    if let Some(name) = args.value("--name")
        && name != ADMIN
    {
        return Err(Failure::NotFound(format!("No such administrator `{name}`")));
    }
    if is_main == Some(false) {
        return Ok(json!([]));
    }
    Ok(json!([{
        "name": ADMIN,
        "unix_user": ADMIN,
        "locale_code": "EN_us",
        "email": null,
        "is_main": true,
    }]))
}

fn php(node: &Node<'_>) -> Value {
    Value::Array(
        node.provider
            .php_installed_versions()
            .into_iter()
            .map(|version| {
                let v = compact(version);
                json!({
                    "identifier": format!("alt-php{v}"),
                    "version": version.as_str(),
                    "modules_dir": format!("/opt/alt/php{v}/usr/lib64/php/modules"),
                    "dir": format!("/opt/alt/php{v}/"),
                    "bin": node.provider.php_fpm_layout(version).cli,
                    "ini": format!("/opt/alt/php{v}/link/conf/default.ini"),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn arguments_take_both_forms_and_anything_else_is_a_bad_request() {
        let spec = [("--owner", "-o"), ("--name", "-n")];
        let a = Args::parse(
            &strings(&["--owner=shop1", "-n", "x.example"]),
            &spec,
            &["--with-php"],
        )
        .unwrap();
        assert_eq!(a.value("--owner"), Some("shop1"));
        assert_eq!(a.value("--name"), Some("x.example"));
        assert!(!a.flag("--with-php"));
        for bad in [
            &["--nosuch"][..],
            &["--owner"],
            &["--owner=a", "--owner=b"],
            &["--with-php=1"],
            &["shop1"],
        ] {
            let err = Args::parse(&strings(bad), &spec, &["--with-php"]).unwrap_err();
            assert!(matches!(err, Failure::BadRequest(_)), "{bad:?}: {err:?}");
        }
    }

    #[test]
    fn the_ini_names_every_script_with_the_executable_and_no_with_php() {
        let ini = integration_ini("/usr/bin/layerone");
        assert!(ini.contains("[integration_scripts]\n"));
        for script in Script::ALL {
            assert!(ini.contains(&format!(
                "\n{0} = /usr/bin/layerone cloudlinux {0}\n",
                script.name()
            )));
        }
        assert!(!ini.contains("--with-php"));
    }

    #[test]
    fn package_names_say_the_limits_and_need_all_of_them() {
        let limits = json!({"cpu_percent": 150, "memory_mib": 1024, "io_kib_per_sec": 2048,
                            "processes": 50, "entry_processes": 10});
        assert_eq!(
            package_of(&limits).as_deref(),
            Some("cpu150-mem1024m-io2048k-nproc50-ep10")
        );
        assert_eq!(package_of(&Value::Null), None);
        assert_eq!(package_of(&json!({"cpu_percent": 1})), None);
    }
}
