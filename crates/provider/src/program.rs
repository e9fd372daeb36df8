//! The fixed table of executables the node may run (ARCHITECTURE.md invariant 4).
//!
//! A program is named by a symbol of this closed enum, never by a path or a string that came
//! from a request, and each symbol maps to one absolute path per platform. A program that does
//! not exist on a platform maps to `None`, which `execute` turns into the typed
//! `unsupported_on_platform` error before anything is started. Adding an executable means
//! adding a variant here, a row in `path`, and a module under `programs/` with its typed
//! arguments; a tool of a suite the node already runs (Postfix's) is a variant of that
//! suite's own enum instead, in the suite's module (`docs/adding-a-family.md`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::platform::Platform;
pub use crate::programs::php_fpm::PhpVersion;
pub use crate::programs::postfix::PostfixTool;

/// An executable the provider is allowed to run.
///
/// PHP-FPM's binary is versioned (`php-fpm8.2`, `/opt/alt/php82/usr/sbin/php-fpm`), so its
/// variant carries the closed [`PhpVersion`] enum; serde uses the stable name
/// (`php-fpm8.2`) like every other program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    Useradd,
    Usermod,
    Userdel,
    Groupadd,
    Groupdel,
    /// `apache2ctl` on Debian, `apachectl` on CloudLinux.
    ApacheCtl,
    /// One of Postfix's tools (`postfix`, `postmap`...), each named by the closed
    /// [`PostfixTool`] enum, which keeps their paths and names beside their argv builders
    /// (`programs/postfix.rs`).
    Postfix(PostfixTool),
    Doveconf,
    /// The MariaDB/MySQL command-line client.
    Mariadb,
    Openssl,
    OpendkimGenkey,
    /// CloudLinux only.
    Cagefsctl,
    /// CloudLinux only.
    Lvectl,
    /// CloudLinux only.
    Selectorctl,
    /// The tenant worker (`crates/tenant`). Its path is not in this table: it is the
    /// `layerone-tenant` beside the running executable, or the one configured with
    /// `Provider::with_tenant_worker` (see `programs/tenant_worker.rs`).
    TenantWorker,
    /// CloudLinux only: runs a command inside a user's LVE (and its CageFS namespace).
    LveSuwrapper,
    /// systemd's `systemd-run`: on a node that runs systemd, the tenant worker starts in a
    /// transient scope of the tenant's slice (`--scope`), under the tenant's limits.
    SystemdRun,
    /// The sudoers checker; the node runs only its check mode (`visudo -c -f FILE`).
    Visudo,
    /// The FastCGI process manager of one PHP version; the node runs its configuration test
    /// (`-t -y CONF`) and its module list (`-m`) only.
    PhpFpm(PhpVersion),
    /// systemd's control tool: the installer enables the node's units (offline with `--root`
    /// on a sysroot) and restarts the API after a certificate renewal; the php family
    /// reloads the PHP-FPM units of its table.
    Systemctl,
    /// The fleet's broker (NATS); the node runs its configuration test only (`-t -c CONF`).
    /// Upstream's static binary, where an operator installs it: Debian's package is too old
    /// for per-message TTL (`docs/fleet.md`).
    NatsServer,
    /// The per-user crontab installer (Debian's cron, cronie on CloudLinux).
    Crontab,
    /// pure-ftpd's virtual-user tool (`mkdb` and `show` only).
    PurePw,
    /// Dovecot's administration tool: `doveadm reload` and `doveadm auth test`.
    Doveadm,
    /// Pigeonhole's Sieve compiler: every generated script is compiled before it is used.
    Sievec,
    /// CloudLinux only: MySQL Governor's `dbctl` (`set`, `list --bb`, `delete`), run only where
    /// the governor is installed.
    Dbctl,
    /// Debian only: btrfs-progs, for a home that is a subvolume with a qgroup limit
    /// (`programs/btrfs.rs`); CloudLinux's kernels have no btrfs.
    Btrfs,
    /// util-linux's `findmnt`: the mount holding the homes, its type and options.
    Findmnt,
    /// quota-tools' `setquota`: a tenant's user quota.
    Setquota,
    /// quota-tools' `repquota`: the user quotas of a file system, read back.
    Repquota,
    /// util-linux's `mount`: the installer remounts `/proc` with `hidepid=` (`programs/mount.rs`).
    Mount,
}

