//! Conformance: the Sim's shadow-utils models against the real programs.
//!
//! The real useradd/usermod/userdel/groupadd/groupdel run with `--prefix <sysroot>`, which
//! makes them edit the sysroot's databases and create homes under it, never this machine's
//! `/etc`. The same scenario runs under the Sim in another sysroot, and after every step the
//! files and exit statuses must be identical. This is what keeps the Sim honest: a Sim that
//! drifted from the real programs would let handler tests pass against behaviour production
//! never sees.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use provider::{Expire, Platform, Program, Provider, UserAdd, UserMod};

use crate::common::{Env, is_root, mode_of};

const SHADOW_UTILS: [Program; 5] = [
    Program::Useradd,
    Program::Usermod,
    Program::Userdel,
    Program::Groupadd,
    Program::Groupdel,
];

#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    step: &'static str,
    status: i32,
    passwd: String,
    group: String,
    shadow: String,
    gshadow: String,
    /// (mode, uid, gid) of /home/acme, if it exists.
    home: Option<(u32, u32, u32)>,
}

/// A named step of the scenario, run against one provider.
type Step<'a> = (
    &'static str,
    Box<dyn Fn() -> Result<(), provider::ProviderError> + 'a>,
);

fn status(result: Result<(), provider::ProviderError>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(err) => err
            .exit_status()
            .unwrap_or_else(|| panic!("not an exit status: {err:?}")),
    }
}

fn scenario(env: &Env) -> Vec<Snapshot> {
    let p: &Provider = &env.provider;
    let hash = "$6$saltsalt$0123456789abcdefghijABCDEFGHIJ";
    let acme = UserAdd {
        name: "acme",
        group: "acme",
        home: Path::new("/home/acme"),
        shell: "/bin/bash",
        comment: "layerone-0123456789abcdef0123456789abcdef",
        password_hash: Some(hash),
    };
    let steps: Vec<Step<'_>> = vec![
        ("groupadd acme", Box::new(|| p.groupadd("acme"))),
        ("useradd acme", Box::new(|| p.useradd(&acme))),
        ("useradd acme again", Box::new(|| p.useradd(&acme))),
        (
            "useradd into missing group",
            Box::new(|| {
                p.useradd(&UserAdd {
                    name: "bee",
                    group: "nosuchgroup",
                    home: Path::new("/home/bee"),
                    ..acme
                })
            }),
        ),
        (
            "useradd with a colon in the comment",
            Box::new(|| {
                p.useradd(&UserAdd {
                    name: "cee",
                    comment: "layerone:0123",
                    home: Path::new("/home/cee"),
                    ..acme
                })
            }),
        ),
        (
            "suspend",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "acme",
                    lock: Some(true),
                    expire: Some(Expire::Expired),
                    ..UserMod::default()
                })
            }),
        ),
        (
            "lock again",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "acme",
                    lock: Some(true),
                    ..UserMod::default()
                })
            }),
        ),
        (
            "unsuspend and change shell",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "acme",
                    lock: Some(false),
                    expire: Some(Expire::Never),
                    shell: Some("/usr/sbin/nologin"),
                    ..UserMod::default()
                })
            }),
        ),
        (
            "new password, locked",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "acme",
                    lock: Some(true),
                    password_hash: Some("$6$other$hash"),
                    ..UserMod::default()
                })
            }),
        ),
        (
            "usermod unknown user",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "ghost",
                    lock: Some(true),
                    ..UserMod::default()
                })
            }),
        ),
        ("groupadd acme again", Box::new(|| p.groupadd("acme"))),
        ("groupdel a primary group", Box::new(|| p.groupdel("acme"))),
        ("groupadd other", Box::new(|| p.groupadd("other"))),
        // The ids the node chooses itself (a tenant's account).
        (
            "groupadd --gid dee",
            Box::new(|| p.groupadd_with_gid("dee", 1500)),
        ),
        (
            "groupadd --gid taken",
            Box::new(|| p.groupadd_with_gid("eff", 1500)),
        ),
        (
            "useradd --uid outside UID_MAX",
            Box::new(|| {
                p.useradd_with_uid(
                    &UserAdd {
                        name: "dee",
                        group: "dee",
                        home: Path::new("/home/dee"),
                        ..acme
                    },
                    2_000_000_007,
                )
            }),
        ),
        (
            "useradd --uid taken",
            Box::new(|| {
                p.useradd_with_uid(
                    &UserAdd {
                        name: "eff",
                        group: "dee",
                        home: Path::new("/home/eff"),
                        ..acme
                    },
                    2_000_000_007,
                )
            }),
        ),
        (
            "usermod --gid nogroup",
            Box::new(|| {
                p.usermod(&UserMod {
                    name: "dee",
                    gid: Some(65534),
                    ..UserMod::default()
                })
            }),
        ),
        (
            "userdel of a user whose group is no longer its primary",
            Box::new(|| p.userdel("dee", true)),
        ),
        ("groupdel dee", Box::new(|| p.groupdel("dee"))),
        (
            "userdel acme --remove",
            Box::new(|| p.userdel("acme", true)),
        ),
        ("userdel acme again", Box::new(|| p.userdel("acme", true))),
        ("groupdel other", Box::new(|| p.groupdel("other"))),
        (
            "groupdel the removed private group",
            Box::new(|| p.groupdel("acme")),
        ),
    ];
    steps
        .into_iter()
        .map(|(step, run)| {
            let status = status(run());
            let home = p.sysconf("/home/acme");
            Snapshot {
                step,
                status,
                passwd: env.read("/etc/passwd"),
                group: env.read("/etc/group"),
                shadow: env.read("/etc/shadow"),
                gshadow: env.read("/etc/gshadow"),
                home: std::fs::symlink_metadata(&home)
                    .ok()
                    .map(|m| (mode_of(&home), m.uid(), m.gid())),
            }
        })
        .collect()
}

#[test]
fn sim_matches_real_shadow_utils_under_prefix() {
    assert!(
        is_root(),
        "this test runs the real shadow-utils (with --prefix into a temp dir) and needs root, as CI has"
    );
    for program in SHADOW_UTILS {
        let path = program.path(Platform::Debian).unwrap();
        assert!(
            Path::new(path).exists(),
            "{path} is missing: install the passwd package"
        );
    }
    let real = Env::with_real(Platform::Debian, SHADOW_UTILS.to_vec());
    let sim = Env::sim(Platform::Debian);
    // The real tools read their defaults from <prefix>/etc/login.defs; give them the
    // distribution's, which is what the Sim models.
    for env in [&real, &sim] {
        std::fs::copy("/etc/login.defs", env.provider.sysconf("/etc/login.defs"))
            .expect("copy /etc/login.defs");
    }

    let expected = scenario(&real);
    let actual = scenario(&sim);
    for (real_step, sim_step) in expected.iter().zip(&actual) {
        assert_eq!(
            sim_step, real_step,
            "Sim and real shadow-utils differ after this step"
        );
    }
    // The real run really ran: every shadow-utils record in its audit says "real".
    let records = testkit::audit_records(&real.provider).unwrap();
    assert!(!records.is_empty());
    assert!(records.iter().all(|r| r.backend == "real"), "{records:?}");
    // And the scenario exercised both outcomes.
    assert!(expected.iter().any(|s| s.status == 0));
    assert!(expected.iter().any(|s| s.status != 0));
}
