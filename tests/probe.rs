//! The server offer probe against real servers (the sandbox sshd, Dropbear) and against
//! malformed servers of the test's own on loopback.

mod common;

use common::dropbear::Dropbear;

use sshbench::model::AlgoKind;
use sshbench::model::AlgoLists;
use sshbench::model::Mode;
use sshbench::offer::server::{self, ProbeError};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn sandbox_offer_matches_its_config_and_ssh_vv() {
    let sb = common::sandbox(AlgoLists::new());
    let offer = server::probe("127.0.0.1", sb.port(), Duration::from_secs(10)).unwrap();
    assert_eq!(offer.software.product, "OpenSSH");
    let probed = offer.kexinit.lists();
    for kind in [AlgoKind::Kex, AlgoKind::Cipher, AlgoKind::Mac] {
        assert_eq!(probed.get(kind), sb.offered().get(kind), "{kind:?}");
    }
    // sshd lists host key algorithms in the order of its keys, not of the config line.
    let sorted = |l: Option<&[String]>| {
        let mut v = l.unwrap().to_vec();
        v.sort();
        v
    };
    assert_eq!(
        sorted(probed.get(AlgoKind::HostKey)),
        sorted(sb.offered().get(AlgoKind::HostKey))
    );
    assert!(offer.kexinit.strict_kex() || !common::client().version.version.starts_with('9'));

    let target = sshbench::destination::Target::sandbox(sb.ssh_config(), sshbench::sandbox::ALIAS);
    let server = format!("127.0.0.1:{}", sb.port());
    let via_ssh =
        server::probe_via_ssh(&common::ssh(), &target, &server, Duration::from_secs(10)).unwrap();
    assert_eq!(via_ssh.method, server::ProbeMethod::SshVerbose);
    assert_eq!(via_ssh.kexinit.lists(), probed);
    assert_eq!(via_ssh.banner, offer.banner);
}

fn dropbear() -> Dropbear {
    common::dropbear::start(Default::default())
}

#[test]
fn reads_a_dropbear_offer() {
    let db = dropbear();
    let offer = server::probe("127.0.0.1", db.port, Duration::from_secs(10)).unwrap();
    assert_eq!(offer.software.product.to_lowercase(), "dropbear");
    let lists = offer.kexinit.lists();
    assert!(
        lists.contains(AlgoKind::Kex, "curve25519-sha256"),
        "{lists:?}"
    );
    assert!(
        lists.contains(AlgoKind::HostKey, "ssh-ed25519"),
        "{lists:?}"
    );
    assert!(lists.contains(AlgoKind::Cipher, "aes128-ctr"), "{lists:?}");
    assert!(lists.contains(AlgoKind::Mac, "hmac-sha2-256"), "{lists:?}");
}

/// Serve one connection with `behave`, then probe it with a 2 s deadline.
fn probe_fake(
    behave: impl FnOnce(std::net::TcpStream) + Send + 'static,
) -> (Result<server::ServerOffer, ProbeError>, Duration) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            behave(s);
        }
    });
    let start = Instant::now();
    let r = server::probe("127.0.0.1", port, Duration::from_secs(2));
    (r, start.elapsed())
}

fn slurp_client_banner(s: &mut std::net::TcpStream) {
    let mut buf = [0u8; 64];
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = s.read(&mut buf);
}

