//! The node's load, memory and disk, read from the kernel's files and `statvfs`, all
//! through [`Provider::sysconf`] so a test's sysroot answers instead of this machine.

use crate::error::ProviderError;
use crate::provider::Provider;

/// `/proc/loadavg`'s three averages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

/// `/proc/meminfo`'s figures, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
}

/// One file system as `statvfs` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskSpace {
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub total_inodes: u64,
    pub free_inodes: u64,
}

fn read(provider: &Provider, path: &str) -> Result<String, ProviderError> {
    let mapped = provider.sysconf(path);
    std::fs::read_to_string(&mapped).map_err(|e| ProviderError::io("read", mapped, e))
}

fn malformed(provider: &Provider, path: &str) -> ProviderError {
    ProviderError::io(
        "parse",
        provider.sysconf(path),
        std::io::Error::new(std::io::ErrorKind::InvalidData, "unexpected format"),
    )
}

impl Provider {
    pub fn host_load(&self) -> Result<Load, ProviderError> {
        let text = read(self, "/proc/loadavg")?;
        let mut f = text.split_whitespace().map(|v| v.parse::<f64>().ok());
        match (f.next().flatten(), f.next().flatten(), f.next().flatten()) {
            (Some(one), Some(five), Some(fifteen)) => Ok(Load { one, five, fifteen }),
            _ => Err(malformed(self, "/proc/loadavg")),
        }
    }

    pub fn host_memory(&self) -> Result<Memory, ProviderError> {
        let text = read(self, "/proc/meminfo")?;
        let kib = |key: &str| {
            text.lines().find_map(|l| {
                let rest = l.strip_prefix(key)?.strip_prefix(':')?;
                rest.split_whitespace().next()?.parse::<u64>().ok()
            })
        };
        match (
            kib("MemTotal"),
            kib("MemAvailable"),
            kib("SwapTotal"),
            kib("SwapFree"),
        ) {
            (Some(t), Some(a), Some(st), Some(sf)) => Ok(Memory {
                total_bytes: t * 1024,
                available_bytes: a * 1024,
                swap_total_bytes: st * 1024,
                swap_free_bytes: sf * 1024,
            }),
            _ => Err(malformed(self, "/proc/meminfo")),
        }
    }

    /// `statvfs` of a system path; `None` when the path does not exist.
    pub fn disk_space(&self, path: &str) -> Result<Option<DiskSpace>, ProviderError> {
        let mapped = self.sysconf(path);
        match rustix::fs::statvfs(&mapped) {
            Ok(s) => Ok(Some(DiskSpace {
                total_bytes: s.f_blocks.saturating_mul(s.f_frsize),
                available_bytes: s.f_bavail.saturating_mul(s.f_frsize),
                total_inodes: s.f_files,
                free_inodes: s.f_ffree,
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(ProviderError::io("statvfs", mapped, e.into())),
        }
    }
}
