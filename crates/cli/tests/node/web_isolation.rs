//! A hostile tenant with a shell and its own web space, against the node's own vhosts and
//! pools on the real Apache (mpm-itk) and PHP-FPM 8.2: none of the tricks runs code as
//! another tenant, reaches another tenant's files, changes PHP's confinement or shows the
//! server's status; a WordPress-shaped site keeps working (ARCHITECTURE.md invariant 15,
//! `docs/security.md`).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::real_web::{RealWeb, require_web_daemons};
use common::*;
use serde_json::{Value, json};

const ALICE: &str = "alice.example.com";
const BOB: &str = "bob.example.com";
/// `openssl passwd -6 -salt saltsalt pw`.
const BOB_HASH: &str = "$6$saltsalt$pauPrmdmG4BTE9h2HPmywiw152IFch6BJCEsaY6D.PLTfpV8sqvXwWdyfsgVgozkYH9B80bAip/08R2BPH2xk/";
/// What bob keeps private (0600 in his home).
const BOB_SECRET: &str = "bob-secret-7f3a";

fn ok(node: &mut Node, body: &Value) -> Value {
    let rid = body["request_id"].as_str().unwrap().to_owned();
    node.submit(body);
    node.pass();
    let job = node.state().job(&rid).unwrap().unwrap();
    assert_eq!(
        job.state,
        registry::JobState::Succeeded,
        "{body}: {:?}",
        job.error
    );
    job.result.unwrap()
}

/// A tenant as the test sees it: its ids and its document root (mapped).
struct Tenant {
    uid: u32,
    gid: u32,
    home: PathBuf,
    docroot: PathBuf,
}

impl Tenant {
    /// Writes `rel` beneath the document root as the tenant would (its owner, 0644).
    fn put(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.docroot.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::os::unix::fs::chown(&path, Some(self.uid), Some(self.gid)).unwrap();
        path
    }

    /// The tenant's `.htaccess` in its document root.
    fn htaccess(&self, text: &str) {
        let path = self.docroot.join(".htaccess");
        let _ = std::fs::remove_file(&path);
        self.put(".htaccess", text);
    }

    /// A symlink the tenant made (owned by it), at `rel` beneath its document root.
    fn symlink(&self, target: &Path, rel: &str) {
        let link = self.docroot.join(rel);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(self.uid), Some(self.gid)).unwrap();
    }
}

/// Two tenants, alice and bob, each with a domain on PHP 8.2; bob keeps a private file in
/// his home and a page that says who runs it. Apache and FPM are started on the result.
fn two_tenants() -> (Node, Tenant, Tenant) {
    require_web_daemons();
    let mut node = Node::with_real_apache();
    ok(&mut node, &ensure_account(1, 10, "alice"));
    ok(&mut node, &ensure_account(2, 11, "bob"));
    ok(&mut node, &ensure_domain(3, 30, 10, ALICE));
    ok(&mut node, &ensure_domain(4, 31, 11, BOB));
    ok(&mut node, &set_php_version(5, 30, 10, "8.2"));
    ok(&mut node, &set_php_version(6, 31, 11, "8.2"));
    let tenant = |node: &Node, account: u64, domain: &str| {
        let row = node
            .state()
            .resource("account", &id(account).parse().unwrap())
            .unwrap()
            .unwrap();
        let home = node.path(row.data["home"].as_str().unwrap());
        Tenant {
            uid: u32::try_from(row.data["uid"].as_u64().unwrap()).unwrap(),
            gid: u32::try_from(row.data["gid"].as_u64().unwrap()).unwrap(),
            docroot: home.join("web").join(domain).join("public_html"),
            home,
        }
    };
    let alice = tenant(&node, 10, ALICE);
    let bob = tenant(&node, 11, BOB);
    assert_ne!(alice.uid, bob.uid);
    let secret = bob.home.join("secret.txt");
    std::fs::write(&secret, BOB_SECRET).unwrap();
    std::os::unix::fs::chown(&secret, Some(bob.uid), Some(bob.gid)).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    for t in [&alice, &bob] {
        t.put("whoami.php", WHOAMI);
    }
    (node, alice, bob)
}

