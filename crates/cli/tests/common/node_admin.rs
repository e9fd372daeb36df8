//! The node administrator scope's part of the harness: the local administrators a sudo
//! allowlist may name, and the check that the installed drop-in is what state.db records.

use super::Node;

/// Local administrators: alice (in `sudo`), bob (primary group `sudo`), eve (not an admin),
/// svc (an admin with a system UID), and a login.defs with the Debian range.
pub fn seed_admins(node: &Node) {
    let append = |path: &str, text: &str| {
        let file = node.path(path);
        let mut content = std::fs::read_to_string(&file).unwrap();
        content.push_str(text);
        std::fs::write(&file, content).unwrap();
    };
    append(
        "/etc/passwd",
        "alice:x:1001:1001::/home/alice:/bin/bash\n\
         bob:x:1002:27::/home/bob:/bin/bash\n\
         eve:x:1003:1003::/home/eve:/bin/bash\n\
         svc:x:999:999::/nonexistent:/usr/sbin/nologin\n",
    );
    append(
        "/etc/group",
        "sudo:x:27:alice,svc\nalice:x:1001:\neve:x:1003:\nsvc:x:999:\n",
    );
    std::fs::write(
        node.path("/etc/login.defs"),
        "# shadow-utils\nUID_MIN\t\t\t 1000\nUID_MAX\t\t\t60000\n",
    )
    .unwrap();
}

/// The sudo drop-in exists exactly when state.db records an allowlist in place, and allows
/// exactly its users.
pub fn check_sudo_converged(node: &Node) {
    let family = <declarations::sudo::SudoAllowlist as registry::Family>::NAME;
    let rows = node.state().all_resources().unwrap();
    let present: Vec<_> = rows
        .iter()
        .filter(|r| r.family == family && r.data["state"] == "present")
        .collect();
    let dropin = node.path(node.provider.sudo_layout().dropin);
    match present.as_slice() {
        [] => assert!(
            !dropin.exists(),
            "a sudo drop-in is installed, but state.db records no allowlist"
        ),
        [list] => {
            let text = std::fs::read_to_string(&dropin)
                .expect("the allowlist state.db records is installed");
            let allowed: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with(['#', '%']) && l.ends_with(" ALL=(ALL:ALL) ALL"))
                .filter_map(|l| l.split(' ').next())
                .collect();
            let recorded: Vec<&str> = list.data["users"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u.as_str().unwrap())
                .collect();
            assert_eq!(allowed, recorded, "the drop-in and state.db disagree");
        }
        more => panic!("a node has one allowlist, state.db records {}", more.len()),
    }
}
