//! The text of a tenant vhost: its names, document root, the isolation every tenant vhost
//! carries (`crate::web_isolation`), the ACME challenge alias, the PHP handler, protected
//! directories, redirects, the IP block, suspension and, with a certificate, the same site
//! over HTTPS; and the `AuthUserFile` of each protected directory. Pure functions of typed
//! values: [`crate::vhost`] gathers those values from the view.

use std::path::{Path, PathBuf};

use registry::types::{
    AuthRealm, AuthUsers, DomainAliases, DomainName, Hex32, HttpUrl, IpNetwork, ProtectedPath,
    RedirectSource, RedirectStatus,
};

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
    /// The node's directory of HTTP-01 challenge responses (mapped path): answers
    /// `/.well-known/acme-challenge/` from outside the tenant's document root, so neither a
    /// redirect nor the tenant's `.htaccess` can stand in the way of an ACME certificate.
    pub acme_challenges: Option<PathBuf>,
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

/// Renders the virtual host. Every value in it comes from a validated type (a domain name is
/// lowercase LDH, a home path is `[A-Za-z0-9._-]` components, a redirect source
/// `[A-Za-z0-9._~/-]`, a target URL has no quote, backslash or space), so nothing a tenant
/// sends can open a new directive or section.
pub fn render_vhost(
    id: &Hex32,
    account: &Hex32,
    domain: &DomainName,
    aliases: &DomainAliases,
    docroot: &Path,
    tenant: &WebTenant,
    extras: &VhostExtras,
) -> String {
    let docroot_path = docroot;
    let docroot = docroot.display();
    let header = format!(
        "# Managed by layerone node for web domain {id} of account {account}.\n\
         # Changes made here are replaced.\n"
    );
    let mut names = format!("    ServerName {domain}\n");
    if !aliases.is_empty() {
        let list: Vec<&str> = aliases.iter().map(DomainName::as_str).collect();
        names.push_str(&format!("    ServerAlias {}\n", list.join(" ")));
    }
    // The body both virtual hosts share: the same site over HTTP and, with a certificate,
    // over HTTPS (the challenge path stays exempt from redirects in both).
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
    out.push_str(&format!("    DocumentRoot \"{docroot}\"\n"));
    out.push_str(&web_isolation::render_docroot_directory(docroot_path));
    // Deeper `<Directory>` sections replace the document root's `Require all granted`.
    let mut protected: Vec<&ProtectedDir> = extras.protected.iter().collect();
    protected.sort_by(|a, b| a.path.cmp(&b.path));
    for dir in protected {
        out.push_str(&render_protected(&format!("{docroot}"), dir));
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
    } else {
        // Longest source first: the most specific redirect wins.
        let mut redirects: Vec<&RedirectRule> = extras.redirects.iter().collect();
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
    }
    let mut vhost = format!("{header}<VirtualHost *:80>\n{names}{out}</VirtualHost>\n");
    if let Some(tls) = &extras.tls {
        vhost.push_str(&format!(
            "<VirtualHost *:443>\n{names}\
             \x20   SSLEngine on\n\
             \x20   SSLCertificateFile \"{}\"\n\
             \x20   SSLCertificateKeyFile \"{}\"\n\
             {out}</VirtualHost>\n",
            tls.chain.display(),
            tls.key.display()
        ));
    }
    vhost
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
