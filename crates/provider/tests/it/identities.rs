//! What the provider reads from a sysroot's account databases: a tenant's identity (uid,
//! gid, the groups whose member lists name it, home) and where a name is already used.

use std::path::PathBuf;

use provider::Platform;
use testkit::{seed_accounts, sim_provider};

#[test]
fn tenant_identity_comes_from_passwd_and_the_group_member_lists() {
    let dir = tempfile::tempdir().unwrap();
    let provider = sim_provider(Platform::Debian, dir.path(), vec![]);
    seed_accounts(&provider).unwrap();
    let etc = provider.sysconf("/etc");
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\nacme:x:1001:1001::/home/acme:/bin/bash\n",
    )
    .unwrap();
    std::fs::write(
        etc.join("group"),
        "root:x:0:\nacme:x:1001:\nwww-data:x:33:acme,other\nsftp:x:900:other\nbackup:x:34:acme\n",
    )
    .unwrap();
    let who = provider.tenant_identity("acme").unwrap().unwrap();
    assert_eq!((who.uid, who.gid), (1001, 1001));
    assert_eq!(who.groups, vec![33, 34]);
    assert_eq!(who.home, PathBuf::from("/home/acme"));
    assert_eq!(provider.tenant_identity("nobody-here").unwrap(), None);
    // root is never a tenant.
    assert_eq!(
        provider.tenant_identity("root").unwrap_err().code(),
        "tenant_identity_invalid"
    );
}

#[test]
fn a_name_is_found_as_an_entry_a_member_or_a_gshadow_administrator() {
    let dir = tempfile::tempdir().unwrap();
    let provider = sim_provider(Platform::Debian, dir.path(), vec![]);
    seed_accounts(&provider).unwrap();
    let etc = provider.sysconf("/etc");
    std::fs::write(etc.join("shadow"), "root:*:1::::::\nstale:!:1::::::\n").unwrap();
    std::fs::write(
        etc.join("group"),
        "root:x:0:\nsudo:x:27:erin,fay\nbroken:x\n",
    )
    .unwrap();
    std::fs::write(etc.join("gshadow"), "sudo:*:dave:erin\n").unwrap();
    let place = |n: &str| provider.system_name_use(n).unwrap();
    assert_eq!(place("root").as_deref(), Some("an entry in /etc/passwd"));
    assert_eq!(place("stale").as_deref(), Some("an entry in /etc/shadow"));
    assert_eq!(
        place("fay").as_deref(),
        Some("a member of a group in /etc/group")
    );
    assert_eq!(place("broken").as_deref(), Some("an entry in /etc/group"));
    assert_eq!(
        place("dave").as_deref(),
        Some("an administrator of a group in /etc/gshadow")
    );
    assert_eq!(place("shop1"), None);
    assert_eq!(place(""), None);
    let ids = provider.system_ids().unwrap();
    assert!(ids.uids.contains(&65534) && ids.gids.contains(&27));
}
