//! The workload modes against real servers: the sandbox sshd (with and without SFTP, with
//! and without rsync in its sessions' PATH) and the binary's `run --mode sftp-put,...`.

use crate::common;

use sshbench::measure::Transport;
use sshbench::model::{AlgoLists, Mode, Outcome, SampleRequest, Shape, Suite, WorkloadSpec};
use sshbench::sandbox::{Sandbox, SandboxOptions};
use sshbench::sys::cancel::Cancel;
use std::path::Path;
use std::time::{Duration, SystemTime};

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
        together: None,
        reference: None,
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
    assert_eq!(workloads.len(), 12);
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

/// `dir`'s modification time set well in the past, so that a new entry shows.
fn backdate(dir: &Path) -> SystemTime {
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(past)
        .unwrap();
    past
}

fn modified(dir: &Path) -> SystemTime {
    std::fs::metadata(dir).unwrap().modified().unwrap()
}

/// `--remote-dir`: each sample makes its directory where it is told (absolute on a login
/// that runs commands; relative to sftp's start directory on one that allows sftp alone)
/// and leaves that place as it found it.
#[test]
fn workloads_write_in_the_remote_dir_and_leave_it_empty() {
    let sb = start(SandboxOptions::default());
    let there = tempfile::tempdir().unwrap();
    let path = there.path().to_str().unwrap().to_string();
    let mut t = common::transport(&sb).with_workloads(WorkloadSpec {
        remote_dir: Some(path),
        ..spec()
    });
    for mode in [Mode::SftpPutFile, Mode::RsyncGetTree] {
        let past = backdate(there.path());
        let s = t.measure(&request(mode), &Cancel::new());
        assert_eq!(s.outcome, Outcome::Success, "{mode}");
        assert!(modified(there.path()) > past, "{mode}: nothing made there");
        assert!(left_in(there.path()).is_empty(), "{mode}");
        assert!(s.server_cpu.is_some(), "{mode}");
    }
    common::allow_sftp_alone(&sb);
    let incoming = sb.dir().join("home").join("incoming");
    std::fs::create_dir(&incoming).unwrap();
    let mut t = common::transport(&sb).with_workloads(WorkloadSpec {
        remote_dir: Some("incoming".into()),
        ..spec()
    });
    let past = backdate(&incoming);
    let s = t.measure(&request(Mode::SftpGetTree), &Cancel::new());
    assert_eq!(s.outcome, Outcome::Success);
    let (bytes, files) = spec().size(Shape::Tree);
    assert_eq!((s.bytes, s.files), (bytes, Some(files)));
    // No command ran, so the server's CPU is unknown.
    assert!(s.server_cpu.is_none());
    assert!(modified(&incoming) > past, "nothing made there");
    assert!(left_in(&incoming).is_empty());
    assert!(left_on_server(&sb).is_empty());
}

/// A server whose login shell finds no `sh` (as on Windows, whose cmd.exe or PowerShell
/// says "'sh' is not recognized"): the raw stream is given up at its first sample with
/// the shell's words, and sftp, which needs no shell, is measured (in `--remote-dir`,
/// as sftp's start directory here is the machine's /root).
#[test]
fn a_server_without_sh_is_measured_through_sftp_alone() {
    let sb = start(SandboxOptions {
        session_path: Some("/nowhere".into()),
        ..SandboxOptions::default()
    });
    let home = sb.dir().join("home");
    let db = tempfile::tempdir().unwrap();
    let out = common::sshbench()
        .args(["run", "-F"])
        .arg(sb.ssh_config())
        .arg(sshbench::sandbox::ALIAS)
        .arg("--db")
        .arg(db.path().join("db.sqlite"))
        .args(["--mode", "sftp-put-file", "--kex", "curve25519-sha256"])
        .args(["--ciphers", "aes128-gcm@openssh.com", "--rounds", "2"])
        .args(["--file-size", "2M", "--remote-dir"])
        .arg(&home)
        .output()
        .unwrap();
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let said = "the server's shell has no sh for sshbench's commands (status 127: \"";
    assert!(stderr.contains(said), "{stderr}");
    assert!(stderr.contains("sh: command not found"), "{stderr}");
    assert_eq!(stderr.matches("] warm-up send").count(), 1, "{stderr}");
    assert!(stdout.contains("\nsftp-put-file aes128-gcm"), "{stdout}");
    assert!(left_on_server(&sb).is_empty());
}

