//! The Sim model of MariaDB: databases (with their defaults and a size), accounts (user@host
//! with a hash) and database-level grants, in one JSON file under the sysroot, changed the
//! way the server changes them:
//!
//! - dropping a database leaves the grants on it (MariaDB keeps `mysql.db` rows);
//! - dropping an account removes its grants;
//! - granting to an account that does not exist fails (error 1133, as with
//!   `NO_AUTO_CREATE_USER`), and revoking a privilege the account lacks fails (1141);
//! - sizes are 0 until a test sets them with [`crate::testing::sim_set_mariadb_size`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Collation, DbAccount, DbHost, DbInfo, DbName, DbUser, NativeHash, Privilege};
use crate::error::ProviderError;
use crate::provider::Provider;

/// The model's file, under the sysroot.
pub const SIM_MARIADB_FILE: &str = "/var/lib/layerone-sim/mariadb.json";

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct SimState {
    pub databases: BTreeMap<String, SimDatabase>,
    /// `user@host` → hash.
    pub accounts: BTreeMap<String, String>,
    /// `user@host` → database → privileges (SQL spelling).
    pub grants: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SimDatabase {
    pub charset: String,
    pub collation: String,
    pub size_bytes: u64,
}

pub struct SimDb<'p> {
    provider: &'p Provider,
}

fn sim_error(code: u16, message: String) -> ProviderError {
    ProviderError::Mariadb {
        op: "sim",
        code: Some(code),
        message,
    }
}

pub(crate) fn load(provider: &Provider) -> Result<SimState, ProviderError> {
    let path = provider.sysconf(SIM_MARIADB_FILE);
    match provider.read_config(&path)? {
        None => Ok(SimState::default()),
        Some(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| sim_error(0, format!("corrupt Sim model {}: {e}", path.display()))),
    }
}

pub(crate) fn save(provider: &Provider, state: &SimState) -> Result<(), ProviderError> {
    let path = provider.sysconf(SIM_MARIADB_FILE);
    if let Some(parent) = path.parent() {
        provider.ensure_dir(parent, 0o700)?;
    }
    let bytes = serde_json::to_vec_pretty(state)
        .map_err(|e| sim_error(0, format!("encode Sim model: {e}")))?;
    provider.write_config_atomic(&path, &bytes, 0o600)
}

impl<'p> SimDb<'p> {
    pub(crate) fn new(provider: &'p Provider) -> SimDb<'p> {
        SimDb { provider }
    }

    fn change<T>(
        &mut self,
        f: impl FnOnce(&mut SimState) -> Result<T, ProviderError>,
    ) -> Result<T, ProviderError> {
        let mut state = load(self.provider)?;
        let out = f(&mut state)?;
        save(self.provider, &state)?;
        Ok(out)
    }

    pub(crate) fn ensure_database(
        &mut self,
        db: &DbName,
        collation: Collation,
    ) -> Result<(), ProviderError> {
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

    pub(crate) fn drop_database(&mut self, db: &DbName) -> Result<(), ProviderError> {
        self.change(|s| {
            s.databases.remove(db.as_str());
            Ok(())
        })
    }

    pub(crate) fn database(&mut self, db: &DbName) -> Result<Option<DbInfo>, ProviderError> {
        Ok(load(self.provider)?
            .databases
            .get(db.as_str())
            .map(|d| DbInfo {
                charset: d.charset.clone(),
                collation: d.collation.clone(),
            }))
    }

    pub(crate) fn database_size(&mut self, db: &DbName) -> Result<u64, ProviderError> {
        Ok(load(self.provider)?
            .databases
            .get(db.as_str())
            .map_or(0, |d| d.size_bytes))
    }

    pub(crate) fn ensure_account(
        &mut self,
        account: &DbAccount,
        hash: &NativeHash,
    ) -> Result<(), ProviderError> {
        self.change(|s| {
            s.accounts.insert(account.key(), hash.as_str().to_owned());
            Ok(())
        })
    }

    pub(crate) fn drop_account(&mut self, account: &DbAccount) -> Result<(), ProviderError> {
        self.change(|s| {
            s.accounts.remove(&account.key());
            s.grants.remove(&account.key());
            Ok(())
        })
    }

    pub(crate) fn hosts_of(&mut self, user: &DbUser) -> Result<Vec<DbHost>, ProviderError> {
        let state = load(self.provider)?;
        let prefix = format!("{user}@");
        state
            .accounts
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(DbHost::new)
            .collect()
    }

    pub(crate) fn grants(
        &mut self,
        account: &DbAccount,
        db: &DbName,
    ) -> Result<BTreeSet<Privilege>, ProviderError> {
        let state = load(self.provider)?;
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

    pub(crate) fn change_grants(
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
}