#[test]
fn malformed_servers_give_clear_errors_within_the_deadline() {
    let kexinit = server::build_kexinit([
        "curve25519-sha256",
        "ssh-ed25519",
        "aes128-ctr",
        "aes128-ctr",
        "hmac-sha1",
        "hmac-sha1",
        "none",
        "none",
        "",
        "",
    ]);
    let mut missing_list = kexinit[..17].to_vec();
    missing_list.extend(4u32.to_be_bytes());
    missing_list.extend(b"abcd");
    let packet = server::frame_packet(&kexinit);
    type Behave = Box<dyn FnOnce(std::net::TcpStream) + Send>;
    let cases: Vec<(&str, Behave, &str)> = vec![
        (
            "nothing at all",
            Box::new(drop),
            "closed the connection before sending its SSH version",
        ),
        (
            "no banner",
            Box::new(|s| {
                std::thread::sleep(Duration::from_secs(4));
                drop(s)
            }),
            "sent nothing within the deadline",
        ),
        (
            "endless banner",
            Box::new(|mut s| {
                let chunk = [b'A'; 4096];
                while s.write_all(&chunk).is_ok() {}
            }),
            "longer than 255",
        ),
        (
            "endless lines",
            Box::new(|mut s| while s.write_all(b"hello\r\n").is_ok() {}),
            "more than 64 lines",
        ),
        (
            "4 GB length",
            Box::new(|mut s| {
                slurp_client_banner(&mut s);
                let _ = s.write_all(b"SSH-2.0-evil\r\n\xff\xff\xff\xf0\x04");
                std::thread::sleep(Duration::from_secs(3))
            }),
            "absurd",
        ),
        (
            "truncated packet",
            Box::new(move |mut s| {
                slurp_client_banner(&mut s);
                let _ = s.write_all(b"SSH-2.0-evil\r\n");
                let _ = s.write_all(&packet[..packet.len() / 2]);
            }),
            "middle of a packet",
        ),
        (
            "garbage after banner",
            Box::new(|mut s| {
                let _ = s.write_all(b"SSH-2.0-evil\r\n\x00\x00\x00\x10\x01garbagegarbage!");
                std::thread::sleep(Duration::from_secs(3))
            }),
            "padding",
        ),
        (
            "missing list",
            Box::new(move |mut s| {
                let _ = s.write_all(b"SSH-2.0-evil\r\n");
                let _ = s.write_all(&server::frame_packet(&missing_list));
                std::thread::sleep(Duration::from_secs(3))
            }),
            "is missing",
        ),
        (
            "slow drip",
            Box::new(|mut s| {
                for b in b"SSH-2.0-slow\r\n" {
                    let _ = s.write_all(&[*b]);
                    std::thread::sleep(Duration::from_millis(300));
                }
            }),
            "bytes but no complete offer within the deadline",
        ),
    ];
    for (name, behave, want) in cases {
        let (r, took) = probe_fake(behave);
        let err = r.expect_err(name).to_string();
        assert!(err.contains(want), "{name}: {want:?} not in {err:?}");
        assert!(took < Duration::from_secs(3), "{name} took {took:?}");
    }
}

#[test]
fn nothing_listening_is_a_connect_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = server::probe("127.0.0.1", port, Duration::from_secs(2)).unwrap_err();
    assert!(matches!(err, ProbeError::Connect(_)), "{err}");
}

