//! One module per allowed executable: its typed arguments, the argv builder, and the
//! `Provider` method a handler calls.
//!
//! Keeping the builder next to the method means every argument list the node can produce is
//! written in one reviewed place; the simulator parses the same list, so a test that passes
//! under Sim exercised the argv production runs.

pub mod apachectl;
pub mod btrfs;
pub mod cagefsctl;
pub mod crontab;
pub mod dbctl;
pub mod dovecot;
pub mod findmnt;
pub mod groupadd;
pub mod groupdel;
pub mod lvectl;
pub mod mount;
pub mod nats_server;
pub mod opendkim_genkey;
pub mod php_fpm;
pub mod postfix;
pub mod pure_pw;
pub mod quota_tools;
pub mod selectorctl;
pub mod service_state;
pub mod sievec;
pub mod slice_limits;
pub mod systemctl;
pub mod tenant_terminate;
pub mod tenant_worker;
pub mod useradd;
pub mod userdel;
pub mod usermod;
pub mod visudo;

use crate::executor::Argv;
use crate::provider::Provider;

impl Provider {
    /// The argv prefix shadow-utils need to work on the sysroot instead of `/`.
    ///
    /// `--prefix` (shadow-utils 4.6+) makes useradd and friends read and write
    /// `<prefix>/etc/passwd` etc. and create homes under the prefix, so with a temporary root
    /// a real shadow-utils program changes the sysroot, not this machine. Production (root
    /// `/`) passes nothing, which keeps its argv identical to what an operator would type.
    pub(crate) fn shadow_argv(&self) -> Argv {
        let mut argv = Argv::new();
        if !self.root_is_slash() {
            argv.arg("--prefix").arg(&self.root);
        }
        argv
    }
}
