//! End-to-end tests of the OpenSSH transport against the real sandbox sshd.

mod common;

use sshbench::analysis;
use sshbench::destination::Target;
use sshbench::measure::Transport;
use sshbench::measure::openssh::{Dialect, OpenSsh};
use sshbench::measure::payload::Payload;
use sshbench::model::AlgoLists;
use sshbench::model::{AlgoKind, Mode, Suite};
use sshbench::model::{FailureKind, Note, Outcome, Placement, Problem, SampleRequest};
use sshbench::sandbox::ALIAS;
use sshbench::sys::affinity;
use sshbench::sys::cancel::Cancel;
use std::time::{Duration, Instant};

fn suite(
    kex: Option<&str>,
    hostkey: Option<&str>,
    cipher: Option<&str>,
    mac: Option<&str>,
) -> Suite {
    Suite {
        kex: kex.map(str::to_string),
        hostkey: hostkey.map(str::to_string),
        cipher: cipher.map(str::to_string),
        mac: mac.map(str::to_string),
        compression: None,
        tool: None,
        data: None,
        client: 0,
        keystrokes: None,
        exec: None,
    }
}

fn req(mode: Mode, s: Suite, bytes: u64) -> SampleRequest {
    SampleRequest {
        suite: s,
        mode,
        bytes,
        ramp: bytes / 2,
        timeout: Duration::from_secs(60),
        until: None,
        together: None,
        reference: None,
    }
}

#[test]
fn every_mode_succeeds_and_verifies_what_was_negotiated() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();

    for (kex, hk) in [
        ("curve25519-sha256", "ssh-ed25519"),
        ("ecdh-sha2-nistp256", "rsa-sha2-512"),
    ] {
        let s = t.measure(
            &req(Mode::Connect, suite(Some(kex), Some(hk), None, None), 0),
            &cancel,
        );
        assert_eq!(s.outcome, Outcome::Success, "{s:?}\n{}", sb.log());
        let n = s.negotiated.as_ref().unwrap();
        assert_eq!(
            (n.kex.as_deref(), n.hostkey.as_deref()),
            (Some(kex), Some(hk))
        );
        assert!(s.wall > Duration::ZERO && s.transfer.is_none());
        assert!(s.client_cpu.unwrap().total() > Duration::ZERO);
    }

    // Not a multiple of the payload block; large enough that the steady window of a fast
    // cipher (~20 ms) outlasts a round trip even when the tests crowd the machine.
    let size = 16 * (1 << 20) + 12345;
    let mut sshd_cpu = Vec::new();
    for (cipher, mac) in [
        ("aes128-gcm@openssh.com", None),
        ("aes256-ctr", Some("hmac-sha2-256-etm@openssh.com")),
        ("chacha20-poly1305@openssh.com", None),
    ] {
        for mode in [Mode::Send, Mode::Receive] {
            let s = t.measure(
                &req(mode, suite(None, None, Some(cipher), mac), size),
                &cancel,
            );
            assert_eq!(s.outcome, Outcome::Success, "{mode} {cipher}: {s:?}");
            assert_eq!(s.bytes, size);
            let n = s.negotiated.as_ref().unwrap();
            assert_eq!(n.cipher_cs.as_deref(), Some(cipher));
            assert_eq!(n.mac_sc.as_deref(), mac);
            let transfer = s.transfer.unwrap();
            assert!(
                transfer > Duration::ZERO && transfer < s.wall,
                "{transfer:?} vs {:?}",
                s.wall
            );
            // The throughput window is the steady part after the ramp-up quarter.
            let w = s.window.expect("a steady-state window");
            assert!(w.time < transfer, "{w:?} vs {transfer:?}");
            match mode {
                Mode::Send => {
                    assert_eq!(w.bytes, size - size / 2);
                    assert!(s.rtt.unwrap() < w.time, "{:?}", s.rtt);
                }
                // Between two looks at ssh's output file (Linux), or to the last byte.
                _ => assert!(w.bytes <= size - size / 2 && w.bytes > 0, "{w:?}"),
            }
            // The remote probes found the session's sshd and bracketed the transfer.
            let cpu = s.server_cpu.expect("the server session's CPU");
            assert!(cpu.seconds >= cpu.peak && cpu.bytes > 0, "{cpu:?}");
            sshd_cpu.push(cpu.peak);
            assert!(
                s.throughput().unwrap() > 1e6,
                "{mode} {cipher} under 1 MB/s"
            );
        }
    }
    // On Linux the sshd's own CPU is its run time to the nanosecond, not whole clock
    // ticks (of 10 ms here), which would be most of a fast window's.
    if cfg!(target_os = "linux") {
        let whole = |s: &f64| ((s * 100.0).round() - s * 100.0).abs() < 1e-6;
        assert!(!sshd_cpu.iter().all(whole), "{sshd_cpu:?}");
    }
}

