//! Offers and connections through Dropbear: its own offer read, and jump hosts (a
//! Dropbear behind the sandbox, and the sandbox behind Dropbear).

use crate::common::{self, dropbear::Dropbear};
use sshbench::model::{AlgoKind, Mode};
use sshbench::offer::server;
use std::path::Path;
use std::time::Duration;

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
