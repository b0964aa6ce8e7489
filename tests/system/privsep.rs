//! Root: the sandbox leaves the system as it found it. It creates sshd's missing
//! privilege-separation directory, and removes it only when no sshd needs it any more:
//! an sshd started while the sandbox ran keeps working after the sandbox is gone.

use crate::common;

use sshbench::model::AlgoLists;
use sshbench::offer::server;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PRIVSEP_DIR: &str = "/run/sshd";

/// An sshd process, killed on drop (also when the test fails).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A plain sshd on 127.0.0.1, as a distribution's config would run it, in `dir`.
fn other_sshd(dir: &Path) -> (Running, u16) {
    let key = dir.join("host_ed25519");
    common::login::keygen(&key, "");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile {}\nUsePAM no\n",
            key.display(),
            dir.join("sshd.pid").display()
        ),
    )
    .unwrap();
    let sshd = sshbench::sandbox::find_sshd().expect("openssh-server is installed");
    let child = Running(
        Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the second sshd did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port)
}

#[test]
fn an_sshd_started_during_a_sandbox_keeps_working_after_it() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test needs root (as CI has): the sandbox fixes privilege separation only as root"
    );
    let existed = Path::new(PRIVSEP_DIR).exists();
    let sandbox = common::sandbox(AlgoLists::new());
    assert!(Path::new(PRIVSEP_DIR).is_dir(), "sshd needs {PRIVSEP_DIR}");
    let dir = tempfile::tempdir().unwrap();
    let (other, port) = other_sshd(dir.path());
    let probe = || server::probe("127.0.0.1", port, Duration::from_secs(5));
    assert!(probe().is_ok(), "the second sshd answers");
    drop(sandbox);
    assert!(
        Path::new(PRIVSEP_DIR).is_dir(),
        "removed under a running sshd"
    );
    let offer = probe();
    assert!(offer.is_ok(), "after the sandbox: {offer:?}");
    drop(other);
    // With no sshd left, the next sandbox to end removes what sshbench created.
    drop(common::sandbox(AlgoLists::new()));
    assert_eq!(
        Path::new(PRIVSEP_DIR).exists(),
        existed,
        "{PRIVSEP_DIR} is not as it was before the test"
    );
}
