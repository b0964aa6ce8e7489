//! End-to-end tests of the `sshbench` binary: against the real sandbox sshd, and with the
//! deterministic mock transport for a snapshot of the run table.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sshbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sshbench"))
}

#[test]
fn run_against_the_sandbox_prints_a_table() {
    let out = sshbench()
        .args(["run", "--size", "2M", "--mode", "send,receive,connect"])
        .args([
            "--ciphers",
            "aes128-gcm@openssh.com,aes128-ctr",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
        ])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("local sandbox"), "{stderr}");
    assert!(stderr.contains("5 measurements planned"), "{stderr}");
    for want in [
        "connect (1 suites)",
        "send (2 suites, 2 MiB",
        "receive (2 suites",
        "aes128-gcm@openssh.com",
        "<implicit>",
        "recommended",
    ] {
        assert!(stdout.contains(want), "{want:?} missing:\n{stdout}");
    }
    assert!(!stdout.contains("Not measured"), "{stdout}");
}

#[test]
fn ctrl_c_stops_the_run_tears_down_and_exits_130() {
    let tag = format!("SSHBENCH_TEST_TAG=ctrlc-{}", std::process::id());
    let (k, v) = tag.split_once('=').unwrap();
    let mut child = sshbench()
        .args([
            "run",
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
    let mut dir = None;
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(d) = line.split("private dir ").nth(1) {
            dir = Some(d.trim().trim_end_matches(')').to_string());
        }
        if line.contains("measurements planned") {
            break;
        }
        line.clear();
    }
    let dir = dir.expect("the sandbox dir is announced");
    // Let the transfer get going (ssh and the sandbox sshd session are running).
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        common::processes_tagged(&tag).len() >= 2,
        "ssh and sshd should be running"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let start = Instant::now();
    let status = child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(status.code(), Some(130));
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
    assert!(rest.contains("interrupted"), "{rest}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !common::processes_tagged(&tag).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        common::processes_tagged(&tag),
        Vec::<u32>::new(),
        "processes left behind"
    );
    assert!(!std::path::Path::new(&dir).exists(), "{dir} left behind");
}

#[test]
fn bad_inputs_give_clear_errors() {
    for (args, want) in [
        (vec!["run", "--size", "0"], "at least 1 byte"),
        (vec!["run", "--size", "8Q"], "unknown unit"),
        (vec!["run", "-oProxyCommand=evil"], "unexpected argument"),
        (vec!["run", "--", "-oProxyCommand=evil"], "starts with '-'"),
        (vec!["run", "host:70000"], "port"),
        (vec!["run", "--mode", "upload"], "invalid value"),
        (
            vec!["run", "--ciphers", "rot13-cbc", "--mode", "send"],
            "aes128-ctr",
        ),
        (vec!["run", "--timeout", "0"], "--timeout"),
    ] {
        let out = sshbench().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: {want:?} not in {stderr}");
    }
}

#[test]
fn an_unreachable_destination_fails_fast_with_ssh_s_message() {
    // Port 1 on loopback: nothing listens there.
    let out = sshbench()
        .args([
            "run",
            "127.0.0.1:1",
            "--mode",
            "connect",
            "--kex",
            "curve25519-sha256",
            "--timeout",
            "10",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    // One attempt, not one per suite.
    assert_eq!(stderr.matches("[1/").count(), 1, "{stderr}");
    assert!(!stderr.contains("[2/"), "{stderr}");
}

#[test]
fn run_output_snapshot_with_mock_transport() {
    let out = sshbench()
        .args([
            "run",
            "localhost",
            "--mock-transport",
            "--size",
            "8M",
            "--kex",
            "curve25519-sha256,ecdh-sha2-nistp256",
        ])
        .args([
            "--ciphers",
            "aes128-ctr,aes128-gcm@openssh.com",
            "--macs",
            "hmac-sha1,umac-64-etm@openssh.com",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

/// The sandbox also works for an ordinary user (no privilege separation, own keys).
#[test]
fn sandbox_runs_as_an_ordinary_user() {
    let mut cmd;
    if nix::unistd::geteuid().is_root() {
        let user = "sshbench-test";
        if nix::unistd::User::from_name(user).unwrap().is_none() {
            let st = Command::new("useradd")
                .args(["--create-home", "--shell", "/bin/sh", user])
                .status()
                .unwrap();
            assert!(st.success(), "useradd {user}");
        }
        let u = nix::unistd::User::from_name(user).unwrap().unwrap();
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
        .args([
            "run",
            "--size",
            "1M",
            "--mode",
            "send,connect",
            "--ciphers",
            "aes128-gcm@openssh.com",
        ])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stdout.contains("Not measured"), "{stdout}\n{stderr}");
    assert!(stdout.contains("aes128-gcm@openssh.com"), "{stdout}");
}
