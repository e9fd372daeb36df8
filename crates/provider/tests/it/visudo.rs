//! visudo: the Sim's check and the real `visudo -c -f` agree on the sudoers shapes the node
//! writes and on broken ones, and `install_sudoers` never puts a file that failed the check in
//! place of the previous one.

use provider::{Platform, Program, SUDOERS_MODE};
use testkit::{audit_records, require_visudo};

use crate::common::{Env, mode_of};

const VALID: &str = "\
# Managed by layerone node
Defaults logfile=\"/var/log/layerone/sudo.log\", log_year, loglinelen=0
%sudo ALL=(ALL:ALL) !ALL
alice ALL=(ALL:ALL) ALL
bob-2 ALL=(ALL:ALL) ALL
";

/// Files the real visudo refuses; the Sim must refuse them too.
const BROKEN: &[(&str, &str)] = &[
    ("a stray word", "alice ALL=(ALL:ALL) ALL\nbogus line here\n"),
    ("an unknown Defaults", "Defaults nosuchthing\n"),
    ("a relative logfile", "Defaults logfile=relative/sudo.log\n"),
    ("a non-numeric line length", "Defaults loglinelen=abc\n"),
    ("a quote in a name", "bob\"x ALL=(ALL:ALL) ALL\n"),
    ("a space in a name", "bob x ALL=(ALL:ALL) ALL\n"),
    ("parentheses in a name", "bob(x) ALL=ALL\n"),
    (
        "a carriage return",
        "alice ALL=(ALL:ALL) ALL\rroot ALL=ALL\n",
    ),
    ("an unclosed run-as list", "alice ALL=(ALL:ALL ALL\n"),
    ("no command", "alice ALL=(ALL:ALL)\n"),
];

fn install(env: &Env, content: &str) -> Result<(), provider::ProviderError> {
    let p = &env.provider;
    let layout = p.sudo_layout();
    p.ensure_dir(&p.sysconf(layout.dropin_dir), 0o750).unwrap();
    p.install_sudoers(&p.sysconf(layout.dropin), content.as_bytes())
}

fn agree(env: &Env) {
    let dropin = env.provider.sysconf(env.provider.sudo_layout().dropin);
    install(env, VALID).expect("visudo accepts the node's drop-in shape");
    assert_eq!(std::fs::read_to_string(&dropin).unwrap(), VALID);
    assert_eq!(mode_of(&dropin), SUDOERS_MODE);
    for (what, text) in BROKEN {
        let err = install(env, text).expect_err(what);
        assert_eq!(err.code(), "program_failed", "{what}");
        assert!(
            err.to_string().contains(":1:") || err.to_string().contains(":2:"),
            "{what}: visudo's message names the line: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(&dropin).unwrap(),
            VALID,
            "{what}: the previous drop-in was not kept"
        );
    }
    let dir = dropin.parent().unwrap();
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["layerone"], "a temporary file was left behind");
}

#[test]
fn sim_visudo_refuses_what_real_visudo_refuses_and_keeps_the_old_file() {
    let env = Env::sim(Platform::Debian);
    agree(&env);
    let records = audit_records(&env.provider).unwrap();
    assert_eq!(records.len(), 1 + BROKEN.len());
    assert!(
        records
            .iter()
            .all(|r| r.program == "visudo" && r.backend == "sim")
    );
    assert_eq!(records[0].args[..2], ["-c", "-f"]);
}

#[test]
fn real_visudo_accepts_the_node_shape_and_refuses_a_broken_one_keeping_the_old_file() {
    require_visudo();
    let env = Env::with_real(Platform::Debian, vec![Program::Visudo]);
    agree(&env);
    let records = audit_records(&env.provider).unwrap();
    assert!(
        records
            .iter()
            .all(|r| r.program == "visudo" && r.backend == "real")
    );
}

#[test]
fn sudo_layout_names_the_platform_admin_group() {
    assert_eq!(
        provider::SudoLayout::for_platform(Platform::Debian).admin_group,
        "sudo"
    );
    assert_eq!(
        provider::SudoLayout::for_platform(Platform::CloudLinux).admin_group,
        "wheel"
    );
    for &platform in Platform::ALL {
        assert_eq!(Program::Visudo.path(platform), Some("/usr/sbin/visudo"));
        let layout = provider::SudoLayout::for_platform(platform);
        assert!(
            !layout.dropin.rsplit('/').next().unwrap().contains('.'),
            "sudo skips names with a dot"
        );
        assert!(layout.logfile.starts_with("/var/log/"));
    }
}
