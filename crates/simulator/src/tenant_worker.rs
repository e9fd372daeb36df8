//! Sim models of the tenant worker and of the wrappers it is started under: CloudLinux's
//! `lve_suwrapper`, and `systemd-run --scope` on a Debian node that runs systemd.
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
//!
//! `systemd-run` has no systemd to ask for a scope here. Its model checks the argv is the one
//! form the node uses (`systemd-run --scope --quiet --collect --slice=user-UID.slice --
//! COMMAND [ARGS...]`), that the command is the tenant worker and that the slice is the
//! tenant's, then runs the worker as `lve_suwrapper`'s model does.

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

/// The worker's own arguments in a wrapper's `args`, once the wrapper's form is checked: its
/// own arguments as the node writes them, the command it starts the tenant worker, and the
/// uid it puts the command under (the LVE id; the slice's uid) the tenant's. `Err` is the
/// wrapper's failure (its exit status, its stderr); a malformed identity is left to the
/// worker, which reports it as a typed reply.
fn worker_args<'a>(
    provider: &Provider,
    program: Program,
    args: &'a [String],
) -> Result<&'a [String], Outcome> {
    let usage = |text: String| Outcome::fail(2, text);
    let uid = |text: &str| {
        text.parse::<u32>()
            .ok()
            .filter(|_| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
    };
    let (id, command, rest) = match program {
        Program::LveSuwrapper => {
            let [lve_id, command, rest @ ..] = args else {
                return Err(usage(
                    "usage: lve_suwrapper LVE_ID COMMAND [ARGS...]\n".into(),
                ));
            };
            let id = uid(lve_id.as_str())
                .ok_or_else(|| usage(format!("lve_suwrapper: invalid LVE id '{lve_id}'\n")))?;
            (id, command, rest)
        }
        Program::SystemdRun => {
            let [scope, quiet, collect, slice, dashes, command, rest @ ..] = args else {
                return Err(usage("layerone sim: systemd-run --scope --quiet --collect --slice=SLICE -- COMMAND [ARGS...]\n".into()));
            };
            if (
                scope.as_str(),
                quiet.as_str(),
                collect.as_str(),
                dashes.as_str(),
            ) != ("--scope", "--quiet", "--collect", "--")
            {
                return Err(usage(format!(
                    "layerone sim: systemd-run is run with --scope --quiet --collect, not {args:?}\n"
                )));
            }
            let id = slice
                .strip_prefix("--slice=user-")
                .and_then(|s| s.strip_suffix(".slice"))
                .and_then(uid)
                .ok_or_else(|| {
                    usage(format!(
                        "layerone sim: systemd-run's slice is a user's, not {slice}\n"
                    ))
                })?;
            (id, command, rest)
        }
        other => {
            return Err(usage(format!(
                "layerone sim: {other} does not wrap the tenant worker\n"
            )));
        }
    };
    if provider.program_path(Program::TenantWorker).as_deref() != Some(Path::new(command)) {
        return Err(Outcome::fail(
            127,
            format!("layerone sim: {program} wraps only the tenant worker, not {command}\n"),
        ));
    }
    if let Ok(identity) = Identity::from_args(rest.iter().map(OsString::from))
        && identity.uid != id
    {
        return Err(usage(format!(
            "layerone sim: {program} puts it under uid {id}, not the tenant's uid {}\n",
            identity.uid
        )));
    }
    Ok(rest)
}

/// `lve_suwrapper` or `systemd-run --scope` starting the tenant worker: in this process
/// without root, otherwise the real worker.
pub(crate) fn run_wrapped_worker(
    root: bool,
    provider: &Provider,
    program: Program,
    args: &[String],
    stdin: Option<&[u8]>,
) -> Output {
    let rest = match worker_args(provider, program, args) {
        Ok(rest) => rest,
        Err(failed) => return failed.into(),
    };
    if !root {
        return in_process(rest, stdin);
    }
    let worker = provider
        .program_path(Program::TenantWorker)
        .expect("worker_args compared it with the command");
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
        Err(e) => Outcome::fail(126, format!("{program}: {e}\n")).into(),
    }
}

/// A streaming request (an archive of the home out, or one in) served by the worker's request
/// code in this process: the request line and the stream on `input`, the stream out on
/// `output`; the reply as the real worker gives it (the last line of stderr when the request
/// streamed, otherwise stdout).
pub(crate) fn serve_stream(
    provider: &Provider,
    call: &Invocation<'_>,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
) -> Result<Output, ProviderError> {
    // The worker's own arguments: after the wrapper's when one starts the worker.
    let identity = match wrapped_args(provider, call) {
        Ok(args) => Identity::from_args(args),
        Err(failed) => return Ok(failed),
    };
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

/// The tenant worker's own arguments in `call`: all of them, or those after the wrapper's
/// once its form is checked (`Err`: the wrapper's failure).
pub(crate) fn wrapped_args(
    provider: &Provider,
    call: &Invocation<'_>,
) -> Result<Vec<OsString>, Output> {
    if !call.program.wraps_tenant_worker() {
        return Ok(call.argv.args().to_vec());
    }
    let mut args = Vec::new();
    for arg in call.argv.args() {
        match arg.to_str() {
            Some(arg) => args.push(arg.to_owned()),
            None => {
                return Err(Outcome::fail(
                    2,
                    format!("{}: argument {arg:?} is not UTF-8\n", call.program),
                )
                .into());
            }
        }
    }
    let rest = worker_args(provider, call.program, &args)?;
    Ok(rest.iter().map(OsString::from).collect())
}
