//! The text of a tenant vhost: its names, document root, the isolation every tenant vhost
//! carries (`crate::web_isolation`), the ACME challenge alias, the mail clients' settings
//! aliases, the PHP handler, protected
//! directories, redirects, the IP block, the error pages, suspension and, with a certificate, the same site
//! over HTTPS with its HTTPS policy (forced HTTPS, HSTS); and the `AuthUserFile` of each
//! protected directory. Pure functions of typed values: [`crate::vhost`] gathers those values
//! from the view.

use std::path::{Path, PathBuf};

use registry::types::{
    AuthRealm, AuthUsers, DomainAliases, DomainName, Hex32, HttpUrl, IpNetwork, ProtectedPath,
    RedirectSource, RedirectStatus,
};

use crate::error_pages::ErrorPagePath;
use crate::web_domain::Hsts;
use crate::web_isolation::{self, WebTenant};

/// The HTTP-01 challenge path. It is never redirected and stays reachable on a suspended
/// domain, so a certificate can be issued or renewed whatever else the vhost does.
pub const ACME_CHALLENGE_PREFIX: &str = "/.well-known/acme-challenge/";

/// One redirect as the vhost renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedirectRule {
    pub source: RedirectSource,
    pub target: HttpUrl,
    pub status: RedirectStatus,
}

/// What a vhost holds besides its names and document root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VhostExtras {
    /// The socket of the account's pool for the domain's PHP version.
    pub php_socket: Option<PathBuf>,
    pub redirects: Vec<RedirectRule>,
    /// Serve 403 for everything but the challenge path; the document root is left alone.
    pub suspended: bool,
    /// Directories beneath the document root behind HTTP Basic authentication.
    pub protected: Vec<ProtectedDir>,
    /// Addresses and networks answered 403 (all but the challenge path).
    pub blocked: Vec<registry::types::IpNetwork>,
    /// A certificate bound to the domain: the same site is also served over HTTPS.
    pub tls: Option<TlsFiles>,
    /// The domain's HTTPS policy, applied only with [`Self::tls`].
    pub https: HttpsRules,
    /// The page of the site that answers each error status, lowest status first; left out
    /// of a suspended vhost.
    pub error_pages: Vec<(u16, ErrorPagePath)>,
    /// The node's directory of HTTP-01 challenge responses (mapped path): answers
    /// `/.well-known/acme-challenge/` from outside the tenant's document root, so neither a
    /// redirect nor the tenant's `.htaccess` can stand in the way of an ACME certificate.
    pub acme_challenges: Option<PathBuf>,
    /// The node's directory of the mail clients' settings of the account's mail domain of
    /// the same name (mapped path): answers Thunderbird's `/.well-known/autoconfig/` and
    /// Outlook's autodiscover path from outside the document root (`crate::mail_clients`).
    pub mail_clients: Option<PathBuf>,
}

/// The files of a certificate bound to a vhost (mapped paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub chain: PathBuf,
    pub key: PathBuf,
}

/// `RedirectMatch`'s pattern for a source prefix: the prefix itself or anything beneath it,
/// never the challenge path (a negative lookahead anchored at the start). The source is
/// `[A-Za-z0-9._~/-]` only, so escaping `.` is all a regular expression needs.
pub fn redirect_pattern(source: &RedirectSource) -> String {
    let escaped = source.as_str().replace('.', "\\.");
    let challenge = ACME_CHALLENGE_PREFIX.replace('.', "\\.");
    if escaped.ends_with('/') {
        format!("^(?!{challenge}){escaped}(.*)$")
    } else {
        format!("^(?!{challenge}){escaped}(/.*)?$")
    }
}

/// `RedirectMatch`'s target: the URL then the rest of the path. `&` means "the whole match"
/// to Apache's substitution, so it is escaped; the URL type admits no `$`, quote or
/// backslash.
pub fn redirect_target(target: &HttpUrl) -> String {
    format!("{}$1", target.as_str().replace('&', "\\&"))
}

/// One protected directory as the vhost renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedDir {
    pub path: ProtectedPath,
    pub realm: AuthRealm,
    /// The mapped `AuthUserFile`.
    pub user_file: PathBuf,
}

/// The TLS versions a tenant's HTTPS virtual host accepts.
pub const SSL_PROTOCOLS: &str = "-all +TLSv1.2 +TLSv1.3";

