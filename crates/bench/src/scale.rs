//! Seeding a node with 10,000 accounts and 100,000 resources, fast.
//!
//! state.db is filled by a bulk insert in one transaction, with rows shaped exactly as the
//! node writes them: every request goes through the registry's own validation (so `body`,
//! `body_sha256`, `family`, `owner` and ids are what admission stores), each job is a
//! `succeeded` job with generation 1 and the result its handler returns, each resource row
//! holds the data its handler records, and the events feed gets its rows from state.db's own
//! triggers. The only difference is `inbox_seq`, left empty (no inbox held these requests).
//! The Sim sysroot gets what those handlers would have left: passwd, group, shadow and
//! gshadow lines, homes with `authorized_keys`, document roots and vhost files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use registry::types::{DomainAliases, DomainName, Hex32, SshPublicKey};
use rusqlite::params;
use serde_json::{Value, json};

use crate::node::{self, Node};

/// Tags of the seeded ids.
const ACCOUNT: u32 = 0x5ea0;
const REQUEST: u32 = 0x5ea1;
const KEY_ID: u32 = 0x5ea2;
const DOMAIN_ID: u32 = 0x5ea3;

#[derive(Clone, Copy, Debug)]
pub struct Mix {
    pub accounts: u64,
    pub keys_per_account: u64,
    pub domains_per_account: u64,
}

impl Mix {
    pub fn resources(&self) -> u64 {
        self.accounts * (1 + self.keys_per_account + self.domains_per_account)
    }
}

/// Request ids of a few seeded jobs, for lookups.
pub fn some_request_ids(mix: &Mix, n: u64) -> Vec<String> {
    let per = 1 + mix.keys_per_account + mix.domains_per_account;
    let step = (mix.accounts * per / n.max(1)).max(1);
    (0..n)
        .map(|i| node::id(REQUEST, (i * step) % (mix.accounts * per)))
        .collect()
}

struct Row {
    job: registry::ValidatedJob,
    result: Value,
    data: Value,
}

