//! What the mail families' declarations share: their names, which the handlers in `ops::mail`
//! use to load the rows of all of them.

pub const MAIL_DOMAIN: &str = "mail_domain";
pub const MAILBOX: &str = "mailbox";
pub const MAIL_FORWARDER: &str = "mail_forwarder";
pub const AUTORESPONDER: &str = "autoresponder";
pub const DKIM_KEY: &str = "dkim_key";
pub const SPAM_FILTER: &str = "spam_filter";
