//! The `certificate` family's declarations: a TLS certificate bound to one of the account's
//! web domains, from ACME or an uploaded bundle, its renewal and the node's view of them all.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::certificate`.

use registry::BlobId;
use registry::types::{Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::{AccountRef, AccountResource};
use crate::web_domain::EnsureWebDomain;

family! {
    pub struct Certificate {
        name: "certificate",
        module: Web,
        drift: {
            /// A certificate's chain file is gone.
            CERTIFICATE_CHAIN_MISSING = "certificate_chain_missing",
            /// A certificate's private key file is gone.
            CERTIFICATE_KEY_MISSING = "certificate_key_missing",
            /// A certificate's chain and key in place are not a pair for its web domain (the key is another's, or the chain does not parse or name the domain).
            CERTIFICATE_DIFFERS = "certificate_differs",
            /// A listener serving a certificate's name (Apache on 443, Dovecot on 993 and 995,
            /// Postfix on 587 for its mail host) presents another certificate than the one recorded.
            LISTENER_CERTIFICATE_STALE = "listener_certificate_stale",
        },
    }
}

/// Where a certificate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CertificateSource {
    /// Issued over ACME HTTP-01 for the web domain's name and aliases, renewed by the node.
    Acme,
    /// An uploaded blob (`blob`): the PEM chain, end-entity first, and its PKCS#8 private
    /// key, in one file. Not renewed by the node: upload a new bundle before it expires.
    Bundle,
}

impl CertificateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CertificateSource::Acme => "acme",
            CertificateSource::Bundle => "bundle",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureCertificateRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The web domain whose vhost serves the certificate over HTTPS.
    pub web_domain: Hex32,
    /// Where the certificate comes from.
    pub source: CertificateSource,
    /// With `"source": "bundle"`: the uploaded blob (`PUT /v1/blobs/{sha256}`) holding the
    /// PEM chain and key. Absent with `"source": "acme"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<BlobId>,
}

impl_resource!(owner = account: EnsureCertificateRequest);

/// One certificate of the account, for `remove_certificate` and `renew_certificate`.
pub type CertificateRef = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CertificateResult {
    pub state: Presence,
    /// The web domain's name the HTTPS vhost serves.
    pub domain: Option<String>,
    /// The web domain's names (name and aliases) the certificate covers.
    pub covered: Vec<String>,
    /// The web domain's aliases it does not cover (served, but browsers will warn).
    pub uncovered: Vec<String>,
    /// When the end-entity certificate stops being valid (Unix seconds).
    pub not_after: Option<i64>,
    /// SHA-256 of the end-entity certificate (DER), lowercase hex.
    pub fingerprint_sha256: Option<String>,
    /// Whether this job put a new chain in place (false: the one in place was kept).
    #[serde(default)]
    pub issued: bool,
}

/// One certificate as `observe_certificates` reports it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedCertificate {
    pub id: Hex32,
    pub web_domain: Hex32,
    /// The web domain's name.
    pub domain: Option<String>,
    pub source: CertificateSource,
    /// Read from the chain in place (Unix seconds); absent when the file does not parse.
    pub not_after: Option<i64>,
    pub fingerprint_sha256: Option<String>,
    /// An ACME certificate within the renewal window (or whose chain does not parse): the
    /// runner's next `renew_certificates` step queues its renewal.
    pub renewal_due: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedCertificates {
    pub certificates: Vec<ObservedCertificate>,
}

/// The example certificate's id byte.
const CERTIFICATE: u8 = 0xe5;

fn example_certificate(source: CertificateSource) -> EnsureCertificateRequest {
    EnsureCertificateRequest {
        id: example::id(CERTIFICATE),
        account: example::account(),
        web_domain: example::id(0xc3),
        source,
        blob: (source == CertificateSource::Bundle).then(|| {
            example::parse("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        }),
    }
}

// The example is ACME's, which the rest of the family builds on (only an ACME certificate is
// renewed); an uploaded bundle is the other form.
operation! {
    pub struct EnsureCertificate {
        name: "ensure_certificate",
        kind: Declare,
        family: Certificate,
        summary: "Serve a web domain over HTTPS with a certificate issued over ACME HTTP-01 for its names, or from an uploaded bundle blob (chain and key, checked)",
        request: EnsureCertificateRequest,
        result: CertificateResult,
        needs: [EnsureWebDomain],
        example: example_certificate(CertificateSource::Acme),
        other_examples: [example_certificate(CertificateSource::Bundle)],
    }
}

operation! {
    pub struct RenewCertificate {
        name: "renew_certificate",
        kind: Action,
        family: Certificate,
        summary: "Replace an ACME certificate's chain now (same key), whatever its expiry; the runner does it 30 days before",
        request: CertificateRef,
        result: CertificateResult,
        example: AccountResource::example(CERTIFICATE),
    }
}

operation! {
    pub struct RemoveCertificate {
        name: "remove_certificate",
        kind: Remove,
        family: Certificate,
        summary: "Stop serving a web domain over HTTPS and delete its certificate and key",
        request: CertificateRef,
        result: CertificateResult,
        example: AccountResource::example(CERTIFICATE),
    }
}

operation! {
    pub struct ObserveCertificates {
        name: "observe_certificates",
        kind: Observe,
        family: Certificate,
        summary: "List the account's certificates: domain, expiry and SHA-256 fingerprint of the chain in place, source, whether renewal is due",
        request: AccountRef,
        result: ObservedCertificates,
        example: AccountRef::example(),
    }
}