#[test]
fn echo_times_every_keystroke_through_the_negotiated_suite() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    for (cipher, mac, zlib) in [
        ("aes128-gcm@openssh.com", None, false),
        ("aes256-ctr", Some("hmac-sha2-256-etm@openssh.com"), false),
        ("chacha20-poly1305@openssh.com", None, true),
    ] {
        let mut s = suite(None, None, Some(cipher), mac);
        if zlib {
            s.compression = Some("zlib@openssh.com".into());
        }
        let r = SampleRequest {
            suite: s,
            mode: Mode::Echo,
            bytes: 300,
            ramp: 20,
            timeout: Duration::from_secs(60),
            until: None,
            together: None,
            reference: None,
        };
        let s = t.measure(&r, &Cancel::new());
        assert_eq!(s.outcome, Outcome::Success, "{cipher}: {s:?}\n{}", sb.log());
        let n = s.negotiated.as_ref().unwrap();
        assert_eq!(
            (n.cipher_cs.as_deref(), n.mac_sc.as_deref()),
            (Some(cipher), mac)
        );
        // The first 20 keystrokes are echoed and checked but not timed.
        assert_eq!(s.echoes.len(), 280);
        assert_eq!(s.bytes, 300);
        let transfer = s.transfer.unwrap().as_secs_f64();
        let sum: f64 = s.echoes.iter().sum();
        assert!(
            s.echoes.iter().all(|&e| e > 0.0) && sum <= transfer,
            "round trips add up to more than the session: {sum} > {transfer}"
        );
        // Loopback: a round trip is microseconds, far below a connection set-up.
        let p = analysis::percentiles(&s.echoes).unwrap();
        assert!(p.p50 <= p.p99 && p.p99 <= p.max, "{p:?}");
        assert!(p.p50 < 0.02, "{cipher}: median round trip {:.6} s", p.p50);
        assert!(s.wall.as_secs_f64() > p.p50 * 10.0);
        assert!(s.throughput().is_none(), "echo has no throughput");
        assert_eq!(analysis::figure(&s), analysis::echo_median(&s));
        if zlib {
            assert!(s.compression_factor.is_some(), "{s:?}");
        }
    }
}

/// Typing in a terminal through the system's ssh: every key of the pattern echoed in
/// order through `-tt`, each with its place, and the socket's counters where the OS
/// tells (Linux); the session ends on its own after the last key. A sandbox run by an
/// ordinary user where new terminals need root to hand over gives none: the sample says
/// so instead of failing (`sys::pty` tells which, and the other case then has to hold).
#[test]
fn typing_types_the_pattern_into_a_terminal_and_counts_the_wire() {
    let sb = common::sandbox(AlgoLists::new());
    let r = SampleRequest {
        ramp: 0,
        ..req(Mode::Typing, suite(None, None, None, None), 24)
    };
    // Asked whatever the sandbox says: the answer it gives has to be the true one.
    let mut t = common::transport(&sb).with_terminals(true);
    let s = t.measure(&r, &Cancel::new());
    if !sb.gives_terminals() {
        assert!(
            !s.outcome.is_success(),
            "a terminal was handed over after all: {s:?}"
        );
        let mut t = common::transport(&sb);
        let s = t.measure(&r, &Cancel::new());
        let said = sshbench::views::problem::of_outcome(&s.outcome).unwrap_or_default();
        assert!(said.contains("runs as you, not root"), "{said}");
        return;
    }
    assert_eq!(s.outcome, Outcome::Success, "{s:?}\n{}", sb.log());
    let typing = s.typing.as_deref().expect("the keys");
    assert_eq!(typing.keys.len(), 24);
    assert_eq!(s.echoes.len(), 24);
    let places: Vec<_> = typing.keys.iter().map(|k| k.place()).collect();
    use sshbench::model::KeyPlace::*;
    assert_eq!(&places[..2], [AfterLongPause, InBurst]);
    assert_eq!((places[8], places[16]), (AfterShortPause, AfterLongPause));
    let idle = typing.keys[16].idle_s.unwrap();
    assert!(idle > 3.0, "the long pause: {idle}");
    if cfg!(target_os = "linux") {
        let wire = typing.wire.expect("TCP_INFO of ssh's socket");
        // At least a packet out per key, and the bytes of 24 encrypted packets.
        assert!(wire.typing.packets_out >= 24, "{wire:?}");
        assert!(wire.typing.bytes_out >= 24 * 32, "{wire:?}");
        assert!(wire.idle.seconds > 3.0, "{wire:?}");
    }
}

