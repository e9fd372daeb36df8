//! The traits an operation author implements, and the small closed vocabularies they use.
//!
//! [`Operation`] and [`Family`] are the declarations: what a client of the node needs, and
//! nothing that touches the OS. [`Apply`] and [`Purge`] are the handlers, generic over the
//! context they work with, implemented where the handlers live, with [`crate::Derive`] (what
//! a family derives, for the drift check). A handler table takes an operation only if its
//! family has a purge hook and a derive hook, so a family without one does not compile into a
//! node (ARCHITECTURE.md invariant 2).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::OpError;
use crate::types::Hex32;

/// Whether an operation acts for one tenant (an account) or for the node itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Tenant,
    Node,
}

/// The module a family belongs to. A node's assignment (the fleet's, applied by
/// `apply_assignment`) decides which modules it runs; a node outside any fleet runs them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    Core,
    Web,
    Php,
    Mysql,
    Mail,
    Tls,
    Backup,
}

impl Module {
    /// Every module, in declaration order.
    pub const ALL: [Module; 7] = [
        Module::Core,
        Module::Web,
        Module::Php,
        Module::Mysql,
        Module::Mail,
        Module::Tls,
        Module::Backup,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Module::Core => "core",
            Module::Web => "web",
            Module::Php => "php",
            Module::Mysql => "mysql",
            Module::Mail => "mail",
            Module::Tls => "tls",
            Module::Backup => "backup",
        }
    }
}

/// Which of the runner's two lanes applies an operation's jobs (docs/design.md section 5).
///
/// Jobs of one account run in admission order whatever their lanes: a lane decides only what
/// a job may wait behind. The main lane applies jobs in admission order, in batches; the long
/// lane applies one job at a time beside it, so work whose length a tenant decides never
/// holds another account's jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// Work that takes about the same time for every tenant: the default.
    Main,
    /// Work whose length grows with what the tenant keeps: an archive of the home, a
    /// restore, a walk of the home for its usage.
    Long,
}

impl Lane {
    /// The form stored in state.db (`jobs.lane`).
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Main => "main",
            Lane::Long => "long",
        }
    }
}

/// What an operation does to its resource. A closed list: rebuild, the crash matrix, the seeded
/// histories and the purge test find the operations they need by kind, never by the verb their
/// names start with (the registry's checks hold names and kinds together).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Creates the resource or converges it, whole, to the request: `ensure_*`, and the
    /// `set_*` that are their family's way to declare its resource (`set_php_version`,
    /// `set_spam_filter`, `set_sudo_allowlist`). Its family's declaring operation; replayed by
    /// a rebuild.
    Declare,
    /// Changes one part of a resource its family declares (`set_account_password`,
    /// `set_mail_sending_gate`, `set_account_limits`); replayed by a rebuild.
    Set,
    /// Turns a resource off without removing it (`suspend_*`); replayed by a rebuild.
    Suspend,
    /// Turns a suspended resource on again, as it was (`unsuspend_*`); replayed by a rebuild.
    Unsuspend,
    /// Removes the resource (`remove_*`); a rebuild replays nothing older than the last one.
    Remove,
    /// Reads and reports what is there (`observe_*`, `read_sudo_events`), recording nothing
    /// new; an observation may enforce what is already declared (`observe_mysql_usage` holds
    /// the account to its quota).
    Observe,
    /// Makes the resource from what exists now, anew each time (`create_account_backup`): its
    /// family's declaring operation, but never replayed, since a replay would not bring the
    /// old one back.
    Snapshot,
    /// Does something once to what exists (`restore_account_backup`, `renew_certificate`,
    /// `rebuild_account`); never replayed.
    Action,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Declare,
        Kind::Set,
        Kind::Suspend,
        Kind::Unsuspend,
        Kind::Remove,
        Kind::Observe,
        Kind::Snapshot,
        Kind::Action,
    ];

    /// The form the catalogue shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Declare => "declare",
            Kind::Set => "set",
            Kind::Suspend => "suspend",
            Kind::Unsuspend => "unsuspend",
            Kind::Remove => "remove",
            Kind::Observe => "observe",
            Kind::Snapshot => "snapshot",
            Kind::Action => "action",
        }
    }

    /// Whether the last succeeded request of an operation of this kind says what its resource
    /// must look like, so that a rebuild replays it: the kinds that declare state.
    pub fn is_replayed(self) -> bool {
        matches!(
            self,
            Kind::Declare | Kind::Set | Kind::Suspend | Kind::Unsuspend
        )
    }

    /// Whether an operation of this kind brings its family's resource into being: a family
    /// has at most one such operation, its declaring operation.
    pub fn declares(self) -> bool {
        matches!(self, Kind::Declare | Kind::Snapshot)
    }
}

