//! What keeps one tenant's web requests to that tenant's code and files (ARCHITECTURE.md
//! invariant 15; `docs/security.md`, "A tenant's web requests reach only its own code").
//!
//! Three layers, each rendered into every tenant vhost by [`render_tenant_section`] and
//! [`render_docroot_directory`]:
//!
//! - **Identity.** Apache's request-handling child becomes the tenant before it touches a
//!   file: `AssignUserID #uid #gid` (mpm-itk), with the uid and gid the node recorded for
//!   the account. The tenant's PHP-FPM pool listens on a socket only that uid may open
//!   (`crates/ops/src/php/pool.rs`), so whatever a `.htaccess` makes Apache proxy to, a child
//!   running as one tenant cannot connect to another tenant's pool, and cannot read another
//!   tenant's files (homes are `0750`, no tenant is in another's group).
//! - **What a `.htaccess` may say.** Exactly the closed [`HTACCESS_DIRECTIVES`] list:
//!   rewrites, authentication, redirects, expiry, headers, error pages, index files, types,
//!   and `Options` limited to [`HTACCESS_OPTIONS`]. Every other directive Apache allows in
//!   `.htaccess`, whichever module the node loads brings it (handlers, actions, environment,
//!   PHP settings, proxying, filters by name, `mod_ssl`'s `SSLOptions`), answers 500 and is
//!   logged as "not allowed here". A test runs every directive `apache2 -L` lists for
//!   `.htaccess`, with every module an installed node loads, against the real server.
//!
//!   Apache opens `.htaccess` by directive class (`AllowOverride Options`, `FileInfo`...),
//!   and a class is every directive of every module that declares itself in it: opening
//!   `Options` to let a tenant write `Options -Indexes` also opened `SSLOptions`,
//!   `FilterDeclare`, `FilterProvider`, `FilterChain`, `FilterProtocol`, `ContentDigest` and
//!   whatever a module loaded later adds. So the document root opens no class
//!   (`AllowOverride ... None`) and names each directive (`AllowOverrideList`), `Options`
//!   among them. Which options `Options` may change is a separate setting of the same
//!   `<Directory>`: `AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None`
//!   records the options, then `None` clears the classes and leaves the options as recorded
//!   (httpd `server/core.c`, `set_override`). Without the `Options=` part, Apache's default
//!   would let `Options` set every option, `FollowSymLinks`, `ExecCGI` and `Includes`
//!   included; a test sets each refused option through `Options` on the real server.
//!
//!   Apache reads at most [`ALLOW_OVERRIDE_LIST_MAX`] names from `AllowOverrideList`: it
//!   drops the rest without a word (httpd `server/config.c`, `AP_MAX_ARGC` for `TAKE_ARGV`
//!   directives), and a second `AllowOverrideList` replaces the first instead of adding to
//!   it. The list is held within that limit when the crate compiles. What gives way is every
//!   directive no common application's `.htaccess` needs: the conditional sections other
//!   than `<IfModule>` and `<If>` (`<IfDefine>`, `<IfVersion>`, `<IfFile>`, `<IfDirective>`,
//!   `<IfSection>`), `ServerSignature`, request and resource limits (`LimitRequestBody`,
//!   `LimitXMLRequestBody`, `RLimit*`), listings' appearance (`IndexIgnore`,
//!   `FancyIndexing`...), filter chains by name, and the per-directory directives of
//!   `mod_ssl`. They answer 500 like any directive off the list; one joins it only by
//!   taking a free place, and once the list holds 64 names, only by displacing another.
//! - **What reaches PHP.** A `RewriteRule`'s `[E=...]` cannot be refused by Apache's
//!   configuration, so the FastCGI parameters PHP-FPM reads as configuration (`PHP_VALUE`,
//!   `PHP_ADMIN_VALUE`) are removed from every request the vhost hands to its pool
//!   (`ProxyFCGISetEnvIf`), after the `.htaccess` ran; WordPress's
//!   `[E=HTTP_AUTHORIZATION:...]` is untouched.
//!
//! Symlinks: the home and the document root carry `-FollowSymLinks +SymLinksIfOwnerMatch`
//! (defence in depth: Apache documents the owner check as racy); the barrier is the
//! identity, which cannot read what the tenant cannot.

use std::path::Path;

/// How many names Apache reads from one `AllowOverrideList` (`AP_MAX_ARGC` in httpd's
/// `server/config.c`); it ignores any after them.
pub const ALLOW_OVERRIDE_LIST_MAX: usize = 64;

/// The directives a tenant's `.htaccess` may use (`AllowOverrideList`), and nothing else.
/// Containers are named as Apache names them (`<IfModule`). What is not here is refused
/// with a 500.
pub const HTACCESS_DIRECTIVES: &[&str] = &[
    // Sections: their content is checked against this same list.
    "<IfModule",
    "<Files",
    "<FilesMatch",
    "<Limit",
    "<LimitExcept",
    "<If",
    "<ElseIf",
    "<Else",
    "<RequireAll",
    "<RequireAny",
    "<RequireNone",
    // mod_rewrite (WordPress, Laravel, Drupal front controllers).
    "RewriteEngine",
    "RewriteBase",
    "RewriteCond",
    "RewriteRule",
    // Authentication and access.
    "AuthType",
    "AuthName",
    "AuthUserFile",
    "AuthBasicProvider",
    "Require",
    "Satisfy",
    "Order",
    "Allow",
    "Deny",
    // External redirects.
    "Redirect",
    "RedirectMatch",
    "RedirectPermanent",
    "RedirectTemp",
    // Index files and error pages.
    "DirectoryIndex",
    "DirectorySlash",
    "FallbackResource",
    "ErrorDocument",
    // Caching and response headers.
    "ExpiresActive",
    "ExpiresByType",
    "ExpiresDefault",
    "Header",
    "FileETag",
    // Types, charsets and compression by type.
    "AddType",
    "AddCharset",
    "AddDefaultCharset",
    "AddEncoding",
    "AddLanguage",
    "DefaultLanguage",
    "AddOutputFilterByType",
    // Directory listings, content negotiation, owner-checked symlinks: the values
    // `HTACCESS_OPTIONS` names.
    "Options",
];

