//! The request envelope and the job it validates into.
//!
//! Tenant scope: `{request_id, operation, resource}`. Node scope: exactly
//! `{request_id, action, node_id, resource}`. Both reject unknown fields. The resource is kept
//! as JSON here and parsed by the operation's own request type in [`crate::Registry::validate`].

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::declare::{Module, Owner, Scope};
use crate::error::FieldError;
use crate::registry::Parsed;
use crate::types::Hex32;

/// The largest request body the node accepts, at the API and again when root reads the inbox.
pub const MAX_BODY: usize = 64 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantEnvelope {
    request_id: Hex32,
    operation: String,
    resource: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEnvelope {
    request_id: Hex32,
    action: String,
    node_id: Hex32,
    resource: Value,
}

/// An envelope whose shape is valid; its resource is not yet checked.
#[derive(Debug)]
pub struct Envelope {
    pub request_id: Hex32,
    pub operation: String,
    pub scope: Scope,
    pub node_id: Option<Hex32>,
    pub resource: Value,
}

impl Envelope {
    pub fn parse(body: &[u8]) -> Result<Envelope, FieldError> {
        if body.len() > MAX_BODY {
            return Err(FieldError::new(
                "body_too_large",
                "",
                format!(
                    "the body is {} bytes; at most {MAX_BODY} are accepted",
                    body.len()
                ),
            ));
        }
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| FieldError::new("invalid_json", "", e.to_string()))?;
        let Value::Object(map) = &value else {
            return Err(FieldError::new(
                "invalid_envelope",
                "",
                "the body must be a JSON object",
            ));
        };
        if map.contains_key("action") {
            let env: NodeEnvelope = from_value(value, "")?;
            Ok(Envelope {
                request_id: env.request_id,
                operation: env.action,
                scope: Scope::Node,
                node_id: Some(env.node_id),
                resource: env.resource,
            })
        } else {
            let env: TenantEnvelope = from_value(value, "")?;
            Ok(Envelope {
                request_id: env.request_id,
                operation: env.operation,
                scope: Scope::Tenant,
                node_id: None,
                resource: env.resource,
            })
        }
    }
}

/// Deserializes `value` as `T`, turning the first error into a [`FieldError`] that names the
/// offending field by its JSON path under `prefix`.
pub fn from_value<T: serde::de::DeserializeOwned>(
    value: Value,
    prefix: &str,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        // serde_path_to_error shows the root as ".".
        let path = err.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = err.into_inner();
        let message = inner.to_string();
        let join = |a: &str, b: &str| match (a.is_empty() || a == ".", b.is_empty()) {
            (true, _) => b.to_owned(),
            (false, true) => a.to_owned(),
            (false, false) => format!("{a}.{b}"),
        };
        let base = join(prefix, &path);
        // serde names the field inside the message for these two: put it in the path.
        let named = |msg: &str| msg.split('`').nth(1).map(str::to_owned);
        if message.starts_with("unknown field") {
            let name = named(&message).unwrap_or_default();
            let field = if path.ends_with(&name) {
                base
            } else {
                join(&base, &name)
            };
            FieldError::new("unknown_field", field, message)
        } else if message.starts_with("missing field") {
            let field = join(&base, &named(&message).unwrap_or_default());
            FieldError::new("missing_field", field, message)
        } else {
            FieldError::new("invalid_field", base, message)
        }
    })
}

/// A request that passed every check root and the API make before admission.
#[derive(Clone, Debug)]
pub struct ValidatedJob {
    pub request_id: Hex32,
    pub operation: &'static str,
    pub family: &'static str,
    pub module: Module,
    pub scope: Scope,
    pub resource_id: Hex32,
    pub owner: Owner,
    /// The envelope re-serialized from the typed request: the body the runner will apply.
    pub canonical: String,
    /// SHA-256 of `canonical`: the same request id with another body is a conflict.
    pub body_sha256: String,
    /// See [`crate::Operation::request_generation`].
    pub request_generation: Option<u64>,
}

impl ValidatedJob {
    pub(crate) fn new(
        envelope: &Envelope,
        operation: &'static str,
        family: &'static str,
        module: Module,
        parsed: Parsed,
    ) -> ValidatedJob {
        let Parsed {
            resource_id,
            owner,
            canonical: resource,
            request_generation,
        } = parsed;
        let mut body = serde_json::Map::new();
        body.insert(
            "request_id".into(),
            Value::String(envelope.request_id.to_string()),
        );
        match &envelope.node_id {
            Some(node) => {
                body.insert("action".into(), Value::String(operation.into()));
                body.insert("node_id".into(), Value::String(node.to_string()));
            }
            None => {
                body.insert("operation".into(), Value::String(operation.into()));
            }
        }
        body.insert("resource".into(), resource);
        let canonical = Value::Object(body).to_string();
        let body_sha256 = hex::encode(Sha256::digest(canonical.as_bytes()));
        ValidatedJob {
            request_id: envelope.request_id.clone(),
            operation,
            family,
            module,
            scope: envelope.scope,
            resource_id,
            owner,
            canonical,
            body_sha256,
            request_generation,
        }
    }
}

/// The `resource` of a stored job body ([`ValidatedJob::canonical`]): what the request asks
/// for, whatever its request id; `None` when the body is not an envelope with one.
pub fn stored_resource(body: &str) -> Option<Value> {
    let mut body: Value = serde_json::from_str(body).ok()?;
    Some(body.get_mut("resource")?.take())
}
