//! The typed protocol between root (the provider) and the worker: one [`Request`] on stdin,
//! one [`Reply`] on stdout, both JSON, both bounded.
//!
//! The request is built by root from validated types, but the worker still parses it as
//! hostile input (it is the boundary the design asks for); the reply comes from a process
//! running as the tenant, so root parses it as hostile input too. Every size is a constant
//! here so both sides agree, and every error has a stable code.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest request the worker reads. A bigger stdin is refused (`request_too_large`)
/// after reading one byte past this, never buffered whole.
pub const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;

/// The largest reply the worker writes. Below the provider's 64 KiB output cap, so a reply is
/// never cut; a reply that would be larger is replaced by a `reply_too_large` error.
pub const MAX_REPLY_BYTES: usize = 60 * 1024;

/// The largest file `WriteFile` writes (checked when the request is parsed).
pub const MAX_WRITE_BYTES: usize = 1024 * 1024;

/// How many directories one `EnsureDirs` may name.
pub const MAX_DIRS: usize = 64;

/// A relative path: at most this many bytes, components and bytes per component.
pub const MAX_PATH_BYTES: usize = 1024;
pub const MAX_PATH_COMPONENTS: usize = 32;
pub const MAX_NAME_BYTES: usize = 255;

/// The longest error message carried in a reply; longer ones are cut.
pub const MAX_MESSAGE_CHARS: usize = 512;

/// How many supplementary groups the worker accepts (far below the kernel's 65536).
pub const MAX_GROUPS: usize = 64;

/// The resource limits the worker sets on itself after dropping to the tenant (soft = hard,
/// so it cannot raise them again). Each value and why:
pub mod limits {
    /// Descriptors: stdio, the home, and one per directory level of `DiskUsage`
    /// ([`super::DU_MAX_DEPTH`]), with room to spare.
    pub const NOFILE: u64 = 256;
    /// The largest file it can write. `SIGXFSZ` is ignored, so going past it is an `EFBIG`
    /// error, not a kill.
    /// `WriteFile` is bounded by [`super::MAX_WRITE_BYTES`] when its request is parsed; a
    /// restored file may be as large as [`crate::archive::MAX_FILE_BYTES`].
    pub const FSIZE: u64 = crate::archive::MAX_FILE_BYTES;
    /// Processes (and threads) of the tenant's uid it may create: none. The worker never
    /// forks, execs or spawns a thread, and a bug or an exploit cannot make it.
    pub const NPROC: u64 = 0;
    /// CPU seconds. Below the provider's 60 s wall-clock timeout, so a spinning worker is
    /// killed by the kernel first.
    pub const CPU: u64 = 30;
    /// Address space: 256 MiB, ample for a 2 MiB request and a directory walk.
    pub const AS: u64 = 256 * 1024 * 1024;
    /// No core dumps: a core would hold the request (file contents) in the tenant's cwd.
    pub const CORE: u64 = 0;
}

/// How deep `DiskUsage` descends; a deeper tree makes the report incomplete.
pub const DU_MAX_DEPTH: usize = 128;
/// How many entries `DiskUsage` visits before it stops (report incomplete).
pub const DU_MAX_ENTRIES: u64 = 2_000_000;
/// The longest `DiskUsage` walk, and the default budget.
pub const DU_MAX_BUDGET_MS: u32 = 20_000;

/// One operation for the worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Reports the worker's own credentials and process state (tests, diagnostics). A struct
    /// variant, so that unknown fields are refused like everywhere else.
    Whoami {},
    /// Creates each directory (and missing parents) beneath the home with `mode`. Existing
    /// directories are left as they are.
    EnsureDirs { dirs: Vec<RelPath>, mode: DirMode },
    /// Atomically replaces `path` (its parent must exist) with `content`.
    WriteFile {
        path: RelPath,
        content: FileContent,
        mode: FileMode,
    },
    /// Bytes and inodes beneath the home, not following symlinks, not crossing devices.
    DiskUsage {
        #[serde(default)]
        budget_ms: Option<u32>,
    },
    /// Writes a tar of the home to stdout (regular files, directories and symlinks, which are
    /// recorded and never followed; sockets, FIFOs and devices skipped) and the reply to
    /// stderr, since stdout carries the archive.
    ArchiveHome {},
    /// Reads a tar from stdin after the request line and restores it beneath the home,
    /// refusing anything that could reach outside it (`crate::archive`).
    ExtractHome {},
    /// Kills every other process of the tenant's uid, repeatedly, until a scan of `/proc`
    /// finds none running (`crate::terminate`): what removes an account's processes before
    /// its user is deleted. `uid` must be the uid the worker dropped to; the home is not
    /// touched.
    TerminateProcesses { uid: u32 },
}