/// How long a program may run when its module does not say otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The kinds of work the tenant worker does, each with its deadline: the one place those
/// deadlines are kept. A worker still running at its deadline is killed with its process
/// group and the job fails `program_timeout`; a worker that stops (a tenant can `SIGSTOP` a
/// process of its own uid) is killed at once whatever its deadline (`program_stopped`, see
/// `exec.rs`).
///
/// A deadline bounds how long one tenant's worker can keep the lane it runs in busy, so each
/// is as short as the work allows: a tenant decides how slow its own worker is (the size of
/// its home, its nice value, a CPU-bound process pinned beside it), never how long it may
/// hold the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TenantWork {
    /// One short request: make a document root, write one file, report the worker's own
    /// state. Milliseconds of work, in the main lane with every other tenant's jobs.
    Request,
    /// A walk of the home for its usage. The worker ends the walk itself at its budget
    /// (`tenant::protocol::DU_MAX_BUDGET_MS`, 20 s) and reports it incomplete; the deadline
    /// leaves room for that and for a loaded machine. Long lane.
    UsageWalk,
    /// An archive of the home streamed out, or one streamed in and restored: as long as the
    /// home is large. Long lane.
    Archive,
}

impl TenantWork {
    /// How long the worker may take for this kind of work before it is killed.
    pub const fn deadline(self) -> Duration {
        match self {
            TenantWork::Request => Duration::from_secs(15),
            TenantWork::UsageWalk => Duration::from_secs(60),
            TenantWork::Archive => Duration::from_secs(30 * 60),
        }
    }
}

impl Program {
    /// Every program, so tests can check the whole table.
    pub fn all() -> impl Iterator<Item = Program> {
        const ONE_EACH: &[Program] = &[
            Program::Useradd,
            Program::Usermod,
            Program::Userdel,
            Program::Groupadd,
            Program::Groupdel,
            Program::ApacheCtl,
            Program::Doveconf,
            Program::Mariadb,
            Program::Openssl,
            Program::OpendkimGenkey,
            Program::Cagefsctl,
            Program::Lvectl,
            Program::Selectorctl,
            Program::TenantWorker,
            Program::LveSuwrapper,
            Program::SystemdRun,
            Program::Visudo,
            Program::Systemctl,
            Program::Crontab,
            Program::PurePw,
            Program::Doveadm,
            Program::Sievec,
            Program::Dbctl,
            Program::Btrfs,
            Program::Findmnt,
            Program::Setquota,
            Program::Repquota,
            Program::Mount,
            Program::NatsServer,
        ];
        ONE_EACH
            .iter()
            .copied()
            .chain(PhpVersion::ALL.iter().copied().map(Program::PhpFpm))
            .chain(PostfixTool::ALL.iter().copied().map(Program::Postfix))
    }

