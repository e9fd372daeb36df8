//! MariaDB through the provider: the same calls against a throw-away real server and against
//! the Sim model, which must agree; names that would widen a grant do not.

use std::collections::BTreeSet;

use provider::{
    Collation, DbAccount, DbHost, DbName, DbUser, Mariadb, NativeHash, Platform, Privilege,
    Provider, quote_db_pattern, quote_ident,
};
use testkit::mysql::prelude::Queryable;
use testkit::{MariadbServer, audit_records, sim_mariadb_contents, sim_provider};

fn hash_of(server: &MariadbServer, password: &str) -> NativeHash {
    let hash: Option<String> = server
        .root_conn()
        .exec_first("SELECT PASSWORD(?)", (password,))
        .unwrap();
    NativeHash::new(&hash.unwrap()).unwrap()
}

fn account(user: &str, host: &str) -> DbAccount {
    DbAccount {
        user: DbUser::new(user).unwrap(),
        host: DbHost::new(host).unwrap(),
    }
}

fn privs(list: &[Privilege]) -> BTreeSet<Privilege> {
    list.iter().copied().collect()
}

/// The calls every backend must answer the same way.
fn exercise(db: &mut Mariadb<'_>, hash: &NativeHash) {
    let name = DbName::new("shop_main").unwrap();
    assert_eq!(db.database(&name).unwrap(), None);
    db.ensure_database(&name, Collation::Utf8mb4UnicodeCi)
        .unwrap();
    db.ensure_database(&name, Collation::Utf8mb4Bin).unwrap();
    let info = db.database(&name).unwrap().unwrap();
    assert_eq!(
        (info.charset.as_str(), info.collation.as_str()),
        ("utf8mb4", "utf8mb4_bin")
    );
    assert_eq!(db.database_size(&name).unwrap(), 0);

    let app = account("shop_app", "localhost");
    // No grant to an account that does not exist.
    let err = db
        .set_grants(&app, &name, &privs(&[Privilege::Select]))
        .unwrap_err();
    assert_eq!(err.code(), "mariadb_failed", "{err}");
    db.ensure_account(&app, hash).unwrap();
    db.ensure_account(&app, hash).unwrap();
    assert_eq!(
        db.hosts_of(&app.user).unwrap(),
        vec![DbHost::new("localhost").unwrap()]
    );
    let rw = privs(&[
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::Create,
    ]);
    db.set_grants(&app, &name, &rw).unwrap();
    assert_eq!(db.grants(&app, &name).unwrap(), rw);
    let ro = privs(&[Privilege::Select, Privilege::ShowView]);
    db.set_grants(&app, &name, &ro).unwrap();
    assert_eq!(db.grants(&app, &name).unwrap(), ro);
    // A database named like the grant's pattern with `_` as any character is not covered.
    let lookalike = DbName::new("shopxmain").unwrap();
    assert!(db.grants(&app, &lookalike).unwrap().is_empty());

    db.set_grants(&app, &name, &BTreeSet::new()).unwrap();
    assert!(db.grants(&app, &name).unwrap().is_empty());
    db.set_grants(&app, &name, &rw).unwrap();
    db.drop_account(&app).unwrap();
    db.drop_account(&app).unwrap();
    assert!(db.hosts_of(&app.user).unwrap().is_empty());
    db.drop_database(&name).unwrap();
    db.drop_database(&name).unwrap();
    assert_eq!(db.database(&name).unwrap(), None);
}

#[test]
fn real_server_and_sim_agree_on_databases_accounts_and_grants() {
    let server = MariadbServer::start();
    let hash = hash_of(&server, "s3cret pass");
    let dir = tempfile::tempdir().unwrap();
    let real: Provider =
        sim_provider(Platform::Debian, dir.path(), vec![]).with_mariadb_socket(server.socket());
    let mut db = real.mariadb().unwrap();
    assert!(db.is_real());
    exercise(&mut db, &hash);
    // Every change is audited, reads are not, and the hash is never written down.
    let records = audit_records(&real).unwrap();
    assert!(
        records
            .iter()
            .all(|r| r.program == "mariadb" && r.backend == "real")
    );
    let first = &records[0];
    assert_eq!(
        (first.args.as_slice(), first.status),
        (
            &["create database", "shop_main", "utf8mb4_unicode_ci"].map(String::from)[..],
            Some(0)
        )
    );
    assert!(
        records
            .iter()
            .any(|r| r.args[0] == "set grants" && r.error.as_deref() == Some("mariadb_failed")),
        "the refused grant is audited with its error"
    );
    let log = std::fs::read_to_string(real.audit_dir().join(provider::AUDIT_FILE)).unwrap();
    assert!(
        !log.contains(hash.as_str()),
        "the hash reached the audit log"
    );
    assert!(log.contains("<redacted>"));

    let sim_dir = tempfile::tempdir().unwrap();
    let sim = sim_provider(Platform::Debian, sim_dir.path(), vec![]);
    let mut db = sim.mariadb().unwrap();
    assert!(!db.is_real());
    exercise(&mut db, &hash);
    assert_eq!(sim_mariadb_contents(&sim).unwrap(), Default::default());
}

