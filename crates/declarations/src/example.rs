//! What the examples are built from, and how a test makes more resources like them.
//!
//! The examples of all operations describe one tenant: the account `a1a1…` (user `shop1`),
//! its web domain `c3c3…` (`shop.example.com`), its mail domain `d4d4…`, its mailbox `e5e5…`
//! and so on. An operation's example names the same ids as the examples of the operations it
//! follows, so that applied in the order of [`registry::Registry::prerequisites`] they build
//! that tenant: the crash matrix and the purge test do exactly that.
//!
//! Every name in an example that the node keeps unique (a user name, a domain, an FTP login, a
//! database's or a database user's name) contains one of [`DISTINCT_STEMS`], so [`another`]
//! can make a second account, or a second resource of a family, out of the same examples: the
//! seeded histories draw from those.

use std::str::FromStr;

use registry::types::Hex32;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The example account's id byte: its id is [`account()`].
pub const ACCOUNT: u8 = 0xa1;

/// An example id: `byte` sixteen times, `c3c3…c3`.
pub fn id(byte: u8) -> Hex32 {
    parse(&format!("{byte:02x}").repeat(16))
}

/// The example account's id, which every tenant example names as its owner.
pub fn account() -> Hex32 {
    id(ACCOUNT)
}

/// A validated value from its text, for an example the registry's check proves valid.
pub fn parse<T: FromStr>(text: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    text.parse().expect("an example is valid (Registry::check)")
}

/// A bounded number, for an example the registry's check proves valid.
pub fn number<T: TryFrom<u64>>(n: u64) -> T
where
    T::Error: std::fmt::Debug,
{
    T::try_from(n).expect("an example is valid (Registry::check)")
}

/// A validated value from its JSON form (a list, a set of options), for an example the
/// registry's check proves valid.
pub fn json<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("an example is valid (Registry::check)")
}

/// What every unique name of an example contains (`shop1`, `shop.example.com`, `shop1.upload`,
/// the database `shop`, the database user `app`).
pub const DISTINCT_STEMS: &[&str] = &["shop", "app"];

/// The most accounts, and resources of one family per account, [`another`] tells apart.
pub const INSTANCES: u8 = 4;

/// A tenant request (an example, as JSON) for resource `instance` of account `account`: every
/// id and every unique name of the example made distinct, consistently, so that the requests
/// of one slot name one another (a redirect its web domain, a grant its database and user) as
/// the examples do. `(0, 0)` is the example itself. A request whose id is the account's own is
/// about the account, which has one instance: it takes instance 0. Node-scope requests name
/// the node's one resource of their family and are not for this.
pub fn another(request: &Value, account: u8, instance: u8) -> Value {
    assert!(
        account < INSTANCES && instance < INSTANCES,
        "another() tells {INSTANCES} accounts and instances apart"
    );
    let account_id = self::account().to_string();
    let instance = if request["id"] == account_id.as_str() {
        0
    } else {
        instance
    };
    relabel(request, &account_id, account, instance)
}

fn relabel(value: &Value, account_id: &str, account: u8, instance: u8) -> Value {
    match value {
        Value::String(text) => Value::String(relabel_text(text, account_id, account, instance)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| relabel(v, account_id, account, instance))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), relabel(v, account_id, account, instance)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn relabel_text(text: &str, account_id: &str, account: u8, instance: u8) -> String {
    let is_id = text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit());
    // The account's id names the account wherever it appears: one instance of it.
    let instance = if is_id && text == account_id {
        0
    } else {
        instance
    };
    if (account, instance) == (0, 0) {
        return text.to_owned();
    }
    if is_id {
        return format!("{}{account:x}{instance:x}", &text[..30]);
    }
    let suffix: String = [account, instance]
        .iter()
        .map(|n| char::from(b'a' + n))
        .collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while !rest.is_empty() {
        match DISTINCT_STEMS.iter().find(|stem| rest.starts_with(*stem)) {
            Some(stem) => {
                out.push_str(stem);
                out.push_str(&suffix);
                rest = &rest[stem.len()..];
            }
            None => {
                let c = rest.chars().next().expect("rest is not empty");
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}