const _: () = assert!(
    HTACCESS_DIRECTIVES.len() <= ALLOW_OVERRIDE_LIST_MAX,
    "Apache would silently drop the names past the 64th"
);

/// The options a tenant's `.htaccess` may change with `Options` (`AllowOverride
/// Options=...`, which records them without opening the class): listings, content
/// negotiation and owner-checked symlinks. `FollowSymLinks`, `ExecCGI` and `Includes` are
/// refused.
pub const HTACCESS_OPTIONS: &[&str] = &["Indexes", "MultiViews", "SymLinksIfOwnerMatch"];

/// The FastCGI parameters PHP-FPM applies as `php.ini` settings: removed from every request
/// a tenant vhost hands to its pool, whatever set them.
pub const STRIPPED_FASTCGI_PARAMS: &[&str] = &["PHP_VALUE", "PHP_ADMIN_VALUE"];

/// Who a tenant vhost's requests run as, and the home they are confined to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebTenant {
    /// The uid the node recorded for the account.
    pub uid: u32,
    /// The account's primary gid as the node recorded it.
    pub gid: u32,
    /// The home (mapped path).
    pub home: std::path::PathBuf,
}

/// The identity, the home's symlink rule and the FastCGI parameter filter: the part of a
/// tenant vhost that does not depend on the domain.
pub fn render_tenant_section(tenant: &WebTenant) -> String {
    let mut out = format!(
        "    # Requests run as the account (mpm-itk): they reach what its uid reaches.\n\
         \x20   AssignUserID #{uid} #{gid}\n\
         \x20   <Directory \"{home}\">\n\
         \x20       Options -FollowSymLinks +SymLinksIfOwnerMatch\n\
         \x20       AllowOverride None\n\
         \x20   </Directory>\n",
        uid = tenant.uid,
        gid = tenant.gid,
        home = tenant.home.display(),
    );
    for param in STRIPPED_FASTCGI_PARAMS {
        out.push_str(&format!("    ProxyFCGISetEnvIf \"true\" !{param}\n"));
    }
    out
}

/// The document root's `<Directory>`: no listing, owner-checked symlinks, a `.htaccess`
/// held to the closed lists.
pub fn render_docroot_directory(docroot: &Path) -> String {
    format!(
        "    <Directory \"{docroot}\">\n\
         \x20       Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch\n\
         \x20       # Options= names the options a .htaccess may change with Options; None then\n\
         \x20       # opens no class of directives: a .htaccess may use only those listed below.\n\
         \x20       AllowOverride Options={options} None\n\
         \x20       AllowOverrideList {directives}\n\
         \x20       Require all granted\n\
         \x20   </Directory>\n",
        docroot = docroot.display(),
        options = HTACCESS_OPTIONS.join(","),
        directives = HTACCESS_DIRECTIVES.join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_handler_environment_or_proxy_directive_is_on_the_htaccess_list() {
        for refused in [
            "SetHandler",
            "AddHandler",
            "Action",
            "SetEnv",
            "SetEnvIf",
            "SetEnvIfNoCase",
            "SetEnvIfExpr",
            "BrowserMatch",
            "PassEnv",
            "UnsetEnv",
            "ProxyFCGISetEnvIf",
            "ProxyPass",
            "RequestHeader",
            "AddOutputFilter",
            "SetOutputFilter",
            "SetInputFilter",
            "ForceType",
            "RewriteOptions",
            "XBitHack",
            // The rest of Apache's `Options` class, which the list does not open.
            "SSLOptions",
            "FilterDeclare",
            "FilterProvider",
            "FilterChain",
            "FilterProtocol",
            "ContentDigest",
        ] {
            assert!(
                !HTACCESS_DIRECTIVES.contains(&refused),
                "{refused} must not be allowed in a tenant's .htaccess"
            );
        }
        assert!(!HTACCESS_OPTIONS.contains(&"FollowSymLinks"));
        assert!(!HTACCESS_OPTIONS.contains(&"ExecCGI"));
        assert!(!HTACCESS_OPTIONS.contains(&"Includes"));
    }

    #[test]
    fn the_tenant_section_names_the_recorded_ids_and_strips_php_settings() {
        let text = render_tenant_section(&WebTenant {
            uid: 2001,
            gid: 2002,
            home: "/home/shop1".into(),
        });
        assert!(text.contains("AssignUserID #2001 #2002\n"));
        assert!(text.contains("<Directory \"/home/shop1\">"));
        assert!(text.contains("ProxyFCGISetEnvIf \"true\" !PHP_VALUE\n"));
        assert!(text.contains("ProxyFCGISetEnvIf \"true\" !PHP_ADMIN_VALUE\n"));
    }
}
