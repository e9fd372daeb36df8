//! inbox.db: the only channel into the runner.
//!
//! The API owns it. Requests are admitted through one writer thread that batches whatever is
//! waiting into one transaction (group commit) and answers each caller only after COMMIT
//! returned, so a 202 means the request is on disk. Root reads it read-only through
//! [`read_rows`], treats every row as hostile, and never writes it: the ingest watermark lives
//! in state.db, and the API prunes the rows below it. A request's `received_at` is read from
//! the clock the inbox was opened with (the system's for the API, [`Inbox::open_with_clock`]),
//! and its `origin` is the front door that took it ([`Origin`]).
//!
//! An inbox opened with [`QueueCaps`] (the API's) says "not now" before the queue grows past
//! them: the writer counts each owner's queue, root's pending jobs as the last [`Backlog`]
//! read them plus the rows received beyond that backlog's watermark, and answers a new
//! request past its account's cap or the node's total [`Receipt::QueueFull`]. The counting is
//! the writer's, in the commit's order, so concurrent requests cannot pass a cap together.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use registry::envelope::MAX_BODY;
use registry::{FileSystem, JobView, Origin, Owner, ValidatedJob};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use clock::Clock;

use store::{Backlog, StoreError, disk, sqlite};

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS requests (
        seq         INTEGER PRIMARY KEY,
        request_id  TEXT NOT NULL UNIQUE,
        operation   TEXT NOT NULL,
        body        BLOB NOT NULL,
        body_sha256 TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        origin      TEXT,
        owner       TEXT
    );
";

/// The schema before requests carried their owner (which the API counts queues by). An
/// inbox of that shape is given the column when the API opens it; root reads either.
const SCHEMA_WITHOUT_OWNER: &str = "
    CREATE TABLE IF NOT EXISTS requests (
        seq         INTEGER PRIMARY KEY,
        request_id  TEXT NOT NULL UNIQUE,
        operation   TEXT NOT NULL,
        body        BLOB NOT NULL,
        body_sha256 TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        origin      TEXT
    );
";

/// The schema before requests carried their origin. An inbox of that shape is given the
/// column when the API opens it; root reads either, an absent origin as unrecorded.
const SCHEMA_WITHOUT_ORIGIN: &str = "
    CREATE TABLE IF NOT EXISTS requests (
        seq         INTEGER PRIMARY KEY,
        request_id  TEXT NOT NULL UNIQUE,
        operation   TEXT NOT NULL,
        body        BLOB NOT NULL,
        body_sha256 TEXT NOT NULL,
        received_at INTEGER NOT NULL
    );
";

/// The most requests one group commit takes.
const MAX_BATCH: usize = 1024;

/// How many requests may be queued (received and not yet done) before a new one is answered
/// [`Receipt::QueueFull`]. Node-scope requests are a lane of their own: they are not counted
/// in `total`, and `per_account` bounds them as it bounds one account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueCaps {
    /// Every account's queued requests together.
    pub total: u64,
    /// One account's queued requests (and the node-scope lane's).
    pub per_account: u64,
}

impl Default for QueueCaps {
    fn default() -> Self {
        QueueCaps {
            total: 50_000,
            per_account: 1_000,
        }
    }
}

/// Which cap a request met ([`Receipt::QueueFull`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// The request's account has [`QueueCaps::per_account`] queued.
    Account,
    /// The node-scope lane has [`QueueCaps::per_account`] queued.
    NodeScope,
    /// Every account together has [`QueueCaps::total`] queued.
    Node,
}

/// What the inbox did with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// Durably received under this inbox sequence number.
    Received { seq: i64, received_at: i64 },
    /// The same request id with the same body was received before: the same job.
    Duplicate { seq: i64, received_at: i64 },
    /// The same request id with another body: a 409.
    Conflict,
    /// Nothing was stored: `queued` requests wait under `limit`'s cap, which is `cap`.
    QueueFull {
        limit: QueueLimit,
        cap: u64,
        queued: u64,
    },
}

type Reply = Box<dyn FnOnce(Result<Receipt, StoreError>) + Send>;

enum Command {
    Admit(Box<(ValidatedJob, Origin)>, Reply),
    Prune(i64),
    Backlog(Backlog),
}

