//! The mail stack's derived files, shared by the mail families (`mail_domain`, `mailbox`,
//! `mail_forwarder`, `autoresponder`, `dkim_key`, `spam_filter`): this module is their one
//! owner, and renders every one of them from the view.
//!
//! Postfix receives for virtual mailbox domains and delivers over LMTP to Dovecot, which
//! authenticates mailboxes from a passwd-file (SHA512-CRYPT hashes), applies each mailbox's
//! quota (quota plugin, Maildir++), runs its Sieve script (the autoresponder) and stores mail
//! under `<vmail>/<domain>/<local part>/Maildir`. OpenDKIM signs with the keys in its
//! KeyTable/SigningTable. The layout and the settings the services need are in the provider
//! (`crates/provider/src/mail.rs`).
//!
//! Every shared file is derived whole from state, never edited line by line: a family's
//! handler records its row ([`Ctx::set_row`], [`Ctx::forget_row`], or for a purge
//! [`Ctx::drop_rows_of`]) and calls [`sync`], which loads the rows of all mail families from
//! [`Ctx::view`] ([`MailState`]), renders every file of the services the job touches and
//! installs them with [`Ctx::write_service_configs`] (written, tested with `postfix check` /
//! `doveconf -n`, reverted on failure, reloaded once per batch). Every value in them comes
//! from a validated type (no `:`, whitespace, `,` or control character can reach a line), so
//! a value can never add a line or a field.
//!
//! The same tables, each line with the resource it comes from ([`MailTable`]), are what the
//! mail families declare they derive for the drift check ([`derived_tables`]).
//!
//! Rows are committed to state.db with their batch; the view holds the rows of the batch's
//! earlier jobs until then, so a job that derives files after another job of the same batch
//! includes that job's rows.
//!
//! Postfix tables are `texthash:` (no `postmap` build step; see the provider's module docs).
//! The spam filter is Postfix's own: per-domain restriction classes of DNS blocklist checks
//! (`spam_filter`), not a content scorer.

pub use declarations::mail::{
    AUTORESPONDER, DKIM_KEY, MAIL_DOMAIN, MAIL_FORWARDER, MAILBOX, SPAM_FILTER,
};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use provider::{PostfixMap, Provider, SPAM_CLASS_STANDARD, SPAM_CLASS_STRICT};
use registry::types::Hex32;
use registry::types::mail::SpamLevel;
use registry::{Aspects, Derived, DerivedTable, Of, OpError, Owner};
use state::{StateDb, Stored, View};
use store::{ResourceRow, StoreError, StoredRow};

use crate::account::{AccountRow, suspended_accounts};
use crate::autoresponder::AutoresponderRow;
use crate::context::{ConfigFile, Ctx, SecretGroup, Service, provider_error, store_error};
use crate::dkim_key::DkimKeyRow;
use crate::mail_domain::MailDomainRow;
use crate::mail_forwarder::MailForwarderRow;
use crate::mailbox::MailboxRow;
use crate::spam_filter::SpamFilterRow;

crash::points! {
    AFTER_CONFIG_WRITE = "mail.after_config_write",
}

/// The group that may read Dovecot's passwd-file (it holds password hashes).
pub const DOVECOT_GROUP: &str = "dovecot";

/// The rows of every mail family, each family's in id order: what the mail files are
/// derived from.
#[derive(Clone, Debug, Default)]
pub struct MailState {
    pub domains: Vec<Stored<MailDomainRow>>,
    pub mailboxes: Vec<Stored<MailboxRow>>,
    pub forwarders: Vec<Stored<MailForwarderRow>>,
    pub autoresponders: Vec<Stored<AutoresponderRow>>,
    pub dkim_keys: Vec<Stored<DkimKeyRow>>,
    pub spam_filters: Vec<Stored<SpamFilterRow>>,
    /// The accounts that are suspended: their mailboxes' logins fail as a suspended
    /// mailbox's do.
    pub suspended_accounts: BTreeSet<Hex32>,
}

