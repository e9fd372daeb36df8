//! What keeps one tenant's web requests to that tenant's code and files (DESIGN.md
//! invariant 10; `docs/security.md`, "A tenant's web requests reach only its own code").
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
//! - **What a `.htaccess` may say.** The closed [`HTACCESS_DIRECTIVES`] list
//!   (`AllowOverrideList`) and `Options` limited to [`HTACCESS_OPTIONS`] (`AllowOverride
//!   Options=...`, which also admits the directives listed in [`HTACCESS_OPTIONS_CLASS`]):
//!   rewrites, authentication, redirects, expiry, headers, error
//!   pages, index files, types. Every other directive Apache allows in `.htaccess`
//!   (handlers, actions, environment, PHP settings, proxying, filters by name) answers 500
//!   and is logged as "not allowed here". A test runs every directive `apache2 -L` lists for
//!   `.htaccess` against the real server.
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

/// The directives a tenant's `.htaccess` may use (`AllowOverrideList`). Containers are named
/// as Apache names them (`<IfModule`). What is not here is refused with a 500.
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
];

/// The options a tenant's `.htaccess` may set with `Options` (`AllowOverride
/// Options=...`): listings, content negotiation and owner-checked symlinks. `FollowSymLinks`,
/// `ExecCGI` and `Includes` are refused.
pub const HTACCESS_OPTIONS: &[&str] = &["Indexes", "MultiViews", "SymLinksIfOwnerMatch"];

/// The directives `AllowOverride Options=...` admits besides `Options` itself: Apache's other
/// directives of that class (filter chains by content type, `Content-MD5`) and those it
/// allows wherever overrides are not `None` (sections, request-body and CGI resource
/// limits, `Error`, `ServerSignature`). None names a handler, an environment variable or a
/// proxy; none applies beyond the tenant's own requests.
pub const HTACCESS_OPTIONS_CLASS: &[&str] = &[
    "Options",
    "ContentDigest",
    "FilterDeclare",
    "FilterProvider",
    "FilterChain",
    "FilterProtocol",
    "<Files",
    "<FilesMatch",
    "<IfModule",
    "<IfDefine",
    "<IfFile",
    "<IfDirective",
    "<IfSection",
    "<IfVersion",
    "<If",
    "<ElseIf",
    "<Else",
    "Error",
    "ServerSignature",
    "LimitRequestBody",
    "LimitXMLRequestBody",
    "RLimitCPU",
    "RLimitMEM",
    "RLimitNPROC",
    "LogIOTrackTTFB",
    "FancyIndexing",
    "DeflateInflateLimitRequestBody",
    "DeflateInflateRatioLimit",
    "DeflateInflateRatioBurst",
];

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

/// The document root's `<Directory>`: no listing, owner-checked symlinks, the closed
/// `.htaccess` lists.
pub fn render_docroot_directory(docroot: &Path) -> String {
    format!(
        "    <Directory \"{docroot}\">\n\
         \x20       Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch\n\
         \x20       AllowOverride Options={options}\n\
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
            "Options",
            "AddOutputFilter",
            "SetOutputFilter",
            "SetInputFilter",
            "ForceType",
            "RewriteOptions",
            "XBitHack",
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
