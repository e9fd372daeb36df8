//! `pure-pw mkdb` and `pure-pw show`: the real program (installed by scripts/test) and the
//! Sim's model read the same passwd file the same way, the per-user limits included.

use provider::{Platform, Program};

use crate::common::Env;

const HASH: &str = "$6$saltsalt$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn require_pure_pw() {
    assert!(
        std::path::Path::new("/usr/bin/pure-pw").exists(),
        "pure-pw is missing: install pure-ftpd (scripts/test does)"
    );
}

fn check(env: &Env) {
    let layout = env.provider.ftp_layout();
    let passwd = env.provider.sysconf(layout.passwd);
    let pdb = env.provider.sysconf(layout.pdb);
    env.provider
        .ensure_dir(passwd.parent().unwrap(), 0o755)
        .unwrap();
    // The second login carries per-user limits as the node writes them: upload and download
    // bandwidth in bytes per second (2,048 KiB/s), 10 concurrent sessions.
    let text = format!(
        "shop1.up:{HASH}:1001:1002::/home/shop1/web/./::::::::::::\n\
         shop1.lim:{HASH}:1001:1002::/home/shop1/web/./:2097152:2097152:::10:::::::\n\
         broken:line\n"
    );
    env.provider
        .write_config_atomic(&passwd, text.as_bytes(), 0o600)
        .unwrap();
    env.provider.pure_pw_mkdb(&passwd, &pdb).unwrap();
    assert!(pdb.is_file());
    let shown = env
        .provider
        .pure_pw_show("shop1.up", &passwd)
        .unwrap()
        .unwrap();
    assert_eq!((shown.uid, shown.gid), (1001, 1002));
    assert_eq!(shown.directory, "/home/shop1/web/./");
    assert_eq!(shown.login, "shop1.up");
    assert_eq!(shown.password, HASH);
    assert_eq!(
        (
            shown.download_kib_per_sec,
            shown.upload_kib_per_sec,
            shown.max_sessions
        ),
        (None, None, None),
        "no limits: unlimited"
    );
    let limited = env
        .provider
        .pure_pw_show("shop1.lim", &passwd)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            limited.download_kib_per_sec,
            limited.upload_kib_per_sec,
            limited.max_sessions
        ),
        (Some(2048), Some(2048), Some(10))
    );
    assert_eq!(env.provider.pure_pw_show("broken", &passwd).unwrap(), None);
    assert_eq!(env.provider.pure_pw_show("nobody", &passwd).unwrap(), None);
}

#[test]
fn real_pure_pw_builds_the_puredb_and_shows_the_user() {
    require_pure_pw();
    check(&Env::with_real(Platform::Debian, vec![Program::PurePw]));
}

#[test]
fn sim_pure_pw_reads_the_file_like_the_real_one() {
    check(&Env::sim(Platform::Debian));
}
