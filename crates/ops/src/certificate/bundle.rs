//! Uploaded bundles: one blob holding the PEM chain and its PKCS#8 key, read from
//! `blobs/in` as hostile input and split into the two; every refusal names `resource.blob`.

use registry::{BlobId, OpError};

use super::{CertificateSource, MAX_BUNDLE_BYTES, refused};
use crate::context::Ctx;

/// The request field a certificate's problems are reported at.
pub(super) fn source_field(source: CertificateSource) -> &'static str {
    match source {
        CertificateSource::Acme => "resource.source",
        CertificateSource::Bundle => "resource.blob",
    }
}

pub(super) fn bundle_refused(code: &'static str, what: impl std::fmt::Display) -> OpError {
    refused(code, format!("resource.blob: {what}"))
}

/// Reads a bundle blob from `blobs/in` as hostile input: no symlink, at most
/// [`MAX_BUNDLE_BYTES`], its SHA-256 checked against its name, then split into the chain
/// (the `CERTIFICATE` blocks, in order) and the one `PRIVATE KEY` block.
pub(super) fn read_bundle(ctx: &Ctx, blob: &BlobId) -> Result<(String, String), OpError> {
    use std::io::Read;
    let layout = ctx.layout()?;
    let file = store::blobs::open_incoming(layout, blob).map_err(|e| match e {
        store::blobs::BlobError::Missing(_) => bundle_refused("blob_missing", e),
        store::blobs::BlobError::NotRegular(_) => bundle_refused("blob_invalid", e),
        other => OpError::retryable("blob_unreadable", format!("resource.blob: {other}")),
    })?;
    let mut reader = store::blobs::VerifyingReader::new(file, blob, MAX_BUNDLE_BYTES as u64);
    let mut bytes = Vec::new();
    if let Err(e) = reader.read_to_end(&mut bytes) {
        let code = match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<store::blobs::BlobError>())
        {
            Some(store::blobs::BlobError::TooLarge { .. }) => "blob_too_large",
            Some(store::blobs::BlobError::Mismatch { .. }) => "blob_mismatch",
            _ => "blob_unreadable",
        };
        return Err(bundle_refused(code, e));
    }
    if !reader.verified() {
        return Err(bundle_refused(
            "blob_mismatch",
            "the blob was not read to its end",
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| bundle_refused("invalid_certificate", "the bundle is not PEM text"))?;
    split_bundle(&text)
}

/// Splits PEM text into its `CERTIFICATE` blocks (in order) and its one `PRIVATE KEY` block.
/// Text between blocks is ignored, as PEM allows; any other block is refused.
fn split_bundle(text: &str) -> Result<(String, String), OpError> {
    let mut chain = String::new();
    let mut key: Option<String> = None;
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            if open.is_some() {
                return Err(bundle_refused(
                    "invalid_certificate",
                    "a PEM block begins inside another",
                ));
            }
            open = Some((label.to_owned(), format!("{line}\n")));
        } else if let Some(label) = line
            .strip_prefix("-----END ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            let Some((begun, mut block)) = open.take() else {
                return Err(bundle_refused(
                    "invalid_certificate",
                    "a PEM block ends that did not begin",
                ));
            };
            if begun != label {
                return Err(bundle_refused(
                    "invalid_certificate",
                    format!("a {begun} block ends as {label}"),
                ));
            }
            block.push_str(line);
            block.push('\n');
            match label {
                "CERTIFICATE" => chain.push_str(&block),
                "PRIVATE KEY" => {
                    if key.replace(block).is_some() {
                        return Err(bundle_refused(
                            "invalid_private_key",
                            "the bundle holds two private keys",
                        ));
                    }
                }
                other => {
                    return Err(bundle_refused(
                        "invalid_certificate",
                        format!(
                            "a {other} block: a bundle holds CERTIFICATE blocks and one PKCS#8 PRIVATE KEY"
                        ),
                    ));
                }
            }
        } else if let Some((_, block)) = open.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    if open.is_some() {
        return Err(bundle_refused(
            "invalid_certificate",
            "a PEM block does not end",
        ));
    }
    let key = key.ok_or_else(|| {
        bundle_refused(
            "invalid_private_key",
            "the bundle holds no PRIVATE KEY block (PKCS#8)",
        )
    })?;
    if chain.is_empty() {
        return Err(bundle_refused(
            "invalid_certificate",
            "the bundle holds no CERTIFICATE block",
        ));
    }
    Ok((chain, key))
}
