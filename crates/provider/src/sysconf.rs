//! Mapping of absolute system paths under the configured root (docs/design.md section 8).
//!
//! Every system path the node touches goes through `sysconf`, so the same handler code
//! writes `/etc/apache2/...` in production and `<tmp>/etc/apache2/...` in tests and the dev
//! node. A handler that joined `/etc` by hand could not be tested, so in practice it never
//! is; this is the one join.

use std::path::{Component, Path, PathBuf};

use crate::provider::Provider;

impl Provider {
    /// Maps the absolute system path `abs` under the configured root.
    ///
    /// # Panics
    /// If `abs` is not absolute or contains `..` (or `.`): system paths are constants in the
    /// code, never input, so a bad one is a programmer error.
    pub fn sysconf(&self, abs: impl AsRef<Path>) -> PathBuf {
        map_under(&self.root, abs.as_ref())
    }
}

pub(crate) fn map_under(root: &Path, abs: &Path) -> PathBuf {
    assert!(
        abs.is_absolute(),
        "sysconf needs an absolute system path, got {:?}",
        abs
    );
    let mut out = root.to_path_buf();
    for component in abs.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(part) => out.push(part),
            Component::CurDir | Component::ParentDir | Component::Prefix(_) => {
                panic!("sysconf path {abs:?} must not contain '.' or '..' components")
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_under_root() {
        assert_eq!(
            map_under(Path::new("/"), Path::new("/etc/passwd")),
            PathBuf::from("/etc/passwd")
        );
        assert_eq!(
            map_under(Path::new("/tmp/r"), Path::new("/etc/apache2/apache2.conf")),
            PathBuf::from("/tmp/r/etc/apache2/apache2.conf")
        );
        assert_eq!(
            map_under(Path::new("/tmp/r"), Path::new("/")),
            PathBuf::from("/tmp/r")
        );
    }

    #[test]
    #[should_panic(expected = "absolute system path")]
    fn relative_path_is_a_programmer_error() {
        map_under(Path::new("/tmp/r"), Path::new("etc/passwd"));
    }

    #[test]
    #[should_panic(expected = "must not contain")]
    fn parent_component_is_a_programmer_error() {
        map_under(Path::new("/tmp/r"), Path::new("/etc/../../root/.ssh"));
    }
}
