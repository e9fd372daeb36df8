//! The checks every chain and key pass before they are installed: the chain parses and is
//! bounded, the key is the end-entity certificate's, the certificate names the domain and is
//! valid now; and when an ACME certificate is due for renewal.

use registry::OpError;
use registry::types::DomainName;
use sha2::{Digest, Sha256};

use super::{MAX_CHAIN_BYTES, MAX_CHAIN_CERTIFICATES, MAX_KEY_BYTES, RENEW_BEFORE, hex, refused};

/// Whether a certificate DNS name (possibly `*.` wildcard) covers `name`.
pub fn name_covers(pattern: &str, name: &str) -> bool {
    if pattern.eq_ignore_ascii_case(name) {
        return true;
    }
    match (pattern.strip_prefix("*."), name.split_once('.')) {
        (Some(base), Some((label, rest))) => !label.is_empty() && base.eq_ignore_ascii_case(rest),
        _ => false,
    }
}

/// What a checked chain gives.
#[derive(Debug)]
pub(super) struct Checked {
    pub(super) covered: Vec<String>,
    pub(super) uncovered: Vec<String>,
    pub(super) not_after: i64,
    pub(super) fingerprint: String,
}

/// Checks a chain and its key for a domain: the chain parses and is bounded, the key is the
/// end-entity certificate's, the certificate names the domain and is valid at `now` (Unix
/// seconds, the handler's clock). Each refusal has its own code, and its message starts with
/// the request field it concerns.
pub(super) fn check_chain(
    chain: &str,
    key: &str,
    domain: &DomainName,
    aliases: &[String],
    field: &str,
    now: i64,
) -> Result<Checked, OpError> {
    let leaf = check_pair(chain, key, domain, field)?;
    if leaf.not_after <= now || leaf.not_before > now {
        return Err(refused(
            "certificate_not_valid_now",
            format!(
                "{field}: the certificate is valid from {} to {} (Unix seconds), not now ({now})",
                leaf.not_before, leaf.not_after
            ),
        ));
    }
    let (covered, uncovered) = std::iter::once(domain.to_string())
        .chain(aliases.iter().cloned())
        .partition(|n| leaf.dns_names.iter().any(|p| name_covers(p, n)));
    Ok(Checked {
        covered,
        uncovered,
        not_after: leaf.not_after,
        fingerprint: hex(&Sha256::digest(&leaf.der)),
    })
}

/// The part of [`check_chain`] that does not depend on the time: the chain parses and is
/// bounded, the key is the end-entity certificate's, the certificate names the domain. What
/// the drift check holds the files in place to (an expired certificate is the renewal's
/// business, not drift). Returns the end-entity certificate.
pub(super) fn check_pair(
    chain: &str,
    key: &str,
    domain: &DomainName,
    field: &str,
) -> Result<acme::Leaf, OpError> {
    if chain.len() > MAX_CHAIN_BYTES {
        return Err(refused(
            "invalid_certificate",
            format!("{field}: the chain is longer than {MAX_CHAIN_BYTES} bytes"),
        ));
    }
    let (leaf, count) = acme::parse_chain(chain).map_err(|e| {
        refused(
            "invalid_certificate",
            format!("{field}: the certificate chain does not parse: {e}"),
        )
    })?;
    if count > MAX_CHAIN_CERTIFICATES {
        return Err(refused(
            "invalid_certificate",
            format!(
                "{field}: the chain holds {count} certificates; at most {MAX_CHAIN_CERTIFICATES}"
            ),
        ));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(refused(
            "invalid_private_key",
            format!("{field}: the private key is longer than {MAX_KEY_BYTES} bytes"),
        ));
    }
    let public = acme::key_public_der(key).map_err(|e| {
        refused(
            "invalid_private_key",
            format!("{field}: the private key is not a usable PKCS#8 key: {e}"),
        )
    })?;
    if public != leaf.public_key_der {
        return Err(refused(
            "certificate_key_mismatch",
            format!("{field}: the private key does not belong to the end-entity certificate"),
        ));
    }
    if !leaf
        .dns_names
        .iter()
        .any(|p| name_covers(p, domain.as_str()))
    {
        return Err(refused(
            "certificate_not_covering",
            format!(
                "{field}: the certificate names {:?}, not {domain}",
                leaf.dns_names
            ),
        ));
    }
    Ok(leaf)
}

/// Whether an ACME certificate must be renewed: its chain does not parse, does not cover
/// every name, or expires within [`RENEW_BEFORE`].
pub(super) fn renewal_due(chain: Option<&str>, names: &[String], now: i64) -> bool {
    let Some(Ok((leaf, _))) = chain.map(acme::parse_chain) else {
        return true;
    };
    let covers_all = names
        .iter()
        .all(|n| leaf.dns_names.iter().any(|p| name_covers(p, n)));
    !covers_all || leaf.not_after - now < RENEW_BEFORE.as_secs() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use simulator::SIM_VALIDITY;

    #[test]
    fn wildcards_cover_one_label() {
        assert!(name_covers("shop.example.com", "shop.example.com"));
        assert!(name_covers("*.example.com", "shop.example.com"));
        assert!(!name_covers("*.example.com", "example.com"));
        assert!(!name_covers("*.example.com", "a.shop.example.com"));
        assert!(!name_covers("other.example.com", "shop.example.com"));
    }

    #[test]
    fn renewal_is_due_near_expiry_for_missing_names_and_for_garbage() {
        let names = vec![
            "shop.example.com".to_owned(),
            "www.shop.example.com".to_owned(),
        ];
        let key = acme::generate_key().unwrap();
        let now = 1_700_000_000;
        let chain = simulator::issue_locally_at(&names, &key, now, SIM_VALIDITY).unwrap();
        assert!(!renewal_due(Some(&chain), &names, now));
        assert!(renewal_due(Some(&chain), &names, now + 61 * 24 * 3600));
        let more = vec!["shop.example.com".to_owned(), "new.example.com".to_owned()];
        assert!(renewal_due(Some(&chain), &more, now));
        assert!(renewal_due(Some("garbage"), &names, now));
        assert!(renewal_due(None, &names, now));
        let domain: DomainName = "shop.example.com".parse().unwrap();
        let checked =
            check_chain(&chain, &key, &domain, &names[1..], "resource.source", now).unwrap();
        assert_eq!(checked.covered, names);
        // Valid or not is decided at the caller's time.
        let later = now + SIM_VALIDITY.as_secs() as i64 + 1;
        let expired =
            check_chain(&chain, &key, &domain, &[], "resource.source", later).unwrap_err();
        assert_eq!(expired.code, "certificate_not_valid_now");
        let other = acme::generate_key().unwrap();
        let err = check_chain(&chain, &other, &domain, &[], "resource.source", now).unwrap_err();
        assert_eq!(err.code, "certificate_key_mismatch");
        assert!(
            err.message.starts_with("resource.source:"),
            "{}",
            err.message
        );
    }
}
