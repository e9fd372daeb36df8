//! Validated field types of the hosting families: PHP (versions, extensions, options),
//! scheduled tasks (cron schedules, URLs) and redirects.
//!
//! Every value here ends up inside a generated file (an FPM pool, a crontab line that
//! `/bin/sh` runs, an Apache directive), so each type admits only characters that cannot
//! open a new line, directive, section or shell word in the place it is written. The
//! generators quote anyway; these types make the quoting a second line of defence.

use super::*;

/// A PHP version the node knows of. Whether this node has it is observed at execution
/// (`observe_php_versions`), never assumed.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum PhpVersion {
    #[serde(rename = "7.4")]
    V7_4,
    #[serde(rename = "8.0")]
    V8_0,
    #[serde(rename = "8.1")]
    V8_1,
    #[serde(rename = "8.2")]
    V8_2,
    #[serde(rename = "8.3")]
    V8_3,
    #[serde(rename = "8.4")]
    V8_4,
}

impl PhpVersion {
    pub const ALL: &'static [PhpVersion] = &[
        PhpVersion::V7_4,
        PhpVersion::V8_0,
        PhpVersion::V8_1,
        PhpVersion::V8_2,
        PhpVersion::V8_3,
        PhpVersion::V8_4,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PhpVersion::V7_4 => "7.4",
            PhpVersion::V8_0 => "8.0",
            PhpVersion::V8_1 => "8.1",
            PhpVersion::V8_2 => "8.2",
            PhpVersion::V8_3 => "8.3",
            PhpVersion::V8_4 => "8.4",
        }
    }
}

/// A PHP extension a tenant may ask for: a closed allowlist of the common hosting ones.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PhpExtension {
    Bcmath,
    Bz2,
    Calendar,
    Ctype,
    Curl,
    Dom,
    Exif,
    Fileinfo,
    Ftp,
    Gd,
    Gettext,
    Gmp,
    Iconv,
    Imagick,
    Intl,
    Ldap,
    Mbstring,
    Memcached,
    Mysqli,
    Opcache,
    Pdo,
    PdoMysql,
    PdoPgsql,
    PdoSqlite,
    Pgsql,
    Redis,
    Soap,
    Sockets,
    Sodium,
    Sqlite3,
    Xml,
    Xmlreader,
    Xmlwriter,
    Xsl,
    Zip,
}

impl PhpExtension {
    /// The module name `php -m` lists (lowercased).
    pub fn module_name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .expect("a unit enum serializes to its name")
    }
}

distinct_list!(
    /// Up to 40 distinct extensions.
    #[derive(Default)]
    PhpExtensions(PhpExtension), 0..=40, "extension", "extensions", |e| e.module_name()
);

ranged_u64!(
    /// PHP's `memory_limit`, in MiB: 16 to 8192.
    PhpMemoryMiB,
    16,
    8192
);
ranged_u64!(
    /// PHP's `upload_max_filesize` and `post_max_size`, in MiB: 1 to 4096.
    PhpSizeMiB,
    1,
    4096
);
ranged_u64!(
    /// PHP's `max_execution_time` and `max_input_time`, in seconds: 1 to 3600.
    PhpSeconds,
    1,
    3600
);
ranged_u64!(
    /// PHP's `max_input_vars`: 100 to 100000.
    PhpInputVars,
    100,
    100_000
);

ranged_u64!(
    /// How long a scheduled fetch may take, in seconds: 1 to 300.
    FetchTimeout,
    1,
    300
);

/// Makes a struct deserialize from a JSON object only. serde would also build a struct from
/// an array of its field values; the derive is kept (as `#[serde(remote = "Self")]`, an
/// inherent function) and fed through the map visitor, so field errors keep their path.
macro_rules! object_only {
    ($name:ident) => {
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct ObjectOnly;
                impl<'de> serde::de::Visitor<'de> for ObjectOnly {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> Result<$name, A::Error> {
                        $name::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                d.deserialize_map(ObjectOnly)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $name::serialize(self, s)
            }
        }
    };
}

