//! Backups end to end: the real runner, the real tenant worker (the suite runs as root, so it
//! drops to the tenant's uid for real), archives in `blobs/out` checked byte for byte, and
//! restores of hostile archives built here with the tar crate, each of which must fail only
//! its own job with nothing written outside the tenant's home. The database half runs
//! against a throw-away `mariadbd`.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::*;
use registry::JobState;
use serde_json::{Value, json};
use sha2::Digest as _;
use testkit::MariadbServer;
use testkit::mysql::prelude::Queryable;

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

/// A PAX extended header holding these records, for the entry after it.
fn pax(records: &[(&str, &str)]) -> (tar::Header, Vec<u8>) {
    let mut content = Vec::new();
    for (key, value) in records {
        let rest = key.len() + value.len() + 3;
        let mut len = rest + 1;
        while len != rest + len.to_string().len() {
            len = rest + len.to_string().len();
        }
        content.extend_from_slice(format!("{len} {key}={value}\n").as_bytes());
    }
    let header = raw_header(
        tar::EntryType::XHeader,
        b"PaxHeader",
        content.len() as u64,
        None,
    );
    (header, content)
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
            "a sparse map whose region overlaps the next",
            archive(
                vec![
                    pax(&[
                        ("GNU.sparse.size", "100"),
                        ("GNU.sparse.numblocks", "3"),
                        ("GNU.sparse.map", "0,10,5,10,100,0"),
                    ]),
                    file("home/overlap.img", &[b'x'; 20]),
                ],
                10,
                &[],
            ),
            "tenant_archive_invalid",
        ),
        (
            "a sparse file of 1 TiB",
            archive(
                vec![
                    pax(&[
                        ("GNU.sparse.size", "1099511627776"),
                        ("GNU.sparse.numblocks", "2"),
                        ("GNU.sparse.map", "0,1,1099511627776,0"),
                    ]),
                    file("home/huge.img", b"x"),
                ],
                10,
                &[],
            ),
            "tenant_archive_too_large",
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
    assert!(!home1.join("overlap.img").exists() && !home1.join("huge.img").exists());

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
fn rows(conn: &mut testkit::mysql::Conn, table: &str) -> Vec<Vec<Option<String>>> {
    let rows: Vec<testkit::mysql::Row> = conn
        .query(format!("SELECT * FROM {table} ORDER BY 1"))
        .unwrap();
    rows.into_iter()
        .map(|row| {
            row.unwrap()
                .into_iter()
                .map(|v| match v {
                    testkit::mysql::Value::NULL => None,
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
    let users = |root: &mut testkit::mysql::Conn| -> Vec<String> {
        root.query("SELECT CONCAT(User, '@', Host) FROM mysql.user ORDER BY 1")
            .unwrap()
    };
    let grants = |root: &mut testkit::mysql::Conn| -> Vec<String> {
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

/// Unmounts on drop, so a failing assertion leaves no mount behind.
struct Mount(PathBuf);

impl Mount {
    /// A tmpfs of `mib` MiB over `at`, with `at`'s owner and mode.
    fn tmpfs(at: &Path, mib: u64) -> Mount {
        let meta = std::fs::metadata(at).unwrap();
        let target = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
        let options = std::ffi::CString::new(format!("size={mib}m")).unwrap();
        // SAFETY: valid NUL-terminated strings for the duration of the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        assert_eq!(rc, 0, "mount tmpfs: {}", std::io::Error::last_os_error());
        std::os::unix::fs::chown(at, Some(meta.uid()), Some(meta.gid())).unwrap();
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(meta.mode() & 0o7777))
            .unwrap();
        Mount(at.to_owned())
    }

    /// Bytes in use on the mounted file system, unnamed temporary files included.
    fn used(&self) -> u64 {
        let st = rustix::fs::statvfs(&self.0).unwrap();
        (st.f_blocks - st.f_bfree) * st.f_frsize
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.0.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

/// The most `mount` held while `during` ran, sampled (a figure to report, never asserted
/// on: the assertions rest on the file system's size).
fn peak_use(mount: &Mount, during: impl FnOnce()) -> u64 {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(mount.used());
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            peak.max(mount.used())
        });
        during();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        sampler.join().unwrap()
    })
}

/// Writes `data` at each offset of a file of `size` bytes that is otherwise holes.
fn sparse_file(path: &Path, size: u64, data: &[(u64, &[u8])]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::create(path).unwrap();
    file.set_len(size).unwrap();
    for (offset, bytes) in data {
        file.write_all_at(bytes, *offset).unwrap();
    }
}

/// Allocated bytes of a file (`st_blocks * 512`).
fn allocated(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// The bytes at `offset`, and whether everything else of the file reads as zeros.
fn read_at(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; len];
    std::fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut buf, offset)
        .unwrap();
    buf
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// Issue 12, point 6: a 2 GiB sparse file (no blocks) took 2,050 MiB of root's partition
/// during a backup and came back from a restore as 2 GiB of allocated zeros. Now the worker
/// stores data regions only, root compresses while it streams, and the restore writes holes
/// as holes. `blobs/out` is a 128 MiB file system here: anything spooling the apparent size
/// (or even a tenth of it) fails with ENOSPC.
#[test]
fn a_sparse_home_costs_root_what_it_holds_and_comes_back_with_its_holes() {
    let (mut node, home, _) = two_tenants();
    let tail = b"data at the very end of a sparse file".repeat(1000);
    sparse_file(&home.join("sparse.img"), 2 * GIB, &[]);
    sparse_file(
        &home.join("tail.img"),
        2 * GIB + tail.len() as u64,
        &[(2 * GIB, &tail)],
    );
    // A path too long for a tar header's name field, under which tar needs its extensions.
    let long = format!("{}/{}", "d".repeat(120), "l".repeat(120));
    std::fs::create_dir_all(home.join(&long).parent().unwrap()).unwrap();
    sparse_file(&home.join(&long), GIB, &[(GIB / 2, b"middle")]);
    std::fs::create_dir_all(home.join("many")).unwrap();
    for i in 0..200u64 {
        let mark = format!("file {i}");
        sparse_file(
            &home.join(format!("many/{i}.db")),
            64 * MIB,
            &[(i * 4096, mark.as_bytes())],
        );
    }
    chown_tree(&home, uid_of(&node, "shop1"));
    assert!(
        allocated(&home.join("sparse.img")) < MIB,
        "the file system keeps holes"
    );
    let mount = Mount::tmpfs(&node.layout.blobs_out(), 128);

    node.submit(&create_backup(3, 20, 10));
    let peak = peak_use(&mount, || node.pass());
    let result = succeeded(&node, 3);
    let blob = result["blob"].as_str().unwrap().to_owned();
    let size = result["size"].as_u64().unwrap();
    eprintln!(
        "2 GiB sparse home: peak spool on blobs/out {peak} bytes, blob {size} bytes, stored {} of {} apparent bytes",
        result["bytes"], result["apparent_bytes"]
    );
    assert_eq!(result["sparse_files"], 203, "{result}");
    assert_eq!(
        result["apparent_bytes"].as_u64().unwrap(),
        5 * GIB + tail.len() as u64 + 200 * 64 * MIB + 15 + 6 + 20,
        "{result}"
    );
    assert!(result["bytes"].as_u64().unwrap() < 2 * MIB, "{result}");
    assert!(size < MIB, "the archive is {size} bytes");
    assert_eq!(result["complete"], true);
    assert!(peak < 16 * MIB, "root spooled {peak} bytes");
    // Stored as GNU sparse 0.1 entries, which GNU tar restores as sparse files too.
    let bytes = blob_bytes(&node, &blob);
    let gnu = tempfile::tempdir().unwrap();
    std::fs::write(gnu.path().join("b.tar.gz"), &bytes).unwrap();
    #[allow(clippy::disallowed_methods)] // The reference implementation of the format.
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(gnu.path().join("b.tar.gz"))
        .arg("-C")
        .arg(gnu.path())
        .arg("home/tail.img")
        .arg(format!("home/{long}"))
        .status()
        .unwrap();
    assert!(status.success());
    let extracted = gnu.path().join("home/tail.img");
    assert_eq!(
        std::fs::metadata(&extracted).unwrap().len(),
        2 * GIB + tail.len() as u64
    );
    assert_eq!(read_at(&extracted, 2 * GIB, tail.len()), tail);
    assert!(allocated(&extracted) < MIB);
    let extracted = gnu.path().join("home").join(&long);
    assert_eq!(std::fs::metadata(&extracted).unwrap().len(), GIB);
    assert_eq!(read_at(&extracted, GIB / 2, 6), b"middle");

    // Restored: the same sizes, the same data where it was, holes everywhere else.
    node.put_blob(&bytes);
    std::fs::remove_file(home.join("sparse.img")).unwrap();
    std::fs::remove_file(home.join("tail.img")).unwrap();
    std::fs::remove_dir_all(home.join("many")).unwrap();
    std::fs::remove_dir_all(home.join("d".repeat(120))).unwrap();
    node.submit(&restore_backup(4, 30, 10, &blob));
    let peak = peak_use(&mount, || node.pass());
    let restored = succeeded(&node, 4);
    eprintln!("restore: peak spool on blobs/out {peak} bytes, {restored}");
    assert_eq!(restored["sparse_files"], 203, "{restored}");
    assert!(peak < 16 * MIB, "root spooled {peak} bytes");
    let shop1 = uid_of(&node, "shop1");
    for (name, size) in [
        ("sparse.img", 2 * GIB),
        ("tail.img", 2 * GIB + tail.len() as u64),
    ] {
        let meta = std::fs::metadata(home.join(name)).unwrap();
        assert_eq!((meta.len(), meta.uid()), (size, shop1), "{name}");
        assert!(
            allocated(&home.join(name)) < MIB,
            "{name} came back allocated"
        );
    }
    assert_eq!(read_at(&home.join("tail.img"), 2 * GIB, tail.len()), tail);
    assert_eq!(
        read_at(&home.join("tail.img"), 2 * GIB - 4096, 4096),
        [0; 4096]
    );
    assert_eq!(std::fs::metadata(home.join(&long)).unwrap().len(), GIB);
    assert_eq!(read_at(&home.join(&long), GIB / 2, 6), b"middle");
    assert!(allocated(&home.join(&long)) < MIB);
    for i in [0u64, 17, 199] {
        let path = home.join(format!("many/{i}.db"));
        let mark = format!("file {i}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 * MIB);
        assert_eq!(read_at(&path, i * 4096, mark.len()), mark.as_bytes());
        assert!(allocated(&path) <= 64 * 1024, "{}", allocated(&path));
    }
    let left: Vec<_> = std::fs::read_dir(node.layout.blobs_out())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, [blob], "only the archive is in blobs/out");
    assert!(
        mount.used() <= size.next_multiple_of(4096),
        "spools were left behind"
    );
}

/// Bytes no compressor can shrink (xorshift64*, seeded).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A backup is capped while it streams: by the free space of `blobs/out` less its reserve,
/// and by the account's recorded disk quota. Past either it fails `backup_too_large` at
/// once, with no partial file, no temporary file and the previous archive of the same
/// backup untouched; holes never count against either cap.
#[test]
fn a_backup_past_its_cap_fails_while_streaming_and_leaves_nothing_behind() {
    let (mut node, home, _) = two_tenants();
    // 96 MiB: the reserve (64 MiB) leaves a backup 32 MiB.
    let mount = Mount::tmpfs(&node.layout.blobs_out(), 96);
    node.submit(&create_backup(3, 20, 10));
    node.pass();
    let first = succeeded(&node, 3)["blob"].as_str().unwrap().to_owned();
    let base = mount.used();

    std::fs::write(home.join("noise.bin"), noise(48 * MIB as usize, 7)).unwrap();
    chown_tree(&home, uid_of(&node, "shop1"));
    node.submit(&create_backup(4, 20, 10));
    let peak = peak_use(&mount, || node.pass());
    let failed = job(&node, 4);
    let error = failed.error.clone().unwrap();
    eprintln!("past the free space: peak {peak} bytes, {error:?}");
    assert_eq!(error.code, "backup_too_large", "{failed:?}");
    assert!(error.message.contains("free space"), "{}", error.message);
    assert!(peak < 40 * MIB, "root spooled {peak} bytes");
    assert_eq!(
        names_in(&node.layout.blobs_out()),
        std::slice::from_ref(&first)
    );
    assert_eq!(mount.used(), base, "a temporary file was left");
    let row = node
        .state()
        .resource("backup", &id(20).parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        row.data["blob"],
        first.as_str(),
        "the previous archive is kept"
    );
    assert!(
        !node
            .layout
            .state_dir()
            .join("backup-pending")
            .join(id(20))
            .exists()
    );

    // The account's quota: 1 MiB recorded, 3 MiB in the home.
    node.submit(&json!({"request_id": id(5), "operation": "ensure_account",
        "resource": {"id": id(12), "username": "shop3", "shell": "bash", "disk_quota_mib": 1}}));
    node.pass();
    let home3 = node.path("/home/shop3");
    std::fs::write(home3.join("big.bin"), noise(3 * MIB as usize, 9)).unwrap();
    chown_tree(&home3, uid_of(&node, "shop3"));
    node.submit(&create_backup(6, 21, 12));
    node.pass();
    let error = job(&node, 6).error.unwrap();
    assert_eq!(error.code, "backup_too_large");
    assert!(
        error.message.contains("quota of 1 MiB"),
        "{}",
        error.message
    );
    assert_eq!(
        names_in(&node.layout.blobs_out()),
        std::slice::from_ref(&first)
    );
    assert_eq!(mount.used(), base, "a temporary file was left");
    // What it holds, not its apparent size, counts against the quota.
    std::fs::remove_file(home3.join("big.bin")).unwrap();
    sparse_file(&home3.join("disk.img"), 2 * GIB, &[(GIB, &noise(4096, 3))]);
    chown_tree(&home3, uid_of(&node, "shop3"));
    node.submit(&create_backup(7, 21, 12));
    node.pass();
    let result = succeeded(&node, 7);
    assert_eq!(
        (result["sparse_files"].as_u64(), result["bytes"].as_u64()),
        (Some(1), Some(4096))
    );
    node.check_converged();
}

/// Issue 12, point 7: `chmod 000` on a directory took `disk_bytes` from 52 MB to 40 KB while
/// the result said `complete: true`. Now usage and backups alike say what they could not
/// read: a directory of mode 000, one listable but not searchable (the state a chmod during
/// the walk leaves), a file of mode 000 (which hides nothing from usage, but is not in the
/// archive).
#[test]
fn what_the_tenant_made_unreadable_makes_usage_and_backups_say_they_are_incomplete() {
    let (mut node, home, _) = two_tenants();
    let site = home.join("site");
    std::fs::create_dir(&site).unwrap();
    for i in 0..4 {
        std::fs::write(site.join(format!("{i}.bin")), vec![1u8; 13_000_000]).unwrap();
    }
    chown_tree(&home, uid_of(&node, "shop1"));
    let mut req = 100;
    let mut observe = |node: &mut Node| {
        req += 2;
        node.submit(&account_op(req, "observe_account_usage", 10));
        node.submit(&create_backup(req + 1, 20, 10));
        node.pass();
        (succeeded(node, req), succeeded(node, req + 1))
    };
    let (usage, backup) = observe(&mut node);
    assert_eq!(
        (&usage["complete"], &backup["complete"]),
        (&json!(true), &json!(true))
    );
    let full = usage["disk_bytes"].as_u64().unwrap();
    assert!(full > 52_000_000, "{usage}");

    let chmod = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    chmod(&site, 0o000);
    let (usage, backup) = observe(&mut node);
    eprintln!("site at 000: {usage}\n{backup}");
    assert_eq!(usage["complete"], false, "{usage}");
    assert_eq!(usage["unreadable_dirs"], 1, "{usage}");
    assert!(usage["disk_bytes"].as_u64().unwrap() < 1_000_000, "{usage}");
    assert_eq!(
        (&backup["complete"], &backup["unreadable"]),
        (&json!(false), &json!(1))
    );

    chmod(&site, 0o600);
    let (usage, backup) = observe(&mut node);
    assert_eq!(usage["complete"], false, "{usage}");
    assert_eq!(usage["unreadable_entries"], 4, "{usage}");
    assert_eq!(
        (&backup["complete"], &backup["unreadable"]),
        (&json!(false), &json!(1))
    );

    chmod(&site, 0o755);
    chmod(&site.join("0.bin"), 0o000);
    let (usage, backup) = observe(&mut node);
    assert_eq!(usage["complete"], true, "{usage}");
    assert_eq!(
        usage["disk_bytes"], full,
        "a file of mode 000 is still measured"
    );
    assert_eq!(
        (&backup["complete"], &backup["unreadable"]),
        (&json!(false), &json!(1))
    );
    assert_eq!(backup["files"], 3 + 3, "{backup}");

    chmod(&site.join("0.bin"), 0o644);
    let (usage, backup) = observe(&mut node);
    assert_eq!(
        (&usage["complete"], &backup["complete"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(
        (&usage["unreadable_dirs"], &backup["unreadable"]),
        (&json!(0), &json!(0))
    );
}

/// A restore spools what it checked compressed, within the free space of `blobs/out` less
/// its reserve: 512 MiB of zeros in an uploaded archive cost root a few hundred KiB, and an
/// archive whose content would not fit fails `backup_too_large` before anything of it is
/// written to the home.
#[test]
fn a_restore_spools_compressed_and_within_its_cap() {
    let (mut node, home, _) = two_tenants();
    let mount = Mount::tmpfs(&node.layout.blobs_out(), 96);
    let zeros = archive(
        vec![file("home/zeros.bin", &vec![0u8; 512 * MIB as usize])],
        10,
        &[],
    );
    let blob = node.put_blob(&zeros);
    node.submit(&restore_backup(3, 30, 10, &blob));
    let peak = peak_use(&mount, || node.pass());
    eprintln!(
        "512 MiB of zeros: a {} byte blob, peak spool {peak} bytes",
        zeros.len()
    );
    succeeded(&node, 3);
    assert!(peak < 8 * MIB, "root spooled {peak} bytes");
    assert_eq!(
        std::fs::metadata(home.join("zeros.bin")).unwrap().len(),
        512 * MIB
    );

    let noisy = archive(
        vec![file("home/noise.bin", &noise(40 * MIB as usize, 5))],
        10,
        &[],
    );
    let blob = node.put_blob(&noisy);
    node.submit(&restore_backup(4, 31, 10, &blob));
    node.pass();
    let error = job(&node, 4).error.unwrap();
    assert_eq!(error.code, "backup_too_large", "{error:?}");
    assert!(
        !home.join("noise.bin").exists(),
        "nothing is restored from a refused archive"
    );
    assert!(names_in(&node.layout.blobs_out()).is_empty());
    assert_eq!(mount.used(), 0, "a temporary file was left");
}
