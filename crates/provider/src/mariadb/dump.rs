//! A database's dump for a backup, and its import on a restore.
//!
//! The dump is SQL, one statement per frame: a comment line `-- layerone-statement <bytes>`
//! then exactly that many bytes of statement and a `;` and newline. A reader sees ordinary
//! SQL; the importer needs no SQL parser to find where a statement ends (a `;` inside a
//! string cannot split one), and refuses anything that is not a well-formed frame.
//!
//! The dump is made as root (it reads every table of the database); the import is not. A
//! restore archive is hostile, so its SQL runs as a throw-away MariaDB account created for
//! the import, granted `ALL` on that one database and nothing else, and dropped afterwards
//! whatever happened: a `GRANT ... ON *.*`, a `CREATE USER`, a `USE mysql` in the dump is
//! refused by the server for lack of privilege, and nothing outside the database changes.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use mysql::prelude::Queryable;
use mysql::{Conn, LocalInfileHandler, OptsBuilder};

use super::real::Session;
use super::{
    DatabaseSession, DbAccount, DbHost, DbName, DbUser, Mariadb, quote_db_pattern, quote_ident,
};
use crate::error::ProviderError;

/// The comment that opens each statement's frame.
pub const FRAME: &str = "-- layerone-statement ";
/// The longest statement a dump holds or an import accepts.
pub const MAX_STATEMENT_BYTES: usize = 8 * 1024 * 1024;
/// An `INSERT` of a dump is cut after about this many bytes of values.
const INSERT_BATCH_BYTES: usize = 512 * 1024;

/// What a dump holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DumpCounts {
    pub tables: u64,
    pub rows: u64,
    pub statements: u64,
}

fn dump_error(message: impl Into<String>) -> ProviderError {
    ProviderError::Mariadb {
        op: "dump",
        code: None,
        message: message.into(),
    }
}

fn import_error(message: impl Into<String>) -> ProviderError {
    ProviderError::Mariadb {
        op: "import",
        code: None,
        message: message.into(),
    }
}

/// Writes one framed statement.
fn frame(out: &mut dyn Write, statement: &str) -> Result<(), ProviderError> {
    write!(out, "{FRAME}{}\n{statement};\n", statement.len())
        .map_err(|e| dump_error(format!("write the dump: {e}")))
}

/// The next framed statement of `input`, `None` at its end. Blank lines and other comment
/// lines between frames are skipped; anything else is an error.
pub fn next_statement(input: &mut dyn BufRead) -> Result<Option<String>, ProviderError> {
    loop {
        let mut line = Vec::new();
        input
            .take(256)
            .read_until(b'\n', &mut line)
            .map_err(|e| import_error(format!("read the dump: {e}")))?;
        if line.is_empty() {
            return Ok(None);
        }
        if line.last() != Some(&b'\n') {
            return Err(import_error("a dump line outside a statement is too long"));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n');
        if let Some(len) = text.strip_prefix(FRAME) {
            let len: usize = len
                .parse()
                .map_err(|_| import_error("a statement frame without a length"))?;
            if len > MAX_STATEMENT_BYTES {
                return Err(import_error(format!(
                    "a statement of {len} bytes, more than {MAX_STATEMENT_BYTES}"
                )));
            }
            let mut body = vec![0u8; len + 2];
            input
                .read_exact(&mut body)
                .map_err(|_| import_error("the dump ends inside a statement"))?;
            if &body[len..] != b";\n" {
                return Err(import_error("a statement frame is not closed by ';'"));
            }
            body.truncate(len);
            let statement =
                String::from_utf8(body).map_err(|_| import_error("a statement is not UTF-8"))?;
            return Ok(Some(statement));
        }
        if text.is_empty() || (text.starts_with("-- ") && !text.contains('\r')) {
            continue;
        }
        return Err(import_error(
            "the dump holds text outside a statement frame",
        ));
    }
}

/// A table name from the server, quoted as an identifier (backticks doubled).
fn quote_table(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl Mariadb<'_> {
    /// Writes a dump of `db` (every base table: its definition and its rows) to `out`.
    /// A model of the server has no tables: its dump holds only the header.
    pub fn dump_database(
        &mut self,
        db: &DbName,
        out: &mut dyn Write,
    ) -> Result<DumpCounts, ProviderError> {
        writeln!(out, "-- layerone node dump of database {db}")
            .map_err(|e| dump_error(format!("write the dump: {e}")))?;
        let mut counts = DumpCounts::default();
        self.session.dump_tables(db, out, &mut counts)?;
        Ok(counts)
    }

    /// Runs the hostile dump `input` in `db` as a throw-away account named `importer`
    /// (`[a-z0-9_]`, derived by the caller from the job so a retry reuses it), granted only
    /// on `db`, dropped afterwards. Returns how many statements ran. A model of the server
    /// reads and checks the frames, and runs nothing.
    pub fn import_database(
        &mut self,
        db: &DbName,
        importer: &DbUser,
        input: &mut dyn BufRead,
    ) -> Result<u64, ProviderError> {
        let account = DbAccount {
            user: importer.clone(),
            host: DbHost::new("localhost")?,
        };
        let args = vec![
            "import database".into(),
            db.to_string(),
            "as".into(),
            account.key(),
        ];
        let mut ran = 0;
        self.audited(args, |session| {
            ran = session.import(db, &account, input)?;
            Ok(())
        })?;
        Ok(ran)
    }
}

/// The real server's dump of `db`'s base tables: each one's definition and its rows.
pub(super) fn dump_tables(
    conn: &mut Conn,
    db: &DbName,
    out: &mut dyn Write,
    counts: &mut DumpCounts,
) -> Result<(), ProviderError> {
    let tables: Vec<String> = conn
        .exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
            (db.as_str(),),
        )
        .map_err(|e| dump_error(format!("list tables: {e}")))?;
    let emit = |out: &mut dyn Write, statement: &str, counts: &mut DumpCounts| {
        counts.statements += 1;
        frame(out, statement)
    };
    emit(out, "SET FOREIGN_KEY_CHECKS = 0", counts)?;
    for table in &tables {
        let qualified = format!("{}.{}", quote_ident(db), quote_table(table));
        let create: Option<(String, String)> = conn
            .query_first(format!("SHOW CREATE TABLE {qualified}"))
            .map_err(|e| dump_error(format!("read the definition of {table}: {e}")))?;
        let Some((_, create)) = create else {
            continue;
        };
        counts.tables += 1;
        emit(
            out,
            &format!("DROP TABLE IF EXISTS {}", quote_table(table)),
            counts,
        )?;
        emit(out, &create, counts)?;
        let head = format!("INSERT INTO {} VALUES ", quote_table(table));
        let mut batch = String::new();
        let rows = conn
            .query_iter(format!("SELECT * FROM {qualified}"))
            .map_err(|e| dump_error(format!("read {table}: {e}")))?;
        for row in rows {
            let row = row.map_err(|e| dump_error(format!("read {table}: {e}")))?;
            let values: Vec<String> = row.unwrap().into_iter().map(|v| v.as_sql(false)).collect();
            let tuple = format!("({})", values.join(","));
            if tuple.len() + head.len() > MAX_STATEMENT_BYTES {
                return Err(dump_error(format!(
                    "a row of {table} is larger than {MAX_STATEMENT_BYTES} bytes"
                )));
            }
            if !batch.is_empty() && batch.len() + tuple.len() > INSERT_BATCH_BYTES {
                emit(out, &batch, counts)?;
                batch.clear();
            }
            if batch.is_empty() {
                batch.push_str(&head);
            } else {
                batch.push(',');
            }
            batch.push_str(&tuple);
            counts.rows += 1;
        }
        if !batch.is_empty() {
            emit(out, &batch, counts)?;
        }
    }
    emit(out, "SET FOREIGN_KEY_CHECKS = 1", counts)?;
    Ok(())
}

