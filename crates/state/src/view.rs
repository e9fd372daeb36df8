//! The one view of the resource rows that handlers read: state.db's committed rows with the
//! changes not committed yet applied over them, each family's rows typed.
//!
//! A job's change to its resource row is committed with its completion, and a job that
//! changed a shared service's configuration is completed only with its batch, after the
//! batch's reloads. Until then its row is [`Pending`]: the running job's change, the changes
//! of the batch's earlier jobs (oldest first), and the rows a purge in the running job is
//! removing. A [`View`] reads state.db and applies those, so a file derived whole from
//! state (a vhost, a pool, the mail maps, pure-ftpd's passwd) rendered from the view already
//! holds this job's and this batch's rows, and no handler keeps an overlay of its own.
//!
//! Rows are typed: each family has a row struct ([`StoredRow`], `deny_unknown_fields`) that
//! serializes to exactly the JSON it stores. A row that does not read back as its family's
//! shape is [`StoreError::InvalidRow`], never a default and never a panic.

use std::collections::BTreeMap;

use registry::{Hex32, Owner};
use serde_json::Value;

use crate::{ClaimedJob, ResourceChange, StateDb};
use store::StoreError;
use store::{ResourceRow, StoredRow};

/// A typed row with its resource id and owner.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored<T> {
    pub id: Hex32,
    pub owner: Owner,
    pub row: T,
}

impl<T: StoredRow> Stored<T> {
    /// Reads a resource row of `T`'s family as `T`.
    pub fn from_row(row: ResourceRow) -> Result<Stored<T>, StoreError> {
        typed_one(row.resource_id, row.owner, row.data)
    }
}

/// The resource a change is about: what a job's completion writes its row under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceKey {
    pub family: String,
    pub id: Hex32,
    pub owner: Owner,
}

impl ClaimedJob {
    /// The resource this job changes.
    pub fn key(&self) -> ResourceKey {
        ResourceKey {
            family: self.family.clone(),
            id: self.resource_id.clone(),
            owner: self.owner.clone(),
        }
    }
}

/// The changes to resource rows made but not committed yet (see the module documentation).
#[derive(Debug, Default)]
pub struct Pending {
    /// The changes of the batch's earlier jobs, oldest first: `Some(row)` an upsert, `None`
    /// a deletion.
    batch: Vec<(ResourceKey, Option<Value>)>,
    /// The running job's resource.
    job: Option<ResourceKey>,
    /// What the running job does to it.
    change: ResourceChange,
    /// The families of an owner the running job's purge is removing.
    dropped: Vec<(String, Owner)>,
}

impl Pending {
    /// A job starts: its changes apply to `key`.
    pub fn begin_job(&mut self, key: ResourceKey) {
        self.job = Some(key);
        self.change = ResourceChange::Keep;
        self.dropped.clear();
    }

    /// Records the row the running job leaves behind. Without a running job (a tool or a
    /// test calling a handler directly) the change is kept for [`Pending::take_job`] but no
    /// view shows it.
    pub fn set_row<T: StoredRow>(&mut self, row: &T) {
        if let Some(key) = &self.job {
            assert_eq!(
                key.family,
                T::FAMILY,
                "a handler recorded a {} row for a job of family {}: a node bug",
                T::FAMILY,
                key.family
            );
        }
        let data = serde_json::to_value(row).expect(
            "a stored row always serializes: its fields are strings, numbers, booleans, lists \
             and string-keyed objects",
        );
        self.change = ResourceChange::Upsert(data);
    }

    /// Records that the running job removes its resource.
    pub fn forget_row(&mut self) {
        self.change = ResourceChange::Delete;
    }

    /// Drops the running job's change (a replayed request re-derives files, it moves no row).
    pub fn discard_change(&mut self) {
        self.change = ResourceChange::Keep;
    }

    /// For a purge in the running job: from now on, views leave out `owner`'s rows of
    /// `family`, so files rendered next are without them; the purge then forgets them in
    /// state.db ([`StateDb::forget_resources_of`]).
    pub fn drop_rows_of(&mut self, family: &str, owner: &Owner) {
        self.dropped.push((family.to_owned(), owner.clone()));
    }

    /// The running job ends: its change, for the runner to commit (at once, or with the
    /// batch after [`Pending::hold`]).
    pub fn take_job(&mut self) -> ResourceChange {
        self.job = None;
        self.dropped.clear();
        std::mem::replace(&mut self.change, ResourceChange::Keep)
    }

