//! The cli's integration tests of one node: its operations end to end on the simulated and the
//! real daemons, the crash matrix, privilege, tenant isolation, the installed node, and the
//! tidy tests of the repository. One binary, one link for all of them; nextest still runs each
//! test in a process of its own.

mod account_ops;
mod architecture;
mod assignment;
mod backup;
mod certificate;
mod client_typed;
mod cloudlinux_panel;
#[path = "../common/mod.rs"]
mod common;
mod completions;
mod contract_check;
mod drift;
mod ftp;
mod hosting;
mod https;
mod installed;
mod lifecycle;
mod mail;
mod mail_clients;
mod monitoring;
mod mysql;
mod node_scope;
mod privilege;
mod readme;
mod runtime;
mod schemathesis;
mod security;
mod tenant_identity;
mod tenant_stall;
mod tenant_worker;
mod web_access;
mod web_isolation;
