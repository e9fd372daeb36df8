//! MariaDB: databases, users and grants, reached over the server's local unix socket with a
//! client library (the `mysql` crate, no TLS, no `mysql` command line).
//!
//! What reaches the server is built in one place (`real.rs`) from these closed types only:
//!
//! - identifiers (database names) are [`DbName`], `[a-z0-9_]{1,64}`, checked again here
//!   whatever the caller validated, and written into a statement only by [`quote_ident`]
//!   (backticks) or [`quote_db_pattern`] (backticks, with `_` escaped, because a database in a
//!   `GRANT` is a `LIKE` pattern: `a_b` would also grant on `axb`);
//! - values (user names, hosts, password hashes, database names in `WHERE` clauses) travel
//!   only as bound parameters. Account statements (`CREATE USER`, `GRANT`...) take no
//!   placeholders in MariaDB, so the values are bound into session variables first and the
//!   server itself builds the statement with `QUOTE()` (`EXECUTE IMMEDIATE CONCAT(...)`);
//! - privileges, character sets and collations are enums whose SQL spelling is a constant.
//!
//! [`Provider::mariadb`] opens one connection as MariaDB's `root` (unix-socket
//! authentication) for a handler's statements. Both the real server (`real.rs`) and a model
//! of it are a [`DatabaseSession`]: an executor that models the system (the simulator's)
//! offers its model when no socket was configured, so the same calls change a JSON file under
//! the sysroot, and the dev node, the crash matrix and the seeded histories run the mysql
//! operations without a server.
//!
//! Every change (not the reads) is one line of the audit log, like a program invocation:
//! program `mariadb`, the operation and the object names, a password hash as `<redacted>`.

pub mod dump;
mod real;

use std::collections::BTreeSet;
use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::audit::{AuditLog, AuditRecord};
use crate::error::ProviderError;
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::Provider;

use dump::DumpCounts;

/// Where the platform's MariaDB (or MySQL) listens by default: Debian's packages use
/// `/run/mysqld`, CloudLinux's (MySQL Governor) the datadir.
pub fn default_socket(platform: Platform) -> &'static str {
    match platform {
        Platform::Debian => "/run/mysqld/mysqld.sock",
        Platform::CloudLinux => "/var/lib/mysql/mysql.sock",
    }
}

/// A MariaDB name as the node writes it: `[a-z0-9_]`, 1 to `max` bytes; anything else is
/// refused, naming `what`.
fn sql_name(name: &str, max: usize, what: &str) -> Result<String, ProviderError> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(name.to_owned())
    } else {
        Err(ProviderError::Mariadb {
            op: "validate",
            code: None,
            message: format!("{what} {name:?} is not [a-z0-9_]{{1,{max}}}"),
        })
    }
}

registry::string_type!(
    /// A database name: `[a-z0-9_]{1,64}` (MariaDB's limit is 64 characters).
    DbName,
    error: ProviderError,
    |s| sql_name(s, DbName::MAX, "database name")
);

impl DbName {
    pub const MAX: usize = 64;

    /// `[a-z0-9_]`, 1 to `MAX` bytes; anything else is refused.
    pub fn new(name: &str) -> Result<DbName, ProviderError> {
        name.parse()
    }
}

registry::string_type!(
    /// A MariaDB user name: `[a-z0-9_]{1,80}` (MariaDB's limit is 80 characters).
    DbUser,
    error: ProviderError,
    |s| sql_name(s, DbUser::MAX, "user name")
);

impl DbUser {
    pub const MAX: usize = 80;

    /// `[a-z0-9_]`, 1 to `MAX` bytes; anything else is refused.
    pub fn new(name: &str) -> Result<DbUser, ProviderError> {
        name.parse()
    }
}

/// A host part of a MariaDB account (`localhost`, an address, a `%` pattern or
/// `address/netmask`). Only ever a bound value; checked again here for printable ASCII
/// without quotes or backslashes, so a log line or an error shows it as it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DbHost(String);

