//! The mail stack's derived files, shared by the mail families (`mail_domain`, `mailbox`,
//! `mail_forwarder`, `autoresponder`, `dkim_key`, `spam_filter`).
//!
//! Postfix receives for virtual mailbox domains and delivers over LMTP to Dovecot, which
//! authenticates mailboxes from a passwd-file (SHA512-CRYPT hashes), applies each mailbox's
//! quota (quota plugin, Maildir++), runs its Sieve script (the autoresponder) and stores mail
//! under `<vmail>/<domain>/<local part>/Maildir`. OpenDKIM signs with the keys in its
//! KeyTable/SigningTable. The layout and the settings the services need are in the provider
//! (`crates/provider/src/mail.rs`).
//!
//! Every shared file is derived whole from state.db, never edited line by line: a job loads
//! the rows of all mail families, applies its own pending change ([`Change`]), renders every
//! file of the services it touches and installs them with [`Ctx::write_service_configs`]
//! (written, tested with `postfix check` / `doveconf -n`, reverted on failure, reloaded once
//! per batch). Every value in them comes from a validated type (no `:`, whitespace, `,` or
//! control character can reach a line), so a value can never add a line or a field.
//!
//! Rows are committed to state.db with their batch, so a job that derives files after
//! another job of the same batch also applies that job's change (`Ctx::mail_pending`, kept
//! until `Ctx::finish_batch`); otherwise it would write the files without it.
//!
//! Postfix tables are `texthash:` (no `postmap` build step; see the provider's module docs).
//! The spam filter is Postfix's own: per-domain restriction classes of DNS blocklist checks
//! (`spam_filter`), not a content scorer.

pub use declarations::mail::{
    AUTORESPONDER, DKIM_KEY, MAIL_DOMAIN, MAIL_FORWARDER, MAILBOX, SPAM_FILTER,
};

use std::collections::BTreeMap;
use std::path::PathBuf;

use provider::{PostfixMap, Provider, SPAM_CLASS_STANDARD, SPAM_CLASS_STRICT};
use registry::types::Hex32;
use registry::{OpError, Owner};
use serde_json::Value;
use store::{StateDb, StoreError};

use crate::account::store_error;
use crate::context::{ConfigFile, Ctx, SecretGroup, Service, provider_error};

const FAMILIES: &[&str] = &[
    MAIL_DOMAIN,
    MAILBOX,
    MAIL_FORWARDER,
    AUTORESPONDER,
    DKIM_KEY,
    SPAM_FILTER,
];

/// The group that may read Dovecot's passwd-file (it holds password hashes).
pub const DOVECOT_GROUP: &str = "dovecot";

/// What the running job changes, applied over state.db's rows before rendering.
pub enum Change<'a> {
    None,
    Upsert {
        family: &'static str,
        id: &'a Hex32,
        account: &'a Hex32,
        data: Value,
    },
    Delete {
        family: &'static str,
        id: &'a Hex32,
    },
    /// Every row of `family` owned by `account` (a purge).
    DropAccount {
        family: &'static str,
        account: &'a Hex32,
    },
}

/// A row changed by an earlier job of the batch: `Some(data)` upserted, `None` deleted.
#[derive(Clone, Debug)]
pub struct Pending {
    family: &'static str,
    id: Hex32,
    owner: String,
    data: Option<Value>,
}

/// One mail row: family, resource id, owning account, data.
#[derive(Clone, Debug)]
pub struct Row {
    pub family: String,
    pub id: Hex32,
    pub owner: String,
    pub data: Value,
}

impl Row {
    pub fn str(&self, key: &str) -> &str {
        self.data[key].as_str().unwrap_or_default()
    }
}

/// The mail rows of the node, with one pending change applied.
pub struct MailState {
    rows: Vec<Row>,
}

