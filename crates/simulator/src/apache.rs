//! Model of `apachectl -t` and `apachectl graceful` on the node's vhosts directory.
//!
//! The model checks what the node's own vhost files can get wrong (unbalanced sections, an
//! unknown directive, a directive without arguments, a control character smuggled into a
//! line) and reports it the way Apache does (`AH00526: Syntax error on line N of FILE:`), so
//! handlers' revert paths are exercised without Apache. The directive set is deliberately
//! the small one the node writes; anything else is "Invalid command", as it would be on a
//! server without the module. Real `apache2ctl -t` runs in the integration tests where it is
//! installed.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use provider::Provider;

use super::{CommandLine, Outcome, unix_ms};

/// Where a simulated graceful reload is recorded, one line each (a system path: map it with
/// `sysconf`).
pub const SIM_RELOADS_FILE: &str = "/var/lib/layerone-sim/apache-reloads";

/// Block directives, compared case-insensitively like Apache does.
const SECTIONS: &[&str] = &[
    "VirtualHost",
    "Directory",
    "DirectoryMatch",
    "Files",
    "FilesMatch",
    "Location",
    "LocationMatch",
    "IfModule",
    "RequireAll",
    "RequireAny",
    "RequireNone",
];

/// Directives the node's vhosts use, all provided by modules the supported platforms load.
const DIRECTIVES: &[&str] = &[
    "ServerName",
    "ServerAlias",
    "ServerAdmin",
    "DocumentRoot",
    "Require",
    "AuthType",
    "AuthName",
    "AuthBasicProvider",
    "AuthUserFile",
    "AuthMerging",
    "Options",
    "AllowOverride",
    "AllowOverrideList",
    "DirectoryIndex",
    "ErrorLog",
    "CustomLog",
    "LogLevel",
    "Redirect",
    "RedirectMatch",
    "ErrorDocument",
    "RedirectPermanent",
    "RewriteEngine",
    "RewriteCond",
    "RewriteRule",
    "RewriteOptions",
    "Header",
    "RequestHeader",
    "Protocols",
    "SetHandler",
    "AddHandler",
    "AddType",
    "Alias",
    "ProxyPass",
    "ProxyPassReverse",
    "ProxyPreserveHost",
    "SSLEngine",
    "SSLProtocol",
    "SSLCertificateFile",
    "SSLCertificateKeyFile",
    "SSLCertificateChainFile",
    // mpm-itk and mod_proxy_fcgi, which every tenant vhost uses.
    "AssignUserID",
    "ProxyFCGISetEnvIf",
];

pub(super) fn apachectl(provider: &Provider, args: &[String]) -> Outcome {
    let line = match CommandLine::parse("apachectl", args, &["-f", "-k"], &["-t"]) {
        Ok(line) => line,
        Err(outcome) => return outcome,
    };
    let graceful = match (line.has("-t"), line.value("-k"), line.operands.as_slice()) {
        (true, None, []) => false,
        (false, Some("graceful"), []) => true,
        (false, None, [verb]) if verb == "graceful" && line.value("-f").is_none() => true,
        _ => {
            return Outcome::fail(
                1,
                "Usage: apachectl start|stop|restart|graceful|graceful-stop|configtest|status|fullstatus|help\n",
            );
        }
    };
    let vhosts = provider.sysconf(provider.apache_layout().vhosts_dir);
    if let Err(error) = check_vhosts(&vhosts) {
        let mut outcome = Outcome::fail(1, error);
        if graceful {
            outcome = outcome
                .warn("Action 'graceful' failed.")
                .warn("The Apache error log may have more information.");
        }
        return outcome;
    }
    if !graceful {
        return Outcome::ok().warn("Syntax OK");
    }
    let file = provider.sysconf(SIM_RELOADS_FILE);
    match record_reload(&file, unix_ms(provider)) {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::fail(
            1,
            format!("layerone sim: record reload in {}: {e}\n", file.display()),
        ),
    }
}

fn record_reload(file: &Path, at_ms: i64) -> std::io::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = OpenOptions::new().create(true).append(true).open(file)?;
    f.write_all(format!("graceful {at_ms}\n").as_bytes())
}

/// Checks every `*.conf` of `dir` in name order (Apache's wildcard include order). A
/// missing directory is an empty configuration, as with `IncludeOptional`.
fn check_vhosts(dir: &Path) -> Result<(), String> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf") && p.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("AH00526: could not read {}: {e}\n", dir.display())),
    };
    files.sort();
    for file in files {
        let bytes = std::fs::read(&file)
            .map_err(|e| format!("AH00526: could not read {}: {e}\n", file.display()))?;
        check_file(&file, &bytes)?;
    }
    Ok(())
}

fn syntax_error(file: &Path, line: usize, message: impl std::fmt::Display) -> String {
    format!(
        "AH00526: Syntax error on line {line} of {}:\n{message}\n",
        file.display()
    )
}

fn canonical(known: &'static [&'static str], word: &str) -> Option<&'static str> {
    known.iter().copied().find(|k| k.eq_ignore_ascii_case(word))
}

