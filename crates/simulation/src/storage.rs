//! The storage model: what a disk keeps when the machine dies.
//!
//! [`install`] registers, as SQLite's default, a VFS that wraps the default unix VFS and
//! passes every call through to it, so every connection of the process (inbox.db's writer
//! and readers, state.db's runner connection) reads, writes and locks real files through the
//! real code. Beside that, it keeps, for each database, journal and write-ahead log it opens,
//! the file's bytes as of its last `xSync` (the *durable image*) and the writes and
//! truncations made since (the *pending* ones). The sync of such a file is that record, not
//! an fsync: the model stands for the disk's durability, and the real flush would cost a
//! history most of its time for nothing the model uses.
//!
//! When the simulation kills the node ([`kill`]), every later write, truncation, sync and
//! delete of every connection does nothing (the dead process's connections are then closed:
//! their rollback, checkpoint or cleanup never reaches the disk). [`restart`] then writes
//! each file back as the disk would hold it after a power loss at that moment: its durable
//! image, plus a seeded subset of its pending writes in units of 512-byte sectors (each
//! sector of each pending write kept or lost on its own, each pending truncation kept or
//! lost), which is what SQLite assumes a disk may do to writes that were not synced
//! (<https://sqlite.org/atomiccommit.html>, section 2).
//!
//! What it models: lost unsynced writes, whole or sector by sector (torn writes), in
//! SQLite's files. What it does not: the kernel's reordering or loss of data that was
//! synced; garbage in the sectors of a lost write (they keep their old bytes); file-system
//! metadata (a created or deleted file is taken to be so at once, as if the directory were
//! synced); and every file that is not SQLite's: the simulated system root, the blobs, the
//! audit log and the runner's marker files keep what the dead process last wrote, as after a
//! `kill -9` rather than a power loss.
//!
//! SQLite's own clock goes through the model too: `xCurrentTime` answers the simulation's
//! clock ([`set_clock`]) and counts its readings ([`clock_readings`]), so that a time read by
//! SQL (`unixepoch()`, `'now'`) instead of given by the caller is seen.

use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use clock::Clock;
use libsqlite3_sys as ffi;

/// The VFS's name.
pub const NAME: &CStr = c"layerone-simulated-disk";

/// The unit a lost write is lost in.
pub const SECTOR: usize = 512;

/// One change made to a file since its last sync.
enum Change {
    Write { offset: usize, data: Vec<u8> },
    Truncate(usize),
}

impl Change {
    fn apply(&self, bytes: &mut Vec<u8>) {
        match self {
            Change::Write { offset, data } => {
                let end = offset + data.len();
                if bytes.len() < end {
                    bytes.resize(end, 0);
                }
                bytes[*offset..end].copy_from_slice(data);
            }
            Change::Truncate(size) => bytes.truncate(*size),
        }
    }
}

/// A file as the disk holds it: its synced bytes and what was written since.
#[derive(Default)]
struct Image {
    durable: Vec<u8>,
    pending: Vec<Change>,
}

struct Model {
    files: BTreeMap<String, Image>,
    clock: Option<Arc<dyn Clock>>,
}

static MODEL: Mutex<Model> = Mutex::new(Model {
    files: BTreeMap::new(),
    clock: None,
});
static DEAD: AtomicBool = AtomicBool::new(false);
static CLOCK_READINGS: AtomicU64 = AtomicU64::new(0);
static SYNCS: AtomicU64 = AtomicU64::new(0);
static PARENT: OnceLock<usize> = OnceLock::new();

fn model() -> std::sync::MutexGuard<'static, Model> {
    // A panic while holding the lock leaves the maps whole (each change is one insertion).
    MODEL.lock().unwrap_or_else(|e| e.into_inner())
}

fn parent() -> *mut ffi::sqlite3_vfs {
    *PARENT
        .get()
        .expect("the model is installed before any file is opened") as *mut _
}

/// Registers the model as SQLite's default VFS, once per process, before any connection of
/// the simulation is opened.
pub fn install() {
    PARENT.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find and sqlite3_vfs_register are thread-safe once SQLite is
        // initialised (they initialise it); the registered struct is leaked, so it outlives
        // every connection; its function pointers are the parent's or this module's.
        unsafe {
            let parent = ffi::sqlite3_vfs_find(std::ptr::null());
            assert!(!parent.is_null(), "SQLite has a default VFS");
            let mut ours = *parent;
            ours.iVersion = ours.iVersion.min(3);
            ours.szOsFile = (std::mem::size_of::<File>() as c_int) + (*parent).szOsFile;
            ours.pNext = std::ptr::null_mut();
            ours.zName = NAME.as_ptr();
            ours.pAppData = std::ptr::null_mut();
            ours.xOpen = Some(x_open);
            ours.xDelete = Some(x_delete);
            ours.xCurrentTime = Some(x_current_time);
            ours.xCurrentTimeInt64 = Some(x_current_time_int64);
            let ours = Box::leak(Box::new(ours));
            let rc = ffi::sqlite3_vfs_register(ours, 1);
            assert_eq!(rc, ffi::SQLITE_OK, "registering the simulated disk");
            parent as usize
        }
    });
}