/// The ssh processes whose command line names `config` (one sandbox's ssh_config).
fn ssh_processes_of(config: &std::path::Path) -> Vec<String> {
    let needle = config.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains(&needle) && line.contains("ControlMaster=yes") {
            found.push(line);
        }
    }
    found
}

/// Short commands both ways: each command timed and checked (the ones with output
/// bring exactly theirs back), a master's start in its phases, and nothing of the
/// master left once the sample is over (its socket: tests/cli.rs).
#[test]
fn exec_runs_commands_fresh_and_over_a_master_and_leaves_nothing() {
    use sshbench::model::ExecVia;
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let mut p50 = Vec::new();
    for via in [ExecVia::Fresh, ExecVia::Master] {
        let s = Suite {
            exec: Some(via),
            ..Suite::default()
        };
        let r = SampleRequest {
            ramp: 0,
            ..req(Mode::Exec, s, 10)
        };
        let s = t.measure(&r, &Cancel::new());
        assert_eq!(s.outcome, Outcome::Success, "{via}: {s:?}\n{}", sb.log());
        assert_eq!(s.echoes.len(), 10, "{via}");
        assert_eq!(s.phases.is_some(), via == ExecVia::Master, "{via}: {s:?}");
        p50.push(analysis::percentiles(&s.echoes).unwrap().p50);
        assert!(
            ssh_processes_of(sb.ssh_config()).is_empty(),
            "a master is left"
        );
    }
    // A fresh connection does its handshake every time; a session of a master does not.
    assert!(p50[1] < p50[0], "fresh {} s, master {} s", p50[0], p50[1]);
}

#[test]
fn handshake_is_excluded_from_transfer_time() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let s = t.measure(
        &req(
            Mode::Send,
            suite(None, None, Some("aes128-gcm@openssh.com"), None),
            1 << 20,
        ),
        &Cancel::new(),
    );
    assert!(s.outcome.is_success(), "{s:?}");
    // A 1 MiB transfer on loopback is far shorter than the connection set-up around it.
    let setup = s.wall - s.transfer.unwrap();
    assert!(
        setup > s.transfer.unwrap(),
        "setup {setup:?}, transfer {:?}",
        s.transfer
    );
}

#[test]
fn a_suite_the_server_refuses_is_refused_not_failed() {
    let mut restrict = AlgoLists::new();
    restrict.set(AlgoKind::Cipher, vec!["aes128-ctr".into()]);
    let sb = common::sandbox(restrict);
    assert_eq!(sb.offered().get(AlgoKind::Cipher).unwrap(), ["aes128-ctr"]);
    let mut t = common::transport(&sb);
    let s = t.measure(
        &req(
            Mode::Send,
            suite(None, None, Some("aes256-gcm@openssh.com"), None),
            1000,
        ),
        &Cancel::new(),
    );
    match &s.outcome {
        Outcome::Refused {
            problem: Problem::Said { said },
        } => {
            assert!(said.contains("no matching cipher"), "{said}")
        }
        other => panic!("expected refused, got {other:?}"),
    }
    // The allowed one still works.
    let s = t.measure(
        &req(
            Mode::Send,
            suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
            1000,
        ),
        &Cancel::new(),
    );
    assert!(s.outcome.is_success(), "{s:?}");
}