impl MailState {
    /// The mail rows as `view` has them.
    pub fn from_view(view: &View<'_>) -> Result<MailState, StoreError> {
        Ok(MailState {
            domains: view.all()?,
            mailboxes: view.all()?,
            forwarders: view.all()?,
            autoresponders: view.all()?,
            dkim_keys: view.all()?,
            spam_filters: view.all()?,
            suspended_accounts: suspended_accounts(view)?,
        })
    }

    /// The mail rows as the running job sees them.
    pub fn of_job(ctx: &Ctx) -> Result<MailState, OpError> {
        MailState::from_view(&ctx.view()).map_err(store_error)
    }

    /// state.db's committed mail rows (for convergence checks and tools).
    pub fn load(state: &StateDb) -> Result<MailState, StoreError> {
        MailState::from_view(&View::committed(state))
    }

    /// A state from rows already read (tests, tools): the mail families' rows, and the
    /// accounts' for their suspension; rows of other families are ignored.
    pub fn from_rows(mut rows: Vec<ResourceRow>) -> Result<MailState, StoreError> {
        fn add<T: StoredRow>(
            into: &mut Vec<Stored<T>>,
            row: ResourceRow,
        ) -> Result<(), StoreError> {
            into.push(Stored::from_row(row)?);
            Ok(())
        }
        rows.sort_by(|a, b| a.resource_id.cmp(&b.resource_id));
        let mut state = MailState::default();
        for row in rows {
            match row.family.as_str() {
                MAIL_DOMAIN => add(&mut state.domains, row)?,
                MAILBOX => add(&mut state.mailboxes, row)?,
                MAIL_FORWARDER => add(&mut state.forwarders, row)?,
                AUTORESPONDER => add(&mut state.autoresponders, row)?,
                DKIM_KEY => add(&mut state.dkim_keys, row)?,
                SPAM_FILTER => add(&mut state.spam_filters, row)?,
                family if family == AccountRow::FAMILY => {
                    let account: Stored<AccountRow> = Stored::from_row(row)?;
                    if account.row.suspended {
                        state.suspended_accounts.insert(account.id);
                    }
                }
                _ => {}
            }
        }
        Ok(state)
    }

    /// The mail domains by name.
    pub fn domain_names(&self) -> BTreeMap<&str, &Stored<MailDomainRow>> {
        self.domains
            .iter()
            .map(|d| (d.row.domain.as_str(), d))
            .collect()
    }

    /// Whether `domain` is a mail domain of `owner`: rows of other families count only
    /// under their own account's domain, so a stale row can never act on a domain another
    /// account added later.
    fn owns(&self, owner: &Owner, domain: &str) -> bool {
        self.domains
            .iter()
            .any(|d| d.row.domain.as_str() == domain && &d.owner == owner)
    }

    /// Whether `mailbox`'s logins fail: it or its account is suspended.
    pub fn login_refused(&self, mailbox: &Stored<MailboxRow>) -> bool {
        mailbox.row.suspended
            || matches!(&mailbox.owner, Owner::Tenant(account) if self.suspended_accounts.contains(account))
    }

    /// The mailboxes by address, those of their account's existing domains only.
    pub fn mailbox_addresses(&self) -> BTreeMap<String, &Stored<MailboxRow>> {
        self.mailboxes
            .iter()
            .filter(|m| self.owns(&m.owner, m.row.domain.as_str()))
            .map(|m| (m.row.address(), m))
            .collect()
    }

    /// The Postfix tables, whole.
    pub fn postfix_files(&self, provider: &Provider) -> Vec<ConfigFile> {
        self.postfix_tables(provider)
            .into_iter()
            .map(|table| table.file(None))
            .collect()
    }