/// Each of `modes` ends "not available" with `message`.
fn assert_unavailable(t: &mut impl Transport, modes: &[Mode], message: &str) {
    for &mode in modes {
        let s = t.measure(&request(mode), &Cancel::new());
        assert!(matches!(s.outcome, Outcome::Unavailable { .. }), "{mode}");
        let said = sshbench::views::problem::of_outcome(&s.outcome);
        assert_eq!(said.as_deref(), Some(message), "{mode}");
    }
}

#[test]
fn a_server_without_sftp_is_not_available_not_a_failure() {
    let sb = start(SandboxOptions {
        no_sftp: true,
        ..SandboxOptions::default()
    });
    let mut t = common::transport(&sb).with_workloads(spec());
    let modes = [Mode::SftpPutFile, Mode::SftpGetTree];
    assert_unavailable(&mut t, &modes, "the server has no SFTP subsystem");
    assert!(left_on_server(&sb).is_empty());
    // rsync does not need the subsystem.
    let s = t.measure(&request(Mode::RsyncPutFile), &Cancel::new());
    assert!(s.outcome.is_success(), "{:?}", s.outcome);
}

/// A directory of the tools a server session uses, without rsync and scp.
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
fn a_server_without_rsync_or_scp_is_not_available_for_them_only() {
    let tools = tempfile::tempdir().unwrap();
    let sb = start(SandboxOptions {
        session_path: Some(path_without_rsync(tools.path())),
        ..SandboxOptions::default()
    });
    let mut t = common::transport(&sb).with_workloads(spec());
    let modes = [Mode::RsyncPutTree, Mode::RsyncGetFile];
    assert_unavailable(&mut t, &modes, "rsync is not installed on this server");
    let modes = [Mode::ScpPutFile, Mode::ScpGetTree];
    assert_unavailable(&mut t, &modes, "scp is not installed on this server");
    assert!(left_on_server(&sb).is_empty());
    let s = t.measure(&request(Mode::SftpPutTree), &Cancel::new());
    assert!(s.outcome.is_success(), "{:?}", s.outcome);
}

/// The server's sftp-server program (openssh-server ships it).
fn sftp_server() -> &'static str {
    let known = ["/usr/lib/openssh/sftp-server", "/usr/libexec/sftp-server"];
    (known.into_iter())
        .find(|p| Path::new(p).is_file())
        .expect("openssh-server's sftp-server is installed")
}

#[test]
fn a_login_shell_that_prints_first_is_said_plainly_and_measured_no_further() {
    // As a login shell whose start-up file prints does: the words first (with and
    // without a newline), then the command; sftp's subsystem by its program, as a
    // `Subsystem sftp /usr/lib/openssh/sftp-server` line has the shell start it.
    for said in ["echo Welcome to the NAS", "printf 'Welcome to the NAS'"] {
        let sb = start(SandboxOptions::default());
        let command = format!(
            "{said}; case $SSH_ORIGINAL_COMMAND in internal-sftp) exec {};; esac; \
             eval \\\"$SSH_ORIGINAL_COMMAND\\\"",
            sftp_server()
        );
        common::force_command(&sb, &command);
        let mut t = common::transport(&sb).with_workloads(spec());
        let message = "the server's login shell prints \"Welcome to the NAS\" before every \
                       command, and that breaks scp -O, rsync and an sftp-server the shell \
                       starts (for you too): have its start-up files print only in \
                       interactive sessions";
        let modes = [Mode::RsyncPutFile, Mode::ScpGetTree, Mode::SftpPutFile];
        assert_unavailable(&mut t, &modes, message);
        assert!(left_on_server(&sb).is_empty());
        // sshbench's own streams find their start after the words.
        let mut send = request(Mode::Send);
        (send.bytes, send.ramp) = (8 << 20, 2 << 20);
        let s = t.measure(&send, &Cancel::new());
        assert!(s.outcome.is_success(), "{said}: {:?}", s.outcome);
        // And the run says what the words break, also where no tool was measured.
        let notes = t.notes();
        let said = "Welcome to the NAS".to_string();
        let note = sshbench::model::Note::NoisyShell { said };
        assert!(notes.contains(&note), "{notes:?}");
    }
}