/// The API's handle on its inbox: the group-commit writer and a read connection.
pub struct Inbox {
    writer: Mutex<Sender<Command>>,
    reader: Mutex<Connection>,
    path: PathBuf,
}

impl Inbox {
    /// Opens (creating if needed) the inbox and starts its writer thread, which stamps each
    /// request with the system clock's time. The thread ends when the `Inbox` is dropped.
    /// No queue is counted: the inbox of tools and tests that stand in for the API.
    pub fn open(path: &Path) -> Result<(Inbox, JoinHandle<()>), StoreError> {
        Inbox::open_with_clock(path, clock::system())
    }

    /// [`Inbox::open`], stamping each request with `clock`'s time.
    pub fn open_with_clock(
        path: &Path,
        clock: Arc<dyn Clock>,
    ) -> Result<(Inbox, JoinHandle<()>), StoreError> {
        Inbox::open_inner(path, clock, None)
    }

    /// The API's inbox: [`Inbox::open`], answering [`Receipt::QueueFull`] past `caps`. Until
    /// the first [`Inbox::backlog`] it counts only the rows it holds.
    pub fn open_capped(
        path: &Path,
        caps: QueueCaps,
    ) -> Result<(Inbox, JoinHandle<()>), StoreError> {
        Inbox::open_inner(path, clock::system(), Some(caps))
    }