    /// The Postfix tables, each line with the resource it comes from.
    pub fn postfix_tables(&self, provider: &Provider) -> Vec<MailTable> {
        let domains = self.domain_names();
        let mailboxes = self.mailbox_addresses();
        let mut tables: BTreeMap<PostfixMap, Vec<(Source, String)>> = BTreeMap::new();
        let mut add = |map: PostfixMap, source: Source, line: String| {
            tables.entry(map).or_default().push((source, line));
        };
        for (domain, stored) in &domains {
            let source = Source::of(MAIL_DOMAIN, stored);
            add(PostfixMap::Domains, source.clone(), format!("{domain} OK"));
            if !stored.row.sending_open {
                add(
                    PostfixMap::SenderGate,
                    source.clone(),
                    format!("{domain} REJECT 5.7.1 Sending from this domain is not enabled yet"),
                );
            }
            if let Some(local) = &stored.row.catch_all {
                let target = format!("{local}@{domain}");
                if mailboxes.contains_key(&target) {
                    add(PostfixMap::Aliases, source, format!("@{domain} {target}"));
                }
            }
        }
        for (address, stored) in &mailboxes {
            let source = Source::of(MAILBOX, stored);
            add(
                PostfixMap::Mailboxes,
                source.clone(),
                format!(
                    "{address} {}/{}/Maildir/",
                    stored.row.domain, stored.row.local_part
                ),
            );
            // Each mailbox to itself, so a catch-all does not take its mail.
            add(PostfixMap::Aliases, source, format!("{address} {address}"));
        }
        for stored in &self.forwarders {
            let address = stored.row.address.as_str();
            if !self.owns(&stored.owner, stored.row.address.domain()) {
                continue;
            }
            let destinations: Vec<&str> =
                stored.row.destinations.iter().map(|d| d.as_str()).collect();
            add(
                PostfixMap::Aliases,
                Source::of(MAIL_FORWARDER, stored),
                format!("{address} {}", destinations.join(",")),
            );
        }
        for stored in &self.spam_filters {
            let domain = stored.row.domain.as_str();
            let class = match stored.row.level {
                SpamLevel::Standard => SPAM_CLASS_STANDARD,
                SpamLevel::Strict => SPAM_CLASS_STRICT,
                SpamLevel::Off => continue,
            };
            if self.owns(&stored.owner, domain) {
                add(
                    PostfixMap::Spam,
                    Source::of(SPAM_FILTER, stored),
                    format!("{domain} {class}"),
                );
            }
        }
        PostfixMap::ALL
            .iter()
            .map(|map| MailTable {
                kind: TableKind::Postfix(*map),
                path: provider.postfix_map_path(*map),
                header: format!(
                    "# Derived whole from state.db by layerone node ({}); changes here are replaced.\n",
                    map.file_name()
                ),
                lines: tables.remove(map).unwrap_or_default(),
            })
            .collect()
    }

    /// Dovecot's passwd-file, whole: `address:{SHA512-CRYPT}hash::::home::extra fields`. A
    /// suspended mailbox's line, or a suspended account's mailbox's, ends with the passdb field `allow_nets=0.0.0.0/32` (no client
    /// comes from there, and a login with no address fails too): every login fails, its
    /// userdb entry (what delivery looks up) is the same.
    pub fn dovecot_files(&self, provider: &Provider) -> Vec<ConfigFile> {
        vec![
            self.dovecot_table(provider)
                .file(Some(SecretGroup::Named(DOVECOT_GROUP))),
        ]
    }

    /// Dovecot's passwd-file ([`MailState::dovecot_files`]), each line with its mailbox.
    pub fn dovecot_table(&self, provider: &Provider) -> MailTable {
        let vmail = provider.sysconf(provider.mail_layout().vmail_dir);
        let sieve = provider.sieve_dir();
        let mut lines = Vec::new();
        for (address, stored) in self.mailbox_addresses() {
            let mailbox = &stored.row;
            lines.push((Source::of(MAILBOX, stored), format!(
                "{address}:{{SHA512-CRYPT}}{hash}::::{home}::userdb_quota_rule=*:storage={quota}M userdb_sieve=file:{script}{nologin}",
                hash = mailbox.password,
                home = vmail
                    .join(mailbox.domain.as_str())
                    .join(mailbox.local_part.as_str())
                    .display(),
                quota = mailbox.quota_mib,
                script = sieve.join(format!("{}.sieve", stored.id)).display(),
                nologin = if self.login_refused(stored) {
                    " allow_nets=0.0.0.0/32"
                } else {
                    ""
                },
            )));
        }
        MailTable {
            kind: TableKind::Dovecot,
            path: provider.dovecot_passwd_path(),
            header: String::new(),
            lines,
        }
    }

