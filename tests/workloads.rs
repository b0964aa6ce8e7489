//! The workload modes against real servers: the sandbox sshd (with and without SFTP, with
//! and without rsync in its sessions' PATH) and the binary's `run --mode sftp-put,...`.

mod common;

use sshbench::measure::Transport;
use sshbench::model::{AlgoLists, Mode, Outcome, SampleRequest, Suite, WorkloadSpec};
use sshbench::sandbox::{Sandbox, SandboxOptions};
use sshbench::sys::cancel::Cancel;
use std::path::Path;
use std::time::Duration;

fn spec() -> WorkloadSpec {
    WorkloadSpec {
        file_bytes: 16 << 20,
        tree_files: 120,
        tree_file_bytes: 4096,
        ..WorkloadSpec::default()
    }
}

fn request(mode: Mode) -> SampleRequest {
    SampleRequest {
        suite: Suite {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha2-256".into()),
            ..Suite::default()
        },
        mode,
        bytes: 0,
        ramp: 0,
        timeout: Duration::from_secs(60),
        until: None,
    }
}

/// What the server's sessions left in their temp dir (the sandbox's home).
fn left_on_server(sb: &Sandbox) -> Vec<String> {
    left_in(&sb.dir().join("home"))
}

fn left_in(home: &Path) -> Vec<String> {
    std::fs::read_dir(home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sshbench."))
        .collect()
}

fn start(opts: SandboxOptions) -> Sandbox {
    Sandbox::start(&SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        restrict: AlgoLists::default(),
        ..opts
    })
    .expect("the sandbox sshd starts")
}

#[test]
fn every_workload_mode_and_shape_moves_and_verifies_its_data_and_cleans_up() {
    let sb = start(SandboxOptions::default());
    let mut t = common::transport(&sb).with_workloads(spec());
    let workloads: Vec<Mode> = Mode::ALL
        .into_iter()
        .filter(|m| m.workload().is_some())
        .collect();
    assert_eq!(workloads.len(), 8);
    for mode in workloads {
        let s = t.measure(&request(mode), &Cancel::new());
        assert_eq!(s.outcome, Outcome::Success, "{mode}: {:?}", s.outcome);
        let (bytes, files) = spec().size(mode.workload().unwrap().shape);
        assert_eq!((s.bytes, s.files), (bytes, Some(files)), "{mode}");
        let n = s.negotiated.as_ref().expect("negotiated names reported");
        assert_eq!(n.cipher_cs.as_deref(), Some("aes128-ctr"), "{mode}");
        assert_eq!(n.mac_sc.as_deref(), Some("hmac-sha2-256"), "{mode}");
        let rate = s.throughput().expect("a rate");
        assert!(
            rate > 0.0 && s.window.is_none_or(|w| w.time < s.transfer.unwrap()),
            "{mode}: start-up taken off"
        );
        assert!(
            left_on_server(&sb).is_empty(),
            "{mode} left {:?}",
            left_on_server(&sb)
        );
    }
}

#[test]
fn an_interrupted_workload_leaves_nothing_on_the_server() {
    let sb = start(SandboxOptions::default());
    let mut t = common::transport(&sb).with_workloads(WorkloadSpec {
        tree_files: 3000,
        ..spec()
    });
    let cancel = Cancel::new();
    let later = cancel.clone();
    let home = sb.dir().join("home");
    // Interrupt once the upload is under way: the server's directory exists and has
    // files in it.
    let stopper = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let busy = left_in(&home).iter().any(|d| {
                let tree = home.join(d).join("put").join("tree");
                std::fs::read_dir(tree).is_ok_and(|mut e| e.next().is_some())
            });
            if busy {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        later.cancel(libc::SIGINT);
    });
    let s = t.measure(&request(Mode::SftpPutTree), &cancel);
    stopper.join().unwrap();
    assert_eq!(s.outcome.label(), "cancelled", "{:?}", s.outcome);
    assert!(
        left_on_server(&sb).is_empty(),
        "left {:?}",
        left_on_server(&sb)
    );
}

#[test]
fn a_server_without_sftp_is_not_available_not_a_failure() {
    let sb = start(SandboxOptions {
        no_sftp: true,
        ..SandboxOptions::default()
    });
    let mut t = common::transport(&sb).with_workloads(spec());
    for mode in [Mode::SftpPutFile, Mode::SftpGetTree] {
        let s = t.measure(&request(mode), &Cancel::new());
        assert_eq!(
            s.outcome,
            Outcome::Unavailable {
                message: "the server has no SFTP subsystem".into()
            },
            "{mode}"
        );
        assert!(left_on_server(&sb).is_empty());
    }
    // rsync does not need the subsystem.
    let s = t.measure(&request(Mode::RsyncPutFile), &Cancel::new());
    assert!(s.outcome.is_success(), "{:?}", s.outcome);
}

/// A directory of the tools a server session uses, without rsync.
fn path_without_rsync(dir: &Path) -> String {
    for tool in [
        "sh", "mktemp", "mkdir", "find", "wc", "cat", "rm", "ps", "tr", "getconf", "head",
    ] {
        let real =
            sshbench::sandbox::find_on_path(tool).unwrap_or_else(|| panic!("{tool} installed"));
        std::os::unix::fs::symlink(real, dir.join(tool)).unwrap();
    }
    dir.display().to_string()
}

#[test]
fn a_server_without_rsync_is_not_available_for_rsync_only() {
    let tools = tempfile::tempdir().unwrap();
    let sb = start(SandboxOptions {
        session_path: Some(path_without_rsync(tools.path())),
        ..SandboxOptions::default()
    });
    let mut t = common::transport(&sb).with_workloads(spec());
    for mode in [Mode::RsyncPutTree, Mode::RsyncGetFile] {
        let s = t.measure(&request(mode), &Cancel::new());
        assert_eq!(
            s.outcome,
            Outcome::Unavailable {
                message: "rsync is not installed on this server".into()
            },
            "{mode}"
        );
    }
    assert!(left_on_server(&sb).is_empty());
    let s = t.measure(&request(Mode::SftpPutTree), &Cancel::new());
    assert!(s.outcome.is_success(), "{:?}", s.outcome);
}

#[test]
fn run_measures_workloads_beside_their_raw_stream_and_says_why() {
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("w.db");
    let out = common::sshbench()
        .args([
            "run",
            "--mode",
            "sftp-put-tree,rsync-get-file",
            "--rounds",
            "1",
            "--quiet",
        ])
        .args([
            "--ciphers",
            "aes128-ctr",
            "--macs",
            "hmac-sha2-256",
            "--tree",
            "200x8K",
            "--file-size",
            "4M",
        ])
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "run");
    let show = common::stdout_of(
        &db,
        &[
            "show",
            "--format",
            "json",
            "--top",
            "all",
            "--mode",
            "send,receive,sftp-put,rsync-get",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&show).unwrap();
    let rows = v["suites"].as_array().unwrap();
    let modes: Vec<&str> = rows.iter().map(|r| r["mode"].as_str().unwrap()).collect();
    for want in ["send", "receive", "sftp-put-tree", "rsync-get-file"] {
        assert!(modes.contains(&want), "{want} missing from {modes:?}");
    }
    let tree = rows.iter().find(|r| r["mode"] == "sftp-put-tree").unwrap();
    assert_eq!(tree["files"], 200);
    assert!(tree["workload"]["share"].as_f64().unwrap() > 0.0);
    let sentence = tree["workload"]["sentence"].as_str().unwrap();
    assert!(sentence.starts_with("sftp-put-tree reaches "), "{sentence}");
}
