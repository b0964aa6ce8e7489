//! Server CPU, bottleneck verdicts, connect phases and compression, measured for real:
//! against the sandbox, and against the slow-machine lab (a CPU quota on the sandbox
//! sshd; a network namespace behind a shaped link). The lab needs root, as on CI.

use crate::common;

use serde_json::Value;
use sshbench::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;

/// These tests measure CPU: run them one at a time, or they measure each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(db: &Path, args: &[&str]) {
    let out = common::sshbench()
        .arg("run")
        .arg("--db")
        .arg(db)
        .args(["-q", "--rounds", "3"])
        .args(if args.contains(&"--sample-time") {
            &[][..]
        } else {
            &["--sample-time", "100ms"][..]
        })
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn show(db: &Path, args: &[&str]) -> Vec<Value> {
    let out = common::sshbench()
        .args(["show", "--top", "all", "--format", "json", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["suites"].as_array().unwrap().clone()
}

/// The suite of `mode` and `cipher` whose compression reads `compression` as tables
/// show it (`zlib@openssh.com, text data`: JSON keeps the data in a field of its own).
fn find<'a>(suites: &'a [Value], mode: &str, cipher: &str, compression: Option<&str>) -> &'a Value {
    let label = |s: &Value| {
        let c = s["compression"].as_str()?;
        Some(match s["data"].as_str() {
            Some(d) => format!("{c}, {d} data"),
            None => c.to_string(),
        })
    };
    suites
        .iter()
        .find(|s| s["mode"] == mode && s["cipher"] == cipher && label(s).as_deref() == compression)
        .unwrap_or_else(|| panic!("{mode} {cipher} {compression:?} missing: {suites:?}"))
}

/// A lab run (root, one at a time): the lock, the database's folder and path.
fn lab_run(
    args: &[&str],
) -> (
    std::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    PathBuf,
) {
    let serial = serial();
    need_root();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    run(&db, args);
    (serial, dir, db)
}

fn need_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the lab tests create cgroups and network namespaces: run them as root (CI does)"
    );
}

fn lab_leftovers() -> (bool, bool) {
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ns = String::from_utf8_lossy(&netns.stdout)
        .contains(&format!("sshbench-{}", std::process::id()));
    let cg = std::fs::read_dir("/sys/fs/cgroup/cpu")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("sshbench-"))
        })
        .unwrap_or(false);
    (ns, cg)
}

#[test]
fn a_cpu_limited_server_is_server_bound() {
    let (_serial, _dir, db) = lab_run(&[
        "--mode",
        "send,receive",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--sandbox-cpu",
        "0.2",
        // Several 100 ms quota periods per window, so throttling is counted well.
        "--sample-time",
        "600ms",
    ]);
    let suites = show(&db, &[]);
    for mode in ["send", "receive"] {
        let s = find(&suites, mode, "aes128-gcm@openssh.com", None);
        // The server is the bottleneck; on a machine busy with other work the client's
        // CPU can look saturated too ("both").
        assert!(
            matches!(s["bound"].as_str(), Some("server" | "both")),
            "{mode}: {s}"
        );
        assert!(s["server_busy"].as_f64().unwrap() >= 0.85, "{mode}: {s}");
        assert!(s["server_cpu"].as_f64().unwrap() > 0.0, "{s}");
    }
    let runs = Store::open(&db).unwrap().runs().unwrap();
    assert_eq!(runs[0].options.lab.cpu, Some(0.2), "{:?}", runs[0].options);
    // Stored apart from the default sandbox, so reports never pool the two.
    assert_eq!(
        runs[0].destination,
        "local sandbox (sshd limited to 0.2 cores)"
    );
}