impl DbHost {
    pub fn new(host: &str) -> Result<DbHost, ProviderError> {
        let ok = !host.is_empty()
            && host.len() <= 255
            && host.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'.' | b':' | b'%' | b'/' | b'-' | b'_')
            });
        if ok {
            Ok(DbHost(host.to_owned()))
        } else {
            Err(ProviderError::Mariadb {
                op: "validate",
                code: None,
                message: format!("host {host:?} is not a MariaDB host pattern"),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A `mysql_native_password` hash: `*` and 40 uppercase hexadecimal digits.
#[derive(Clone, PartialEq, Eq)]
pub struct NativeHash(String);

impl NativeHash {
    pub fn new(hash: &str) -> Result<NativeHash, ProviderError> {
        let ok = hash.len() == 41
            && hash.starts_with('*')
            && hash[1..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b));
        if ok {
            Ok(NativeHash(hash.to_owned()))
        } else {
            Err(ProviderError::Mariadb {
                op: "validate",
                code: None,
                message: "a password hash must be `*` and 40 uppercase hexadecimal digits".into(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NativeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NativeHash(..)")
    }
}

/// One MariaDB account: a user at a host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DbAccount {
    pub user: DbUser,
    pub host: DbHost,
}

impl DbAccount {
    /// `user@host`: how the audit log, and a model of the server, name the account.
    pub fn key(&self) -> String {
        format!("{}@{}", self.user, self.host.as_str())
    }
}

/// A character set the node offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    Utf8mb4,
    Utf8mb3,
    Latin1,
    Ascii,
}

impl Charset {
    pub fn as_str(self) -> &'static str {
        match self {
            Charset::Utf8mb4 => "utf8mb4",
            Charset::Utf8mb3 => "utf8mb3",
            Charset::Latin1 => "latin1",
            Charset::Ascii => "ascii",
        }
    }
}

/// A collation the node offers, each of one [`Charset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collation {
    Utf8mb4UnicodeCi,
    Utf8mb4GeneralCi,
    Utf8mb4Bin,
    Utf8mb4Unicode520Ci,
    Utf8mb3UnicodeCi,
    Utf8mb3GeneralCi,
    Latin1SwedishCi,
    Latin1GeneralCi,
    Latin1Bin,
    AsciiGeneralCi,
    AsciiBin,
}

impl Collation {
    pub fn as_str(self) -> &'static str {
        match self {
            Collation::Utf8mb4UnicodeCi => "utf8mb4_unicode_ci",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4Unicode520Ci => "utf8mb4_unicode_520_ci",
            Collation::Utf8mb3UnicodeCi => "utf8mb3_unicode_ci",
            Collation::Utf8mb3GeneralCi => "utf8mb3_general_ci",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::Latin1GeneralCi => "latin1_general_ci",
            Collation::Latin1Bin => "latin1_bin",
            Collation::AsciiGeneralCi => "ascii_general_ci",
            Collation::AsciiBin => "ascii_bin",
        }
    }

    pub fn charset(self) -> Charset {
        match self {
            Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4GeneralCi
            | Collation::Utf8mb4Bin
            | Collation::Utf8mb4Unicode520Ci => Charset::Utf8mb4,
            Collation::Utf8mb3UnicodeCi | Collation::Utf8mb3GeneralCi => Charset::Utf8mb3,
            Collation::Latin1SwedishCi | Collation::Latin1GeneralCi | Collation::Latin1Bin => {
                Charset::Latin1
            }
            Collation::AsciiGeneralCi | Collation::AsciiBin => Charset::Ascii,
        }
    }
}

/// A database-level privilege.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Privilege {
    Select,
    Insert,
    Update,
    Delete,
    Create,
    Drop,
    Index,
    Alter,
    References,
    CreateTemporaryTables,
    LockTables,
    Execute,
    CreateView,
    ShowView,
    CreateRoutine,
    AlterRoutine,
    Event,
    Trigger,
}

impl Privilege {
    pub const ALL: &'static [Privilege] = &[
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::Create,
        Privilege::Drop,
        Privilege::Index,
        Privilege::Alter,
        Privilege::References,
        Privilege::CreateTemporaryTables,
        Privilege::LockTables,
        Privilege::Execute,
        Privilege::CreateView,
        Privilege::ShowView,
        Privilege::CreateRoutine,
        Privilege::AlterRoutine,
        Privilege::Event,
        Privilege::Trigger,
    ];

    /// The SQL spelling, as `information_schema.SCHEMA_PRIVILEGES` shows it too.
    pub fn as_sql(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
            Privilege::Index => "INDEX",
            Privilege::Alter => "ALTER",
            Privilege::References => "REFERENCES",
            Privilege::CreateTemporaryTables => "CREATE TEMPORARY TABLES",
            Privilege::LockTables => "LOCK TABLES",
            Privilege::Execute => "EXECUTE",
            Privilege::CreateView => "CREATE VIEW",
            Privilege::ShowView => "SHOW VIEW",
            Privilege::CreateRoutine => "CREATE ROUTINE",
            Privilege::AlterRoutine => "ALTER ROUTINE",
            Privilege::Event => "EVENT",
            Privilege::Trigger => "TRIGGER",
        }
    }

    pub fn from_sql(sql: &str) -> Option<Privilege> {
        Privilege::ALL.iter().copied().find(|p| p.as_sql() == sql)
    }
}

