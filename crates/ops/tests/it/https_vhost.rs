//! The HTTPS side of a tenant vhost as rendered: the `*:443` virtual host (TLS 1.2 and 1.3
//! only, the certificate's files, the same site as `*:80`), forced HTTPS (a 301 for all but
//! the ACME challenge path, only with a certificate), the HSTS header (only over HTTPS), and
//! redirects left out of the virtual host they would send back to themselves; checked by the
//! real `apache2ctl -t`.

use std::path::{Path, PathBuf};

use ops::vhost::{
    HttpsRules, RedirectRule, TlsFiles, VhostExtras, render_vhost, sends_back_to_itself,
};
use ops::web_domain::Hsts;
use ops::web_isolation::WebTenant;
use provider::{Platform, Program};
use registry::Hex32;
use registry::types::{DomainName, RedirectStatus};
use testkit::{require_apachectl, sim_provider, write_apache_test_config};

/// A redirect of the vhost (the document root's `.htaccess` list names `RedirectMatch` too).
const REDIRECT_LINE: &str = "\n    RedirectMatch ";

const CHALLENGES: &str = "/var/lib/layerone/acme-challenge/.well-known/acme-challenge";

fn hex(c: char) -> Hex32 {
    c.to_string().repeat(32).parse().unwrap()
}

fn rule(source: &str, target: &str) -> RedirectRule {
    RedirectRule {
        source: source.parse().unwrap(),
        target: target.parse().unwrap(),
        status: RedirectStatus::MovedPermanently,
    }
}

fn tls(dir: &Path) -> TlsFiles {
    TlsFiles {
        chain: dir.join("c.crt"),
        key: dir.join("c.key"),
    }
}

/// A site with PHP, a redirect elsewhere, one to itself over HTTPS and an IP block.
fn extras(tls: Option<TlsFiles>, https: HttpsRules) -> VhostExtras {
    VhostExtras {
        php_socket: Some(PathBuf::from("/run/php/layerone-aaaa-php8.2.sock")),
        redirects: vec![
            rule("/old-shop", "https://shop.example.com/"),
            rule("/", "https://shop.example.com/"),
        ],
        blocked: vec!["192.0.2.0/24".parse().unwrap()],
        tls,
        https,
        acme_challenges: Some(PathBuf::from(CHALLENGES)),
        ..VhostExtras::default()
    }
}

fn forced(hsts: Option<Hsts>) -> HttpsRules {
    HttpsRules {
        force_https: true,
        hsts,
    }
}

fn hsts(max_age: u64, include_subdomains: bool) -> Hsts {
    Hsts {
        max_age: max_age.try_into().unwrap(),
        include_subdomains,
    }
}

fn vhost(extras: &VhostExtras, docroot: &Path) -> String {
    render_vhost(
        &hex('c'),
        &hex('a'),
        &"shop.example.com".parse().unwrap(),
        &serde_json::from_value(serde_json::json!(["www.shop.example.com"])).unwrap(),
        docroot,
        &WebTenant {
            uid: 1000,
            gid: 1000,
            home: PathBuf::from("/home/shop1"),
        },
        extras,
    )
}

/// The `*:80` and the `*:443` virtual hosts of a rendered vhost.
fn split(text: &str) -> (&str, &str) {
    let at = text
        .find("<VirtualHost *:443>")
        .expect("an HTTPS virtual host");
    text.split_at(at)
}

#[test]
fn https_vhost_carries_tls_protocols_certificate_and_the_same_site() {
    let docroot = Path::new("/home/shop1/public_html");
    let text = vhost(
        &extras(Some(tls(Path::new("/etc/c"))), HttpsRules::default()),
        docroot,
    );
    let (http, https) = split(&text);
    for line in [
        "    SSLEngine on\n",
        "    SSLProtocol -all +TLSv1.2 +TLSv1.3\n",
        "    SSLCertificateFile \"/etc/c/c.crt\"\n",
        "    SSLCertificateKeyFile \"/etc/c/c.key\"\n",
    ] {
        assert!(https.contains(line), "{line} missing from {https}");
        assert!(!http.contains(line), "{line} in the HTTP host: {http}");
    }
    // Everything the site is over HTTP, it is over HTTPS: names, isolation, the challenge
    // alias, the document root, PHP, the other redirect and the IP block.
    for line in [
        "    ServerName shop.example.com\n",
        "    ServerAlias www.shop.example.com\n",
        "    AssignUserID #1000 #1000\n",
        &format!("    Alias \"/.well-known/acme-challenge/\" \"{CHALLENGES}/\"\n"),
        "    DocumentRoot \"/home/shop1/public_html\"\n",
        "        SetHandler \"proxy:unix:/run/php/layerone-aaaa-php8.2.sock|fcgi://localhost\"\n",
        "    RedirectMatch 301 \"^(?!/\\.well-known/acme-challenge/)/old-shop(/.*)?$\" \"https://shop.example.com/$1\"\n",
        "            Require not ip 192.0.2.0/24\n",
    ] {
        assert!(http.contains(line), "{line} missing from {http}");
        assert!(https.contains(line), "{line} missing from {https}");
    }
    // No HSTS unless asked, and no forced HTTPS unless asked.
    assert!(!text.contains("Strict-Transport-Security"), "{text}");
    assert!(!text.contains("    RewriteEngine On\n"), "{text}");
}

