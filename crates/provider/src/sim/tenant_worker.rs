//! Sim models of the tenant worker and of CloudLinux's `lve_suwrapper`.
//!
//! The worker's model is the worker's own request code run in-process, without the
//! privilege drop: used only when the provider cannot start a real worker under Sim (it is
//! not root, so it could not drop to a tenant anyway). Root runs the real worker even under
//! Sim (see `programs/tenant_worker.rs`).
//!
//! `lve_suwrapper` has no LVE to enter here. Its model checks the argv has the documented
//! form (`lve_suwrapper LVE_ID COMMAND [ARGS...]`), that the command is the tenant worker (the
//! only thing the node wraps) and that the LVE id is the tenant's uid, then runs the worker
//! as it would run inside the LVE: for real when root, in-process otherwise. The audit log
//! keeps the wrapper's argv, which is what production would run.

use std::ffi::OsString;
use std::path::Path;

use tenant::Identity;
use tenant::wire;

use super::Outcome;
use crate::exec::{Output, run_process};
use crate::program::Program;
use crate::provider::Provider;

/// The worker's request code, in this process, as this process's user.
pub(crate) fn in_process(_provider: &Provider, args: &[String], stdin: Option<&[u8]>) -> Output {
    let reply = match Identity::from_args(args.iter().map(OsString::from)) {
        // Only the non-streaming requests come this way (`Provider::as_tenant`); an archive
        // request arriving here fails like any unexpected stream would.
        Ok(identity) => {
            wire::serve(
                stdin.unwrap_or_default(),
                &mut std::io::sink(),
                &identity.home,
            )
            .0
        }
        Err(e) => tenant::Reply::Error(e),
    };
    Output {
        status: 0,
        stdout: wire::encode_reply(&reply),
        ..Output::default()
    }
}

pub(crate) fn lve_suwrapper(provider: &Provider, args: &[String], stdin: Option<&[u8]>) -> Output {
    let [lve_id, command, rest @ ..] = args else {
        return Outcome::fail(2, "usage: lve_suwrapper LVE_ID COMMAND [ARGS...]\n").into();
    };
    let Some(lve_id) = lve_id
        .parse::<u32>()
        .ok()
        .filter(|_| lve_id.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Outcome::fail(2, format!("lve_suwrapper: invalid LVE id '{lve_id}'\n")).into();
    };
    let worker = provider.program_path(Program::TenantWorker);
    if worker.as_deref() != Some(Path::new(command)) {
        return Outcome::fail(
            127,
            format!("layerone sim: lve_suwrapper wraps only the tenant worker, not {command}\n"),
        )
        .into();
    }
    match Identity::from_args(rest.iter().map(OsString::from)) {
        Ok(identity) if identity.uid == lve_id => {}
        Ok(identity) => {
            return Outcome::fail(
                2,
                format!(
                    "layerone sim: LVE id {lve_id} is not the tenant's uid {}\n",
                    identity.uid
                ),
            )
            .into();
        }
        // The worker reports a bad identity itself, as a typed reply.
        Err(_) => {}
    }
    if !provider.is_root {
        return in_process(provider, rest, stdin);
    }
    let worker = worker.expect("compared equal to the command above");
    let rest: Vec<OsString> = rest.iter().map(OsString::from).collect();
    match run_process(
        Program::TenantWorker,
        &worker,
        &rest,
        stdin,
        Program::TenantWorker.default_timeout(),
    ) {
        Ok(output) => output,
        Err(e) => Outcome::fail(126, format!("lve_suwrapper: {e}\n")).into(),
    }
}