/// Says which uid runs it and the confinement PHP applies to it.
const WHOAMI: &str = r#"<?php
echo "uid=", posix_geteuid(), "\n";
echo "open_basedir=", ini_get('open_basedir'), "\n";
echo "tmp=", sys_get_temp_dir(), "\n";
echo "upload_tmp_dir=", ini_get('upload_tmp_dir'), "\n";
echo "session.save_path=", ini_get('session.save_path'), "\n";
"#;

/// A script a tenant plants outside its web space (in `dir`): it reads bob's secret and
/// writes a marker into bob's document root, and says who ran it.
fn evil_script(bob: &Tenant) -> String {
    format!(
        "<?php\necho 'uid=', posix_geteuid(), \"\\n\";\n\
         echo @file_get_contents('{secret}');\n\
         @file_put_contents('{marker}', 'pwned');\n",
        secret = bob.home.join("secret.txt").display(),
        marker = bob.docroot.join("pwned.txt").display(),
    )
}

/// Plants the evil script where the attack of the issue put it: a world-readable directory
/// outside every home.
fn plant_evil_script(node: &Node, alice: &Tenant, bob: &Tenant) -> PathBuf {
    let dir = node.dir.path().join("shared-tmp/x");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(
        node.dir.path().join("shared-tmp"),
        std::fs::Permissions::from_mode(0o1777),
    )
    .unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = dir.join("evil.php");
    std::fs::write(&script, evil_script(bob)).unwrap();
    std::os::unix::fs::chown(&script, Some(alice.uid), Some(alice.gid)).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    script
}

fn bob_socket(node: &Node) -> PathBuf {
    let layout = node.provider.php_fpm_layout(provider::PhpVersion::V8_2);
    node.path(&layout.socket_dir)
        .join(format!("layerone-{}-php8.2.sock", id(11)))
}

/// Nothing of bob's was read or written, and bob's uid ran nothing for alice.
fn assert_bob_untouched(body: &str, bob: &Tenant, what: &str) {
    assert!(
        !body.contains(BOB_SECRET),
        "{what}: bob's private file was read: {body}"
    );
    assert!(
        !body.contains(&format!("uid={}", bob.uid)),
        "{what}: code ran as bob: {body}"
    );
    assert!(
        !bob.docroot.join("pwned.txt").exists(),
        "{what}: something wrote into bob's document root"
    );
}

#[test]
fn htaccess_proxy_and_handler_tricks_never_run_code_as_another_tenant() {
    let (node, alice, bob) = two_tenants();
    let evil = plant_evil_script(&node, &alice, &bob);
    let socket = bob_socket(&node);
    let s = socket.display();
    let e = evil.display();
    let bob_whoami = bob.docroot.join("whoami.php");
    let b = bob_whoami.display();
    alice.symlink(&evil, "x.php");
    let web = RealWeb::start(&node);
    // bob's own site runs as bob: the attacks below are measured against a live pool.
    let own = web.get(BOB, "/whoami.php", &[]);
    assert_eq!(own.status, 200, "{own:?}");
    assert!(own.body.contains(&format!("uid={}", bob.uid)), "{own:?}");
    let attacks = [
        (
            "RewriteRule [P] to bob's pool with a script in a shared directory",
            format!(
                "RewriteEngine On\nRewriteRule ^z\\.php$ \"unix:{s}|fcgi://localhost{e}\" [P]\n"
            ),
            "/z.php",
        ),
        (
            "RewriteRule [P] to bob's pool with bob's own script",
            format!(
                "RewriteEngine On\nRewriteRule ^z\\.php$ \"unix:{s}|fcgi://localhost{b}\" [P]\n"
            ),
            "/z.php",
        ),
        (
            "SetHandler to bob's pool on a symlink to the script",
            format!(
                "<FilesMatch \"^x\\.php$\">\nSetHandler \"proxy:unix:{s}|fcgi://localhost\"\n</FilesMatch>\n"
            ),
            "/x.php",
        ),
        (
            "RewriteRule [H=] naming bob's pool",
            format!(
                "RewriteEngine On\nRewriteRule ^x\\.php$ - [H=proxy:unix:{s}|fcgi://localhost]\n"
            ),
            "/x.php",
        ),
        (
            "AddHandler naming bob's pool",
            format!("AddHandler \"proxy:unix:{s}|fcgi://localhost\" .php\n"),
            "/x.php",
        ),
        (
            "Action naming bob's pool",
            format!(
                "Action bobs-php \"proxy:unix:{s}|fcgi://localhost\" virtual\nAddHandler bobs-php .php\n"
            ),
            "/x.php",
        ),
    ];
    for (what, htaccess, path) in &attacks {
        alice.htaccess(htaccess);
        let got = web.get(ALICE, path, &[]);
        assert_ne!(got.status, 200, "{what}: answered 200: {got:?}");
        assert_bob_untouched(&got.body, &bob, what);
    }
    // The socket itself refuses alice's uid: the barrier is the kernel's, not Apache's.
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "bob's pool socket is bob's only");
    assert!(
        web.error_log().contains("Permission denied"),
        "the proxy attempts failed at bob's socket: {}",
        web.error_log()
    );
}

