//! X11 forwarding (`x11` mode) against the sandbox: a private Xvfb display here, the X
//! clients on the server through untrusted forwarding, timed; and each thing a server can
//! lack read as "not available", never as a failure. Needs Xvfb, xauth, xdpyinfo and xwd
//! (Debian: xvfb xauth x11-utils x11-apps).

use crate::common;
use sshbench::measure::Transport;
use sshbench::model::{AlgoLists, Mode, Outcome, SampleRequest, Suite};
use sshbench::sandbox::{Sandbox, SandboxOptions};
use sshbench::sys::cancel::Cancel;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Each test here starts an Xvfb as this process's child; the first counts them, so
/// they take turns (a CI run counted another test's display as a second one).
static DISPLAYS: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    DISPLAYS.lock().unwrap_or_else(|e| e.into_inner())
}

fn start(opts: SandboxOptions) -> Sandbox {
    for program in ["Xvfb", "xauth", "xdpyinfo", "xwd"] {
        assert!(
            sshbench::sandbox::find_on_path(program).is_some(),
            "{program} is needed: apt-get install xvfb xauth x11-utils x11-apps"
        );
    }
    Sandbox::start(&SandboxOptions {
        candidates: sshbench::offer::candidates(&common::client()),
        restrict: AlgoLists::default(),
        ..opts
    })
    .expect("the sandbox sshd starts")
}

fn request(compression: bool) -> SampleRequest {
    SampleRequest {
        suite: Suite {
            compression: compression.then(|| "zlib@openssh.com".into()),
            ..Suite::default()
        },
        mode: Mode::X11,
        bytes: 0,
        ramp: 0,
        timeout: Duration::from_secs(60),
        until: None,
        together: None,
        reference: None,
    }
}

/// This process's Xvfb children.
fn our_xvfb() -> usize {
    let me = std::process::id().to_string();
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or("");
        let ppid = after.split_whitespace().nth(1).unwrap_or("");
        if stat.contains("(Xvfb)") && ppid == me {
            n += 1;
        }
    }
    n
}

#[test]
fn x11_times_a_round_trip_client_and_a_bulk_one_through_a_private_display() {
    let _turn = one_at_a_time();
    let sb = start(SandboxOptions {
        x11: true,
        ..SandboxOptions::default()
    });
    let mut t = common::transport(&sb);
    for compression in [false, true] {
        // Up to three tries, as the runner gives a failed sample: one CI run among the
        // whole second tier saw a sample end before any X client ran (not seen alone).
        let mut tries = (0..3).map(|_| t.measure(&request(compression), &Cancel::new()));
        let s = (tries.find(|s| s.outcome.is_success()))
            .unwrap_or_else(|| panic!("three tries failed\n{}", sb.log()));
        assert_eq!(s.echoes.len(), 5, "five xdpyinfo runs");
        assert!(
            s.echoes.iter().all(|&e| e > 0.0 && e < 30.0),
            "{:?}",
            s.echoes
        );
        // The whole 1024x768 display, drawn through the forwarding.
        assert!(s.bytes > 1_000_000, "{}", s.bytes);
        assert!(s.transfer.is_some_and(|d| d > Duration::ZERO));
        let n = s
            .negotiated
            .as_ref()
            .expect("ssh -v says what it negotiated");
        let zlib = n.compression_cs.as_deref() == Some("zlib@openssh.com");
        assert_eq!(zlib, compression, "{n:?}");
    }
    assert_eq!(our_xvfb(), 1, "one display for the transport's life");
    drop(t);
    assert_eq!(our_xvfb(), 0, "the display goes with the transport");
}

fn assert_unavailable(sb: &Sandbox, said: &str) {
    let mut t = common::transport(sb);
    let s = t.measure(&request(false), &Cancel::new());
    assert!(
        matches!(s.outcome, Outcome::Unavailable { .. }),
        "{s:?}\n{}",
        sb.log()
    );
    let words = sshbench::views::problem::of_outcome(&s.outcome).unwrap();
    assert!(words.contains(said), "{words}");
}

#[test]
fn a_server_that_forwards_no_x11_or_has_no_xauth_is_not_available() {
    let _turn = one_at_a_time();
    let off = start(SandboxOptions::default());
    assert_unavailable(&off, "the server forwards no X11");
    let no_xauth = start(SandboxOptions {
        x11: true,
        xauth: Some("/nonexistent/xauth".into()),
        ..SandboxOptions::default()
    });
    assert_unavailable(&no_xauth, "no xauth");
}

/// A directory of what the server side runs, without `without`.
fn path_without(dir: &Path, without: &str) -> String {
    for tool in ["sh", "stty", "dd", "wc", "xdpyinfo", "xwd"] {
        if tool != without {
            let real = sshbench::sandbox::find_on_path(tool).unwrap();
            std::os::unix::fs::symlink(real, dir.join(tool)).unwrap();
        }
    }
    dir.display().to_string()
}

#[test]
fn a_server_without_its_x_clients_is_not_available() {
    let _turn = one_at_a_time();
    for (missing, said) in [("xdpyinfo", "no xdpyinfo"), ("xwd", "no xwd")] {
        let tools = tempfile::tempdir().unwrap();
        let sb = start(SandboxOptions {
            x11: true,
            session_path: Some(path_without(tools.path(), missing)),
            ..SandboxOptions::default()
        });
        assert_unavailable(&sb, said);
    }
}
