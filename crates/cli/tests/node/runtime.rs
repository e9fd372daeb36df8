//! `observe_runtime` end to end through the real runner binary: the services as systemd and
//! dpkg show them (the Sim's systemd answering from the sandbox), load and memory from the
//! sysroot's `/proc` files, disk from statvfs; every field typed.

use crate::common;

use common::*;
use registry::JobState;
use serde_json::{Value, json};

fn observe(node: &mut Node, req: u64) -> Value {
    let node_id = node.node_id.to_string();
    node.submit(
        &json!({"request_id": id(req), "action": "observe_runtime", "node_id": node_id,
                        "resource": {"id": id(0xd4)}}),
    );
    node.pass();
    let job = node.state().job(&id(req)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    let result = job.result.unwrap();
    let schema = declarations::registry()
        .operation("observe_runtime")
        .unwrap()
        .validate_result(&result);
    assert!(schema.is_ok(), "{schema:?}");
    result
}

fn write(node: &Node, path: &str, text: &str) {
    let p = node.path(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn observe_runtime_reports_services_load_memory_and_disk() {
    let mut node = Node::new();
    write(&node, "/proc/loadavg", "0.52 1.25 2.00 3/456 7890\n");
    write(
        &node,
        "/proc/meminfo",
        "MemTotal:        4000000 kB\nMemFree:  100 kB\nMemAvailable:    3000000 kB\nSwapTotal:       1000 kB\nSwapFree:        500 kB\n",
    );
    write(
        &node,
        "/var/lib/dpkg/status",
        "Package: apache2\nStatus: install ok installed\nVersion: 2.4.62-1~deb12u2\n\n\
         Package: php8.2-fpm\nStatus: install ok installed\nVersion: 8.2.29-1\n\n\
         Package: postfix\nStatus: deinstall ok config-files\nVersion: 3.7.11-0\n",
    );
    std::fs::create_dir_all(node.path("/etc/php/8.2/fpm")).unwrap();
    std::fs::create_dir_all(node.path("/etc/php/8.2x/fpm")).unwrap(); // not a version
    std::fs::create_dir_all(node.path("/etc/php/7.4/cli")).unwrap(); // no FPM
    write(
        &node,
        &format!("{}/apache2.service", simulator::SIM_UNITS_DIR),
        "active\n",
    );
    write(
        &node,
        &format!("{}/php8.2-fpm.service", simulator::SIM_UNITS_DIR),
        "failed\n",
    );
    write(
        &node,
        &format!("{}/mariadb.service", simulator::SIM_UNITS_DIR),
        "inactive\n",
    );
    std::fs::create_dir_all(node.path("/home")).unwrap();

    let r = observe(&mut node, 1);
    assert_eq!(r["platform"], "debian");
    assert_eq!(
        r["load"],
        json!({"one": 0.52, "five": 1.25, "fifteen": 2.0})
    );
    assert_eq!(r["memory"]["total_bytes"], 4_096_000_000u64);
    assert_eq!(r["memory"]["available_bytes"], 3_072_000_000u64);
    assert_eq!(r["memory"]["swap_free_bytes"], 512_000);
    let services: Vec<(String, Value, String, bool, Value)> = r["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["unit"].as_str().unwrap().to_owned(),
                s["php_version"].clone(),
                s["state"].as_str().unwrap().to_owned(),
                s["installed"].as_bool().unwrap(),
                s["version"].clone(),
            )
        })
        .collect();
    assert_eq!(
        services,
        vec![
            (
                "apache2.service".into(),
                Value::Null,
                "active".into(),
                true,
                json!("2.4.62-1~deb12u2")
            ),
            (
                "php8.2-fpm.service".into(),
                json!("8.2"),
                "failed".into(),
                true,
                json!("8.2.29-1")
            ),
            (
                "mariadb.service".into(),
                Value::Null,
                "inactive".into(),
                true,
                Value::Null
            ),
            (
                "postfix.service".into(),
                Value::Null,
                "not_found".into(),
                false,
                Value::Null
            ),
            (
                "dovecot.service".into(),
                Value::Null,
                "not_found".into(),
                false,
                Value::Null
            ),
        ]
    );
    let disks: Vec<&str> = r["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert!(d["total_bytes"].as_u64().unwrap() > 0);
            d["path"].as_str().unwrap()
        })
        .collect();
    assert_eq!(disks, ["/", "/home"]);
    // The systemctl argv production runs: a fixed unit after `--`.
    let shows: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "systemctl")
        .map(|r| r.args)
        .collect();
    assert_eq!(
        shows[0],
        [
            "show",
            "--property=LoadState,ActiveState",
            "--",
            "apache2.service"
        ]
    );

    // A broken /proc file fails the observation with a typed error, nothing else.
    write(&node, "/proc/loadavg", "garbage\n");
    let node_id = node.node_id.to_string();
    node.submit(
        &json!({"request_id": id(2), "action": "observe_runtime", "node_id": node_id,
                        "resource": {"id": id(0xd4)}}),
    );
    node.pass();
    let job = node.state().job(&id(2)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "io_error");
}

#[test]
fn observe_runtime_on_cloudlinux_names_its_units() {
    let mut node = Node::cloudlinux();
    write(&node, "/proc/loadavg", "0.00 0.01 0.05 1/100 42\n");
    write(
        &node,
        "/proc/meminfo",
        "MemTotal: 1024 kB\nMemAvailable: 512 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    );
    write(&node, "/opt/alt/php82/etc/php-fpm.conf", "[global]\n");
    write(
        &node,
        &format!("{}/httpd.service", simulator::SIM_UNITS_DIR),
        "active\n",
    );
    let r = observe(&mut node, 1);
    let units: Vec<&str> = r["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["unit"].as_str().unwrap())
        .collect();
    assert_eq!(
        units,
        [
            "httpd.service",
            "alt-php82-fpm.service",
            "mariadb.service",
            "postfix.service",
            "dovecot.service"
        ]
    );
    assert!(
        r["services"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["version"].is_null())
    );
    assert_eq!(r["services"][0]["state"], "active");
}