#[test]
fn a_wrong_identity_is_an_authentication_failure() {
    let sb = common::sandbox(AlgoLists::new());
    let bad_path = common::config_with_another_key(&sb, sb.dir(), "");
    let mut t = sshbench::measure::openssh::OpenSsh::new(
        common::ssh(),
        sshbench::destination::Target::sandbox(&bad_path, sshbench::sandbox::ALIAS),
        sshbench::measure::payload::Payload::random(1024, 1),
    );
    let s = t.measure(&req(Mode::Connect, Suite::default(), 0), &Cancel::new());
    match &s.outcome {
        Outcome::Failed {
            kind: FailureKind::Auth,
            problem: Problem::Said { said },
        } => {
            assert!(said.contains("Permission denied"), "{said}")
        }
        other => panic!("expected an auth failure, got {other:?}"),
    }
}

#[test]
fn a_sshd_killed_mid_transfer_is_a_failure_not_a_hang() {
    let mut sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let start = Instant::now();
    let handle = std::thread::spawn(move || {
        t.measure(
            &req(
                Mode::Receive,
                suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
                64 << 30,
            ),
            &Cancel::new(),
        )
    });
    std::thread::sleep(Duration::from_millis(1500));
    let listener = sb.pid().unwrap();
    sb.stop();
    assert!(!common::alive(listener));
    let s = handle.join().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
    assert!(!s.outcome.is_success(), "{s:?}");
    assert!(
        matches!(
            s.outcome,
            Outcome::Failed {
                kind: FailureKind::Network | FailureKind::ByteCount | FailureKind::Remote,
                ..
            }
        ),
        "{:?}",
        s.outcome
    );
}

#[test]
fn a_sample_over_its_timeout_is_killed() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let start = Instant::now();
    let mut r = req(
        Mode::Receive,
        suite(None, None, Some("3des-cbc"), Some("hmac-sha1")),
        64 << 30,
    );
    r.timeout = Duration::from_secs(2);
    let s = t.measure(&r, &Cancel::new());
    assert!(
        matches!(
            s.outcome,
            Outcome::Failed {
                kind: FailureKind::Timeout,
                ..
            }
        ),
        "{:?}",
        s.outcome
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn cancellation_kills_the_sample_promptly() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(800));
        c2.cancel(libc::SIGINT);
    });
    let start = Instant::now();
    let s = t.measure(
        &req(
            Mode::Send,
            suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
            64 << 30,
        ),
        &cancel,
    );
    assert!(
        matches!(
            s.outcome,
            Outcome::Failed {
                kind: FailureKind::Cancelled,
                ..
            }
        ),
        "{:?}",
        s.outcome
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn teardown_leaves_no_process_and_no_files() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    // Leave a session busy so teardown has a child to kill.
    let s = t.measure(&req(Mode::Connect, Suite::default(), 0), &Cancel::new());
    assert!(s.outcome.is_success());
    let pid = sb.pid().unwrap();
    let dir = sb.dir().to_path_buf();
    assert!(common::alive(pid));
    let mode = std::fs::metadata(&dir).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o700
    );
    drop(sb);
    assert!(!common::alive(pid));
    assert!(!dir.exists());
}

#[test]
fn sandbox_pins_host_keys_and_listens_on_loopback_only() {
    let sb = common::sandbox(AlgoLists::new());
    let cfg = std::fs::read_to_string(sb.dir().join("sshd_config")).unwrap();
    assert!(cfg.contains("ListenAddress 127.0.0.1"));
    let client_cfg = std::fs::read_to_string(sb.ssh_config()).unwrap();
    assert!(client_cfg.contains("StrictHostKeyChecking yes"));
    let kh = std::fs::read_to_string(sb.dir().join("known_hosts")).unwrap();
    for t in [
        "ssh-ed25519",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "ssh-rsa",
    ] {
        assert!(kh.contains(&format!(" {t} ")), "{t} not pinned");
    }
    // Legacy algorithms are switched on so they can be measured.
    let offered = sb.offered();
    for (kind, name) in [
        (AlgoKind::Cipher, "3des-cbc"),
        (AlgoKind::Mac, "hmac-md5"),
        (AlgoKind::Kex, "diffie-hellman-group1-sha1"),
    ] {
        if common::client().lists.contains(kind, name) {
            assert!(offered.contains(kind, name), "{name} not enabled");
        }
    }
}