#[test]
fn php_settings_and_environment_from_htaccess_never_reach_the_pool() {
    let (node, alice, _bob) = two_tenants();
    let web = RealWeb::start(&node);
    let home = alice.home.display().to_string();
    let confined = format!("open_basedir={home}/\n");
    let before = web.get(ALICE, "/whoami.php", &[]);
    assert_eq!(before.status, 200, "{before:?}");
    assert!(before.body.contains(&confined), "{before:?}");
    // Refused outright (500): the directive is not on the node's list.
    for htaccess in [
        "SetEnv PHP_ADMIN_VALUE \"open_basedir=/\"\n",
        "SetEnv PHP_VALUE \"open_basedir=/\"\n",
        "SetEnvIf Request_URI . PHP_ADMIN_VALUE=open_basedir=/\n",
        "SetEnvIfNoCase Request_URI . PHP_VALUE=open_basedir=/\n",
        "SetEnvIfExpr \"true\" PHP_ADMIN_VALUE=open_basedir=/\n",
        "BrowserMatch . PHP_ADMIN_VALUE=open_basedir=/\n",
        "PassEnv PATH\n",
        "ProxyFCGISetEnvIf \"true\" PHP_ADMIN_VALUE \"open_basedir=/\"\n",
        "php_admin_value open_basedir /\n",
        "SetEnv proxy-nokeepalive 1\n",
    ] {
        alice.htaccess(htaccess);
        let got = web.get(ALICE, "/whoami.php", &[]);
        assert_eq!(got.status, 500, "{htaccess}: {got:?}");
    }
    // Allowed directive, stripped parameter: a rewrite's [E=] cannot be refused by
    // configuration, so the vhost removes PHP's settings before the request reaches FPM.
    for flag in [
        "[E=PHP_ADMIN_VALUE:open_basedir=/]",
        "[E=PHP_VALUE:open_basedir=/]",
        "[E=PHP_ADMIN_VALUE:open_basedir=/,E=PHP_VALUE:auto_prepend_file=/etc/passwd]",
    ] {
        alice.htaccess(&format!("RewriteEngine On\nRewriteRule ^ - {flag}\n"));
        let got = web.get(ALICE, "/whoami.php", &[]);
        assert_eq!(got.status, 200, "{flag}: {got:?}");
        assert!(got.body.contains(&confined), "{flag}: {got:?}");
        assert!(!got.body.contains("root:x:0:0"), "{flag}: {got:?}");
    }
    // The pool's own directories, inside the home, and nothing shared.
    let tmp = alice.home.join(".php/8.2/tmp");
    assert!(
        before.body.contains(&format!("tmp={}\n", tmp.display())),
        "{before:?}"
    );
    assert!(
        before.body.contains(&format!(
            "upload_tmp_dir={}\n",
            alice.home.join(".php/8.2/uploads").display()
        )),
        "{before:?}"
    );
    assert!(
        before.body.contains(&format!(
            "session.save_path={}\n",
            alice.home.join(".php/8.2/sessions").display()
        )),
        "{before:?}"
    );
    for dir in ["tmp", "uploads", "sessions"] {
        let meta = std::fs::metadata(alice.home.join(".php/8.2").join(dir)).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), alice.uid);
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    }
}

