//! `tenant`: the tenant worker and the typed protocol root uses to talk to it (docs/design.md
//! section 8).
//!
//! Work inside a customer's home (creating a document root, writing a file, measuring disk
//! usage) is done by `layerone-tenant`, a short-lived process the provider starts as root
//! and which immediately becomes the tenant ([`sandbox`]): the tenant's uid, gid and
//! supplementary groups, `no_new_privs`, an empty environment, cwd `/`, no inherited
//! descriptors, tight resource limits. It then reads one [`Request`] from stdin, does the
//! work beneath the home without following any symlink ([`work`]), writes one [`Reply`] to
//! stdout and exits. Both directions are bounded and strictly typed ([`protocol`], [`wire`]).
//!
//! The library has no dependency on the rest of the node: the provider depends on it for
//! the protocol, and (when it cannot start a real worker, see the provider's
//! `tenant_worker` module) for running the same request code in-process.

pub mod archive;
pub mod beneath;
pub mod identity;
pub mod process;
pub mod protocol;
pub mod sandbox;
pub mod terminate;
pub mod wire;
pub mod work;

pub use identity::Identity;
pub use protocol::{
    ArchiveCounts, Bound, DirMode, DiskUsage, ErrorCode, FileContent, FileMode, RelPath, Reply,
    Request, TenantError, TenantResult, Terminated, Whoami,
};
