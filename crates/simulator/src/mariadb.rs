//! The Sim model of MariaDB: databases (with their defaults and a size), accounts (user@host
//! with a hash) and database-level grants, in one JSON file under the sysroot, changed the
//! way the server changes them:
//!
//! - dropping a database leaves the grants on it (MariaDB keeps `mysql.db` rows);
//! - dropping an account removes its grants;
//! - granting to an account that does not exist fails (error 1133, as with
//!   `NO_AUTO_CREATE_USER`), and revoking a privilege the account lacks fails (1141);
//! - sizes are 0 until a test sets them with [`sim_set_mariadb_size`];
//! - a dump holds no table, and an import checks the dump's frames and runs nothing.
//!
//! [`crate::SimExecutor`] offers it as the provider's database session when no server
//! socket is configured (`Provider::with_mariadb_socket`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use provider::{
    Collation, DatabaseSession, DbAccount, DbHost, DbInfo, DbName, DbUser, DumpCounts, NativeHash,
    Privilege, Provider, ProviderError,
};
use serde::{Deserialize, Serialize};

/// The model's file, under the sysroot.
pub const SIM_MARIADB_FILE: &str = "/var/lib/layerone-sim/mariadb.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct SimState {
    pub databases: BTreeMap<String, SimDatabase>,
    /// `user@host` → hash.
    pub accounts: BTreeMap<String, String>,
    /// `user@host` → database → privileges (SQL spelling).
    pub grants: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct SimDatabase {
    pub charset: String,
    pub collation: String,
    pub size_bytes: u64,
}

/// The model as a database session: its file, mapped under the sysroot.
pub(crate) struct SimDb {
    file: PathBuf,
}

fn sim_error(code: u16, message: String) -> ProviderError {
    ProviderError::Mariadb {
        op: "sim",
        code: Some(code),
        message,
    }
}

fn load(file: &Path) -> Result<SimState, ProviderError> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| sim_error(0, format!("corrupt Sim model {}: {e}", file.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SimState::default()),
        Err(e) => Err(ProviderError::io("read", file, e)),
    }
}

fn save(file: &Path, state: &SimState) -> Result<(), ProviderError> {
    if let Some(parent) = file.parent() {
        provider::ensure_dir(parent, 0o700)?;
    }
    let bytes = serde_json::to_vec_pretty(state)
        .map_err(|e| sim_error(0, format!("encode Sim model: {e}")))?;
    provider::write_atomic(file, &bytes, 0o600, None)
}

impl SimDb {
    pub(crate) fn new(provider: &Provider) -> SimDb {
        SimDb {
            file: provider.sysconf(SIM_MARIADB_FILE),
        }
    }

    fn change<T>(
        &mut self,
        f: impl FnOnce(&mut SimState) -> Result<T, ProviderError>,
    ) -> Result<T, ProviderError> {
        let mut state = load(&self.file)?;
        let out = f(&mut state)?;
        save(&self.file, &state)?;
        Ok(out)
    }
}

impl DatabaseSession for SimDb {
    fn endpoint(&self) -> &Path {
        &self.file
    }

    fn is_real(&self) -> bool {
        false
    }

    fn ensure_database(&mut self, db: &DbName, collation: Collation) -> Result<(), ProviderError> {
        self.change(|s| {
            let entry = s
                .databases
                .entry(db.as_str().to_owned())
                .or_insert(SimDatabase {
                    charset: String::new(),
                    collation: String::new(),
                    size_bytes: 0,
                });
            entry.charset = collation.charset().as_str().to_owned();
            entry.collation = collation.as_str().to_owned();
            Ok(())
        })
    }

    fn drop_database(&mut self, db: &DbName) -> Result<(), ProviderError> {
        self.change(|s| {
            s.databases.remove(db.as_str());
            Ok(())
        })
    }

    fn database(&mut self, db: &DbName) -> Result<Option<DbInfo>, ProviderError> {
        Ok(load(&self.file)?
            .databases
            .get(db.as_str())
            .map(|d| DbInfo {
                charset: d.charset.clone(),
                collation: d.collation.clone(),
            }))
    }

    fn database_size(&mut self, db: &DbName) -> Result<u64, ProviderError> {
        Ok(load(&self.file)?
            .databases
            .get(db.as_str())
            .map_or(0, |d| d.size_bytes))
    }

    fn ensure_account(
        &mut self,
        account: &DbAccount,
        hash: &NativeHash,
    ) -> Result<(), ProviderError> {
        self.change(|s| {
            s.accounts.insert(account.key(), hash.as_str().to_owned());
            Ok(())
        })
    }

