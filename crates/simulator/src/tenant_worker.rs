//! Sim models of the tenant worker and of CloudLinux's `lve_suwrapper`.
//!
//! The worker's model is the worker's own request code run in-process, without the
//! privilege drop: used only when the simulation cannot start a real worker (the process is
//! not root, so it could not drop to a tenant anyway). Root runs the real worker even under
//! the simulation (see the provider's `programs/tenant_worker.rs`). Both the one-shot
//! requests and the streaming ones (archives) take this path.
//!
//! `lve_suwrapper` has no LVE to enter here. Its model checks the argv has the documented
//! form (`lve_suwrapper LVE_ID COMMAND [ARGS...]`), that the command is the tenant worker (the
//! only thing the node wraps) and that the LVE id is the tenant's uid, then runs the worker
//! as it would run inside the LVE: for real when root, in-process otherwise. The audit log
//! keeps the wrapper's argv, which is what production would run.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;

use provider::{
    Argv, Executor, Invocation, Output, Program, Provider, ProviderError, RealExecutor,
};
use tenant::Identity;
use tenant::wire;

use super::Outcome;

/// The worker's request code, in this process, as this process's user.
pub(crate) fn in_process(args: &[String], stdin: Option<&[u8]>) -> Output {
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

pub(crate) fn lve_suwrapper(
    root: bool,
    provider: &Provider,
    args: &[String],
    stdin: Option<&[u8]>,
) -> Output {
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
    if !root {
        return in_process(rest, stdin);
    }
    let worker = worker.expect("compared equal to the command above");
    let mut argv = Argv::new();
    for arg in rest {
        argv.arg(arg);
    }
    let call = Invocation {
        program: Program::TenantWorker,
        path: &worker,
        argv: &argv,
        timeout: Program::TenantWorker.default_timeout(),
    };
    match RealExecutor.run(provider, &call, stdin) {
        Ok(output) => output,
        Err(e) => Outcome::fail(126, format!("lve_suwrapper: {e}\n")).into(),
    }
}

/// A streaming request (an archive of the home out, or one in) served by the worker's request
/// code in this process: the request line and the stream on `input`, the stream out on
/// `output`; the reply as the real worker gives it (the last line of stderr when the request
/// streamed, otherwise stdout).
pub(crate) fn serve_stream(
    call: &Invocation<'_>,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
) -> Result<Output, ProviderError> {
    // The worker's own arguments: after lve_suwrapper's two when it wraps the worker.
    let skip = if call.program == Program::LveSuwrapper {
        2
    } else {
        0
    };
    let identity = Identity::from_args(call.argv.args().iter().skip(skip).cloned());
    let (reply, streamed) = match identity {
        Ok(identity) => wire::serve(input, &mut *output, &identity.home),
        Err(e) => (tenant::Reply::Error(e), false),
    };
    let bytes = wire::encode_reply(&reply);
    let mut out = Output::default();
    if streamed {
        out.stderr = bytes;
    } else {
        output
            .write_all(&bytes)
            .map_err(|e| ProviderError::io("stream the output of", call.path, e))?;
    }
    Ok(out)
}