    /// Keeps a finished job's change visible until its batch is completed.
    pub fn hold(&mut self, key: ResourceKey, change: &ResourceChange) {
        match change {
            ResourceChange::Keep => {}
            ResourceChange::Upsert(data) => self.batch.push((key, Some(data.clone()))),
            ResourceChange::Delete => self.batch.push((key, None)),
        }
    }

    /// The batch is completed: its rows are committed (or its jobs failed).
    pub fn clear_batch(&mut self) {
        self.batch.clear();
    }

    /// Starts a nested job on `key` (`rebuild_account` replaying a request of one of the
    /// account's resources): until [`Pending::unnest`], changes apply to `key` and views show
    /// them to the replay alone; then the running job is put back as it was and the replay's
    /// change is dropped, never committed.
    #[must_use = "the running job comes back with Pending::unnest"]
    pub fn nest(&mut self, key: ResourceKey) -> OuterJob {
        OuterJob {
            job: self.job.replace(key),
            change: std::mem::take(&mut self.change),
            dropped: std::mem::take(&mut self.dropped),
        }
    }

    /// Ends a nested job ([`Pending::nest`]).
    pub fn unnest(&mut self, outer: OuterJob) {
        self.job = outer.job;
        self.change = outer.change;
        self.dropped = outer.dropped;
    }

    /// The batch's changes of `family`, then the running job's when `with_job`, in order:
    /// `(key, Some(row))` an upsert, `(key, None)` a deletion.
    fn changes<'p>(
        &'p self,
        family: &'p str,
        with_job: bool,
    ) -> impl Iterator<Item = (&'p ResourceKey, Option<&'p Value>)> + 'p {
        let batch = self.batch.iter().map(|(key, row)| (key, row.as_ref()));
        let job = self
            .job
            .as_ref()
            .filter(|_| with_job)
            .and_then(|key| match &self.change {
                ResourceChange::Keep => None,
                ResourceChange::Upsert(data) => Some((key, Some(data))),
                ResourceChange::Delete => Some((key, None)),
            });
        batch
            .chain(job)
            .filter(move |(key, _)| key.family == family)
    }

    /// The owners whose rows of `family` the running job's purge removes.
    fn dropped<'p>(
        &'p self,
        family: &'p str,
        with_job: bool,
    ) -> impl Iterator<Item = &'p Owner> + 'p {
        self.dropped
            .iter()
            .filter(move |(f, _)| with_job && f == family)
            .map(|(_, owner)| owner)
    }
}

/// The running job, kept aside while a nested one runs ([`Pending::nest`]).
#[derive(Debug)]
pub struct OuterJob {
    job: Option<ResourceKey>,
    change: ResourceChange,
    dropped: Vec<(String, Owner)>,
}

/// state.db's resource rows with [`Pending`] changes applied, read typed.
#[derive(Clone, Copy)]
pub struct View<'a> {
    state: &'a StateDb,
    pending: Option<&'a Pending>,
    with_job: bool,
}

/// Raw rows by id, before they are typed.
type Rows = BTreeMap<Hex32, (Owner, Value)>;

