//! Validated types of the mail families: what Postfix, Dovecot, Pigeonhole and OpenDKIM
//! accept, narrowed to what cannot break the files the node derives from them (a `:` ends a
//! passwd-file field, whitespace or `,` a Postfix table value, `"` a Sieve string).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};

use super::{DomainName, bounded};

fn dot_atom(s: &str, allowed: fn(u8) -> bool, what: &str) -> Result<(), String> {
    bounded(s, 64, what)?;
    if !s.bytes().all(allowed) {
        return Err(format!("{what} has a character outside the allowed set"));
    }
    if s.starts_with('.') || s.ends_with('.') || s.contains("..") {
        return Err(format!(
            "{what} must not start or end with a dot or hold two dots in a row"
        ));
    }
    Ok(())
}

string_type!(
    /// The local part of a hosted mailbox: 1 to 64 of `[a-z0-9._-]`, starting and ending with
    /// a letter or digit, no two dots in a row. Lowercase only (Postfix's tables and
    /// Dovecot's `%Lu` lookups are case-insensitive, so `Info` and `info` would be one box);
    /// no `+` (the recipient delimiter).
    MailLocalPart,
    json_schema!({
        "type": "string",
        "maxLength": 64,
        "pattern": "^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$"
    }),
    |s| {
        dot_atom(
            s,
            |b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'),
            "a mailbox local part",
        )?;
        let edge_ok = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
        if !edge_ok(s.bytes().next()) || !edge_ok(s.bytes().last()) {
            return Err("a mailbox local part starts and ends with a letter or digit".into());
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// An email address `local@domain`: the local part is 1 to 64 of `[A-Za-z0-9._+=-]`
    /// (no leading, trailing or double dot); the domain is a [`DomainName`] (stored as
    /// lowercase punycode). No quoting, comments, spaces or commas.
    MailAddress,
    json_schema!({
        "type": "string",
        "maxLength": 318,
        "pattern": "^[A-Za-z0-9._+=-]{1,64}@[^@\\s]{3,253}$"
    }),
    |s| {
        bounded(s, 1024, "an email address")?;
        let (local, domain) = s.rsplit_once('@').ok_or("expected local@domain")?;
        dot_atom(
            local,
            |b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'=' | b'-'),
            "the local part",
        )?;
        let domain: DomainName = domain.parse()?;
        Ok(format!("{local}@{domain}"))
    }
);

impl MailAddress {
    /// The domain part (lowercase punycode).
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map_or("", |(_, d)| d)
    }
    /// The local part.
    pub fn local(&self) -> &str {
        self.0.rsplit_once('@').map_or("", |(l, _)| l)
    }
}

distinct_list!(
    /// Where a forwarder delivers: 1 to 32 distinct [`MailAddress`]es.
    MailDestinations(MailAddress), 1..=32, "destination", "destinations", |a| a.as_str()
);

string_type!(
    /// A DKIM selector: one DNS label, `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`.
    DkimSelector,
    json_schema!({"type": "string", "maxLength": 63, "pattern": "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"}),
    |s| {
        bounded(s, 63, "a DKIM selector")?;
        let ok = s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.starts_with('-')
            && !s.ends_with('-');
        if !ok {
            return Err("a DKIM selector is one lowercase DNS label".into());
        }
        Ok(s.to_owned())
    }
);

/// The size of a DKIM RSA key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DkimKeyBits {
    Rsa1024,
    #[default]
    Rsa2048,
    Rsa4096,
}

impl DkimKeyBits {
    pub fn bits(self) -> u32 {
        match self {
            DkimKeyBits::Rsa1024 => 1024,
            DkimKeyBits::Rsa2048 => 2048,
            DkimKeyBits::Rsa4096 => 4096,
        }
    }
}

/// How hard a domain's incoming mail is filtered (Postfix restriction classes; see the
/// `spam_filter` family).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpamLevel {
    #[default]
    Off,
    Standard,
    Strict,
}

fn text(s: &str, max: usize, newlines: bool, what: &str) -> Result<String, String> {
    bounded(s, max, what)?;
    if let Some(c) = s
        .chars()
        .find(|&c| c.is_control() && !(newlines && (c == '\n' || c == '\t')))
    {
        return Err(format!(
            "{what} must not contain the control character U+{:04X}",
            c as u32
        ));
    }
    Ok(s.to_owned())
}

