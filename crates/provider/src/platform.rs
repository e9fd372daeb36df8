//! The platform profile a node runs on.
//!
//! The profile decides which executables exist and where (see `program.rs`) and where the
//! shared services keep their configuration (see `programs/apachectl.rs`). It is a closed
//! enum so that supporting a new distribution is a deliberate change to every table that
//! matches on it, never a silent fallback.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A supported operating-system profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Debian or Ubuntu: apache2, php-fpm pools, MariaDB, Postfix + Dovecot, OpenDKIM.
    /// No CageFS or LVE.
    Debian,
    /// CloudLinux: httpd, alt-php with selectorctl, CageFS, LVE.
    CloudLinux,
}

impl Platform {
    /// Every platform, for tests that must cover them all.
    pub const ALL: &'static [Platform] = &[Platform::Debian, Platform::CloudLinux];

    /// The stable lowercase name used in configuration files and serde.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Debian => "debian",
            Platform::CloudLinux => "cloudlinux",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The platform name was not one of [`Platform::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown platform {0:?} (expected \"debian\" or \"cloudlinux\")")]
pub struct UnknownPlatform(pub String);

impl FromStr for Platform {
    type Err = UnknownPlatform;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .iter()
            .copied()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPlatform(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_names_round_trip_through_fromstr_display_and_serde() {
        for &p in Platform::ALL {
            assert_eq!(p.to_string().parse::<Platform>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{p}\""));
            assert_eq!(serde_json::from_str::<Platform>(&json).unwrap(), p);
        }
        assert!("Debian".parse::<Platform>().is_err());
        assert!("ubuntu".parse::<Platform>().is_err());
    }
}