    /// OpenDKIM's KeyTable and SigningTable (`refile:`), whole.
    pub fn dkim_files(&self, provider: &Provider) -> Vec<(PathBuf, Vec<u8>)> {
        self.dkim_tables(provider)
            .into_iter()
            .map(|table| (table.path.clone(), table.text().into_bytes()))
            .collect()
    }

    /// OpenDKIM's KeyTable and SigningTable, each line with its DKIM key.
    pub fn dkim_tables(&self, provider: &Provider) -> Vec<MailTable> {
        let dir = provider.sysconf(provider.mail_layout().dkim_dir);
        let (mut keys, mut signing) = (Vec::new(), Vec::new());
        for stored in &self.dkim_keys {
            let (domain, selector) = (stored.row.domain.as_str(), stored.row.selector.as_str());
            if !self.owns(&stored.owner, domain) {
                continue;
            }
            let name = format!("{selector}._domainkey.{domain}");
            let key = dkim_key_dir(provider, &stored.id).join(format!("{selector}.private"));
            let source = Source::of(DKIM_KEY, stored);
            keys.push((
                source.clone(),
                format!("{name} {domain}:{selector}:{}", key.display()),
            ));
            signing.push((source, format!("*@{domain} {name}")));
        }
        let header = String::from("# Derived whole from state.db by layerone node.\n");
        vec![
            MailTable {
                kind: TableKind::OpenDkim,
                path: dir.join("KeyTable"),
                header: header.clone(),
                lines: keys,
            },
            MailTable {
                kind: TableKind::OpenDkim,
                path: dir.join("SigningTable"),
                header,
                lines: signing,
            },
        ]
    }

    /// Every shared mail table.
    pub fn tables(&self, provider: &Provider) -> Vec<MailTable> {
        let mut tables = self.postfix_tables(provider);
        tables.push(self.dovecot_table(provider));
        tables.extend(self.dkim_tables(provider));
        tables
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

/// The resource a line of a mail table comes from: its family and the resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub family: &'static str,
    pub of: Of,
}

impl Source {
    fn of<T>(family: &'static str, stored: &Stored<T>) -> Source {
        Source {
            family,
            of: Of::new(&stored.id, &stored.owner),
        }
    }
}

/// Which service reads a mail table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    Postfix(PostfixMap),
    Dovecot,
    OpenDkim,
}

impl TableKind {
    /// The families whose rows give this table lines, and so list it among what they derive.
    pub fn families(self) -> &'static [&'static str] {
        match self {
            TableKind::Postfix(PostfixMap::Domains | PostfixMap::SenderGate) => &[MAIL_DOMAIN],
            TableKind::Postfix(PostfixMap::Aliases) => &[MAIL_DOMAIN, MAILBOX, MAIL_FORWARDER],
            TableKind::Postfix(PostfixMap::Mailboxes) | TableKind::Dovecot => &[MAILBOX],
            TableKind::Postfix(PostfixMap::Spam) => &[SPAM_FILTER],
            TableKind::OpenDkim => &[DKIM_KEY],
        }
    }

    fn aspects(self) -> Aspects {
        match self {
            TableKind::Postfix(_) => Aspects::new(
                crate::mail_domain::POSTFIX_ENTRY_MISSING,
                crate::mail_domain::POSTFIX_TABLE_DIFFERS,
            ),
            TableKind::Dovecot => Aspects::new(
                crate::mailbox::DOVECOT_ENTRY_MISSING,
                crate::mailbox::DOVECOT_PASSWD_DIFFERS,
            ),
            TableKind::OpenDkim => Aspects::new(
                crate::dkim_key::OPEN_DKIM_ENTRY_MISSING,
                crate::dkim_key::OPEN_DKIM_TABLE_DIFFERS,
            ),
        }
    }
}

/// One shared mail table as the owner renders it: its header, then each line with the
/// resource it comes from. What [`sync`] installs and what the drift check compares.
#[derive(Clone, Debug)]
pub struct MailTable {
    pub kind: TableKind,
    pub path: PathBuf,
    pub header: String,
    pub lines: Vec<(Source, String)>,
}

