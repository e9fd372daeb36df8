//! Validated field types: parse, don't validate.
//!
//! A value of one of these types exists only if it passed validation, so a request built from
//! them is valid by construction. Each type deserializes through its parser (so serde rejects
//! bad input with the field's path) and publishes a JSON Schema that says the same thing, so a
//! control plane can validate before it sends.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares a string newtype whose only constructor is its parser: `FromStr`, through a
/// function that returns the string to keep or why the input is refused.
///
/// - `string_type!(Name, schema, parse)`: a field type. The parser refuses with a `String`;
///   the type deserializes through it (so serde rejects bad input with the field's path) and
///   publishes `schema`, which says the same thing, as its JSON Schema.
/// - `string_type!(Name, error: E, parse)`: a type that never travels in a request (no serde,
///   no schema), whose parser refuses with an `E` (the provider's MariaDB names).
#[macro_export]
macro_rules! string_type {
    ($(#[$doc:meta])* $name:ident, error: $err:ty, $parse:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(::std::string::String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $err;
            fn from_str(input: &str) -> ::std::result::Result<Self, $err> {
                let parse: fn(&str) -> ::std::result::Result<::std::string::String, $err> =
                    $parse;
                parse(input).map($name)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
    ($(#[$doc:meta])* $name:ident, $schema:expr, $parse:expr) => {
        $crate::string_type!($(#[$doc])* $name, error: ::std::string::String, $parse);

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                s: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                d: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let raw = <::std::string::String as $crate::__private::serde::Deserialize>::deserialize(d)?;
                raw.parse().map_err($crate::__private::serde::de::Error::custom)
            }
        }

        impl $crate::__private::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(
                _: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
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

/// Declares an unsigned integer within `min..=max` whose only constructor checks the bounds.
macro_rules! ranged_u64 {
    ($(#[$doc:meta])* $name:ident, $min:expr, $max:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(u64);

        impl $name {
            pub const MIN: u64 = $min;
            pub const MAX: u64 = $max;
            pub fn get(self) -> u64 {
                self.0
            }
        }

        impl TryFrom<u64> for $name {
            type Error = String;
            fn try_from(v: u64) -> Result<Self, String> {
                if (Self::MIN..=Self::MAX).contains(&v) {
                    Ok($name(v))
                } else {
                    Err(format!("between {} and {}", Self::MIN, Self::MAX))
                }
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
                json_schema!({"type": "integer", "minimum": $min, "maximum": $max})
            }
        }
    };
}

/// Declares a list of `min..=max` items that are distinct by `key` (what names each), whose
/// only constructors check both: `distinct_list!(Name(Item), 1..=16, "host", "hosts", |h|
/// h.as_str())`. Its JSON schema says the same: `minItems` when `min` is not 0, `maxItems`,
/// and `uniqueItems` unless the list says `unique_items = false` (its key is a part of the
/// item, which `uniqueItems`, comparing whole items, does not express).
macro_rules! distinct_list {
    ($(#[$doc:meta])* $name:ident($item:ty), $min:literal..=$max:literal, $one:literal, $many:literal, |$it:ident| $key:expr) => {
        distinct_list!($(#[$doc])* $name($item), $min..=$max, $one, $many, |$it| $key, unique_items = true);
    };
    // `unique_items = false`: the key is a part of the item (a name), and the schema leaves
    // out `uniqueItems`, which compares whole items.
    ($(#[$doc:meta])* $name:ident($item:ty), $min:literal..=$max:literal, $one:literal, $many:literal, |$it:ident| $key:expr, unique_items = $unique:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
        pub struct $name(Vec<$item>);

        impl $name {
            pub const MAX: usize = $max;
            pub fn iter(&self) -> impl Iterator<Item = &$item> {
                self.0.iter()
            }
            pub fn len(&self) -> usize {
                self.0.len()
            }
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
        }

        impl TryFrom<Vec<$item>> for $name {
            type Error = String;
            fn try_from(list: Vec<$item>) -> Result<Self, String> {
                $crate::types::distinct(&list, $min, $max, ($one, $many), |$it: &$item| $key)?;
                Ok($name(list))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::try_from(Vec::<$item>::deserialize(d)?).map_err(serde::de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                let item = generator.subschema_for::<$item>();
                let mut schema = json_schema!({"type": "array", "items": item, "maxItems": $max});
                if $min > 0 {
                    schema.insert("minItems".into(), $min.into());
                }
                if $unique {
                    schema.insert("uniqueItems".into(), true.into());
                }
                schema
            }
        }
    };
}

/// [`distinct_list!`]'s check: `min..=max` items (`what`: one, many), none two with the same
/// key.
pub(crate) fn distinct<'a, T, K: Eq + std::hash::Hash + fmt::Display>(
    list: &'a [T],
    min: usize,
    max: usize,
    (one, many): (&str, &str),
    key: impl Fn(&'a T) -> K,
) -> Result<(), String> {
    if list.len() < min || list.len() > max {
        return Err(match min {
            0 => format!("at most {max} {many}"),
            _ => format!("{min} to {max} {many}"),
        });
    }
    let keys: Vec<K> = list.iter().map(key).collect();
    let mut seen = std::collections::HashSet::new();
    match keys.iter().find(|k| !seen.insert(*k)) {
        Some(dup) => Err(format!("{one} {dup} is listed twice")),
        None => Ok(()),
    }
}

// The hosting families' types, in their own file; they use the macros and helpers above.
mod web;
pub use web::*;

// The fleet's types: a node's name, an assignment's generation.
mod fleet;
pub use fleet::*;

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

string_type!(
    /// A blob's SHA-256 in 64 lowercase hexadecimal digits: blobs are named by their content,
    /// so an upload cannot be swapped for another without its name changing.
    BlobId,
    json_schema!({"type": "string", "pattern": "^[0-9a-f]{64}$"}),
    |s| {
        if s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(s.to_owned())
        } else {
            Err("expected a SHA-256 in 64 lowercase hexadecimal digits".into())
        }
    }
);

/// The one list of names that can never be a tenant's user name (and so its group's name),
/// whatever the node's own passwd and group say today (ARCHITECTURE.md invariant 15). Three kinds:
///
/// - names the node itself uses or will create: its service user and groups (`layerone-*` is
///   refused as a prefix as well), the mail store's `vmail`, the web server's user and group
///   on each platform (`www-data`, `apache`);
/// - names the distribution or a package creates with a meaning a tenant must never get: a
///   group that reads secrets or devices (`shadow` reads `/etc/shadow`, `disk` writes raw
///   disks, `kmem` reads memory, `ssl-cert` reads private keys, `docker` and `lxd` are root),
///   administration (`sudo`, `wheel`, `adm`, `staff`), the services of a hosting node;
/// - generic names an operator would read as the system's.
///
/// `systemd-*` is refused as a prefix too. The node also refuses, when it creates an account,
/// every name present in the system's passwd, shadow, group and gshadow (as an entry or a
/// member) and every name once on the sudo allowlist (`ops::account`): this list covers the
/// names that are not there yet, or not on this node.
pub const RESERVED_NAMES: &[&str] = &[
    // The node's own.
    "layerone",
    "layerone-api",
    "layerone-operators",
    "layerone-tenant",
    "vmail",
    "www-data",
    "apache",
    // Base system users and groups (Debian base-passwd, Red Hat setup).
    "root",
    "daemon",
    "bin",
    "sys",
    "adm",
    "tty",
    "disk",
    "lp",
    "mail",
    "news",
    "uucp",
    "man",
    "proxy",
    "kmem",
    "dialout",
    "fax",
    "voice",
    "cdrom",
    "floppy",
    "tape",
    "sudo",
    "audio",
    "dip",
    "backup",
    "operator",
    "list",
    "irc",
    "src",
    "gnats",
    "shadow",
    "utmp",
    "video",
    "sasl",
    "plugdev",
    "staff",
    "games",
    "users",
    "nogroup",
    "nobody",
    "sync",
    "halt",
    "shutdown",
    "wheel",
    "admin",
    "administrator",
    "ftp",
    "mem",
    "lock",
    "input",
    "kvm",
    "render",
    "sgx",
    "netdev",
    "crontab",
    "messagebus",
    "polkitd",
    "uuidd",
    "tss",
    "tcpdump",
    "dbus",
    "systemd",
    "sshd",
    "ssh",
    "ssl-cert",
    "docker",
    "lxd",
    "libvirt",
    "libvirt-qemu",
    "ntp",
    "chrony",
    "rpc",
    "rpcuser",
    "statd",
    "postgres",
    "redis",
    "memcache",
    "memcached",
    // The services of a hosting node.
    "httpd",
    "nginx",
    "mysql",
    "mariadb",
    "postfix",
    "postdrop",
    "dovecot",
    "dovenull",
    "opendkim",
    "opendmarc",
    "clamav",
    "amavis",
    "spamd",
    "debian-spamd",
    "pure-ftpd",
    "proftpd",
    "bind",
    "named",
    "cagefs",
    "lve",
    "lvemanager",
    "mailman",
    "mailnull",
    "smmsp",
    "exim",
    "nscd",
];

/// Whether `name` is one of [`RESERVED_NAMES`] or starts with a reserved prefix
/// (`systemd-`, `layerone`).
pub fn is_reserved_name(name: &str) -> bool {
    RESERVED_NAMES.contains(&name) || name.starts_with("systemd-") || name.starts_with("layerone")
}

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
        if is_reserved_name(s) {
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

/// What enforces an account's disk and inode quotas on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuotaMechanism {
    /// `/home` is btrfs and the home a subvolume limited by its qgroup: bytes only.
    BtrfsQgroup,
    /// `/home` has user quotas on: blocks and inodes per uid.
    UserQuota,
    /// Nothing: only unlimited quotas.
    None,
}

impl QuotaMechanism {
    /// Whether it can limit inodes (btrfs cannot).
    pub fn limits_inodes(self) -> bool {
        self == QuotaMechanism::UserQuota
    }
}

/// The mail families' types (declared after the macros they use).
pub mod mail;

distinct_list!(
    /// Up to 32 distinct extra host names for one web domain.
    #[derive(Default)]
    DomainAliases(DomainName), 0..=32, "alias", "aliases", |n| n.as_str()
);

distinct_list!(
    /// The users of a node's sudo allowlist: at most 64 distinct [`Username`]s.
    #[derive(Default)]
    SudoUsers(Username), 0..=64, "user", "users", |n| n.as_str()
);

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

bounded_u64!(
    /// How long a browser keeps to HTTPS after a `Strict-Transport-Security` header, in
    /// seconds: at most two years (63072000); 0 tells browsers to forget the policy.
    HstsMaxAge,
    63_072_000
);

string_type!(
    /// The account's own part of a MariaDB database or user name: `[a-z0-9]{1,32}`. The node
    /// names the object `<username>_<name>`; without `_` in this part, the full name tells
    /// whose it is (everything before the last `_`), so two accounts can never ask for the
    /// same object, and the result stays within MariaDB's limits (64 for a database).
    MysqlName,
    json_schema!({"type": "string", "pattern": "^[a-z0-9]{1,32}$", "minLength": 1, "maxLength": 32}),
    |s| {
        if s.is_empty() || s.len() > 32 || !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            return Err("expected 1 to 32 of [a-z0-9]".into());
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// A MariaDB `mysql_native_password` hash: `*` and 40 hexadecimal digits (what
    /// `PASSWORD()` returns), stored uppercase. The node never sees the password.
    MysqlPasswordHash,
    json_schema!({"type": "string", "pattern": "^\\*[0-9A-Fa-f]{40}$"}),
    |s| {
        let hex = s.strip_prefix('*').ok_or("expected `*` and 40 hexadecimal digits")?;
        if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("expected `*` and 40 hexadecimal digits".into());
        }
        Ok(format!("*{}", hex.to_ascii_uppercase()))
    }
);

string_type!(
    /// Where a MariaDB user may connect from: `localhost`, `%` (anywhere), an IPv4 or IPv6
    /// address, an IPv4 prefix pattern (`192.168.1.%`), or an IPv4 network as
    /// `address/netmask` or `address/prefix` (stored as `address/netmask`, the form MariaDB
    /// matches).
    MysqlHost,
    json_schema!({
        "type": "string",
        "maxLength": 60,
        "pattern": "^(localhost|%|[0-9a-fA-F:.]+(/[0-9.]+)?|([0-9]{1,3}\\.){1,3}%)$"
    }),
    |s| {
        use std::net::{IpAddr, Ipv4Addr};
        bounded(s, 60, "a host")?;
        if s == "localhost" || s == "%" {
            return Ok(s.to_owned());
        }
        if let Some(prefix) = s.strip_suffix('%') {
            let parts: Vec<&str> = prefix.strip_suffix('.').ok_or("a host pattern is `a.b.c.%`")?.split('.').collect();
            let ok = (1..=3).contains(&parts.len())
                && parts.iter().all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u8>().is_ok());
            return if ok { Ok(s.to_owned()) } else { Err("a host pattern is one to three IPv4 octets then `.%`".into()) };
        }
        if let Some((addr, mask)) = s.split_once('/') {
            let addr: Ipv4Addr = addr.parse().map_err(|_| "a network is an IPv4 address/netmask".to_string())?;
            let bits: u32 = if let Ok(prefix) = mask.parse::<u8>() {
                if prefix > 32 {
                    return Err("a prefix is at most 32".into());
                }
                if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) }
            } else {
                let m: Ipv4Addr = mask.parse().map_err(|_| "a netmask is an IPv4 address".to_string())?;
                u32::from(m)
            };
            if bits.leading_ones() + bits.trailing_zeros() != 32 {
                return Err("a netmask must be contiguous".into());
            }
            if u32::from(addr) & !bits != 0 {
                return Err("the address has bits outside the netmask".into());
            }
            return Ok(format!("{addr}/{}", Ipv4Addr::from(bits)));
        }
        let ip: IpAddr = s.parse().map_err(|_| "expected localhost, %, an address, a pattern or a network".to_string())?;
        Ok(ip.to_string())
    }
);

distinct_list!(
    /// Up to 16 distinct hosts a MariaDB user may connect from; `["localhost"]` by default.
    MysqlHosts(MysqlHost), 1..=16, "host", "hosts", |h| h.as_str()
);

impl Default for MysqlHosts {
    fn default() -> Self {
        MysqlHosts(vec![MysqlHost("localhost".into())])
    }
}

/// A MariaDB character set offered for new databases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum MysqlCharset {
    #[default]
    Utf8mb4,
    Utf8mb3,
    Latin1,
    Ascii,
}

/// A MariaDB collation; each belongs to one [`MysqlCharset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MysqlCollation {
    Utf8mb4UnicodeCi,
    Utf8mb4GeneralCi,
    Utf8mb4Bin,
    #[serde(rename = "utf8mb4_unicode_520_ci")]
    Utf8mb4Unicode520Ci,
    Utf8mb3UnicodeCi,
    Utf8mb3GeneralCi,
    Latin1SwedishCi,
    Latin1GeneralCi,
    Latin1Bin,
    AsciiGeneralCi,
    AsciiBin,
}

impl MysqlCollation {
    pub fn charset(self) -> MysqlCharset {
        use MysqlCollation::*;
        match self {
            Utf8mb4UnicodeCi | Utf8mb4GeneralCi | Utf8mb4Bin | Utf8mb4Unicode520Ci => {
                MysqlCharset::Utf8mb4
            }
            Utf8mb3UnicodeCi | Utf8mb3GeneralCi => MysqlCharset::Utf8mb3,
            Latin1SwedishCi | Latin1GeneralCi | Latin1Bin => MysqlCharset::Latin1,
            AsciiGeneralCi | AsciiBin => MysqlCharset::Ascii,
        }
    }
}

impl MysqlCharset {
    /// The collation used when the request names none (utf8mb4: `utf8mb4_unicode_ci`).
    pub fn default_collation(self) -> MysqlCollation {
        match self {
            MysqlCharset::Utf8mb4 => MysqlCollation::Utf8mb4UnicodeCi,
            MysqlCharset::Utf8mb3 => MysqlCollation::Utf8mb3UnicodeCi,
            MysqlCharset::Latin1 => MysqlCollation::Latin1SwedishCi,
            MysqlCharset::Ascii => MysqlCollation::AsciiGeneralCi,
        }
    }
}

/// What a MariaDB user may do in one database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MysqlPrivilegeSet {
    /// SELECT, SHOW VIEW, LOCK TABLES.
    ReadOnly,
    /// `read_only` plus INSERT, UPDATE, DELETE, CREATE TEMPORARY TABLES, EXECUTE.
    ReadWrite,
    /// `read_write` plus CREATE, DROP, ALTER, INDEX, REFERENCES, CREATE VIEW, CREATE ROUTINE,
    /// ALTER ROUTINE, EVENT, TRIGGER: everything on the database, nothing beyond it.
    All,
}

/// Whether a resource exists after an operation: what the OS shows, not what was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Present,
    Absent,
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

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
    fn only_user_quotas_limit_inodes() {
        assert!(!QuotaMechanism::BtrfsQgroup.limits_inodes());
        assert!(QuotaMechanism::UserQuota.limits_inodes());
        assert!(!QuotaMechanism::None.limits_inodes());
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

    /// Quotes, backticks, NUL, newline, CRLF, look-alikes, overlong: none is a MariaDB name,
    /// hash or host.
    const HOSTILE: &[&str] = &[
        "a'b", "a`b", "a\"b", "a\0b", "a\nb", "a\r\nb", "a;b", "a b", "a\\b", "а", "ａ", "a%",
        "a_b", "A", "", "x-y",
    ];

    #[test]
    fn mysql_names_are_lowercase_alphanumerics_only() {
        assert!(ok::<MysqlName>("shop1"));
        assert!(ok::<MysqlName>(&"a".repeat(32)));
        assert!(!ok::<MysqlName>(&"a".repeat(33)));
        for bad in HOSTILE {
            assert!(!ok::<MysqlName>(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn mysql_password_hash_is_native_only_and_stored_uppercase() {
        let h = "*2470c0c06dee42fd1618bb99005adca2ec9d1e19";
        assert_eq!(
            h.parse::<MysqlPasswordHash>().unwrap().as_str(),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        assert!(!ok::<MysqlPasswordHash>("secret"));
        assert!(!ok::<MysqlPasswordHash>(&h[..40]));
        assert!(!ok::<MysqlPasswordHash>(&format!("{h}0")));
        assert!(!ok::<MysqlPasswordHash>(&format!(
            "$6$saltsalt${}",
            "a".repeat(86)
        )));
        for bad in HOSTILE {
            assert!(!ok::<MysqlPasswordHash>(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn mysql_hosts_are_what_mariadb_matches() {
        for (input, stored) in [
            ("localhost", "localhost"),
            ("%", "%"),
            ("10.0.0.5", "10.0.0.5"),
            ("2001:DB8::1", "2001:db8::1"),
            ("192.168.1.%", "192.168.1.%"),
            ("10.%", "10.%"),
            ("10.1.0.0/16", "10.1.0.0/255.255.0.0"),
            ("10.1.2.0/255.255.255.0", "10.1.2.0/255.255.255.0"),
        ] {
            assert_eq!(input.parse::<MysqlHost>().unwrap().as_str(), stored);
        }
        for bad in [
            "example.com",
            "10.1.2.3/16",
            "10.0.0.0/255.0.255.0",
            "10.0.0.0/33",
            "300.1.1.1",
            "1.2.3.4.%",
            "%.example.com",
            "local host",
            "localhost\n",
        ] {
            assert!(!ok::<MysqlHost>(bad), "{bad:?} accepted");
        }
        for bad in HOSTILE {
            assert!(!ok::<MysqlHost>(bad), "{bad:?} accepted");
        }
        assert!(!ok::<MysqlHost>(&"1".repeat(61)));
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

ranged_u64!(
    /// CPU for one account, in % of one core (100 = one core), 1 to 6400 (64 cores).
    CpuPercent,
    1,
    6400
);

ranged_u64!(
    /// Physical memory for one account in MiB, 0 meaning unlimited, at most 1 TiB.
    MemoryMiB,
    0,
    1_048_576
);

ranged_u64!(
    /// Disk I/O for one account in KiB/s, 0 meaning unlimited, at most 10 GiB/s.
    IoKibPerSec,
    0,
    10_485_760
);

ranged_u64!(
    /// A count of processes (or entry processes), 0 meaning unlimited, at most 65535.
    ProcessCount,
    0,
    65_535
);

ranged_u64!(
    /// A MySQL Governor read or write limit in KiB/s, 1 KiB/s to 10 GiB/s. There is no
    /// "unlimited" 0: the governor reads 0 as "use the default".
    GovernorKibPerSec,
    1,
    10_485_760
);

#[cfg(test)]
mod ranged_tests {
    use super::*;

    #[test]
    fn ranged_integers_refuse_values_outside_their_bounds() {
        assert!(CpuPercent::try_from(0).is_err());
        assert_eq!(CpuPercent::try_from(1).unwrap().get(), 1);
        assert!(CpuPercent::try_from(6401).is_err());
        assert!(serde_json::from_str::<CpuPercent>("6400").is_ok());
        assert!(serde_json::from_str::<CpuPercent>("-1").is_err());
        assert!(serde_json::from_str::<CpuPercent>("1.5").is_err());
        assert!(serde_json::from_str::<MemoryMiB>("1048577").is_err());
        assert!(serde_json::from_str::<IoKibPerSec>("10485761").is_err());
        assert!(serde_json::from_str::<ProcessCount>("65536").is_err());
        assert!(serde_json::from_str::<GovernorKibPerSec>("0").is_err());
        assert!(serde_json::from_str::<GovernorKibPerSec>("10485761").is_err());
        assert_eq!(GovernorKibPerSec::try_from(1).unwrap().get(), 1);
        assert_eq!(serde_json::from_str::<ProcessCount>("0").unwrap().get(), 0);
    }
}

string_type!(
    /// An FTP virtual user's login: a lowercase letter, then up to 31 of `[a-z0-9._-]`. It
    /// names a line of pure-ftpd's passwd file, so it can hold no `:` and no newline.
    FtpLogin,
    json_schema!({"type": "string", "pattern": "^[a-z][a-z0-9._-]{0,31}$", "maxLength": 32}),
    |s| {
        let mut bytes = s.bytes();
        let first_ok = matches!(bytes.next(), Some(b'a'..=b'z'));
        if !first_ok
            || s.len() > 32
            || !bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'))
        {
            return Err("expected a lowercase letter then up to 31 of [a-z0-9._-]".into());
        }
        Ok(s.to_owned())
    }
);

#[cfg(test)]
mod ftp_login_tests {
    use super::*;

    #[test]
    fn ftp_logins_are_one_passwd_field() {
        for good in ["shop1", "shop1.upload", "a", "b-2_x"] {
            assert!(good.parse::<FtpLogin>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "Shop",
            "1shop",
            "shop:x",
            "shop\n",
            "shop/..",
            "a b",
            &"a".repeat(33),
        ] {
            assert!(bad.parse::<FtpLogin>().is_err(), "{bad:?} accepted");
        }
    }
}
