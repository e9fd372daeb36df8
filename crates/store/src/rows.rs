//! The rows of state.db both sides read: a resource row as stored ([`ResourceRow`]), the shape
//! each family gives its rows ([`StoredRow`]), and a file system recorded full
//! ([`FullFileSystem`]), and the queue as root holds it ([`Backlog`]). Root's `state` crate writes them; the API's [`crate::StateReader`]
//! and `layerone status` read them.

use registry::{FieldOwners, FileSystem, Hex32, Owner, RowType};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::StoreError;

/// The shape of one family's resource rows.
pub trait StoredRow: Serialize + DeserializeOwned {
    /// The family whose rows have this shape.
    const FAMILY: &'static str;
    /// The fields of this row (as stored, by JSON key) that operations other than the
    /// family's declaring one set, each with every operation that sets it; every field not
    /// listed belongs to the declaring operation alone. A field may have several owners
    /// (`suspended`: the suspension and its reverse; a mailbox's password: its declaration
    /// and `set_mailbox_password`, the later request's in force), and no operation changes a
    /// field it does not own, so re-sending the declaring operation keeps the fields it does
    /// not own.
    const FIELD_OWNERS: FieldOwners = &[];
}

/// `R` as a family's purge hook names it ([`registry::Purge::ROW`]):
/// `const ROW: Option<RowType> = Some(store::row_type::<MyRow>());`.
pub const fn row_type<R: StoredRow>() -> RowType {
    RowType {
        family: R::FAMILY,
        field_owners: R::FIELD_OWNERS,
    }
}

/// Root's side of the queue at one moment ([`crate::StateReader::backlog`]): the inbox rows it
/// has ingested (up to `watermark`) and how many jobs each owner (by its stored form,
/// [`Owner::as_str`]) has queued or running. The inbox's rows beyond the watermark are the
/// rest of the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub watermark: i64,
    pub pending: std::collections::HashMap<String, u64>,
}

/// A tracked resource.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceRow {
    pub family: String,
    pub resource_id: Hex32,
    pub owner: Owner,
    pub generation: i64,
    pub data: Value,
}

/// One `resources` row as the queries select it (family, resource_id, owner, generation,
/// data).
pub fn read_resource(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<ResourceRow, StoreError>> {
    let family: String = r.get(0)?;
    let id: String = r.get(1)?;
    let owner: String = r.get(2)?;
    let generation: i64 = r.get(3)?;
    let data: String = r.get(4)?;
    Ok((|| {
        Ok(ResourceRow {
            resource_id: id
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("resource id {id:?}")))?,
            owner: Owner::parse(&owner)
                .ok_or_else(|| StoreError::Corrupt(format!("owner {owner:?}")))?,
            data: serde_json::from_str(&data)
                .map_err(|_| StoreError::Corrupt(format!("resource data of {id}")))?,
            family,
            generation,
        })
    })())
}

/// A file system recorded full, as `layerone status` and the metrics show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullFileSystem {
    pub filesystem: FileSystem,
    /// When the runner first found it full (ms).
    pub since_ms: i64,
    /// The bytes available then.
    pub available_bytes: u64,
}
