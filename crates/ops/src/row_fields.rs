//! Serde helpers the families' stored rows share, so each row serializes to exactly the JSON
//! its family has always stored: a flag stored only when set, a field stored as `null` once
//! recorded empty.

use serde::{Deserialize, Deserializer};

/// For `skip_serializing_if`: a flag stored only when it is set (`"suspended": true`).
pub(crate) fn is_false(flag: &bool) -> bool {
    !*flag
}

/// For `deserialize_with` on an `Option<Option<T>>` with `default`: a field absent is `None`
/// (never recorded), present as `null` is `Some(None)` (recorded empty).
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