impl MailState {
    /// state.db's rows, the batch's pending rows over them, then `change`: what a job
    /// derives files from.
    pub fn load_in(ctx: &Ctx, change: &Change<'_>) -> Result<MailState, StoreError> {
        let mut state = MailState::load(&ctx.state, &Change::None)?;
        for pending in &ctx.mail_pending {
            state
                .rows
                .retain(|r| !(r.family == pending.family && r.id == pending.id));
            if let Some(data) = &pending.data {
                state.rows.push(Row {
                    family: pending.family.to_owned(),
                    id: pending.id.clone(),
                    owner: pending.owner.clone(),
                    data: data.clone(),
                });
            }
        }
        state.apply(change);
        Ok(state)
    }

    /// state.db's rows with `change` applied.
    pub fn load(state: &StateDb, change: &Change<'_>) -> Result<MailState, StoreError> {
        let mut rows = Vec::new();
        for family in FAMILIES {
            for row in state.resources_of_family(family)? {
                rows.push(Row {
                    family: row.family,
                    id: row.resource_id,
                    owner: row.owner.as_str().to_owned(),
                    data: row.data,
                });
            }
        }
        let mut state = MailState { rows };
        state.apply(change);
        Ok(state)
    }

    fn apply(&mut self, change: &Change<'_>) {
        let rows = &mut self.rows;
        match change {
            Change::None => {}
            Change::Upsert {
                family,
                id,
                account,
                data,
            } => {
                rows.retain(|r| !(r.family == *family && r.id == **id));
                rows.push(Row {
                    family: (*family).to_owned(),
                    id: (*id).clone(),
                    owner: account.as_str().to_owned(),
                    data: data.clone(),
                });
            }
            Change::Delete { family, id } => {
                rows.retain(|r| !(r.family == *family && r.id == **id));
            }
            Change::DropAccount { family, account } => {
                rows.retain(|r| !(r.family == *family && r.owner == account.as_str()));
            }
        }
        rows.sort_by(|a, b| (&a.family, &a.id).cmp(&(&b.family, &b.id)));
    }

    /// A state from rows already loaded (tests, tools).
    pub fn from_rows(mut rows: Vec<Row>) -> MailState {
        rows.sort_by(|a, b| (&a.family, &a.id).cmp(&(&b.family, &b.id)));
        MailState { rows }
    }

