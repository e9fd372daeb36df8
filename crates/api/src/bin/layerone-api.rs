//! `layerone-api`: the node's HTTPS API, as the packages ship it, run as the unprivileged
//! `layerone-api` user. Everything is the API crate's (`api::binary`); this binary refuses to
//! run as root, and has no flag that would let it.

fn main() -> std::process::ExitCode {
    api::binary::main(api::binary::AsRoot::Refuse)
}