/// A split placement: sshd, and every session it starts, runs on the server's CPUs only
/// (as the kernel sees it: `Cpus_allowed_list` of the listener and of a remote command).
#[cfg(target_os = "linux")]
#[test]
fn a_split_sandbox_runs_sshd_and_its_sessions_on_the_server_cpus() {
    use sshbench::sandbox::{self, Sandbox, SandboxOptions};
    use sshbench::sys::affinity;
    let allowed = affinity::allowed().unwrap();
    // On a one-CPU machine there is nothing to split; pin to that CPU all the same.
    let server =
        affinity::plan(sshbench::model::Placement::Split).map_or(allowed.clone(), |s| s.server);
    let sb = Sandbox::start(&SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        server_cpus: Some(server.clone()),
        ..SandboxOptions::default()
    })
    .unwrap();
    assert_eq!(sb.server_cpus(), Some(server.as_slice()));
    let want = affinity::format_list(&server);
    let listed = |status: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
    };
    let listener = std::fs::read_to_string(format!("/proc/{}/status", sb.pid().unwrap())).unwrap();
    assert_eq!(listed(&listener).as_deref(), Some(want.as_str()));
    let out = std::process::Command::new(common::ssh())
        .args(["-F"])
        .arg(sb.ssh_config())
        .args([sandbox::ALIAS, "cat /proc/self/status"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", sb.log());
    let session = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listed(&session).as_deref(), Some(want.as_str()));
    // Each transfer records the CPU sets both sides could use (this test's own process
    // is not pinned: ssh may use every CPU), and the CPU of sshbench's own thread that
    // fed or drained ssh.
    let mut t = common::transport(&sb);
    let aes = suite(None, None, Some("aes128-gcm@openssh.com"), None);
    for mode in [Mode::Send, Mode::Receive] {
        // Large enough that the steady window outlasts two round trips however crowded
        // the machine is (a shorter one is not taken as a window).
        let s = t.measure(&req(mode, aes.clone(), 64 << 20), &Cancel::new());
        assert_eq!(s.outcome, Outcome::Success, "{mode}: {s:?}");
        let cpu = s.server_cpu.expect("the server session's CPU");
        assert_eq!(cpu.cores, Some(server.len() as f64), "{mode}");
        let client =
            (s.client_window_cpu).unwrap_or_else(|| panic!("{mode}: no CPU over a window: {s:?}"));
        assert_eq!(client.cores, Some(allowed.len() as f64), "{mode}");
        assert!(client.feeder.is_some_and(|f| f > 0.0), "{mode}: {client:?}");
    }
}

/// Regression: a long-lived sandbox in another process (`sshbench sandbox`) once held a
/// lock that made every other sandbox wait for it to end.
#[test]
fn a_long_lived_sandbox_does_not_block_another() {
    use std::io::BufRead;
    let mut other = common::sshbench()
        .arg("sandbox")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(other.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.trim().ends_with("ssh_config"), "{first}");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let sb = common::sandbox(AlgoLists::new());
        let _ = tx.send(sb.port());
    });
    let started = rx.recv_timeout(Duration::from_secs(20));
    assert!(
        started.is_ok(),
        "a second sandbox waited for the first one to end"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(other.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(other.wait().unwrap().success());
}

#[test]
fn a_time_bounded_send_moves_what_fits_and_the_server_agrees() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let s = suite(
        None,
        None,
        Some("aes128-ctr"),
        Some("hmac-sha2-256-etm@openssh.com"),
    );
    let mut r = req(Mode::Send, s, 64 << 30);
    r.ramp = 4 << 20;
    r.until = Some(Duration::from_millis(150));
    let s = t.measure(&r, &Cancel::new());
    assert_eq!(s.outcome, Outcome::Success, "{s:?}\n{}", sb.log());
    // Far less than the cap, more than the ramp; the server counted every byte of it.
    assert!(s.bytes > r.ramp && s.bytes < r.bytes / 8, "{}", s.bytes);
    let w = s.window.expect("a steady-state window");
    assert_eq!(w.bytes, s.bytes - r.ramp);
    // The writer stopped 150 ms after the mark; the window ends when the server has
    // counted the last byte (one round trip is taken off).
    assert!(
        w.time >= Duration::from_millis(100) && w.time < Duration::from_secs(3),
        "{w:?}"
    );
    assert_eq!(s.server_cpu.expect("server CPU").bytes, w.bytes);
}