/// A database as the server shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbInfo {
    pub charset: String,
    pub collation: String,
}

/// `name` between backticks. The only way an identifier enters a statement; a [`DbName`]
/// holds no backtick, and one would be doubled anyway.
pub fn quote_ident(name: &DbName) -> String {
    format!("`{}`", name.as_str().replace('`', "``"))
}

/// `name` as a database pattern in `GRANT`/`REVOKE ... ON <pattern>.*`: between backticks,
/// with the `LIKE` wildcards `_` and `%` escaped so the grant covers this database only.
pub fn quote_db_pattern(name: &DbName) -> String {
    format!("`{}`", db_pattern(name).replace('`', "``"))
}

/// The escaped pattern as `mysql.db` and `information_schema.SCHEMA_PRIVILEGES` store it.
pub(crate) fn db_pattern(name: &DbName) -> String {
    name.as_str().replace('_', "\\_").replace('%', "\\%")
}

/// One session on the database side: a connection to the real server (`real.rs`), or a model
/// of it that a simulated machine offers ([`Machine::database_model`]). [`Mariadb`] writes the
/// audit line of each change around these calls; a session only carries them out.
///
/// [`Machine::database_model`]: crate::Machine::database_model
pub trait DatabaseSession {
    /// Where the calls go, as the audit line names it: the server's socket, or the model's
    /// file.
    fn endpoint(&self) -> &Path;
    /// Whether the calls reach a real server.
    fn is_real(&self) -> bool;
    fn ensure_database(&mut self, db: &DbName, collation: Collation) -> Result<(), ProviderError>;
    fn drop_database(&mut self, db: &DbName) -> Result<(), ProviderError>;
    fn database(&mut self, db: &DbName) -> Result<Option<DbInfo>, ProviderError>;
    fn database_size(&mut self, db: &DbName) -> Result<u64, ProviderError>;
    fn ensure_account(
        &mut self,
        account: &DbAccount,
        hash: &NativeHash,
    ) -> Result<(), ProviderError>;
    fn drop_account(&mut self, account: &DbAccount) -> Result<(), ProviderError>;
    fn hosts_of(&mut self, user: &DbUser) -> Result<Vec<DbHost>, ProviderError>;
    fn grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<BTreeSet<Privilege>, ProviderError>;
    /// Revokes `revoke` and grants `grant` on `db` (each list holds only what changes).
    fn change_grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
        revoke: &[Privilege],
        grant: &[Privilege],
    ) -> Result<(), ProviderError>;
    /// Writes the frames of `db`'s tables to `out`, after the dump's header
    /// ([`Mariadb::dump_database`]), counting them in `counts`.
    fn dump_tables(
        &mut self,
        db: &DbName,
        out: &mut dyn Write,
        counts: &mut DumpCounts,
    ) -> Result<(), ProviderError>;
    /// Runs the framed statements of `input` in `db` as the throw-away account `importer`
    /// ([`Mariadb::import_database`]); returns how many ran.
    fn import(
        &mut self,
        db: &DbName,
        importer: &DbAccount,
        input: &mut dyn BufRead,
    ) -> Result<u64, ProviderError>;
}

/// The database side of the provider, for one handler's statements: a connection to the
/// real server, or a simulated machine's model of it. Every change (not the reads) is one
/// line of the audit log, like a program invocation: program `mariadb`, the socket (or the
/// model's file) as the path, the operation and the object names as the arguments, the hash
/// as `<redacted>`.
pub struct Mariadb<'p> {
    provider: &'p Provider,
    session: Box<dyn DatabaseSession>,
}

impl fmt::Debug for Mariadb<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mariadb")
            .field("endpoint", &self.session.endpoint())
            .field("real", &self.is_real())
            .finish()
    }
}

impl Provider {
    /// Points the MariaDB calls at this server socket instead of the platform's default.
    /// Under a simulation it also makes them real (the test harness's throw-away server).
    pub fn with_mariadb_socket(mut self, socket: impl Into<PathBuf>) -> Provider {
        self.mariadb_socket = Some(socket.into());
        self
    }

    /// Opens the database side: a connection to the server, or the machine's model of it
    /// when it has one and no socket was configured.
    pub fn mariadb(&self) -> Result<Mariadb<'_>, ProviderError> {
        if self.mariadb_socket.is_none()
            && let Some(model) = self.machine.database_model(self)
        {
            return Ok(Mariadb {
                provider: self,
                session: model,
            });
        }
        let socket = self
            .mariadb_socket
            .clone()
            .unwrap_or_else(|| PathBuf::from(default_socket(self.platform)));
        Ok(Mariadb {
            provider: self,
            session: Box::new(real::Session::connect(&socket)?),
        })
    }
}