    fn drop_account(&mut self, account: &DbAccount) -> Result<(), ProviderError> {
        self.change(|s| {
            s.accounts.remove(&account.key());
            s.grants.remove(&account.key());
            Ok(())
        })
    }

    fn hosts_of(&mut self, user: &DbUser) -> Result<Vec<DbHost>, ProviderError> {
        let state = load(&self.file)?;
        let prefix = format!("{user}@");
        state
            .accounts
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(DbHost::new)
            .collect()
    }

    fn grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<BTreeSet<Privilege>, ProviderError> {
        let state = load(&self.file)?;
        Ok(state
            .grants
            .get(&account.key())
            .and_then(|dbs| dbs.get(db.as_str()))
            .map(|privs| {
                privs
                    .iter()
                    .filter_map(|p| Privilege::from_sql(p))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn change_grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
        revoke: &[Privilege],
        grant: &[Privilege],
    ) -> Result<(), ProviderError> {
        self.change(|s| {
            let key = account.key();
            if !s.accounts.contains_key(&key) {
                return Err(sim_error(
                    1133,
                    format!("Can't find any matching row in the user table ({key})"),
                ));
            }
            let privs = s
                .grants
                .entry(key.clone())
                .or_default()
                .entry(db.as_str().to_owned())
                .or_default();
            for p in revoke {
                if !privs.remove(p.as_sql()) {
                    return Err(sim_error(
                        1141,
                        format!("There is no such grant defined for user {key} on {db}"),
                    ));
                }
            }
            for p in grant {
                privs.insert(p.as_sql().to_owned());
            }
            if privs.is_empty()
                && let Some(dbs) = s.grants.get_mut(&key)
            {
                dbs.remove(db.as_str());
                if dbs.is_empty() {
                    s.grants.remove(&key);
                }
            }
            Ok(())
        })
    }

    fn dump_tables(
        &mut self,
        db: &DbName,
        _out: &mut dyn Write,
        _counts: &mut DumpCounts,
    ) -> Result<(), ProviderError> {
        if self.database(db)?.is_none() {
            return Err(ProviderError::Mariadb {
                op: "dump",
                code: None,
                message: format!("database {db} does not exist"),
            });
        }
        Ok(())
    }

    fn import(
        &mut self,
        db: &DbName,
        _importer: &DbAccount,
        input: &mut dyn BufRead,
    ) -> Result<u64, ProviderError> {
        if self.database(db)?.is_none() {
            return Err(ProviderError::Mariadb {
                op: "import",
                code: None,
                message: format!("database {db} does not exist"),
            });
        }
        while provider::next_dump_statement(input)?.is_some() {}
        Ok(0)
    }
}

/// Sets the size the model reports for a database (it has no tables to measure), so tests
/// and seeded histories can exceed and lift a MySQL quota. Absent databases are left alone.
pub fn sim_set_mariadb_size(
    provider: &Provider,
    db: &str,
    bytes: u64,
) -> Result<(), ProviderError> {
    let file = provider.sysconf(SIM_MARIADB_FILE);
    let mut state = load(&file)?;
    if let Some(entry) = state.databases.get_mut(db) {
        entry.size_bytes = bytes;
    }
    save(&file, &state)
}

/// What the model holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SimMariadbContents {
    pub databases: Vec<String>,
    /// `user@host`.
    pub accounts: Vec<String>,
    /// `(user@host, database)` with at least one privilege.
    pub grants: Vec<(String, String)>,
    /// `(user@host, database, privileges in SQL spelling)` for each of `grants`.
    pub privileges: Vec<(String, String, Vec<String>)>,
}

/// What the model holds: databases, accounts and grants.
pub fn sim_mariadb_contents(provider: &Provider) -> Result<SimMariadbContents, ProviderError> {
    let state = load(&provider.sysconf(SIM_MARIADB_FILE))?;
    let grants = state
        .grants
        .iter()
        .flat_map(|(acct, dbs)| dbs.keys().map(move |db| (acct.clone(), db.clone())))
        .collect();
    let privileges = state
        .grants
        .iter()
        .flat_map(|(acct, dbs)| {
            dbs.iter()
                .map(move |(db, privs)| (acct.clone(), db.clone(), privs.iter().cloned().collect()))
        })
        .collect();
    Ok(SimMariadbContents {
        databases: state.databases.keys().cloned().collect(),
        accounts: state.accounts.keys().cloned().collect(),
        grants,
        privileges,
    })
}