#[test]
fn a_transfer_records_how_often_it_would_rekey_and_what_a_rekey_costs() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();
    let size = 16 << 20;
    // OpenSSH's defaults on both sides: 1 GiB for 8-byte blocks, 64 GiB for 16-byte.
    for (cipher, every) in [
        ("chacha20-poly1305@openssh.com", 1u64 << 30),
        ("aes128-gcm@openssh.com", 64 << 30),
    ] {
        for mode in [Mode::Send, Mode::Receive] {
            let s = t.measure(
                &req(mode, suite(None, None, Some(cipher), None), size),
                &cancel,
            );
            assert_eq!(s.outcome, Outcome::Success, "{mode} {cipher}: {s:?}");
            let r = s.rekey.expect("rekeying known");
            assert_eq!(r.every, every, "{mode} {cipher}");
            // One key exchange: more than nothing, less than the whole connection.
            assert!(r.seconds > 0.0 && r.seconds < s.wall.as_secs_f64(), "{r:?}");
            // The sustained rate is below the rate between rekeys, by the stall's share.
            let w = s.window.unwrap();
            let between = w.bytes as f64 / w.time.as_secs_f64();
            let sustained = s.throughput().unwrap();
            let expected = w.bytes as f64 / (w.time.as_secs_f64() + r.stall(w.bytes, 1.0));
            assert!(sustained < between, "{sustained} vs {between}");
            assert!(
                (sustained - expected).abs() < 1.0,
                "{sustained} vs {expected}"
            );
        }
    }

    // The user's RekeyLimit counts, in both directions; a transfer through several
    // rekeys (every 4 MiB of 16) still moves and verifies every byte.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host {}\n  RekeyLimit 4M\nInclude \"{}\"\n",
            ALIAS,
            sb.ssh_config().display()
        ),
    )
    .unwrap();
    let mut limited = OpenSsh::new(
        common::ssh(),
        Target::sandbox(&config, ALIAS),
        Payload::random(1 << 20, 42),
    );
    for mode in [Mode::Send, Mode::Receive] {
        let s = limited.measure(
            &req(
                mode,
                suite(None, None, Some("aes256-ctr"), Some("hmac-sha2-256")),
                size,
            ),
            &cancel,
        );
        assert_eq!(s.outcome, Outcome::Success, "{mode}: {s:?}\n{}", sb.log());
        assert_eq!(s.bytes, size);
        // A send's periods between rekeys are 512 KiB short of the limit (OpenSSH's
        // sender adds its next 32 KiB packet's bytes to a count of blocks): the interval.
        let every = s.rekey.expect("rekeying known").every;
        match mode {
            Mode::Send => assert!((7 << 19..4 << 20).contains(&every), "{every}"),
            _ => assert_eq!(every, 4 << 20, "{mode}"),
        }
    }
}

/// Connections the sandbox sshd has accepted so far (one INFO line each).
fn accepted(sb: &sshbench::sandbox::Sandbox) -> usize {
    sb.log().matches("Accepted publickey").count()
}

/// Send, receive and echo of `s` as one group.
fn group_of(s: &Suite) -> Vec<SampleRequest> {
    let mut echo = req(Mode::Echo, s.clone(), 210);
    echo.ramp = 10;
    vec![
        req(Mode::Send, s.clone(), 64 << 20),
        req(Mode::Receive, s.clone(), 64 << 20),
        echo,
    ]
}

/// HPN-SSH grows a channel's window only on a connection of its own: driven as HPN, a
/// suite's samples each get one (the system's ssh stands in for hpnssh, whose options
/// are OpenSSH's), and a note says why.
#[test]
fn an_hpn_client_s_samples_each_have_a_connection_of_their_own() {
    let sb = common::sandbox(AlgoLists::new());
    let mut t = common::transport(&sb).with_dialect(Dialect::Hpn);
    let s = suite(None, None, Some("aes128-ctr"), Some("hmac-sha2-256"));
    let before = accepted(&sb);
    let samples = t.measure_group(&group_of(&s), &Cancel::new(), &mut |_, _| {});
    assert!(
        samples.iter().all(|s| s.outcome == Outcome::Success),
        "{samples:?}"
    );
    assert_eq!(accepted(&sb) - before, 3, "{}", sb.log());
    assert!(t.notes().contains(&Note::HpnOwnConnections));
}