/// What a domain's HTTPS policy asks of its vhost (`https_policy`). It is applied only to a
/// vhost with a certificate ([`VhostExtras::tls`]): without one nothing is redirected to an
/// HTTPS virtual host that does not exist, and no header is sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpsRules {
    /// The HTTP virtual host answers 301 to the same host and path over HTTPS, but for the
    /// challenge path.
    pub force_https: bool,
    /// The `Strict-Transport-Security` header of the HTTPS virtual host.
    pub hsts: Option<Hsts>,
}

/// The scheme a virtual host answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    Http,
    Https,
}

/// Renders the virtual host. Every value in it comes from a validated type (a domain name is
/// lowercase LDH, a home path is `[A-Za-z0-9._-]` components, a redirect source
/// `[A-Za-z0-9._~/-]`, a target URL has no quote, backslash or space), so nothing a tenant
/// sends can open a new directive or section.
///
/// The `*:80` virtual host serves the site, or with HTTPS forced (and a certificate) only
/// the challenge path and a 301 to HTTPS for everything else. With a certificate, the
/// `*:443` one serves the same site over TLS 1.2 and 1.3, with the HSTS header when asked.
/// Each leaves out the redirects that would send a request back to itself
/// ([`sends_back_to_itself`]).
pub fn render_vhost(
    id: &Hex32,
    account: &Hex32,
    domain: &DomainName,
    aliases: &DomainAliases,
    docroot: &Path,
    tenant: &WebTenant,
    extras: &VhostExtras,
) -> String {
    let header = format!(
        "# Managed by layerone node for web domain {id} of account {account}.\n\
         # Changes made here are replaced.\n"
    );
    let mut names = format!("    ServerName {domain}\n");
    if !aliases.is_empty() {
        let list: Vec<&str> = aliases.iter().map(DomainName::as_str).collect();
        names.push_str(&format!("    ServerAlias {}\n", list.join(" ")));
    }
    let site: Vec<&DomainName> = std::iter::once(domain).chain(aliases.iter()).collect();
    let forced = extras.tls.is_some() && extras.https.force_https;
    let head = render_head(docroot, tenant, extras);
    let http = if forced {
        format!("{head}{}", render_force_https(&site))
    } else {
        format!(
            "{head}{}",
            render_site(docroot, extras, &site, Scheme::Http, forced)
        )
    };
    let mut vhost = format!("{header}<VirtualHost *:80>\n{names}{http}</VirtualHost>\n");
    if let Some(tls) = &extras.tls {
        let hsts = match &extras.https.hsts {
            Some(hsts) => format!(
                "    Header always set Strict-Transport-Security \"{}\"\n",
                hsts_value(hsts)
            ),
            None => String::new(),
        };
        vhost.push_str(&format!(
            "<VirtualHost *:443>\n{names}\
             \x20   SSLEngine on\n\
             \x20   SSLProtocol {SSL_PROTOCOLS}\n\
             \x20   SSLCertificateFile \"{}\"\n\
             \x20   SSLCertificateKeyFile \"{}\"\n\
             {hsts}{head}{}</VirtualHost>\n",
            tls.chain.display(),
            tls.key.display(),
            render_site(docroot, extras, &site, Scheme::Https, forced)
        ));
    }
    vhost
}

/// What both virtual hosts start with: the isolation of the tenant, the node's challenge
/// responses, the document root and its `<Directory>`.
fn render_head(docroot: &Path, tenant: &WebTenant, extras: &VhostExtras) -> String {
    let mut out = web_isolation::render_tenant_section(tenant);
    if let Some(challenges) = &extras.acme_challenges {
        let dir = challenges.display();
        out.push_str(&format!(
            "    # ACME HTTP-01 challenge responses of the node: never redirected nor denied.\n\
             \x20   Alias \"{ACME_CHALLENGE_PREFIX}\" \"{dir}/\"\n\
             \x20   <Directory \"{dir}\">\n\
             \x20       Options None\n\
             \x20       AllowOverride None\n\
             \x20       Require all granted\n\
             \x20   </Directory>\n"
        ));
    }
    if let Some(dir) = &extras.mail_clients {
        out.push_str("    # Mail clients' settings of the node, never the tenant's files.\n");
        let mut paths = vec![crate::mail_clients::WELL_KNOWN_AUTOCONFIG_PATH];
        paths.extend(crate::mail_clients::AUTODISCOVER_PATHS);
        out.push_str(&crate::mail_clients::render_aliases(dir, &paths));
    }
    out.push_str(&format!("    DocumentRoot \"{}\"\n", docroot.display()));
    out.push_str(&web_isolation::render_docroot_directory(docroot));
    out
}