impl Request {
    /// The stable name of the operation, for logs and the reply check.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Whoami {} => "whoami",
            Request::EnsureDirs { .. } => "ensure_dirs",
            Request::WriteFile { .. } => "write_file",
            Request::DiskUsage { .. } => "disk_usage",
            Request::ArchiveHome {} => "archive_home",
            Request::ExtractHome {} => "extract_home",
            Request::TerminateProcesses { .. } => "terminate_processes",
        }
    }

    /// Whether stdin carries data after the request line.
    pub fn reads_stream(&self) -> bool {
        matches!(self, Request::ExtractHome {})
    }

    /// Whether stdout carries data, and the reply goes to stderr instead.
    pub fn writes_stream(&self) -> bool {
        matches!(self, Request::ArchiveHome {})
    }

    /// The bounds serde cannot express.
    pub fn check(&self) -> Result<(), TenantError> {
        match self {
            Request::EnsureDirs { dirs, .. } if dirs.is_empty() || dirs.len() > MAX_DIRS => {
                Err(TenantError::new(
                    ErrorCode::RequestInvalid,
                    format!("dirs: between 1 and {MAX_DIRS} paths"),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Directory modes a request may ask for; never an arbitrary number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirMode {
    /// 0700: the tenant only.
    Private,
    /// 0750: the tenant and its group (the web server reaches homes through the group).
    Group,
    /// 0755: document roots, which the web server must traverse and list.
    Public,
}

impl DirMode {
    pub fn bits(self) -> u32 {
        match self {
            DirMode::Private => 0o700,
            DirMode::Group => 0o750,
            DirMode::Public => 0o755,
        }
    }
}

/// File modes a request may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileMode {
    /// 0600.
    Private,
    /// 0640.
    Group,
    /// 0644.
    Public,
}

impl FileMode {
    pub fn bits(self) -> u32 {
        match self {
            FileMode::Private => 0o600,
            FileMode::Group => 0o640,
            FileMode::Public => 0o644,
        }
    }
}

/// A path relative to the home: plain names joined by `/`, no `.` or `..`, no leading or
/// trailing `/`, no control characters, bounded. `openat2` would refuse an escape anyway;
/// this keeps anything path-like that is not a plain name out of the worker entirely.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

impl RelPath {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RelPath {
    type Error = TenantError;

    fn try_from(s: String) -> Result<RelPath, TenantError> {
        let bad = |why: &str| {
            TenantError::new(
                ErrorCode::RequestInvalid,
                format!("path {:?}: {why}", truncate(&s, 80)),
            )
        };
        if s.is_empty() {
            return Err(bad("empty"));
        }
        if s.len() > MAX_PATH_BYTES {
            return Err(bad("too long"));
        }
        if s.chars().any(char::is_control) {
            return Err(bad("control character"));
        }
        let mut count = 0;
        for part in s.split('/') {
            count += 1;
            if part.is_empty() {
                return Err(bad("empty component (leading, trailing or double '/')"));
            }
            if part == "." || part == ".." {
                return Err(bad("'.' or '..' component"));
            }
            if part.len() > MAX_NAME_BYTES {
                return Err(bad("component too long"));
            }
        }
        if count > MAX_PATH_COMPONENTS {
            return Err(bad("too many components"));
        }
        Ok(RelPath(s))
    }
}

impl std::str::FromStr for RelPath {
    type Err = TenantError;
    fn from_str(s: &str) -> Result<RelPath, TenantError> {
        RelPath::try_from(s.to_owned())
    }
}

impl Serialize for RelPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        let s = String::deserialize(d)?;
        RelPath::try_from(s).map_err(|e| serde::de::Error::custom(e.message))
    }
}

/// File bytes, base64 on the wire, at most [`MAX_WRITE_BYTES`] decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct FileContent(Vec<u8>);

impl FileContent {
    pub fn new(bytes: Vec<u8>) -> Result<FileContent, TenantError> {
        if bytes.len() > MAX_WRITE_BYTES {
            return Err(TenantError::new(
                ErrorCode::FileTooLarge,
                format!("content is larger than {MAX_WRITE_BYTES} bytes"),
            ));
        }
        Ok(FileContent(bytes))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for FileContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileContent({} bytes)", self.0.len())
    }
}

impl Serialize for FileContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FileContent, D::Error> {
        let s = String::deserialize(d)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map_err(|_| serde::de::Error::custom("content: not standard base64"))?;
        FileContent::new(bytes).map_err(|e| serde::de::Error::custom(e.message))
    }
}

/// What a request produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum TenantResult {
    Whoami(Whoami),
    EnsureDirs { created: u32, existing: u32 },
    WriteFile { bytes: u64 },
    DiskUsage(DiskUsage),
    ArchiveHome(ArchiveCounts),
    ExtractHome(ArchiveCounts),
    TerminateProcesses(Terminated),
}

impl TenantResult {
    /// The operation this answers; root checks it equals the request's.
    pub fn name(&self) -> &'static str {
        match self {
            TenantResult::Whoami(_) => "whoami",
            TenantResult::EnsureDirs { .. } => "ensure_dirs",
            TenantResult::WriteFile { .. } => "write_file",
            TenantResult::DiskUsage(_) => "disk_usage",
            TenantResult::ArchiveHome(_) => "archive_home",
            TenantResult::ExtractHome(_) => "extract_home",
            TenantResult::TerminateProcesses(_) => "terminate_processes",
        }
    }
}