pub(super) fn check_file(file: &Path, bytes: &[u8]) -> Result<(), String> {
    // (section name, line it opened on)
    let mut open: Vec<(&'static str, usize)> = Vec::new();
    let mut logical = String::new();
    let mut logical_start = 0;
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if let Some(bad) = raw.iter().find(|&&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(syntax_error(
                file,
                number,
                format!("Line contains the control character 0x{bad:02x}"),
            ));
        }
        let text = String::from_utf8_lossy(raw);
        if logical.is_empty() {
            logical_start = number;
        }
        // A trailing backslash continues the directive on the next line.
        if let Some(head) = text.strip_suffix('\\') {
            logical.push_str(head);
            continue;
        }
        logical.push_str(&text);
        let line = std::mem::take(&mut logical);
        check_line(file, logical_start, line.trim(), &mut open)?;
    }
    if !logical.trim().is_empty() {
        let line = std::mem::take(&mut logical);
        check_line(file, logical_start, line.trim(), &mut open)?;
    }
    if let Some((name, opened)) = open.pop() {
        return Err(syntax_error(
            file,
            opened,
            format!("<{name}> was not closed."),
        ));
    }
    Ok(())
}

fn check_line(
    file: &Path,
    number: usize,
    line: &str,
    open: &mut Vec<(&'static str, usize)>,
) -> Result<(), String> {
    if line.is_empty() || line.starts_with('#') {
        return Ok(());
    }
    if let Some(rest) = line.strip_prefix("</") {
        let Some(name) = rest.strip_suffix('>').map(str::trim) else {
            return Err(syntax_error(
                file,
                number,
                format!("</{rest} directive missing closing '>'"),
            ));
        };
        return match open.pop() {
            Some((expected, _)) if expected.eq_ignore_ascii_case(name) => Ok(()),
            Some((expected, _)) => Err(syntax_error(
                file,
                number,
                format!("Expected </{expected}> but saw </{name}>"),
            )),
            None => Err(syntax_error(
                file,
                number,
                format!("</{name}> without matching <{name}> section"),
            )),
        };
    }
    if let Some(rest) = line.strip_prefix('<') {
        // Split on the first whitespace only: `< VirtualHost` is not a section in Apache.
        let word = rest.split(char::is_whitespace).next().unwrap_or("");
        let word = word.strip_suffix('>').unwrap_or(word);
        let Some(name) = canonical(SECTIONS, word) else {
            return Err(syntax_error(
                file,
                number,
                format!(
                    "Invalid command '<{word}', perhaps misspelled or defined by a module not included in the server configuration"
                ),
            ));
        };
        let Some(inner) = rest.strip_suffix('>') else {
            return Err(syntax_error(
                file,
                number,
                format!("<{name}> directive missing closing '>'"),
            ));
        };
        // The authorization containers are the sections that take no argument.
        let bare = ["RequireAll", "RequireAny", "RequireNone"].contains(&name);
        if !bare && inner[word.len()..].trim().is_empty() {
            return Err(syntax_error(
                file,
                number,
                format!("<{name}> directive requires additional arguments"),
            ));
        }
        open.push((name, number));
        return Ok(());
    }
    let mut words = line.split_whitespace();
    let word = words.next().unwrap_or("");
    let Some(name) = canonical(DIRECTIVES, word) else {
        return Err(syntax_error(
            file,
            number,
            format!(
                "Invalid command '{word}', perhaps misspelled or defined by a module not included in the server configuration"
            ),
        ));
    };
    if words.next().is_none() {
        return Err(syntax_error(
            file,
            number,
            format!("{name} takes at least one argument"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), String> {
        check_file(Path::new("/v/a.conf"), text.as_bytes())
    }

    const GOOD: &str = "\
<VirtualHost *:80>
    ServerName example.com
    ServerAlias www.example.com
    DocumentRoot /home/acme/public_html
    <Directory /home/acme/public_html>
        Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch
        # What a .htaccess may say.
        AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None
        AllowOverrideList <IfModule RewriteEngine RewriteRule Options
        Require all granted
    </Directory>
    <FilesMatch \\.php$>
        SetHandler \"proxy:unix:/run/php/acme.sock|fcgi://localhost\"
    </FilesMatch>
    Header always set X-Content-Type-Options nosniff
</VirtualHost>
";

    #[test]
    fn accepts_a_node_vhost() {
        check(GOOD).unwrap();
    }

    #[test]
    fn reports_unbalanced_sections_with_apache_wording() {
        let err = check("<VirtualHost *:80>\nServerName a\n").unwrap_err();
        assert_eq!(
            err,
            "AH00526: Syntax error on line 1 of /v/a.conf:\n<VirtualHost> was not closed.\n"
        );
        let err = check("<VirtualHost *:80>\n<Directory /x>\n</VirtualHost>\n").unwrap_err();
        assert!(err.starts_with("AH00526: Syntax error on line 3 of /v/a.conf:\nExpected </Directory> but saw </VirtualHost>"), "{err}");
        let err = check("</Directory>\n").unwrap_err();
        assert!(err.contains("without matching"), "{err}");
    }

    #[test]
    fn rejects_unknown_directives_and_control_characters() {
        let err = check("<VirtualHost *:80>\nServerNmae a\n</VirtualHost>\n").unwrap_err();
        assert!(
            err.starts_with(
                "AH00526: Syntax error on line 2 of /v/a.conf:\nInvalid command 'ServerNmae'"
            ),
            "{err}"
        );
        let err = check("<VirtualHost *:80>\nServerName a\0b\n</VirtualHost>\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("control character 0x00"), "{err}");
        let err = check("ServerName\n").unwrap_err();
        assert!(err.contains("takes at least one argument"), "{err}");
    }

    #[test]
    fn continuation_lines_are_one_directive() {
        check("<VirtualHost *:80>\nServerAlias a \\\n  b\n</VirtualHost>\n").unwrap();
    }
}
