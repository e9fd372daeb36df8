//! Backups end to end: the real runner, the real tenant worker (the suite runs as root, so it
//! drops to the tenant's uid for real), archives in `blobs/out` checked byte for byte, and
//! restores of hostile archives built here with the tar crate, each of which must fail only
//! its own job with nothing written outside the tenant's home. The database half runs
//! against a throw-away `mariadbd`.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::*;
use provider::testing::MariadbServer;
use provider::testing::mysql::prelude::Queryable;
use registry::JobState;
use serde_json::{Value, json};
use sha2::Digest as _;

fn job(node: &Node, req: u64) -> registry::JobView {
    node.state().job(&id(req)).unwrap().expect("the job exists")
}

fn succeeded(node: &Node, req: u64) -> Value {
    let job = job(node, req);
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    serde_json::to_value(job.result).unwrap()
}

fn failed_with(node: &Node, req: u64) -> String {
    let job = job(node, req);
    assert_eq!(job.state, JobState::Failed, "request {req}: {job:?}");
    job.error.unwrap().code.to_string()
}

fn uid_of(node: &Node, user: &str) -> u32 {
    node.provider.lookup_user(user).unwrap().unwrap().uid
}

/// Every entry beneath `dir` (not following symlinks): kind, content or target, mode, owner.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let owner = format!("{}:{:o}", meta.uid(), meta.mode() & 0o7777);
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("link {} {}", target.display(), meta.uid()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {owner}"));
                walk(root, &path, out);
            } else if meta.is_file() {
                let content = std::fs::read(&path).unwrap();
                out.insert(rel, format!("file {owner} {}", hex::encode(content)));
            } else {
                out.insert(rel, format!("other {owner}"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Gives everything beneath `dir` to `uid`, as if the tenant had made it.
fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            chown_tree(&path, uid);
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid)).unwrap();
        }
    }
}

fn blob_bytes(node: &Node, blob: &str) -> Vec<u8> {
    std::fs::read(node.layout.blobs_out().join(blob)).unwrap()
}

/// The names in a gzip-compressed tar.
fn listing(bytes: &[u8]) -> Vec<String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    archive
        .entries()
        .unwrap()
        .map(|e| String::from_utf8_lossy(&e.unwrap().path_bytes()).into_owned())
        .collect()
}

/// A tar header with exactly these bytes as its name and link (no checks by the tar crate,
/// which would refuse the hostile ones).
fn raw_header(kind: tar::EntryType, name: &[u8], size: u64, link: Option<&[u8]>) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_mtime(1_700_000_000);
    header.set_size(size);
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    if let Some(link) = link {
        header.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    }
    header.set_cksum();
    header
}

fn manifest(account: u64, databases: &[&str]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "format": 1, "account": id(account), "username": "shop1", "created_at_ms": 0,
        "files": 0, "dirs": 0, "symlinks": 0, "bytes": 0, "databases": databases,
    }))
    .unwrap()
}

