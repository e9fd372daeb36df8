//! The OpenAPI 3.1 document of the node's HTTP API, derived from the registry: every
//! operation's request and result schema comes from its types, and the job envelope is the
//! `oneOf` of the declared operations, and so is the job (`Job`, discriminated by `operation`,
//! whose `result` is that operation's result schema). Nothing here names an operation by hand.

use serde_json::{Map, Value, json};

use crate::audit::AuditPage;
use crate::declare::Scope;
use crate::error::FieldError;
use crate::job::{EventPage, JobView};
use crate::registry::{Registry, schema_of};

/// Strips the keys that only make sense at a schema document's root, and titles the schema
/// with its component name: generators name their types after `title`, and two operations'
/// schemas may share a Rust type's title (`AccountRef`).
fn component(mut schema: Value, name: &str) -> Value {
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.insert("title".into(), name.into());
    }
    schema
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The job as one operation's: `operation` is its name and `result` its result schema, so the
/// `Job` schema is the `oneOf` of these with `operation` as the discriminator and a generator
/// gives each operation its own result type.
fn job_of(job: &Value, operation: &str, result: &str) -> Value {
    let mut job = job.clone();
    if let Some(properties) = job["properties"].as_object_mut() {
        properties.insert(
            "operation".into(),
            json!({"type": "string", "const": operation}),
        );
        properties.insert(
            "result".into(),
            json!({
                "description": "Present once the job succeeded.",
                "oneOf": [reference(result), {"type": "null"}]
            }),
        );
    }
    job
}

/// Narrows every drift aspect in `schema` (a `DriftAspect`, a name) to the aspects the
/// families of `registry` declare, each with what it means: the events feed's schema here,
/// the fleet's events in `docs/fleet.md`. Returns how many it narrowed.
pub fn with_declared_aspects(schema: &mut Value, registry: &Registry) -> usize {
    let name_only = crate::DriftAspect::name_only_schema();
    fn walk(value: &mut Value, name_only: &Value, declared: &Value) -> usize {
        if value == name_only {
            *value = declared.clone();
            return 1;
        }
        match value {
            Value::Object(map) => map.values_mut().map(|v| walk(v, name_only, declared)).sum(),
            Value::Array(items) => items.iter_mut().map(|v| walk(v, name_only, declared)).sum(),
            _ => 0,
        }
    }
    walk(schema, &name_only, &drift_aspects(registry))
}

/// A drift finding's `aspect`: one of the aspects the families declare, each with what it
/// means.
fn drift_aspects(registry: &Registry) -> Value {
    let aspects: Vec<Value> = registry
        .drift_aspects()
        .map(|declared| {
            json!({
                "type": "string",
                "const": declared.aspect.as_str(),
                "description": declared.description(),
            })
        })
        .collect();
    json!({
        "description": "What about a resource drifted: one of the aspects the families declare, each with what it means.",
        "oneOf": aspects
    })
}

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": reference("Error")}}})
}

