//! The cli's integration tests that start a broker (a real nats-server): the fleet, MCP across
//! peers, and the clients and request order through the fleet. One binary, one link for all of
//! them; nextest still runs each test in a process of its own.

#[path = "../common/mod.rs"]
mod common;
mod fleet;
mod fleet_cluster;
mod fleet_faults;
mod fleet_operator;
mod fleet_permissions;
mod fleet_rotation;
#[path = "../fleet_support/mod.rs"]
mod fleet_support;
mod mcp_clients;
mod mcp_peers;
mod python_client;
mod request_order;
