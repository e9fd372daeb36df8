//! The bearer key: generated once, stored on the node only as its SHA-256, compared in
//! constant time. Every endpoint but `/v1/health` needs it.

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A new API key: 32 random bytes from the OS, as 64 hex digits.
pub fn generate_api_key() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .expect("the OS random source is available on every supported Linux");
    hex::encode(bytes)
}

/// The hash the node stores and compares against.
pub fn key_sha256(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Parses the hex form of [`key_sha256`] (as the `--api-key-sha256-file` holds it).
pub fn parse_key_sha256(hex_text: &str) -> Result<[u8; 32], String> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex_text.trim(), &mut out)
        .map_err(|_| "expected the hex SHA-256 of the API key: 64 hexadecimal digits".to_owned())?;
    Ok(out)
}

/// Whether the request carries exactly one `Authorization: Bearer <key>` whose hash matches.
pub(crate) fn authorized(headers: &HeaderMap, expected: &[u8; 32]) -> bool {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return false;
    };
    let Some((scheme, key)) = value.to_str().ok().and_then(|v| v.trim().split_once(' ')) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return false;
    }
    // Hashing first makes the comparison constant-time in the key's length as well.
    key_sha256(key.trim()).ct_eq(expected).into()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_the_right_bearer_key_is_accepted() {
        let key = generate_api_key();
        assert_eq!(key.len(), 64);
        let hash = key_sha256(&key);
        assert!(authorized(&headers(&[&format!("Bearer {key}")]), &hash));
        assert!(authorized(&headers(&[&format!("bearer {key}")]), &hash));
        assert!(!authorized(&headers(&[]), &hash));
        assert!(!authorized(&headers(&[&key]), &hash));
        assert!(!authorized(&headers(&[&format!("Basic {key}")]), &hash));
        assert!(!authorized(&headers(&[&format!("Bearer {key}x")]), &hash));
        assert!(!authorized(
            &headers(&[&format!("Bearer {key}"), &format!("Bearer {key}")]),
            &hash
        ));
        assert_eq!(
            parse_key_sha256(&format!("{}\n", hex::encode(hash))).unwrap(),
            hash
        );
        assert!(parse_key_sha256("abc").is_err());
    }
}