#[test]
fn server_status_is_never_served_to_a_tenant() {
    let (node, alice, _bob) = two_tenants();
    alice.put("s.txt", "plain");
    let web = RealWeb::start(&node);
    for htaccess in [
        "SetHandler server-status\n",
        "<Files s.txt>\nSetHandler server-status\n</Files>\n",
        "RewriteEngine On\nRewriteRule ^s\\.txt$ - [H=server-status]\n",
        "AddType application/x-httpd-status .txt\n",
        "RewriteEngine On\nRewriteRule ^s\\.txt$ - [T=application/x-httpd-status]\n",
        "RewriteEngine On\nRewriteRule ^s\\.txt$ - [H=server-info]\n",
    ] {
        alice.htaccess(htaccess);
        let got = web.get(ALICE, "/s.txt", &[]);
        assert!(
            !got.body.contains("Apache Status") && !got.body.contains("Server Information"),
            "{htaccess}: the server's status was served: {got:?}"
        );
    }
}

#[test]
fn a_symlinked_htaccess_is_held_to_the_same_list() {
    let (node, alice, bob) = two_tenants();
    // A file of alice's outside her web space with refused directives, and bob's own
    // private `.htaccess`.
    let outside = alice.home.join("rules.txt");
    std::fs::write(&outside, "SetHandler server-status\n").unwrap();
    std::os::unix::fs::chown(&outside, Some(alice.uid), Some(alice.gid)).unwrap();
    let bobs = bob.put(
        ".htaccess",
        "# bob's rules\nSetEnv PHP_ADMIN_VALUE open_basedir=/\n",
    );
    std::fs::set_permissions(&bobs, std::fs::Permissions::from_mode(0o600)).unwrap();
    let web = RealWeb::start(&node);
    for target in [outside.as_path(), bobs.as_path()] {
        alice.symlink(target, ".htaccess");
        let got = web.get(ALICE, "/whoami.php", &[]);
        assert_eq!(got.status, 500, "{}: {got:?}", target.display());
        assert!(!got.body.contains("Apache Status"), "{got:?}");
        assert_bob_untouched(&got.body, &bob, "symlinked .htaccess");
    }
}

#[test]
fn a_web_directory_symlinked_to_another_tenant_serves_nothing_of_it() {
    let (mut node, alice, bob) = two_tenants();
    // bob protects a directory: 401 on his own site without the password.
    bob.put("private/report.txt", "bob-report");
    ok(
        &mut node,
        &json!({"request_id": id(20), "operation": "ensure_protected_directory",
                "resource": {"id": id(40), "account": id(11), "web_domain": id(31), "path": "private",
                             "realm": "Staff", "users": [{"name": "bob", "password_hash": BOB_HASH}]}}),
    );
    // alice replaces her domain's web directory with a symlink to bob's.
    let alice_web = alice.home.join("web").join(ALICE);
    std::fs::rename(&alice_web, alice.home.join("web/moved")).unwrap();
    std::os::unix::fs::symlink(bob.home.join("web").join(BOB), &alice_web).unwrap();
    std::os::unix::fs::lchown(&alice_web, Some(alice.uid), Some(alice.gid)).unwrap();
    let web = RealWeb::start(&node);
    assert_eq!(web.get(BOB, "/private/report.txt", &[]).status, 401);
    for path in ["/private/report.txt", "/whoami.php", "/"] {
        let got = web.get(ALICE, path, &[]);
        assert_ne!(got.status, 200, "{path} through the symlink: {got:?}");
        assert!(!got.body.contains("bob-report"), "{got:?}");
        assert_bob_untouched(&got.body, &bob, path);
    }
}