    /// The absolute path of the program on `platform`, or `None` where the platform has no
    /// such program (the caller answers `unsupported_on_platform`). The tenant worker has no
    /// fixed path (`None` here); the provider resolves it.
    pub fn path(self, platform: Platform) -> Option<&'static str> {
        use Platform::{CloudLinux, Debian};
        use Program::*;
        match (self, platform) {
            // shadow-utils live in the same place on both families.
            (Useradd, _) => Some("/usr/sbin/useradd"),
            (Usermod, _) => Some("/usr/sbin/usermod"),
            (Userdel, _) => Some("/usr/sbin/userdel"),
            (Groupadd, _) => Some("/usr/sbin/groupadd"),
            (Groupdel, _) => Some("/usr/sbin/groupdel"),
            (ApacheCtl, Debian) => Some("/usr/sbin/apache2ctl"),
            (ApacheCtl, CloudLinux) => Some("/usr/sbin/apachectl"),
            (Postfix(tool), _) => Some(tool.path()),
            (Doveconf, _) => Some("/usr/bin/doveconf"),
            (Mariadb, Debian) => Some("/usr/bin/mariadb"),
            // CloudLinux ships MariaDB or MySQL through MySQL Governor; `mysql` is the client
            // name both provide.
            (Mariadb, CloudLinux) => Some("/usr/bin/mysql"),
            (Openssl, _) => Some("/usr/bin/openssl"),
            (OpendkimGenkey, _) => Some("/usr/sbin/opendkim-genkey"),
            (Cagefsctl, Debian) | (Lvectl, Debian) | (Selectorctl, Debian) => None,
            (Cagefsctl, CloudLinux) => Some("/usr/sbin/cagefsctl"),
            (Lvectl, CloudLinux) => Some("/usr/sbin/lvectl"),
            (Selectorctl, CloudLinux) => Some("/usr/bin/selectorctl"),
            (TenantWorker, _) => None,
            // lve-wrappers installs it in /bin (CloudLinux documentation, "LVE Wrappers").
            (LveSuwrapper, Debian) => None,
            (LveSuwrapper, CloudLinux) => Some("/bin/lve_suwrapper"),
            (Visudo, _) => Some("/usr/sbin/visudo"),
            (PhpFpm(version), Debian) => Some(crate::programs::php_fpm::debian_fpm(version)),
            (PhpFpm(version), CloudLinux) => Some(crate::programs::php_fpm::alt_fpm(version)),
            (Systemctl, _) => Some("/usr/bin/systemctl"),
            (SystemdRun, _) => Some("/usr/bin/systemd-run"),
            (NatsServer, _) => Some("/usr/local/bin/nats-server"),
            // Debian's cron and CloudLinux's cronie both install it here.
            (Crontab, _) => Some("/usr/bin/crontab"),
            (PurePw, _) => Some("/usr/bin/pure-pw"),
            (Doveadm, _) => Some("/usr/bin/doveadm"),
            (Sievec, _) => Some("/usr/bin/sievec"),
            // governor-mysql installs it in /usr/sbin (beside db_governor and dbtop).
            (Dbctl, Debian) => None,
            (Dbctl, CloudLinux) => Some("/usr/sbin/dbctl"),
            (Btrfs, Debian) => Some("/usr/bin/btrfs"),
            (Btrfs, CloudLinux) => None,
            (Findmnt, _) => Some("/usr/bin/findmnt"),
            (Setquota, _) => Some("/usr/sbin/setquota"),
            (Repquota, _) => Some("/usr/sbin/repquota"),
            (Mount, _) => Some("/usr/bin/mount"),
        }
    }

    /// The stable symbolic name, used in the audit log, errors and serde.
    pub fn name(self) -> &'static str {
        match self {
            Program::Useradd => "useradd",
            Program::Usermod => "usermod",
            Program::Userdel => "userdel",
            Program::Groupadd => "groupadd",
            Program::Groupdel => "groupdel",
            Program::ApacheCtl => "apachectl",
            Program::Postfix(tool) => tool.name(),
            Program::Doveconf => "doveconf",
            Program::Mariadb => "mariadb",
            Program::Openssl => "openssl",
            Program::OpendkimGenkey => "opendkim-genkey",
            Program::Cagefsctl => "cagefsctl",
            Program::Lvectl => "lvectl",
            Program::Selectorctl => "selectorctl",
            Program::TenantWorker => "layerone-tenant",
            Program::LveSuwrapper => "lve_suwrapper",
            Program::Visudo => "visudo",
            Program::PhpFpm(version) => crate::programs::php_fpm::FpmName::fpm_name(version),
            Program::Systemctl => "systemctl",
            Program::SystemdRun => "systemd-run",
            Program::NatsServer => "nats-server",
            Program::Crontab => "crontab",
            Program::PurePw => "pure-pw",
            Program::Doveadm => "doveadm",
            Program::Sievec => "sievec",
            Program::Dbctl => "dbctl",
            Program::Btrfs => "btrfs",
            Program::Findmnt => "findmnt",
            Program::Setquota => "setquota",
            Program::Repquota => "repquota",
            Program::Mount => "mount",
        }
    }

    /// Whether this program starts the tenant worker as its command (`lve_suwrapper`,
    /// `systemd-run --scope`): the worker's own arguments follow the wrapper's.
    pub fn wraps_tenant_worker(self) -> bool {
        matches!(self, Program::LveSuwrapper | Program::SystemdRun)
    }

    /// How long one run may take before it is killed.
    ///
    /// Apache gets less than the default because a configuration test that hangs is holding
    /// up every other tenant's web change in the same runner pass.
    pub fn default_timeout(self) -> Duration {
        match self {
            Program::ApacheCtl => Duration::from_secs(30),
            _ => DEFAULT_TIMEOUT,
        }
    }
}