    fn open_inner(
        path: &Path,
        clock: Arc<dyn Clock>,
        caps: Option<QueueCaps>,
    ) -> Result<(Inbox, JoinHandle<()>), StoreError> {
        let conn = sqlite::open_inbox_rw(path)
            .map_err(StoreError::sqlite(format!("open {}", path.display())))?;
        conn.execute_batch(SCHEMA)
            .map_err(StoreError::sqlite("create the inbox schema"))?;
        add_column(&conn, "origin")?;
        add_column(&conn, "owner")?;
        let queue = caps.map(|caps| Queue::of_rows(caps, &conn)).transpose()?;
        let reader =
            sqlite::open_inbox_rw(path).map_err(StoreError::sqlite("open an inbox reader"))?;
        reader
            .pragma_update(None, "query_only", "ON")
            .map_err(StoreError::sqlite("open an inbox reader"))?;
        let (tx, rx) = mpsc::channel();
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        let handle = std::thread::Builder::new()
            .name("inbox-writer".into())
            .spawn(move || writer_loop(conn, rx, &*clock, &dir, queue))
            .map_err(|source| StoreError::Io {
                path: path.to_owned(),
                source,
            })?;
        Ok((
            Inbox {
                writer: Mutex::new(tx),
                reader: Mutex::new(reader),
                path: path.to_owned(),
            },
            handle,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues a validated request, taken in at `origin`, for the next group commit; `reply`
    /// runs on the writer thread once the commit returned.
    pub fn admit(
        &self,
        job: ValidatedJob,
        origin: Origin,
        reply: impl FnOnce(Result<Receipt, StoreError>) + Send + 'static,
    ) {
        let sent = self
            .writer
            .lock()
            .expect("the inbox writer lock is never poisoned: nothing panics while holding it")
            .send(Command::Admit(Box::new((job, origin)), Box::new(reply)));
        if let Err(mpsc::SendError(Command::Admit(_, reply))) = sent {
            reply(Err(StoreError::WriterGone));
        }
    }

    /// Blocking form of [`Inbox::admit`], for tools and tests.
    pub fn admit_blocking(&self, job: ValidatedJob, origin: Origin) -> Result<Receipt, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.admit(job, origin, move |r| {
            let _ = tx.send(r);
        });
        rx.recv().unwrap_or(Err(StoreError::WriterGone))
    }

    /// Asks the writer to delete rows root has already admitted (at or below `watermark`).
    pub fn prune(&self, watermark: i64) {
        let _ = self
            .writer
            .lock()
            .expect("the inbox writer lock is never poisoned: nothing panics while holding it")
            .send(Command::Prune(watermark));
    }

    /// Tells the writer what root holds of the queue now ([`store::StateReader::backlog`]):
    /// the counts it checks [`QueueCaps`] against. Ignored by an inbox without caps.
    pub fn backlog(&self, backlog: Backlog) {
        let _ = self
            .writer
            .lock()
            .expect("the inbox writer lock is never poisoned: nothing panics while holding it")
            .send(Command::Backlog(backlog));
    }

    /// A request that is received but not yet admitted by root, as a job view.
    pub fn received(&self, request_id: &str) -> Result<Option<(JobView, String)>, StoreError> {
        let conn = self
            .reader
            .lock()
            .expect("the inbox reader lock is never poisoned: nothing panics while holding it");
        conn.prepare_cached(
            "SELECT operation, received_at, body_sha256 FROM requests WHERE request_id = ?1",
        )
        .and_then(|mut s| {
            s.query_row(params![request_id], |r| {
                Ok((
                    JobView::received(request_id, &r.get::<_, String>(0)?, r.get(1)?),
                    r.get(2)?,
                ))
            })
            .optional()
        })
        .map_err(StoreError::sqlite("read the inbox"))
    }

    /// How many rows wait in the inbox, for tests and status.
    pub fn len(&self) -> Result<i64, StoreError> {
        let conn = self
            .reader
            .lock()
            .expect("the inbox reader lock is never poisoned: nothing panics while holding it");
        conn.query_row("SELECT count(*) FROM requests", [], |r| r.get(0))
            .map_err(StoreError::sqlite("count the inbox"))
    }

    /// How many requests wait beyond root's ingest `watermark` (received, not yet admitted),
    /// and when the oldest of them was received (ms).
    pub fn waiting(&self, watermark: i64) -> Result<(i64, Option<i64>), StoreError> {
        let conn = self
            .reader
            .lock()
            .expect("the inbox reader lock is never poisoned: nothing panics while holding it");
        conn.query_row(
            "SELECT count(*), min(received_at) FROM requests WHERE seq > ?1",
            params![watermark],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(StoreError::sqlite("measure the inbox"))
    }

    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.len().map(|n| n == 0)
    }
}

fn writer_loop(
    mut conn: Connection,
    rx: Receiver<Command>,
    clock: &dyn Clock,
    dir: &Path,
    mut queue: Option<Queue>,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::new();
        let mut prune = None;
        let mut next = Some(first);
        while let Some(cmd) = next.take() {
            match cmd {
                Command::Admit(request, reply) => {
                    let (job, origin) = *request;
                    batch.push((job, origin, reply));
                }
                Command::Prune(w) => prune = Some(w),
                Command::Backlog(backlog) => {
                    if let Some(queue) = &mut queue {
                        queue.root_holds(backlog);
                    }
                }
            }
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            match room_for_requests(dir) {
                Ok(()) => commit_batch(&mut conn, batch, clock.now_ms(), queue.as_mut()),
                Err(context) => refuse_batch(batch, &context),
            }
        }
        // The newest row always stays: SQLite gives a new row the largest rowid plus one, so
        // an emptied table would hand out 1, 2... again, below root's watermark, and root
        // reads only the rows after its watermark: those requests would never be admitted.
        if let Some(watermark) = prune
            && let Err(e) = conn.execute(
                "DELETE FROM requests WHERE seq <= ?1 AND seq < (SELECT max(seq) FROM requests)",
                params![watermark],
            )
        {
            tracing::warn!(error = %e, "pruning the inbox failed; it will be tried again");
        }
    }
}

/// Whether the inbox's file system has more than its margin ([`disk::min_free`]) left: one
/// `statvfs` per group commit. Below it the batch is refused, so root keeps the rest for its
/// own writes; a file system that cannot be looked at lets the commit try.
fn room_for_requests(dir: &Path) -> Result<(), String> {
    match disk::available(dir) {
        Ok(available) if available < disk::min_free(FileSystem::Inbox) => Err(format!(
            "{available} bytes available, below the {} kept free",
            disk::min_free(FileSystem::Inbox)
        )),
        _ => Ok(()),
    }
}

fn refuse_batch(batch: Vec<(ValidatedJob, Origin, Reply)>, context: &str) {
    tracing::warn!(
        requests = batch.len(),
        "the inbox's file system is full: {context}"
    );
    for (_, _, reply) in batch {
        reply(Err(StoreError::DiskFull {
            filesystem: FileSystem::Inbox,
            context: context.to_owned(),
        }));
    }
}

/// Gives an inbox created before requests carried their `origin`, or their `owner`, that
/// column, in place (`origin` before `owner`, the order [`SCHEMA`] declares them): the rows
/// waiting in it stay, with nothing recorded in it.
fn add_column(conn: &Connection, column: &str) -> Result<(), StoreError> {
    let has: bool = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('requests') WHERE name = ?1",
            params![column],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(StoreError::sqlite("read the inbox's columns"))?;
    if !has {
        conn.execute(
            &format!("ALTER TABLE requests ADD COLUMN {column} TEXT"),
            [],
        )
        .map_err(StoreError::sqlite(format!(
            "add the inbox's {column} column"
        )))?;
    }
    Ok(())
}

/// The writer's count of the queue, by owner ([`Owner::as_str`]): root's pending jobs as the
/// last [`Backlog`] read them, and the rows received beyond its watermark.
struct Queue {
    caps: QueueCaps,
    /// Root's pending jobs by owner, at the last backlog.
    pending: HashMap<String, u64>,
    /// The rows received beyond the last backlog's watermark, in order, each with its owner
    /// (`None` for a row received before owners were recorded: counted in the total only).
    received: VecDeque<(i64, Option<String>)>,
    /// `received` counted by owner.
    received_by_owner: HashMap<String, u64>,
}

impl Queue {
    /// The queue of an inbox just opened: every row it holds counts as received, until the
    /// first backlog says which of them root has.
    fn of_rows(caps: QueueCaps, conn: &Connection) -> Result<Queue, StoreError> {
        let mut queue = Queue {
            caps,
            pending: HashMap::new(),
            received: VecDeque::new(),
            received_by_owner: HashMap::new(),
        };
        let rows: Vec<(i64, Option<String>)> = conn
            .prepare("SELECT seq, owner FROM requests ORDER BY seq")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()
            })
            .map_err(StoreError::sqlite("count the inbox's queue"))?;
        for (seq, owner) in rows {
            queue.received(seq, owner);
        }
        Ok(queue)
    }

    fn received(&mut self, seq: i64, owner: Option<String>) {
        if let Some(owner) = &owner {
            *self.received_by_owner.entry(owner.clone()).or_default() += 1;
        }
        self.received.push_back((seq, owner));
    }

    /// Root's side as `backlog` read it: the rows at or below its watermark are among its
    /// pending jobs (or done), no longer counted as received.
    fn root_holds(&mut self, backlog: Backlog) {
        while let Some((seq, _)) = self.received.front()
            && *seq <= backlog.watermark
        {
            if let Some((_, Some(owner))) = self.received.pop_front()
                && let Some(n) = self.received_by_owner.get_mut(&owner)
            {
                *n -= 1;
                if *n == 0 {
                    self.received_by_owner.remove(&owner);
                }
            }
        }
        self.pending = backlog.pending;
    }

    /// How many requests `owner` has queued, with `extra` more of this commit.
    fn of_owner(&self, owner: &str, extra: &HashMap<String, u64>) -> u64 {
        [&self.pending, &self.received_by_owner, extra]
            .iter()
            .map(|counts| counts.get(owner).copied().unwrap_or(0))
            .sum()
    }

    /// How many requests every account together has queued (the node-scope lane aside), with
    /// `extra` more of this commit.
    fn of_accounts(&self, extra: &HashMap<String, u64>) -> u64 {
        let tenants = |counts: &HashMap<String, u64>| {
            counts
                .iter()
                .filter(|(owner, _)| owner.as_str() != Owner::NODE)
                .map(|(_, n)| n)
                .sum::<u64>()
        };
        let unattributed = self.received.iter().filter(|(_, o)| o.is_none()).count() as u64;
        tenants(&self.pending) + tenants(&self.received_by_owner) + tenants(extra) + unattributed
    }

    /// The receipt of a new request of `owner` past a cap, with `extra` more of this commit
    /// queued; `None` when it may be queued.
    fn refuses(&self, owner: &Owner, extra: &HashMap<String, u64>) -> Option<Receipt> {
        let (limit, cap) = match owner {
            Owner::Node => (QueueLimit::NodeScope, self.caps.per_account),
            Owner::Tenant(_) => (QueueLimit::Account, self.caps.per_account),
        };
        let queued = self.of_owner(owner.as_str(), extra);
        if queued >= cap {
            return Some(Receipt::QueueFull { limit, cap, queued });
        }
        if matches!(owner, Owner::Tenant(_)) {
            let queued = self.of_accounts(extra);
            if queued >= self.caps.total {
                return Some(Receipt::QueueFull {
                    limit: QueueLimit::Node,
                    cap: self.caps.total,
                    queued,
                });
            }
        }
        None
    }
}

