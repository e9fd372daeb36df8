//! The node a session acts on, behind one interface: what the server needs of a node (admit a
//! job, wait for it, read jobs, events, the audit trail, its health and catalogue), and
//! nothing of how it is reached.
//!
//! [`LocalNode`] is the one implementation: this node's API over its local socket
//! ([`client::NodeClient::local`]). A peer reached over the fleet's broker is another
//! implementation of the same trait; the tools, the confirmation and the rate limit do not
//! change with it.

use std::time::Duration;

use client::{ClientError, NodeClient};
use registry::{EventPage, JobView};
use serde_json::Value;

/// What a tool call can ask of a node. Calls block: the server runs them off its runtime's
/// threads.
pub trait NodeTarget: Send + Sync {
    /// Admits a job envelope (`POST /v1/jobs`): received, or the same job again.
    fn submit(&self, envelope: &Value) -> Result<JobView, ClientError>;
    /// Waits until the job is terminal, at most `timeout` (the events feed's long-poll).
    fn wait(&self, request_id: &str, timeout: Duration) -> Result<JobView, ClientError>;
    /// One job's current view.
    fn job(&self, request_id: &str) -> Result<JobView, ClientError>;
    /// A page of the events feed after `after`, waiting up to `wait_secs` for the first one.
    fn events(&self, after: i64, wait_secs: u32, limit: u32) -> Result<EventPage, ClientError>;
    /// A page of the audit trail after `after`.
    fn audit(&self, after: i64, limit: u32) -> Result<Value, ClientError>;
    /// The node's health (`GET /v1/health`): its status and body, whatever the status.
    fn health(&self) -> Result<(u16, Value), ClientError>;
    /// Every operation the node offers, with schemas (`GET /v1/catalogue`).
    fn catalogue(&self) -> Result<Value, ClientError>;
}

/// This node, through its API's local socket.
#[derive(Debug)]
pub struct LocalNode {
    client: NodeClient,
}

impl LocalNode {
    pub fn new(client: NodeClient) -> LocalNode {
        LocalNode { client }
    }
}

impl NodeTarget for LocalNode {
    fn submit(&self, envelope: &Value) -> Result<JobView, ClientError> {
        self.client.submit(envelope)
    }
    fn wait(&self, request_id: &str, timeout: Duration) -> Result<JobView, ClientError> {
        self.client.wait(request_id, timeout)
    }
    fn job(&self, request_id: &str) -> Result<JobView, ClientError> {
        self.client.job(request_id)
    }
    fn events(&self, after: i64, wait_secs: u32, limit: u32) -> Result<EventPage, ClientError> {
        self.client.events(after, wait_secs, limit)
    }
    fn audit(&self, after: i64, limit: u32) -> Result<Value, ClientError> {
        self.client.audit(after, limit)
    }
    fn health(&self) -> Result<(u16, Value), ClientError> {
        self.client.health()
    }
    fn catalogue(&self) -> Result<Value, ClientError> {
        self.client.catalogue()
    }
}
