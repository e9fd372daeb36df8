//! Validated field types of the web access families: protected directories (HTTP Basic
//! authentication) and IP blocks. Every value ends up in an Apache vhost or an `AuthUserFile`,
//! so each admits only characters that cannot open a new line, directive, section, quoted
//! string, variable (`${...}`) or expression (`%{...}`) where it is written.

use std::net::IpAddr;

use super::*;

string_type!(
    /// A directory beneath a web domain's document root: 1 to 16 segments of
    /// `[A-Za-z0-9_-][A-Za-z0-9._-]*` separated by single slashes, at most 255 bytes. No
    /// leading slash, no `.` or `..` segment, no hidden segment, so it can never name
    /// `.well-known/acme-challenge` or leave the document root.
    ProtectedPath,
    json_schema!({
        "type": "string",
        "maxLength": 255,
        "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*){0,15}$"
    }),
    |s| {
        bounded(s, 255, "a protected directory")?;
        let segments: Vec<&str> = s.split('/').collect();
        if segments.len() > 16 {
            return Err("at most 16 path segments".into());
        }
        for segment in segments {
            let mut bytes = segment.bytes();
            let first_ok = bytes
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
            if !first_ok
                || !bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            {
                return Err(format!("segment {segment:?} is not allowed"));
            }
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// The realm a browser shows in its password dialog (`AuthName "..."`): 1 to 64 bytes of
    /// letters, digits, spaces and `-_.,:;!?()@#+=/'`, not starting or ending with a space.
    /// No quote, backslash, `$` or `%`: Apache reads `${...}` as a variable and `%{...}` as an
    /// expression inside the quoted string.
    AuthRealm,
    json_schema!({
        "type": "string",
        "maxLength": 64,
        "pattern": "^[A-Za-z0-9_.,:;!?()@#+=/'-]([A-Za-z0-9 _.,:;!?()@#+=/'-]*[A-Za-z0-9_.,:;!?()@#+=/'-])?$"
    }),
    |s| {
        bounded(s, 64, "a realm")?;
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b" _.,:;!?()@#+=/'-".contains(&b);
        if !s.bytes().all(allowed) {
            return Err("a realm admits letters, digits, spaces and -_.,:;!?()@#+=/' only".into());
        }
        if s.starts_with(' ') || s.ends_with(' ') {
            return Err("a realm does not start or end with a space".into());
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// A user name of a protected directory: 1 to 64 bytes of `[A-Za-z0-9._@-]`, starting
    /// with a letter or digit (no `:`, which ends the name in an `AuthUserFile` line).
    AuthUserName,
    json_schema!({
        "type": "string",
        "maxLength": 64,
        "pattern": "^[A-Za-z0-9][A-Za-z0-9._@-]*$"
    }),
    |s| {
        bounded(s, 64, "a user name")?;
        let mut bytes = s.bytes();
        if !bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
            || !bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'-'))
        {
            return Err("a user name is [A-Za-z0-9][A-Za-z0-9._@-]*".into());
        }
        Ok(s.to_owned())
    }
);

/// One user of a protected directory: a name and its crypt SHA-512 hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct AuthUser {
    pub name: AuthUserName,
    /// crypt(3) SHA-512 (`$6$...`); Apache checks it with the system's crypt().
    pub password_hash: PasswordHash,
}

object_only!(AuthUser);

distinct_list!(
    /// 1 to 100 users with distinct names.
    AuthUsers(AuthUser), 1..=100, "user", "users", |u| u.name.as_str(), unique_items = false
);

string_type!(
    /// An IPv4 or IPv6 address, or a network in CIDR form (`192.0.2.0/24`, `2001:db8::/32`),
    /// in the canonical spelling Rust's parser gives back (so `Require not ip` reads exactly
    /// what was validated). The prefix is 0 to 32 (IPv4) or 0 to 128 (IPv6).
    IpNetwork,
    json_schema!({
        "type": "string",
        "maxLength": 43,
        "pattern": "^[0-9A-Fa-f.:]+(/[0-9]{1,3})?$"
    }),
    |s| {
        bounded(s, 43, "an IP network")?;
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let ip: IpAddr = addr
            .parse()
            .map_err(|_| format!("{addr:?} is not an IP address"))?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let canonical = match prefix {
            Some(p) => {
                if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err("the prefix length is a number".into());
                }
                let len: u32 = p.parse().map_err(|_| "the prefix length is a number".to_string())?;
                if len > max {
                    return Err(format!("the prefix length is at most {max}"));
                }
                format!("{ip}/{len}")
            }
            None => ip.to_string(),
        };
        if canonical != s {
            return Err(format!("write it as {canonical}"));
        }
        Ok(canonical)
    }
);

distinct_list!(
    /// 1 to 200 distinct addresses or networks.
    IpNetworks(IpNetwork), 1..=200, "network", "addresses or networks", |n| n.as_str()
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_stay_beneath_the_document_root() {
        for good in ["private", "a/b-c/d_e", "v1.2/files", "x"] {
            assert!(good.parse::<ProtectedPath>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "/private",
            "private/",
            "a//b",
            "../etc",
            "a/../b",
            "./a",
            ".well-known/acme-challenge",
            ".htpasswd",
            "a/.git",
            "a b",
            "a\"b",
            "a\nb",
            "${HOME}",
            "a/%{x}",
            "a:b",
        ] {
            assert!(bad.parse::<ProtectedPath>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn realms_are_safe_inside_an_apache_quoted_string() {
        for good in ["Staff only", "Members' area (2026)", "a"] {
            assert!(good.parse::<AuthRealm>().is_ok(), "{good}");
        }
        for bad in [
            "",
            " x",
            "x ",
            "a\"b",
            "a\\b",
            "${APACHE_RUN_USER}",
            "%{REMOTE_ADDR}",
            "a\nRequire all granted",
            "a\tb",
            "Zoë",
        ] {
            assert!(bad.parse::<AuthRealm>().is_err(), "{bad:?}");
        }
        assert!("x".repeat(65).parse::<AuthRealm>().is_err());
    }

    #[test]
    fn ip_networks_are_canonical_addresses_or_cidr() {
        for good in [
            "192.0.2.1",
            "192.0.2.0/24",
            "2001:db8::/32",
            "::1",
            "0.0.0.0/0",
        ] {
            assert_eq!(good.parse::<IpNetwork>().unwrap().as_str(), good);
        }
        for bad in [
            "",
            "192.0.2.0/33",
            "2001:db8::/129",
            "192.0.2.0/",
            "192.0.2.0/+8",
            "192.0.2.01",
            "2001:DB8::1",
            "192.0.2.1 10.0.0.1",
            "localhost",
            "all",
            "192.0.2.0/24\nRequire all granted",
        ] {
            assert!(bad.parse::<IpNetwork>().is_err(), "{bad:?}");
        }
    }
}