fn commit_batch(
    conn: &mut Connection,
    batch: Vec<(ValidatedJob, Origin, Reply)>,
    now: i64,
    mut queue: Option<&mut Queue>,
) {
    // The rows this commit adds, by owner: counted against the caps as the batch goes, and
    // into the queue once the commit returned.
    let mut added: HashMap<String, u64> = HashMap::new();
    let outcome = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut admissions = Vec::with_capacity(batch.len());
        {
            let mut find = tx.prepare_cached(
                "SELECT seq, body_sha256, received_at FROM requests WHERE request_id = ?1",
            )?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO requests(request_id, operation, body, body_sha256, received_at, origin, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING seq",
            )?;
            for (job, origin, _) in &batch {
                let existing: Option<(i64, String, i64)> = find
                    .query_row(params![job.request_id.as_str()], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .optional()?;
                admissions.push(match existing {
                    Some((seq, sha, received_at)) if sha == job.body_sha256 => {
                        Receipt::Duplicate { seq, received_at }
                    }
                    Some(_) => Receipt::Conflict,
                    None => match queue.as_deref().and_then(|q| q.refuses(&job.owner, &added)) {
                        Some(full) => full,
                        None => {
                            let seq = insert.query_row(
                                params![
                                    job.request_id.as_str(),
                                    job.operation,
                                    job.canonical.as_bytes(),
                                    job.body_sha256,
                                    now,
                                    origin.stored(),
                                    job.owner.as_str()
                                ],
                                |r| r.get(0),
                            )?;
                            *added.entry(job.owner.as_str().to_owned()).or_default() += 1;
                            Receipt::Received {
                                seq,
                                received_at: now,
                            }
                        }
                    },
                });
            }
        }
        tx.commit()?;
        Ok::<_, rusqlite::Error>(admissions)
    })();
    match outcome {
        Ok(admissions) => {
            for ((job, _, reply), admission) in batch.into_iter().zip(admissions) {
                if let (Some(queue), Receipt::Received { seq, .. }) =
                    (queue.as_deref_mut(), &admission)
                {
                    queue.received(*seq, Some(job.owner.as_str().to_owned()));
                }
                reply(Ok(admission));
            }
        }
        Err(e) if disk::is_out_of_space(&e) => refuse_batch(batch, &e.to_string()),
        Err(e) => {
            tracing::error!(error = %e, requests = batch.len(), "inbox group commit failed");
            for (_, _, reply) in batch {
                reply(Err(StoreError::Busy {
                    context: format!("inbox commit: {e}"),
                }));
            }
        }
    }
}