#[test]
fn algos_command_reports_grades_and_negotiability() {
    let out = common::sshbench()
        .args(["algos", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["algorithms"].as_array().unwrap();
    let find = |kind: &str, name: &str| {
        rows.iter()
            .find(|r| r["kind"] == kind && r["name"] == name)
            .cloned()
    };
    let gcm = find("cipher", "aes128-gcm@openssh.com").unwrap();
    assert_eq!(
        (
            gcm["negotiable"].as_bool(),
            gcm["aead"].as_bool(),
            gcm["grade"].as_str()
        ),
        (Some(true), Some(true), Some("recommended"))
    );
    let des = find("cipher", "3des-cbc").unwrap();
    assert_eq!(
        (des["negotiable"].as_bool(), des["grade"].as_str()),
        (Some(true), Some("broken"))
    );
    // Certificates are known to the client but not offered by the sandbox.
    let cert = find("hostkey", "ssh-ed25519-cert-v01@openssh.com").unwrap();
    assert_eq!(
        (
            cert["client"].as_bool(),
            cert["server"].as_bool(),
            cert["negotiable"].as_bool()
        ),
        (Some(true), Some(false), Some(false))
    );
    assert!(
        v["server"]["banner"]
            .as_str()
            .unwrap()
            .starts_with("SSH-2.0-OpenSSH")
    );
}

/// `sshbench run DESTINATION`'s stderr against a server that does not know this client:
/// the probe of its offer comes first, then the first sample fails (unknown host key).
fn run_against(port: u16) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = common::sshbench()
        .args(["run", "--mode", "connect", "--kex", "curve25519-sha256"])
        .args(["--timeout", "10", "--db"])
        .arg(dir.path().join("db.sqlite"))
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A server that offers no strict KEX (the Terrapin countermeasure; OpenSSH before 9.6
/// without the distributions' backports, as on many old servers) gets `run`'s warning
/// before any measurement; the sandbox sshd, which offers it, does not. (Debian's
/// Dropbear 2022.83 has the backport too, so the old server is one of the test's own: a
/// banner and a KEXINIT for every connection, then nothing.)
#[test]
fn run_warns_about_a_server_without_strict_kex() {
    let warning = "warning: the server does not offer strict KEX";
    let kexinit = server::build_kexinit([
        "curve25519-sha256,ext-info-s",
        "ssh-ed25519",
        "chacha20-poly1305@openssh.com,aes128-ctr",
        "chacha20-poly1305@openssh.com,aes128-ctr",
        "hmac-sha2-256-etm@openssh.com",
        "hmac-sha2-256-etm@openssh.com",
        "none",
        "none",
        "",
        "",
    ]);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            slurp_client_banner(&mut s);
            let _ = s.write_all(b"SSH-2.0-OpenSSH_7.4\r\n");
            let _ = s.write_all(&server::frame_packet(&kexinit));
        }
    });
    let offer = server::probe("127.0.0.1", port, Duration::from_secs(10)).unwrap();
    assert!(!offer.kexinit.strict_kex());
    let stderr = run_against(port);
    assert!(
        stderr.contains("server offer: SSH-2.0-OpenSSH_7.4"),
        "{stderr}"
    );
    assert!(stderr.contains(warning), "{stderr}");

    let sb = common::sandbox(AlgoLists::new());
    let offer = server::probe("127.0.0.1", sb.port(), Duration::from_secs(10)).unwrap();
    assert!(offer.kexinit.strict_kex(), "{}", offer.banner);
    let stderr = run_against(sb.port());
    assert!(stderr.contains("server offer: SSH-2.0-OpenSSH"), "{stderr}");
    assert!(!stderr.contains(warning), "{stderr}");
}

