//! The `ftp_account` family's declarations: FTP logins of a tenant, jailed beneath its home.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::ftp_account`.

use registry::types::{FtpLogin, Hex32, HomePath, PasswordHash, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct FtpAccount {
        name: "ftp_account",
        module: Web,
        drift: {
            /// pure-ftpd's passwd file does not hold the FTP account's line as recorded.
            FTP_LOGIN_MISSING = "ftp_login_missing",
            /// pure-ftpd's passwd file holds a line no FTP account derives (a suspended login's among them).
            FTP_PASSWD_DIFFERS = "ftp_passwd_differs",
        },
    }
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

pub type RemoveFtpAccountRequest = AccountResource;

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

/// The example login's id byte.
const LOGIN: u8 = 0xe5;

fn example_hash(fill: char) -> PasswordHash {
    example::parse(&format!("$6$saltsalt${}", fill.to_string().repeat(86)))
}

operation! {
    pub struct EnsureFtpAccount {
        name: "ensure_ftp_account",
        kind: Declare,
        family: FtpAccount,
        summary: "Create or change an FTP login (pure-ftpd virtual user) jailed to a directory of the account's home",
        request: EnsureFtpAccountRequest,
        result: FtpAccountResult,
        needs: [EnsureAccount],
        example: EnsureFtpAccountRequest {
            id: example::id(LOGIN),
            account: example::account(),
            login: example::parse("shop1.upload"),
            password_hash: example_hash('a'),
            directory: Some(example::parse("web/shop.example.com")),
        },
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

impl_resource!(
    owner = account: EnsureFtpAccountRequest,
    SetFtpAccountPasswordRequest,
);

operation! {
    pub struct SetFtpAccountPassword {
        name: "set_ftp_account_password",
        kind: Set,
        family: FtpAccount,
        summary: "Replace an FTP login's password hash; its login and directory stay as they are",
        request: SetFtpAccountPasswordRequest,
        result: FtpAccountResult,
        example: SetFtpAccountPasswordRequest {
            id: example::id(LOGIN),
            account: example::account(),
            password_hash: example_hash('b'),
        },
    }
}

operation! {
    pub struct RemoveFtpAccount {
        name: "remove_ftp_account",
        kind: Remove,
        family: FtpAccount,
        summary: "Remove an FTP login; the files it uploaded stay the tenant's",
        request: RemoveFtpAccountRequest,
        result: FtpAccountResult,
        example: AccountResource::example(LOGIN),
    }
}

// ---------------------------------------------------------------------------------------
// suspend_ftp_account / unsuspend_ftp_account.

pub type FtpAccountSuspensionRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtpSuspensionResult {
    pub state: Presence,
    pub login: String,
    /// Whether the login is now left out of pure-ftpd's users (its files are untouched).
    pub suspended: bool,
}

operation! {
    pub struct SuspendFtpAccount {
        name: "suspend_ftp_account",
        kind: Suspend,
        family: FtpAccount,
        summary: "Stop an FTP login from logging in; its row and the files it uploaded stay",
        request: FtpAccountSuspensionRequest,
        result: FtpSuspensionResult,
        example: AccountResource::example(LOGIN),
    }
}

operation! {
    pub struct UnsuspendFtpAccount {
        name: "unsuspend_ftp_account",
        kind: Unsuspend,
        family: FtpAccount,
        summary: "Let a suspended FTP login log in again, as it was",
        request: FtpAccountSuspensionRequest,
        result: FtpSuspensionResult,
        example: AccountResource::example(LOGIN),
    }
}