/// One inbox row as root reads it: nothing in it is trusted yet.
#[derive(Clone, Debug)]
pub struct InboxRow {
    pub seq: i64,
    pub request_id: String,
    pub operation: String,
    /// At most [`MAX_BODY`] + 1 bytes of the body: root never loads a hostile blob whole.
    pub body: Vec<u8>,
    /// The body's full length as stored.
    pub body_len: i64,
    pub received_at: Option<i64>,
    /// At most [`Origin::MAX_STORED`] + 1 characters of the front door's record of where the
    /// request came in; `None` when the row has none (received before origins were recorded).
    pub origin: Option<String>,
}

impl InboxRow {
    /// Checks what can be checked before parsing the body.
    pub fn check(&self) -> Result<(), registry::FieldError> {
        if self.body_len > MAX_BODY as i64 || self.body.len() > MAX_BODY {
            return Err(registry::FieldError::new(
                "body_too_large",
                "",
                format!(
                    "the body is {} bytes; at most {MAX_BODY} are accepted",
                    self.body_len
                ),
            ));
        }
        Ok(())
    }

    /// The row's origin, checked: `Ok(None)` when it has none recorded.
    pub fn checked_origin(&self) -> Result<Option<Origin>, registry::FieldError> {
        match &self.origin {
            None => Ok(None),
            Some(text) => Origin::parse_stored(text).map(Some).ok_or_else(|| {
                registry::FieldError::new(
                    "invalid_origin",
                    "origin",
                    "the inbox row's origin is not one the API writes",
                )
            }),
        }
    }
}