impl<'a> View<'a> {
    /// state.db with `pending` applied: what a handler reads.
    pub fn new(state: &'a StateDb, pending: &'a Pending) -> View<'a> {
        View {
            state,
            pending: Some(pending),
            with_job: true,
        }
    }

    /// state.db with the batch's changes but not the running job's: what the job found.
    pub fn before_job(state: &'a StateDb, pending: &'a Pending) -> View<'a> {
        View {
            state,
            pending: Some(pending),
            with_job: false,
        }
    }

    /// state.db's committed rows alone (tools, tests, checks outside a pass).
    pub fn committed(state: &'a StateDb) -> View<'a> {
        View {
            state,
            pending: None,
            with_job: false,
        }
    }

    /// The row of `T`'s family with id `id`, whoever owns it.
    pub fn get<T: StoredRow>(&self, id: &Hex32) -> Result<Option<Stored<T>>, StoreError> {
        let mut rows = Rows::new();
        if let Some(row) = self.state.resource(T::FAMILY, id)? {
            rows.insert(row.resource_id, (row.owner, row.data));
        }
        self.apply(T::FAMILY, &mut rows, |key| &key.id == id);
        Ok(typed::<T>(rows)?.pop())
    }

    /// The row of `T`'s family with id `id` when the account `account` owns it.
    pub fn get_owned<T: StoredRow>(
        &self,
        account: &Hex32,
        id: &Hex32,
    ) -> Result<Option<T>, StoreError> {
        Ok(self
            .get::<T>(id)?
            .filter(|stored| stored.owner.as_str() == account.as_str())
            .map(|stored| stored.row))
    }

    /// Every row of `T`'s family that `owner` has, by id.
    pub fn of_owner<T: StoredRow>(&self, owner: &Owner) -> Result<Vec<Stored<T>>, StoreError> {
        let rows = self.state.resources_of(owner, T::FAMILY)?;
        let mut rows = raw(rows);
        self.apply(T::FAMILY, &mut rows, |key| &key.owner == owner);
        typed(rows)
    }

    /// Every row of `T`'s family that the account `account` has, by id.
    pub fn of_account<T: StoredRow>(&self, account: &Hex32) -> Result<Vec<Stored<T>>, StoreError> {
        self.of_owner(&Owner::Tenant(account.clone()))
    }

    /// Every row of `T`'s family, whoever owns it, by id.
    pub fn all<T: StoredRow>(&self) -> Result<Vec<Stored<T>>, StoreError> {
        let mut rows = raw(self.state.resources_of_family(T::FAMILY)?);
        self.apply(T::FAMILY, &mut rows, |_| true);
        typed(rows)
    }

    /// The ids of `owner`'s rows of `family`, whatever their shape: for the code that walks
    /// every family of an account (`rebuild_account`) and reads each row typed later.
    pub fn ids_of(&self, family: &str, owner: &Owner) -> Result<Vec<Hex32>, StoreError> {
        let mut rows = raw(self.state.resources_of(owner, family)?);
        self.apply(family, &mut rows, |key| &key.owner == owner);
        Ok(rows.into_keys().collect())
    }

    /// The ids of `family`'s rows, whoever owns them and whatever their shape: for the code
    /// that counts what a whole module holds (`apply_assignment` before it unassigns one).
    pub fn ids_of_family(&self, family: &str) -> Result<Vec<Hex32>, StoreError> {
        let mut rows = raw(self.state.resources_of_family(family)?);
        self.apply(family, &mut rows, |_| true);
        Ok(rows.into_keys().collect())
    }

    /// The ids of `T`'s rows whose top-level `field` is the string `value`, found by SQLite
    /// without parsing every row (an account's user name among thousands).
    pub fn ids_where<T: StoredRow>(
        &self,
        field: &str,
        value: &str,
    ) -> Result<Vec<Hex32>, StoreError> {
        let found = self
            .state
            .resource_ids_where(T::FAMILY, &json_path(field), value)?;
        let mut ids: std::collections::BTreeSet<Hex32> = found.into_iter().collect();
        let Some(pending) = self.pending else {
            return Ok(ids.into_iter().collect());
        };
        let dropped: Vec<&Owner> = pending.dropped(T::FAMILY, self.with_job).collect();
        for (key, data) in pending.changes(T::FAMILY, self.with_job) {
            ids.remove(&key.id);
            if data.is_some_and(|d| d[field].as_str() == Some(value))
                && !dropped.contains(&&key.owner)
            {
                ids.insert(key.id.clone());
            }
        }
        for owner in dropped {
            for row in self.state.resources_of(owner, T::FAMILY)? {
                ids.remove(&row.resource_id);
            }
        }
        Ok(ids.into_iter().collect())
    }

    /// Every integer `T`'s rows hold at one of the top-level `fields`, found by SQLite
    /// without parsing every row, with those of pending rows added: what was or is about to
    /// be recorded.
    pub fn numbers<T: StoredRow>(&self, fields: &[&str]) -> Result<Vec<i64>, StoreError> {
        let paths: Vec<String> = fields.iter().map(|f| json_path(f)).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let mut numbers = self.state.resource_numbers(T::FAMILY, &paths)?;
        if let Some(pending) = self.pending {
            for (_, data) in pending.changes(T::FAMILY, self.with_job) {
                for field in fields {
                    numbers.extend(data.and_then(|d| d[*field].as_i64()));
                }
            }
        }
        Ok(numbers)
    }

    /// Applies the pending changes of `family` to `rows`: an upsert of a key `wanted` selects
    /// replaces or adds its row, any other change of a key in `rows` takes it out, and the
    /// rows of an owner the running job purges go.
    fn apply(&self, family: &str, rows: &mut Rows, wanted: impl Fn(&ResourceKey) -> bool) {
        let Some(pending) = self.pending else {
            return;
        };
        for (key, data) in pending.changes(family, self.with_job) {
            match data {
                Some(data) if wanted(key) => {
                    rows.insert(key.id.clone(), (key.owner.clone(), data.clone()));
                }
                _ => {
                    rows.remove(&key.id);
                }
            }
        }
        let dropped: Vec<&Owner> = pending.dropped(family, self.with_job).collect();
        rows.retain(|_, (owner, _)| !dropped.contains(&&*owner));
    }
}