#[test]
fn a_suites_samples_share_one_connection_and_keep_every_figure() {
    let mut restrict = AlgoLists::new();
    restrict.set(
        AlgoKind::Cipher,
        vec!["aes128-ctr".into(), "chacha20-poly1305@openssh.com".into()],
    );
    let sb = common::sandbox(restrict);
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();
    let s = suite(
        None,
        None,
        Some("aes128-ctr"),
        Some("hmac-sha2-256-etm@openssh.com"),
    );
    let before = accepted(&sb);
    let mut events = Vec::new();
    let samples = t.measure_group(&group_of(&s), &cancel, &mut |i, s| {
        events.push((i, s.is_some()))
    });
    assert_eq!(
        accepted(&sb) - before,
        1,
        "one connection for three samples\n{}",
        sb.log()
    );
    let order: Vec<(usize, bool)> = (0..3).flat_map(|i| [(i, false), (i, true)]).collect();
    assert_eq!(events, order);
    for sample in &samples {
        assert_eq!(sample.outcome, Outcome::Success, "{sample:?}\n{}", sb.log());
        let n = sample
            .negotiated
            .as_ref()
            .expect("the master's negotiated names");
        assert_eq!(n.cipher_cs.as_deref(), Some("aes128-ctr"));
        assert_eq!(n.mac_sc.as_deref(), Some("hmac-sha2-256-etm@openssh.com"));
        // The attached ssh only passes its pipes to the master: no CPU of its own.
        assert!(sample.client_cpu.is_none(), "{sample:?}");
    }
    let (send, receive, echo) = (&samples[0], &samples[1], &samples[2]);
    for x in [send, receive] {
        assert!(x.throughput().is_some_and(|r| r > 1e6), "{x:?}");
        assert!(x.server_cpu.is_some_and(|c| c.seconds > 0.0), "{x:?}");
        // The master's own key exchange prices a rekey; its log gives the limits.
        let rekey = x.rekey.unwrap_or_else(|| panic!("rekeying known: {x:?}"));
        assert!(rekey.seconds > 0.0 && rekey.every > 0, "{rekey:?}");
        if cfg!(target_os = "linux") {
            // The master moves the bytes: its CPU over the window, a real share of it.
            let c = x.client_window_cpu.expect("the master's CPU");
            assert!(c.seconds > 0.01, "{c:?}");
        }
    }
    assert_eq!(echo.echoes.len(), 200);
    // Over a shared connection ssh reads the send's bytes from a file: nothing of
    // sshbench's fed it, and its round trip is a ping session's.
    if cfg!(target_os = "linux") {
        assert_eq!(send.client_window_cpu.unwrap().feeder, None, "{send:?}");
    }
    assert!(send.rtt.is_some_and(|r| r > Duration::ZERO), "{send:?}");
    // Its server CPU is the steady window's, as a fed send's is.
    let (c, w) = (send.server_cpu.unwrap(), send.window.unwrap());
    assert_eq!((c.bytes, c.interval), (w.bytes, w.time), "{send:?}");
    // A send alone takes a connection of its own with sessions all the same.
    let before = accepted(&sb);
    let alone = t.measure_group(&group_of(&s)[..1], &cancel, &mut |_, _| {});
    assert_eq!(accepted(&sb) - before, 1);
    let c = alone[0].client_window_cpu;
    assert!(
        cfg!(not(target_os = "linux")) || c.is_some_and(|c| c.feeder.is_none()),
        "{alone:?}"
    );
    assert!(alone[0].rtt.is_some(), "{alone:?}");
    // A compressed suite (ssh reports compression for a whole connection) and the old
    // way both take a connection per sample.
    let zlib = Suite {
        compression: Some("zlib@openssh.com".into()),
        ..s.clone()
    };
    let before = accepted(&sb);
    let samples = t.measure_group(&group_of(&zlib), &cancel, &mut |_, _| {});
    assert!(
        samples.iter().all(|x| x.outcome.is_success()),
        "{samples:?}"
    );
    assert_eq!(accepted(&sb) - before, 3);
    // A suite the server refuses: every sample refused, one attempt.
    let refused = suite(None, None, Some("aes256-gcm@openssh.com"), None);
    let samples = t.measure_group(&group_of(&refused), &cancel, &mut |_, _| {});
    for x in &samples {
        assert!(
            matches!(&x.outcome, Outcome::Refused { problem: Problem::Said { said } } if said.contains("no matching cipher")),
            "{x:?}"
        );
    }
}