/// Who a resource belongs to. The node's own resources live under the reserved owner `node:`,
/// which cannot collide with a tenant's 32-hex id and never takes part in a tenant purge.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Owner {
    Tenant(Hex32),
    Node,
}

impl Owner {
    pub const NODE: &'static str = "node:";

    /// The form stored in state.db.
    pub fn as_str(&self) -> &str {
        match self {
            Owner::Tenant(id) => id.as_str(),
            Owner::Node => Self::NODE,
        }
    }

    /// Parses the stored form; anything else is corruption of root's own database.
    pub fn parse(stored: &str) -> Option<Owner> {
        if stored == Self::NODE {
            Some(Owner::Node)
        } else {
            stored.parse().ok().map(Owner::Tenant)
        }
    }
}

/// What every request exposes so the store can key, supersede and purge jobs without knowing
/// the operation: the resource's id and its owner.
pub trait Resource {
    fn resource_id(&self) -> &Hex32;
    fn owner(&self) -> Owner;
}

/// A family of operations on one kind of resource: its name and its module. What a client
/// needs to know of it; how its resources are removed is [`Purge`], implemented by the
/// handlers.
pub trait Family: 'static {
    /// The family's name, which is also the first half of every job key.
    const NAME: &'static str;
    const MODULE: Module;
    /// What the family's derivation can find drifted, each aspect once across the node
    /// (`Registry::check_structure`).
    const DRIFT_ASPECTS: &'static [crate::DeclaredAspect] = &[];
}

/// One typed operation, declared once: its name, scope, family, request and result. Everything
/// a client and the API need is derived from this; how it is applied is [`Apply`], implemented
/// by the handlers.
pub trait Operation: 'static + Send + Sync {
    const NAME: &'static str;
    const SCOPE: Scope;
    /// One line for the catalogue.
    const SUMMARY: &'static str;
    type Family: Family;
    /// Built only from validated types, with `deny_unknown_fields`.
    type Request: Resource + DeserializeOwned + Serialize + JsonSchema;
    /// The state observed after the change. Never carries the resource id: the store stamps it.
    /// Deserializable so a client reads it back typed.
    type Result: Serialize + DeserializeOwned + JsonSchema;

    /// A valid request, for the catalogue and for the tests that derive negative cases.
    fn example() -> Self::Request;

    /// The control plane's generation, for requests that carry one. Admission never lets a
    /// request supersede a queued one of the same resource with a higher or equal generation:
    /// it fails as `stale_generation` instead, so a replayed old change cannot win.
    fn request_generation(_request: &Self::Request) -> Option<u64> {
        None
    }

    /// The lane the runner applies this operation in: [`Lane::Long`] for work whose length
    /// the tenant decides (see [`Lane`]).
    const LANE: Lane = Lane::Main;

    /// What the operation does to its resource. Every operation of `crates/declarations`
    /// states it (its `operation!` macro has no default); the default, [`Kind::Action`], the
    /// kind that promises nothing (never replayed, nothing it must follow), is for the
    /// operations tests make up.
    const KIND: Kind = Kind::Action;

    /// The operations whose examples must be applied, in this order, before this one's
    /// example can do all its work: `ensure_redirect` needs `ensure_web_domain`, which needs
    /// `ensure_account`. Besides these, an operation that acts on a resource its family
    /// declares follows the family's declaring operation (see [`Kind`]); the registry adds
    /// that itself ([`crate::Registry::prerequisites`]). Names, checked against the registry
    /// by [`crate::Registry::check_structure`].
    const NEEDS: &'static [&'static str] = &[];

    /// More valid requests for the example's resource, each a change the example does not
    /// make (another shell, another certificate source). The crash matrix applies each over
    /// the example, the seeded histories draw them; the catalogue shows the example only.
    fn other_examples() -> Vec<Self::Request> {
        Vec::new()
    }
}

/// The handler of a declared operation, working with the context `C` (the provider, state.db
/// and the batch's bookkeeping, for the node's handlers).
pub trait Apply<C>: Operation {
    fn apply(ctx: &mut C, request: &Self::Request) -> Result<Self::Result, OpError>;
}

