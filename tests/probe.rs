//! The server offer probe against the sandbox sshd and against malformed servers of the
//! test's own on loopback (Dropbear's offer and jump hosts: `system/dropbear_probe.rs`).

mod common;

use sshbench::model::AlgoKind;
use sshbench::model::AlgoLists;
use sshbench::offer::server::{self, ProbeError};
use std::io::{Read, Write};
use std::net::TcpListener;
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