#[test]
fn shared_connection_figures_match_fresh_ones() {
    // The same suite over fresh connections and over a shared one: the server CPU per
    // byte over the window (what the CPU verdict reads) agrees within a factor that
    // only a miscounted window (the master's handshake, another session) would break.
    // The sshd and this thread's clients on CPUs of their own, as a run places them:
    // sharing one, the server's CPU per byte follows the client's scheduling and
    // scatters twofold.
    let split = affinity::plan(Placement::Split);
    let sb = sshbench::sandbox::Sandbox::start(&sshbench::sandbox::SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        server_cpus: split.as_ref().map(|s| s.server.clone()),
        ..Default::default()
    })
    .unwrap();
    if let Some(s) = &split {
        affinity::pin_thread(&s.client).unwrap();
    }
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();
    let s = suite(None, None, Some("aes128-gcm@openssh.com"), None);
    let per_gb = |x: &sshbench::model::Sample| {
        let c = x.server_cpu.unwrap();
        c.seconds / c.bytes as f64 * 1e9
    };
    // Each round's shared sample against its fresh one, per mode, measured back to
    // back: a spell of the machine (other tests beside this one) moves both alike.
    // 256 MiB: a window's CPU is some 20 of the probes' 10 ms ticks, not 5.
    let mut group = group_of(&s);
    for r in &mut group[..2] {
        *r = req(r.mode, s.clone(), 256 << 20);
    }
    let mut ratios = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        let fresh: Vec<f64> = (group[..2].iter())
            .map(|r| per_gb(&t.measure(r, &cancel)))
            .collect();
        let g = t.measure_group(&group, &cancel, &mut |_, _| {});
        for (i, x) in g[..2].iter().enumerate() {
            ratios[i].push(per_gb(x) / fresh[i]);
        }
    }
    for (mode, r) in ["send", "receive"].iter().zip(&ratios) {
        let m = analysis::median(&mut r.clone()).unwrap();
        assert!(
            m > 0.6 && m < 1.5,
            "{mode}, shared over fresh, each round: {r:?}"
        );
    }
}

#[test]
fn echo_beside_a_reference_keeps_one_reference_connection_open() {
    let mut restrict = AlgoLists::new();
    restrict.set(
        AlgoKind::Cipher,
        vec!["aes128-ctr".into(), "aes128-gcm@openssh.com".into()],
    );
    let sb = common::sandbox(restrict);
    let mut t = common::transport(&sb);
    let cancel = Cancel::new();
    let gcm = suite(None, None, Some("aes128-gcm@openssh.com"), None);
    let ctr = suite(None, None, Some("aes128-ctr"), Some("hmac-sha1"));
    let echo = |s: &Suite, reference: &Suite| SampleRequest {
        ramp: 10,
        reference: Some(reference.clone()),
        ..req(Mode::Echo, s.clone(), 310)
    };
    let before = accepted(&sb);
    for _ in 0..3 {
        let s = t.measure(&echo(&ctr, &gcm), &cancel);
        assert_eq!(s.outcome, Outcome::Success, "{s:?}\n{}", sb.log());
        assert_eq!((s.echoes.len(), s.echoes_ref.len()), (300, 300));
        assert!(analysis::echo::echo_ratio(&s).is_some_and(|r| r > 0.2 && r < 5.0));
    }
    // Three samples, each its own connection, beside one reference connection.
    assert_eq!(accepted(&sb) - before, 4, "{}", sb.log());
    // Another reference suite: the old one goes, a new one comes.
    let before = accepted(&sb);
    let s = t.measure(&echo(&gcm, &ctr), &cancel);
    assert!(s.outcome.is_success() && s.echoes_ref.len() == 300, "{s:?}");
    assert_eq!(accepted(&sb) - before, 2);
    // A reference the server refuses fails the sample (tried again), never refuses
    // the suite typed beside it.
    let chacha = suite(None, None, Some("chacha20-poly1305@openssh.com"), None);
    let s = t.measure(&echo(&ctr, &chacha), &cancel);
    match &s.outcome {
        Outcome::Failed { kind, problem } => {
            assert_eq!(*kind, FailureKind::Remote);
            assert!(matches!(problem, Problem::Reference { .. }), "{problem:?}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}
