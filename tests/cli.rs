//! End-to-end tests of the `sshbench` binary: against the real sandbox sshd, and with the
//! deterministic mock transport for a snapshot of the run table. Every run writes to a
//! database in a temp dir of its own.

mod common;

use sshbench::model::RunStatus;
use sshbench::store::Store;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{sshbench, text};

/// `sshbench run --db <dir>/db.sqlite ARGS...`
fn run_with_db(db: &Path, args: &[&str]) -> Output {
    sshbench()
        .arg("run")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("db.sqlite")
}

#[test]
fn run_against_the_sandbox_prints_a_table_and_stores_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let out = run_with_db(
        &db,
        &[
            "--mode",
            "send,receive,connect,echo",
            "--rounds",
            "2",
            "--sample-time",
            "50ms",
            "--ciphers",
            "aes128-gcm@openssh.com,aes128-ctr",
            "--macs",
            "hmac-sha2-256-etm@openssh.com,umac-64-etm@openssh.com",
            "--kex",
            "curve25519-sha256",
            "--hostkeys",
            "ssh-ed25519",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("local sandbox"), "{stderr}");
    assert!(
        // One warm-up for the connect items, and one per cipher: the send of its first
        // suite, which sizes every suite of that cipher in every mode.
        stderr.contains("10 measurements × 2 rounds after 3 warm-ups"),
        "{stderr}"
    );
    // The headline: each mode's best suite, and the ssh_config block.
    for want in [
        "\nconnect  curve25519-sha256 + ssh-ed25519: ",
        "\nsend     ",
        "\nreceive  ",
        "\necho     ",
        "aes128-gcm@openssh.com",
        "MB/s",
        "µs",
        "Host *\n",
        "    Ciphers ",
        "send path: ",
    ] {
        assert!(stdout.contains(want), "{want:?} missing:\n{stdout}");
    }
    assert!(!stdout.contains("failed"), "{stdout}");
    // The answer and the pointer to more after it fit a 100-column terminal.
    let after = stderr.lines().skip_while(|l| !l.starts_with("more: "));
    for line in stdout.lines().chain(after) {
        let width = line.chars().count();
        assert!(width <= 100, "{width} columns: {line}");
    }
    assert!(stderr.contains("\nmore: sshbench show"), "{stderr}");
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0].status.as_str(), runs[0].samples),
        ("complete", 3 + 10 * 2)
    );
    assert!(runs[0].machine.cores.is_some());
    // The sandbox's two ends were split over the CPUs (where there are two or more),
    // and the run says so.
    let options = serde_json::to_value(&runs[0].options).unwrap();
    let split = sshbench::sys::affinity::plan(sshbench::model::Placement::Split);
    let placed = if split.is_some() { "split" } else { "shared" };
    assert_eq!(options["sandbox_cpus"], placed);
    if let Some(split) = split {
        let said = format!(
            "sshd on CPU{} {}",
            if split.server.len() == 1 { "" } else { "s" },
            sshbench::sys::affinity::format_list(&split.server)
        );
        assert!(stderr.contains(&said), "{said:?} missing:\n{stderr}");
    }
    // One raw TCP stream along the sandbox's path, stored with the run and reported
    // beside what SSH moved: loopback carries several times what a cipher does (set
    // against the median sample: the stream lasts 0.3 s, and this test shares the
    // machine with others).
    let tcp = runs[0].tcp_rate.expect("the path's raw TCP rate");
    assert!(
        stderr.contains("path: one raw TCP stream moves"),
        "{stderr}"
    );
    assert!(stdout.contains("send path: "), "{stdout}");
    let samples = store.samples(&[runs[0].id]).unwrap();
    let mut rates: Vec<f64> = (samples.iter())
        .filter_map(|s| s.sample.throughput())
        .collect();
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    assert!(tcp > median, "raw TCP {tcp} B/s, SSH {rates:?}");

    // Echo: percentiles of every keystroke, stored one by one and read back.
    let show = sshbench()
        .args(["show", "--mode", "echo", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(show.status.success(), "{}", text(&show.stderr));
    let json: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let suites = json["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 3, "{json}");
    for s in suites {
        assert_eq!(s["mode"], "echo");
        assert_eq!(s["unit"], "seconds");
        let e = &s["echo"];
        let (p50, p99) = (e["p50"].as_f64().unwrap(), e["p99"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99 && p99 < 0.5, "{e}");
        // Two counted sessions of at least 100 timed keystrokes each.
        assert!(e["n"].as_u64().unwrap() >= 200, "{e}");
        assert_eq!(s["n"], 2);
    }
}

fn wait_for_samples(db: &Path, at_least: i64, deadline: Duration) {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if db.exists() {
            if let Ok(store) = Store::open(db) {
                if store
                    .runs()
                    .ok()
                    .and_then(|r| r.first().map(|r| r.samples))
                    .unwrap_or(0)
                    >= at_least
                {
                    return;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("fewer than {at_least} samples stored within {deadline:?}");
}

const CONNECT_SWEEP: &[&str] = &[
    "--mode",
    "connect",
    "--rounds",
    "2",
    "--kex",
    "curve25519-sha256,ecdh-sha2-nistp256,ecdh-sha2-nistp384,diffie-hellman-group14-sha256",
    "--hostkeys",
    "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-256",
];

#[test]
fn kill_9_keeps_every_sample_and_resume_completes_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let log = dir.path().join("stderr.log");
    let mut child = sshbench()
        .arg("run")
        .arg("--db")
        .arg(&db)
        .args(CONNECT_SWEEP)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    wait_for_samples(&db, 6, Duration::from_secs(60));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    let sandbox_dir = logged
        .lines()
        .find_map(|l| l.split("private dir ").nth(1))
        .and_then(|d| d.split(')').next())
        .map(str::to_string)
        .expect("the sandbox dir is announced");
    assert!(Path::new(&sandbox_dir).exists(), "kill -9 cannot clean up");
    // The kernel stops the orphaned sshd (PR_SET_PDEATHSIG).
    let deadline = Instant::now() + Duration::from_secs(5);
    let sshd_alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(&sandbox_dir))
                .unwrap_or(false)
        })
    };
    while sshd_alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!sshd_alive(), "the sandbox sshd outlived sshbench");

    let store = Store::open(&db).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let run = &store.runs().unwrap()[0];
    assert_eq!(
        run.status,
        RunStatus::Running,
        "killed runs look unfinished"
    );
    // `runs` says when the killed run last stored a sample.
    let listed = sshbench()
        .arg("runs")
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let listed = text(&listed.stdout);
    assert!(listed.contains("running, last sample "), "{listed}");
    assert!(listed.contains(" s ago"), "{listed}");
    let before = store.samples(&[run.id]).unwrap();
    assert!(before.len() >= 6);
    // One warm-up for all connect items, 2 rounds, and the 3 quickest of the summed
    // pairs (4 key exchanges × 3 host keys, 6 measured) measured in 2 rounds after them.
    assert_eq!(
        run.plan.len(),
        6 + sshbench::plan::REFERENCE_REPLICAS - 1,
        "each kex with one host key, each host key with one kex, the reference pair again"
    );
    let planned = 1 + run.plan.len() * 2 + sshbench::runner::checks::CHECKS * 2;
    assert!(before.len() < planned, "the run finished before the kill");
    drop(store);

    // Resumed where its two ends cannot be kept apart, a split run would pool shared
    // samples with its own: refused, nothing stored.
    #[cfg(target_os = "linux")]
    if sshbench::sys::affinity::plan(sshbench::model::Placement::Split).is_some() {
        let cpu = sshbench::sys::affinity::allowed().unwrap()[0];
        let mut one = sshbench();
        sshbench::sys::affinity::pin_command(&mut one, &[cpu]).unwrap();
        let out = one
            .args(["run", "--resume", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let said = text(&out.stderr);
        assert!(!out.status.success(), "{said}");
        assert!(
            said.contains(&format!("this process may run on CPU {cpu} only")),
            "{said}"
        );
        let store = Store::open(&db).unwrap();
        assert_eq!(store.samples(&[run.id]).unwrap().len(), before.len());
    }

    let out = run_with_db(&db, &["--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("resuming run {}", run.id)),
        "{}",
        text(&out.stderr)
    );
    let store = Store::open(&db).unwrap();
    let after = store.samples(&[run.id]).unwrap();
    assert_eq!(after.len(), planned, "every slot once");
    // Everything stored before the kill is still there, unchanged.
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(
            (a.item, a.round, a.sample.wall),
            (b.item, b.round, b.sample.wall)
        );
    }
    assert_eq!(store.runs().unwrap()[0].status, RunStatus::Complete);
    assert!(
        !Path::new(&sandbox_dir).exists(),
        "the next sandbox removes the stale dir"
    );
    let again = run_with_db(&db, &["--resume"]);
    assert!(
        text(&again.stderr).contains("no interrupted run"),
        "{}",
        text(&again.stderr)
    );
}

/// `kill -9` between two batches of parallel streams: the batches stored stay, and
/// `--resume` measures only the missing ones, each stream in its own slot once.
#[test]
fn kill_9_in_the_streams_phase_keeps_its_batches_and_resume_finishes_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let args = [
        "--mode",
        "send",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--rounds",
        "1",
        "--sample-time",
        "1s",
        "--streams",
        "2",
    ];
    let mut child = sshbench()
        .arg("run")
        .arg("--db")
        .arg(&db)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A warm-up and one counted sample, then the first batch of two streams.
    wait_for_samples(&db, 4, Duration::from_secs(60));
    child.kill().unwrap();
    child.wait().unwrap();
    let streams = |db: &Path| {
        let store = Store::open(db).unwrap();
        let run = store.runs().unwrap()[0].clone();
        let all = store.samples(&[run.id]).unwrap();
        let s: Vec<_> = all
            .into_iter()
            .filter(|s| s.sample.stream.is_some())
            .collect();
        (run, s)
    };
    let (run, before) = streams(&db);
    assert_eq!(run.status, RunStatus::Running);
    assert!(
        (2..6).contains(&before.len()) && before.len() % 2 == 0,
        "whole batches only, not all three: {}",
        before.len()
    );
    let out = run_with_db(&db, &["--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (run, after) = streams(&db);
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(after.len(), 6, "three batches of two streams, each once");
    for a in &before {
        let b = after
            .iter()
            .find(|b| (b.item, b.round) == (a.item, a.round));
        assert_eq!(
            b.map(|b| b.sample.wall),
            Some(a.sample.wall),
            "kept as measured"
        );
    }
}

#[test]
fn ctrl_c_stops_the_run_tears_down_and_exits_130() {
    stop_a_run_mid_transfer(nix::sys::signal::Signal::SIGINT, false);
}

/// A hangup (the terminal's connection gone, its output with it) stops the run as
/// Ctrl-C does.
#[test]
fn a_hangup_with_the_output_gone_stops_the_run_and_tears_down() {
    stop_a_run_mid_transfer(nix::sys::signal::Signal::SIGHUP, true);
}

/// Sends `signal` to a run mid-transfer (after closing its stderr if `close`): it exits
/// with 128 + the signal within seconds, leaves no process or sandbox behind, and is
/// stored as interrupted with no sample.
fn stop_a_run_mid_transfer(signal: nix::sys::signal::Signal, close: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let tag = format!("SSHBENCH_TEST_TAG=stop-{signal}-{}", std::process::id());
    let (k, v) = tag.split_once('=').unwrap();
    let mut child = sshbench()
        .arg("run")
        .arg("--db")
        .arg(&db)
        .args([
            "--mode",
            "receive",
            "--size",
            "1G",
            "--ciphers",
            "3des-cbc",
            "--macs",
            "hmac-sha1",
        ])
        .env(k, v)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut dir_line = None;
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(d) = line.split("private dir ").nth(1) {
            dir_line = d.split(')').next().map(str::to_string);
        }
        if line.starts_with("run ") {
            break;
        }
        line.clear();
    }
    let sandbox_dir = dir_line.expect("the sandbox dir is announced");
    let mut stderr = (!close).then_some(stderr);
    // Let the transfer get going (ssh and the sandbox sshd session are running).
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        common::processes_tagged(&tag).len() >= 2,
        "ssh and sshd should be running"
    );
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let start = Instant::now();
    let status = child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(status.code(), Some(128 + signal as i32));
    if let Some(stderr) = &mut stderr {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(stderr, &mut rest);
        assert!(rest.contains("interrupted"), "{rest}");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !common::processes_tagged(&tag).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        common::processes_tagged(&tag),
        Vec::<u32>::new(),
        "processes left behind"
    );
    assert!(
        !Path::new(&sandbox_dir).exists(),
        "{sandbox_dir} left behind"
    );
    let store = Store::open(&db).unwrap();
    assert_eq!(store.runs().unwrap()[0].status, RunStatus::Interrupted);
    assert!(
        store.samples(&[]).unwrap().is_empty(),
        "a cancelled sample is not data"
    );
}

#[test]
fn bad_inputs_give_clear_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    for (args, want) in [
        (vec!["--size", "0"], "at least 1 byte"),
        (vec!["--size", "8Q"], "unknown unit"),
        (vec!["-oProxyCommand=evil"], "apply to a destination"),
        (vec!["-o", "Ciphers=aes128-ctr", "host"], "use --ciphers"),
        (
            vec!["-o", "StrictHostKeyChecking=no", "host"],
            "never weakens",
        ),
        (
            vec!["-F", "/nonexistent/ssh_config", "host"],
            "no such ssh config file",
        ),
        (vec!["--", "-oProxyCommand=evil"], "starts with '-'"),
        (vec!["host:70000"], "port"),
        (vec!["--mode", "upload"], "invalid value"),
        (
            vec!["--ciphers", "rot13-cbc", "--mode", "send"],
            "aes128-ctr",
        ),
        (vec!["--ciphers=-*", "--mode", "send"], "leaves nothing"),
        (
            vec!["--macs", "@/nonexistent/macs.lst"],
            "/nonexistent/macs.lst",
        ),
        (vec!["--timeout", "0"], "--timeout"),
        (vec!["--rounds", "0"], "--rounds"),
        (vec!["--precision", "200%"], "percentage"),
        (vec!["--budget", "soon"], "duration"),
    ] {
        let out = run_with_db(&db, &args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: {want:?} not in {stderr}");
        assert!(!db.exists(), "{args:?} created the database");
        // Refused before any sandbox started or server was probed.
        assert!(!stderr.contains("server:"), "{args:?} went on: {stderr}");
    }
}

/// ssh's own `-F FILE` and `-o Option=value` reach every ssh sshbench runs: the
/// sandbox's config as a real destination's, and a port given with `-o` that overrides
/// a wrong one in the file.
#[test]
fn ssh_config_files_and_options_reach_every_ssh() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let connect = |extra: &[&str], db: &Path| {
        let mut args = vec!["-q", "--mode", "connect", "--rounds", "1"];
        args.extend(["--kex", "curve25519-sha256", "--timeout", "20"]);
        args.extend(extra);
        args.push(sshbench::sandbox::ALIAS);
        run_with_db(db, &args)
    };
    let config = sb.ssh_config().display().to_string();
    let out = connect(&["-F", &config], &dir.path().join("f.sqlite"));
    assert!(out.status.success(), "-F: {}", text(&out.stderr));
    // The same file with a wrong port: only `-o Port=` makes it work.
    let port = sb.port().to_string();
    let wrong = std::fs::read_to_string(sb.ssh_config())
        .unwrap()
        .replace(&format!("Port {port}"), "Port 9");
    let wrong_path = dir.path().join("wrong_port_config");
    std::fs::write(&wrong_path, wrong).unwrap();
    let wrong_path = wrong_path.display().to_string();
    let db = dir.path().join("o.sqlite");
    let out = connect(&["-F", &wrong_path], &dir.path().join("x.sqlite"));
    assert!(!out.status.success(), "port 9 connected");
    let port_option = format!("Port={port}");
    let out = connect(&["-F", &wrong_path, "-o", &port_option], &db);
    assert!(out.status.success(), "-o Port: {}", text(&out.stderr));
    let runs = Store::open(&db).unwrap().runs().unwrap();
    assert_eq!(runs[0].samples, 2, "a warm-up and one counted sample");
}