/// The PHP settings a tenant may choose, each typed and bounded. Absent means PHP's default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct PhpOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_mib: Option<PhpMemoryMiB>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_max_filesize_mib: Option<PhpSizeMiB>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_max_size_mib: Option<PhpSizeMiB>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_execution_time_s: Option<PhpSeconds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_time_s: Option<PhpSeconds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_vars: Option<PhpInputVars>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_errors: Option<bool>,
}

object_only!(PhpOptions);

/// What a scheduled task runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TaskKind {
    PhpScript(PhpScriptTask),
    FetchUrl(FetchUrlTask),
}

/// A PHP script in the tenant's home.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct PhpScriptTask {
    /// The script, relative to the home.
    pub path: HomePath,
    /// The PHP version whose command-line binary runs it; must be installed.
    pub php_version: PhpVersion,
}

object_only!(PhpScriptTask);

/// An HTTP(S) URL to request; the response is discarded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct FetchUrlTask {
    pub url: HttpUrl,
    /// Seconds before curl gives up: 1 to 300.
    pub timeout_s: FetchTimeout,
}

object_only!(FetchUrlTask);

const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const CRON_MACROS: [&str; 6] = [
    "@hourly",
    "@daily",
    "@weekly",
    "@monthly",
    "@yearly",
    "@annually",
];

/// One field of a schedule: its name, bounds and the names it accepts.
struct CronField {
    what: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    first_name: u32,
}

const CRON_FIELDS: [CronField; 5] = [
    CronField {
        what: "minute",
        min: 0,
        max: 59,
        names: &[],
        first_name: 0,
    },
    CronField {
        what: "hour",
        min: 0,
        max: 23,
        names: &[],
        first_name: 0,
    },
    CronField {
        what: "day of month",
        min: 1,
        max: 31,
        names: &[],
        first_name: 0,
    },
    CronField {
        what: "month",
        min: 1,
        max: 12,
        names: &MONTH_NAMES,
        first_name: 1,
    },
    CronField {
        what: "day of week",
        min: 0,
        max: 7,
        names: &DAY_NAMES,
        first_name: 0,
    },
];

fn cron_value(field: &CronField, s: &str) -> Result<u32, String> {
    if let Some(i) = field.names.iter().position(|n| *n == s) {
        return Ok(i as u32 + field.first_name);
    }
    if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{}: {s:?} is not a number or name", field.what));
    }
    let n: u32 = s
        .parse()
        .map_err(|_| format!("{}: {s:?} is not a number", field.what))?;
    if n < field.min || n > field.max {
        return Err(format!(
            "{}: {n} is outside {}-{}",
            field.what, field.min, field.max
        ));
    }
    Ok(n)
}

fn cron_field(field: &CronField, text: &str) -> Result<(), String> {
    if text.split(',').count() > 32 {
        return Err(format!("{}: at most 32 list items", field.what));
    }
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (item, None),
        };
        if let Some(step) = step {
            let span = field.max - field.min + 1;
            let ok = !step.is_empty()
                && step.len() <= 2
                && step.bytes().all(|b| b.is_ascii_digit())
                && step.parse::<u32>().is_ok_and(|s| (1..=span).contains(&s));
            if !ok {
                return Err(format!("{}: step {step:?} must be 1-{span}", field.what));
            }
        }
        if range == "*" {
            continue;
        }
        match range.split_once('-') {
            Some((a, b)) => {
                if cron_value(field, a)? > cron_value(field, b)? {
                    return Err(format!("{}: range {range} is reversed", field.what));
                }
            }
            None => {
                cron_value(field, range)?;
                if step.is_some() {
                    return Err(format!("{}: a step needs * or a range", field.what));
                }
            }
        }
    }
    Ok(())
}