impl MailTable {
    /// The table's text, whole.
    pub fn text(&self) -> String {
        let mut text = self.header.clone();
        for (_, line) in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    fn file(&self, secret_group: Option<SecretGroup>) -> ConfigFile {
        ConfigFile {
            path: self.path.clone(),
            content: self.text().into_bytes(),
            secret_group,
        }
    }
}

/// The mail tables `family` gives lines to, as the owner renders them from the view, each
/// with `family`'s lines by resource and what is there: the family's derivations in the
/// shared tables (`registry::DerivedTable`).
pub fn derived_tables(ctx: &Ctx, family: &'static str) -> Result<Vec<Derived>, OpError> {
    let mail = MailState::of_job(ctx)?;
    let mut items = Vec::new();
    for table in mail.tables(&ctx.provider) {
        if !table.kind.families().contains(&family) {
            continue;
        }
        let mut entries: Vec<(Of, Vec<String>)> = Vec::new();
        for (source, line) in &table.lines {
            if source.family != family {
                continue;
            }
            match entries.iter_mut().find(|(of, _)| *of == source.of) {
                Some((_, lines)) => lines.push(line.clone()),
                None => entries.push((source.of.clone(), vec![line.clone()])),
            }
        }
        let actual = ctx
            .provider
            .read_config(&table.path)
            .map_err(provider_error)?;
        items.push(Derived::Table(DerivedTable {
            expected: table.text().into_bytes(),
            path: table.path,
            actual,
            entries,
            aspects: table.kind.aspects(),
        }));
    }
    Ok(items)
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
    domain_store(provider, domain).join(local)
}

/// A mail domain's directory of the mail store, which holds its mailboxes' homes (mapped).
/// Dovecot makes it with the first delivery; the domain's removal removes it.
pub fn domain_store(provider: &Provider, domain: &str) -> PathBuf {
    provider
        .sysconf(provider.mail_layout().vmail_dir)
        .join(domain)
}

/// Which derived files a job rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Postfix,
    Dovecot,
    Dkim,
}