/// A small file system (tmpfs), unmounted when dropped.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn of(size: &str) -> SmallDisk {
        assert!(
            nix::unistd::geteuid().is_root(),
            "mounting a small tmpfs needs root (CI runs the tests as root)"
        );
        let dir = tempfile::tempdir().unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs");
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn a_remote_dir_without_room_for_a_sample_says_so_before_anything_is_written() {
    let disk = SmallDisk::of("4m");
    let sb = start(SandboxOptions::default());
    let within = disk.0.path().display().to_string();
    let spec = WorkloadSpec {
        remote_dir: Some(within.clone()),
        ..spec()
    };
    let mut t = common::transport(&sb).with_workloads(spec);
    for mode in [Mode::ScpPutFile, Mode::RsyncGetFile] {
        let s = t.measure(&request(mode), &Cancel::new());
        let message = format!(
            "the server's {within} has 4.0 MiB free, and a sample of 1 file of 16.0 MiB \
             needs 17.0 MiB: `--remote-dir` a directory with more room, or a smaller \
             `--file-size`/`--tree`"
        );
        assert!(matches!(s.outcome, Outcome::Unavailable { .. }), "{mode}");
        let said = sshbench::views::problem::of_outcome(&s.outcome);
        assert_eq!(said, Some(message), "{mode}");
        assert!(left_in(disk.0.path()).is_empty());
    }
    // The tree (120 files of 4 KiB) fits.
    let s = t.measure(&request(Mode::RsyncPutTree), &Cancel::new());
    assert!(s.outcome.is_success(), "{:?}", s.outcome);
    assert!(left_in(disk.0.path()).is_empty());
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

/// Behind 20 ms of round trip, many small files over sftp fall further behind the raw
/// stream than any choice of cipher moves them, and the report says it is per-file.
#[test]
fn in_the_delay_lab_small_files_lose_more_to_round_trips_than_to_the_cipher() {
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("w.db");
    let out = common::sshbench()
        .args([
            "run",
            "--sandbox-delay",
            "20ms",
            "--mode",
            "sftp-put-tree",
            "--rounds",
            "1",
        ])
        .args([
            "--ciphers",
            "aes128-gcm@openssh.com,aes128-ctr",
            "--macs",
            "hmac-sha2-256",
        ])
        .args(["--tree", "40x16K", "--quiet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "run");
    let dest = "local sandbox (20 ms round trip added)";
    let args = [
        "show",
        dest,
        "--format",
        "json",
        "--mode",
        "send,sftp-put-tree",
    ];
    let v: serde_json::Value = serde_json::from_str(&common::stdout_of(&db, &args)).unwrap();
    let rows = v["suites"].as_array().unwrap();
    let rtt: Vec<f64> = rows.iter().filter_map(|r| r["rtt"].as_f64()).collect();
    let tree: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["mode"] == "sftp-put-tree")
        .collect();
    assert_eq!(tree.len(), 2, "{rows:?}");
    let rate = |r: &serde_json::Value| r["mean"].as_f64().unwrap();
    let (fast, slow) = (
        rate(tree[0]).max(rate(tree[1])),
        rate(tree[0]).min(rate(tree[1])),
    );
    let cipher_spread = 1.0 - slow / fast;
    for r in &tree {
        let share = r["workload"]["share"].as_f64().unwrap();
        assert!(
            1.0 - share > cipher_spread,
            "lost {share} to the tool, {cipher_spread} to the cipher"
        );
        assert_eq!(r["workload"]["limit"], "per-file", "{r}");
        let sentence = r["workload"]["sentence"].as_str().unwrap();
        assert!(sentence.contains("round trips of"), "{sentence}");
    }
    // The relay adds what it says: the send protocol's ping sees at least 20 ms.
    assert!(rtt.iter().all(|r| (0.020..0.040).contains(r)), "{rtt:?}");
    let text = common::stdout_of(&db, &["show", dest, "--mode", "sftp-put-tree"]);
    assert!(text.contains("not the cipher, limit it"), "{text}");
}

fn dropbear_transport(db: &common::dropbear::Dropbear) -> sshbench::measure::openssh::OpenSsh {
    dropbear_transport_at(db, "dropbear-test")
}

/// [`dropbear_transport`] to `destination` (with the server's ssh_config).
fn dropbear_transport_at(
    db: &common::dropbear::Dropbear,
    destination: &str,
) -> sshbench::measure::openssh::OpenSsh {
    let target = sshbench::destination::Target::parse(destination)
        .unwrap()
        .with_ssh_args(vec!["-F".into(), db.ssh_config().display().to_string()]);
    sshbench::measure::openssh::OpenSsh::new(
        common::ssh(),
        target,
        sshbench::measure::payload::Payload::random(1 << 20, 42),
    )
    .with_workloads(spec())
}

/// The Dropbear tests' sessions share the machine's /tmp: one at a time, so that one
/// test's temp files (a receive's, while it runs) are not taken for another's leftovers.
static DROPBEAR_TMP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A real Dropbear server: with an SFTP server installed the workloads run over one
/// multiplexed connection as with OpenSSH; without one, sftp is "not available" and
/// scp's classic protocol is what copies files there.
#[test]
fn dropbear_serves_sftp_only_where_an_sftp_server_is_installed() {
    use common::dropbear::{DropbearOptions, start};
    let _one = DROPBEAR_TMP.lock().unwrap_or_else(|e| e.into_inner());
    // Its sessions' temp dir is the machine's /tmp: compare what is there.
    let before = left_in(Path::new("/tmp"));
    let new_in_tmp = || -> Vec<String> {
        let now = left_in(Path::new("/tmp"));
        now.into_iter().filter(|d| !before.contains(d)).collect()
    };
    let with = start(DropbearOptions {
        login: true,
        sftp: true,
        ..Default::default()
    });
    let mut t = dropbear_transport(&with);
    for mode in [Mode::SftpPutTree, Mode::SftpGetFile, Mode::RsyncPutFile] {
        let s = t.measure(&request(mode), &Cancel::new());
        assert!(s.outcome.is_success(), "{mode}: {:?}", s.outcome);
        assert_eq!(s.files, Some(spec().size(mode.workload().unwrap().shape).1));
        assert!(new_in_tmp().is_empty(), "{mode} left {:?}", new_in_tmp());
    }
    let without = start(DropbearOptions {
        login: true,
        sftp: false,
        ..Default::default()
    });
    let mut t = dropbear_transport(&without);
    let s = t.measure(&request(Mode::SftpPutFile), &Cancel::new());
    assert_eq!(
        s.outcome,
        Outcome::Unavailable {
            problem: sshbench::model::Problem::NoSftp
        }
    );
    assert!(new_in_tmp().is_empty());
    for mode in [Mode::ScpPutTree, Mode::ScpGetFile] {
        let s = t.measure(&request(mode), &Cancel::new());
        assert!(s.outcome.is_success(), "{mode}: {:?}", s.outcome);
        let (bytes, files) = spec().size(mode.workload().unwrap().shape);
        assert_eq!((s.bytes, s.files), (bytes, Some(files)), "{mode}");
        assert!(new_in_tmp().is_empty(), "{mode} left {:?}", new_in_tmp());
    }
}

/// A server named by its IPv6 address: sftp, scp and rsync take it in brackets, or
/// their `host:path` would split it at its first colon.
#[test]
fn a_server_at_an_ipv6_address_runs_every_tool() {
    let _one = DROPBEAR_TMP.lock().unwrap_or_else(|e| e.into_inner());
    let server = common::dropbear::start(common::dropbear::DropbearOptions {
        login: true,
        sftp: true,
        ipv6: true,
        ..Default::default()
    });
    let mut t = dropbear_transport_at(&server, &format!("root@[::1]:{}", server.port));
    for mode in [Mode::SftpPutFile, Mode::ScpGetTree, Mode::RsyncPutFile] {
        let s = t.measure(&request(mode), &Cancel::new());
        assert!(s.outcome.is_success(), "{mode}: {:?}", s.outcome);
    }
}

/// `sshbench run` against a real Dropbear server: every mode, the workloads with their
/// raw streams, is measured and stored like the sandbox's, and the run read Dropbear's
/// 24 KiB session window.
#[test]
fn run_against_dropbear_measures_every_mode() {
    let _one = DROPBEAR_TMP.lock().unwrap_or_else(|e| e.into_inner());
    let db_server = common::dropbear::start(common::dropbear::DropbearOptions {
        login: true,
        sftp: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let cfg = db_server.ssh_config();
    let out = common::sshbench()
        .args(["run", "-F"])
        .arg(&cfg)
        .args([
            "dropbear-test",
            "--mode",
            "connect,echo,sftp-get-file,rsync-put-tree,scp-put-file",
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
            "100x8K",
            "--file-size",
            "8M",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "run against dropbear");
    let args = [
        "show",
        "dropbear-test",
        "--format",
        "json",
        "--mode",
        "connect,send,receive,echo,sftp-get,rsync-put,scp-put",
        "--top",
        "all",
    ];
    let v: serde_json::Value = serde_json::from_str(&common::stdout_of(&db, &args)).unwrap();
    for mode in [
        "connect",
        "send",
        "receive",
        "echo",
        "sftp-get-file",
        "rsync-put-tree",
        "scp-put-file",
    ] {
        let row = v["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["mode"] == mode);
        let row = row.unwrap_or_else(|| panic!("no {mode} row: {v}"));
        assert!(
            row["mean"].as_f64().is_some_and(|m| m > 0.0),
            "{mode}: {row}"
        );
    }
    let store = sshbench::store::Store::open(&db).unwrap();
    assert_eq!(store.runs().unwrap()[0].server_window, Some(24576));
}

/// The workloads' local scratch directories no live process holds.
fn abandoned_scratch() -> Vec<std::path::PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("sshbench-work.")
        })
        .map(|e| e.path())
        .filter(|p| {
            std::fs::File::open(p.join("lock")).is_ok_and(|f| {
                sshbench::sys::scratch::flock(&f, libc::LOCK_EX | libc::LOCK_NB).is_ok()
            })
        })
        .collect()
}

/// `kill -9` in the middle of a workload run, then `--resume`: what was stored stays,
/// the rest is measured with the run's own data shape (not the command line's default),
/// and the killed run's local scratch directory is swept.
#[test]
fn a_killed_workload_run_resumes_with_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut child = common::sshbench()
        .args([
            "run",
            "--mode",
            "sftp-put-tree",
            "--rounds",
            "3",
            "--tree",
            "150x4K",
            "--quiet",
        ])
        .args([
            "--ciphers",
            "aes128-ctr,aes128-gcm@openssh.com",
            "--macs",
            "hmac-sha2-256",
            "--db",
        ])
        .arg(&db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stored = || {
        sshbench::store::Store::open(&db)
            .ok()
            .and_then(|s| Some(s.samples(&[s.runs().ok()?.first()?.id]).ok()?.len()))
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while stored() < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = stored();
    assert!(before >= 5, "{before} samples before the kill");
    let left = abandoned_scratch();
    assert!(
        !left.is_empty(),
        "kill -9 cannot clean up its scratch directory"
    );
    let out = common::sshbench()
        .args(["run", "--resume", "--quiet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "resume");
    assert!(left.iter().all(|p| !p.exists()), "{left:?} not swept");
    let store = sshbench::store::Store::open(&db).unwrap();
    let run = &store.runs().unwrap()[0];
    let samples = store.samples(&[run.id]).unwrap();
    assert!(samples.len() > before);
    let trees: Vec<_> = samples
        .iter()
        .filter(|s| s.sample.mode == Mode::SftpPutTree)
        .collect();
    assert_eq!(
        trees
            .iter()
            .filter(|s| s.sample.outcome.is_success())
            .count(),
        6,
        "2 suites × 3 rounds"
    );
    assert!(
        trees
            .iter()
            .all(|s| s.sample.files == Some(150) || !s.sample.outcome.is_success())
    );
}