string_type!(
    /// A cron schedule: five fields separated by single spaces (minute 0-59, hour 0-23, day of
    /// month 1-31, month 1-12 or `jan`-`dec`, day of week 0-7 or `sun`-`sat`), each a list of
    /// `*`, a number or name, a range `a-b`, with an optional step `/n`; or one of the macros
    /// `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`, `@annually`. Names are
    /// lowercase.
    CronSchedule,
    json_schema!({
        "type": "string",
        "maxLength": 200,
        "pattern": "^(@(hourly|daily|weekly|monthly|yearly|annually)|[0-9a-z*/,-]+( [0-9a-z*/,-]+){4})$"
    }),
    |s| {
        bounded(s, 200, "a schedule")?;
        if s.starts_with('@') {
            return if CRON_MACROS.contains(&s) {
                Ok(s.to_owned())
            } else {
                Err(format!("unknown schedule macro {s:?}"))
            };
        }
        if !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'z' | b'*' | b'/' | b',' | b'-' | b' ')) {
            return Err("a schedule is made of digits, lowercase names, `*/,-` and single spaces".into());
        }
        let fields: Vec<&str> = s.split(' ').collect();
        if fields.len() != 5 {
            return Err(format!("expected 5 fields separated by single spaces, got {}", fields.len()));
        }
        for (field, text) in CRON_FIELDS.iter().zip(&fields) {
            cron_field(field, text)?;
        }
        Ok(s.to_owned())
    }
);

/// Characters allowed after the host of an [`HttpUrl`]: RFC 3986's unreserved and
/// sub-delims, `:`, `@`, `/`, `?` and `%`-escapes; not `'`, `"`, `\`, `$`, `#`, spaces or
/// controls, which would matter to a shell, to Apache's quoting or to a substitution.
fn url_tail_ok(tail: &str) -> bool {
    let bytes = tail.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(|c| c.is_ascii_hexdigit());
            if !hex(i + 1) || !hex(i + 2) {
                return false;
            }
            i += 3;
            continue;
        }
        let ok = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'&'
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
                    | b'?'
            );
        if !ok {
            return false;
        }
        i += 1;
    }
    true
}

string_type!(
    /// An absolute `http://` or `https://` URL: a lowercase domain name host (no user info, no
    /// IP literal), an optional port, then a path and query of URL-safe characters (no
    /// quotes, backslash, `$`, `#`, spaces or controls). At most 2048 bytes.
    HttpUrl,
    json_schema!({
        "type": "string",
        "maxLength": 2048,
        "pattern": "^https?://[a-z0-9.-]+(:[0-9]{1,5})?([/?][A-Za-z0-9._~!&()*+,;=:@/?%-]*)?$"
    }),
    |s| {
        bounded(s, 2048, "a URL")?;
        let rest = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .ok_or("expected an http:// or https:// URL")?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let parsed: DomainName = host.parse().map_err(|e| format!("host: {e}"))?;
        if parsed.as_str() != host {
            return Err("the host must be a lowercase ASCII domain name".into());
        }
        if let Some(port) = port {
            let ok = !port.is_empty()
                && port.len() <= 5
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p));
            if !ok {
                return Err("the port must be 1-65535".into());
            }
        }
        if !url_tail_ok(tail) {
            return Err("the path and query may hold only URL-safe characters and %-escapes".into());
        }
        Ok(s.to_owned())
    }
);

string_type!(
    /// A URL path prefix to redirect: `/` then segments of `[A-Za-z0-9._~-]` separated by
    /// single slashes, an optional trailing slash, no `.` or `..` segment, at most 255 bytes;
    /// never beneath `/.well-known/acme-challenge/`, which stays reachable for certificates.
    RedirectSource,
    json_schema!({
        "type": "string",
        "maxLength": 255,
        "pattern": "^/([A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*/?)?$"
    }),
    |s| {
        bounded(s, 255, "a redirect source")?;
        let body = s.strip_prefix('/').ok_or("a redirect source starts with /")?;
        let body = body.strip_suffix('/').unwrap_or(body);
        if !body.is_empty() {
            for segment in body.split('/') {
                if segment.is_empty()
                    || segment == "."
                    || segment == ".."
                    || !segment.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-'))
                {
                    return Err(format!("segment {segment:?} is not allowed"));
                }
            }
        }
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("/.well-known/acme-challenge") {
            return Err("the ACME challenge path is never redirected".into());
        }
        Ok(s.to_owned())
    }
);

