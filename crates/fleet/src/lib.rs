//! `fleet`: the fleet's protocol (docs/design.md section 10), on the unprivileged side. It links the
//! operation declarations, never the API, the store, the handlers, the provider or a simulator
//! (`the_unprivileged_side_links_no_handler_provider_or_simulator`).
//!
//! - [`protocol`]: every subject, stream, bucket, header and message on the broker, and a
//!   node's permissions;
//! - [`token`]: join tokens that pin the broker's CA before the credential;
//! - [`tls`]: the fleet CA, the broker's certificate, the client configurations (pinned for a
//!   joining node);
//! - [`broker_config`]: the broker's configuration, a derived file;
//! - [`identity`]: a node's fleet identity on disk;
//! - [`operator`]: an operator's credential (an operator session's), its own broker user;
//! - [`requests`]: a request put on a node's queue and its final word read from the events
//!   stream, under whichever credential;
//! - [`connect`]: the connections of a node, a control plane, an operator and a joining node;
//! - [`setup`]: the streams, buckets and consumers the fleet creates;
//! - [`state`]: the fleet's state as any reader sees it, and the state a node is in;
//!
//! Daemon mode, in the API's process, is `crates/fleet-daemon`: this crate links the
//! declarations only, so an operator session (`crates/mcp`) speaks the fleet's protocol without
//! the API's admission or its store.

pub mod broker_config;
pub mod connect;
pub mod identity;
pub mod operator;
pub mod protocol;
pub mod requests;
pub mod setup;
pub mod state;
pub mod tls;
pub mod token;
