//! The listeners of a tenant certificate, checked by handshaking them: Apache on 443 for each
//! name it covers, and for a name that is a mail host (`crate::mail_hosts`, the one rule of
//! `crate::mail_records::mail_host`) Dovecot on 993 and 995 and Postfix on 587, all on
//! 127.0.0.1 with the name sent as SNI (`acme::probe`, as the installer's `follow` checks the
//! node's certificate). The leaf's SHA-256 is compared with the row's `fingerprint_sha256`.
//!
//! After a batch that put a chain in place ([`follow`], from `Ctx::finish_batch`, once the
//! batch's reloads ran) a listener still on another certificate has its unit restarted and is
//! checked again; one still stale is logged and left to the drift check, which reports it as
//! `listener_certificate_stale` ([`derived`]). Only on a server: a simulated provider (a dev
//! node, a test) or a sysroot has no listener to ask.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use acme::probe::Hello;
use provider::ServiceUnit;
use registry::types::{DomainName, Hex32};
use registry::{Aspects, Derived, Of, OpError, Owner};

use super::{CertificateRow, certificate_files};
use crate::context::{Ctx, Service, store_error};
use crate::mail_records::{IMAPS_PORT, POP3S_PORT, SUBMISSION_PORT, certificates_with_names};
use crate::mail_hosts;

/// HTTPS, where Apache serves every name a certificate covers.
const HTTPS_PORT: u16 = 443;

/// How long one handshake may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a reloaded listener has to present the new certificate before it is restarted
/// (a reload takes effect in well under a second).
const RELOADED: Duration = Duration::from_secs(3);

/// How long a restarted listener has to answer with the new certificate.
const RESTARTED: Duration = Duration::from_secs(8);

/// What a listener presenting another certificate is, for the drift check.
const STALE: Aspects = Aspects::new(
    super::LISTENER_CERTIFICATE_STALE,
    super::LISTENER_CERTIFICATE_STALE,
);

/// One place a certificate is presented: the service, the name asked for (SNI), the port on
/// 127.0.0.1 and how TLS starts there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    pub service: Service,
    pub name: DomainName,
    pub port: u16,
    pub hello: Hello,
}

impl Listener {
    fn addr(&self) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.port)
    }

    fn describe(&self) -> String {
        format!(
            "the certificate {} presents on port {} for {}",
            self.service.name(),
            self.port,
            self.name
        )
    }
}

/// Whether listeners can be asked: a server's own provider, not a simulation or a sysroot
/// (`provider::Machine::listeners_reachable`).
fn listeners_reachable(ctx: &Ctx) -> bool {
    ctx.provider.machine().listeners_reachable(&ctx.provider)
}