    pub fn of<'s>(&'s self, family: &'s str) -> impl Iterator<Item = &'s Row> + 's {
        self.rows.iter().filter(move |r| r.family == family)
    }

    /// The mail domains by name.
    pub fn domains(&self) -> BTreeMap<&str, &Row> {
        self.of(MAIL_DOMAIN).map(|r| (r.str("domain"), r)).collect()
    }

    /// Whether `domain` is a mail domain of the account owning `row`: rows of other
    /// families count only under their own account's domain, so a stale row can never act
    /// on a domain another account added later.
    fn owns(&self, row: &Row, domain: &str) -> bool {
        self.of(MAIL_DOMAIN)
            .any(|d| d.str("domain") == domain && d.owner == row.owner)
    }

    /// The mailboxes by address, those of their account's existing domains only.
    pub fn mailboxes(&self) -> BTreeMap<String, &Row> {
        self.of(MAILBOX)
            .filter(|r| self.owns(r, r.str("domain")))
            .map(|r| (format!("{}@{}", r.str("local_part"), r.str("domain")), r))
            .collect()
    }

    /// The Postfix tables, whole.
    pub fn postfix_files(&self, provider: &Provider) -> Vec<ConfigFile> {
        let domains = self.domains();
        let mailboxes = self.mailboxes();
        let mut tables: BTreeMap<PostfixMap, Vec<String>> = BTreeMap::new();
        for (domain, row) in &domains {
            tables
                .entry(PostfixMap::Domains)
                .or_default()
                .push(format!("{domain} OK"));
            if !row.data["sending_open"].as_bool().unwrap_or(false) {
                tables
                    .entry(PostfixMap::SenderGate)
                    .or_default()
                    .push(format!(
                        "{domain} REJECT 5.7.1 Sending from this domain is not enabled yet"
                    ));
            }
            if let Some(local) = row.data["catch_all"].as_str() {
                let target = format!("{local}@{domain}");
                if mailboxes.contains_key(&target) {
                    tables
                        .entry(PostfixMap::Aliases)
                        .or_default()
                        .push(format!("@{domain} {target}"));
                }
            }
        }
        for (address, row) in &mailboxes {
            tables
                .entry(PostfixMap::Mailboxes)
                .or_default()
                .push(format!(
                    "{address} {}/{}/Maildir/",
                    row.str("domain"),
                    row.str("local_part")
                ));
            // Each mailbox to itself, so a catch-all does not take its mail.
            tables
                .entry(PostfixMap::Aliases)
                .or_default()
                .push(format!("{address} {address}"));
        }
        for row in self.of(MAIL_FORWARDER) {
            let address = row.str("address");
            let domain = address.rsplit_once('@').map_or("", |(_, d)| d);
            if !self.owns(row, domain) {
                continue;
            }
            let destinations: Vec<&str> = row.data["destinations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            tables
                .entry(PostfixMap::Aliases)
                .or_default()
                .push(format!("{address} {}", destinations.join(",")));
        }
        for row in self.of(SPAM_FILTER) {
            let domain = row.str("domain");
            let class = match row.str("level") {
                "standard" => SPAM_CLASS_STANDARD,
                "strict" => SPAM_CLASS_STRICT,
                _ => continue,
            };
            if self.owns(row, domain) {
                tables
                    .entry(PostfixMap::Spam)
                    .or_default()
                    .push(format!("{domain} {class}"));
            }
        }
        PostfixMap::ALL
            .iter()
            .map(|map| {
                let mut text = format!(
                    "# Derived whole from state.db by layerone node ({}); changes here are replaced.\n",
                    map.file_name()
                );
                for line in tables.get(map).into_iter().flatten() {
                    text.push_str(line);
                    text.push('\n');
                }
                ConfigFile {
                    path: provider.postfix_map_path(*map),
                    content: text.into_bytes(),
                    secret_group: None,
                }
            })
            .collect()
    }

    /// Dovecot's passwd-file, whole: `address:{SHA512-CRYPT}hash::::home::extra fields`. A
    /// suspended mailbox's line ends with the passdb field `allow_nets=0.0.0.0/32` (no client
    /// comes from there, and a login with no address fails too): every login fails, its
    /// userdb entry (what delivery looks up) is the same.
    pub fn dovecot_files(&self, provider: &Provider) -> Vec<ConfigFile> {
        let vmail = provider.sysconf(provider.mail_layout().vmail_dir);
        let sieve = provider.sieve_dir();
        let mut text = String::new();
        for (address, row) in self.mailboxes() {
            text.push_str(&format!(
                "{address}:{{SHA512-CRYPT}}{hash}::::{home}::userdb_quota_rule=*:storage={quota}M userdb_sieve=file:{script}{nologin}\n",
                hash = row.str("password"),
                home = vmail
                    .join(row.str("domain"))
                    .join(row.str("local_part"))
                    .display(),
                quota = row.data["quota_mib"].as_u64().unwrap_or(0),
                script = sieve.join(format!("{}.sieve", row.id)).display(),
                nologin = if row.data["suspended"] == true {
                    " allow_nets=0.0.0.0/32"
                } else {
                    ""
                },
            ));
        }
        vec![ConfigFile {
            path: provider.dovecot_passwd_path(),
            content: text.into_bytes(),
            secret_group: Some(SecretGroup::Named(DOVECOT_GROUP)),
        }]
    }

    /// OpenDKIM's KeyTable and SigningTable (`refile:`), whole.
    pub fn dkim_files(&self, provider: &Provider) -> Vec<(PathBuf, Vec<u8>)> {
        let dir = provider.sysconf(provider.mail_layout().dkim_dir);
        let mut keys = String::from("# Derived whole from state.db by layerone node.\n");
        let mut signing = keys.clone();
        for row in self.of(DKIM_KEY) {
            let (domain, selector) = (row.str("domain"), row.str("selector"));
            if !self.owns(row, domain) {
                continue;
            }
            let name = format!("{selector}._domainkey.{domain}");
            let key = dkim_key_dir(provider, &row.id).join(format!("{selector}.private"));
            keys.push_str(&format!("{name} {domain}:{selector}:{}\n", key.display()));
            signing.push_str(&format!("*@{domain} {name}\n"));
        }
        vec![
            (dir.join("KeyTable"), keys.into_bytes()),
            (dir.join("SigningTable"), signing.into_bytes()),
        ]
    }

    /// Every derived file with the content state.db implies (for convergence checks).
    pub fn expected_files(&self, provider: &Provider) -> Vec<(PathBuf, Vec<u8>)> {
        self.postfix_files(provider)
            .into_iter()
            .chain(self.dovecot_files(provider))
            .map(|f| (f.path, f.content))
            .chain(self.dkim_files(provider))
            .collect()
    }
}