/// A slow server's send window is timed with the stream paused at the mark. A send read
/// from a file cannot pause: its mark came back behind everything the server's sshd had
/// still to decrypt, so under 5% of a core 3DES read hundreds of MB/s (windows of 2 ms)
/// and ranked first.
#[test]
fn a_slow_server_s_send_windows_are_not_cut_short_by_its_backlog() {
    let (_serial, _dir, db) = lab_run(&[
        "--mode",
        "send",
        "--ciphers",
        "3des-cbc,aes128-ctr",
        "--macs",
        "hmac-sha1",
        "--sandbox-cpu",
        "0.05",
        "--sample-time",
        "300ms",
    ]);
    let c = rusqlite::Connection::open(&db).unwrap();
    let shortest: f64 = c
        .query_row(
            "SELECT min(window_s) FROM samples WHERE round > 0 AND mode = 'send' \
             AND outcome = 'ok' AND cipher = '3des-cbc'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // Its windows last about the sample time, give or take the quota's 100 ms periods
    // (bursts of 5 ms); the backlog's lag left 2 ms of them.
    assert!(shortest >= 0.05, "a window of {shortest} s");
    let suites = show(&db, &[]);
    let rate = |cipher| {
        find(&suites, "send", cipher, None)["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(
        rate("3des-cbc") < rate("aes128-ctr") / 4.0,
        "{} {}",
        rate("3des-cbc"),
        rate("aes128-ctr")
    );
}

#[test]
fn a_slow_link_is_network_bound() {
    let (_serial, _dir, db) = lab_run(&[
        "--mode",
        "send,receive",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--sandbox-rate",
        "16mbit",
        "--size",
        "2M",
        "--streams",
        "4",
    ]);
    let suites = show(&db, &[]);
    for mode in ["send", "receive"] {
        let s = find(&suites, mode, "aes128-gcm@openssh.com", None);
        assert_eq!(s["bound"], "network", "{mode}: {s}");
        let mb_s = s["mean"].as_f64().unwrap() / 1e6;
        assert!(mb_s < 2.5, "{mode}: {mb_s} MB/s through a 16 Mbit/s link");
        // Four connections share the link that one fills (their windows never quite
        // coincide there, so the sum reads a little high: bench/results/notebook.md).
        let gain = stream_gain(&db, mode, 4);
        assert!(
            gain < sshbench::analysis::streams::HELPS,
            "{mode}: 4 streams moved {gain:.2}x one"
        );
        // The path's ceiling is the link's, and a raw TCP stream through the shaped
        // link meets the same 2 MB/s.
        let (rate, reached, tcp) =
            ceiling(&db, "local sandbox (link shaped to 16000 kbit/s)", mode);
        assert!(reached && rate / 1e6 < 2.5, "{mode}: {rate} {reached}");
        assert!((tcp / 2e6 - 1.0).abs() < 0.2, "{mode}: raw TCP {tcp} B/s");
    }
}

/// The path's ceiling of `mode` from `show`'s JSON: (the rate, whether neither CPU
/// limited it, one raw TCP stream's rate).
fn ceiling(db: &Path, dest: &str, mode: &str) -> (f64, bool, f64) {
    let out = common::stdout_of(db, &["show", dest, "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = (v["ceilings"].as_array().unwrap().iter())
        .find(|c| c["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} ceiling: {v}"));
    let f = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("{k}: {c}"));
    (f("rate"), c["reached"] == true, f("tcp"))
}

/// What N parallel streams of `mode` moved against one stream, from `show`'s JSON.
fn stream_gain(db: &Path, mode: &str, n: u32) -> f64 {
    let out = common::stdout_of(db, &["show", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let streams = v["streams"]
        .as_array()
        .unwrap_or_else(|| panic!("no streams: {v}"));
    let f = (streams.iter())
        .find(|f| f["mode"] == mode && f["streams"] == n)
        .unwrap_or_else(|| panic!("no {n} {mode} streams: {v}"));
    assert_eq!(f["batches"], 3, "{f}");
    f["mean"].as_f64().unwrap() / f["single"].as_f64().unwrap()
}

#[test]
fn sandbox_verdicts_cpu_per_gb_and_connect_phases() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    run(
        &db,
        &[
            "--mode",
            "connect,send",
            "--ciphers",
            "aes128-gcm@openssh.com,3des-cbc",
            "--macs",
            "hmac-sha1",
            "--kex",
            "curve25519-sha256,diffie-hellman-group16-sha512",
            "--hostkeys",
            "ssh-ed25519",
            // Busy fractions come from 10 ms clock ticks: over 200 ms windows a
            // saturated 3des-cbc ssh read 0.85-0.95 on this 2-core VM (the verdict's
            // threshold is 0.85), over 500 ms windows 0.95-0.99.
            "--sample-time",
            "500ms",
        ],
    );
    let suites = show(&db, &[]);
    let des = find(&suites, "send", "3des-cbc", None);
    let gcm = find(&suites, "send", "aes128-gcm@openssh.com", None);
    assert!(
        matches!(des["bound"].as_str(), Some("client" | "server" | "both")),
        "3des-cbc is CPU-bound: {des}"
    );
    // Unconstrained AES-GCM on loopback leaves sshd at ~70% of a core on a quiet
    // machine here, so the verdict is not "server"; on a contended VM (CPU steal) it can
    // tip over, so the firm claim is the relative one below: AES-GCM costs the server a
    // fraction of what 3des-cbc does.
    if gcm["bound"] == "server" {
        eprintln!("note: AES-GCM looked server-bound (contended machine?): {gcm}");
    }
    for side in ["client_cpu", "server_cpu"] {
        let (d, g) = (des[side].as_f64().unwrap(), gcm[side].as_f64().unwrap());
        assert!(d > 5.0 * g, "{side}: 3des-cbc {d} s/GB vs AES-GCM {g} s/GB");
    }
    // Every connect sample's phases add up to its wall time.
    let store = Store::open(&db).unwrap();
    let connects: Vec<_> = store
        .samples(&[])
        .unwrap()
        .into_iter()
        .filter(|s| s.sample.mode == sshbench::model::Mode::Connect)
        .collect();
    assert!(!connects.is_empty());
    for s in connects {
        let p = s.sample.phases.expect("phases measured");
        assert!(
            (p.total() - s.sample.wall.as_secs_f64()).abs() < 0.003,
            "{p:?} vs {:?}",
            s.sample.wall
        );
        assert!(
            p.tcp > 0.0 && p.kex > 0.0 && p.auth > 0.0 && p.session > 0.0,
            "{p:?}"
        );
    }
    let c = suites.iter().find(|s| s["mode"] == "connect").unwrap();
    assert!(c["phases"]["kex"].as_f64().unwrap() > 0.0, "{c}");
    let (ns, cg) = lab_leftovers();
    assert!(!ns && !cg, "nothing of a lab left");
}

/// Runs with random and with text data, in one database: a report shows each
/// compressed suite once per kind of data (never pooled), the uncompressed ones pooled.
#[test]
fn compression_pays_on_text_not_on_random_data() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    for payload in ["random", "text"] {
        run(
            &db,
            &[
                "--mode",
                "send",
                "--ciphers",
                "aes128-gcm@openssh.com",
                "--compression",
                "--payload",
                payload,
                "--size",
                "4M",
            ],
        );
    }
    let suites = show(&db, &[]);
    let factor = |compression: &str| {
        let z = find(&suites, "send", "aes128-gcm@openssh.com", Some(compression));
        assert_eq!(z["n"], 3, "{z}");
        z["compression_factor"].as_f64().unwrap()
    };
    let random = factor("zlib@openssh.com");
    assert!(random > 0.95, "random data does not shrink: {random}");
    let text = factor("zlib@openssh.com, text data");
    assert!(text < 0.5, "text shrinks: {text}");
    let plain = find(&suites, "send", "aes128-gcm@openssh.com", None);
    assert_eq!(plain["n"], 6, "uncompressed: both runs pooled: {plain}");
    // Visible in the table, too.
    let table = common::sshbench()
        .args(["show", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("Compression") && table.contains("zlib@openssh.com, text data"),
        "{table}"
    );
}

/// 50 ms of round trip (the delay relay, no root needed): AES-GCM moves what OpenSSH's
/// 2 MiB channel window allows per round trip, both ways, and the verdict and the
/// summary say so, with the numbers.
#[test]
fn a_far_link_is_window_bound_at_the_window_over_the_round_trip() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    run(
        &db,
        &[
            "--sandbox-delay",
            "50ms",
            "--mode",
            "send,receive",
            "--ciphers",
            "aes128-gcm@openssh.com",
            "--streams",
            "4",
        ],
    );
    let dest = "local sandbox (50 ms round trip added)";
    let suites = show(&db, &[dest]);
    for mode in ["send", "receive"] {
        let s = find(&suites, mode, "aes128-gcm@openssh.com", None);
        assert_eq!(s["bound"], "window", "{s}");
        let w = &s["path_window"];
        assert_eq!(w["bytes"], 2 << 20, "OpenSSH's window both ways: {w}");
        let rtt = w["rtt"].as_f64().unwrap();
        assert!((0.050..0.060).contains(&rtt), "the relay adds 50 ms: {rtt}");
        let cap = (2u64 << 20) as f64 / rtt;
        let rate = s["mean"].as_f64().unwrap();
        assert!(
            (rate / cap - 1.0).abs() < 0.2,
            "{mode} {rate} against {cap}"
        );
    }
    let out = common::sshbench()
        .args(["summary", dest, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("send is window-bound: the server's 2 MiB channel window per 5"),
        "{text}"
    );
    assert!(text.contains("the cipher does not matter here"), "{text}");
    // Each connection has a window of its own: four move (nearly) four times as much.
    for mode in ["send", "receive"] {
        let gain = stream_gain(&db, mode, 4);
        assert!(gain >= 2.5, "{mode}: 4 streams moved {gain:.2}x one");
    }
    assert!(
        text.contains("4 parallel send streams of aes128-gcm@openssh.com moved"),
        "{text}"
    );
    assert!(text.contains("parallel transfers would help"), "{text}");
    // The path itself carries much more than one channel's window allows.
    for mode in ["send", "receive"] {
        let (rate, reached, tcp) = ceiling(&db, dest, mode);
        assert!(
            reached,
            "{mode}: window-bound, so no CPU limits the ceiling"
        );
        assert!(tcp > 2.0 * rate, "{mode}: raw TCP {tcp} against {rate}");
    }
    assert!(text.contains("send path: "), "{text}");
}

/// A busy loop sharing the sandbox sshd's core: sshd gets about half of it and waits
/// for the rest, so its own CPU time never reads saturated; counted with its time
/// waiting for the CPU (Linux schedstat), it is what limits the transfer.
#[test]
fn a_server_whose_core_is_shared_is_server_bound() {
    let _one = serial();
    let split = sshbench::sys::affinity::plan(sshbench::model::Placement::Split)
        .expect("this test needs two CPUs: the sandbox pins sshd apart from the client");
    let list: Vec<String> = split.server.iter().map(|c| c.to_string()).collect();
    let mut hog = Command::new("taskset")
        .args(["-c", &list.join(","), "sh", "-c", "while :; do :; done"])
        .spawn()
        .expect("taskset (util-linux)");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    run(
        &db,
        &[
            "--mode",
            "send",
            "--ciphers",
            "aes128-gcm@openssh.com",
            "--sample-time",
            "300ms",
        ],
    );
    let _ = hog.kill();
    let _ = hog.wait();
    let suites = show(&db, &[]);
    let gcm = find(&suites, "send", "aes128-gcm@openssh.com", None);
    assert!(
        matches!(gcm["bound"].as_str(), Some("server" | "both")),
        "sshd shares its core with a busy loop: {gcm}"
    );
}

/// `sshbench run` of aes128-ctr uploads against a real Dropbear server confined to one
/// CPU (and sshbench to the other), advertising `window` (its default when `None`);
/// the database's directory and the run's answer come back with it.
fn dropbear_upload(window: Option<u32>) -> (tempfile::TempDir, Vec<Value>, String) {
    let server = common::dropbear::start(common::dropbear::DropbearOptions {
        login: true,
        sftp: false,
        cpu: Some(1),
        window,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let out = Command::new("taskset")
        .args(["-c", "0"])
        .arg(env!("CARGO_BIN_EXE_sshbench"))
        .args(["run", "-F"])
        .arg(server.ssh_config())
        .args(["dropbear-test", "-q", "--rounds", "3", "--mode", "send"])
        .args(["--ciphers", "aes128-ctr", "--macs", "hmac-sha2-256", "--db"])
        .arg(&db)
        .output()
        .expect("taskset (util-linux)");
    common::assert_success(&out, "run against dropbear");
    let suites = show(&db, &[]);
    (
        dir,
        suites,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Dropbear's 24 KiB default window stalls uploads even on loopback: neither end is
/// busy, the window is what they wait for, and the run's answer and the summary name
/// the window and `-W`.
/// Restarted with `-W 2097152`, the same upload fills the server's one core.
#[test]
fn a_dropbear_server_s_small_window_bounds_uploads_until_it_is_raised() {
    let _one = serial();
    need_root();
    let (dir, suites_small, answer) = dropbear_upload(None);
    let small = find(&suites_small, "send", "aes128-ctr", None);
    assert_eq!(small["bound"], "window", "{small}");
    assert_eq!(small["path_window"]["bytes"], 24576, "{small}");
    let out = common::sshbench()
        .args(["summary", "--db"])
        .arg(dir.path().join("db.sqlite"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("send is window-bound: the server's 24 KiB channel window"),
        "{text}"
    );
    assert!(text.contains("start it with -W 2097152"), "{text}");
    let answer = answer.replace("\n  ", " ");
    assert!(
        answer.contains("send is window-bound: the server's 24 KiB channel window")
            && answer.contains("start it with -W 2097152"),
        "{answer}"
    );
    let (_dir, suites, answer) = dropbear_upload(Some(2 << 20));
    assert!(!answer.contains("window-bound"), "{answer}");
    let large = find(&suites, "send", "aes128-ctr", None);
    assert_eq!(large["bound"], "server", "{large}");
    assert_eq!(large["path_window"]["bytes"], 2 << 20, "{large}");
    let mean = |suites: &[Value]| find(suites, "send", "aes128-ctr", None)["mean"].as_f64();
    let gain = |small: &[Value], large: &[Value]| mean(large).unwrap() / mean(small).unwrap();
    // The gain is 1.5-1.9x alone, 2.3x with both cores busy throughout. The two runs follow each other on a shared machine,
    // and a neighbour busy on the server's core during the second alone slows only it
    // (one CI run saw 1.24x): a low pair is measured once more, both runs again.
    let mut gains = vec![gain(&suites_small, &suites)];
    if gains[0] <= 1.3 {
        let (_d, again_small, _) = dropbear_upload(None);
        let (_d, again_large, _) = dropbear_upload(Some(2 << 20));
        gains.push(gain(&again_small, &again_large));
    }
    assert!(
        gains.iter().any(|&g| g > 1.3),
        "a larger window moved {gains:.2?}x"
    );
}

/// What a `kill -9`ed sshbench left (a cgroup and a network namespace named for a
/// process that is gone) is swept when the next lab starts; a live process's stays.
#[test]
fn a_lab_sweeps_what_a_killed_sshbench_left() {
    need_root();
    let _serial = serial();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = format!("sshbench-{dead}-1");
    let live = format!("sshbench-{}-77", std::process::id());
    for name in [&stale, &live] {
        let made = Command::new("ip")
            .args(["netns", "add", name])
            .status()
            .unwrap();
        assert!(made.success(), "ip netns add {name}");
    }
    let cgroups = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup"]
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.join("cpu.cfs_quota_us").exists() || p.join("cgroup.controllers").exists())
        .unwrap();
    std::fs::create_dir(cgroups.join(&stale)).unwrap();
    let lab = sshbench::sandbox::lab::Netns::create(None).unwrap();
    let listed = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let _ = Command::new("ip").args(["netns", "del", &live]).status();
    drop(lab);
    assert!(!listed.contains(&stale), "{listed}");
    assert!(listed.contains(&live), "{listed}");
    assert!(!cgroups.join(&stale).exists());
}
