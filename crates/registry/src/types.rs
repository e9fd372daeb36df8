//! Validated field types: parse, don't validate.
//!
//! A value of one of these types exists only if it passed validation, so a request built from
//! them is valid by construction. Each type deserializes through its parser (so serde rejects
//! bad input with the field's path) and publishes a JSON Schema that says the same thing, so a
//! control plane can validate before it sends.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares a string newtype whose only constructor is its parser.
macro_rules! string_type {
    ($(#[$doc:meta])* $name:ident, $schema:expr, $parse:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(input: &str) -> Result<Self, String> {
                let parse: fn(&str) -> Result<String, String> = $parse;
                parse(input).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(d)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

const MAX_INPUT: usize = 16 * 1024;

fn bounded(input: &str, max: usize, what: &str) -> Result<(), String> {
    if input.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if input.len() > max {
        return Err(format!("{what} is longer than {max} bytes"));
    }
    Ok(())
}

string_type!(
    /// 32 lowercase hexadecimal digits: request ids, resource ids, account ids, node ids.
    Hex32,
    json_schema!({"type": "string", "pattern": "^[0-9a-f]{32}$"}),
    |s| {
        if s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(s.to_owned())
        } else {
            Err("expected 32 lowercase hexadecimal digits".into())
        }
    }
);

/// Names that belong to the system and can never be a tenant's.
const RESERVED_USERNAMES: &[&str] = &[
    "root",
    "daemon",
    "bin",
    "sys",
    "sync",
    "games",
    "man",
    "lp",
    "mail",
    "news",
    "uucp",
    "proxy",
    "www-data",
    "backup",
    "list",
    "irc",
    "gnats",
    "nobody",
    "nogroup",
    "systemd",
    "messagebus",
    "sshd",
    "mysql",
    "postfix",
    "dovecot",
    "dovenull",
    "opendkim",
    "apache",
    "httpd",
    "nginx",
    "ftp",
    "admin",
    "administrator",
    "layerone",
    "layerone-api",
    "wheel",
    "sudo",
    "adm",
    "staff",
    "users",
    "operator",
    "halt",
    "shutdown",
    "vmail",
    "clamav",
];

string_type!(
    /// A tenant's Unix user name: `^[a-z][a-z0-9_-]{0,30}$`, not a system name.
    Username,
    json_schema!({"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,30}$", "maxLength": 31}),
    |s| {
        let mut bytes = s.bytes();
        let first_ok = matches!(bytes.next(), Some(b'a'..=b'z'));
        if !first_ok
            || s.len() > 31
            || !bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
        {
            return Err("expected a lowercase letter then up to 30 of [a-z0-9_-]".into());
        }
        if RESERVED_USERNAMES.contains(&s) || s.starts_with("systemd-") || s.starts_with("layerone") {
            return Err(format!("{s} is reserved for the system"));
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// A fully qualified domain name, stored as lowercase ASCII (IDNA punycode). At least two
    /// labels, no trailing dot, no wildcard.
    DomainName,
    json_schema!({
        "type": "string",
        "minLength": 3,
        "maxLength": 253,
        "description": "A domain name; Unicode input is converted to lowercase punycode"
    }),
    |s| {
        bounded(s, 1024, "a domain name")?;
        if s.ends_with('.') {
            return Err("a domain name must not end with a dot".into());
        }
        let ascii = idna::domain_to_ascii_strict(s)
            .map_err(|_| "not a valid internationalized domain name".to_string())?;
        if ascii.len() > 253 {
            return Err("a domain name is at most 253 bytes".into());
        }
        let labels: Vec<&str> = ascii.split('.').collect();
        if labels.len() < 2 {
            return Err("a domain name needs at least two labels".into());
        }
        for label in &labels {
            let ok = !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !ok {
                return Err(format!("label {label:?} is not a valid host name label"));
            }
        }
        if labels.last().is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit())) {
            return Err("a domain name cannot end in a numeric label".into());
        }
        Ok(ascii)
    }
);

string_type!(
    /// A crypt(3) SHA-512 hash (`$6$[rounds=N$]salt$hash`), the only form a system or mail
    /// password arrives in: the node never sees plaintext.
    PasswordHash,
    json_schema!({
        "type": "string",
        "pattern": "^\\$6\\$(rounds=[0-9]{4,9}\\$)?[./0-9A-Za-z]{1,16}\\$[./0-9A-Za-z]{86}$"
    }),
    |s| {
        let rest = s.strip_prefix("$6$").ok_or("expected a crypt SHA-512 hash ($6$...)")?;
        let rest = match rest.strip_prefix("rounds=") {
            Some(r) => {
                let (n, tail) = r.split_once('$').ok_or("malformed rounds")?;
                let rounds: u32 = n.parse().map_err(|_| "malformed rounds".to_string())?;
                if !(1000..=999_999_999).contains(&rounds) || n.len() < 4 {
                    return Err("rounds out of range".into());
                }
                tail
            }
            None => rest,
        };
        let (salt, hash) = rest.split_once('$').ok_or("expected salt$hash")?;
        let crypt64 = |t: &str| t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/');
        if salt.is_empty() || salt.len() > 16 || !crypt64(salt) || hash.len() != 86 || !crypt64(hash) {
            return Err("malformed crypt SHA-512 hash".into());
        }
        Ok(s.to_owned())
    }
);

const SSH_KEY_TYPES: &[&str] = &[
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
];

string_type!(
    /// One OpenSSH public key line: `type base64 [comment]`. No options (a key cannot carry
    /// `command=` or `from=`), no newline, and the base64 blob must decode and name the same
    /// key type, so a line that would confuse sshd cannot be written into `authorized_keys`.
    SshPublicKey,
    json_schema!({
        "type": "string",
        "maxLength": 16384,
        "pattern": "^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh.com|sk-ecdsa-sha2-nistp256@openssh.com) [A-Za-z0-9+/]+={0,2}( [ -~]{0,256})?$"
    }),
    |s| {
        bounded(s, MAX_INPUT, "an SSH public key")?;
        let mut parts = s.splitn(3, ' ');
        let kind = parts.next().unwrap_or_default();
        let blob = parts.next().ok_or("expected `type base64 [comment]`")?;
        let comment = parts.next().unwrap_or("");
        if !SSH_KEY_TYPES.contains(&kind) {
            return Err(format!("unsupported key type {kind:?}"));
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|_| "the key body is not valid base64".to_string())?;
        // The blob starts with the key type as an SSH string: u32 length, then the name.
        let named = decoded
            .get(4..)
            .zip(decoded.get(..4))
            .and_then(|(rest, len)| {
                let n = u32::from_be_bytes(len.try_into().ok()?) as usize;
                rest.get(..n)
            });
        if named != Some(kind.as_bytes()) {
            return Err("the key body does not match its type".into());
        }
        if comment.len() > 256 || !comment.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return Err("the comment must be at most 256 printable ASCII characters".into());
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// A relative path inside a tenant's home: 1 to 8 components of `[A-Za-z0-9._-]`, none of
    /// them `.` or `..`, no leading slash. Root resolves it beneath the home without following
    /// symlinks; the type only keeps obviously hostile shapes out.
    HomePath,
    json_schema!({
        "type": "string",
        "maxLength": 255,
        "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*){0,7}$"
    }),
    |s| {
        bounded(s, 255, "a home path")?;
        let parts: Vec<&str> = s.split('/').collect();
        if parts.len() > 8 {
            return Err("at most 8 path components".into());
        }
        for part in parts {
            let ok = !part.is_empty()
                && !part.starts_with('.')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
            if !ok {
                return Err(format!("path component {part:?} is not allowed"));
            }
        }
        Ok(s.to_owned())
    }
);

/// A tenant's login shell, from a closed list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Shell {
    Bash,
    Sh,
    #[default]
    Nologin,
}

impl Shell {
    pub fn path(self) -> &'static str {
        match self {
            Shell::Bash => "/bin/bash",
            Shell::Sh => "/bin/sh",
            Shell::Nologin => "/usr/sbin/nologin",
        }
    }
}

/// Declares a bounded unsigned integer whose only constructor checks the bound.
macro_rules! bounded_u64 {
    ($(#[$doc:meta])* $name:ident, $max:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        #[serde(transparent)]
        pub struct $name(u64);

        impl $name {
            pub const MAX: u64 = $max;
            pub fn get(self) -> u64 {
                self.0
            }
        }

        impl TryFrom<u64> for $name {
            type Error = String;
            fn try_from(v: u64) -> Result<Self, String> {
                if v <= Self::MAX { Ok($name(v)) } else { Err(format!("at most {}", Self::MAX)) }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::try_from(u64::deserialize(d)?).map_err(serde::de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({"type": "integer", "minimum": 0, "maximum": $max})
            }
        }
    };
}

bounded_u64!(
    /// A size in MiB, 0 meaning unlimited, at most 16 TiB.
    MiB,
    16u64 * 1024 * 1024
);

bounded_u64!(
    /// A count of inodes, 0 meaning unlimited, at most 2^32.
    Inodes,
    4_294_967_296u64
);

/// The mail families' types (declared after the macros they use).
pub mod mail;

/// Up to 32 distinct extra host names for one web domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Default)]
pub struct DomainAliases(Vec<DomainName>);

impl DomainAliases {
    pub const MAX: usize = 32;
    pub fn iter(&self) -> impl Iterator<Item = &DomainName> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for DomainAliases {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<DomainName>::deserialize(d)?;
        if names.len() > Self::MAX {
            return Err(serde::de::Error::custom(format!(
                "at most {} aliases",
                Self::MAX
            )));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(serde::de::Error::custom(format!(
                "alias {dup} is listed twice"
            )));
        }
        Ok(DomainAliases(names))
    }
}

impl JsonSchema for DomainAliases {
    fn schema_name() -> Cow<'static, str> {
        "DomainAliases".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let item = generator.subschema_for::<DomainName>();
        json_schema!({"type": "array", "items": item, "maxItems": 32, "uniqueItems": true})
    }
}

/// The users of a node's sudo allowlist: at most 64 distinct [`Username`]s.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Default)]
pub struct SudoUsers(Vec<Username>);

impl SudoUsers {
    pub const MAX: usize = 64;
    pub fn iter(&self) -> impl Iterator<Item = &Username> {
        self.0.iter()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl TryFrom<Vec<Username>> for SudoUsers {
    type Error = String;
    fn try_from(names: Vec<Username>) -> Result<Self, String> {
        if names.len() > Self::MAX {
            return Err(format!("at most {} users", Self::MAX));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(format!("user {dup} is listed twice"));
        }
        Ok(SudoUsers(names))
    }
}

impl<'de> Deserialize<'de> for SudoUsers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SudoUsers::try_from(Vec::<Username>::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for SudoUsers {
    fn schema_name() -> Cow<'static, str> {
        "SudoUsers".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let item = generator.subschema_for::<Username>();
        json_schema!({"type": "array", "items": item, "maxItems": 64, "uniqueItems": true})
    }
}

bounded_u64!(
    /// A generation chosen by the control plane, monotonic per resource; at most 2^53 - 1 so
    /// every JSON implementation reads it exactly.
    Generation,
    9_007_199_254_740_991u64
);

bounded_u64!(
    /// How many sudo events one page holds: at most 200.
    SudoEventLimit,
    200
);

/// Whether a resource exists after an operation: what the OS shows, not what was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Present,
    Absent,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<T: FromStr>(s: &str) -> bool {
        s.parse::<T>().is_ok()
    }

    #[test]
    fn hex32_accepts_only_lowercase_hex_of_length_32() {
        assert!(ok::<Hex32>("0123456789abcdef0123456789abcdef"));
        assert!(!ok::<Hex32>("0123456789ABCDEF0123456789abcdef"));
        assert!(!ok::<Hex32>("0123456789abcdef0123456789abcde"));
        assert!(!ok::<Hex32>("0123456789abcdef0123456789abcdeg"));
        assert!(!ok::<Hex32>(""));
    }

    #[test]
    fn username_rejects_system_names_and_bad_shapes() {
        assert!(ok::<Username>("shop1"));
        assert!(ok::<Username>("a_b-c"));
        for bad in [
            "root",
            "www-data",
            "1abc",
            "Abc",
            "a.b",
            "",
            &"a".repeat(32),
            "layerone-x",
            "a b",
        ] {
            assert!(!ok::<Username>(bad), "{bad} accepted");
        }
    }

    #[test]
    fn domain_names_become_lowercase_punycode() {
        assert_eq!(
            "Example.COM".parse::<DomainName>().unwrap().as_str(),
            "example.com"
        );
        assert_eq!(
            "bücher.de".parse::<DomainName>().unwrap().as_str(),
            "xn--bcher-kva.de"
        );
        for bad in [
            "localhost",
            "example.com.",
            "-a.com",
            "a..com",
            "*.a.com",
            "a_b.com",
            "1.2.3.4",
            "a/b.com",
            "",
        ] {
            assert!(!ok::<DomainName>(bad), "{bad} accepted");
        }
    }

    #[test]
    fn password_hash_is_crypt_sha512_only() {
        let good = format!("$6$saltsalt${}", "a".repeat(86));
        assert!(ok::<PasswordHash>(&good));
        assert!(ok::<PasswordHash>(&format!(
            "$6$rounds=5000$salt${}",
            "b".repeat(86)
        )));
        assert!(!ok::<PasswordHash>("hunter2"));
        assert!(!ok::<PasswordHash>(&format!("$1$salt${}", "a".repeat(22))));
        assert!(!ok::<PasswordHash>(&format!("$6$salt${}", "a".repeat(85))));
        assert!(!ok::<PasswordHash>(&format!("$6$sa:lt${}", "a".repeat(86))));
    }

    #[test]
    fn ssh_keys_must_decode_and_carry_no_options() {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";
        assert!(ok::<SshPublicKey>(key));
        assert!(!ok::<SshPublicKey>(&format!("command=\"/bin/sh\" {key}")));
        assert!(!ok::<SshPublicKey>(&format!("{key}\nssh-rsa AAAA")));
        assert!(!ok::<SshPublicKey>(
            "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN"
        ));
        assert!(!ok::<SshPublicKey>("ssh-ed25519 not-base64!"));
    }

    #[test]
    fn home_paths_stay_beneath_the_home() {
        assert!(ok::<HomePath>("web/example.com/public_html"));
        for bad in [
            "/etc",
            "../x",
            "a/../b",
            "a//b",
            ".ssh",
            "a/.",
            "",
            "a\0b",
            "a/b/c/d/e/f/g/h/i",
        ] {
            assert!(!ok::<HomePath>(bad), "{bad} accepted");
        }
    }
}