/// An HTTP redirect status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectStatus {
    MovedPermanently,
    Found,
    TemporaryRedirect,
    PermanentRedirect,
}

impl RedirectStatus {
    pub fn code(self) -> u16 {
        match self {
            RedirectStatus::MovedPermanently => 301,
            RedirectStatus::Found => 302,
            RedirectStatus::TemporaryRedirect => 307,
            RedirectStatus::PermanentRedirect => 308,
        }
    }
}

impl Serialize for RedirectStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(self.code())
    }
}

impl<'de> Deserialize<'de> for RedirectStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u64::deserialize(d)? {
            301 => Ok(RedirectStatus::MovedPermanently),
            302 => Ok(RedirectStatus::Found),
            307 => Ok(RedirectStatus::TemporaryRedirect),
            308 => Ok(RedirectStatus::PermanentRedirect),
            other => Err(serde::de::Error::custom(format!(
                "{other} is not a redirect status (301, 302, 307, 308)"
            ))),
        }
    }
}

impl JsonSchema for RedirectStatus {
    fn schema_name() -> Cow<'static, str> {
        "RedirectStatus".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "enum": [301, 302, 307, 308]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_schedules_are_parsed_field_by_field() {
        for good in [
            "* * * * *",
            "*/5 * * * *",
            "0 3 1-15/2 jan-mar mon,wed,fri",
            "59 23 31 12 7",
            "0,15,30,45 8-18 * * 1-5",
            "@daily",
        ] {
            assert!(good.parse::<CronSchedule>().is_ok(), "{good}");
        }
        for bad in [
            "60 * * * *",
            "* 24 * * *",
            "* * 0 * *",
            "* * * 13 *",
            "* * * * 8",
            "*/0 * * * *",
            "*/61 * * * *",
            "5-1 * * * *",
            "5/2 * * * *",
            "* * * *",
            "* * * * * *",
            "*  * * * *",
            "* * * * *\n",
            "* * * * * /bin/sh",
            "@reboot",
            "@daily x",
            "* * * JAN *",
            "+1 * * * *",
            "001 * * * *",
            "",
        ] {
            assert!(bad.parse::<CronSchedule>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn urls_admit_only_safe_characters() {
        for good in [
            "https://example.com",
            "https://example.com/cron.php?key=a1&x=%20y",
            "http://shop.example.com:8080/a/b(c)",
        ] {
            assert!(good.parse::<HttpUrl>().is_ok(), "{good}");
        }
        for bad in [
            "ftp://example.com/",
            "https://user@example.com/",
            "https://127.0.0.1/",
            "https://Example.com/",
            "https://example.com/'; rm -rf /",
            "https://example.com/a b",
            "https://example.com/$(id)",
            "https://example.com/`id`",
            "https://example.com/a\"b",
            "https://example.com/a\\b",
            "https://example.com/a\nb",
            "https://example.com/#frag",
            "https://example.com/%zz",
            "https://example.com:0/",
            "https://example.com:99999/",
        ] {
            assert!(bad.parse::<HttpUrl>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn redirect_sources_are_plain_prefixes_and_never_the_challenge_path() {
        for good in ["/", "/old", "/old/", "/a/b.html", "/~user"] {
            assert!(good.parse::<RedirectSource>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "old",
            "//x",
            "/a//b",
            "/../etc",
            "/a/./b",
            "/a b",
            "/a\"b",
            "/.well-known/acme-challenge/x",
            "/.Well-Known/ACME-challenge",
            "/a$",
            "/(.*)",
        ] {
            assert!(bad.parse::<RedirectSource>().is_err(), "{bad:?}");
        }
    }
}

// The web access families' types (protected directories, IP blocks), after the macros.
#[path = "access.rs"]
mod access;
pub use access::*;