/// The clock SQLite's `xCurrentTime` answers from.
pub fn set_clock(clock: Arc<dyn Clock>) {
    model().clock = Some(clock);
}

/// How many times SQL asked for the time since the process started.
pub fn clock_readings() -> u64 {
    CLOCK_READINGS.load(Ordering::SeqCst)
}

/// How many syncs reached the disk since the process started.
pub fn syncs() -> u64 {
    SYNCS.load(Ordering::SeqCst)
}

/// The machine dies: from now on nothing any connection writes, truncates, syncs or deletes
/// reaches the disk, until [`restart`].
pub fn kill() {
    DEAD.store(true, Ordering::SeqCst);
}

/// Whether the machine is dead.
pub fn is_dead() -> bool {
    DEAD.load(Ordering::SeqCst)
}

/// The machine comes back: every file the model knows is written back as the disk held it
/// at [`kill`] (its durable image and, of its pending writes, the sectors `keep` says, asked
/// once per sector and per truncation, in file and write order). Every connection must be
/// closed first. Returns how many sectors were kept and how many lost.
pub fn restart(mut keep: impl FnMut() -> bool) -> std::io::Result<(usize, usize)> {
    let mut model = model();
    let (mut kept, mut lost) = (0, 0);
    for (path, image) in &mut model.files {
        let mut bytes = std::mem::take(&mut image.durable);
        for change in image.pending.drain(..) {
            match change {
                Change::Write { offset, data } => {
                    for (i, sector) in data.chunks(SECTOR).enumerate() {
                        if keep() {
                            kept += 1;
                            Change::Write {
                                offset: offset + i * SECTOR,
                                data: sector.to_vec(),
                            }
                            .apply(&mut bytes);
                        } else {
                            lost += 1;
                        }
                    }
                }
                truncate @ Change::Truncate(_) => {
                    if keep() {
                        truncate.apply(&mut bytes);
                    }
                }
            }
        }
        std::fs::write(path, &bytes)?;
        image.durable = bytes;
    }
    DEAD.store(false, Ordering::SeqCst);
    Ok((kept, lost))
}

/// Forgets every file (a new history in a new directory).
pub fn forget() {
    model().files.clear();
}

/// An open file: SQLite's header, the file it is tracked as, and the parent's file, which
/// lives in the same allocation right after this struct (`szOsFile`).
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    /// The tracked path (a leaked `Box<String>`), or null for a file that is not durable
    /// (temporary files, the shared-memory index).
    path: *mut String,
    real: *mut ffi::sqlite3_file,
}

/// The files whose bytes must survive: databases, their rollback journals and their logs.
const TRACKED: c_int =
    ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_MAIN_JOURNAL | ffi::SQLITE_OPEN_WAL;

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite hands a buffer of `szOsFile` bytes, ours first and the parent's after;
    // the parent's xOpen initialises its part; `name`, when not null, is a C string that
    // lives as long as the file.
    unsafe {
        let f = file.cast::<File>();
        let real = file
            .cast::<u8>()
            .add(std::mem::size_of::<File>())
            .cast::<ffi::sqlite3_file>();
        (*f).real = real;
        (*f).path = std::ptr::null_mut();
        (*f).base.pMethods = std::ptr::null();
        let parent = parent();
        let rc = ((*parent).xOpen.expect("the unix VFS opens files"))(
            parent, name, real, flags, out_flags,
        );
        if rc != ffi::SQLITE_OK || (*real).pMethods.is_null() {
            return rc;
        }
        (*f).base.pMethods = &METHODS;
        if !name.is_null() && flags & TRACKED != 0 {
            let path = CStr::from_ptr(name).to_string_lossy().into_owned();
            model().files.entry(path.clone()).or_insert_with(|| Image {
                durable: std::fs::read(&path).unwrap_or_default(),
                pending: Vec::new(),
            });
            (*f).path = Box::into_raw(Box::new(path));
        }
        rc
    }
}

unsafe extern "C" fn x_delete(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    if is_dead() {
        return ffi::SQLITE_OK;
    }
    // SAFETY: `name` is SQLite's C string for the call.
    unsafe {
        let parent = parent();
        let rc = ((*parent).xDelete.expect("the unix VFS deletes files"))(parent, name, sync_dir);
        if rc == ffi::SQLITE_OK && !name.is_null() {
            let path = CStr::from_ptr(name).to_string_lossy();
            model().files.remove(path.as_ref());
        }
        rc
    }
}

/// Julian day number of the Unix epoch, in milliseconds.
const UNIX_EPOCH_JULIAN_MS: i64 = 210_866_760_000_000;

