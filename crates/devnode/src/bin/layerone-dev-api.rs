//! `layerone-dev-api`: the node's HTTPS API with the packaged `layerone-api`'s command line
//! (`api::binary`), allowed to run as root, for development and the benchmark. Not shipped by
//! the packages: the packaged API refuses root.

fn main() -> std::process::ExitCode {
    api::binary::main(api::binary::AsRoot::Allow)
}
