//! The `ftp_account` family's declarations: FTP logins of a tenant, jailed beneath its home.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::ftp_account`.

use registry::types::{FtpLogin, Hex32, HomePath, PasswordHash, Presence};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct FtpAccount;

impl Family for FtpAccount {
    const NAME: &'static str = "ftp_account";
    const MODULE: Module = Module::Web;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureFtpAccountRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The FTP login; unique on the node, and not the name of a system user.
    pub login: FtpLogin,
    /// A crypt SHA-512 hash (`$6$...`).
    pub password_hash: PasswordHash,
    /// The directory the login is jailed to, relative to the home (created as the tenant
    /// when missing). Default: the home itself.
    #[serde(default)]
    pub directory: Option<HomePath>,
}

impl Resource for EnsureFtpAccountRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveFtpAccountRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveFtpAccountRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

/// The login as `pure-pw show` reads it from the installed file.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtpAccountResult {
    pub state: Presence,
    pub login: Option<String>,
    /// The absolute directory the login is jailed to.
    pub directory: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

fn example_ids() -> (Hex32, Hex32) {
    (
        "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
            .parse()
            .expect("valid example"),
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
            .parse()
            .expect("valid example"),
    )
}

pub struct EnsureFtpAccount;

impl Operation for EnsureFtpAccount {
    const NAME: &'static str = "ensure_ftp_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Create or change an FTP login (pure-ftpd virtual user) jailed to a directory of the account's home";
    type Family = FtpAccount;
    type Request = EnsureFtpAccountRequest;
    type Result = FtpAccountResult;

    fn example() -> EnsureFtpAccountRequest {
        let (id, account) = example_ids();
        EnsureFtpAccountRequest {
            id,
            account,
            login: "shop1.upload".parse().expect("valid example"),
            password_hash: format!("$6$saltsalt${}", "a".repeat(86))
                .parse()
                .expect("valid example"),
            directory: Some("web/shop.example.com".parse().expect("valid example")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// set_ftp_account_password.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetFtpAccountPasswordRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// A crypt SHA-512 hash (`$6$...`).
    pub password_hash: PasswordHash,
}

impl Resource for SetFtpAccountPasswordRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

pub struct SetFtpAccountPassword;

impl Operation for SetFtpAccountPassword {
    const NAME: &'static str = "set_ftp_account_password";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Replace an FTP login's password hash; its login and directory stay as they are";
    type Family = FtpAccount;
    type Request = SetFtpAccountPasswordRequest;
    type Result = FtpAccountResult;

    fn example() -> SetFtpAccountPasswordRequest {
        let (id, account) = example_ids();
        SetFtpAccountPasswordRequest {
            id,
            account,
            password_hash: format!("$6$saltsalt${}", "b".repeat(86))
                .parse()
                .expect("valid example"),
        }
    }
}

pub struct RemoveFtpAccount;

impl Operation for RemoveFtpAccount {
    const NAME: &'static str = "remove_ftp_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Remove an FTP login; the files it uploaded stay the tenant's";
    type Family = FtpAccount;
    type Request = RemoveFtpAccountRequest;
    type Result = FtpAccountResult;

    fn example() -> RemoveFtpAccountRequest {
        let (id, account) = example_ids();
        RemoveFtpAccountRequest { id, account }
    }
}

// ---------------------------------------------------------------------------------------
// suspend_ftp_account / unsuspend_ftp_account.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtpAccountSuspensionRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for FtpAccountSuspensionRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtpSuspensionResult {
    pub state: Presence,
    pub login: String,
    /// Whether the login is now left out of pure-ftpd's users (its files are untouched).
    pub suspended: bool,
}

pub struct SuspendFtpAccount;

impl Operation for SuspendFtpAccount {
    const NAME: &'static str = "suspend_ftp_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop an FTP login from logging in; its row and the files it uploaded stay";
    type Family = FtpAccount;
    type Request = FtpAccountSuspensionRequest;
    type Result = FtpSuspensionResult;

    fn example() -> FtpAccountSuspensionRequest {
        let (id, account) = example_ids();
        FtpAccountSuspensionRequest { id, account }
    }
}

pub struct UnsuspendFtpAccount;

impl Operation for UnsuspendFtpAccount {
    const NAME: &'static str = "unsuspend_ftp_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Let a suspended FTP login log in again, as it was";
    type Family = FtpAccount;
    type Request = FtpAccountSuspensionRequest;
    type Result = FtpSuspensionResult;

    fn example() -> FtpAccountSuspensionRequest {
        let (id, account) = example_ids();
        FtpAccountSuspensionRequest { id, account }
    }
}
