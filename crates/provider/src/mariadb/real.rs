//! The real server, over its unix socket, as MariaDB's `root` (unix-socket authentication:
//! the runner is root). Every statement this module sends is assembled here from constants,
//! [`quote_ident`]/[`quote_db_pattern`] of a checked [`DbName`], and bound parameters.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};

use super::dump::{self, DumpCounts};
use super::{
    Collation, DatabaseSession, DbAccount, DbHost, DbInfo, DbName, DbUser, NativeHash, Privilege,
    db_pattern, quote_db_pattern, quote_ident,
};
use crate::error::ProviderError;

/// How long one statement may take before the call fails.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Session {
    conn: Conn,
    socket: PathBuf,
}

fn failed(op: &'static str) -> impl Fn(mysql::Error) -> ProviderError {
    move |e| match e {
        mysql::Error::MySqlError(e) => ProviderError::Mariadb {
            op,
            code: Some(e.code),
            message: e.message,
        },
        e if e.is_connectivity_error() => ProviderError::MariadbUnavailable {
            message: e.to_string(),
        },
        e => ProviderError::Mariadb {
            op,
            code: None,
            message: e.to_string(),
        },
    }
}

impl Session {
    pub(crate) fn connect(socket: &Path) -> Result<Session, ProviderError> {
        let opts = OptsBuilder::new()
            .socket(Some(socket.to_string_lossy()))
            .prefer_socket(true)
            .user(Some("root"))
            .read_timeout(Some(STATEMENT_TIMEOUT))
            .write_timeout(Some(STATEMENT_TIMEOUT))
            .stmt_cache_size(0);
        let conn = Conn::new(opts).map_err(|e| ProviderError::MariadbUnavailable {
            message: format!("connect to {}: {e}", socket.display()),
        })?;
        Ok(Session {
            conn,
            socket: socket.to_owned(),
        })
    }

    /// Runs `<head> 'user'@'host'<tail>[ 'value']`, the server quoting user, host and value
    /// (bound as parameters into session variables) with `QUOTE()`. `head` and `tail` are
    /// built by this module from constants and quoted identifiers only.
    fn account_statement(
        &mut self,
        op: &'static str,
        head: &str,
        account: &DbAccount,
        tail: &str,
        value: Option<&str>,
    ) -> Result<(), ProviderError> {
        self.conn
            .exec_drop(
                "SET @layerone_head = ?, @layerone_user = ?, @layerone_host = ?, \
                 @layerone_tail = ?, @layerone_value = ?",
                (
                    head,
                    account.user.as_str(),
                    account.host.as_str(),
                    tail,
                    value,
                ),
            )
            .map_err(failed(op))?;
        let run = self
            .conn
            .query_drop(
                "EXECUTE IMMEDIATE CONCAT(@layerone_head, QUOTE(@layerone_user), '@', \
                 QUOTE(@layerone_host), @layerone_tail, \
                 IF(@layerone_value IS NULL, '', QUOTE(@layerone_value)))",
            )
            .map_err(failed(op));
        // The hash does not stay in the session, whatever happened.
        let cleared = self
            .conn
            .query_drop("SET @layerone_value = NULL")
            .map_err(failed(op));
        run.and(cleared)
    }

    /// Creates an account with a plaintext password (the throw-away importer of a restore,
    /// whose password never leaves this process).
    pub(crate) fn create_account_with_password(
        &mut self,
        account: &DbAccount,
        password: &str,
    ) -> Result<(), ProviderError> {
        self.account_statement(
            "create importer",
            "CREATE USER ",
            account,
            " IDENTIFIED BY ",
            Some(password),
        )
    }

    /// `GRANT ALL PRIVILEGES` on the one database `db` (its name's `_` escaped, so the grant
    /// covers no other database).
    pub(crate) fn grant_all_on(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<(), ProviderError> {
        let head = format!(
            "GRANT ALL PRIVILEGES ON {} TO ",
            super::dump::grant_target(db)
        );
        self.account_statement("grant importer", &head, account, "", None)
    }
}

impl DatabaseSession for Session {
    fn endpoint(&self) -> &Path {
        &self.socket
    }

    fn is_real(&self) -> bool {
        true
    }

