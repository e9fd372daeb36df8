//! The `autoresponder` family: a Sieve vacation script for one mailbox, generated from typed
//! fields and compiled with Pigeonhole's `sievec` before Dovecot can run it.
//!
//! The script is `<dovecot>/layerone/sieve/<mailbox id>.sieve`, which the mailbox's
//! passwd-file line names (`userdb_sieve`). The subject and body are RFC 5228 quoted
//! strings in which `\` and `"` are escaped, and the types refuse control characters (the
//! body allows newlines and tabs), so no value can end its string and start a command.

pub use declarations::autoresponder::*;

use registry::types::mail::{IsoDate, SieveBody, SieveSubject, VacationDays};
use registry::types::{Hex32, Presence};
use registry::{Apply, Aspects, Content, Derive, Derived, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error, store_error};
use crate::mail::{AUTORESPONDER, MailState, own_row, sieve_script};
use crate::mailbox::MailboxRow;

crash::points! {
    AFTER_SCRIPT_WRITE = "autoresponder.after_script_write",
}

/// An autoresponder as stored: its mailbox (by resource id) and the vacation it answers
/// with; `from` and `until` are `null` when open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoresponderRow {
    pub mailbox: Hex32,
    pub subject: SieveSubject,
    pub body: SieveBody,
    pub days: VacationDays,
    pub from: Option<IsoDate>,
    pub until: Option<IsoDate>,
}

impl StoredRow for AutoresponderRow {
    const FAMILY: &'static str = AUTORESPONDER;
}

impl AutoresponderRow {
    /// The row `ensure_autoresponder` records for `req`.
    pub fn of(req: &EnsureAutoresponderRequest) -> AutoresponderRow {
        AutoresponderRow {
            mailbox: req.mailbox.clone(),
            subject: req.subject.clone(),
            body: req.body.clone(),
            days: req.days,
            from: req.from.clone(),
            until: req.until.clone(),
        }
    }
}

impl Purge<Ctx> for Autoresponder {
    const ROW: Option<RowType> = Some(store::row_type::<AutoresponderRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .view()
            .of_account::<AutoresponderRow>(account)
            .map_err(store_error)?;
        for stored in &rows {
            remove_script(ctx, &stored.row.mailbox)?;
        }
        if !rows.is_empty() {
            ctx.forget_rows_of::<AutoresponderRow>(account)?;
        }
        Ok(())
    }
}

fn remove_script(ctx: &Ctx, mailbox: &Hex32) -> Result<(), OpError> {
    let script = sieve_script(&ctx.provider, mailbox);
    for path in [script.with_extension("svbin"), script] {
        ctx.provider.remove_config(&path).map_err(provider_error)?;
    }
    Ok(())
}

/// An RFC 5228 quoted string: `\` and `"` escaped, nothing else needs it.
pub fn sieve_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The vacation script.
pub fn render_script(id: &Hex32, req: &AutoresponderRow) -> String {
    let vacation = format!(
        "vacation :days {} :subject {} {};",
        req.days.get(),
        sieve_string(req.subject.as_str()),
        sieve_string(req.body.as_str())
    );
    let mut tests = Vec::new();
    if let Some(from) = &req.from {
        tests.push(format!("currentdate :value \"ge\" \"date\" \"{from}\""));
    }
    if let Some(until) = &req.until {
        tests.push(format!("currentdate :value \"le\" \"date\" \"{until}\""));
    }
    let mut out = format!("# Managed by layerone node for autoresponder {id}.\n");
    if tests.is_empty() {
        out.push_str(&format!("require [\"vacation\"];\n{vacation}\n"));
    } else {
        out.push_str(&format!(
            "require [\"vacation\", \"date\", \"relational\"];\nif allof ({}) {{\n  {vacation}\n}}\n",
            tests.join(", ")
        ));
    }
    out
}

const SCRIPT: Aspects = Aspects::new(
    SIEVE_SCRIPT_MISSING,
    SIEVE_SCRIPT_DIFFERS,
);

