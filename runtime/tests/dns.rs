//! DNS names for ids and peers, without internet: every node runs in a private mount namespace
//! (`unshare -m`) whose `/etc/hosts` is a file this test writes (and `/etc/nsswitch.conf` says
//! `hosts: files`, so nothing is asked of a real DNS server). Covers a name that fails first and
//! resolves later, and a name whose address changes (a node restarted on another IP).
//! Needs root (mount namespaces); skipped with a message otherwise.

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(20);

struct Hosts {
    path: std::path::PathBuf,
    nss: std::path::PathBuf,
}

impl Hosts {
    /// Rewrites the file in place (same inode: the bind mounts see the new contents).
    fn set(&self, entries: &[(&str, &str)]) {
        let text: String = entries.iter().map(|(ip, name)| format!("{ip} {name}\n")).collect();
        std::fs::write(&self.path, text).unwrap();
    }

    /// `tenure run ...` inside a mount namespace that sees this hosts file.
    fn run(&self, id: &str, peers: &[String], bind: &str) -> Command {
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "--propagation", "private", "sh", "-c"]);
        cmd.arg(r#"mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/nsswitch.conf && shift 2 && exec "$@""#);
        cmd.arg("sh").arg(&self.path).arg(&self.nss).arg(BIN);
        cmd.args(["run", "--id", id, "--cluster", "dns-test", "--bind", bind]);
        for p in peers {
            cmd.args(["--peer", p]);
        }
        cmd
    }
}

fn namespaces_work() -> bool {
    Command::new("unshare").args(["-m", "--propagation", "private", "true"]).status().is_ok_and(|s| s.success())
}

#[test]
fn names_that_resolve_late_and_names_that_move_are_found() {
    if !namespaces_work() {
        eprintln!("skipped: cannot create a mount namespace here (needs root and unshare)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hosts = Hosts { path: dir.path().join("hosts"), nss: dir.path().join("nsswitch.conf") };
    std::fs::write(&hosts.nss, "hosts: files\n").unwrap();
    hosts.set(&[("127.0.0.1", "node-a.test"), ("127.0.0.2", "node-b.test")]);
    let ports = free_ports(3);
    let ids: Vec<String> =
        ["node-a.test", "node-b.test", "node-c.test"].iter().zip(&ports).map(|(n, p)| format!("{n}:{p}")).collect();
    let mut lines = Lines::default();
    let a = start_cmd(&ids[0], hosts.run(&ids[0], &ids, "127.0.0.1"), &lines);
    let mut b = start_cmd(&ids[1], hosts.run(&ids[1], &ids, "127.0.0.2"), &lines);

    // node-c.test does not resolve yet: a and b still elect (three declared, quorum two) and say
    // why they cannot reach it.
    let first = lines.wait(LIMIT, is("leader"));
    lines.wait(LIMIT, |v| {
        v["event"] == "warning"
            && v["code"] == "unresolved_name"
            && v["message"].as_str().is_some_and(|m| m.contains("node-c.test"))
    });

    // Now it resolves, and node c starts: it learns the leader (whose heartbeats reach it).
    hosts.set(&[("127.0.0.1", "node-a.test"), ("127.0.0.2", "node-b.test"), ("127.0.0.4", "node-c.test")]);
    let c = start_cmd(&ids[2], hosts.run(&ids[2], &ids, "127.0.0.4"), &lines);
    lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == ids[2].as_str() && !v["leader"].is_null());

    // node b restarts on another address under the same name: the others find it again.
    b.child.kill().unwrap();
    b.child.wait().unwrap();
    hosts.set(&[("127.0.0.1", "node-a.test"), ("127.0.0.3", "node-b.test"), ("127.0.0.4", "node-c.test")]);
    let _b = start_cmd(&ids[1], hosts.run(&ids[1], &ids, "127.0.0.3"), &lines);
    lines.wait_new(LIMIT, |v| v["event"] == "started" && v["id"] == ids[1].as_str());
    lines.wait_new(LIMIT, |v| {
        v["id"] == ids[1].as_str() && (v["event"] == "leader" || (v["event"] == "follower" && !v["leader"].is_null()))
    });
    lines.assert_one_leader_per_term();
    let _ = (first, a, c);
}