/// The fields of a family's stored row that operations other than its declaring one set, each
/// by its JSON key with every operation that sets it.
pub type FieldOwners = &'static [(&'static str, &'static [&'static str])];

/// A family's stored row type as the handler table knows it ([`Purge::ROW`]): the family it is
/// the row of, and the owners of its fields besides the declaring operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowType {
    pub family: &'static str,
    pub field_owners: FieldOwners,
}

/// The purge hook of a declared family, working with the context `C`.
///
/// A handler table ([`crate::Handlers`]) takes an operation only if its family has a purge
/// hook in the table's context, so a node cannot be built with a family it cannot purge
/// (ARCHITECTURE.md invariant 2):
///
/// ```compile_fail
/// use registry::{Apply, Family, Handlers, Hex32, Module, OpError, Operation, Owner, Resource, Scope};
///
/// struct Unpurgeable;
/// impl Family for Unpurgeable {
///     const NAME: &'static str = "unpurgeable";
///     const MODULE: Module = Module::Core;
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Req { id: Hex32 }
/// impl Resource for Req {
///     fn resource_id(&self) -> &Hex32 { &self.id }
///     fn owner(&self) -> Owner { Owner::Tenant(self.id.clone()) }
/// }
///
/// struct Ensure;
/// impl Operation for Ensure {
///     const NAME: &'static str = "ensure_unpurgeable";
///     const SCOPE: Scope = Scope::Tenant;
///     const SUMMARY: &'static str = "an operation of a family without purge";
///     type Family = Unpurgeable;
///     type Request = Req;
///     type Result = Req;
///     fn example() -> Req { Req { id: "0".repeat(32).parse().unwrap() } }
/// }
/// impl Apply<()> for Ensure {
///     fn apply(_: &mut (), req: &Req) -> Result<Req, OpError> { Ok(Req { id: req.id.clone() }) }
/// }
///
/// let _ = Handlers::<()>::builder().op::<Ensure>();
/// ```
///
/// The same family with its purge hook (and its derive hook, [`crate::Derive`]: it derives
/// nothing):
///
/// ```
/// use registry::{Apply, Derive, Derived, Family, Handlers, Hex32, Module, OpError, Operation, Owner, Purge, Resource, Scope};
///
/// struct Purgeable;
/// impl Family for Purgeable {
///     const NAME: &'static str = "purgeable";
///     const MODULE: Module = Module::Core;
/// }
/// impl Purge<()> for Purgeable {
///     fn purge(_: &mut (), _: &Hex32) -> Result<(), OpError> {
///         Ok(())
///     }
/// }
/// impl Derive<()> for Purgeable {
///     fn derive(_: &()) -> Result<Vec<Derived>, OpError> {
///         Ok(Vec::new())
///     }
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Req { id: Hex32 }
/// impl Resource for Req {
///     fn resource_id(&self) -> &Hex32 { &self.id }
///     fn owner(&self) -> Owner { Owner::Tenant(self.id.clone()) }
/// }
///
/// struct Ensure;
/// impl Operation for Ensure {
///     const NAME: &'static str = "ensure_purgeable";
///     const SCOPE: Scope = Scope::Tenant;
///     const SUMMARY: &'static str = "an operation of a family with purge";
///     type Family = Purgeable;
///     type Request = Req;
///     type Result = Req;
///     fn example() -> Req { Req { id: "0".repeat(32).parse().unwrap() } }
/// }
/// impl Apply<()> for Ensure {
///     fn apply(_: &mut (), req: &Req) -> Result<Req, OpError> { Ok(Req { id: req.id.clone() }) }
/// }
///
/// let handlers = Handlers::<()>::builder().op::<Ensure>().build();
/// assert_eq!(handlers.families()[0].name, "purgeable");
/// ```
pub trait Purge<C>: Family {
    /// The family's stored row type, for a family that keeps rows (`store::row_type::<R>()`);
    /// `None`, the default, for one that records nothing. The handler table reads the owners
    /// of the row's fields from it, and [`crate::Handlers::check`] holds it to the family and
    /// to the family's declaring operation.
    const ROW: Option<RowType> = None;

    /// Removes every resource of this family that `account` owns, from the OS and from
    /// state.db. Runs as part of `remove_account`; must be idempotent (a crash may run it
    /// again) and must succeed when the account has nothing of this family.
    fn purge(ctx: &mut C, account: &Hex32) -> Result<(), OpError>;
}
