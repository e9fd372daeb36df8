//! Typed requests and results: the client builds the envelope from an operation's own request
//! type, exactly as the registry parses it, and reads the job's result back as the operation's
//! own result type.
//!
//! Tenant scope goes through [`NodeClient::submit_op`] (`{request_id, operation, resource}`),
//! node scope through [`NodeClient::submit_node_op`] (`{request_id, action, node_id,
//! resource}`), which takes the node id as a required argument: a node-scope request without
//! one cannot be written. Each refuses an operation of the other scope before any connection
//! is made. Every [`NodeClient`] is pinned by construction, so a node administrator request is
//! only ever sent to the certificate the caller pinned.
//!
//! [`NodeClient::wait_op`] waits for the job and returns how it ended ([`OpOutcome`]: the
//! operation's own result, its `OpError`, or superseded); [`event_outcome`] reads the same
//! from a job's final event on the events feed.

use std::time::Duration;

use registry::{Event, Hex32, JobState, JobView, OpError, Operation, Scope};
use serde_json::{Value, json};

use crate::{ClientError, Ended, NodeClient};

/// How a typed job ended.
#[derive(Clone, Debug, PartialEq)]
pub enum OpOutcome<R> {
    /// The operation's result, as its own type.
    Succeeded(R),
    /// The operation's typed error.
    Failed(OpError),
    /// A newer request for the same resource replaced this one while it was queued.
    Superseded { by: Option<String> },
}

impl<R> OpOutcome<R> {
    /// The result, or `None` for a failed or superseded job.
    pub fn succeeded(self) -> Option<R> {
        match self {
            OpOutcome::Succeeded(r) => Some(r),
            _ => None,
        }
    }
}

fn scope_str(scope: Scope) -> &'static str {
    match scope {
        Scope::Tenant => "tenant",
        Scope::Node => "node",
    }
}

fn check_scope<O: Operation>(expected: Scope) -> Result<(), ClientError> {
    if O::SCOPE == expected {
        Ok(())
    } else {
        Err(ClientError::Scope {
            operation: O::NAME,
            scope: scope_str(O::SCOPE),
        })
    }
}

fn resource<O: Operation>(request: &O::Request) -> Result<Value, ClientError> {
    serde_json::to_value(request).map_err(|e| {
        ClientError::Config(format!("the {} request does not serialize: {e}", O::NAME))
    })
}

/// The tenant-scope envelope of `request`.
pub fn tenant_envelope<O: Operation>(
    request_id: &Hex32,
    request: &O::Request,
) -> Result<Value, ClientError> {
    check_scope::<O>(Scope::Tenant)?;
    Ok(json!({
        "request_id": request_id,
        "operation": O::NAME,
        "resource": resource::<O>(request)?,
    }))
}

/// The node-scope envelope of `request`, for the node `node_id`.
pub fn node_envelope<O: Operation>(
    request_id: &Hex32,
    node_id: &Hex32,
    request: &O::Request,
) -> Result<Value, ClientError> {
    check_scope::<O>(Scope::Node)?;
    Ok(json!({
        "request_id": request_id,
        "action": O::NAME,
        "node_id": node_id,
        "resource": resource::<O>(request)?,
    }))
}

/// Reads a terminal job of `O` into its typed outcome.
pub fn outcome<O: Operation>(view: &JobView) -> Result<OpOutcome<O::Result>, ClientError> {
    if view.operation != O::NAME {
        return Err(ClientError::Unexpected(format!(
            "job {} is {}, not {}",
            view.request_id,
            view.operation,
            O::NAME
        )));
    }
    match view.state {
        JobState::Succeeded => {
            let result = view.result.clone().ok_or_else(|| {
                ClientError::Unexpected(format!(
                    "job {} succeeded without a result",
                    view.request_id
                ))
            })?;
            parse_result::<O>(&view.request_id, result)
        }
        JobState::Failed => view.error.clone().map(OpOutcome::Failed).ok_or_else(|| {
            ClientError::Unexpected(format!("job {} failed without an error", view.request_id))
        }),
        JobState::Superseded => Ok(OpOutcome::Superseded {
            by: view.superseded_by.clone(),
        }),
        other => Err(ClientError::Unexpected(format!(
            "job {} is still {}",
            view.request_id,
            other.as_str()
        ))),
    }
}

/// Reads the final event of a job of `O` (`succeeded` with its result, `failed` with its
/// error) into its typed outcome, as [`outcome`] reads the job's view.
pub fn event_outcome<O: Operation>(event: &Event) -> Result<OpOutcome<O::Result>, ClientError> {
    let request_id = event.request_id.as_deref().unwrap_or_default();
    if event.operation.as_deref() != Some(O::NAME) {
        return Err(ClientError::Unexpected(format!(
            "job {request_id} is {:?}, not {}",
            event.operation,
            O::NAME
        )));
    }
    match (&event.result, &event.error) {
        (Some(result), _) => parse_result::<O>(request_id, result.clone()),
        (None, Some(error)) => Ok(OpOutcome::Failed(error.clone())),
        (None, None) => Err(ClientError::Unexpected(format!(
            "the event of job {request_id} carries neither a result nor an error"
        ))),
    }
}

fn parse_result<O: Operation>(
    request_id: &str,
    result: Value,
) -> Result<OpOutcome<O::Result>, ClientError> {
    serde_json::from_value(result)
        .map(OpOutcome::Succeeded)
        .map_err(|e| {
            ClientError::Unexpected(format!(
                "the result of job {request_id} is not a {} result: {e}",
                O::NAME
            ))
        })
}

impl NodeClient {
    /// Submits a tenant-scope operation. A node-scope `O` is refused with
    /// [`ClientError::Scope`] before anything is sent.
    pub fn submit_op<O: Operation>(
        &self,
        request_id: &Hex32,
        request: &O::Request,
    ) -> Result<JobView, ClientError> {
        self.submit(&tenant_envelope::<O>(request_id, request)?)
    }

    /// Submits a node administrator operation for the node `node_id`, which the node checks
    /// against its own id (`wrong_node` otherwise). Sent only over the pinned connection every
    /// client has; a tenant-scope `O` is refused with [`ClientError::Scope`] before anything
    /// is sent.
    pub fn submit_node_op<O: Operation>(
        &self,
        request_id: &Hex32,
        node_id: &Hex32,
        request: &O::Request,
    ) -> Result<JobView, ClientError> {
        self.submit(&node_envelope::<O>(request_id, node_id, request)?)
    }

    /// Waits for a job of `O` to end (as [`NodeClient::wait`]) and returns its typed outcome.
    pub fn wait_op<O: Operation>(
        &self,
        request_id: &Hex32,
        timeout: Duration,
    ) -> Result<OpOutcome<O::Result>, ClientError> {
        match self.follow(request_id.as_str(), timeout)? {
            Ended::View(view) => outcome::<O>(&view),
            Ended::Event(event) => event_outcome::<O>(&event),
        }
    }
}