#[test]
fn a_granted_user_can_write_only_its_database_and_the_grant_pattern_is_exact() {
    let server = MariadbServer::start();
    let hash = hash_of(&server, "pw-1");
    let dir = tempfile::tempdir().unwrap();
    let provider =
        sim_provider(Platform::Debian, dir.path(), vec![]).with_mariadb_socket(server.socket());
    let mut db = provider.mariadb().unwrap();
    let mine = DbName::new("ab_c").unwrap();
    let other = DbName::new("abxc").unwrap();
    for name in [&mine, &other] {
        db.ensure_database(name, Collation::Utf8mb4GeneralCi)
            .unwrap();
    }
    let app = account("ab_app", "localhost");
    db.ensure_account(&app, &hash).unwrap();
    db.set_grants(
        &app,
        &mine,
        &privs(&[Privilege::Select, Privilege::Insert, Privilege::Create]),
    )
    .unwrap();

    let mut conn = server.user_conn("ab_app", "pw-1", Some("ab_c")).unwrap();
    conn.query_drop("CREATE TABLE t (v INT)").unwrap();
    conn.query_drop("INSERT INTO t VALUES (1)").unwrap();
    // `ab_c` as a LIKE pattern would match `abxc`; the escaped grant does not.
    let refused = conn.query_drop("CREATE TABLE abxc.t (v INT)").unwrap_err();
    assert!(refused.to_string().contains("denied"), "{refused}");
    assert!(server.user_conn("ab_app", "wrong", None).is_err());

    // Writes go away with the privileges, reads stay.
    db.set_grants(&app, &mine, &privs(&[Privilege::Select]))
        .unwrap();
    let mut conn = server.user_conn("ab_app", "pw-1", Some("ab_c")).unwrap();
    let refused = conn.query_drop("INSERT INTO t VALUES (2)").unwrap_err();
    assert!(refused.to_string().contains("denied"), "{refused}");
    let n: Option<i64> = conn.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(1));

    // The size is information_schema's.
    let expected: Option<u64> = server
        .root_conn()
        .query_first(
            "SELECT CAST(SUM(DATA_LENGTH + INDEX_LENGTH) AS UNSIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ab_c'",
        )
        .unwrap();
    assert!(expected.unwrap() > 0);
    assert_eq!(Some(db.database_size(&mine).unwrap()), expected);

    // A changed hash is the new password.
    let hash2 = hash_of(&server, "pw-2");
    db.ensure_account(&app, &hash2).unwrap();
    assert!(server.user_conn("ab_app", "pw-1", None).is_err());
    assert!(server.user_conn("ab_app", "pw-2", None).is_ok());
}

#[test]
fn names_are_checked_again_and_quoted_by_one_function() {
    for bad in [
        "", "a`b", "a'b", "a\"b", "a\0b", "a\nb", "a\r\nb", "A", "a-b", "а", "a b", "a;b",
    ] {
        assert!(DbName::new(bad).is_err(), "{bad:?}");
        assert!(DbUser::new(bad).is_err(), "{bad:?}");
    }
    assert!(DbName::new(&"a".repeat(64)).is_ok());
    assert!(DbName::new(&"a".repeat(65)).is_err());
    assert!(DbUser::new(&"a".repeat(80)).is_ok());
    assert!(DbUser::new(&"a".repeat(81)).is_err());
    let refusal = |e| match e {
        provider::ProviderError::Mariadb { op, code, message } => (op, code, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        refusal(DbName::new("a-b").unwrap_err()),
        (
            "validate",
            None,
            r#"database name "a-b" is not [a-z0-9_]{1,64}"#.to_owned()
        )
    );
    assert_eq!(
        refusal(DbUser::new("").unwrap_err()),
        (
            "validate",
            None,
            r#"user name "" is not [a-z0-9_]{1,80}"#.to_owned()
        )
    );
    for bad in ["a'b", "a\\b", "", "a b", "a\nb", "x`"] {
        assert!(DbHost::new(bad).is_err(), "{bad:?}");
    }
    assert!(NativeHash::new("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19").is_ok());
    assert!(NativeHash::new("*2470c0c06dee42fd1618bb99005adca2ec9d1e19").is_err());
    assert!(NativeHash::new("secret").is_err());
    let name = DbName::new("ab_c").unwrap();
    assert_eq!(quote_ident(&name), "`ab_c`");
    assert_eq!(quote_db_pattern(&name), "`ab\\_c`");
}

#[test]
fn an_absent_server_is_a_typed_unavailable_error() {
    let dir = tempfile::tempdir().unwrap();
    let provider = sim_provider(Platform::Debian, dir.path(), vec![])
        .with_mariadb_socket(dir.path().join("no-server.sock"));
    let err = provider.mariadb().unwrap_err();
    assert_eq!(err.code(), "mariadb_unavailable", "{err}");
    assert_eq!(
        provider::default_socket(Platform::Debian),
        "/run/mysqld/mysqld.sock"
    );
}