fn json_path(field: &str) -> String {
    assert!(
        !field.is_empty() && field.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
        "a stored row's field is a snake-case name, not {field:?}: a node bug"
    );
    format!("$.{field}")
}

fn raw(rows: Vec<ResourceRow>) -> Rows {
    rows.into_iter()
        .map(|row| (row.resource_id, (row.owner, row.data)))
        .collect()
}

fn typed<T: StoredRow>(rows: Rows) -> Result<Vec<Stored<T>>, StoreError> {
    rows.into_iter()
        .map(|(id, (owner, data))| typed_one(id, owner, data))
        .collect()
}

fn typed_one<T: StoredRow>(id: Hex32, owner: Owner, data: Value) -> Result<Stored<T>, StoreError> {
    let row = serde_json::from_value(data).map_err(|source| StoreError::InvalidRow {
        family: T::FAMILY.to_owned(),
        id: id.to_string(),
        source,
    })?;
    Ok(Stored { id, owner, row })
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Thing {
        name: String,
        n: u32,
    }

    impl StoredRow for Thing {
        const FAMILY: &'static str = "thing";
    }

    fn hex(n: u8) -> Hex32 {
        format!("{n:032x}").parse().unwrap()
    }

    fn account(n: u8) -> Owner {
        Owner::Tenant(hex(n))
    }

    fn key(id: u8, owner: u8) -> ResourceKey {
        ResourceKey {
            family: Thing::FAMILY.into(),
            id: hex(id),
            owner: account(owner),
        }
    }

    fn thing(name: &str, n: u32) -> Thing {
        Thing {
            name: name.into(),
            n,
        }
    }

    fn commit(state: &StateDb, id: u8, owner: u8, data: &str) {
        state
            .conn
            .execute(
                "INSERT INTO resources(family, resource_id, owner, generation, data, updated_at)
                 VALUES ('thing', ?1, ?2, 1, ?3, 0)",
                rusqlite::params![hex(id).as_str(), account(owner).as_str(), data],
            )
            .unwrap();
    }

    /// A state.db holding `rows` (id, owner, data).
    fn state_with(rows: &[(u8, u8, &str)]) -> (tempfile::TempDir, StateDb) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        for (id, owner, data) in rows {
            commit(&state, *id, *owner, data);
        }
        (dir, state)
    }

    /// Thing "one" of account 10 and "two" of account 11.
    fn one_and_two() -> (tempfile::TempDir, StateDb) {
        state_with(&[
            (1, 10, r#"{"name":"one","n":1}"#),
            (2, 11, r#"{"name":"two","n":2}"#),
        ])
    }

    fn upsert(name: &str, n: u32) -> ResourceChange {
        ResourceChange::Upsert(serde_json::to_value(thing(name, n)).unwrap())
    }

    /// The key of a job on account `n` itself (a purge, a rebuild).
    fn account_job(n: u8) -> ResourceKey {
        ResourceKey {
            family: "account".into(),
            id: hex(n),
            owner: account(n),
        }
    }

    fn names(rows: Vec<Stored<Thing>>) -> Vec<String> {
        rows.into_iter().map(|s| s.row.name).collect()
    }

    #[test]
    fn the_view_shows_the_batch_and_the_running_job_over_state_db() {
        let (_dir, state) = state_with(&[
            (1, 10, r#"{"name":"one","n":1}"#),
            (2, 11, r#"{"name":"two","n":2}"#),
            (3, 11, r#"{"name":"three","n":3}"#),
        ]);
        let mut pending = Pending::default();
        // An earlier job of the batch changed 2 and removed 3.
        pending.hold(key(2, 11), &upsert("deux", 2));
        pending.hold(key(3, 11), &ResourceChange::Delete);
        // The running job adds 4 for account 10.
        pending.begin_job(key(4, 10));
        pending.set_row(&thing("four", 4));
        let view = View::new(&state, &pending);
        assert_eq!(names(view.all::<Thing>().unwrap()), ["one", "deux", "four"]);
        assert_eq!(
            names(view.of_account::<Thing>(&hex(10)).unwrap()),
            ["one", "four"]
        );
        assert_eq!(names(view.of_account::<Thing>(&hex(11)).unwrap()), ["deux"]);
        assert_eq!(view.get::<Thing>(&hex(3)).unwrap(), None);
        assert_eq!(
            view.get_owned::<Thing>(&hex(10), &hex(4)).unwrap(),
            Some(thing("four", 4))
        );
        assert_eq!(view.get_owned::<Thing>(&hex(11), &hex(4)).unwrap(), None);
        // What the job found: the batch, not its own change.
        let before = View::before_job(&state, &pending);
        assert_eq!(names(before.all::<Thing>().unwrap()), ["one", "deux"]);
        // Committed alone.
        assert_eq!(
            names(View::committed(&state).all::<Thing>().unwrap()),
            ["one", "two", "three"]
        );
        // The job ends and waits with its batch; the batch is completed.
        let change = pending.take_job();
        pending.hold(key(4, 10), &change);
        assert_eq!(
            names(View::new(&state, &pending).all::<Thing>().unwrap()),
            ["one", "deux", "four"]
        );
        pending.clear_batch();
        assert_eq!(
            names(View::new(&state, &pending).all::<Thing>().unwrap()),
            ["one", "two", "three"]
        );
    }

    #[test]
    fn a_purge_leaves_out_the_owners_rows_committed_and_pending() {
        let (_dir, state) = one_and_two();
        let mut pending = Pending::default();
        pending.hold(key(3, 11), &upsert("three", 3));
        pending.begin_job(account_job(11));
        pending.drop_rows_of(Thing::FAMILY, &account(11));
        let view = View::new(&state, &pending);
        assert_eq!(names(view.all::<Thing>().unwrap()), ["one"]);
        assert!(view.ids_where::<Thing>("name", "two").unwrap().is_empty());
        assert!(view.ids_where::<Thing>("name", "three").unwrap().is_empty());
        assert_eq!(view.ids_where::<Thing>("name", "one").unwrap(), [hex(1)]);
        // Before the job (a revert), they are there.
        let before = View::before_job(&state, &pending);
        assert_eq!(
            names(before.all::<Thing>().unwrap()),
            ["one", "two", "three"]
        );
        assert_eq!(
            before.ids_where::<Thing>("name", "three").unwrap(),
            [hex(3)]
        );
        pending.take_job();
        assert_eq!(
            names(View::new(&state, &pending).all::<Thing>().unwrap()),
            ["one", "two", "three"]
        );
    }

    #[test]
    fn lookups_by_field_see_pending_rows() {
        let (_dir, state) = one_and_two();
        let mut pending = Pending::default();
        pending.hold(key(2, 11), &upsert("one", 7));
        pending.hold(key(1, 10), &ResourceChange::Delete);
        let view = View::new(&state, &pending);
        assert_eq!(view.ids_where::<Thing>("name", "one").unwrap(), [hex(2)]);
        assert!(view.ids_where::<Thing>("name", "two").unwrap().is_empty());
        let mut numbers = view.numbers::<Thing>(&["n"]).unwrap();
        numbers.sort();
        assert_eq!(numbers, [1, 2, 7], "what was or is about to be recorded");
    }

    #[test]
    fn a_replay_shows_its_change_to_itself_alone() {
        let (_dir, state) = state_with(&[]);
        let mut pending = Pending::default();
        pending.begin_job(account_job(10));
        let outer = pending.nest(key(5, 10));
        pending.set_row(&thing("five", 5));
        assert_eq!(
            names(View::new(&state, &pending).all::<Thing>().unwrap()),
            ["five"]
        );
        pending.unnest(outer);
        assert!(
            View::new(&state, &pending)
                .all::<Thing>()
                .unwrap()
                .is_empty()
        );
        assert_eq!(pending.take_job(), ResourceChange::Keep);
    }

    #[test]
    fn a_row_of_another_shape_is_a_typed_error() {
        let (_dir, state) = state_with(&[
            (1, 10, r#"{"name":"one","n":1,"extra":true}"#),
            (2, 10, r#"{"name":"two"}"#),
        ]);
        let view = View::committed(&state);
        for id in [1, 2] {
            match view.get::<Thing>(&hex(id)) {
                Err(StoreError::InvalidRow {
                    family, id: bad, ..
                }) => {
                    assert_eq!((family.as_str(), bad), ("thing", hex(id).to_string()));
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            view.all::<Thing>(),
            Err(StoreError::InvalidRow { .. })
        ));
    }

    #[test]
    #[should_panic(expected = "a node bug")]
    fn a_row_of_another_family_than_the_jobs_is_a_bug() {
        let mut pending = Pending::default();
        pending.begin_job(account_job(10));
        pending.set_row(&thing("x", 1));
    }
}