/// The directory of one DKIM key (mapped).
pub fn dkim_key_dir(provider: &Provider, id: &Hex32) -> PathBuf {
    provider
        .sysconf(provider.mail_layout().dkim_dir)
        .join("keys")
        .join(id.as_str())
}

/// A mailbox's Sieve script (mapped).
pub fn sieve_script(provider: &Provider, mailbox: &Hex32) -> PathBuf {
    provider.sieve_dir().join(format!("{mailbox}.sieve"))
}

/// A mailbox's home (mapped): `<vmail>/<domain>/<local part>`.
pub fn mailbox_home(provider: &Provider, domain: &str, local: &str) -> PathBuf {
    provider
        .sysconf(provider.mail_layout().vmail_dir)
        .join(domain)
        .join(local)
}

/// Which derived files a job rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Postfix,
    Dovecot,
    Dkim,
}

/// Renders the files of `targets` from state.db plus `change` and installs them. If one
/// target fails its test, the targets already written are put back to what state.db alone
/// implies, so a failed job leaves no service configured for it.
pub fn sync(ctx: &mut Ctx, change: Change<'_>, targets: &[Target]) -> Result<(), OpError> {
    let mail = MailState::load_in(ctx, &change).map_err(store_error)?;
    for (done, target) in targets.iter().enumerate() {
        if let Err(e) = install(ctx, &mail, *target) {
            if done > 0 {
                let unchanged = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
                for earlier in &targets[..done] {
                    if let Err(again) = install(ctx, &unchanged, *earlier) {
                        tracing::error!(error = %again.message, "could not put a mail target back");
                    }
                }
            }
            return Err(e);
        }
    }
    let pending = match change {
        Change::Upsert {
            family,
            id,
            account,
            data,
        } => Some(Pending {
            family,
            id: id.clone(),
            owner: account.as_str().to_owned(),
            data: Some(data),
        }),
        Change::Delete { family, id } => Some(Pending {
            family,
            id: id.clone(),
            owner: String::new(),
            data: None,
        }),
        // A purge forgets its rows in state.db at once.
        Change::None | Change::DropAccount { .. } => None,
    };
    ctx.mail_pending.extend(pending);
    crash::point("mail.after_config_write");
    Ok(())
}

fn install(ctx: &mut Ctx, mail: &MailState, target: Target) -> Result<(), OpError> {
    let provider = ctx.provider.clone();
    let layout = provider.mail_layout();
    match target {
        Target::Postfix => {
            provider
                .ensure_dir(&provider.sysconf(layout.postfix_maps_dir), 0o755)
                .map_err(provider_error)?;
            ctx.write_service_configs(Service::Postfix, &mail.postfix_files(&provider))
        }
        Target::Dovecot => {
            provider
                .ensure_dir(&provider.sysconf(layout.dovecot_dir), 0o755)
                .map_err(provider_error)?;
            ctx.write_service_configs(Service::Dovecot, &mail.dovecot_files(&provider))
        }
        Target::Dkim => {
            provider
                .ensure_dir(&provider.sysconf(layout.dkim_dir), 0o755)
                .map_err(provider_error)?;
            let files: Vec<ConfigFile> = mail
                .dkim_files(&provider)
                .into_iter()
                .map(|(path, content)| ConfigFile {
                    path,
                    content,
                    secret_group: None,
                })
                .collect();
            ctx.write_service_configs(Service::OpenDkim, &files)
        }
    }
}

