//! The numeric query parameters of the paged reads (`/v1/events`, `/v1/audit`), parsed by hand
//! so that every problem is a 400 naming the parameter.

use crate::error::ApiError;

/// The error for parameter `field` (at most 64 characters of it echoed back).
pub(crate) fn bad(field: &str, message: String) -> ApiError {
    ApiError::Query {
        field: field.chars().take(64).collect(),
        message,
    }
}

/// Each of `names` as a non-negative integer, in the same order, `None` when absent. An unknown
/// parameter, one given twice or one that is not an integer is refused; the caller checks
/// ranges.
pub(crate) fn numeric<const N: usize>(
    query: Option<&str>,
    names: [&str; N],
) -> Result<[Option<u64>; N], ApiError> {
    let mut values = [None; N];
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(slot) = names.iter().position(|name| *name == key) else {
            return Err(bad(
                key,
                format!("unknown parameter; expected {}", one_of(&names)),
            ));
        };
        if values[slot].is_some() {
            return Err(bad(key, "given more than once".into()));
        }
        let number: u64 = value.parse().map_err(|_| {
            bad(
                key,
                format!(
                    "expected a non-negative integer, got {:?}",
                    value.chars().take(32).collect::<String>()
                ),
            )
        })?;
        values[slot] = Some(number);
    }
    Ok(values)
}

/// `a`, `a or b`, `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A cursor: any integer that fits SQLite's signed 64 bits.
pub(crate) fn cursor(field: &str, value: Option<u64>) -> Result<i64, ApiError> {
    value.map_or(Ok(0), |n| {
        i64::try_from(n).map_err(|_| bad(field, "too large".into()))
    })
}

/// A page size between 1 and `max`, `default` when absent.
pub(crate) fn limit(
    field: &str,
    value: Option<u64>,
    default: u32,
    max: u32,
) -> Result<u32, ApiError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=u64::from(max)).contains(&n) => Ok(n as u32),
        Some(_) => Err(bad(field, format!("between 1 and {max}"))),
    }
}