fn now_julian_ms() -> i64 {
    CLOCK_READINGS.fetch_add(1, Ordering::SeqCst);
    let now = model().clock.as_ref().map_or(0, |c| c.now_ms());
    now + UNIX_EPOCH_JULIAN_MS
}

unsafe extern "C" fn x_current_time_int64(_vfs: *mut ffi::sqlite3_vfs, out: *mut i64) -> c_int {
    // SAFETY: `out` points to SQLite's i64.
    unsafe { *out = now_julian_ms() };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_current_time(_vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    // SAFETY: `out` points to SQLite's f64.
    unsafe { *out = now_julian_ms() as f64 / 86_400_000.0 };
    ffi::SQLITE_OK
}

/// The parent's file and its methods.
///
/// # Safety
/// `file` is one this VFS opened successfully and not yet closed.
unsafe fn real(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    // SAFETY: see the function's contract; the parent's methods are static.
    unsafe {
        let real = (*file.cast::<File>()).real;
        (real, &*(*real).pMethods)
    }
}

/// The tracked path of `file`, if any.
///
/// # Safety
/// As [`real`].
unsafe fn tracked(file: *mut ffi::sqlite3_file) -> Option<&'static String> {
    // SAFETY: the path is leaked at open and freed only at close.
    unsafe { (*file.cast::<File>()).path.as_ref() }
}

/// Calls the parent's method `$m` of `$file` with the other arguments.
macro_rules! forward {
    ($file:expr, $m:ident $(, $arg:expr)*) => {{
        let (real, methods) = real($file);
        match methods.$m {
            Some(method) => method(real $(, $arg)*),
            None => ffi::SQLITE_IOERR,
        }
    }};
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file once; the path was leaked at open.
    unsafe {
        let rc = forward!(file, xClose);
        let f = file.cast::<File>();
        if !(*f).path.is_null() {
            drop(Box::from_raw((*f).path));
            (*f).path = std::ptr::null_mut();
        }
        rc
    }
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: i64,
) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xRead, buf, amt, off) }
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: i64,
) -> c_int {
    if is_dead() {
        return ffi::SQLITE_OK;
    }
    // SAFETY: forwarded as SQLite called it; `buf` holds `amt` bytes.
    unsafe {
        let rc = forward!(file, xWrite, buf, amt, off);
        if rc == ffi::SQLITE_OK
            && let Some(path) = tracked(file)
        {
            let data = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize).to_vec();
            if let Some(image) = model().files.get_mut(path) {
                image.pending.push(Change::Write {
                    offset: off as usize,
                    data,
                });
            }
        }
        rc
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    if is_dead() {
        return ffi::SQLITE_OK;
    }
    // SAFETY: forwarded as SQLite called it.
    unsafe {
        let rc = forward!(file, xTruncate, size);
        if rc == ffi::SQLITE_OK
            && let Some(path) = tracked(file)
            && let Some(image) = model().files.get_mut(path)
        {
            image.pending.push(Change::Truncate(size as usize));
        }
        rc
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    if is_dead() {
        return ffi::SQLITE_OK;
    }
    // The model is the disk's durability: a sync makes the file's bytes its durable image,
    // and the real fsync, which would cost the disk's flush for nothing the model uses, is
    // not made (a file the model does not track is synced for real).
    // SAFETY: forwarded as SQLite called it.
    unsafe {
        let Some(path) = tracked(file) else {
            return forward!(file, xSync, flags);
        };
        if let Some(image) = model().files.get_mut(path) {
            SYNCS.fetch_add(1, Ordering::SeqCst);
            let mut bytes = std::mem::take(&mut image.durable);
            for change in image.pending.drain(..) {
                change.apply(&mut bytes);
            }
            image.durable = bytes;
        }
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xFileSize, size) }
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xLock, level) }
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xUnlock, level) }
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xCheckReservedLock, out) }
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xFileControl, op, arg) }
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe {
        let (real, methods) = real(file);
        methods.xSectorSize.map_or(SECTOR as c_int, |m| m(real))
    }
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe {
        let (real, methods) = real(file);
        methods.xDeviceCharacteristics.map_or(0, |m| m(real))
    }
}

unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xShmMap, region, size, extend, out) }
}

unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xShmLock, offset, n, flags) }
}

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: forwarded as SQLite called it.
    unsafe {
        let (real, methods) = real(file);
        if let Some(m) = methods.xShmBarrier {
            m(real);
        }
    }
}

unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: forwarded as SQLite called it; a dead machine deletes nothing.
    unsafe { forward!(file, xShmUnmap, if is_dead() { 0 } else { delete }) }
}

unsafe extern "C" fn x_fetch(
    file: *mut ffi::sqlite3_file,
    off: i64,
    amt: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xFetch, off, amt, out) }
}

unsafe extern "C" fn x_unfetch(file: *mut ffi::sqlite3_file, off: i64, p: *mut c_void) -> c_int {
    // SAFETY: forwarded as SQLite called it.
    unsafe { forward!(file, xUnfetch, off, p) }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};