/// The worker's view of itself after the drop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Whoami {
    /// Real, effective and saved uid (`getresuid`).
    pub uid: [u32; 3],
    /// Real, effective and saved gid (`getresgid`).
    pub gid: [u32; 3],
    /// Supplementary groups (`getgroups`), sorted.
    pub groups: Vec<u32>,
    /// `prctl(PR_GET_NO_NEW_PRIVS)`.
    pub no_new_privs: u32,
    /// `prctl(PR_GET_DUMPABLE)`: 0, so the tenant's other processes cannot ptrace it.
    pub dumpable: u32,
    /// Effective and permitted capability sets (`capget`).
    pub cap_effective: u64,
    pub cap_permitted: u64,
    /// Whether `setuid(0)` and `setgid(0)` were both refused just now.
    pub regain_root_refused: bool,
    /// How many environment variables the process has.
    pub env_count: u32,
    pub cwd: String,
    /// Every open descriptor (probed up to `RLIMIT_NOFILE`).
    pub open_fds: Vec<i32>,
    /// `(resource, soft, hard)` for each limit the worker sets; `u64::MAX` is unlimited.
    pub rlimits: Vec<(String, u64, u64)>,
}

/// What `DiskUsage` found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskUsage {
    /// Allocated bytes (`st_blocks * 512`), hard-linked files counted once.
    pub bytes: u64,
    /// Sum of `st_size`, hard-linked files counted once.
    pub apparent_bytes: u64,
    /// Inodes: the home itself and every entry beneath it on its device, links counted once.
    pub inodes: u64,
    pub dirs: u64,
    pub files: u64,
    pub symlinks: u64,
    /// Other file systems mounted in the home, not descended into (a btrfs subvolume of the
    /// home's file system is no mount: it is counted).
    pub other_device: u64,
    /// Directories the tenant itself cannot open or list (mode 000 on its own directory):
    /// nothing beneath them is counted.
    pub unreadable_dirs: u64,
    /// Entries listed but not measured, because their directory stopped being searchable
    /// (mode 0600 on a directory, or a chmod while the walk was inside it).
    #[serde(default)]
    pub unreadable_entries: u64,
    /// True only when every entry beneath the home was measured: false when a bound stopped
    /// the walk (`stopped_by`) or anything was unreadable (`unreadable_dirs`,
    /// `unreadable_entries`). The figures are then a lower bound.
    pub complete: bool,
    pub stopped_by: Option<Bound>,
}