#[test]
fn unusable_databases_are_refused_untouched() {
    let out = sshbench()
        .args(["run", "--db", "/etc/passwd/db.sqlite"])
        .output()
        .unwrap();
    assert!(
        text(&out.stderr).contains("not a directory"),
        "{}",
        text(&out.stderr)
    );

    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let newer = sshbench::store::SCHEMA_VERSION + 1;
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.pragma_update(None, "user_version", newer).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let out = run_with_db(&db, &["--mode", "connect"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("schema version {newer}, newer")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// Nothing listens at the destination: the run stops before it begins (no plan from
/// the client's lists, no sample, no run stored), saying what the connection met.
#[test]
fn an_unreachable_destination_fails_before_a_run_begins() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // Port 1 on loopback: nothing listens there.
    let out = run_with_db(
        &db,
        &["127.0.0.1:1", "--mode", "connect", "--timeout", "10"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    let said = "sshbench: error: cannot connect to 127.0.0.1:1: Connection refused";
    assert!(stderr.contains(said), "{stderr}");
    assert!(
        stderr.contains("\nhint: check the host name and port"),
        "{stderr}"
    );
    for never in ["warm-up", "run 1", "planning from the client's lists"] {
        assert!(!stderr.contains(never), "{never}: {stderr}");
    }
    let runs = sshbench().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(runs.status.success());
    assert_eq!(text(&runs.stdout), "");
    assert!(text(&runs.stderr).contains("no runs stored in"));
}

/// A destination where something other than an SSH server answers (a web server on
/// the port given): the login before the run meets what every sample would, so the run
/// stops there, with ssh's reason and the hint, and no run is stored.
#[test]
fn a_port_that_does_not_speak_ssh_fails_before_a_run_is_stored() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        }
    });
    let destination = format!("127.0.0.1:{port}");
    let out = run_with_db(&db, &[&destination, "--mode", "connect", "--timeout", "10"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("sshbench: error: kex_exchange_identification"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\nhint: check the host name and port"),
        "{stderr}"
    );
    for never in ["warm-up", "run 1"] {
        assert!(!stderr.contains(never), "{never}: {stderr}");
    }
    let runs = sshbench().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(text(&runs.stderr).contains("no runs stored in"));
}

/// A private runtime directory in `dir` (`XDG_RUNTIME_DIR`): its runs' registry of
/// their own, apart from the other tests' runs.
fn private_runtime(dir: &Path) -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let runtime = dir.join("runtime");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&runtime)
        .unwrap();
    runtime
}

