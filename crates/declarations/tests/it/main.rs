//! Integration tests of the declarations: one binary, one link for all of them.

mod kinds;
mod mail_admission;
mod registry;