#[test]
fn a_redirect_of_the_site_to_itself_over_https_is_left_out_of_the_https_vhost_only() {
    let text = vhost(
        &extras(Some(tls(Path::new("/etc/c"))), HttpsRules::default()),
        Path::new("/home/shop1/public_html"),
    );
    let (http, https) = split(&text);
    let to_itself = "    RedirectMatch 301 \"^(?!/\\.well-known/acme-challenge/)/(.*)$\" \"https://shop.example.com/$1\"\n";
    assert!(
        http.contains(to_itself),
        "HTTP goes to HTTPS by the redirect: {http}"
    );
    assert!(
        !https.contains(to_itself),
        "it would loop over HTTPS: {https}"
    );
    assert_eq!(http.matches(REDIRECT_LINE).count(), 2);
    assert_eq!(https.matches(REDIRECT_LINE).count(), 1);
}

#[test]
fn redirects_that_would_come_back_under_the_same_rule_are_recognised() {
    let site: Vec<DomainName> = ["shop.example.com", "www.shop.example.com"]
        .iter()
        .map(|n| n.parse().unwrap())
        .collect();
    let site: Vec<&DomainName> = site.iter().collect();
    // (source, target, over https, https forced) and whether it loops.
    let cases = [
        ("/", "https://shop.example.com/", true, false, true),
        ("/", "https://shop.example.com/", false, false, false),
        ("/", "https://www.shop.example.com/", true, false, true),
        ("/", "https://shop.example.com:443/", true, false, true),
        ("/", "https://shop.example.com:8443/", true, false, false),
        ("/", "https://shop.example.com/?from=old", true, false, true),
        ("/", "https://other.example.com/", true, false, false),
        ("/", "https://shop.example.com", true, false, true),
        // Plain HTTP to itself loops over HTTP, and over HTTPS once HTTP is sent to HTTPS.
        ("/", "http://shop.example.com/", false, false, true),
        ("/", "http://shop.example.com/", true, false, false),
        ("/", "http://shop.example.com/", true, true, true),
        // The target's path: beneath the source loops, elsewhere does not.
        ("/old-shop", "https://shop.example.com/", true, false, false),
        ("/a/", "https://shop.example.com/a/b", true, false, true),
        ("/a", "https://shop.example.com/a", true, false, true),
        ("/a", "https://shop.example.com/a/b", true, false, true),
        ("/a", "https://shop.example.com/ab", true, false, false),
        (
            "/docs",
            "https://shop.example.com/%64ocs/x",
            true,
            false,
            true,
        ),
        (
            "/",
            "https://shop.example.com/.well-known/acme-challenge/x",
            true,
            false,
            false,
        ),
    ];
    for (source, target, https, forced, loops) in cases {
        assert_eq!(
            sends_back_to_itself(&rule(source, target), &site, https, forced),
            loops,
            "{source} -> {target} (https {https}, forced {forced})"
        );
    }
}