/// What an archive of a home holds, or what a restore wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveCounts {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file content stored: what the archive costs, holes excluded.
    pub bytes: u64,
    /// The files' sizes added up, holes included (what `ls -l` shows).
    #[serde(default)]
    pub apparent_bytes: u64,
    /// Files stored as their data regions only, their holes kept as holes
    /// (`crate::archive`, "Sparse files").
    #[serde(default)]
    pub sparse_files: u64,
    /// Sockets, FIFOs, devices, other filesystems and symlinks that point outside the home
    /// (absolute, or with too many `..`), left out of an archive.
    pub skipped: u64,
    /// Directories and files the tenant itself cannot read (mode 000, or made so during the
    /// walk), left out of an archive: the archive is then not the whole home.
    #[serde(default)]
    pub unreadable: u64,
}

/// What `TerminateProcesses` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Terminated {
    /// Processes of the uid running (not zombies) when the request began, the worker aside.
    pub found: u32,
    /// `kill(-1, SIGKILL)` rounds until a scan found none running; 0 when none ran.
    pub rounds: u32,
    /// Zombies of the uid left at the end: dead, holding nothing but a pid, waiting for their
    /// parent (root's FPM master or cron, say) to collect them.
    pub zombies: u32,
}

/// The bound that stopped a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Depth,
    Entries,
    Time,
}

/// The reply on stdout: exactly one of a result or an error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Ok(TenantResult),
    Error(TenantError),
}

/// A typed failure with a stable code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(deny_unknown_fields)]
#[error("{code}: {message}")]
pub struct TenantError {
    pub code: ErrorCode,
    pub message: String,
}

impl TenantError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> TenantError {
        let message: String = message.into();
        TenantError {
            code,
            message: truncate(&message, MAX_MESSAGE_CHARS),
        }
    }
}

/// Every way the worker can fail. The codes are stable: root and the control plane match on
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Stdin was larger than [`MAX_REQUEST_BYTES`].
    RequestTooLarge,
    /// Stdin was not one valid request (bad JSON, unknown field, bad path, bounds).
    RequestInvalid,
    /// The identity arguments were missing or malformed, or named root.
    IdentityInvalid,
    /// Dropping to the tenant failed, or root could be regained afterwards.
    DropFailed,
    /// A symlink, an escape from the home, or a non-directory on the way.
    PathUnsafe,
    /// The kernel refused the tenant (a root-owned directory in the home, for example).
    PermissionDenied,
    /// The home is missing, a symlink, or not owned by the tenant.
    HomeInvalid,
    /// A file is larger than [`MAX_WRITE_BYTES`].
    FileTooLarge,
    /// Any other I/O failure.
    Io,
    /// The reply would have exceeded [`MAX_REPLY_BYTES`].
    ReplyTooLarge,
    /// A bug in the worker (a caught panic).
    Internal,
    /// An archive entry that could reach outside the home or is not allowed in a restore
    /// (`..`, an absolute path, an escaping symlink, a hard link, a device, a bad name).
    ArchiveInvalid,
    /// An archive over a bound: entries, bytes, depth.
    ArchiveTooLarge,
    /// Processes of the tenant still ran after every round `TerminateProcesses` may make.
    ProcessesRemain,
}