impl Derive<Ctx> for Autoresponder {
    /// The Sieve script of each autoresponder whose mailbox is recorded, as
    /// [`render_script`] writes it from the row (its compiled form is `sievec`'s and is not
    /// compared).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let view = ctx.view();
        let mut items = Vec::new();
        for stored in view.all::<AutoresponderRow>().map_err(store_error)? {
            if view
                .get::<MailboxRow>(&stored.row.mailbox)
                .map_err(store_error)?
                .is_none_or(|mailbox| mailbox.owner != stored.owner)
            {
                continue;
            }
            let path = sieve_script(&ctx.provider, &stored.row.mailbox);
            let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
            items.push(Derived::path(
                Of::new(&stored.id, &stored.owner),
                path,
                Content::Bytes(render_script(&stored.id, &stored.row).into_bytes()),
                Content::file(actual),
                SCRIPT,
            ));
        }
        Ok(items)
    }
}

impl Apply<Ctx> for EnsureAutoresponder {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureAutoresponderRequest,
    ) -> Result<AutoresponderResult, OpError> {
        account_info(ctx, &req.account)?;
        let mailbox: MailboxRow = own_row(ctx, &req.mailbox, &req.account, "mailbox_missing")?;
        let mail = MailState::of_job(ctx)?;
        if mail
            .autoresponders
            .iter()
            .any(|a| a.id != req.id && a.row.mailbox == req.mailbox)
        {
            return Err(OpError::permanent(
                "autoresponder_exists",
                "the mailbox already has another autoresponder",
            ));
        }
        if let Some(old) = mail.autoresponders.iter().find(|a| a.id == req.id)
            && old.row.mailbox != req.mailbox
        {
            remove_script(ctx, &old.row.mailbox)?;
        }
        let provider = ctx.provider.clone();
        provider
            .ensure_dir(&provider.sieve_dir(), 0o755)
            .map_err(provider_error)?;
        let path = sieve_script(&provider, &req.mailbox);
        let previous = provider.read_config(&path).map_err(provider_error)?;
        // The script is derived from the row this job records.
        let row = AutoresponderRow::of(req);
        let script = render_script(&req.id, &row);
        provider
            .write_config_atomic(&path, script.as_bytes(), 0o644)
            .map_err(provider_error)?;
        crash::point(AFTER_SCRIPT_WRITE);
        if let Err(e) = provider.sieve_compile(&path) {
            let restored = match &previous {
                Some(old) => provider
                    .write_config_atomic(&path, old, 0o644)
                    .and_then(|()| provider.sieve_compile(&path)),
                None => provider
                    .remove_config(&path.with_extension("svbin"))
                    .and_then(|()| provider.remove_config(&path)),
            };
            if let Err(e) = restored {
                tracing::error!(path = %path.display(), error = %e, "could not restore a Sieve script");
            }
            return Err(OpError::permanent(
                "sieve_compile_failed",
                format!("the vacation script did not compile; the change was reverted: {e}"),
            ));
        }
        ctx.set_row(&row);
        Ok(AutoresponderResult {
            state: Presence::Present,
            address: Some(mailbox.address()),
        })
    }
}

impl Apply<Ctx> for RemoveAutoresponder {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveAutoresponderRequest,
    ) -> Result<AutoresponderResult, OpError> {
        if let Some(stored) = ctx
            .view()
            .get::<AutoresponderRow>(&req.id)
            .map_err(store_error)?
        {
            remove_script(ctx, &stored.row.mailbox)?;
        }
        ctx.forget_row();
        Ok(AutoresponderResult {
            state: Presence::Absent,
            address: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use registry::Operation;

    use super::*;

    #[test]
    fn the_script_is_one_vacation_between_the_dates() {
        let mut req = EnsureAutoresponder::example();
        req.subject = "Away \"now\"".parse().unwrap();
        req.body = "Back\nsoon".parse().unwrap();
        assert_eq!(
            render_script(&req.id, &AutoresponderRow::of(&req)),
            "# Managed by layerone node for autoresponder c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8.\n\
             require [\"vacation\", \"date\", \"relational\"];\n\
             if allof (currentdate :value \"ge\" \"date\" \"2026-12-20\", currentdate :value \"le\" \"date\" \"2027-01-04\") {\n\
             \x20 vacation :days 7 :subject \"Away \\\"now\\\"\" \"Back\nsoon\";\n\
             }\n"
        );
        req.from = None;
        req.until = None;
        assert_eq!(
            render_script(&req.id, &AutoresponderRow::of(&req))
                .lines()
                .nth(1),
            Some("require [\"vacation\"];")
        );
    }

    #[test]
    fn strings_cannot_be_ended_by_their_value() {
        assert_eq!(sieve_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(sieve_string("\\\""), r#""\\\"""#);
    }
}