pub fn seed(node: &Node, mix: &Mix) -> anyhow::Result<()> {
    let registry = declarations::registry();
    let now = clock::Clock::now_ms(&clock::SystemClock);
    let key: SshPublicKey = node::KEY.parse().map_err(anyhow::Error::msg)?;
    let fingerprint = ops::ssh_key::fingerprint(&key);
    let vhosts = node
        .provider
        .sysconf(node.provider.apache_layout().vhosts_dir);
    let (mut passwd, mut group, mut shadow, mut gshadow) =
        (String::new(), String::new(), String::new(), String::new());
    let today = now / 86_400_000;

    let mut conn = store::sqlite::open_state_rw(&node.layout.state_db())?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut job_stmt = tx.prepare(
            "INSERT INTO jobs(request_id, operation, family, resource_id, owner, generation, body,
                              body_sha256, state, result, attempts, received_at, queued_at,
                              started_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, 'succeeded', ?8, 1, ?9, ?9, ?9, ?9)",
        )?;
        let mut gen_stmt = tx.prepare(
            "INSERT INTO generations(family, resource_id, generation) VALUES (?1, ?2, 1)",
        )?;
        let mut res_stmt = tx.prepare(
            "INSERT INTO resources(family, resource_id, owner, generation, data, updated_at)
             VALUES (?1, ?2, ?3, 1, ?4, ?5)",
        )?;
        let mut request = 0u64;
        for a in 0..mix.accounts {
            let account = node::id(ACCOUNT, a);
            let account_id: Hex32 = account.parse().map_err(anyhow::Error::msg)?;
            let username = format!("s{a}");
            let (uid, gid) = (1000 + a as u32, 1000 + a as u32);
            let home = format!("/home/{username}");
            let home_dir = node.provider.sysconf(&home);
            let mut rows = Vec::new();
            let mut next_request = || {
                request += 1;
                node::id(REQUEST, request - 1)
            };
            let account_data = json!({
                "username": username, "uid": uid, "gid": gid, "home": home,
                "shell": "/bin/bash", "suspended": false, "disk_quota_mib": 0, "inode_quota": 0,
            });
            let mut account_result = account_data.clone();
            account_result["state"] = json!("present");
            rows.push(Row {
                job: validate(
                    registry,
                    node,
                    &node::ensure_account(&next_request(), &account, &username),
                )?,
                result: account_result,
                data: account_data,
            });
            for k in 1..=mix.keys_per_account {
                rows.push(Row {
                    job: validate(
                        registry,
                        node,
                        &node::ensure_key(
                            &next_request(),
                            &node::id(KEY_ID, a * 100 + k),
                            &account,
                        ),
                    )?,
                    result: json!({"state": "present", "fingerprint": fingerprint, "keys_in_file": k}),
                    data: json!({"key": node::KEY, "fingerprint": fingerprint}),
                });
            }
            let mut keys_file =
                String::from("# Managed by layerone node: changes made here are replaced.\n");
            for _ in 0..mix.keys_per_account {
                keys_file.push_str(node::KEY);
                keys_file.push('\n');
            }
            std::fs::create_dir_all(home_dir.join(".ssh"))?;
            std::fs::write(home_dir.join(".ssh/authorized_keys"), keys_file)?;
            for d in 1..=mix.domains_per_account {
                let domain = format!("w{d}.{username}.example.com");
                let domain_id = node::id(DOMAIN_ID, a * 100 + d);
                let relative = PathBuf::from("web").join(&domain).join("public_html");
                let docroot = home_dir.join(&relative);
                std::fs::create_dir_all(&docroot)?;
                let alias = format!("www.{domain}");
                let aliases: DomainAliases = serde_json::from_value(json!([alias]))?;
                let name: DomainName = domain.parse().map_err(anyhow::Error::msg)?;
                let id: Hex32 = domain_id.parse().map_err(anyhow::Error::msg)?;
                std::fs::write(
                    vhosts.join(format!("{domain_id}.conf")),
                    ops::vhost::render_vhost(
                        &id,
                        &account_id,
                        &name,
                        &aliases,
                        &docroot,
                        &ops::web_isolation::WebTenant {
                            uid,
                            gid,
                            home: home_dir.clone(),
                        },
                        &Default::default(),
                    ),
                )?;
                rows.push(Row {
                    job: validate(
                        registry,
                        node,
                        &node::ensure_domain(&next_request(), &domain_id, &account, &domain),
                    )?,
                    result: json!({"state": "present", "domain": domain, "aliases": [alias],
                                   "document_root": docroot.display().to_string()}),
                    data: json!({"domain": domain, "aliases": [alias], "docroot": relative}),
                });
            }
            for row in rows {
                let job = &row.job;
                job_stmt.execute(params![
                    job.request_id.as_str(),
                    job.operation,
                    job.family,
                    job.resource_id.as_str(),
                    job.owner.as_str(),
                    job.canonical,
                    job.body_sha256,
                    row.result.to_string(),
                    now
                ])?;
                gen_stmt.execute(params![job.family, job.resource_id.as_str()])?;
                res_stmt.execute(params![
                    job.family,
                    job.resource_id.as_str(),
                    job.owner.as_str(),
                    row.data.to_string(),
                    now
                ])?;
            }
            let _ = writeln!(
                passwd,
                "{username}:x:{uid}:{gid}:{}:{home}:/bin/bash",
                ops::account::marker(&account_id)
            );
            let _ = writeln!(group, "{username}:x:{gid}:");
            let _ = writeln!(shadow, "{username}:!:{today}:0:99999:7:::");
            let _ = writeln!(gshadow, "{username}:!::");
        }
    }
    tx.commit()?;
    for (file, lines) in [
        ("/etc/passwd", passwd),
        ("/etc/group", group),
        ("/etc/shadow", shadow),
        ("/etc/gshadow", gshadow),
    ] {
        append(&node.provider.sysconf(file), &lines)?;
    }
    Ok(())
}

fn validate(
    registry: &registry::Registry,
    node: &Node,
    body: &Value,
) -> anyhow::Result<registry::ValidatedJob> {
    registry
        .validate(body.to_string().as_bytes(), &node.node_id)
        .map_err(|e| anyhow::anyhow!("a seeded request does not validate: {e}"))
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// Counts of what state.db holds, for the report.
pub fn counts(node: &Node) -> anyhow::Result<(i64, i64, i64)> {
    let conn = node.state_ro()?;
    let q = |sql: &str| -> anyhow::Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    Ok((
        q("SELECT count(*) FROM resources WHERE family = 'account'")?,
        q("SELECT count(*) FROM resources")?,
        q("SELECT count(*) FROM jobs")?,
    ))
}