/// The site as a virtual host of `scheme` serves it: protected directories, the PHP handler,
/// then suspension, or the redirects that do not come back to it and the IP block.
fn render_site(
    docroot: &Path,
    extras: &VhostExtras,
    site: &[&DomainName],
    scheme: Scheme,
    forced: bool,
) -> String {
    let mut out = String::new();
    // Deeper `<Directory>` sections replace the document root's `Require all granted`.
    let mut protected: Vec<&ProtectedDir> = extras.protected.iter().collect();
    protected.sort_by(|a, b| a.path.cmp(&b.path));
    for dir in protected {
        out.push_str(&render_protected(&format!("{}", docroot.display()), dir));
    }
    if let Some(socket) = &extras.php_socket {
        out.push_str(&format!(
            "    <FilesMatch \"\\.php$\">\n\
             \x20       SetHandler \"proxy:unix:{}|fcgi://localhost\"\n\
             \x20   </FilesMatch>\n",
            socket.display()
        ));
    }
    if extras.suspended {
        out.push_str(&format!(
            "    # Suspended: everything answers 403 but the certificate challenge.\n\
             \x20   <Location \"/\">\n\
             \x20       Require all denied\n\
             \x20   </Location>\n\
             \x20   <Location \"{ACME_CHALLENGE_PREFIX}\">\n\
             \x20       Require all granted\n\
             \x20   </Location>\n"
        ));
        return out;
    }
    // Longest source first: the most specific redirect wins.
    let mut redirects: Vec<&RedirectRule> = extras
        .redirects
        .iter()
        .filter(|rule| !sends_back_to_itself(rule, site, scheme == Scheme::Https, forced))
        .collect();
    redirects.sort_by(|a, b| {
        b.source
            .as_str()
            .len()
            .cmp(&a.source.as_str().len())
            .then(a.source.cmp(&b.source))
    });
    for rule in redirects {
        out.push_str(&format!(
            "    RedirectMatch {} \"{}\" \"{}\"\n",
            rule.status.code(),
            redirect_pattern(&rule.source),
            redirect_target(&rule.target)
        ));
    }
    if !extras.blocked.is_empty() {
        out.push_str(&render_ip_block(&extras.blocked));
    }
    // A path of the site (`/` then plain segments): Apache serves it as an internal request
    // of this virtual host, as the tenant.
    for (status, page) in &extras.error_pages {
        out.push_str(&format!("    ErrorDocument {status} {page}\n"));
    }
    out
}

/// The `*:80` body of a domain whose HTTPS is forced: a 301 to the same host and path over
/// HTTPS for every request but the challenge path, which the alias before it serves. The
/// host is the request's when it is one of the site's names, the domain's otherwise (a
/// request that reached this vhost as the default one is never sent to a host it named).
/// The query string follows by itself (`RewriteRule` keeps it).
fn render_force_https(site: &[&DomainName]) -> String {
    let challenge = ACME_CHALLENGE_PREFIX.replace('.', "\\.");
    let hosts: Vec<String> = site
        .iter()
        .map(|n| n.as_str().replace('.', "\\."))
        .collect();
    let canonical = site.first().map_or("", |n| n.as_str());
    format!(
        "    # HTTPS forced: everything but the certificate challenge answers 301 to HTTPS.\n\
         \x20   RewriteEngine On\n\
         \x20   RewriteCond \"%{{REQUEST_URI}}\" \"!^{challenge}\"\n\
         \x20   RewriteCond \"%{{HTTP_HOST}}\" \"^({hosts})(:[0-9]+)?$\" [NC]\n\
         \x20   RewriteRule \"^\" \"https://%1%{{REQUEST_URI}}\" [R=301,L]\n\
         \x20   RewriteCond \"%{{REQUEST_URI}}\" \"!^{challenge}\"\n\
         \x20   RewriteRule \"^\" \"https://{canonical}%{{REQUEST_URI}}\" [R=301,L]\n",
        hosts = hosts.join("|"),
    )
}