string_type!(
    /// An autoresponder's subject: 1 to 255 bytes of text without control characters.
    SieveSubject,
    json_schema!({"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$"}),
    |s| text(s, 255, false, "a subject")
);

string_type!(
    /// An autoresponder's body: 1 to 8192 bytes of text; newlines and tabs are the only
    /// control characters allowed.
    SieveBody,
    json_schema!({"type": "string", "minLength": 1, "maxLength": 8192, "pattern": "^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]+$"}),
    |s| text(s, 8192, true, "a body")
);

string_type!(
    /// A calendar date `YYYY-MM-DD` (years 2000 to 2999).
    IsoDate,
    json_schema!({"type": "string", "pattern": "^2[0-9]{3}-[0-9]{2}-[0-9]{2}$"}),
    |s| {
        let bad = || "expected a date YYYY-MM-DD".to_string();
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(bad());
        }
        let num = |r: std::ops::Range<usize>| -> Result<u32, String> {
            let part = &s[r];
            if !part.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse().map_err(|_| bad())
        };
        let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let days = match m {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return Err("no such month".into()),
        };
        if !(2000..=2999).contains(&y) || d == 0 || d > days {
            return Err("no such date".into());
        }
        Ok(s.to_owned())
    }
);

/// How often (in days) the same sender gets the autoresponse again: 1 to 60 (Pigeonhole's
/// limits as the node configures them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct VacationDays(u64);

impl VacationDays {
    pub fn get(self) -> u64 {
        self.0
    }
}

impl Default for VacationDays {
    fn default() -> Self {
        VacationDays(7)
    }
}

impl<'de> Deserialize<'de> for VacationDays {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        if (1..=60).contains(&v) {
            Ok(VacationDays(v))
        } else {
            Err(serde::de::Error::custom("between 1 and 60 days"))
        }
    }
}

impl JsonSchema for VacationDays {
    fn schema_name() -> Cow<'static, str> {
        "VacationDays".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": 60})
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn ok<T: FromStr>(s: &str) -> bool {
        s.parse::<T>().is_ok()
    }

    #[test]
    fn local_parts_are_what_postfix_and_dovecot_take_safely() {
        for good in ["info", "a", "first.last", "x_y-z", "0"] {
            assert!(ok::<MailLocalPart>(good), "{good} refused");
        }
        for bad in [
            "",
            "Info",
            ".a",
            "a.",
            "a..b",
            "a+b",
            "a:b",
            "a b",
            "a\nb",
            "a\"b",
            "a,b",
            "a@b",
            "-a",
            "а", // Cyrillic a
            &"a".repeat(65),
        ] {
            assert!(!ok::<MailLocalPart>(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn addresses_normalise_the_domain_and_refuse_separators() {
        assert_eq!(
            "Bob.Smith+x@Example.COM"
                .parse::<MailAddress>()
                .unwrap()
                .as_str(),
            "Bob.Smith+x@example.com"
        );
        for bad in [
            "a@b",
            "a",
            "@example.com",
            "a b@example.com",
            "a,b@example.com",
            "a\r\n@example.com",
            "a@example.com\n",
            "\"a\"@example.com",
            "a:b@example.com",
            "a@exa mple.com",
        ] {
            assert!(!ok::<MailAddress>(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn texts_refuse_control_characters_and_dates_are_real() {
        assert!(ok::<SieveSubject>("Out of office \"really\" \\ ok"));
        assert!(!ok::<SieveSubject>("a\nb"));
        assert!(ok::<SieveBody>("line one\nline two\twith tab"));
        assert!(!ok::<SieveBody>("a\r\nb"));
        assert!(!ok::<SieveBody>("a\0b"));
        assert!(ok::<IsoDate>("2028-02-29"));
        assert!(!ok::<IsoDate>("2027-02-29"));
        assert!(!ok::<IsoDate>("2027-13-01"));
        assert!(!ok::<IsoDate>("27-01-01"));
        assert!(ok::<DkimSelector>("mail2026"));
        assert!(!ok::<DkimSelector>("a.b"));
        assert!(!ok::<DkimSelector>("-a"));
    }
}