impl Serialize for Program {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Program {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Program::all()
            .find(|p| p.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown program {name:?}")))
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_program_path_is_absolute_and_clean() {
        for program in Program::all() {
            for &platform in Platform::ALL {
                if let Some(path) = program.path(platform) {
                    assert!(path.starts_with('/'), "{program} on {platform}: {path}");
                    assert!(!path.contains(".."), "{program} on {platform}: {path}");
                    assert!(!path.contains("//"), "{program} on {platform}: {path}");
                }
            }
        }
    }

    #[test]
    fn program_names_are_unique_and_match_serde() {
        let mut seen = HashSet::new();
        for program in Program::all() {
            assert!(seen.insert(program.name()), "duplicate name {program}");
            let json = serde_json::to_string(&program).unwrap();
            assert_eq!(json, format!("\"{}\"", program.name()));
            assert_eq!(serde_json::from_str::<Program>(&json).unwrap(), program);
        }
    }

    #[test]
    fn isolation_programs_are_unsupported_on_debian_only() {
        for program in [
            Program::Cagefsctl,
            Program::Lvectl,
            Program::Selectorctl,
            Program::LveSuwrapper,
            Program::Dbctl,
        ] {
            assert_eq!(program.path(Platform::Debian), None);
            assert!(program.path(Platform::CloudLinux).is_some());
        }
        assert_eq!(
            Program::ApacheCtl.path(Platform::Debian),
            Some("/usr/sbin/apache2ctl")
        );
        assert_eq!(
            Program::ApacheCtl.path(Platform::CloudLinux),
            Some("/usr/sbin/apachectl")
        );
    }

    #[test]
    fn all_lists_every_variant_once() {
        // A variant missing from ALL would escape the table tests above. This match stops
        // compiling when a variant is added, which is the reminder to list it in ALL and
        // update the count below.
        for program in Program::all() {
            match program {
                Program::Useradd
                | Program::Usermod
                | Program::Userdel
                | Program::Groupadd
                | Program::Groupdel
                | Program::ApacheCtl
                | Program::Postfix(_)
                | Program::Doveconf
                | Program::Mariadb
                | Program::Openssl
                | Program::OpendkimGenkey
                | Program::Cagefsctl
                | Program::Lvectl
                | Program::Selectorctl
                | Program::TenantWorker
                | Program::LveSuwrapper
                | Program::SystemdRun
                | Program::Visudo
                | Program::PhpFpm(_)
                | Program::Systemctl
                | Program::Crontab
                | Program::PurePw
                | Program::Doveadm
                | Program::Sievec
                | Program::Dbctl
                | Program::Btrfs
                | Program::Findmnt
                | Program::Setquota
                | Program::Repquota
                | Program::Mount
                | Program::NatsServer => {}
            }
        }
        let all: Vec<Program> = Program::all().collect();
        assert_eq!(
            all.len(),
            29 + PhpVersion::ALL.len() + PostfixTool::ALL.len()
        );
        for &version in PhpVersion::ALL {
            assert!(all.contains(&Program::PhpFpm(version)));
        }
        for &tool in PostfixTool::ALL {
            assert!(all.contains(&Program::Postfix(tool)));
        }
        let unique: HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }
}