#[test]
fn forced_https_vhost_snapshot_redirects_all_but_the_challenge_and_sends_hsts_over_https_only() {
    let text = vhost(
        &extras(
            Some(tls(Path::new("/etc/c"))),
            forced(Some(hsts(31_536_000, true))),
        ),
        Path::new("/home/shop1/public_html"),
    );
    let (http, https) = split(&text);
    let force = r#"    DocumentRoot "/home/shop1/public_html"
    <Directory "/home/shop1/public_html">
        Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch
        # Options= names the options a .htaccess may change with Options; None then
        # opens no class of directives: a .htaccess may use only those listed below.
        AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None
        AllowOverrideList <IfModule <Files <FilesMatch <Limit <LimitExcept <If <ElseIf <Else <RequireAll <RequireAny <RequireNone RewriteEngine RewriteBase RewriteCond RewriteRule AuthType AuthName AuthUserFile AuthBasicProvider Require Satisfy Order Allow Deny Redirect RedirectMatch RedirectPermanent RedirectTemp DirectoryIndex DirectorySlash FallbackResource ErrorDocument ExpiresActive ExpiresByType ExpiresDefault Header FileETag AddType AddCharset AddDefaultCharset AddEncoding AddLanguage DefaultLanguage AddOutputFilterByType Options
        Require all granted
    </Directory>
    # HTTPS forced: everything but the certificate challenge answers 301 to HTTPS.
    RewriteEngine On
    RewriteCond "%{REQUEST_URI}" "!^/\.well-known/acme-challenge/"
    RewriteCond "%{HTTP_HOST}" "^(shop\.example\.com|www\.shop\.example\.com)(:[0-9]+)?$" [NC]
    RewriteRule "^" "https://%1%{REQUEST_URI}" [R=301,L]
    RewriteCond "%{REQUEST_URI}" "!^/\.well-known/acme-challenge/"
    RewriteRule "^" "https://shop.example.com%{REQUEST_URI}" [R=301,L]
</VirtualHost>
"#;
    assert!(http.ends_with(force), "{http}");
    // Over HTTP only the challenge alias and the redirect: no PHP, no tenant redirect.
    assert!(http.contains(&format!(
        "    Alias \"/.well-known/acme-challenge/\" \"{CHALLENGES}/\"\n"
    )));
    for absent in ["SetHandler", REDIRECT_LINE, "Strict-Transport-Security"] {
        assert!(!http.contains(absent), "{absent} over HTTP: {http}");
    }
    assert!(
        https.contains(
            "    Header always set Strict-Transport-Security \"max-age=31536000; includeSubDomains\"\n"
        ),
        "{https}"
    );
    assert!(!https.contains("    RewriteEngine On\n"), "{https}");
    assert!(https.contains("SetHandler"), "{https}");
    assert_eq!(
        https.matches(REDIRECT_LINE).count(),
        1,
        "the redirect elsewhere stays over HTTPS, the one to itself does not: {https}"
    );
    let without_subdomains = vhost(
        &extras(
            Some(tls(Path::new("/etc/c"))),
            forced(Some(hsts(600, false))),
        ),
        Path::new("/home/shop1/public_html"),
    );
    assert!(without_subdomains.contains("Strict-Transport-Security \"max-age=600\"\n"));
}

#[test]
fn https_policy_without_a_certificate_leaves_the_http_vhost_as_it_was() {
    let docroot = Path::new("/home/shop1/public_html");
    let plain = vhost(&extras(None, HttpsRules::default()), docroot);
    let with_policy = vhost(
        &extras(None, forced(Some(hsts(31_536_000, false)))),
        docroot,
    );
    assert_eq!(with_policy, plain);
    assert!(!plain.contains("<VirtualHost *:443>") && !plain.contains("    RewriteEngine On\n"));
}

#[test]
fn real_apache_accepts_the_https_vhost_forced_and_with_hsts() {
    require_apachectl(Platform::Debian);
    let dir = tempfile::tempdir().unwrap();
    let p = sim_provider(Platform::Debian, dir.path(), vec![Program::ApacheCtl]);
    let conf = write_apache_test_config(&p).unwrap();
    let made = rcgen::generate_simple_self_signed(vec![
        "shop.example.com".to_owned(),
        "www.shop.example.com".to_owned(),
    ])
    .unwrap();
    let files = tls(dir.path());
    std::fs::write(&files.chain, made.cert.pem()).unwrap();
    std::fs::write(&files.key, made.signing_key.serialize_pem()).unwrap();
    for https in [
        HttpsRules::default(),
        forced(None),
        forced(Some(hsts(31_536_000, true))),
        HttpsRules {
            force_https: false,
            hsts: Some(hsts(0, false)),
        },
    ] {
        let text = vhost(&extras(Some(files.clone()), https.clone()), dir.path());
        std::fs::write(conf.vhosts_dir.join("a.conf"), &text).unwrap();
        p.apache_configtest()
            .unwrap_or_else(|e| panic!("apache2ctl -t refuses {https:?}: {e}\n{text}"));
    }
}