/// The listeners serving certificate `id` of `account`, as the view has it: none when it is
/// bound to no web domain.
pub fn listeners(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<Vec<Listener>, OpError> {
    listeners_among(ctx, &mail_hosts::hosts(ctx)?, account, id)
}

/// [`listeners`], with the node's mail hosts (`mail_hosts::hosts`) read once by the caller.
fn listeners_among(
    ctx: &Ctx,
    hosts: &[mail_hosts::MailHost],
    account: &Hex32,
    id: &Hex32,
) -> Result<Vec<Listener>, OpError> {
    let Some((_, names)) = certificates_with_names(&ctx.view(), account)?
        .into_iter()
        .find(|(cert, _)| cert == id)
    else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Listener> = names
        .iter()
        .map(|name| Listener {
            service: Service::Apache,
            name: name.clone(),
            port: HTTPS_PORT,
            hello: Hello::Tls,
        })
        .collect();
    let (chain, _) = certificate_files(ctx, id);
    for host in hosts {
        if host.chain != chain || !names.contains(&host.name) {
            continue;
        }
        for (service, port, hello) in [
            (Service::Dovecot, IMAPS_PORT, Hello::Tls),
            (Service::Dovecot, POP3S_PORT, Hello::Tls),
            (Service::Postfix, SUBMISSION_PORT, Hello::SmtpStartTls),
        ] {
            let listener = Listener {
                service,
                name: host.name.clone(),
                port,
                hello,
            };
            if !out.contains(&listener) {
                out.push(listener);
            }
        }
    }
    Ok(out)
}

/// The fingerprint `l` presents, asked until it is `want` or `settle` has passed.
fn presented(
    l: &Listener,
    want: &str,
    settle: Duration,
) -> Result<String, acme::probe::ProbeError> {
    acme::probe::settled_leaf_sha256(
        l.addr(),
        l.hello,
        l.name.as_str(),
        want,
        settle,
        PROBE_TIMEOUT,
    )
}

/// The systemd unit of a service with a TLS listener.
fn unit(ctx: &Ctx, service: Service) -> Option<String> {
    let unit = match service {
        Service::Apache => ServiceUnit::Apache,
        Service::Postfix => ServiceUnit::Postfix,
        Service::Dovecot => ServiceUnit::Dovecot,
        Service::PhpFpm(_)
        | Service::TenantFpm(..)
        | Service::OpenDkim
        | Service::Systemd => return None,
    };
    Some(unit.unit(ctx.provider.platform()))
}

/// After a batch's reloads: each listener of the certificates put in place in it (`fresh`,
/// their ids and the chains' fingerprints) is handshaken; one on another certificate has its
/// unit restarted once and is asked again; one still stale is logged (the drift check reports
/// it). Listeners of a service whose reload failed (`failed`, reverted) are not asked.
pub fn follow(ctx: &Ctx, fresh: &[(Hex32, Hex32, String)], failed: &[Service]) {
    if !listeners_reachable(ctx) {
        return;
    }
    let hosts = match mail_hosts::hosts(ctx) {
        Ok(hosts) => hosts,
        Err(e) => {
            tracing::warn!(error = e.message, "the mail hosts could not be read; the new certificates' listeners are not checked");
            return;
        }
    };
    let mut restarted: Vec<Service> = Vec::new();
    for (account, id, want) in fresh {
        let listeners = match listeners_among(ctx, &hosts, account, id) {
            Ok(listeners) => listeners,
            Err(e) => {
                tracing::warn!(certificate = %id, error = e.message, "the certificate's listeners could not be listed");
                continue;
            }
        };
        for l in listeners.iter().filter(|l| !failed.contains(&l.service)) {
            let found = match presented(l, want, RELOADED) {
                Ok(found) if &found == want => continue,
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(certificate = %id, service = l.service.name(), port = l.port, name = %l.name, error = %e, "a listener of the new certificate was not checked");
                    continue;
                }
            };
            let Some(unit) = unit(ctx, l.service) else {
                continue;
            };
            if !restarted.contains(&l.service) {
                tracing::warn!(certificate = %id, service = l.service.name(), port = l.port, name = %l.name, found, "a listener still presents another certificate after its reload; restarting it");
                if let Err(e) = ctx.provider.systemd_restart(&unit, false) {
                    tracing::error!(unit, error = %e, "restarting a stale listener failed");
                }
                restarted.push(l.service);
            }
            match presented(l, want, RESTARTED) {
                Ok(now) if &now == want => tracing::info!(certificate = %id, service = l.service.name(), port = l.port, name = %l.name, "the restarted listener presents the new certificate"),
                Ok(now) => tracing::error!(certificate = %id, service = l.service.name(), port = l.port, name = %l.name, found = now, want, "a listener presents another certificate even after its restart; left to the drift check"),
                Err(e) => tracing::error!(certificate = %id, service = l.service.name(), port = l.port, name = %l.name, error = %e, "a listener does not answer after its restart"),
            }
        }
    }
}

/// For the drift check: the fingerprint each listener of each tenant certificate presents,
/// against the row's (on a server only; a listener that does not answer is not this check's
/// finding).
pub fn derived(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
    if !listeners_reachable(ctx) {
        return Ok(Vec::new());
    }
    let hosts = mail_hosts::hosts(ctx)?;
    let mut items = Vec::new();
    for stored in ctx.view().all::<CertificateRow>().map_err(store_error)? {
        let (Owner::Tenant(account), Some(want)) = (&stored.owner, &stored.row.fingerprint_sha256)
        else {
            continue;
        };
        let of = Of::new(&stored.id, &stored.owner);
        for l in listeners_among(ctx, &hosts, account, &stored.id)? {
            if let Ok(found) = presented(&l, want, Duration::ZERO) {
                items.push(Derived::setting(
                    of.clone(),
                    l.describe(),
                    format!("sha256:{want}"),
                    Some(format!("sha256:{found}")),
                    STALE,
                ));
            }
        }
    }
    Ok(items)
}