/// Whitespace-insensitive form of a `CREATE` statement: runs of whitespace become one space,
/// and none is kept inside parentheses' edges or before a comma, so a table SQLite rewrote
/// for `ALTER TABLE ... ADD COLUMN` reads like the one declared with that column.
fn normalized(sql: &str) -> String {
    sql.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ,", ",")
        .replace(" )", ")")
        .replace("( ", "(")
}

/// The shape of an inbox root may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InboxShape {
    /// Created but not yet given its table.
    Empty,
    /// The API's schema before requests carried their origin.
    WithoutOrigin,
    /// The API's schema before requests carried their owner, which root does not read: it
    /// reads the same columns as from the current one.
    WithoutOwner,
    Current,
}

/// Refuses an inbox whose schema is not exactly the API's: one table `requests` as [`SCHEMA`]
/// (or [`SCHEMA_WITHOUT_OWNER`], [`SCHEMA_WITHOUT_ORIGIN`]) declares it, and its unique index. Reading `sqlite_schema`
/// runs nothing the file declares; anything else might (an endless recursive view would hang
/// root's pass, an unindexed `seq` would make every read sort the whole file).
fn check_schema(conn: &Connection) -> Result<InboxShape, StoreError> {
    let declared = |schema: &str| {
        normalized(
            &schema
                .trim()
                .trim_end_matches(';')
                .replace("IF NOT EXISTS ", ""),
        )
    };
    let (current, without_owner, without_origin) = (
        declared(SCHEMA),
        declared(SCHEMA_WITHOUT_OWNER),
        declared(SCHEMA_WITHOUT_ORIGIN),
    );
    let objects: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY name")
        .and_then(|mut s| {
            s.query_map([], |r| {
                let text = |i| -> rusqlite::Result<Option<String>> {
                    Ok(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Text(t) => {
                            Some(String::from_utf8_lossy(t).into_owned())
                        }
                        _ => None,
                    })
                };
                Ok((
                    text(0)?.unwrap_or_default(),
                    text(1)?.unwrap_or_default(),
                    text(2)?,
                ))
            })?
            .take(16)
            .collect()
        })
        .map_err(StoreError::sqlite("read the inbox's schema"))?;
    if objects.is_empty() {
        // Created but not yet given its table: nothing to read yet.
        return Ok(InboxShape::Empty);
    }
    let table = objects
        .iter()
        .find(|(kind, name, _)| kind == "table" && name == "requests")
        .and_then(|(_, _, sql)| sql.as_deref().map(normalized));
    let shape = match table {
        Some(sql) if sql == current => Some(InboxShape::Current),
        Some(sql) if sql == without_owner => Some(InboxShape::WithoutOwner),
        Some(sql) if sql == without_origin => Some(InboxShape::WithoutOrigin),
        _ => None,
    };
    let indexed = objects.iter().any(|(kind, name, sql)| {
        kind == "index" && name == "sqlite_autoindex_requests_1" && sql.is_none()
    });
    if let Some(shape) = shape
        && indexed
        && objects.len() == 2
    {
        Ok(shape)
    } else {
        let names: Vec<String> = objects
            .iter()
            .map(|(kind, name, _)| format!("{kind} {name}"))
            .collect();
        Err(StoreError::HostileInbox(format!(
            "found {}",
            names.join(", ")
        )))
    }
}

