//! Drift detection end to end through the real runner binary: what state.db records and the
//! OS no longer shows becomes one `drift` event on the events feed, not a repair; a drift is
//! reported once however many checks see it, and once more when it is gone.

mod common;

use common::*;
use registry::{DriftAspect, Event, EventKind};

/// Makes the next pass run the drift check (it runs at most every 10 minutes, tracked by the
/// mtime of this marker).
fn check_due(node: &Node) {
    let _ = std::fs::remove_file(node.layout.state_dir().join("observed"));
}

fn drift_events(node: &Node, after: i64) -> Vec<Event> {
    node.state()
        .events(after, 10_000)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind != EventKind::Job)
        .collect()
}

fn last_cursor(node: &Node) -> i64 {
    node.state()
        .events(0, 100_000)
        .unwrap()
        .last()
        .map_or(0, |e| e.cursor)
}

#[test]
fn drift_becomes_one_event_per_finding_and_is_resolved_by_rebuild() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_key(3, 20, 10));
    node.submit(&ensure_domain(4, 30, 10, "shop.example.com"));
    node.submit(&ensure_domain(5, 31, 10, "blog.example.com"));
    node.submit(&ensure_ftp(11, 50, 10, "shop1.up", None));
    node.pass();
    check_due(&node);
    node.pass();
    assert!(
        drift_events(&node, 0).is_empty(),
        "a converged node drifted"
    );

    let vhosts = node.path(node.provider.apache_layout().vhosts_dir);
    let vhost_30 = vhosts.join(format!("{}.conf", id(30)));
    let vhost_31 = vhosts.join(format!("{}.conf", id(31)));
    let keys = node.path("/home/shop1/.ssh/authorized_keys");
    let edited_vhost = std::fs::read_to_string(&vhost_31).unwrap() + "Redirect / http://evil/\n";
    std::fs::remove_file(&vhost_30).unwrap();
    std::fs::write(&vhost_31, &edited_vhost).unwrap();
    std::fs::write(&keys, "ssh-ed25519 AAAA intruder\n").unwrap();
    std::fs::write(node.path(provider::FTP_LAYOUT.passwd), "").unwrap();
    // shop2's user removed behind the node's back (its passwd and shadow lines; a passwd line
    // alone gone would leave useradd refusing the name, and the rebuild failing, as for real).
    for file in ["/etc/passwd", "/etc/shadow"] {
        let text = std::fs::read_to_string(node.path(file)).unwrap();
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with("shop2:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(node.path(file), without).unwrap();
    }

    let before = last_cursor(&node);
    check_due(&node);
    node.pass();
    let found = drift_events(&node, before);
    let mut seen: Vec<(String, String, DriftAspect)> = found
        .iter()
        .map(|e| {
            assert_eq!(e.kind, EventKind::Drift);
            assert!(e.request_id.is_none() && e.state.is_none());
            let d = e.drift.as_ref().unwrap();
            (d.family.clone(), d.resource_id.clone(), d.aspect)
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("account".into(), id(11), DriftAspect::UserMissing),
            ("ftp_account".into(), id(50), DriftAspect::FtpLoginMissing),
            ("ssh_key".into(), id(10), DriftAspect::AuthorizedKeysDiffers),
            ("web_domain".into(), id(30), DriftAspect::VhostMissing),
            ("web_domain".into(), id(31), DriftAspect::VhostDiffers),
        ]
    );
    // Reported, not repaired.
    assert!(!vhost_30.exists());
    assert_eq!(std::fs::read_to_string(&vhost_31).unwrap(), edited_vhost);

    // Seen again by the next checks: no new event, and nothing committed.
    let cursor = last_cursor(&node);
    for _ in 0..2 {
        check_due(&node);
        node.pass();
    }
    assert_eq!(
        last_cursor(&node),
        cursor,
        "a known drift was reported again"
    );

    // authorized_keys deleted: the differing drift resolves, a missing one appears.
    std::fs::remove_file(&keys).unwrap();
    check_due(&node);
    node.pass();
    let changed = drift_events(&node, cursor);
    let kinds: Vec<(EventKind, DriftAspect)> = changed
        .iter()
        .map(|e| (e.kind, e.drift.as_ref().unwrap().aspect))
        .collect();
    assert!(kinds.contains(&(EventKind::Drift, DriftAspect::AuthorizedKeysMissing)));
    assert!(kinds.contains(&(EventKind::DriftResolved, DriftAspect::AuthorizedKeysDiffers)));
    assert_eq!(kinds.len(), 2, "{kinds:?}");

    // The repair: rebuild_account re-derives shop1's files; the next check resolves them.
    let cursor = last_cursor(&node);
    node.submit(&account_op(6, "rebuild_account", 10));
    check_due(&node);
    node.pass();
    assert_eq!(node.job_state(&id(6)), Some(registry::JobState::Succeeded));
    let mut resolved: Vec<DriftAspect> = drift_events(&node, cursor)
        .iter()
        .map(|e| {
            assert_eq!(e.kind, EventKind::DriftResolved);
            e.drift.as_ref().unwrap().aspect
        })
        .collect();
    resolved.sort();
    assert_eq!(
        resolved,
        [
            DriftAspect::VhostMissing,
            DriftAspect::VhostDiffers,
            DriftAspect::AuthorizedKeysMissing,
            DriftAspect::FtpLoginMissing
        ]
    );
    // shop2's drift lasts until shop2 is rebuilt: its user comes back.
    let cursor = last_cursor(&node);
    node.submit(&account_op(7, "rebuild_account", 11));
    check_due(&node);
    node.pass();
    let job = node.state().job(&id(7)).unwrap().unwrap();
    assert_eq!(job.state, registry::JobState::Succeeded, "{job:?}");
    let last = drift_events(&node, cursor);
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].kind, EventKind::DriftResolved);
    assert_eq!(
        last[0].drift.as_ref().unwrap().aspect,
        DriftAspect::UserMissing
    );
    node.check_converged();
}