/// Renders the files of `targets` from the view (this job's row included) and installs them.
/// If one target fails its test, the targets already written are put back to what the job
/// found ([`Ctx::view_before_job`]), so a failed job leaves no service configured for it.
pub fn sync(ctx: &mut Ctx, targets: &[Target]) -> Result<(), OpError> {
    let mail = MailState::of_job(ctx)?;
    for (done, target) in targets.iter().enumerate() {
        if let Err(e) = install(ctx, &mail, *target) {
            if done > 0 {
                let unchanged =
                    MailState::from_view(&ctx.view_before_job()).map_err(store_error)?;
                for earlier in &targets[..done] {
                    if let Err(again) = install(ctx, &unchanged, *earlier) {
                        tracing::error!(error = %again.message, "could not put a mail target back");
                    }
                }
            }
            return Err(e);
        }
    }
    crash::point(AFTER_CONFIG_WRITE);
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

/// The account's row of `T`'s family with id `id`, or `code`.
pub fn own_row<T: StoredRow>(
    ctx: &Ctx,
    id: &Hex32,
    account: &Hex32,
    code: &'static str,
) -> Result<T, OpError> {
    ctx.view()
        .get_owned::<T>(account, id)
        .map_err(store_error)?
        .ok_or_else(|| {
            OpError::permanent(
                code,
                format!("no {} {id} of account {account} on this node", T::FAMILY),
            )
        })
}

/// The account's mail domain named `domain`, or `mail_domain_missing`.
pub fn own_domain(ctx: &Ctx, account: &Hex32, domain: &str) -> Result<MailDomainRow, OpError> {
    let mail = MailState::of_job(ctx)?;
    match mail.domain_names().get(domain) {
        Some(stored) if stored.owner.as_str() == account.as_str() => Ok(stored.row.clone()),
        _ => Err(OpError::permanent(
            "mail_domain_missing",
            format!("{domain} is not a mail domain of account {account}"),
        )),
    }
}

/// Refuses an address that is already a mailbox or another forwarder (`address_taken`).
pub fn check_address_free(ctx: &Ctx, address: &str, except: &Hex32) -> Result<(), OpError> {
    let mail = MailState::of_job(ctx)?;
    let taken = mail
        .mailbox_addresses()
        .get(address)
        .is_some_and(|m| m.id != *except)
        || mail
            .forwarders
            .iter()
            .any(|f| f.id != *except && f.row.address.as_str() == address);
    if taken {
        return Err(OpError::permanent(
            "address_taken",
            format!("{address} is already a mailbox or a forwarder on this node"),
        ));
    }
    Ok(())
}

/// A purge of one mail family: the files derived without the account's rows of `T`'s
/// family, then (the caller's cleanup done) [`Ctx::forget_rows_of`]. Returns the rows.
pub fn purge_family<T: StoredRow>(
    ctx: &mut Ctx,
    account: &Hex32,
    targets: &[Target],
) -> Result<Vec<Stored<T>>, OpError> {
    let rows = ctx.view().of_account::<T>(account).map_err(store_error)?;
    if rows.is_empty() {
        return Ok(rows);
    }
    ctx.drop_rows_of::<T>(account);
    sync(ctx, targets)?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn row(family: &str, n: u8, data: Value) -> ResourceRow {
        ResourceRow {
            family: family.to_owned(),
            resource_id: format!("{n:032x}").parse().unwrap(),
            owner: Owner::Tenant(format!("{:032x}", 10).parse().unwrap()),
            generation: 1,
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

    /// The families a table names as giving it lines ([`TableKind::families`], what the
    /// drift check lists the table under) are the ones its lines come from.
    #[test]
    fn every_line_of_a_table_comes_from_a_family_that_lists_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let provider = testkit::sim_provider(provider::Platform::Debian, dir.path(), vec![]);
        let hash = format!("$6$salt${}", "a".repeat(86));
        let every_kind = [
            (
                MAIL_DOMAIN,
                json!({"domain": "a.example", "catch_all": "info"}),
            ),
            (
                MAILBOX,
                json!({"domain": "a.example", "local_part": "info", "password": hash, "quota_mib": 0}),
            ),
            (
                MAIL_FORWARDER,
                json!({"address": "sales@a.example", "destinations": ["a@x.example"]}),
            ),
            (
                SPAM_FILTER,
                json!({"domain": "a.example", "level": "strict"}),
            ),
            (
                DKIM_KEY,
                json!({"domain": "a.example", "selector": "s1", "bits": "rsa1024"}),
            ),
        ];
        let rows = every_kind
            .into_iter()
            .zip(1..)
            .map(|((family, data), n)| row(family, n, data))
            .collect();
        let mail = MailState::from_rows(rows).unwrap();
        let mut families = std::collections::BTreeSet::new();
        for table in mail.tables(&provider) {
            assert!(
                !table.lines.is_empty(),
                "{} has no line",
                table.path.display()
            );
            for (source, line) in &table.lines {
                assert!(
                    table.kind.families().contains(&source.family),
                    "{}: {line:?} comes from {}, which does not list the table",
                    table.path.display(),
                    source.family
                );
                families.insert(source.family);
            }
        }
        assert_eq!(
            families,
            [MAIL_DOMAIN, MAILBOX, MAIL_FORWARDER, SPAM_FILTER, DKIM_KEY].into()
        );
    }

    #[test]
    fn a_suspended_mailbox_keeps_its_line_and_delivery_but_no_login() {
        let dir = tempfile::tempdir().unwrap();
        let provider = testkit::sim_provider(provider::Platform::Debian, dir.path(), vec![]);
        let hash = format!("$6$salt${}", "a".repeat(86));
        let mailbox = |n: u8, local: &str, suspended: bool| {
            let data = if suspended {
                json!({"domain": "a.example", "local_part": local, "password": hash, "quota_mib": 0, "suspended": true})
            } else {
                json!({"domain": "a.example", "local_part": local, "password": hash, "quota_mib": 0})
            };
            row(MAILBOX, n, data)
        };
        let mail = MailState::from_rows(vec![
            row(MAIL_DOMAIN, 1, json!({"domain": "a.example"})),
            mailbox(2, "info", true),
            mailbox(3, "sales", false),
        ])
        .unwrap();
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
        ])
        .unwrap();
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