/// The account's row of `family` with id `id`, or `not_found`.
pub fn own_row(
    ctx: &Ctx,
    family: &'static str,
    id: &Hex32,
    account: &Hex32,
    code: &'static str,
) -> Result<Row, OpError> {
    match ctx.state.resource(family, id).map_err(store_error)? {
        Some(row) if row.owner == Owner::Tenant(account.clone()) => Ok(Row {
            family: row.family,
            id: row.resource_id,
            owner: row.owner.as_str().to_owned(),
            data: row.data,
        }),
        _ => Err(OpError::permanent(
            code,
            format!("no {family} {id} of account {account} on this node"),
        )),
    }
}

/// The account's mail domain named `domain`, or `mail_domain_missing`.
pub fn own_domain(ctx: &Ctx, account: &Hex32, domain: &str) -> Result<Row, OpError> {
    let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
    match mail.domains().get(domain) {
        Some(row) if row.owner == account.as_str() => Ok((*row).clone()),
        _ => Err(OpError::permanent(
            "mail_domain_missing",
            format!("{domain} is not a mail domain of account {account}"),
        )),
    }
}

/// Refuses an address that is already a mailbox or another forwarder (`address_taken`).
pub fn check_address_free(ctx: &Ctx, address: &str, except: &Hex32) -> Result<(), OpError> {
    let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
    let taken = mail
        .mailboxes()
        .get(address)
        .is_some_and(|r| r.id != *except)
        || mail
            .of(MAIL_FORWARDER)
            .any(|r| r.id != *except && r.str("address") == address);
    if taken {
        return Err(OpError::permanent(
            "address_taken",
            format!("{address} is already a mailbox or a forwarder on this node"),
        ));
    }
    Ok(())
}

/// A purge of one mail family: the files derived without the account's rows, then the rows.
pub fn purge_family(
    ctx: &mut Ctx,
    family: &'static str,
    account: &Hex32,
    targets: &[Target],
) -> Result<Vec<Row>, OpError> {
    let rows: Vec<Row> = MailState::load_in(ctx, &Change::None)
        .map_err(store_error)?
        .of(family)
        .filter(|r| r.owner == account.as_str())
        .cloned()
        .collect();
    if rows.is_empty() {
        return Ok(rows);
    }
    sync(ctx, Change::DropAccount { family, account }, targets)?;
    Ok(rows)
}

