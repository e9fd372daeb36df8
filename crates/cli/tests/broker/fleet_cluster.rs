//! A fleet on a three-server broker cluster (real nats-servers on loopback ports, streams and
//! buckets replicated three times), each server with its own administrative directory and its
//! own fleet service (the second and third made `--from` the first). One server killed: the
//! node and the control plane go on through the others, nothing lost.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::fleet_support;

use fleet_support::{
    Broker, DevNode, Process, command, ensure_account, free_port, hex32, layerone, layerone_output,
    wait_until,
};

struct Server {
    dir: PathBuf,
    broker: Broker,
    service: Process,
}

fn start_service(dir: &Path, log: &Path) -> Process {
    let child = command(fleet_support::LAYERONE)
        .args(["fleet", "serve", "--dir", dir.to_str().unwrap()])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Process(Some(child))
}

#[test]
fn a_three_server_cluster_loses_a_server_and_the_fleet_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let clients: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let routes: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let urls: Vec<String> = clients
        .iter()
        .map(|p| format!("tls://127.0.0.1:{p}"))
        .collect();
    let dirs: Vec<PathBuf> = (0..3)
        .map(|i| tmp.path().join(format!("admin{i}")))
        .collect();
    for i in 0..3 {
        let mut args: Vec<String> = vec![
            "fleet".into(),
            "init".into(),
            "--files-only".into(),
            "--dir".into(),
            dirs[i].to_str().unwrap().into(),
            "--listen".into(),
            format!("127.0.0.1:{}", clients[i]),
            "--broker-name".into(),
            format!("s{i}"),
            "--replicas".into(),
            "3".into(),
            "--cluster-name".into(),
            "fleet".into(),
            "--cluster-listen".into(),
            format!("127.0.0.1:{}", routes[i]),
        ];
        for url in &urls {
            args.extend(["--broker".into(), url.clone()]);
        }
        for (j, port) in routes.iter().enumerate() {
            if j != i {
                args.extend(["--route".into(), format!("nats-route://127.0.0.1:{port}")]);
            }
        }
        if i > 0 {
            args.extend(["--from".into(), dirs[0].to_str().unwrap().into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        layerone(&args);
    }
    let mut servers: Vec<Server> = (0..3)
        .map(|i| Server {
            broker: Broker::start(&dirs[i].join("broker.conf"), clients[i]),
            dir: dirs[i].clone(),
            service: Process(None),
        })
        .collect();
    // The cluster elects its JetStream leader, then init creates the replicated streams.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut args = vec!["fleet", "init", "--no-units", "--wait", "5", "--dir"];
        args.push(dirs[0].to_str().unwrap());
        let listen = format!("127.0.0.1:{}", clients[0]);
        args.extend(["--listen", &listen]);
        for url in &urls {
            args.extend(["--broker", url]);
        }
        let out = layerone_output(&args);
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cluster never took the streams: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    for (i, server) in servers.iter_mut().enumerate() {
        server.service = start_service(&server.dir, &tmp.path().join(format!("service{i}.log")));
    }
    let creds = dirs[0].join("control-plane.json");
    let creds = creds.to_str().unwrap();
    let node = DevNode::start(tmp.path(), "n1");
    let token = layerone(&["fleet", "token", "n1", "--creds", creds]);
    layerone(&["join", token.trim(), "--dev", node.root.to_str().unwrap()]);
    wait_until("n1 up", Duration::from_secs(60), || {
        let nodes: serde_json::Value =
            serde_json::from_str(&layerone(&["fleet", "nodes", "--json", "--creds", creds]))
                .unwrap();
        nodes[0]["state"] == "up"
    });

    // Submitted again (the same body: one job) while the cluster elects new leaders for
    // what the lost server led, which takes a few seconds.
    let submit = |i: u64| {
        let request = ensure_account(&hex32(500 + i), &hex32(600 + i), &format!("c{i}"));
        let args = [
            "fleet",
            "submit",
            "n1",
            &request.to_string(),
            "--wait",
            "--timeout",
            "20",
            "--creds",
            creds,
        ];
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = loop {
            let out = layerone_output(&args);
            if out.status.success() {
                break String::from_utf8(out.stdout).unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "request {i}: {}\nthe node's log ends:\n{}",
                String::from_utf8_lossy(&out.stderr),
                node.log()
                    .lines()
                    .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("fleet"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::thread::sleep(Duration::from_millis(500));
        };
        let event: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(event["job"]["state"], "succeeded", "{event}");
    };
    for i in 0..10 {
        submit(i);
    }
    // Each server's fleet service rendered the node into its own broker's configuration.
    for dir in &dirs {
        let conf = std::fs::read_to_string(dir.join("broker.conf")).unwrap();
        assert!(
            conf.contains("fleet.req.n1") || conf.contains("FLEET_REQ.n1"),
            "{conf}"
        );
    }
    servers[0].broker.kill();
    servers[0].service.kill();
    for i in 10..20 {
        submit(i);
    }
    let events = layerone(&["fleet", "events", "--creds", creds]);
    let events: Vec<serde_json::Value> = events
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: BTreeSet<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), events.len(), "each event stored once");
    let succeeded: BTreeSet<&str> = events
        .iter()
        .filter(|e| e["kind"] == "job" && e["state"] == "succeeded")
        .map(|e| e["request_id"].as_str().unwrap())
        .collect();
    for i in 0..20 {
        assert!(
            succeeded.contains(hex32(500 + i).as_str()),
            "request {i} succeeded"
        );
    }
}
