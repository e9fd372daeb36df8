//! MariaDB: the node administers it as root over its unix socket (Debian's default
//! `unix_socket` authentication for root), so there is no password to configure. The
//! installer checks that such a connection works and says clearly when it does not; it
//! changes nothing in MariaDB. A sysroot is not checked: the machine's server is not the
//! sysroot's.

use provider::{DbName, Provider};

use crate::converge::Engine;

/// Adds a note when the node cannot reach MariaDB as root over its socket (on `/` only).
pub fn check(e: &Engine, notes: &mut Vec<String>) {
    if e.provider.root() != std::path::Path::new("/") {
        return;
    }
    if let Some(note) = root_over_socket(&e.provider) {
        notes.push(note);
    }
}

/// `None` when a root connection over the provider's socket answers a query; otherwise
/// what the operator should do.
pub fn root_over_socket(provider: &Provider) -> Option<String> {
    let socket = provider::default_socket(provider.platform());
    let result = provider.mariadb().and_then(|mut db| {
        let mysql = DbName::new("mysql")?;
        db.database(&mysql)
    });
    match result {
        Ok(_) => None,
        Err(err) => Some(format!(
            "MariaDB: the node cannot connect as root over its unix socket (default {socket}): {err}. \
             Install mariadb-server and keep root's unix_socket authentication; database operations fail until then"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_socket_nobody_listens_on_is_a_note_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let provider = Provider::new(provider::ProviderConfig {
            platform: provider::Platform::Debian,
            root: dir.path().to_owned(),
            executor: Arc::new(provider::RealExecutor),
            machine: Arc::new(provider::RealMachine),
            audit_dir: dir.path().join("audit"),
        })
        .with_mariadb_socket(dir.path().join("no-server.sock"));
        let note = root_over_socket(&provider).expect("no server listens there");
        assert!(
            note.contains("cannot connect as root over its unix socket"),
            "{note}"
        );
    }
}
