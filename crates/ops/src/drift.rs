//! The drift check: what state.db records that the OS no longer shows as recorded. Each
//! family's files are derived whole from state.db, so "as recorded" is a byte comparison with
//! what the family would write now. The check reads only: the runner records what it finds as
//! events (`StateDb::record_drift`), and `rebuild_account` is the repair.
//!
//! Checked today: every account's user (the name and uid the node recorded) and home; every web domain's
//! vhost; every account's `authorized_keys` (read beneath the home without following a
//! symlink); every FTP account's line in pure-ftpd's passwd file; the node's sudo drop-in. A family whose files are not checked here is not
//! reported, never reported as healthy by mistake.

use registry::types::Presence;
use registry::{Drift, DriftAspect, Family, OpError, Owner};

use crate::account::{Account, AccountRow, account_info, recorded, user_of};
use crate::context::{Ctx, provider_error, store_error};
use crate::ftp_account::{FtpAccount, FtpAccountRow};
use crate::ssh_key::{SshKey, derived_authorized_keys, read_authorized_keys};
use crate::sudo::{SudoAllowlist, SudoAllowlistRow};
use crate::vhost;
use crate::web_domain::{WebDomain, WebDomainRow};

fn drift(family: &str, id: &str, owner: &str, aspect: DriftAspect, message: String) -> Drift {
    Drift {
        family: family.to_owned(),
        resource_id: id.to_owned(),
        owner: owner.to_owned(),
        aspect,
        message,
    }
}

/// Everything that drifted now, in a stable order.
pub fn detect(ctx: &Ctx) -> Result<Vec<Drift>, OpError> {
    let mut found = Vec::new();
    let view = ctx.view();
    for stored in view.all::<AccountRow>().map_err(store_error)? {
        let id = stored.id.as_str();
        let name = stored.row.username.as_str();
        let user = match recorded(ctx, &stored.id, Some(&stored.row))? {
            Some(rec) => user_of(ctx, &rec)?,
            None => None,
        };
        if user.is_none() {
            found.push(drift(
                Account::NAME,
                id,
                id,
                DriftAspect::UserMissing,
                format!("account {id} has no user {name} in passwd"),
            ));
            continue;
        }
        let home = ctx.provider.sysconf(&stored.row.home);
        if std::fs::symlink_metadata(&home).is_err() {
            found.push(drift(
                Account::NAME,
                id,
                id,
                DriftAspect::HomeMissing,
                format!("account {id} has no home {}", home.display()),
            ));
            continue;
        }
        let expected = derived_authorized_keys(ctx, &stored.id)?;
        let info = account_info(ctx, &stored.id)?;
        // A symlink or an unreadable file is the tenant's doing: it differs from what the
        // node wrote, and is reported as such.
        let actual = read_authorized_keys(ctx, &info).unwrap_or(Some(Vec::new()));
        match (expected, actual) {
            (None, _) => {}
            (Some(_), None) => found.push(drift(
                SshKey::NAME,
                id,
                id,
                DriftAspect::AuthorizedKeysMissing,
                format!("account {id} has SSH keys recorded and no authorized_keys"),
            )),
            (Some(expected), Some(actual)) if expected.as_bytes() != actual => found.push(drift(
                SshKey::NAME,
                id,
                id,
                DriftAspect::AuthorizedKeysDiffers,
                format!("the authorized_keys of account {id} is not what state.db derives"),
            )),
            (Some(_), Some(_)) => {}
        }
    }
    for stored in view.all::<WebDomainRow>().map_err(store_error)? {
        let id = stored.id.as_str();
        let path = vhost::path(ctx, &stored.id);
        let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
        let expected = vhost::derived(ctx, &stored)?;
        let aspect = match (actual, expected) {
            (None, _) => Some(DriftAspect::VhostMissing),
            (Some(actual), Some(expected)) if actual == expected.as_bytes() => None,
            (Some(_), _) => Some(DriftAspect::VhostDiffers),
        };
        if let Some(aspect) = aspect {
            found.push(drift(
                WebDomain::NAME,
                id,
                stored.owner.as_str(),
                aspect,
                format!(
                    "web domain {id}: {} {}",
                    aspect.as_str().replace('_', " "),
                    path.display()
                ),
            ));
        }
    }
    let ftp_rows = view.all::<FtpAccountRow>().map_err(store_error)?;
    if !ftp_rows.is_empty() {
        let passwd = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
        let installed = ctx.provider.read_config(&passwd).map_err(provider_error)?;
        let text = String::from_utf8_lossy(installed.as_deref().unwrap_or_default());
        for stored in ftp_rows {
            let line = stored.row.line.as_str();
            if line.is_empty() || !text.split_inclusive('\n').any(|l| l == line) {
                let id = stored.id.as_str();
                found.push(drift(
                    FtpAccount::NAME,
                    id,
                    stored.owner.as_str(),
                    DriftAspect::FtpLoginMissing,
                    format!(
                        "FTP account {id}: {} does not hold its line as recorded",
                        passwd.display()
                    ),
                ));
            }
        }
    }
    for stored in view
        .of_owner::<SudoAllowlistRow>(&Owner::Node)
        .map_err(store_error)?
    {
        let dropin = ctx.provider.sysconf(ctx.provider.sudo_layout().dropin);
        if stored.row.state == Presence::Present
            && ctx
                .provider
                .read_config(&dropin)
                .map_err(provider_error)?
                .is_none()
        {
            found.push(drift(
                SudoAllowlist::NAME,
                stored.id.as_str(),
                Owner::NODE,
                DriftAspect::SudoDropinMissing,
                format!(
                    "sudo allowlist {} has no drop-in {}",
                    stored.id,
                    dropin.display()
                ),
            ));
        }
    }
    Ok(found)
}
