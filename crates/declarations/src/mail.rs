//! What the mail families' declarations share: their names (the handlers in `ops::mail` load
//! the rows of all of them) and the `Resource` of a request owned by a tenant account.

pub const MAIL_DOMAIN: &str = "mail_domain";
pub const MAILBOX: &str = "mailbox";
pub const MAIL_FORWARDER: &str = "mail_forwarder";
pub const AUTORESPONDER: &str = "autoresponder";
pub const DKIM_KEY: &str = "dkim_key";
pub const SPAM_FILTER: &str = "spam_filter";

/// `Resource` for requests with an `id` and the owning `account`.
macro_rules! tenant_resource {
    ($($t:ty),* $(,)?) => {
        $(impl registry::Resource for $t {
            fn resource_id(&self) -> &registry::types::Hex32 {
                &self.id
            }
            fn owner(&self) -> registry::Owner {
                registry::Owner::Tenant(self.account.clone())
            }
        })*
    };
}
pub(crate) use tenant_resource;
