//! `layerone-dev`: a dev node on its embedded defaults (`devnode::dev`). Not shipped by the
//! packages. Started under the tenant worker's name, it is that worker and nothing else.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // The dev node starts this executable under the tenant worker's name when the build has
    // no `layerone-tenant` beside it: it is then that worker, and nothing else.
    if devnode::dev::invoked_as_tenant_worker() {
        return tenant::process::worker_main();
    }
    match devnode::dev::run(devnode::dev::DevArgs::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:?}");
            std::process::ExitCode::FAILURE
        }
    }
}