/// The real server's import: the throw-away `account` with a random password, granted on
/// `db` only, runs the statements, and is dropped whatever happened.
pub(super) fn import_as(
    session: &mut Session,
    socket: &Path,
    db: &DbName,
    account: &DbAccount,
    input: &mut dyn BufRead,
) -> Result<u64, ProviderError> {
    let mut password = [0u8; 24];
    getrandom::fill(&mut password).map_err(|e| import_error(e.to_string()))?;
    let password = hex_encode(&password);
    session.drop_account(account)?;
    session.create_account_with_password(account, &password)?;
    let mut ran = 0;
    let result = session
        .grant_all_on(account, db)
        .and_then(|()| run_as(socket, account, &password, db, input, &mut ran));
    let dropped = session.drop_account(account);
    result.and(dropped)?;
    Ok(ran)
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Connects as the throw-away account and runs each framed statement of `input` in `db`.
fn run_as(
    socket: &Path,
    account: &DbAccount,
    password: &str,
    db: &DbName,
    input: &mut dyn BufRead,
    ran: &mut u64,
) -> Result<(), ProviderError> {
    let opts = OptsBuilder::new()
        .socket(Some(socket.to_string_lossy()))
        .prefer_socket(true)
        .user(Some(account.user.as_str()))
        .pass(Some(password))
        .db_name(Some(db.as_str()))
        .stmt_cache_size(0);
    let mut conn = Conn::new(opts).map_err(|e| ProviderError::MariadbUnavailable {
        message: format!("connect as the importer: {e}"),
    })?;
    // `LOAD DATA LOCAL INFILE` asks the client (this root process) for a file of its
    // choosing: refused, whatever file the dump names.
    conn.set_local_infile_handler(Some(LocalInfileHandler::new(|_, _| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "LOAD DATA LOCAL INFILE is refused in a restore",
        ))
    })));
    conn.query_drop("SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
        .map_err(|e| import_error(format!("prepare the session: {e}")))?;
    while let Some(statement) = next_statement(input)? {
        conn.query_drop(&statement).map_err(|e| match e {
            mysql::Error::MySqlError(e) => ProviderError::Mariadb {
                op: "import",
                code: Some(e.code),
                message: e.message,
            },
            other => import_error(other.to_string()),
        })?;
        *ran += 1;
    }
    Ok(())
}

/// The pattern a grant on `db` names (for the statements in `real.rs`).
pub(crate) fn grant_target(db: &DbName) -> String {
    format!("{}.*", quote_db_pattern(db))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statements(input: &[u8]) -> Result<Vec<String>, ProviderError> {
        let mut input = input;
        let mut out = Vec::new();
        while let Some(s) = next_statement(&mut input)? {
            out.push(s);
        }
        Ok(out)
    }

    #[test]
    fn frames_carry_any_statement_and_nothing_else_is_accepted() {
        let mut dump = Vec::new();
        writeln!(dump, "-- a comment").unwrap();
        for s in ["SELECT 1", "INSERT INTO t VALUES ('a;\nb')", ""] {
            frame(&mut dump, s).unwrap();
        }
        dump.push(b'\n');
        assert_eq!(
            statements(&dump).unwrap(),
            ["SELECT 1", "INSERT INTO t VALUES ('a;\nb')", ""]
        );
        for bad in [
            &b"DROP TABLE t;\n"[..],
            b"-- layerone-statement 99\nSELECT 1;\n",
            b"-- layerone-statement 8\nSELECT 1\n\n",
            b"-- layerone-statement x\n",
            b"-- layerone-statement 99999999999\n",
            b"-- unterminated comment",
        ] {
            assert!(
                statements(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