impl ErrorCode {
    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::RequestTooLarge => "tenant_request_too_large",
            ErrorCode::RequestInvalid => "tenant_request_invalid",
            ErrorCode::IdentityInvalid => "tenant_identity_invalid",
            ErrorCode::DropFailed => "tenant_drop_failed",
            ErrorCode::PathUnsafe => "tenant_path_unsafe",
            ErrorCode::PermissionDenied => "tenant_permission_denied",
            ErrorCode::HomeInvalid => "tenant_home_invalid",
            ErrorCode::FileTooLarge => "tenant_file_too_large",
            ErrorCode::Io => "tenant_io_error",
            ErrorCode::ReplyTooLarge => "tenant_reply_too_large",
            ErrorCode::Internal => "tenant_internal_error",
            ErrorCode::ArchiveInvalid => "tenant_archive_invalid",
            ErrorCode::ArchiveTooLarge => "tenant_archive_too_large",
            ErrorCode::ProcessesRemain => "tenant_processes_remain",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// At most `max` characters of `s`.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        s.chars().take(max).collect::<String>() + "..."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Request, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn requests_round_trip() {
        let requests = vec![
            Request::Whoami {},
            Request::EnsureDirs {
                dirs: vec!["web/a.example/public_html".parse().unwrap()],
                mode: DirMode::Public,
            },
            Request::WriteFile {
                path: "web/index.html".parse().unwrap(),
                content: FileContent::new(b"<h1>hi</h1>\n\0\xff".to_vec()).unwrap(),
                mode: FileMode::Public,
            },
            Request::DiskUsage {
                budget_ms: Some(500),
            },
            Request::TerminateProcesses { uid: 2_000_000_000 },
        ];
        for request in requests {
            let json = serde_json::to_string(&request).unwrap();
            assert_eq!(parse(&json).unwrap(), request, "{json}");
        }
    }

    #[test]
    fn path_like_values_that_are_not_plain_names_are_refused() {
        for bad in [
            "", "/etc", "../x", "a/../b", "a/./b", ".", "a//b", "a/", "a\nb", "a\0b", "a\rb",
        ] {
            assert!(RelPath::try_from(bad.to_owned()).is_err(), "{bad:?}");
            let json = serde_json::json!({"op": "ensure_dirs", "dirs": [bad], "mode": "public"});
            assert!(serde_json::from_value::<Request>(json).is_err(), "{bad:?}");
        }
        assert!(RelPath::try_from("x".repeat(MAX_PATH_BYTES + 1)).is_err());
        assert!(RelPath::try_from("n".repeat(MAX_NAME_BYTES + 1)).is_err());
        assert!(RelPath::try_from(vec!["a"; MAX_PATH_COMPONENTS + 1].join("/")).is_err());
        for good in [".htaccess", "web/a.example/public_html", "a b", "ünï"] {
            assert_eq!(RelPath::try_from(good.to_owned()).unwrap().as_str(), good);
        }
    }

    #[test]
    fn unknown_fields_ops_and_modes_are_refused() {
        for bad in [
            r#"{"op":"whoami","x":1}"#,
            r#"{"op":"format_disk"}"#,
            r#"{"op":"ensure_dirs","dirs":["a"],"mode":"0777"}"#,
            r#"{"op":"ensure_dirs","dirs":["a"],"mode":511}"#,
            r#"{"op":"write_file","path":"a","content":"!!!","mode":"public"}"#,
            r#"{"op":"disk_usage","budget_ms":-1}"#,
            r#"{"op":"disk_usage","follow_symlinks":true}"#,
            r#"{"op":"terminate_processes"}"#,
            r#"{"op":"terminate_processes","uid":-1}"#,
            r#"{"op":"terminate_processes","uid":1,"signal":9}"#,
            r#"[]"#,
            r#"null"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn oversized_content_and_dir_lists_are_refused() {
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_WRITE_BYTES + 1]);
        let json =
            serde_json::json!({"op": "write_file", "path": "a", "content": big, "mode": "public"});
        assert!(serde_json::from_value::<Request>(json).is_err());
        let dirs: Vec<String> = (0..=MAX_DIRS).map(|i| format!("d{i}")).collect();
        let request: Request = serde_json::from_value(
            serde_json::json!({"op": "ensure_dirs", "dirs": dirs, "mode": "private"}),
        )
        .unwrap();
        assert_eq!(request.check().unwrap_err().code, ErrorCode::RequestInvalid);
    }

    #[test]
    fn error_codes_are_stable_and_prefixed() {
        let all = [
            ErrorCode::RequestTooLarge,
            ErrorCode::RequestInvalid,
            ErrorCode::IdentityInvalid,
            ErrorCode::DropFailed,
            ErrorCode::PathUnsafe,
            ErrorCode::PermissionDenied,
            ErrorCode::HomeInvalid,
            ErrorCode::FileTooLarge,
            ErrorCode::Io,
            ErrorCode::ReplyTooLarge,
            ErrorCode::Internal,
            ErrorCode::ArchiveInvalid,
            ErrorCode::ArchiveTooLarge,
            ErrorCode::ProcessesRemain,
        ];
        let mut seen = std::collections::HashSet::new();
        for code in all {
            assert!(code.code().starts_with("tenant_"), "{code}");
            assert!(seen.insert(code.code()), "duplicate {code}");
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), code);
        }
    }

    #[test]
    fn messages_are_bounded() {
        let e = TenantError::new(ErrorCode::Io, "x".repeat(10_000));
        assert!(e.message.chars().count() <= MAX_MESSAGE_CHARS + 3);
    }
}