#[test]
fn wordpress_htaccess_rewrites_to_index_php_as_its_own_tenant() {
    let (node, alice, _bob) = two_tenants();
    alice.put(
        "index.php",
        "<?php echo 'wp uid=', posix_geteuid(), ' uri=', $_SERVER['REQUEST_URI'], ' auth=', \
         $_SERVER['HTTP_AUTHORIZATION'] ?? '-', \"\\n\";",
    );
    alice.put("logo.png", "png");
    alice.htaccess(
        "# BEGIN WordPress\n<IfModule mod_rewrite.c>\nRewriteEngine On\n\
         RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]\nRewriteBase /\n\
         RewriteRule ^index\\.php$ - [L]\nRewriteCond %{REQUEST_FILENAME} !-f\n\
         RewriteCond %{REQUEST_FILENAME} !-d\nRewriteRule . /index.php [L]\n</IfModule>\n\
         # END WordPress\nOptions -Indexes\n\
         <IfModule mod_expires.c>\nExpiresActive On\nExpiresByType image/png \"access plus 1 month\"\n</IfModule>\n\
         <IfModule mod_headers.c>\nHeader set X-Frame-Options \"SAMEORIGIN\"\n</IfModule>\n\
         <Files wp-config.php>\nRequire all denied\n</Files>\n\
         ErrorDocument 404 /index.php\nDirectoryIndex index.php index.html\n\
         AddType image/webp .webp\n",
    );
    alice.put("wp-config.php", "<?php // secrets");
    let web = RealWeb::start(&node);
    let got = web.get(
        ALICE,
        "/2026/12/hello-world/",
        &["Authorization: Bearer t0k"],
    );
    assert_eq!(got.status, 200, "{got:?}");
    assert!(
        got.body.contains(&format!(
            "wp uid={} uri=/2026/12/hello-world/ auth=Bearer t0k",
            alice.uid
        )),
        "{got:?}"
    );
    assert!(got.head.contains("X-Frame-Options: SAMEORIGIN"), "{got:?}");
    let logo = web.get(ALICE, "/logo.png", &[]);
    assert_eq!(logo.status, 200);
    assert!(logo.head.contains("Expires:"), "{logo:?}");
    assert_eq!(web.get(ALICE, "/wp-config.php", &[]).status, 403);
}

#[test]
fn htaccess_options_change_only_the_listed_options() {
    let (node, alice, _bob) = two_tenants();
    alice.put("dir/a.txt", "a");
    let web = RealWeb::start(&node);
    for options in [
        "Options -Indexes",
        "Options +Indexes",
        "Options -MultiViews",
        "Options +MultiViews +SymLinksIfOwnerMatch",
        "Options Indexes MultiViews SymLinksIfOwnerMatch",
        "Options None",
    ] {
        alice.htaccess(&format!("{options}\n"));
        let got = web.get(ALICE, "/whoami.php", &[]);
        assert_eq!(got.status, 200, "{options}: {got:?}");
    }
    // A listing where the tenant asked for one: the option took effect.
    alice.htaccess("Options +Indexes\n");
    let listing = web.get(ALICE, "/dir/", &[]);
    assert_eq!(listing.status, 200, "{listing:?}");
    assert!(listing.body.contains("a.txt"), "{listing:?}");
    for options in [
        "Options +FollowSymLinks",
        "Options +ExecCGI",
        "Options +Includes",
        "Options +IncludesNOEXEC",
        "Options All",
        "Options +RunScripts",
        "Options Indexes FollowSymLinks",
    ] {
        alice.htaccess(&format!("{options}\n"));
        let before = web.error_log().len();
        let got = web.get(ALICE, "/whoami.php", &[]);
        let log = web.error_log()[before..].to_owned();
        assert_eq!(got.status, 500, "{options}: {got:?}");
        assert!(log.contains("not allowed here"), "{options}: {log}");
    }
}