pub fn document(registry: &Registry, version: &str) -> Value {
    let mut schemas = Map::new();
    let mut envelopes = Vec::new();
    let job = schema_of::<JobView>();
    let mut jobs = Vec::new();
    let mut mapping = Map::new();
    for op in registry.operations() {
        let request = format!("{}_request", op.name());
        let result = format!("{}_result", op.name());
        schemas.insert(request.clone(), component(op.request_schema(), &request));
        schemas.insert(result.clone(), component(op.result_schema(), &result));
        let job_name = format!("{}_job", op.name());
        schemas.insert(
            job_name.clone(),
            component(job_of(&job, op.name(), &result), &job_name),
        );
        mapping.insert(
            op.name().into(),
            format!("#/components/schemas/{job_name}").into(),
        );
        jobs.push(reference(&job_name));
        let envelope = match op.scope() {
            Scope::Tenant => json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["request_id", "operation", "resource"],
                "properties": {
                    "request_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                    "operation": {"const": op.name()},
                    "resource": reference(&request),
                }
            }),
            Scope::Node => json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["request_id", "action", "node_id", "resource"],
                "properties": {
                    "request_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                    "action": {"const": op.name()},
                    "node_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                    "resource": reference(&request),
                }
            }),
        };
        let name = format!("{}_envelope", op.name());
        schemas.insert(name.clone(), envelope);
        envelopes.push(reference(&name));
    }
    schemas.insert("JobRequest".into(), json!({"oneOf": envelopes}));
    schemas.insert(
        "Job".into(),
        json!({
            "description": "A job, typed by its operation: `result` is that operation's result.",
            "oneOf": jobs,
            "discriminator": {"propertyName": "operation", "mapping": mapping},
        }),
    );
    let mut events = component(schema_of::<EventPage>(), "EventPage");
    // None narrowed would mean the aspect's schema is no longer the name alone (a doc comment
    // on the field merges into it): the document would not list the aspects.
    assert_eq!(
        with_declared_aspects(&mut events, registry),
        1,
        "the events schema has one drift aspect"
    );
    schemas.insert("EventPage".into(), events);
    schemas.insert(
        "AuditPage".into(),
        component(schema_of::<AuditPage>(), "AuditPage"),
    );
    let mut error = component(schema_of::<FieldError>(), "Error");
    if let Some(properties) = error["properties"].as_object_mut() {
        properties.insert(
            "retry_after_s".into(),
            json!({"type": "integer", "minimum": 0, "description": "On an answer with Retry-After: the same number of seconds."}),
        );
        properties.insert(
            "limit".into(),
            json!({"type": "integer", "minimum": 0, "description": "On queue_full: the cap the request met (its account's, the node-scope lane's, or every account's together)."}),
        );
        properties.insert(
            "queued".into(),
            json!({"type": "integer", "minimum": 0, "description": "On queue_full: how many requests wait under that cap."}),
        );
    }
    schemas.insert("Error".into(), error);
    schemas.insert(
        "EventsLost".into(),
        json!({
            "title": "EventsLost",
            "description": "The events feed no longer holds the events just after the cursor asked from: \
                            root keeps the newest events only and trimmed those. A job's end may be among them: \
                            read each job being waited for with `getJob`, then resume from `after` = `first_cursor` - 1.",
            "type": "object",
            "required": ["code", "field", "message", "first_cursor"],
            "properties": {
                "code": {"type": "string", "const": "events_lost"},
                "field": {"type": "string", "description": "`after`, the cursor behind the trim."},
                "message": {"type": "string"},
                "first_cursor": {
                    "type": "integer",
                    "format": "int64",
                    "minimum": 1,
                    "description": "The oldest event's cursor the feed still holds."
                }
            }
        }),
    );

    let key = json!([{"bearer": []}]);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "layerone node",
            "version": version,
            "description": "Typed operations applied to one hosting server. Every request and result schema is derived from the node's operation registry."
        },
        "servers": [{"url": "/"}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas,
        },
        "security": key,
        "paths": {
            "/v1/jobs": {"post": {
                "operationId": "submitJob",
                "summary": "Submit an operation; answers 202 once it is durably received",
                "requestBody": {"required": true, "content": {"application/json": {"schema": reference("JobRequest")}}},
                "responses": {
                    "202": {"description": "Received (or the same request seen before)", "content": {"application/json": {"schema": reference("Job")}}},
                    "400": error_response("The request does not validate; `field` names the offending field"),
                    "401": error_response("Missing or wrong API key"),
                    "409": error_response("The same request_id was used with another body"),
                    "413": error_response("The body is too large"),
                    "429": error_response("Too many requests, nothing stored; retry after Retry-After seconds: this client's rate (rate_limited), or the queue at its cap (queue_full, with `limit` and `queued`: the account's cap, the node-scope lane's, or every account's together)"),
                    "503": error_response("Retry after Retry-After seconds: state is briefly unreadable (state_unavailable), the inbox is unavailable (inbox_unavailable), or the node's inbox file system is full (disk_full; nothing was stored, the message names the file system: inbox)"),
                }
            }},
            "/v1/jobs/{request_id}": {"get": {
                "operationId": "getJob",
                "summary": "One job's state, result or error",
                "parameters": [{"name": "request_id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}}],
                "responses": {
                    "200": {"description": "The job", "content": {"application/json": {"schema": reference("Job")}}},
                    "400": error_response("Not a request id"),
                    "401": error_response("Missing or wrong API key"),
                    "404": error_response("No such job"),
                    "503": error_response("State is briefly unreadable; retry after Retry-After seconds"),
                }
            }},
            "/v1/events": {"get": {
                "operationId": "getEvents",
                "summary": "Job state changes after a cursor; waits up to `wait` seconds for the first one",
                "description": format!(
                    "A `succeeded` job event carries the job's `result` and a `failed` one its `error`, as `getJob` shows them. \
                     A page holds at most `limit` events and at most {} bytes of results and errors: it stops before the event \
                     that would pass that budget (`truncated` is then true) and always holds at least one event; ask again from `next`. \
                     The feed keeps the newest events only: a cursor behind what was trimmed is answered 410 `events_lost`, never a \
                     page that skips ahead.",
                    crate::job::EVENTS_PAGE_RESULT_BYTES
                ),
                "parameters": [
                    {"name": "after", "in": "query", "required": false, "schema": {"type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX}},
                    {"name": "wait", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0, "maximum": 60}},
                    {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                    "200": {"description": "A page of events", "content": {"application/json": {"schema": reference("EventPage")}}},
                    "400": error_response("A bad query parameter"),
                    "401": error_response("Missing or wrong API key"),
                    "410": {
                        "description": "events_lost: events after `after` were trimmed from the feed; `first_cursor` is the oldest left",
                        "content": {"application/json": {"schema": reference("EventsLost")}}
                    },
                    "503": error_response("State is briefly unreadable; retry after Retry-After seconds"),
                }
            }},
            "/v1/audit": {"get": {
                "operationId": "getAudit",
                "summary": "The audit trail after a cursor: every program the node ran (secrets redacted) and every node-scope request",
                "parameters": [
                    {"name": "after", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0}},
                    {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                    "200": {"description": "A page of the audit trail", "content": {"application/json": {"schema": reference("AuditPage")}}},
                    "400": error_response("A bad query parameter"),
                    "401": error_response("Missing or wrong API key"),
                    "503": error_response("State is briefly unreadable; retry after Retry-After seconds"),
                }
            }},
            "/v1/blobs/{sha256}": {
                "parameters": [
                    {"name": "sha256", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}
                ],
                "put": {
                    "operationId": "putBlob",
                    "summary": "Upload a blob (a certificate bundle, an archive to restore) under its SHA-256; a job then names it",
                    "requestBody": {"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                    "responses": {
                        "201": {"description": "Stored under its name", "content": {"application/json": {"schema": {
                            "type": "object",
                            "required": ["blob", "size"],
                            "properties": {"blob": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "size": {"type": "integer", "minimum": 0}}
                        }}}},
                        "400": error_response("Not a blob id, or the content's SHA-256 is not the name (blob_mismatch)"),
                        "401": error_response("Missing or wrong API key"),
                        "408": error_response("The body did not arrive in time"),
                        "413": error_response("Larger than the node accepts"),
                        "503": error_response("Retry after Retry-After seconds: blob storage is briefly unavailable (blob_storage_unavailable), or the node's blobs file system is full (disk_full; nothing was stored, the message names the file system: blobs)"),
                    }
                },
                "get": {
                    "operationId": "getBlob",
                    "summary": "Download a blob the node produced (an account's backup)",
                    "responses": {
                        "200": {"description": "The blob", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                        "400": error_response("Not a blob id"),
                        "401": error_response("Missing or wrong API key"),
                        "404": error_response("No such blob"),
                        "503": error_response("Blob storage is briefly unavailable; retry after Retry-After seconds"),
                    }
                }
            },
            "/v1/catalogue": {"get": {
                "operationId": "getCatalogue",
                "summary": "Every operation this node offers, with its schemas; `version` (the released catalogue version) and `sha256` (its content hash) beside them",
                "responses": {
                    "200": {"description": "The catalogue", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "401": error_response("Missing or wrong API key"),
                }
            }},
            "/v1/openapi.json": {"get": {
                "operationId": "getOpenApi",
                "summary": "This document",
                "responses": {
                    "200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "401": error_response("Missing or wrong API key"),
                }
            }},
            "/v1/health": {"get": {
                "operationId": "getHealth",
                "summary": "Whether the API is up and state.db readable; needs no key",
                "security": [],
                "responses": {
                    "200": {"description": "Healthy", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "503": {"description": "State is not readable", "content": {"application/json": {"schema": {"type": "object"}}}},
                }
            }},
        }
    })
}