impl Mariadb<'_> {
    /// Whether the calls go to a real server.
    pub fn is_real(&self) -> bool {
        self.session.is_real()
    }

    /// Runs one change with its audit line. An audit log that cannot be opened stops the
    /// change before it is made, as for programs.
    fn audited(
        &mut self,
        args: Vec<String>,
        change: impl FnOnce(&mut dyn DatabaseSession) -> Result<(), ProviderError>,
    ) -> Result<(), ProviderError> {
        let mut audit = AuditLog::open(self.provider.audit_dir())?;
        let clock = self.provider.clock();
        let at = clock.now_ms().max(0) as u64;
        let started = clock.monotonic();
        let result = change(self.session.as_mut());
        let record = AuditRecord {
            at,
            program: Program::Mariadb.name().to_owned(),
            path: self.session.endpoint().to_string_lossy().into_owned(),
            args,
            status: result.as_ref().ok().map(|()| 0),
            ms: clock.monotonic().saturating_sub(started).as_millis() as u64,
            backend: if self.is_real() { "real" } else { "sim" }.to_owned(),
            error: result.as_ref().err().map(|e| e.code().to_owned()),
        };
        if let Err(error) = audit.append(&record) {
            tracing::error!(
                target: "audit",
                path = %audit.path().display(),
                %error,
                "could not append to the audit log"
            );
        }
        result
    }

    /// Creates the database if missing, and sets its default character set and collation.
    pub fn ensure_database(
        &mut self,
        db: &DbName,
        collation: Collation,
    ) -> Result<(), ProviderError> {
        let args = vec![
            "create database".into(),
            db.to_string(),
            collation.as_str().into(),
        ];
        self.audited(args, |s| s.ensure_database(db, collation))
    }

    /// Drops the database with its tables; absent is fine.
    pub fn drop_database(&mut self, db: &DbName) -> Result<(), ProviderError> {
        let args = vec!["drop database".into(), db.to_string()];
        self.audited(args, |s| s.drop_database(db))
    }

    /// The database's defaults, or `None` when it does not exist.
    pub fn database(&mut self, db: &DbName) -> Result<Option<DbInfo>, ProviderError> {
        self.session.database(db)
    }

    /// Data plus index bytes of the database's tables, from `information_schema.TABLES`.
    pub fn database_size(&mut self, db: &DbName) -> Result<u64, ProviderError> {
        self.session.database_size(db)
    }

    /// Creates the account if missing and sets its password hash.
    pub fn ensure_account(
        &mut self,
        account: &DbAccount,
        hash: &NativeHash,
    ) -> Result<(), ProviderError> {
        let args = vec!["create user".into(), account.key(), "<redacted>".into()];
        self.audited(args, |s| s.ensure_account(account, hash))
    }

    /// Drops the account and its grants; absent is fine.
    pub fn drop_account(&mut self, account: &DbAccount) -> Result<(), ProviderError> {
        let args = vec!["drop user".into(), account.key()];
        self.audited(args, |s| s.drop_account(account))
    }

    /// The hosts the server has accounts for `user` at.
    pub fn hosts_of(&mut self, user: &DbUser) -> Result<Vec<DbHost>, ProviderError> {
        self.session.hosts_of(user)
    }

    /// The account's privileges on exactly this database.
    pub fn grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<BTreeSet<Privilege>, ProviderError> {
        self.session.grants(account, db)
    }

    /// Makes the account's privileges on `db` exactly `privileges` (revoking the others).
    pub fn set_grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
        privileges: &BTreeSet<Privilege>,
    ) -> Result<(), ProviderError> {
        let current = self.grants(account, db)?;
        let revoke: Vec<Privilege> = current.difference(privileges).copied().collect();
        let grant: Vec<Privilege> = privileges.difference(&current).copied().collect();
        if revoke.is_empty() && grant.is_empty() {
            return Ok(());
        }
        let list = |privs: &[Privilege]| {
            privs
                .iter()
                .map(|p| p.as_sql())
                .collect::<Vec<_>>()
                .join(",")
        };
        let args = vec![
            "set grants".into(),
            account.key(),
            db.to_string(),
            format!("revoke={}", list(&revoke)),
            format!("grant={}", list(&grant)),
        ];
        self.audited(args, |s| s.change_grants(account, db, &revoke, &grant))
    }
}