/// Other processes that keep the CPUs busy during a run (a build, a backup) are said in
/// its answer and stored with it: its figures are lower and noisier than the machine's.
/// A real server on this machine (a container, a VM) is not blamed as "other processes":
/// its sshd's CPU cannot be told from theirs, so no such note is made.
#[test]
fn a_run_beside_busy_processes_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // A registry of its own: another test's run would be named instead.
    let runtime = private_runtime(dir.path());
    let spin = || {
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap()
    };
    let mut spinners = [spin(), spin()];
    let out = sshbench()
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["run", "--db"])
        .arg(dir.path().join("busy.sqlite"))
        .args(["--mode", "send", "--rounds", "2", "--ciphers", "aes128-ctr"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
        .output()
        .unwrap();
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let here = run_as_configured(sb.ssh_config(), dir.path().join("here.sqlite"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["--mode", "send", "--rounds", "2", "--ciphers", "aes128-ctr"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
        .output()
        .unwrap();
    for s in &mut spinners {
        s.kill().unwrap();
        s.wait().unwrap();
    }
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let words = common::words(&stdout);
    assert!(words.contains("note: other processes kept "), "{stdout}");
    assert!(words.contains("of this machine's "), "{stdout}");
    let show = common::stdout_of(&dir.path().join("busy.sqlite"), &["show"]);
    assert!(show.contains("other processes kept"), "{show}");
    let (stdout, stderr) = (text(&here.stdout), text(&here.stderr));
    assert!(here.status.success(), "{stderr}");
    assert!(stdout.contains("send "), "{stdout}");
    assert!(!stdout.contains("other processes"), "{stdout}");
}

/// `sshbench run -F CONFIG sshbench-sandbox --db DB`: the sandbox as a destination of the
/// user's own config.
fn run_as_configured(config: &Path, db: PathBuf) -> Command {
    let mut c = sshbench();
    c.args(["run", "-F"])
        .arg(config)
        .arg(sshbench::sandbox::ALIAS);
    c.arg("--db").arg(db);
    c
}

/// A run of `mode`, one round, with the ssh_config `config` (written into `dir`), that
/// must stop before it begins: its stderr (no run is stored).
fn stopped_as_configured(config: &str, dir: &Path, mode: &str) -> String {
    let cfg = dir.join("ssh_config");
    std::fs::write(&cfg, config).unwrap();
    let db = dir.join("stopped.sqlite");
    let out = run_as_configured(&cfg, db.clone())
        .args(["--mode", mode, "--rounds", "1"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!db.exists() || Store::open(&db).unwrap().runs().unwrap().is_empty());
    stderr
}

/// The sandbox's ssh_config and the known_hosts file it names.
fn config_and_known_hosts(sb: &sshbench::sandbox::Sandbox) -> (String, String) {
    let config = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let known = (config.lines())
        .find_map(|l| l.trim().strip_prefix("UserKnownHostsFile "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    (config, known)
}

/// A login that may only use sftp never runs sshbench's commands: a run of modes that
/// need them stops at its first sample, quoting the server, instead of failing ten in a
/// row. Connect goes on over an sftp session; a login that runs neither stops it too.
#[test]
fn a_login_that_runs_no_commands_stops_the_run_at_once_with_the_server_s_words() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    common::allow_sftp_alone(&sb);
    let dir = tempfile::tempdir().unwrap();
    let run = |mode: &str| {
        let out = run_as_configured(sb.ssh_config(), dir.path().join(format!("{mode}.sqlite")))
            .args(["--mode", mode, "--kex", "curve25519-sha256"])
            .args(["--hostkeys", "ssh-ed25519,rsa-sha2-256", "--rounds", "2"])
            .args(["--ciphers", "aes128-ctr,aes128-gcm@openssh.com"])
            .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let stopped = |(code, _, stderr): (Option<i32>, String, String), said: &str| {
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        assert!(
            stderr.contains("hint: sshbench runs short POSIX commands"),
            "{stderr}"
        );
        assert!(
            stderr.contains("`--mode connect,sftp-put,sftp-get`"),
            "{stderr}"
        );
        assert_eq!(stderr.matches("] warm-up").count(), 1, "{stderr}");
    };
    let sftp_only = "printed \"This service allows sftp connections only.\": this login does \
                     not run commands";
    stopped(run("send"), sftp_only);
    let (code, stdout, stderr) = run("connect");
    assert_eq!(code, Some(0), "{stderr}");
    let answer = common::words(&stdout);
    assert!(answer.contains("timed until an sftp session"), "{stdout}");
    assert!(
        stdout.contains("\nconnect  curve25519-sha256 + "),
        "{stdout}"
    );
    // A forced command overrides the sftp subsystem too.
    common::force_command(&sb, "echo nothing here; exit 3");
    stopped(
        run("connect"),
        "(status 3) before sshbench's command began and printed \"nothing here\"",
    );
}

/// A user's config that attaches every login to tmux (`RemoteCommand`, `RequestTTY yes`)
/// makes ssh refuse any command line ("Cannot execute command-line and remote
/// command"): sshbench's connections set both aside and every mode is measured.
#[test]
fn a_config_that_runs_a_remote_command_on_login_still_measures_every_mode() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ssh_config");
    let block = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let tmux = "  RemoteCommand tmux new -A -s main\n  RequestTTY yes\n";
    std::fs::write(&config, format!("{block}{tmux}")).unwrap();
    let out = run_as_configured(&config, dir.path().join("tmux.sqlite"))
        .args(["--mode", "connect,send,receive,echo,sftp-put-file"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .args([
            "--ciphers",
            "aes128-ctr",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
        ])
        .args(["--file-size", "2M", "--rounds", "2", "--seed", "1"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for mode in ["connect ", "send ", "receive ", "echo ", "sftp-put-file "] {
        let line = (stdout.lines().find(|l| l.starts_with(mode)))
            .unwrap_or_else(|| panic!("no {mode}line: {stdout}"));
        assert!(
            line.contains(": ") && !line.contains("not measured"),
            "{line}"
        );
    }
    assert!(!stderr.contains("remote command"), "{stderr}");
    // The server's channel window was read over such a connection too.
    let store = Store::open(&dir.path().join("tmux.sqlite")).unwrap();
    let run = store.run(1).unwrap().expect("run 1 stored");
    assert!(run.server_window.is_some_and(|w| w > 0), "{run:?}");
}

/// A key whose passphrase ssh would ask for (none in an agent) stops the run before it is
/// stored, with a hint that names the agent: sshbench never prompts.
#[test]
fn a_key_with_a_passphrase_and_no_agent_stops_before_a_run_with_the_way_out() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::config_with_another_key(&sb, dir.path(), "a passphrase");
    let db = dir.path().join("locked.sqlite");
    let out = run_as_configured(&cfg, db.clone())
        .env_remove("SSH_AUTH_SOCK")
        .args(["--mode", "connect,send", "--rounds", "1"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        stderr.contains(
            "hint: sshbench needs key-based login that works without prompts: a key \
             with a passphrase must be in ssh-agent (`ssh-add`)"
        ),
        "{stderr}"
    );
    assert!(!db.exists() || Store::open(&db).unwrap().runs().unwrap().is_empty());
    // The plan's notes (how connect and send would have been measured) are no news here.
    assert!(!stderr.contains("note: send: "), "{stderr}");
}

/// A server whose host key is not the one known_hosts holds for it (reinstalled, or
/// someone in between): the run stops before it begins with ssh's sentence naming the
/// host and what to check, never by accepting the new key.
#[test]
fn a_changed_host_key_stops_the_run_with_what_to_check() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other_host_key");
    common::login::keygen(&other, "");
    let public = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let key = common::login::ed25519_key(&public);
    let (config, known) = config_and_known_hosts(&sb);
    let changed = dir.path().join("known_hosts");
    let name = format!("[{}]:{}", sb.host(), sb.port());
    std::fs::write(&changed, format!("{name} {key}\n")).unwrap();
    let other_config = config.replace(&known, &changed.display().to_string());
    let stderr = stopped_as_configured(&other_config, dir.path(), "connect");
    let said = format!("sshbench: error: Host key for {name} has changed");
    assert!(stderr.contains(&said), "{stderr}");
    assert!(
        stderr.contains("hint: the server's host key is not the one your known_hosts holds"),
        "{stderr}"
    );
    let remove = format!("remove the old one (`ssh-keygen -R '{name}'`)");
    assert!(stderr.contains(&remove), "{stderr}");
    let kept = std::fs::read_to_string(&changed).unwrap();
    assert_eq!(kept, format!("{name} {key}\n"));
}

/// A HostKeyAlgorithms list in the user's ssh_config that puts a type first which
/// known_hosts does not hold for the server (it holds the RSA key): ssh reports a changed
/// key; the run says that the list, not the server, asked for another type.
#[test]
fn a_host_key_list_that_asks_for_another_type_is_told_apart_from_a_changed_key() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let (config, known) = config_and_known_hosts(&sb);
    let rsa: String = (std::fs::read_to_string(&known).unwrap().lines())
        .filter(|l| l.contains(" ssh-rsa "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!rsa.is_empty(), "no RSA host key in {known}");
    let only_rsa = dir.path().join("known_hosts");
    std::fs::write(&only_rsa, rsa).unwrap();
    let listed = config.replace(&known, &only_rsa.display().to_string())
        + "  HostKeyAlgorithms ssh-ed25519,rsa-sha2-256\n";
    let stderr = stopped_as_configured(&listed, dir.path(), "send");
    let said = "the server sent its ED25519 key, known_hosts holds its RSA key";
    assert!(stderr.contains(said), "{stderr}");
    assert!(
        stderr.contains("hint: ssh asked for another type of key than the one your known_hosts"),
        "{stderr}"
    );
}

/// ssh offering more keys than the server's MaxAuthTries (6) before the one it takes (as
/// an agent holding several keys does) is told to name that key alone.
#[test]
fn too_many_keys_before_the_right_one_are_told_to_name_it_alone() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let mut others = String::new();
    for i in 0..6 {
        let key = dir.path().join(format!("other_{i}"));
        common::login::keygen(&key, "");
        others += &format!("  IdentityFile \"{}\"\n", key.display());
    }
    let original = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let at = original.find("  IdentityFile").unwrap();
    let config = format!("{}{others}{}", &original[..at], &original[at..]);
    let stderr = stopped_as_configured(&config, dir.path(), "connect");
    assert!(
        stderr.contains("Too many authentication failures"),
        "{stderr}"
    );
    let hint = "hint: the server gave up before ssh offered the key it accepts: name that key \
                alone (`-o IdentitiesOnly=yes -o IdentityFile=KEY`";
    assert!(stderr.contains(hint), "{stderr}");
}

/// A run of two rounds of send and receive with aes128-ctr + hmac-sha2-256-etm, as
/// configured (with `extra` options), that succeeds.
fn aes_ctr_transfers(config: &Path, db: PathBuf, extra: &[&str]) -> Output {
    let out = run_as_configured(config, db)
        .args(extra)
        .args([
            "--mode",
            "send,receive",
            "--rounds",
            "2",
            "--ciphers",
            "aes128-ctr",
        ])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

/// The intervals the answer's rekey sentences name (`a rekey every 1.5 MiB`), in bytes.
fn rekey_intervals_said(words: &str) -> Vec<f64> {
    (words.split("a rekey every ").skip(1))
        .map(|said| {
            let size: Vec<&str> = said.splitn(3, ' ').collect();
            let unit = match size[1] {
                "KiB" => 1024.0,
                "MiB" => f64::from(1 << 20),
                "GiB" => f64::from(1 << 30),
                _ => panic!("not a size: {said}"),
            };
            size[0].parse::<f64>().unwrap() * unit
        })
        .collect()
}

/// A `RekeyLimit` below a sample's bytes puts rekeys inside its window: they are counted,
/// and the figure is the window's own rate (its stalls are in it), not that rate with
/// the same stalls spread in once more.
#[test]
fn rekeys_inside_a_window_are_counted_once() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rekey.sqlite");
    let out = aes_ctr_transfers(sb.ssh_config(), db.clone(), &["-o", "RekeyLimit=2M"]);
    let store = Store::open(&db).unwrap();
    let counted: Vec<_> = (store.samples(&[1]).unwrap().into_iter())
        .map(|s| s.sample)
        .filter(|s| s.window.is_some() && s.outcome.is_success())
        .collect();
    assert!(counted.len() >= 4, "{counted:?}");
    for s in &counted {
        let (w, r) = (s.window.unwrap(), s.rekey.expect("the rekeying recorded"));
        assert!(r.every <= 2 << 20, "{r:?}");
        // A rekey that began inside the window may end after it (its bytes were already
        // buffered): the window then holds one fewer. It never holds more than its bytes.
        let expected = w.bytes as f64 / r.every as f64;
        assert!(f64::from(r.within) <= expected.ceil() + 1.0, "{r:?} {w:?}");
        // The figure adds only the stalls the window was short of the average.
        let added = w.bytes as f64 / s.throughput().unwrap() - w.time.as_secs_f64();
        let short = (expected - f64::from(r.within)).max(0.0);
        assert!(
            added <= r.seconds * short + 1e-9,
            "{added} s added: {r:?} {w:?}"
        );
    }
    let held = counted
        .iter()
        .filter(|s| s.rekey.is_some_and(|r| r.within >= 1));
    assert!(
        held.count() >= 2,
        "no window's rekeys were counted: {counted:?}"
    );
    // The answer says what the rekeys cost and what gives it back: the limit, or the
    // sooner interval sends show (OpenSSH's sender rekeys early by its next packet's
    // bytes counted as blocks: 512 KiB with 32 KiB packets).
    let words = common::words(&text(&out.stdout));
    let said = rekey_intervals_said(&words);
    let mib = |b: &f64| b / f64::from(1 << 20);
    assert!(!said.is_empty(), "{words}");
    assert!(
        said.iter().all(|b| (1.0..=2.0).contains(&mib(b))),
        "{words}"
    );
    assert!(
        words.contains("a larger RekeyLimit or a quicker key exchange"),
        "{words}"
    );
}

/// A login shell whose start-up takes a while (a `~/.bashrc` that loads a version
/// manager; here a forced command that sleeps first) is measured once before the run and
/// noted with the time; a quick one is not.
#[test]
fn a_login_shell_slow_to_start_is_noted_with_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let run = |sb: &sshbench::sandbox::Sandbox, db: &str| {
        let out = run_as_configured(sb.ssh_config(), dir.path().join(db))
            .args([
                "--mode",
                "connect",
                "--rounds",
                "1",
                "--kex",
                "curve25519-sha256",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        common::words(&text(&out.stdout))
    };
    let slow = common::sandbox(sshbench::model::AlgoLists::new());
    common::force_command(&slow, "sleep 0.3; eval \\\"$SSH_ORIGINAL_COMMAND\\\"");
    let words = run(&slow, "slow.sqlite");
    let said = "note: the server's login shell takes about ";
    let ms: u64 = (words.split(said).nth(1))
        .and_then(|rest| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no note: {words}"));
    assert!((280..1500).contains(&ms), "{ms} ms: {words}");
    let quick = common::sandbox(sshbench::model::AlgoLists::new());
    assert!(!run(&quick, "quick.sqlite").contains(said));
}

/// `--hostkeys` on a server whose keys the user's known_hosts holds only one of (ssh
/// recorded the one it met first): the others fail ssh's check as a changed key would,
/// so they are left out with a note instead of stopping the run, and nothing is added
/// to known_hosts.
#[test]
fn host_keys_known_hosts_cannot_check_are_left_out_with_a_note() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let all = sb.dir().join("known_hosts");
    let known: String = (std::fs::read_to_string(&all).unwrap().lines())
        .filter(|l| l.contains(" ssh-ed25519 "))
        .map(|l| format!("{l}\n"))
        .collect();
    let mine = dir.path().join("known_hosts");
    std::fs::write(&mine, &known).unwrap();
    let block = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let block = block.replace(&all.display().to_string(), &mine.display().to_string());
    assert!(block.contains(&mine.display().to_string()), "{block}");
    let config = dir.path().join("ssh_config");
    std::fs::write(&config, block).unwrap();
    let out = run_as_configured(&config, dir.path().join("keys.sqlite"))
        .args([
            "--mode",
            "connect",
            "--kex",
            "curve25519-sha256",
            "--rounds",
            "2",
        ])
        .args(["--hostkeys", "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("\nconnect  curve25519-sha256 + ssh-ed25519: "),
        "{stdout}"
    );
    let words = common::words(&stdout);
    let note = "note: connect: ecdsa-sha2-nistp256, rsa-sha2-512 not measured: ssh could not \
                check the server's keys of those types against your known_hosts";
    assert!(words.contains(note), "{stdout}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), known);
}

/// Two runs at once share the machine's CPUs: the one that starts second warns at once,
/// and each one's answer (and stored notes) names the other's process, whichever began
/// first; a run alone says nothing of the kind.
#[test]
fn runs_that_measure_at_the_same_time_each_say_so() {
    let dir = tempfile::tempdir().unwrap();
    // Their own registry, apart from the other tests' runs.
    let runtime = private_runtime(dir.path());
    let run = |name: &str, rounds: &str, mode: &str, runtime: &Path| {
        let mut c = sshbench();
        c.env("XDG_RUNTIME_DIR", runtime)
            .args(["run", "--db"])
            .arg(dir.path().join(format!("{name}.sqlite")))
            .args([
                "--mode",
                mode,
                "--rounds",
                rounds,
                "--ciphers",
                "aes128-ctr",
            ])
            .args([
                "--macs",
                "hmac-sha2-256-etm@openssh.com",
                "--kex",
                "curve25519-sha256",
            ])
            .args(["--hostkeys", "ssh-ed25519"]);
        c
    };
    let mut first = run("first", "8", "connect,send", &runtime)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut progress = BufReader::new(first.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("] warm-up") {
        line.clear();
        assert!(
            progress.read_line(&mut line).unwrap() > 0,
            "the first run ended"
        );
    }
    let second = run("second", "1", "send", &runtime)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (a, b) = (first.id(), second.id());
    let second = second.wait_with_output().unwrap();
    std::thread::spawn(move || std::io::copy(&mut progress, &mut std::io::sink()));
    let first_out = first.wait_with_output().unwrap();
    assert!(first_out.status.success());
    assert!(second.status.success(), "{}", text(&second.stderr));
    let note = |pid: u32| format!("note: another sshbench run (process {pid}) was measuring");
    assert!(
        text(&first_out.stdout).contains(&note(b)),
        "{}",
        text(&first_out.stdout)
    );
    assert!(
        text(&second.stdout).contains(&note(a)),
        "{}",
        text(&second.stdout)
    );
    let warned = format!("warning: another sshbench run (process {a}) is measuring");
    assert!(
        text(&second.stderr).contains(&warned),
        "{}",
        text(&second.stderr)
    );
    // Stored with the run: `show` says it under "How the runs measured".
    let show = common::stdout_of(&dir.path().join("first.sqlite"), &["show"]);
    assert!(show.contains(&format!("process {b}")), "{show}");
    // Alone (both runs gone, their files with them): no such note.
    assert!(!runtime.join("sshbench").exists());
    let alone = run("alone", "1", "send", &runtime).output().unwrap();
    assert!(alone.status.success());
    assert!(
        !text(&alone.stdout).contains("another sshbench"),
        "{}",
        text(&alone.stdout)
    );
}

/// On a login that may only use sftp, the sftp workloads are still measured: their
/// directory is made, counted and removed with sftp itself, the raw streams say why
/// they are missing, and the ciphers are recommended by what sftp moved.
#[test]
fn a_login_that_allows_sftp_alone_still_measures_its_sftp_workloads() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    common::allow_sftp_alone(&sb);
    let dir = tempfile::tempdir().unwrap();
    let out = run_as_configured(sb.ssh_config(), dir.path().join("sftp.sqlite"))
        .args([
            "--mode",
            "connect,sftp-put,sftp-get",
            "--kex",
            "curve25519-sha256",
        ])
        .args(["--hostkeys", "ssh-ed25519"])
        .args(["--ciphers", "aes128-ctr,aes128-gcm@openssh.com"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
        .args(["--file-size", "2M", "--tree", "150x2K", "--rounds", "2"])
        .args(["--streams", "2", "--seed", "1"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // This seed warms connect up first: its sftp session goes through before the raw
    // streams meet the login, which must still give them up.
    let at = |s: &str| stderr.find(s).unwrap_or_else(|| panic!("{s}: {stderr}"));
    assert!(at("] warm-up connect ") < at("] warm-up send "), "{stderr}");
    let gone = "so send, receive cannot be measured: the run goes on with connect, sftp-put-file";
    assert!(stderr.contains(gone), "{stderr}");
    // Said once: in the answer (below), not also among the progress lines.
    assert!(!stderr.contains("timed until an sftp session"), "{stderr}");
    assert!(
        stdout.contains("\nconnect  curve25519-sha256 + ssh-ed25519: "),
        "{stdout}"
    );
    // No raw stream has a figure, so there is nothing to run in parallel.
    let none = "parallel: not measured: no send or receive suite has a figure to stream";
    assert!(stderr.contains(none), "{stderr}");
    assert!(!stderr.contains("failed"), "{stderr}");
    let said = "not measured: the server ended the session (status 1) before sshbench's command";
    // send's line says why; receive's, for the same reason, says "as above".
    assert_eq!(stdout.matches(said).count(), 1, "{stdout}");
    assert!(
        stdout.contains("\nreceive  not measured: as above\n"),
        "{stdout}"
    );
    for mode in [
        "sftp-put-file",
        "sftp-put-tree",
        "sftp-get-file",
        "sftp-get-tree",
    ] {
        assert!(
            stdout.contains(&format!("\n{mode} aes128-")),
            "{mode}: {stdout}"
        );
    }
    assert!(stdout.contains("    Ciphers aes128-"), "{stdout}");
    // The block is ranked by the workloads here, so it points to no other ranking.
    assert!(!stdout.contains("ranked by the raw streams"), "{stdout}");
    // The answer itself says how connect was timed (stderr's notes go with -q).
    let answer = common::words(&stdout);
    let timed = "note: connect: this login does not run commands, so each connection is timed \
                 until an sftp session";
    assert!(answer.contains(timed), "{stdout}");
    let summary = sshbench()
        .args(["summary", "--db"])
        .arg(dir.path().join("sftp.sqlite"))
        .output()
        .unwrap();
    let summary = text(&summary.stdout);
    assert!(
        summary.contains("\nreceive: not measured: the server ended the session (status 1)"),
        "{summary}"
    );
    // `show` says later how connect was timed, as the run's end did.
    let show = sshbench()
        .args(["show", "--db"])
        .arg(dir.path().join("sftp.sqlite"))
        .output()
        .unwrap();
    let show = text(&show.stdout);
    let words = common::words(&show);
    let how = "How the runs measured: run 1: connect: this login does not run commands, so \
               each connection is timed until an sftp session";
    assert!(words.contains(how), "{show}");
    // Everything sftp made in its start directory is gone.
    let left: Vec<_> = std::fs::read_dir(sb.dir().join("home")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn run_output_snapshot_with_mock_transport_and_runs_listing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mock = ["localhost", "--mock-transport", "--seed", "1"];
    let out = run_with_db(
        &db,
        &[
            &mock[..],
            &["--kex", "curve25519-sha256,ecdh-sha2-nistp256", "--ciphers"],
            &["aes128-ctr,aes128-gcm@openssh.com", "--macs"],
            &["hmac-sha1,umac-64-etm@openssh.com"],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    insta::assert_snapshot!(text(&out.stdout));
    // `--tables` ends with show's tables instead of the headline.
    let tables = run_with_db(
        &db,
        &[&mock[..], &["--kex", "curve25519-sha256", "--tables"]].concat(),
    );
    assert!(tables.status.success(), "{}", text(&tables.stderr));
    let t = text(&tables.stdout);
    assert!(t.contains("send: ") && t.contains("┆ MB/s"), "{t}");
    assert!(!t.contains("Recommended ~/.ssh/config"), "{t}");

    let list = sshbench()
        .arg("runs")
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let listing = text(&list.stdout);
    assert!(
        listing.contains("complete") && listing.contains("localhost"),
        "{listing}"
    );
    let del = sshbench()
        .args(["runs", "--delete", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(del.status.success(), "{}", text(&del.stderr));
    let del = sshbench()
        .args(["runs", "--delete", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        text(&del.stderr).contains("no run 1"),
        "{}",
        text(&del.stderr)
    );
}

/// Runs of the sandbox in different setups (here: both ends on shared CPUs against the
/// default split) measure different things: each is a destination of its own, which
/// reports never pool unless asked to compare them.
#[test]
fn sandbox_setups_are_stored_and_reported_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let connect = [
        "-q",
        "--mode",
        "connect",
        "--kex",
        "curve25519-sha256",
        "--hostkeys",
        "ssh-ed25519",
        "--rounds",
        "2",
    ];
    for extra in [&[][..], &["--sandbox-cpus", "shared"][..]] {
        let out = run_with_db(&db, &[&connect[..], extra].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let listing = text(
        &sshbench()
            .arg("runs")
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap()
            .stdout,
    );
    assert!(listing.contains("local sandbox (shared CPUs)"), "{listing}");
    let show = |args: &[&str]| -> serde_json::Value {
        let out = sshbench()
            .args(["show", "--format", "json", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let samples = |v: &serde_json::Value| v["suites"][0]["n"].as_u64().unwrap();
    // By default, the newest run's destination: the shared setup alone.
    let newest = show(&[]);
    assert_eq!(newest["destination"], "local sandbox (shared CPUs)");
    assert_eq!(newest["runs"], serde_json::json!([2]));
    assert_eq!(samples(&newest), 2, "{newest}");
    let default = show(&["sandbox"]);
    assert_eq!(default["destination"], "local sandbox");
    assert_eq!(default["runs"], serde_json::json!([1]));
    assert_eq!(samples(&default), 2, "{default}");
    let shared = show(&["sandbox (shared CPUs)"]);
    assert_eq!(shared["runs"], serde_json::json!([2]));
    let cmp = sshbench()
        .args(["compare", "sandbox", "sandbox (shared CPUs)", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(cmp.status.success(), "{}", text(&cmp.stderr));
    assert!(
        text(&cmp.stdout).contains("local sandbox (shared CPUs)"),
        "{}",
        text(&cmp.stdout)
    );
}

/// A sandbox run that may use one CPU (a `taskset -c`, a container's cpuset) cannot keep
/// its two ends apart: it says so, and is stored as the shared setup it measured.
#[cfg(target_os = "linux")]
#[test]
fn a_sandbox_allowed_one_cpu_shares_it_and_is_stored_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cpu = sshbench::sys::affinity::allowed().unwrap()[0];
    let mut cmd = sshbench();
    sshbench::sys::affinity::pin_command(&mut cmd, &[cpu]).unwrap();
    let out = cmd
        .args(["run", "--mode", "connect", "--kex", "curve25519-sha256"])
        .args(["--hostkeys", "ssh-ed25519", "--rounds", "2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let note = format!(
        "note: this process may run on CPU {cpu} only: the sandbox's sshd and ssh run on the same CPUs"
    );
    assert!(stderr.contains(&note), "{note:?} missing:\n{stderr}");
    assert!(!stderr.contains("sshd on CPU"), "{stderr}");
    let runs = Store::open(&db).unwrap().runs().unwrap();
    assert_eq!(runs[0].destination, "local sandbox (shared CPUs)");
    assert_eq!(
        runs[0].options.sandbox_cpus,
        sshbench::model::Placement::Shared
    );
}

/// ssh's `-p` and `-i` reach a server whose port and key no ssh_config names: without
/// them the same run fails before it begins.
#[test]
fn ssh_s_port_and_identity_flags_reach_the_server() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ssh_config");
    let known = sb.dir().join("known_hosts");
    std::fs::write(
        &config,
        format!(
            "Host *\n  User {}\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
             UserKnownHostsFile \"{}\"\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking yes\n  PasswordAuthentication no\n  \
             KbdInteractiveAuthentication no\n",
            sb.user(),
            known.display()
        ),
    )
    .unwrap();
    let run = |flags: &[&str], destination: &str| {
        let db = db_in(&dir);
        let _ = std::fs::remove_file(&db);
        sshbench()
            .arg("run")
            .arg("-F")
            .arg(&config)
            .args(flags)
            .arg(destination)
            .args(["--mode", "connect", "--kex", "curve25519-sha256"])
            .args(["--hostkeys", "ssh-ed25519", "--rounds", "1", "--db"])
            .arg(&db)
            .output()
            .unwrap()
    };
    let port = sb.port().to_string();
    let key = sb.client_key().to_str().unwrap();
    let out = run(&["-p", &port, "-i", key], sb.host());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("port {port})")),
        "{}",
        text(&out.stderr)
    );
    // A destination's own port wins over -p.
    let out = run(&["-p", "1", "-i", key], &format!("{}:{port}", sb.host()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Either flag left out, the run cannot begin: no key, or ssh's own port 22.
    for (flags, why) in [
        (["-p", &port], "Permission denied (publickey)"),
        (["-i", key], "port 22"),
    ] {
        let out = run(&flags, sb.host());
        let stderr = text(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(why),
            "{flags:?}: {stderr}"
        );
    }
}

/// A reader that goes away (`sshbench run 2>&1 | head`) does not end the run: it goes
/// on measuring, stores every sample and exits 0.
#[test]
fn a_run_whose_output_is_closed_measures_and_stores_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut child = sshbench()
        .args(["run", "--mode", "connect", "--kex", "curve25519-sha256"])
        .args(["--hostkeys", "ssh-ed25519", "--rounds", "2", "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    assert!(child.wait().unwrap().success());
    let store = Store::open(&db).unwrap();
    let run = &store.runs().unwrap()[0];
    assert_eq!(run.status, RunStatus::Complete);
    // A warm-up and two rounds of the one pair.
    assert_eq!(store.samples(&[run.id]).unwrap().len(), 3);
}

/// `sshbench sandbox` under one CPU says that its sshd shares it with the clients.
#[test]
fn a_manual_sandbox_allowed_one_cpu_says_it_shares_it() {
    use std::io::Read;
    let cpu = sshbench::sys::affinity::allowed().unwrap()[0];
    let mut cmd = sshbench();
    sshbench::sys::affinity::pin_command(&mut cmd, &[cpu]).unwrap();
    let mut child = cmd
        .arg("sandbox")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.trim().ends_with("ssh_config"), "{first}");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{stderr}");
    let note = format!(
        "note: this process may run on CPU {cpu} only: the sandbox's sshd and its clients run on the same CPUs"
    );
    assert!(stderr.contains(&note), "{note:?} missing:\n{stderr}");
    assert!(!stderr.contains("sshd on CPU"), "{stderr}");
}

#[test]
fn precision_and_budget_stop_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // The mock's figures are identical every round: the interval is 0 after 2 rounds.
    let out = run_with_db(
        &db,
        &[
            "localhost",
            "--mock-transport",
            "--mode",
            "connect",
            "--kex",
            "curve25519-sha256",
            "--rounds",
            "2",
            "--precision",
            "1%",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let store = Store::open(&db).unwrap();
    assert_eq!(store.samples(&[]).unwrap().len(), 3);
    // Against the sandbox, one real sample outlasts a 1 ms budget.
    let out = run_with_db(
        &db,
        &[
            "--budget",
            "1ms",
            "--mode",
            "connect",
            "--kex",
            "curve25519-sha256,ecdh-sha2-nistp256",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("time budget reached"),
        "{}",
        text(&out.stderr)
    );
    let runs = store.runs().unwrap();
    assert_eq!((runs[1].status.as_str(), runs[1].samples), ("budget", 1));
}

#[test]
fn a_default_run_races_and_show_says_why_each_suite_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // 3DES moves a twentieth of what AES-GCM does here: usually apart after the first
    // pass.
    let out = run_with_db(
        &db,
        &[
            "--mode",
            "send",
            "--sample-time",
            "50ms",
            "--ciphers",
            "aes128-gcm@openssh.com,3des-cbc",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("× 3 rounds, then more for those not told apart from the best"),
        "{stderr}"
    );
    let store = Store::open(&db).unwrap();
    let run = &store.runs().unwrap()[0];
    let reasons: Vec<(String, String, u32)> = (run.stops.iter())
        .map(|(item, stop)| {
            let cipher = run.plan[*item].suite.cipher.clone().unwrap();
            (cipher, stop.reason.to_string(), stop.round)
        })
        .collect();
    // A busy machine may need more rounds to tell them apart (or run out of budget);
    // whenever the race ended, both stopped then, for the reason that round implies. A
    // nearly spent budget may admit only one of them to its last round.
    let last = reasons[0].1.clone();
    let round = reasons.iter().map(|r| r.2).max().unwrap();
    // Should it fail: each counted sample's item, round, outcome and rate.
    let samples = store.samples(&[run.id]).unwrap();
    let seen: Vec<(usize, u32, String, Option<f64>)> = (samples.iter())
        .filter(|s| s.round > 0)
        .map(|s| {
            let rate = s.sample.throughput().map(|r| r / 1e6);
            (s.item, s.round, format!("{:?}", s.sample.outcome), rate)
        })
        .collect();
    // Rarely (seen once, on a loaded machine) the two stay tied to the last round
    // --max-rounds allows: then both stop as `rounds` there.
    let ran_on = (last == "budget" && round > 3) || (last == "rounds" && round == 20);
    assert!(
        round >= 3 && (last == "separated" || ran_on),
        "{reasons:?} {seen:?}"
    );
    let behind = if round == 3 { "dropped" } else { last.as_str() };
    let labels: Vec<(&str, &str)> = (reasons.iter())
        .map(|(cipher, why, _)| (cipher.as_str(), why.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("aes128-gcm@openssh.com", last.as_str()),
            ("3des-cbc", behind)
        ]
    );
    // That last round may also be the one that parts them (stopped as separated).
    let slack = u32::from(round > 3);
    assert!(reasons.iter().all(|r| r.2 + slack >= round), "{reasons:?}");
    // Nothing was measured after the race ended.
    assert_eq!(samples.iter().map(|s| s.round).max(), Some(round));
    let show = sshbench().args(["show", "--db"]).arg(&db).output().unwrap();
    let table = text(&show.stdout);
    let stops = reasons.iter().map(|(_, why, n)| format!("{why} after {n}"));
    for want in std::iter::once("Stopped".to_string()).chain(stops) {
        assert!(table.contains(&want), "{want:?} missing:\n{table}");
    }
    // A fixed design (`--rounds`) records no stops, and show has no such column.
    let fixed = run_with_db(
        &db,
        &[
            "--mode",
            "send",
            "--rounds",
            "1",
            "--sample-time",
            "50ms",
            "--ciphers",
            "aes128-gcm@openssh.com",
        ],
    );
    assert!(fixed.status.success(), "{}", text(&fixed.stderr));
    assert!(store.runs().unwrap()[1].stops.is_empty());
    let show = sshbench()
        .args(["show", "--run", "2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!text(&show.stdout).contains("Stopped"));
}

/// A user this test added, removed with its home when the test ends (passed or not), so
/// that the machine's users are left as they were.
struct UserMade(&'static str);

impl Drop for UserMade {
    fn drop(&mut self) {
        let _ = (Command::new("userdel").args(["--remove", self.0]))
            .stderr(Stdio::null())
            .status();
    }
}

/// The sandbox also works for an ordinary user (no privilege separation, own keys).
#[test]
fn sandbox_runs_as_an_ordinary_user() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd;
    let mut _made = None;
    if nix::unistd::geteuid().is_root() {
        let user = "sshbench-test";
        if nix::unistd::User::from_name(user).unwrap().is_none() {
            let st = Command::new("useradd")
                .args(["--create-home", "--shell", "/bin/sh", user])
                .status()
                .unwrap();
            assert!(st.success(), "useradd {user}");
            _made = Some(UserMade(user));
        }
        let u = nix::unistd::User::from_name(user).unwrap().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(u.uid.as_raw()), Some(u.gid.as_raw())).unwrap();
        cmd = Command::new("setpriv");
        cmd.args([
            "--reuid",
            user,
            "--regid",
            &u.gid.to_string(),
            "--init-groups",
            "--",
        ])
        .arg(env!("CARGO_BIN_EXE_sshbench"))
        .env("HOME", &u.dir)
        .env("USER", user)
        .env_remove("TMPDIR");
    } else {
        cmd = sshbench();
    }
    let out = cmd
        .arg("run")
        .arg("--db")
        .arg(db_in(&dir))
        .args([
            "--rounds",
            "1",
            "--sample-time",
            "20ms",
            "--mode",
            "send,connect",
            "--ciphers",
            "aes128-gcm@openssh.com",
        ])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stdout.contains("failed"), "{stdout}\n{stderr}");
    assert!(stdout.contains("aes128-gcm@openssh.com"), "{stdout}");
}

/// Completions for every shell and the manual page come from the clap definitions and
/// name every subcommand.
#[test]
fn completions_and_man_page_cover_every_subcommand() {
    let subcommands = [
        "run",
        "algos",
        "runs",
        "show",
        "summary",
        "recommend",
        "report",
        "compare",
        "sandbox",
        "completions",
        "man",
    ];
    let output = |args: &[&str]| {
        let out = sshbench().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = output(&["completions", shell]);
        for sub in subcommands {
            assert!(script.contains(sub), "{shell} completions lack {sub}");
        }
        assert!(script.contains("ciphers"), "{shell}: no run options");
    }
    let man = output(&["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH sshbench"),
        "not roff"
    );
    for sub in subcommands {
        let heading = format!(".SH \"SSHBENCH {}\"", sub.to_uppercase());
        assert!(man.contains(&heading), "man page lacks {heading}");
    }
    assert!(
        man.contains("\\-\\-order"),
        "man page lacks recommend's options"
    );
}

/// A run whose `--kex` leaves out the post-quantum key exchange the client prefers
/// (sntrup761x25519, mlkem768x25519): the recommendation keeps it, unmeasured, first
/// for its grade (last with `--order speed`), so its line never takes away what ssh
/// has by default; the run's own answer writes it too.
#[test]
fn recommend_keeps_a_better_grade_the_run_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let measured = "curve25519-sha256,ecdh-sha2-nistp256";
    let out = run_with_db(
        &db,
        &["--mode", "connect", "--rounds", "2", "--kex", measured],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let g = Command::new("ssh")
        .args(["-G", "127.0.0.1"])
        .output()
        .unwrap();
    let resolved = text(&g.stdout);
    let first = (resolved.lines())
        .find_map(|l| l.strip_prefix("kexalgorithms "))
        .and_then(|l| l.split(',').next())
        .unwrap()
        .to_string();
    assert!(first.contains("x25519-sha"), "not post-quantum: {first}");
    // The run's answer may cut the list to fit, and write it ahead of ssh's own (`^`).
    let kex_line = |answer: &str| {
        (answer.lines())
            .find_map(|l| l.trim().strip_prefix("KexAlgorithms "))
            .unwrap_or_else(|| panic!("no KexAlgorithms line: {answer}"))
            .trim_start_matches('^')
            .split(',')
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let in_run = kex_line(&stdout);
    assert_eq!(in_run[0], first, "{stdout}");
    assert!(
        stdout.contains("# unmeasured names kept for their grade"),
        "{stdout}"
    );
    let recommend = |order: &str| {
        let out = (sshbench().args(["recommend", "--for", "connect", "--order", order]))
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let by_grade = recommend("grade");
    let names = kex_line(&by_grade);
    assert_eq!(names[0], first, "{by_grade}");
    assert!(
        names.iter().any(|n| n == "ecdh-sha2-nistp256"),
        "{by_grade}"
    );
    let why = format!("{first}, ");
    assert!(by_grade.contains(&why), "{by_grade}");
    for said in ["not measured (--kex left ", "kept first for "] {
        assert!(by_grade.contains(said), "{said}: {by_grade}");
    }
    let by_speed = recommend("speed");
    let names = kex_line(&by_speed);
    assert!(measured.contains(&names[0]), "{by_speed}");
    assert!(names.contains(&first), "{by_speed}");
    assert!(by_speed.contains("kept last for "), "{by_speed}");
    // The fleet's block keeps it as each host's own does.
    let fleet = (sshbench().args(["recommend", "--fleet", "local*", "--db"]))
        .arg(&db)
        .output()
        .unwrap();
    let fleet = text(&fleet.stdout);
    assert_eq!(kex_line(&fleet)[0], first, "{fleet}");
    assert!(fleet.contains("kept first for its grade"), "{fleet}");
}

/// The sandbox's block is `Host *`: a HostKeyAlgorithms list there would apply to every
/// server, and ssh given a list no longer prefers the key type known_hosts holds for
/// each, so a server known by another type would be refused. The line is a comment in
/// `recommend`, the run's answer and the fleet's block, and in the server's lines, where
/// it would refuse clients that know the server by a type it leaves out.
#[test]
fn a_block_for_every_server_leaves_host_key_algorithms_as_a_comment() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let out = run_with_db(
        &db,
        &[
            "--mode",
            "connect",
            "--rounds",
            "2",
            "--kex",
            "curve25519-sha256",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let lines_with = |answer: &str, keyword: &str| -> Vec<String> {
        (answer.lines())
            .filter(|l| l.contains(keyword))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let held = |answer: &str| {
        let host_keys = lines_with(answer, "HostKeyAlgorithms ssh-");
        assert!(!host_keys.is_empty(), "{answer}");
        for l in host_keys {
            assert!(l.starts_with('#'), "not a comment: {l}\n{answer}");
        }
        // The other lists stay set.
        assert!(
            lines_with(answer, "KexAlgorithms ")
                .iter()
                .any(|l| !l.starts_with('#')),
            "{answer}"
        );
    };
    held(&stdout);
    let view = |args: &[&str]| {
        let out = (sshbench().args(args).arg("--db").arg(&db))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let recommend = view(&["recommend", "--for", "connect"]);
    let (client, server) = recommend.split_once("sshd_config").unwrap();
    held(client);
    assert!(client.contains("# left as a comment: with a list, ssh stops preferring"));
    // The server's list would refuse clients that know it by a type left out.
    held(server);
    held(&view(&["recommend", "--fleet", "local*"]));
}

/// The run's answer cuts a list that does not fit 100 columns. Pasted as it is into an
/// ssh_config, a cut list must refuse nothing: `^` puts its names ahead of the client's
/// own, which all stay (ssh itself resolves the pasted block here).
#[test]
fn the_answers_cut_lists_refuse_nothing_the_client_would_take() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let kex = "sntrup761x25519-sha512@openssh.com,curve25519-sha256,ecdh-sha2-nistp256,\
               ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group16-sha512";
    let args = ["--mode", "connect", "--rounds", "1", "--kex", kex];
    let out = run_with_db(&db, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let block: Vec<&str> = (stdout.lines())
        .skip_while(|l| !l.starts_with("Host "))
        .take_while(|l| l.starts_with("Host ") || l.starts_with(' ') || l.starts_with('#'))
        .collect();
    let cut = (block.iter())
        .find_map(|l| l.trim().strip_prefix("KexAlgorithms ^"))
        .unwrap_or_else(|| panic!("no cut KexAlgorithms line: {stdout}"));
    assert!(stdout.contains("# ^: a list cut to fit"), "{stdout}");
    let config = dir.path().join("config");
    std::fs::write(&config, block.join("\n") + "\n").unwrap();
    let resolved = |args: &[&str]| {
        let g = Command::new("ssh").args(args).output().unwrap();
        assert!(g.status.success(), "{args:?}: {}", text(&g.stderr));
        let g = text(&g.stdout);
        let list = g.lines().find_map(|l| l.strip_prefix("kexalgorithms "));
        let list = list.unwrap_or_else(|| panic!("{g}"));
        list.split(',').map(str::to_string).collect::<Vec<_>>()
    };
    let pasted = resolved(&["-F", config.to_str().unwrap(), "-G", "127.0.0.1"]);
    let unforced = resolved(&["-F", "/dev/null", "-G", "127.0.0.1"]);
    let ahead: Vec<&str> = cut.split(',').collect();
    assert_eq!(pasted[..ahead.len()], ahead[..], "{pasted:?}");
    for name in &unforced {
        assert!(pasted.contains(name), "{name} refused: {pasted:?}");
    }
}

/// A server's own `RekeyLimit` is not in the client's log of its limits, but the rekeys it
/// starts are: the transfers record their interval, and the answer names it as what sets
/// the rate.
#[test]
fn a_server_s_small_rekey_limit_is_seen_in_its_rekeys() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let server = common::sshd_beside(&sb, dir.path(), "RekeyLimit 1M");
    let db = dir.path().join("rekey.sqlite");
    let out = aes_ctr_transfers(&server.ssh_config, db.clone(), &[]);
    // Near the server's 1 MiB: what it sends rekeys 512 KiB early (OpenSSH counts its next
    // 32 KiB packet's bytes as blocks), what it receives a little late (the bytes already
    // on their way); not the client's 64 GiB, unless a sample's session carried no period
    // alone.
    let near = |bytes: f64| (0.4..=3.0).contains(&(bytes / f64::from(1 << 20)));
    let store = Store::open(&db).unwrap();
    let samples = store.samples(&[1]).unwrap();
    for mode in [sshbench::model::Mode::Send, sshbench::model::Mode::Receive] {
        let recorded: Vec<u64> = (samples.iter())
            .filter(|s| s.sample.mode == mode)
            .filter_map(|s| Some(s.sample.rekey?.every))
            .collect();
        let seen = recorded.iter().filter(|&&e| near(e as f64)).count();
        let unseen = recorded.iter().filter(|&&e| e == 64 << 30).count();
        assert!(
            seen >= 1 && seen + unseen == recorded.len(),
            "{mode:?}: {recorded:?}"
        );
    }
    let words = common::words(&text(&out.stdout));
    for mode in ["send", "receive"] {
        let line = format!("{mode} aes128-ctr + hmac-sha2-256-etm@openssh.com: ");
        let said = words
            .split(&line)
            .nth(1)
            .unwrap_or_else(|| panic!("{words}"));
        assert!(
            said.contains("limited by rekeying a rekey every "),
            "{mode}: {words}"
        );
        let every = rekey_intervals_said(said)[0];
        assert!(near(every), "{mode}: {every}: {words}");
    }
    assert!(words.contains("limited by its rekeys"), "{words}");
}

/// `--ssh` for two clients: the ssh on PATH and a copy of it in `dir` (another program
/// of the same version).
fn two_clients(dir: &tempfile::TempDir) -> String {
    let system = std::process::Command::new("sh")
        .args(["-c", "command -v ssh"])
        .output()
        .unwrap();
    let copy = dir.path().join("ssh-copy");
    std::fs::copy(text(&system.stdout).trim(), &copy).unwrap();
    format!("ssh,{}", copy.display())
}

/// Two clients in one run (`--ssh`, here the system's ssh and a copy of it): every
/// suite through each, stored per client; an answer per client and which is fastest;
/// `compare` takes two clients of the run. Bad `--ssh` values are refused first.
#[test]
fn two_clients_are_measured_side_by_side_and_reported_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let clients = two_clients(&dir);
    let mock = ["localhost", "--mock-transport", "--seed", "1", "-q"];
    let narrow = [
        "--kex",
        "curve25519-sha256",
        "--ciphers",
        "aes128-ctr,aes128-gcm@openssh.com",
    ];
    let out = run_with_db(&db, &[&mock[..4], &narrow, &["--ssh", &clients]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The plan says how its work grows with the clients.
    let plan = text(&out.stderr);
    assert!(plan.contains(" through the 2 clients) × "), "{plan}");
    let said = text(&out.stdout);
    assert_eq!(
        said.matches("destination: localhost (ssh OpenSSH_").count(),
        2,
        "{said}"
    );
    assert!(
        said.contains(" #1) (run 1;") && said.contains(" #2) (run 1;"),
        "{said}"
    );
    assert!(said.contains("Which client is fastest"), "{said}");
    // Every planned suite was measured through each client, and stored as such.
    let store = Store::open(&db).unwrap();
    let (runs, samples) = store.select(&Default::default()).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].plan, runs[1].plan);
    let of = |c: u8| samples.iter().filter(|s| s.client == c).count();
    assert!(of(0) > 0 && of(0) == of(1), "{} and {}", of(0), of(1));
    drop(store);
    let compare = sshbench()
        .args(["compare", "run:1/1", "run:1/2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    assert!(
        text(&compare.stdout).contains("#2"),
        "{}",
        text(&compare.stdout)
    );
    let whole = sshbench()
        .args(["compare", "run:1", "run:1/2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        text(&whole.stderr).contains("holds the results of 2 clients"),
        "{}",
        text(&whole.stderr)
    );

    for (given, says) in [
        ("/nonexistent/ssh", "--ssh /nonexistent/ssh: "),
        ("no-such-ssh-program", "no such program on PATH"),
        ("ssh,ssh", "names"),
    ] {
        let out = run_with_db(&db, &[&mock[..], &["--ssh", given]].concat());
        assert!(
            !out.status.success() && text(&out.stderr).contains(says),
            "{}",
            text(&out.stderr)
        );
    }
    let fleet = run_with_db(&db, &["a", "b", "--mock-transport", "--ssh", &clients]);
    assert!(
        text(&fleet.stderr).contains("a fleet run takes one --ssh"),
        "{}",
        text(&fleet.stderr)
    );
}

/// `kill -9` in a run of two clients: `--resume` runs each client's remaining slots
/// through that client (its program kept in the run's sealed options), every slot once.
#[test]
fn a_run_of_two_clients_resumes_through_both() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let clients = two_clients(&dir);
    let mut child = sshbench()
        .args(["run", "--db"])
        .arg(&db)
        .args(CONNECT_SWEEP)
        .args(["--ssh", &clients])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&db, 8, Duration::from_secs(60));
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::open(&db).unwrap();
    let run = &store.runs().unwrap()[0];
    let before = store.samples(&[run.id]).unwrap();
    assert!(
        before.len() < run.plan.len() * 2,
        "the run finished before the kill"
    );
    drop(store);
    let out = run_with_db(&db, &["--resume", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Which client is fastest"),
        "{}",
        text(&out.stdout)
    );
    let store = Store::open(&db).unwrap();
    let after = store.samples(&[run.id]).unwrap();
    let slots: std::collections::BTreeSet<(usize, u32)> =
        after.iter().map(|s| (s.item, s.round)).collect();
    assert_eq!(slots.len(), after.len(), "every slot once");
    // Each client's items were measured through it: its samples say so.
    for s in after.iter().filter(|s| s.item < run.plan.len()) {
        assert_eq!(s.sample.suite.client, run.plan[s.item].suite.client);
    }
    let of = |c: u8| {
        after
            .iter()
            .filter(|s| s.round > 0 && s.sample.suite.client == c)
            .count()
    };
    assert!(
        of(0) >= run.plan.len() && of(1) >= run.plan.len() / 2,
        "{} {}",
        of(0),
        of(1)
    );
    assert_eq!(store.runs().unwrap()[0].status, RunStatus::Complete);
}

/// `exec` on the sandbox: commands over a master well under fresh ones, the
/// ControlMaster block from `recommend --for commands`, and nothing left in the run's
/// temp directory (the sandbox, the masters' sockets and scratch) once it is over.
#[test]
fn exec_compares_fresh_connections_with_a_master_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let db = db_in(&dir);
    let out = sshbench()
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--mode",
            "exec",
            "--kex",
            "curve25519-sha256",
            "--rounds",
            "2",
        ])
        .args(["-q", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("over one ControlMaster connection: "),
        "{stdout}"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let rec = sshbench()
        .args(["recommend", "--for", "commands", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&rec.stdout).unwrap();
    let gain = v["commands"]["gain"].as_f64().expect("both ways measured");
    assert!(gain > 2.0, "a master's command against a fresh one: {gain}");
    let rec = sshbench()
        .args(["recommend", "--for", "commands", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let block = text(&rec.stdout);
    for line in [
        "ControlMaster auto",
        "ControlPath ~/.ssh/cm-%C",
        "ControlPersist 10m",
    ] {
        assert!(block.contains(&format!("    {line}\n")), "{block}");
    }
}
