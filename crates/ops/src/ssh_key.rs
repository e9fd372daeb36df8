//! The `ssh_key` family: the public keys in a tenant's `~/.ssh/authorized_keys`.
//!
//! The file is derived whole from the account's keys in state.db on every change, so a retry
//! after a crash writes the same file and a key removed by the control plane cannot linger.
//! Root writes it beneath the tenant's home without following any symlink the tenant placed
//! there (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), owned by the tenant.

pub use declarations::ssh_key::*;

use std::path::Path;

use base64::Engine as _;
use registry::types::{Hex32, Presence, SshPublicKey};
use registry::{Apply, Aspects, Content, Derive, Derived, Family, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use store::StoredRow;

use crate::account::{AccountInfo, account_info, live_accounts_of};
use crate::context::{Ctx, provider_error, store_error};

crash::points! {
    AFTER_SSH_DIR = "ssh_key.after_ssh_dir",
    AFTER_WRITE = "ssh_key.after_write",
}

/// One public key as stored, with its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshKeyRow {
    pub key: SshPublicKey,
    pub fingerprint: String,
}

impl StoredRow for SshKeyRow {
    const FAMILY: &'static str = SshKey::NAME;
}

const SSH_DIR: &str = ".ssh";
const AUTHORIZED_KEYS: &str = ".ssh/authorized_keys";

impl Purge<Ctx> for SshKey {
    const ROW: Option<RowType> = Some(store::row_type::<SshKeyRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        if ctx
            .view()
            .of_account::<SshKeyRow>(account)
            .map_err(store_error)?
            .is_empty()
        {
            return Ok(());
        }
        if let Ok(info) = account_info(ctx, account) {
            write_keys(ctx, &info, &[])?;
        }
        ctx.forget_rows_of::<SshKeyRow>(account)
    }
}

/// `SHA256:<base64>` of the key blob, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &SshPublicKey) -> String {
    let blob = key.as_str().split(' ').nth(1).unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap_or_default();
    format!(
        "SHA256:{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(Sha256::digest(bytes))
    )
}

/// The account's keys as the view has them (this job's change included), in id order.
fn recorded_keys(ctx: &Ctx, account: &Hex32) -> Result<Vec<String>, OpError> {
    Ok(ctx
        .view()
        .of_account::<SshKeyRow>(account)
        .map_err(store_error)?
        .into_iter()
        .map(|stored| stored.row.key.to_string())
        .collect())
}

/// The whole `authorized_keys` for `keys`.
fn render_keys(keys: &[String]) -> String {
    let mut content = String::from("# Managed by layerone node: changes made here are replaced.\n");
    for key in keys {
        content.push_str(key);
        content.push('\n');
    }
    content
}

/// What the account's `authorized_keys` must hold according to state.db, or `None` when it
/// records no key (the node then removed the file). The drift check compares it with the
/// file.
pub fn derived_authorized_keys(ctx: &Ctx, account: &Hex32) -> Result<Option<String>, OpError> {
    let keys = recorded_keys(ctx, account)?;
    if keys.is_empty() {
        return Ok(None);
    }
    Ok(Some(render_keys(&keys)))
}

/// The account's `authorized_keys` as it is, read without following a symlink.
pub fn read_authorized_keys(ctx: &Ctx, info: &AccountInfo) -> Result<Option<Vec<u8>>, OpError> {
    ctx.provider
        .tenant_dir(&info.home, info.uid, info.gid)
        .and_then(|dir| dir.read_file(Path::new(AUTHORIZED_KEYS)))
        .map_err(provider_error)
}

fn write_keys(ctx: &Ctx, info: &AccountInfo, keys: &[String]) -> Result<(), OpError> {
    let dir = ctx
        .provider
        .tenant_dir(&info.home, info.uid, info.gid)
        .map_err(provider_error)?;
    if keys.is_empty() {
        return dir
            .remove_file(Path::new(AUTHORIZED_KEYS))
            .map_err(provider_error);
    }
    dir.mkdir_all(Path::new(SSH_DIR), 0o700)
        .map_err(provider_error)?;
    crash::point(AFTER_SSH_DIR);
    let content = render_keys(keys);
    dir.write_file_atomic(Path::new(AUTHORIZED_KEYS), content.as_bytes(), 0o600)
        .map_err(provider_error)?;
    crash::point(AFTER_WRITE);
    Ok(())
}

const AUTHORIZED_KEYS_FILE: Aspects = Aspects::new(
    AUTHORIZED_KEYS_MISSING,
    AUTHORIZED_KEYS_DIFFERS,
);

impl Derive<Ctx> for SshKey {
    /// The `authorized_keys` of each account that records a key, read beneath the home
    /// without following a symlink (one there, or an unreadable file, is the tenant's doing
    /// and differs from what the node wrote). An account without a key is left out: the node
    /// removed the file then, and what the tenant keeps there is the tenant's.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = Vec::new();
        for (account, info) in live_accounts_of::<SshKeyRow>(ctx)? {
            let Some(expected) = derived_authorized_keys(ctx, &account)? else {
                continue;
            };
            let actual = match read_authorized_keys(ctx, &info) {
                Ok(bytes) => Content::file(bytes),
                Err(_) => Content::Present,
            };
            items.push(Derived::path(
                Of::account(&account),
                ctx.provider.sysconf(&info.home).join(AUTHORIZED_KEYS),
                Content::Bytes(expected.into_bytes()),
                actual,
                AUTHORIZED_KEYS_FILE,
            ));
        }
        Ok(items)
    }
}

impl Apply<Ctx> for EnsureSshKey {
    fn apply(ctx: &mut Ctx, req: &EnsureSshKeyRequest) -> Result<SshKeyResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        let fingerprint = fingerprint(&req.key);
        ctx.set_row(&SshKeyRow {
            key: req.key.clone(),
            fingerprint: fingerprint.clone(),
        });
        let keys = recorded_keys(ctx, &req.account)?;
        write_keys(ctx, &info, &keys)?;
        Ok(SshKeyResult {
            state: Presence::Present,
            fingerprint: Some(fingerprint),
            keys_in_file: keys.len() as u32,
        })
    }
}

impl Apply<Ctx> for RemoveSshKey {
    fn apply(ctx: &mut Ctx, req: &RemoveSshKeyRequest) -> Result<SshKeyResult, OpError> {
        ctx.forget_row();
        let keys = recorded_keys(ctx, &req.account)?;
        // Without the account there is no file to change: the key is already gone.
        if let Ok(info) = account_info(ctx, &req.account) {
            write_keys(ctx, &info, &keys)?;
        }
        Ok(SshKeyResult {
            state: Presence::Absent,
            fingerprint: None,
            keys_in_file: keys.len() as u32,
        })
    }
}
