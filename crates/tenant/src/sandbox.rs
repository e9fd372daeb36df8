//! The worker's first act: becoming the tenant, irreversibly, before it reads a byte of the
//! request.
//!
//! Order matters and each step is checked:
//! 1. [`start_clean`]: descriptors above 2 closed (`close_range`), the environment emptied;
//!    done before the arguments are even parsed.
//! 2. [`drop_to`]: supplementary groups (`setgroups`), then gid, then uid, each with
//!    `setres*id` so the saved ids change too; then verified with `getres*id`, `getgroups`
//!    and `capget`, and by trying `setuid(0)`/`setgid(0)`, which must fail. Then
//!    `PR_SET_NO_NEW_PRIVS`, so no setuid binary or file capability could ever raise it
//!    again, not dumpable (no ptrace by the tenant's other processes), the resource limits of [`crate::protocol::limits`] (soft = hard), `SIGXFSZ`
//!    ignored, umask 077 and cwd `/`.
//!
//! The worker is single-threaded throughout (its `RLIMIT_NPROC` of 0 makes sure), which is
//! what makes the environment and credential calls below sound.

use crate::identity::Identity;
use crate::protocol::{ErrorCode, TenantError, limits};

/// The limits the worker sets, by name, for [`crate::protocol::Whoami`] and tests.
pub const RLIMITS: &[(&str, u64)] = &[
    ("nofile", limits::NOFILE),
    ("fsize", limits::FSIZE),
    ("nproc", limits::NPROC),
    ("cpu", limits::CPU),
    ("as", limits::AS),
    ("core", limits::CORE),
];

pub(crate) fn resource(name: &str) -> Option<libc::__rlimit_resource_t> {
    Some(match name {
        "nofile" => libc::RLIMIT_NOFILE,
        "fsize" => libc::RLIMIT_FSIZE,
        "nproc" => libc::RLIMIT_NPROC,
        "cpu" => libc::RLIMIT_CPU,
        "as" => libc::RLIMIT_AS,
        "core" => libc::RLIMIT_CORE,
        _ => return None,
    })
}

/// Closes every inherited descriptor above stderr and empties the environment.
///
/// # Safety
/// Must be called while the process has exactly one thread and before anything else holds
/// a descriptor above 2 (first thing in `main`).
pub unsafe fn start_clean() -> Result<(), TenantError> {
    // SAFETY: the caller guarantees no code of ours owns a descriptor above 2 yet.
    if unsafe { libc::close_range(3, u32::MAX, 0) } != 0 {
        return Err(errno_error(ErrorCode::DropFailed, "close_range"));
    }
    let keys: Vec<_> = std::env::vars_os().map(|(k, _)| k).collect();
    for key in keys {
        // SAFETY: single-threaded (the caller's guarantee), so nothing reads the
        // environment concurrently.
        unsafe { std::env::remove_var(key) };
    }
    Ok(())
}

/// Becomes `who` for good, then limits the process. See the module documentation.
pub fn drop_to(who: &Identity) -> Result<(), TenantError> {
    let fail = |what: &str| errno_error(ErrorCode::DropFailed, what);
    // SAFETY (this block): plain system calls on values we own; the process is
    // single-threaded, so glibc's per-process credential change covers every thread.
    unsafe {
        if libc::setgroups(who.groups.len(), who.groups.as_ptr()) != 0 {
            return Err(fail("setgroups"));
        }
        if libc::setresgid(who.gid, who.gid, who.gid) != 0 {
            return Err(fail("setresgid"));
        }
        if libc::setresuid(who.uid, who.uid, who.uid) != 0 {
            return Err(fail("setresuid"));
        }
    }
    verify(who)?;
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(fail("PR_SET_NO_NEW_PRIVS"));
    }
    // Not dumpable (the kernel already clears it on the uid change; this makes it explicit):
    // the tenant's other processes cannot ptrace the worker to read the request or forge
    // its reply, and no core file is written.
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(fail("PR_SET_DUMPABLE"));
    }
    for &(name, value) in RLIMITS {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        let resource = resource(name).expect("RLIMITS names only known resources");
        // SAFETY: `limit` is a valid rlimit for the duration of the call.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(fail(&format!("setrlimit {name}")));
        }
    }
    // SAFETY: setting a signal to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        libc::umask(0o077);
    }
    std::env::set_current_dir("/")
        .map_err(|e| TenantError::new(ErrorCode::DropFailed, format!("chdir /: {e}")))?;
    Ok(())
}

/// Checks the drop took: every uid and gid is the tenant's, the groups are exactly the
/// requested ones, no capability is left, and root cannot be regained.
fn verify(who: &Identity) -> Result<(), TenantError> {
    let bad = |what: String| TenantError::new(ErrorCode::DropFailed, what);
    let (uids, gids) = res_ids();
    if uids != [who.uid; 3] || gids != [who.gid; 3] {
        return Err(bad(format!(
            "after the drop uids are {uids:?} and gids {gids:?}"
        )));
    }
    let groups = current_groups();
    if groups != who.groups {
        return Err(bad(format!("after the drop groups are {groups:?}")));
    }
    let (effective, permitted) = capabilities();
    if effective != 0 || permitted != 0 {
        return Err(bad(format!(
            "capabilities remain: effective {effective:#x}, permitted {permitted:#x}"
        )));
    }
    if !root_refused() {
        return Err(bad("setuid(0) or setgid(0) succeeded after the drop".into()));
    }
    Ok(())
}

/// Real, effective and saved uids and gids.
pub(crate) fn res_ids() -> ([u32; 3], [u32; 3]) {
    let (mut r, mut e, mut s) = (0, 0, 0);
    let (mut gr, mut ge, mut gs) = (0, 0, 0);
    // SAFETY: the pointers are to live locals.
    unsafe {
        libc::getresuid(&mut r, &mut e, &mut s);
        libc::getresgid(&mut gr, &mut ge, &mut gs);
    }
    ([r, e, s], [gr, ge, gs])
}

/// The supplementary groups, sorted.
pub(crate) fn current_groups() -> Vec<u32> {
    let mut buf = vec![0u32; 65_536];
    // SAFETY: `buf` has room for the kernel's maximum (NGROUPS_MAX = 65536).
    let n = unsafe { libc::getgroups(buf.len() as i32, buf.as_mut_ptr()) };
    buf.truncate(n.max(0) as usize);
    buf.sort_unstable();
    buf
}

/// Whether `setuid(0)` and `setgid(0)` both fail. If either succeeded the process is
/// already compromised; the caller refuses to continue.
pub(crate) fn root_refused() -> bool {
    // SAFETY: plain system calls; a success is reported, not relied on.
    unsafe { libc::setuid(0) != 0 && libc::setgid(0) != 0 }
}

/// Effective and permitted capability sets (both 64-bit halves), via `capget`.
pub(crate) fn capabilities() -> (u64, u64) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: header and data have the kernel's layout for version 3 (two data structs).
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if rc != 0 {
        // Unknown is reported as "everything", so a check on it fails closed.
        return (u64::MAX, u64::MAX);
    }
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    (
        join(data[0].effective, data[1].effective),
        join(data[0].permitted, data[1].permitted),
    )
}

fn errno_error(code: ErrorCode, what: &str) -> TenantError {
    let err = std::io::Error::last_os_error();
    TenantError::new(code, format!("{what}: {err}"))
}