    fn ensure_database(&mut self, db: &DbName, collation: Collation) -> Result<(), ProviderError> {
        let spec = format!(
            "CHARACTER SET {} COLLATE {}",
            collation.charset().as_str(),
            collation.as_str()
        );
        let name = quote_ident(db);
        self.conn
            .query_drop(format!("CREATE DATABASE IF NOT EXISTS {name} {spec}"))
            .map_err(failed("create database"))?;
        self.conn
            .query_drop(format!("ALTER DATABASE {name} {spec}"))
            .map_err(failed("alter database"))
    }

    fn drop_database(&mut self, db: &DbName) -> Result<(), ProviderError> {
        self.conn
            .query_drop(format!("DROP DATABASE IF EXISTS {}", quote_ident(db)))
            .map_err(failed("drop database"))
    }

    fn database(&mut self, db: &DbName) -> Result<Option<DbInfo>, ProviderError> {
        let row: Option<(String, String)> = self
            .conn
            .exec_first(
                "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
                 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
                (db.as_str(),),
            )
            .map_err(failed("read database"))?;
        Ok(row.map(|(charset, collation)| DbInfo { charset, collation }))
    }

    fn database_size(&mut self, db: &DbName) -> Result<u64, ProviderError> {
        let size: Option<u64> = self
            .conn
            .exec_first(
                "SELECT CAST(COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS UNSIGNED) \
                 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
                (db.as_str(),),
            )
            .map_err(failed("measure database"))?;
        Ok(size.unwrap_or(0))
    }

    fn ensure_account(
        &mut self,
        account: &DbAccount,
        hash: &NativeHash,
    ) -> Result<(), ProviderError> {
        self.account_statement(
            "create user",
            "CREATE USER IF NOT EXISTS ",
            account,
            " IDENTIFIED BY PASSWORD ",
            Some(hash.as_str()),
        )?;
        // Converges the hash of an account that already existed.
        self.account_statement(
            "set password",
            "ALTER USER ",
            account,
            " IDENTIFIED BY PASSWORD ",
            Some(hash.as_str()),
        )
    }

    fn drop_account(&mut self, account: &DbAccount) -> Result<(), ProviderError> {
        self.account_statement("drop user", "DROP USER IF EXISTS ", account, "", None)
    }

    fn hosts_of(&mut self, user: &DbUser) -> Result<Vec<DbHost>, ProviderError> {
        let hosts: Vec<String> = self
            .conn
            .exec(
                "SELECT Host FROM mysql.user WHERE User = ?",
                (user.as_str(),),
            )
            .map_err(failed("list hosts"))?;
        hosts.iter().map(|h| DbHost::new(h)).collect()
    }

    fn grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<BTreeSet<Privilege>, ProviderError> {
        let rows: Vec<String> = self
            .conn
            .exec(
                "SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES \
                 WHERE GRANTEE = CONCAT(QUOTE(?), '@', QUOTE(?)) AND TABLE_SCHEMA = ?",
                (account.user.as_str(), account.host.as_str(), db_pattern(db)),
            )
            .map_err(failed("read grants"))?;
        rows.iter()
            .map(|p| {
                Privilege::from_sql(p).ok_or_else(|| ProviderError::Mariadb {
                    op: "read grants",
                    code: None,
                    message: format!("unknown privilege {p:?}"),
                })
            })
            .collect()
    }

    fn change_grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
        revoke: &[Privilege],
        grant: &[Privilege],
    ) -> Result<(), ProviderError> {
        let list = |privs: &[Privilege]| {
            privs
                .iter()
                .map(|p| p.as_sql())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let on = quote_db_pattern(db);
        if !revoke.is_empty() {
            let head = format!("REVOKE {} ON {on}.* FROM ", list(revoke));
            self.account_statement("revoke", &head, account, "", None)?;
        }
        if !grant.is_empty() {
            let head = format!("GRANT {} ON {on}.* TO ", list(grant));
            self.account_statement("grant", &head, account, "", None)?;
        }
        Ok(())
    }

    fn dump_tables(
        &mut self,
        db: &DbName,
        out: &mut dyn Write,
        counts: &mut DumpCounts,
    ) -> Result<(), ProviderError> {
        dump::dump_tables(&mut self.conn, db, out, counts)
    }

    fn import(
        &mut self,
        db: &DbName,
        importer: &DbAccount,
        input: &mut dyn BufRead,
    ) -> Result<u64, ProviderError> {
        let socket = self.socket.clone();
        dump::import_as(self, &socket, db, importer, input)
    }
}