/// Arguments that parse for most directives; the check is only whether Apache refuses the
/// directive itself ("not allowed here"), which it decides before reading them.
fn probe_line(directive: &str) -> String {
    match directive.strip_prefix('<') {
        Some(section) => format!("<{section} x>\n</{section}>\n"),
        None => format!("{directive} x\n"),
    }
}

#[test]
fn every_htaccess_directive_apache_lists_is_allowed_or_refused() {
    let (node, alice, _bob) = two_tenants();
    let web = RealWeb::start(&node);
    // Apache runs with every module an installed node loads, `mod_ssl` among them: a
    // directive a module adds to `.htaccess` is classified only if the module is loaded.
    #[allow(clippy::disallowed_methods)] // Apache's own list of loaded modules.
    let out = Command::new("/usr/sbin/apache2")
        .arg("-f")
        .arg(web.conf())
        .arg("-M")
        .output()
        .unwrap();
    let loaded = String::from_utf8_lossy(&out.stdout);
    for module in common::real_web::node_modules() {
        assert!(
            loaded.contains(&format!(" {module}_module ")),
            "{module} is not loaded: {loaded}"
        );
    }
    #[allow(clippy::disallowed_methods)] // Apache's own list of directives and contexts.
    let out = Command::new("/usr/sbin/apache2")
        .arg("-f")
        .arg(web.conf())
        .arg("-L")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    // `Directive (module.c)`, a description, then "Allowed in ... .htaccess".
    let mut in_htaccess = Vec::new();
    let mut current: Option<String> = None;
    for line in listing.lines() {
        if !line.starts_with(char::is_whitespace) {
            current = line.split_whitespace().next().map(str::to_owned);
        } else if line.contains(".htaccess")
            && let Some(name) = current.take()
        {
            in_htaccess.push(name);
        }
    }
    assert!(
        in_htaccess.len() > 100,
        "apache2 -L listed {} directives for .htaccess",
        in_htaccess.len()
    );
    // Apache matches directive names without regard to case (`Order` is listed `order`).
    let allowed = |d: &str| {
        ops::web_isolation::HTACCESS_DIRECTIVES
            .iter()
            .any(|l| l.eq_ignore_ascii_case(d))
    };
    // Every directive is tried; the failures are reported together.
    let mut accepted_off_the_list = Vec::new();
    let mut refused_on_the_list = Vec::new();
    let mut refused = 0;
    for directive in &in_htaccess {
        alice.htaccess(&probe_line(directive));
        let before = web.error_log().len();
        let got = web.get(ALICE, "/whoami.php", &[]);
        let log = web.error_log()[before..].to_owned();
        let not_allowed = log.contains("not allowed");
        if allowed(directive) {
            if not_allowed {
                refused_on_the_list.push(format!("{directive}: {log}"));
            }
        } else if got.status == 500 && not_allowed {
            refused += 1;
        } else {
            accepted_off_the_list.push(format!("{directive} (status {}): {log}", got.status));
        }
    }
    assert!(
        accepted_off_the_list.is_empty(),
        "directives off the node's list that a .htaccess may use:\n{}",
        accepted_off_the_list.join("\n")
    );
    assert!(
        refused_on_the_list.is_empty(),
        "directives on the node's list that Apache refused:\n{}",
        refused_on_the_list.join("\n")
    );
    // Every directive of the node's list is one Apache knows in .htaccess.
    for d in ops::web_isolation::HTACCESS_DIRECTIVES {
        assert!(
            in_htaccess.iter().any(|l| l.eq_ignore_ascii_case(d)),
            "{d} is on the list but Apache lists no such .htaccess directive"
        );
    }
    assert!(refused > 50, "only {refused} directives refused");
}