/// Forgets the account's rows of `family` (after [`purge_family`] and any cleanup).
pub fn forget_family(ctx: &mut Ctx, family: &'static str, account: &Hex32) -> Result<(), OpError> {
    ctx.state
        .forget_resources_of(account, family)
        .map_err(store_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(family: &str, n: u8, data: Value) -> Row {
        Row {
            family: family.to_owned(),
            id: format!("{n:032x}").parse().unwrap(),
            owner: format!("{:032x}", 10).to_owned(),
            data,
        }
    }

    fn text(files: &[ConfigFile], name: &str) -> String {
        let file = files
            .iter()
            .find(|f| f.path.file_name().unwrap() == name)
            .unwrap();
        String::from_utf8(file.content.clone()).unwrap()
    }

    #[test]
    fn a_suspended_mailbox_keeps_its_line_and_delivery_but_no_login() {
        let dir = tempfile::tempdir().unwrap();
        let provider = testkit::sim_provider(provider::Platform::Debian, dir.path(), vec![]);
        let hash = format!("$6$salt${}", "a".repeat(86));
        let mailbox = |n: u8, local: &str, suspended: bool| {
            let mut data = json!({"domain": "a.example", "local_part": local, "password": hash, "quota_mib": 0});
            if suspended {
                data["suspended"] = json!(true);
            }
            row(MAILBOX, n, data)
        };
        let mail = MailState::from_rows(vec![
            row(MAIL_DOMAIN, 1, json!({"domain": "a.example"})),
            mailbox(2, "info", true),
            mailbox(3, "sales", false),
        ]);
        let passwd = text(&mail.dovecot_files(&provider), "passwd");
        let lines: Vec<&str> = passwd.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("info@a.example:") && lines[0].ends_with(" allow_nets=0.0.0.0/32")
        );
        assert!(lines[1].starts_with("sales@a.example:") && !lines[1].contains("allow_nets"));
        // Postfix still accepts mail for it.
        let mailboxes = text(&mail.postfix_files(&provider), "mailboxes");
        assert!(mailboxes.contains("info@a.example a.example/info/Maildir/"));
    }

    #[test]
    fn tables_are_derived_whole_and_skip_what_has_no_domain() {
        let dir = tempfile::tempdir().unwrap();
        let provider = testkit::sim_provider(provider::Platform::Debian, dir.path(), vec![]);
        let hash = format!("$6$salt${}", "a".repeat(86));
        let mail = MailState::from_rows(vec![
            row(
                MAIL_DOMAIN,
                1,
                json!({"domain": "a.example", "sending_open": false, "catch_all": "info"}),
            ),
            row(
                MAIL_DOMAIN,
                2,
                json!({"domain": "b.example", "sending_open": true, "catch_all": "nobody"}),
            ),
            row(
                MAILBOX,
                3,
                json!({"domain": "a.example", "local_part": "info", "password": hash, "quota_mib": 50}),
            ),
            // Its domain is gone: no line anywhere.
            row(
                MAILBOX,
                4,
                json!({"domain": "gone.example", "local_part": "x", "password": hash, "quota_mib": 0}),
            ),
            row(
                MAIL_FORWARDER,
                5,
                json!({"address": "sales@b.example", "destinations": ["a@x.example", "b@y.example"]}),
            ),
            row(
                MAIL_FORWARDER,
                6,
                json!({"address": "old@gone.example", "destinations": ["a@x.example"]}),
            ),
            row(
                SPAM_FILTER,
                7,
                json!({"domain": "a.example", "level": "strict"}),
            ),
            row(
                SPAM_FILTER,
                8,
                json!({"domain": "b.example", "level": "off"}),
            ),
        ]);
        let files = mail.postfix_files(&provider);
        let body = |name: &str| -> Vec<String> {
            text(&files, name)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(body("domains"), ["a.example OK", "b.example OK"]);
        assert_eq!(
            body("mailboxes"),
            ["info@a.example a.example/info/Maildir/"]
        );
        // b.example's catch-all names no mailbox: left out.
        assert_eq!(
            body("aliases"),
            [
                "@a.example info@a.example",
                "info@a.example info@a.example",
                "sales@b.example a@x.example,b@y.example"
            ]
        );
        assert_eq!(
            body("sender_gate"),
            ["a.example REJECT 5.7.1 Sending from this domain is not enabled yet"]
        );
        assert_eq!(body("spam"), ["a.example layerone_spam_strict"]);
        let dovecot = mail.dovecot_files(&provider);
        assert_eq!(
            dovecot[0].secret_group,
            Some(SecretGroup::Named(DOVECOT_GROUP))
        );
        let passwd = text(&dovecot, "passwd");
        let vmail = provider.sysconf("/var/vmail");
        let sieve = provider.sieve_dir();
        assert_eq!(
            passwd,
            format!(
                "info@a.example:{{SHA512-CRYPT}}{hash}::::{}/a.example/info::userdb_quota_rule=*:storage=50M userdb_sieve=file:{}/{:032x}.sieve\n",
                vmail.display(),
                sieve.display(),
                3
            )
        );
    }
}
