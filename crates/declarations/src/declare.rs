//! The macros every family module declares with, so that an operation is its name, kind,
//! family, summary, types and example and nothing else.
//!
//! - [`family!`] declares a family type and its [`registry::Family`] impl: name and module.
//! - [`operation!`] declares an operation type and its [`registry::Operation`] impl. It has
//!   no default for the kind; the scope is [`registry::Scope::Tenant`] unless it says
//!   `scope: Node`, the lane [`registry::Lane::Main`] unless it says `lane: Long`.
//! - [`impl_resource!`] implements [`registry::Resource`] for request types, by who owns the
//!   resource: the request's `account`, the account the request names by its `id`, or the
//!   node.

/// Declares an operation: a unit struct and its [`registry::Operation`] impl.
///
/// ```text
/// operation! {
///     pub struct RemoveSshKey {
///         name: "remove_ssh_key",
///         kind: Remove,
///         family: SshKey,
///         summary: "Remove an SSH public key from the account's authorized keys",
///         request: RemoveSshKeyRequest,
///         result: SshKeyResult,
///         example: AccountResource::example(0xb2),
///     }
/// }
/// ```
///
/// Optional, in this order: `scope: Node,` and `lane: Long,` after `kind`; `needs: [Op, ...],`
/// (operations whose examples must come first, [`registry::Operation::NEEDS`]) and
/// `generation: field,` (the request's [`registry::types::Generation`] field,
/// [`registry::Operation::request_generation`]) after `result`; `other_examples: [...],`
/// after `example`.
macro_rules! operation {
    (
        $(#[$meta:meta])*
        pub struct $op:ident {
            name: $name:literal,
            kind: $kind:ident,
            $(scope: $scope:ident,)?
            $(lane: $lane:ident,)?
            family: $family:ty,
            summary: $summary:expr,
            request: $request:ty,
            result: $result:ty,
            $(needs: [$($need:ty),* $(,)?],)?
            $(generation: $generation:ident,)?
            example: $example:expr,
            $(other_examples: [$($other:expr),* $(,)?],)?
        }
    ) => {
        $(#[$meta])*
        pub struct $op;

        impl registry::Operation for $op {
            const NAME: &'static str = $name;
            const SCOPE: registry::Scope = $crate::declare::scope!($($scope)?);
            const SUMMARY: &'static str = $summary;
            const KIND: registry::Kind = registry::Kind::$kind;
            $(const LANE: registry::Lane = registry::Lane::$lane;)?
            const NEEDS: &'static [&'static str] =
                &[$($(<$need as registry::Operation>::NAME),*)?];
            type Family = $family;
            type Request = $request;
            type Result = $result;

            fn example() -> $request {
                $example
            }

            $(fn other_examples() -> Vec<$request> {
                vec![$($other),*]
            })?

            $(fn request_generation(request: &$request) -> Option<u64> {
                Some(request.$generation.get())
            })?
        }
    };
}
pub(crate) use operation;

/// The scope an [`operation!`] states, or the tenant's.
macro_rules! scope {
    () => {
        registry::Scope::Tenant
    };
    ($scope:ident) => {
        registry::Scope::$scope
    };
}
pub(crate) use scope;

/// Implements [`registry::Resource`] for request types with an `id`:
/// `impl_resource!(owner = account: A, B)` when the request names its owning `account`,
/// `owner = id` when the resource is the account itself (or one per account, keyed by its
/// id), `owner = node` for the node's own resources.
macro_rules! impl_resource {
    (owner = node: $($t:ty),+ $(,)?) => {
        $(impl registry::Resource for $t {
            fn resource_id(&self) -> &registry::types::Hex32 {
                &self.id
            }
            fn owner(&self) -> registry::Owner {
                registry::Owner::Node
            }
        })+
    };
    // `account` or `id`: the field that names the owning account.
    (owner = $field:ident: $($t:ty),+ $(,)?) => {
        $(impl registry::Resource for $t {
            fn resource_id(&self) -> &registry::types::Hex32 {
                &self.id
            }
            fn owner(&self) -> registry::Owner {
                registry::Owner::Tenant(self.$field.clone())
            }
        })+
    };
}
pub(crate) use impl_resource;

/// Declares a family: a unit struct and its [`registry::Family`] impl, its name and module,
/// and the drift aspects its derivation can find (`drift: { /// what it means
/// NAME = "name", ... }`), each a constant of the module, which the handlers' findings use
/// and the events feed's schema lists with its description.
macro_rules! family {
    (
        $(#[$meta:meta])*
        pub struct $family:ident {
            name: $name:expr,
            module: $module:ident
            $(, drift: { $($(#[doc = $doc:literal])+ $aspect:ident = $aspect_name:literal,)* })?
            $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $family;

        $($(
            $(#[doc = $doc])+
            pub const $aspect: registry::DriftAspect = registry::DriftAspect::declared($aspect_name);
        )*)?

        impl registry::Family for $family {
            const NAME: &'static str = $name;
            const MODULE: registry::Module = registry::Module::$module;
            const DRIFT_ASPECTS: &'static [registry::DeclaredAspect] = &[$($(
                registry::DeclaredAspect {
                    aspect: $aspect,
                    lines: concat!($($doc, "\n"),+),
                },
            )*)?];
        }
    };
}
pub(crate) use family;