/// Root's read of the inbox: up to `limit` rows after `after`, in order. Opened read-only,
/// without following a symlink, with the settings for an untrusted file. A value of the wrong
/// type becomes a row that fails validation; a missing inbox is an empty one.
pub fn read_rows(path: &Path, after: i64, limit: u32) -> Result<Vec<InboxRow>, StoreError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_owned(),
                source,
            });
        }
        Ok(_) => {}
    }
    // SQLite opens the database, its WAL and its shared-memory file without O_NONBLOCK: a
    // FIFO or a device there would block root's pass for good. Only regular files (or none,
    // for the WAL and shm) are read.
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::symlink_metadata(&name) {
            Ok(meta) if meta.file_type().is_file() => {}
            Err(e) if !suffix.is_empty() && e.kind() == std::io::ErrorKind::NotFound => {}
            Ok(meta) => {
                return Err(StoreError::HostileInbox(format!(
                    "inbox.db{suffix} is a {:?}, not a regular file",
                    meta.file_type()
                )));
            }
            Err(source) => {
                return Err(StoreError::Io {
                    path: name.into(),
                    source,
                });
            }
        }
    }
    let conn = sqlite::open_inbox_untrusted(path)
        .map_err(StoreError::sqlite(format!("open {}", path.display())))?;
    let origin = match check_schema(&conn)? {
        InboxShape::Empty => return Ok(Vec::new()),
        // The same parameters either way: an inbox without the column reads as no origin.
        InboxShape::WithoutOrigin => "substr(NULL, 1, ?4)",
        InboxShape::WithoutOwner | InboxShape::Current => "substr(origin, 1, ?4)",
    };
    let mut stmt = conn
        .prepare(&format!(
            "SELECT seq, request_id, operation, substr(body, 1, ?3), length(body), received_at,
                    {origin}
             FROM requests WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        ))
        .map_err(StoreError::sqlite("read the inbox"))?;
    let text = |v: rusqlite::types::ValueRef<'_>| match v {
        rusqlite::types::ValueRef::Text(t) => {
            String::from_utf8_lossy(t).chars().take(128).collect()
        }
        _ => String::new(),
    };
    let rows = stmt
        .query_map(
            params![
                after,
                limit,
                MAX_BODY as i64 + 1,
                Origin::MAX_STORED as i64 + 1
            ],
            |r| {
                let body = match r.get_ref(3)? {
                    rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                        b.to_vec()
                    }
                    _ => Vec::new(),
                };
                Ok(InboxRow {
                    seq: r.get(0)?,
                    request_id: text(r.get_ref(1)?),
                    operation: text(r.get_ref(2)?),
                    body,
                    body_len: r.get_ref(4)?.as_i64().unwrap_or(i64::MAX),
                    received_at: r.get_ref(5)?.as_i64().ok(),
                    origin: match r.get_ref(6)? {
                        rusqlite::types::ValueRef::Null => None,
                        _ => Some(text(r.get_ref(6)?)),
                    },
                })
            },
        )
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(StoreError::sqlite("read the inbox"))?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn job(n: u32) -> ValidatedJob {
        let id: registry::Hex32 = format!("{n:032x}").parse().unwrap();
        ValidatedJob {
            request_id: id.clone(),
            operation: "probe",
            family: "probe",
            module: registry::Module::Core,
            scope: registry::Scope::Tenant,
            resource_id: id.clone(),
            owner: registry::Owner::Tenant(id),
            canonical: format!("{{\"n\":{n}}}"),
            body_sha256: format!("{n:064x}"),
            request_generation: None,
        }
    }

    #[test]
    fn a_pruned_inbox_never_reuses_a_sequence_number() {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, writer) = Inbox::open(&dir.path().join("inbox.db")).unwrap();
        let seq = |a| match a {
            Receipt::Received { seq, .. } => seq,
            other => panic!("{other:?}"),
        };
        let first = seq(inbox.admit_blocking(job(1), Origin::Api).unwrap());
        let second = seq(inbox.admit_blocking(job(2), Origin::Api).unwrap());
        // Root admitted both: the API prunes up to its watermark.
        inbox.prune(second);
        let deadline = Instant::now() + Duration::from_secs(10);
        while inbox.received(&format!("{:032x}", 1)).unwrap().is_some() {
            assert!(Instant::now() < deadline, "the prune did not happen");
            std::thread::sleep(Duration::from_millis(5));
        }
        let third = seq(inbox.admit_blocking(job(3), Origin::Api).unwrap());
        assert!(
            third > second && second > first,
            "sequence numbers {first}, {second}, then {third}: root would never read the last"
        );
        drop(inbox);
        writer.join().unwrap();
    }

    /// Request `n` of `owner`.
    fn job_of(n: u32, owner: Owner) -> ValidatedJob {
        ValidatedJob {
            scope: match owner {
                Owner::Node => registry::Scope::Node,
                Owner::Tenant(_) => registry::Scope::Tenant,
            },
            owner,
            ..job(n)
        }
    }

    fn account(n: u32) -> Owner {
        Owner::Tenant(format!("{n:032x}").parse().unwrap())
    }

    fn full(limit: QueueLimit, cap: u64, queued: u64) -> Receipt {
        Receipt::QueueFull { limit, cap, queued }
    }

    /// Admissions answered on the writer thread; what the backlog command changed is seen by
    /// the next admission, which the writer takes after it.
    #[test]
    fn a_capped_inbox_refuses_past_each_cap_and_counts_what_root_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.db");
        let caps = QueueCaps {
            total: 5,
            per_account: 2,
        };
        let (inbox, writer) = Inbox::open_capped(&path, caps).unwrap();
        let (a, b, c) = (account(0xa), account(0xb), account(0xc));
        let admit = |n, owner: &Owner| {
            inbox
                .admit_blocking(job_of(n, owner.clone()), Origin::Api)
                .unwrap()
        };
        let received = |r: Receipt| matches!(r, Receipt::Received { .. });
        assert!(received(admit(1, &a)));
        assert!(received(admit(2, &a)));
        // A's third is past its cap; the same request again is the same job, full or not.
        assert_eq!(admit(3, &a), full(QueueLimit::Account, 2, 2));
        assert!(matches!(admit(2, &a), Receipt::Duplicate { .. }));
        // B and C fill the node's total of 5; node-scope requests are a lane of their own.
        assert!(received(admit(4, &b)));
        assert!(received(admit(5, &b)));
        assert!(received(admit(6, &c)));
        assert_eq!(admit(7, &c), full(QueueLimit::Node, 5, 5));
        assert!(received(admit(8, &Owner::Node)));
        assert!(received(admit(9, &Owner::Node)));
        assert_eq!(admit(10, &Owner::Node), full(QueueLimit::NodeScope, 2, 2));

        // Root ingested everything (watermark 7, the seq of the last row) and has done one
        // of A's jobs: A has room for one more, and only one.
        let backlog = |pending: &[(&Owner, u64)]| Backlog {
            watermark: 7,
            pending: pending
                .iter()
                .map(|(owner, n)| (owner.as_str().to_owned(), *n))
                .collect(),
        };
        inbox.backlog(backlog(&[(&a, 1), (&b, 2), (&c, 1), (&Owner::Node, 2)]));
        assert!(received(admit(11, &a)));
        assert!(matches!(admit(12, &a), Receipt::QueueFull { .. }));

        // Reopened, the inbox counts its rows again, by owner, until root says what it holds.
        drop(inbox);
        writer.join().unwrap();
        let (inbox, writer) = Inbox::open_capped(&path, caps).unwrap();
        let admit = |n, owner: &Owner| {
            inbox
                .admit_blocking(job_of(n, owner.clone()), Origin::Api)
                .unwrap()
        };
        assert_eq!(admit(13, &b), full(QueueLimit::Account, 2, 2));
        inbox.backlog(Backlog {
            watermark: 8,
            pending: HashMap::new(),
        });
        // Root has ingested every row (up to 8, request 11) and done them all: B has room.
        assert!(matches!(admit(13, &b), Receipt::Received { .. }));
        drop(inbox);
        writer.join().unwrap();
    }

    fn fleet(sequence: u64) -> Origin {
        Origin::Fleet {
            stream: "FLEET_REQ".into(),
            sequence,
        }
    }

    #[test]
    fn an_inbox_from_before_origins_keeps_its_rows_and_gains_the_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(SCHEMA_WITHOUT_ORIGIN).unwrap();
            conn.execute(
                "INSERT INTO requests(request_id, operation, body, body_sha256, received_at)
                 VALUES ('r1', 'probe', x'7b7d', 'x', 1)",
                [],
            )
            .unwrap();
        }
        // Root reads the old shape as it is: the row, with no origin recorded.
        let rows = read_rows(&path, 0, 10).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].origin, None);
        assert_eq!(rows[0].checked_origin(), Ok(None));

        // The API opens it: the column is added in place, the waiting row stays.
        let (inbox, writer) = Inbox::open(&path).unwrap();
        inbox.admit_blocking(job(7), fleet(42)).unwrap();
        drop(inbox);
        writer.join().unwrap();
        let rows = read_rows(&path, 0, 10).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].checked_origin(), Ok(None));
        assert_eq!(rows[1].checked_origin(), Ok(Some(fleet(42))));

        // An origin the API never writes is refused by name.
        let forged = InboxRow {
            origin: Some("{\"via\":\"root\"}".into()),
            ..rows[1].clone()
        };
        assert_eq!(forged.checked_origin().unwrap_err().code, "invalid_origin");
    }
}