/// A gzip-compressed tar of `entries` (header, content), then a manifest.
fn archive(entries: Vec<(tar::Header, Vec<u8>)>, account: u64, databases: &[&str]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for (header, content) in entries {
        builder.append(&header, &content[..]).unwrap();
    }
    let manifest = manifest(account, databases);
    let header = raw_header(
        tar::EntryType::Regular,
        b"manifest.json",
        manifest.len() as u64,
        None,
    );
    builder.append(&header, &manifest[..]).unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

fn file(name: &str, content: &[u8]) -> (tar::Header, Vec<u8>) {
    (
        raw_header(
            tar::EntryType::Regular,
            name.as_bytes(),
            content.len() as u64,
            None,
        ),
        content.to_vec(),
    )
}

fn entry(kind: tar::EntryType, name: &[u8], link: Option<&[u8]>) -> (tar::Header, Vec<u8>) {
    (raw_header(kind, name, 0, link), Vec::new())
}

/// Two tenants, shop1 (account 10) with a few files in its home, shop2 (account 11).
fn two_tenants() -> (Node, PathBuf, PathBuf) {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    let home1 = node.path("/home/shop1");
    let home2 = node.path("/home/shop2");
    std::fs::create_dir_all(home1.join("web/sub")).unwrap();
    std::fs::create_dir_all(home1.join("empty")).unwrap();
    std::fs::write(home1.join("web/index.html"), b"<h1>shop1</h1>\n").unwrap();
    std::fs::write(home1.join("web/sub/data.bin"), [0u8, 1, 2, 255, b'\n', 0]).unwrap();
    std::fs::write(home1.join("secret.txt"), b"tenant's own secret\n").unwrap();
    std::fs::set_permissions(
        home1.join("secret.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::os::unix::fs::symlink("index.html", home1.join("web/home.html")).unwrap();
    // A symlink to /etc is recorded as a symlink, never followed into /etc.
    std::os::unix::fs::symlink("/etc", home1.join("etc-link")).unwrap();
    std::fs::write(home2.join("shop2.txt"), b"shop2's file\n").unwrap();
    chown_tree(&home1, uid_of(&node, "shop1"));
    chown_tree(&home2, uid_of(&node, "shop2"));
    (node, home1, home2)
}

#[test]
fn files_round_trip_through_a_backup_and_a_restore_done_as_the_tenant() {
    let (mut node, home, _) = two_tenants();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        home.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    chown_tree(&home, uid_of(&node, "shop1"));
    let before = tree(&home);

    node.submit(&create_backup(3, 20, 10));
    node.pass();
    let result = succeeded(&node, 3);
    let blob = result["blob"].as_str().unwrap().to_owned();
    let bytes = blob_bytes(&node, &blob);
    assert_eq!(hex::encode(sha2::Sha256::digest(&bytes)), blob);
    assert_eq!(result["size"], bytes.len() as u64);
    assert_eq!(result["files"], 3, "{result}");
    assert_eq!(result["symlinks"], 1, "{result}");
    assert_eq!(
        result["skipped"], 2,
        "the FIFO and the link to /etc are left out: {result}"
    );
    let names = listing(&bytes);
    for expected in [
        "home/web/index.html",
        "home/web/sub/data.bin",
        "home/web/home.html",
        "home/secret.txt",
        "home/empty/",
        "manifest.json",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert!(
        !names
            .iter()
            .any(|n| n.contains("passwd") || n.contains("pipe"))
    );
    let mode = std::fs::metadata(node.layout.blobs_out().join(&blob))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o777, 0o640);

    // The tenant changes and deletes things, then the backup is restored.
    std::fs::write(home.join("web/index.html"), b"defaced\n").unwrap();
    std::fs::remove_file(home.join("web/sub/data.bin")).unwrap();
    std::fs::remove_file(home.join("web/home.html")).unwrap();
    std::fs::remove_dir(home.join("empty")).unwrap();
    std::fs::write(home.join("new.txt"), b"made after the backup\n").unwrap();
    chown_tree(&home, uid_of(&node, "shop1"));
    // Downloaded and uploaded again through the API, as a control plane does.
    let api = start_api(&node);
    let blob_id: registry::BlobId = blob.parse().unwrap();
    let downloaded = api.client.get_blob(&blob_id).unwrap();
    assert_eq!(downloaded, bytes);
    let uploaded = api.client.put_blob(&downloaded).unwrap();
    assert_eq!(uploaded, blob_id);
    node.submit(&restore_backup(4, 30, 10, &blob));
    node.pass();
    let restored = succeeded(&node, 4);
    assert_eq!(restored["files"], 3, "{restored}");
    let mut after = tree(&home);
    // A restore overlays: what was made since stays.
    assert!(after.remove("new.txt").is_some());
    assert_eq!(after, before, "the home is not what was backed up");
    // Written by the tenant, not by root.
    let shop1 = uid_of(&node, "shop1");
    assert_eq!(
        std::fs::metadata(home.join("web/sub/data.bin"))
            .unwrap()
            .uid(),
        shop1
    );

    // The backup is a resource of the account until removed; its blob goes with it.
    node.check_converged();
    node.submit(&remove_backup(5, 20, 10));
    node.pass();
    assert_eq!(succeeded(&node, 5)["state"], "absent");
    assert!(!node.layout.blobs_out().join(&blob).exists());
    assert!(
        node.state()
            .resource("backup", &id(20).parse().unwrap())
            .unwrap()
            .is_none()
    );
    node.check_converged();
}

#[test]
fn hostile_archives_fail_only_their_own_job_and_write_nothing_outside_the_home() {
    let (mut node, home1, home2) = two_tenants();
    let etc_before: Vec<_> = std::fs::read_dir("/etc")
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let shadow_before = std::fs::metadata("/etc/shadow")
        .map(|m| (m.mode(), m.nlink()))
        .ok();
    let home2_before = tree(&home2);

    use tar::EntryType as T;
    let many: Vec<(tar::Header, Vec<u8>)> = (0..=tenant::archive::MAX_ENTRIES)
        .map(|i| file(&format!("home/f{i}"), b""))
        .collect();
    let mut sparse = raw_header(T::GNUSparse, b"home/sparse", 0, None);
    sparse.set_cksum();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "path traversal",
            archive(
                vec![file("home/../../../../etc/evil-traversal", b"x")],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "traversal inside the home part",
            archive(vec![file("home/web/../../shop2/evil", b"x")], 10, &[]),
            "tenant_archive_invalid",
        ),
        (
            "absolute path",
            archive(vec![file("/etc/evil-absolute", b"x")], 10, &[]),
            "backup_archive_invalid",
        ),
        (
            "symlink to /etc, then a file through it",
            archive(
                vec![
                    entry(T::Symlink, b"home/web/etcdir", Some(b"/etc")),
                    file("home/web/etcdir/evil-through-link", b"x"),
                ],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "relative symlink escaping the home",
            archive(
                vec![entry(T::Symlink, b"home/web/up", Some(b"../../shop2"))],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "hard link to /etc/shadow",
            archive(
                vec![entry(T::Link, b"home/shadow", Some(b"/etc/shadow"))],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "hard link inside the home",
            archive(
                vec![
                    file("home/a", b"x"),
                    entry(T::Link, b"home/b", Some(b"home/a")),
                ],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "device",
            archive(vec![entry(T::Char, b"home/dev-null", None)], 10, &[]),
            "tenant_archive_invalid",
        ),
        (
            "fifo",
            archive(vec![entry(T::Fifo, b"home/fifo", None)], 10, &[]),
            "tenant_archive_invalid",
        ),
        (
            "newline in a name",
            archive(vec![file("home/evil\nname", b"x")], 10, &[]),
            "tenant_archive_invalid",
        ),
        (
            "more entries than allowed",
            archive(many, 10, &[]),
            "tenant_archive_too_large",
        ),
        (
            "a huge declared size",
            archive(
                vec![(
                    raw_header(T::Regular, b"home/huge", 1 << 40, None),
                    Vec::new(),
                )],
                10,
                &[],
            ),
            "tenant_archive_too_large",
        ),
        (
            // The tar reader itself refuses this one, before the entry checks see it.
            "a sparse entry",
            archive(vec![(sparse, Vec::new())], 10, &[]),
            "backup_archive_invalid",
        ),
        (
            "a database of another account",
            archive(
                vec![file("databases/shop2_main.sql", b"")],
                10,
                &["shop2_main"],
            ),
            "backup_database_not_owned",
        ),
        (
            "not a gzip archive",
            b"plain text, not gzip".to_vec(),
            "backup_archive_invalid",
        ),
    ];
    let mut req = 100;
    let mut submitted = Vec::new();
    for (name, bytes, code) in &cases {
        let blob = node.put_blob(bytes);
        node.submit(&restore_backup(req, req, 10, &blob));
        submitted.push((req, *name, *code));
        req += 1;
    }
    // A blob whose content is not its name.
    let good = archive(vec![file("home/fine.txt", b"fine")], 10, &[]);
    let liar = "ab".repeat(32);
    std::fs::write(node.layout.blobs_in().join(&liar), &good).unwrap();
    node.submit(&restore_backup(req, req, 10, &liar));
    submitted.push((req, "content not matching its SHA-256", "blob_invalid"));
    req += 1;
    node.submit(&restore_backup(req, req, 10, &"cd".repeat(32)));
    submitted.push((req, "a blob never uploaded", "blob_missing"));
    req += 1;
    // The next operation, for another tenant, in the same pass.
    node.submit(&create_backup(req, 40, 11));
    let next = req;
    node.pass();
    for (req, name, code) in submitted {
        assert_eq!(failed_with(&node, req), code, "{name}");
    }
    assert_eq!(succeeded(&node, next)["files"], 1);
    // Nothing of any of them was written (root checked the whole archive first).
    assert!(!home1.join("fine.txt").exists());
    assert!(!home1.join("a").exists());
    assert!(!home1.join("f0").exists());

    // A restore target replaced by a symlink: to /etc, and to the other tenant's home.
    node.submit(&create_backup(200, 41, 10));
    node.pass();
    let blob = succeeded(&node, 200)["blob"].as_str().unwrap().to_owned();
    node.put_blob(&blob_bytes(&node, &blob));
    let web = home1.join("web");
    std::fs::remove_dir_all(&web).unwrap();
    for (req, target) in [(201, PathBuf::from("/etc")), (203, home2.clone())] {
        let _ = std::fs::remove_file(&web);
        std::os::unix::fs::symlink(&target, &web).unwrap();
        std::os::unix::fs::lchown(&web, Some(uid_of(&node, "shop1")), None).unwrap();
        node.submit(&restore_backup(req, req, 10, &blob));
        node.submit(&create_backup(req + 1, 42, 11));
        node.pass();
        assert_eq!(
            failed_with(&node, req),
            "tenant_path_unsafe",
            "{}",
            target.display()
        );
        succeeded(&node, req + 1);
        assert!(!target.join("index.html").exists(), "{}", target.display());
        assert!(!target.join("sub").exists(), "{}", target.display());
        assert_eq!(std::fs::read_link(&web).unwrap(), target);
    }

    let etc_after: Vec<_> = std::fs::read_dir("/etc")
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(etc_before, etc_after, "/etc changed");
    assert_eq!(
        std::fs::metadata("/etc/shadow")
            .map(|m| (m.mode(), m.nlink()))
            .ok(),
        shadow_before
    );
    assert_eq!(
        tree(&home2),
        home2_before,
        "the other tenant's home changed"
    );
    node.check_converged();
}

/// The rows of a table, every column as text (NULL as None), ordered by the first column.
fn rows(conn: &mut provider::testing::mysql::Conn, table: &str) -> Vec<Vec<Option<String>>> {
    let rows: Vec<provider::testing::mysql::Row> = conn
        .query(format!("SELECT * FROM {table} ORDER BY 1"))
        .unwrap();
    rows.into_iter()
        .map(|row| {
            row.unwrap()
                .into_iter()
                .map(|v| match v {
                    provider::testing::mysql::Value::NULL => None,
                    other => Some(other.as_sql(false)),
                })
                .collect()
        })
        .collect()
}

fn dump(statements: &[&str]) -> Vec<u8> {
    let mut out = b"-- a dump from elsewhere\n".to_vec();
    for s in statements {
        write!(out, "{}{}\n{s};\n", provider::DUMP_FRAME, s.len()).unwrap();
    }
    out
}

#[test]
fn a_database_round_trips_and_hostile_sql_has_no_effect_outside_it() {
    let server = MariadbServer::start();
    let mut root = server.root_conn();
    let mut node = Node::with_mariadb(server.socket());
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_db(2, 50, 10, "main"));
    node.submit(&ensure_account(3, 11, "shop2"));
    node.submit(&ensure_db(4, 51, 11, "main"));
    node.pass();
    succeeded(&node, 2);
    succeeded(&node, 4);
    root.query_drop(
        "CREATE TABLE shop1_main.items (id INT PRIMARY KEY, name VARCHAR(64), data BLOB, note TEXT NULL, price DECIMAL(8,2), at DATETIME)",
    )
    .unwrap();
    root.exec_drop(
        "INSERT INTO shop1_main.items VALUES (1, ?, ?, NULL, 9.99, '2024-02-29 12:00:00'), (2, ?, ?, ?, 0.5, NULL), (3, 'plain', '', '', 100, NULL)",
        (
            "it's \"quoted\" \\ back`tick`",
            vec![0u8, 1, 2, 0xff, b'\n', b'\''],
            "line\nbreak; DROP TABLE x; --",
            "ünïcödé ✓".as_bytes().to_vec(),
            "semi;colon\r\n",
        ),
    )
    .unwrap();
    root.query_drop("CREATE TABLE shop1_main.gone (x INT)")
        .unwrap();
    root.query_drop("INSERT INTO shop1_main.gone VALUES (7)")
        .unwrap();
    root.query_drop("CREATE TABLE shop2_main.t (x INT)")
        .unwrap();
    root.query_drop("INSERT INTO shop2_main.t VALUES (42)")
        .unwrap();
    let items = rows(&mut root, "shop1_main.items");
    assert_eq!(items.len(), 3);

    node.submit(&create_backup(5, 60, 10));
    node.pass();
    let backup = succeeded(&node, 5);
    assert_eq!(backup["databases"], json!(["shop1_main"]));
    let blob = backup["blob"].as_str().unwrap().to_owned();
    let bytes = blob_bytes(&node, &blob);
    assert!(listing(&bytes).contains(&"databases/shop1_main.sql".to_owned()));

    root.query_drop("UPDATE shop1_main.items SET name = 'changed' WHERE id = 1")
        .unwrap();
    root.query_drop("DELETE FROM shop1_main.items WHERE id = 2")
        .unwrap();
    root.query_drop("DROP TABLE shop1_main.gone").unwrap();
    node.put_blob(&bytes);
    node.submit(&restore_backup(6, 70, 10, &blob));
    node.pass();
    let restored = succeeded(&node, 6);
    assert_eq!(restored["databases"], json!(["shop1_main"]));
    assert_eq!(rows(&mut root, "shop1_main.items"), items);
    assert_eq!(
        rows(&mut root, "shop1_main.gone"),
        vec![vec![Some("'7'".to_owned())]]
    );

    // Hostile SQL: each statement runs as an account that may touch shop1_main only.
    let users = |root: &mut provider::testing::mysql::Conn| -> Vec<String> {
        root.query("SELECT CONCAT(User, '@', Host) FROM mysql.user ORDER BY 1")
            .unwrap()
    };
    let grants = |root: &mut provider::testing::mysql::Conn| -> Vec<String> {
        root.query("SELECT CONCAT(User, '@', Host, ' ', Db) FROM mysql.db ORDER BY 1")
            .unwrap()
    };
    let users_before = users(&mut root);
    let grants_before = grants(&mut root);
    let hostile = [
        "GRANT ALL PRIVILEGES ON *.* TO CURRENT_USER() WITH GRANT OPTION",
        "CREATE USER evil@'%' IDENTIFIED BY 'x'",
        "USE mysql",
        "DROP DATABASE shop2_main",
        "UPDATE shop2_main.t SET x = 0",
        "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', '%', 'shop1_main', 'Y')",
        "SET PASSWORD FOR root@localhost = PASSWORD('owned')",
        "SELECT LOAD_FILE('/etc/shadow') INTO OUTFILE '/tmp/layerone-shadow-copy'",
        "LOAD DATA LOCAL INFILE '/etc/shadow' INTO TABLE marker",
    ];
    let mut req = 300;
    for statement in hostile {
        let archive_bytes = archive(
            vec![file(
                "databases/shop1_main.sql",
                &dump(&["CREATE TABLE IF NOT EXISTS marker (x INT)", statement]),
            )],
            10,
            &["shop1_main"],
        );
        let blob = node.put_blob(&archive_bytes);
        node.submit(&restore_backup(req, req, 10, &blob));
        req += 1;
    }
    node.submit(&create_backup(req, 61, 11));
    node.pass();
    for (i, statement) in hostile.iter().enumerate() {
        let code = failed_with(&node, 300 + i as u64);
        assert!(code.starts_with("mariadb"), "{statement}: {code}");
    }
    succeeded(&node, req);
    assert_eq!(users(&mut root), users_before, "accounts changed");
    assert_eq!(grants(&mut root), grants_before, "grants changed");
    assert_eq!(
        rows(&mut root, "shop2_main.t"),
        vec![vec![Some("'42'".to_owned())]]
    );
    assert!(!Path::new("/tmp/layerone-shadow-copy").exists());
    let loot: u64 = root
        .query_first("SELECT COUNT(*) FROM shop1_main.marker")
        .unwrap()
        .unwrap();
    assert_eq!(loot, 0, "a file of the runner's reached the database");
    // The statement before each hostile one did run, inside the database.
    let marker: Option<String> = root
        .query_first("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop1_main' AND TABLE_NAME = 'marker'")
        .unwrap();
    assert_eq!(marker.as_deref(), Some("marker"));
    // No importer account is left behind.
    let importers: Vec<String> = root
        .query("SELECT User FROM mysql.user WHERE User LIKE '0restore\\_%'")
        .unwrap();
    assert!(importers.is_empty(), "{importers:?}");

    // A dump that is not made of frames is refused before any of it runs.
    let bad = archive(
        vec![file("databases/shop1_main.sql", b"DROP TABLE items;\n")],
        10,
        &["shop1_main"],
    );
    let blob = node.put_blob(&bad);
    node.submit(&restore_backup(400, 400, 10, &blob));
    node.pass();
    assert!(failed_with(&node, 400).starts_with("mariadb"));
    assert_eq!(rows(&mut root, "shop1_main.items"), items);

    // Purged with the account: the backups' blobs go too.
    let blobs: Vec<String> = node
        .state()
        .resources_of_family("backup")
        .unwrap()
        .iter()
        .map(|r| r.data["blob"].as_str().unwrap().to_owned())
        .collect();
    assert!(!blobs.is_empty());
    node.submit(&account_op(500, "remove_account", 10));
    node.submit(&account_op(501, "remove_account", 11));
    node.pass();
    succeeded(&node, 500);
    succeeded(&node, 501);
    for blob in blobs {
        assert!(!node.layout.blobs_out().join(blob).exists());
    }
    let leftover: Vec<_> = std::fs::read_dir(node.layout.blobs_out())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}