/// The value of a `Strict-Transport-Security` header.
pub fn hsts_value(hsts: &Hsts) -> String {
    let mut value = format!("max-age={}", hsts.max_age.get());
    if hsts.include_subdomains {
        value.push_str("; includeSubDomains");
    }
    value
}

/// Whether `rule`, in the virtual host answering `site` over HTTPS (`https`) or HTTP, would
/// send a request back to that same virtual host under the same rule, again and again: its
/// target is on one of the site's names, at the default port of a scheme that lands on this
/// virtual host (HTTP lands on HTTPS when `forced`), and the target's path is one the rule
/// itself redirects. Such a rule is left out of that virtual host only: a redirect of `/` to
/// `https://<the domain>/` sends HTTP to HTTPS and does nothing over HTTPS.
///
/// The renderer decides this rather than `ensure_redirect` refusing the target, because
/// whether a target comes back depends on what changes after the redirect is recorded (the
/// domain's aliases, a certificate bound, HTTPS forced) and on the virtual host, and an
/// HTTP-to-HTTPS redirect of the same host is meaningful on `*:80`. A target whose path the
/// rule does not catch cannot loop: each hop then shortens the rest of the path it carries.
pub fn sends_back_to_itself(
    rule: &RedirectRule,
    site: &[&DomainName],
    https: bool,
    forced: bool,
) -> bool {
    let url = rule.target.as_str();
    let (target_https, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => return false,
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().ok()),
        None => (authority, None),
    };
    let default_port = if target_https { 443 } else { 80 };
    if port.is_some_and(|p| p != default_port) || !site.iter().any(|n| n.as_str() == host) {
        return false;
    }
    let lands_on_https = target_https || forced;
    if lands_on_https != https {
        return false;
    }
    // Apache matches the decoded path; a query in the target keeps the rest of the path out
    // of the path.
    let path = tail.split('?').next().unwrap_or("");
    let path = percent_decoded(if path.is_empty() { "/" } else { path });
    redirects_path(&rule.source, &path)
}

/// Whether a request for `path` is redirected by a rule of `source` ([`redirect_pattern`]).
fn redirects_path(source: &RedirectSource, path: &str) -> bool {
    let source = source.as_str();
    if path.starts_with(ACME_CHALLENGE_PREFIX) {
        return false;
    }
    if source.ends_with('/') {
        path.starts_with(source)
    } else {
        path == source
            || path
                .strip_prefix(source)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// `path` with its `%`-escapes decoded (the URL type admits only well-formed ones); a byte
/// that is not UTF-8 is replaced, which no source can match.
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `<Directory>` section of one protected directory beneath `docroot`. The path is
/// `[A-Za-z0-9._-]` segments and the realm has no quote, backslash, `$` or `%`.
pub fn render_protected(docroot: &str, dir: &ProtectedDir) -> String {
    format!(
        "    <Directory \"{docroot}/{path}\">\n\
         \x20       AuthType Basic\n\
         \x20       AuthName \"{realm}\"\n\
         \x20       AuthBasicProvider file\n\
         \x20       AuthUserFile \"{file}\"\n\
         \x20       Require valid-user\n\
         \x20   </Directory>\n",
        path = dir.path,
        realm = dir.realm,
        file = dir.user_file.display(),
    )
}

/// The block of a domain's addresses, added (`AuthMerging And`) to whatever else the path
/// requires, and the challenge path granted after it.
pub fn render_ip_block(blocked: &[IpNetwork]) -> String {
    let list: Vec<&str> = blocked.iter().map(IpNetwork::as_str).collect();
    format!(
        "    # Blocked addresses: 403 everywhere but the certificate challenge.\n\
         \x20   <Location \"/\">\n\
         \x20       AuthMerging And\n\
         \x20       <RequireAll>\n\
         \x20           Require all granted\n\
         \x20           Require not ip {}\n\
         \x20       </RequireAll>\n\
         \x20   </Location>\n\
         \x20   <Location \"{ACME_CHALLENGE_PREFIX}\">\n\
         \x20       Require all granted\n\
         \x20   </Location>\n",
        list.join(" ")
    )
}

/// `name:hash` lines, in the request's order.
pub fn render_user_file(users: &AuthUsers) -> String {
    users
        .iter()
        .map(|u| format!("{}:{}\n", u.name, u.password_hash))
        .collect()
}