/// An ssh config with the sandbox (a ProxyJump host: it forwards TCP) and, behind it, a
/// Dropbear server reached only through it, whose logins the user attaches to tmux (a
/// `RemoteCommand` ssh refuses beside a command line: the probe sets it aside).
fn config_with_dropbear_behind_sandbox(
    sb: &sshbench::sandbox::Sandbox,
    db: &Dropbear,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let mut cfg = std::fs::read_to_string(sb.ssh_config()).unwrap();
    cfg.push_str(&format!(
        "\nHost dropbear-behind\n  HostName 127.0.0.1\n  Port {}\n  ProxyJump {}\n  \
         StrictHostKeyChecking yes\n  UserKnownHostsFile \"{}\"\n  \
         RemoteCommand tmux new -A -s main\n",
        db.port,
        sshbench::sandbox::ALIAS,
        dir.join("no_known_hosts").display()
    ));
    let path = dir.join("ssh_config");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// `sshbench run ARGS -F cfg --db db dropbear-behind`.
fn run_behind(cfg: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    (common::sshbench().arg("run").args(args))
        .arg("-F")
        .arg(cfg)
        .arg("--db")
        .arg(db)
        .arg("dropbear-behind")
        .output()
        .unwrap()
}

/// Through a ProxyJump, `algos` shows the destination's offer (Dropbear's), not the jump
/// host's, and `run` plans only what Dropbear accepts.
#[test]
fn through_a_jump_host_the_offer_is_the_destination_s() {
    let sb = sshbench::sandbox::Sandbox::start(&sshbench::sandbox::SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        forwarding: true,
        ..Default::default()
    })
    .unwrap();
    let db = dropbear();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_with_dropbear_behind_sandbox(&sb, &db, dir.path());
    let out = common::sshbench()
        .args(["algos", "--format", "json", "-F"])
        .arg(&cfg)
        .arg("dropbear-behind")
        .output()
        .unwrap();
    common::assert_success(&out, "algos through the jump");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let banner = v["server"]["banner"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(banner.to_lowercase().contains("dropbear"), "{v}");
    assert_eq!(v["server"]["method"], "ssh-verbose", "{v}");
    // `run` stops at Dropbear's unknown host key before a run is stored: every sample's
    // login would meet it.
    let db_path = dir.path().join("db.sqlite");
    let run = run_behind(&cfg, &db_path, &["--mode", "connect,send"]);
    let stderr = common::text(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    assert!(
        stderr.contains("hint: connect once with plain `ssh DEST`"),
        "{stderr}"
    );
    let store = sshbench::store::Store::open(&db_path).unwrap();
    assert!(store.runs().unwrap().is_empty());
    // Where the login works, `run` plans from that offer (a run of a moment: the plan is
    // stored as the run begins).
    let (_sb, db, cfg) = jump_to_dropbear(true);
    let direct = server::probe("127.0.0.1", db.port, Duration::from_secs(10)).unwrap();
    let run = run_behind(
        &cfg,
        &db_path,
        &["--mode", "connect,send", "--budget", "1s"],
    );
    common::assert_success(&run, "a run through the jump host");
    let runs = store.runs().unwrap();
    let offered = direct.kexinit.lists();
    assert!(!runs[0].plan.is_empty());
    for item in &runs[0].plan {
        for kind in [AlgoKind::Kex, AlgoKind::Cipher, AlgoKind::Mac] {
            if let Some(name) = item.suite.get(kind) {
                assert!(
                    offered.contains(kind, name),
                    "{name} planned, Dropbear lacks it"
                );
            }
        }
    }
}

/// ssh's `-J` on sshbench's command line does what `ProxyJump` in a config does: the
/// run goes through the jump host and reads the destination's offer through it.
#[test]
fn a_jump_host_given_with_dash_j_is_gone_through() {
    let (sb, db, _) = jump_to_dropbear(true);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("ssh_config");
    let both = [sb.ssh_config().to_path_buf(), db.ssh_config()]
        .map(|p| std::fs::read_to_string(p).unwrap())
        .join("\n");
    std::fs::write(&cfg, both).unwrap();
    let run = |jump: &[&str]| {
        let db_path = dir.path().join(format!("db{}.sqlite", jump.len()));
        let out = (common::sshbench().arg("run").args(jump))
            .arg("-F")
            .arg(&cfg)
            .args(["--mode", "connect", "--budget", "1s", "--db"])
            .arg(&db_path)
            .arg("dropbear-test")
            .output()
            .unwrap();
        common::assert_success(&out, "a run of Dropbear");
        common::text(&out.stderr)
    };
    let through = run(&["-J", sshbench::sandbox::ALIAS]);
    assert!(through.contains("through a proxy"), "{through}");
    assert!(
        through.contains("(proposal read from ssh -vv)"),
        "{through}"
    );
    assert!(through.to_lowercase().contains("dropbear"), "{through}");
    let direct = run(&[]);
    assert!(!direct.contains("through a proxy"), "{direct}");
}

/// The sandbox (forwarding if `forwarding`) as the jump host to a Dropbear server the
/// test's key logs in to, under the alias `dropbear-behind`.
fn jump_to_dropbear(
    forwarding: bool,
) -> (sshbench::sandbox::Sandbox, Dropbear, std::path::PathBuf) {
    let sb = sshbench::sandbox::Sandbox::start(&sshbench::sandbox::SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        forwarding,
        ..Default::default()
    })
    .unwrap();
    // Dropbear's default window (24 KiB) would hold the transfers to a few MB/s.
    let db = common::dropbear::start(common::dropbear::DropbearOptions {
        login: true,
        window: Some(4 << 20),
        ..Default::default()
    });
    let own = std::fs::read_to_string(db.ssh_config()).unwrap();
    let behind = own.replacen(
        "Host dropbear-test\n",
        &format!(
            "Host dropbear-behind\n  ProxyJump {}\n",
            sshbench::sandbox::ALIAS
        ),
        1,
    );
    let cfg = db.ssh_config().with_file_name("jump_config");
    let jump = std::fs::read_to_string(sb.ssh_config()).unwrap();
    std::fs::write(&cfg, format!("{jump}\n{behind}")).unwrap();
    (sb, db, cfg)
}

/// Through a jump host, ssh logs the jump host's connection first with the same
/// milestones: a connect sample's phases are the server's own (the jump host's whole
/// connection counts as reaching the server), so the race compares the forced key
/// exchanges, not the jump host's default one.
#[test]
fn a_connect_through_a_jump_host_is_split_at_the_server_s_milestones() {
    let (_sb, _db, cfg) = jump_to_dropbear(true);
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("db.sqlite");
    let kex = "curve25519-sha256,diffie-hellman-group14-sha256";
    let mut args = vec![
        "--mode",
        "connect,send",
        "--rounds",
        "2",
        "--sample-time",
        "1s",
    ];
    args.extend([
        "--kex",
        kex,
        "--ciphers",
        "aes128-ctr",
        "--macs",
        "hmac-sha2-256",
    ]);
    let out = run_behind(&cfg, &db_path, &args);
    common::assert_success(&out, "a connect run through the jump host");
    let store = sshbench::store::Store::open(&db_path).unwrap();
    let (_, samples) = store.select(&Default::default()).unwrap();
    let counted: Vec<_> = (samples.iter())
        .filter(|s| s.round > 0 && s.sample.mode == Mode::Connect)
        .collect();
    assert_eq!(counted.len(), 4, "{samples:?}");
    for stored in counted {
        let s = &stored.sample;
        let p = s.phases.expect("phases");
        // No banner of the jump host's in the server's version phase, and the jump
        // host's connection (its key exchange and login) before the server's banner.
        assert_eq!(p.version, 0.0, "{p:?}");
        assert!(
            p.tcp > p.kex.min(p.auth) && p.kex > 0.0 && p.auth > 0.0,
            "{p:?}"
        );
    }
    // The client's CPU has the jump host's `ssh -W` beside ssh: it carries and encrypts
    // every byte again (pooled: a process's CPU time comes in 10 ms ticks).
    let sends = || (samples.iter()).filter(|s| s.round > 0 && s.sample.mode == Mode::Send);
    let windows: Vec<_> = sends().filter_map(|s| s.sample.client_window_cpu).collect();
    assert_eq!(windows.len(), 2, "{windows:?}");
    let beside: f64 = windows.iter().map(|w| w.seconds - w.peak).sum();
    assert!(
        beside > 0.0 && windows.iter().all(|w| w.peak > 0.0),
        "{windows:?}"
    );
    // The send's verdict says that the jump host's hop is part of the path.
    let answer = common::text(&out.stdout);
    assert!(answer.contains("through a jump host or proxy"), "{answer}");
}

/// A jump host that does not forward: the offer it logged is its own, not the
/// server's, and `algos` says why instead of showing it.
#[test]
fn a_jump_host_that_will_not_forward_shows_no_offer_of_its_own() {
    let (_sb, _db, cfg) = jump_to_dropbear(false);
    let out = common::sshbench()
        .args(["algos", "-F"])
        .arg(&cfg)
        .arg("dropbear-behind")
        .output()
        .unwrap();
    let stdout = common::text(&out.stdout);
    let server = stdout
        .lines()
        .find(|l| l.starts_with("server: "))
        .unwrap_or_default();
    assert!(server.starts_with("server: unknown"), "{stdout}");
    assert!(
        server.contains("open failed: administratively prohibited"),
        "{stdout}"
    );
}
