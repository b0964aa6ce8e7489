//! Helpers shared by the integration tests: the binary and its output, samples built
//! field by field, and a real sandbox sshd with a transport to it.
#![allow(dead_code)]

pub mod dropbear;
pub mod login;
pub mod pg;
pub mod tinyssh;
pub mod workers;

use sshbench::destination::Target;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::model::AlgoLists;
use sshbench::model::{CpuTimes, CpuWindow, Mode, Outcome, Phases, Rekey, Sample, Suite, Window};
use sshbench::offer::{self, client};
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A copy of the sandbox's ssh_config, in `dir`, that logs in with a new key of its own
/// (locked with `passphrase` unless it is empty), one the sandbox does not accept.
pub fn config_with_another_key(sb: &Sandbox, dir: &Path, passphrase: &str) -> PathBuf {
    let key = dir.join("another_key");
    login::keygen(&key, passphrase);
    let config = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let other = config.replace(
        &sb.client_key().display().to_string(),
        &key.display().to_string(),
    );
    assert_ne!(other, config);
    let path = dir.join("ssh_config_another_key");
    std::fs::write(&path, other).unwrap();
    path
}

/// An answer's words joined by single spaces: what it says, whatever the line breaks its
/// wrapping put in.
pub fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `sshbench` binary, colour off and in a UTF-8 locale whoever runs the tests (its
/// tables, bars included, are compared as text).
pub fn sshbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sshbench"));
    // libpq's TLS variables, which the PostgreSQL store reads, from the test's own URLs only.
    c.env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("PGSSLMODE")
        .env_remove("PGSSLROOTCERT");
    c
}

/// `sshbench ARGS --db DB`, which must succeed: its stdout.
pub fn stdout_of(db: &Path, args: &[&str]) -> String {
    let out = sshbench().args(args).arg("--db").arg(db).output().unwrap();
    assert_success(&out, args);
    text(&out.stdout)
}

/// Fails the test with the command's stderr unless it exited 0.
pub fn assert_success(out: &Output, what: impl std::fmt::Debug) {
    assert!(out.status.success(), "{what:?}: {}", text(&out.stderr));
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A sample built field by field from a successful one with every figure empty.
pub struct SampleBuilder(Sample);

impl SampleBuilder {
    pub fn new(mode: Mode, suite: &Suite) -> Self {
        SampleBuilder(Sample::new(suite.clone(), mode, Outcome::Success))
    }

    pub fn outcome(mut self, o: Outcome) -> Self {
        self.0.outcome = o;
        self
    }

    pub fn wall(mut self, d: Duration) -> Self {
        self.0.wall = d;
        self
    }

    /// A transfer of `bytes` whose steady window moved `window` bytes in `time`; the
    /// transfer lasted twice the window.
    pub fn transfer(mut self, bytes: u64, window: u64, time: Duration) -> Self {
        self.0.bytes = bytes;
        self.0.window = Some(Window {
            bytes: window,
            time,
        });
        self.0.transfer = Some(time * 2);
        self
    }

    pub fn files(mut self, files: u64) -> Self {
        self.0.files = Some(files);
        self
    }

    pub fn bytes(mut self, bytes: u64) -> Self {
        self.0.bytes = bytes;
        self
    }

    pub fn client_cpu(mut self, user: Duration, system: Duration) -> Self {
        self.0.client_cpu = Some(CpuTimes { user, system });
        self
    }

    /// Each side's busiest process busy for `client` and `server` (shares of a core) of
    /// the transfer's window: call after [`transfer`](Self::transfer).
    pub fn busy(mut self, client: f64, server: f64) -> Self {
        let w = self.0.window.expect("a transfer's window");
        let t = w.time.as_secs_f64();
        self.0.client_window_cpu = Some(CpuWindow::of(client * t, w.time, w.bytes));
        self.0.server_cpu = Some(CpuWindow::of(server * t, w.time, w.bytes));
        self
    }

    /// The idle round trip measured before the transfer.
    pub fn rtt(mut self, rtt: Duration) -> Self {
        self.0.rtt = Some(rtt);
        self
    }

    pub fn rekey(mut self, every: u64, seconds: f64) -> Self {
        self.0.rekey = Some(Rekey {
            every,
            seconds,
            within: 0,
        });
        self
    }

    pub fn phases(mut self, phases: Phases) -> Self {
        self.0.phases = Some(phases);
        self
    }

    pub fn echoes(mut self, echoes: Vec<f64>) -> Self {
        self.0.echoes = echoes;
        self
    }

    pub fn build(self) -> Sample {
        self.0
    }
}

pub fn ssh() -> PathBuf {
    sandbox::find_on_path("ssh").expect("the OpenSSH client must be installed to run these tests")
}

pub fn client() -> client::ClientOffer {
    client::query(&ssh()).expect("ssh -V / ssh -Q")
}

/// A sandbox with everything the client knows switched on, or restricted to `restrict`.
pub fn sandbox(restrict: AlgoLists) -> Sandbox {
    Sandbox::start(&SandboxOptions {
        candidates: offer::candidates(&client()),
        restrict,
        ..SandboxOptions::default()
    })
    .expect("the sandbox sshd starts (is openssh-server installed?)")
}

pub fn transport(sb: &Sandbox) -> OpenSsh {
    OpenSsh::new(
        ssh(),
        Target::sandbox(sb.ssh_config(), sandbox::ALIAS),
        Payload::random(1 << 20, 42),
    )
    .with_terminals(sb.gives_terminals())
}

/// Let the sandbox's key run sftp alone (as `ForceCommand internal-sftp` does for a NAS's
/// backup account), starting in the sandbox's empty home.
pub fn allow_sftp_alone(sb: &Sandbox) {
    let home = sb.dir().join("home");
    force_command(sb, &format!("internal-sftp -d {}", home.display()));
}

/// Make the sandbox's key run `command` whatever the client asks (sessions and
/// subsystems alike), as `command=` in authorized_keys does.
pub fn force_command(sb: &Sandbox, command: &str) {
    let keys = sb.dir().join("authorized_keys");
    let key = std::fs::read_to_string(sb.dir().join("client_ed25519.pub")).unwrap();
    let forced = format!("restrict,command=\"{command}\"");
    std::fs::write(&keys, format!("{forced} {key}")).unwrap();
}

/// Processes whose environment carries `tag` (Linux: /proc/PID/environ).
pub fn processes_tagged(tag: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if env.split(|b| *b == 0).any(|kv| kv == tag.as_bytes()) {
                out.push(pid);
            }
        }
    }
    out
}

pub fn alive(pid: u32) -> bool {
    // Zombies count as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// A second sshd beside the sandbox's, killed on drop: the sandbox's config and keys
/// with `extra` lines (a server setting the sandbox does not make), on a port of its own.
pub struct Beside {
    child: std::process::Child,
    /// An ssh_config for it under the sandbox's alias, with its known_hosts.
    pub ssh_config: PathBuf,
}

impl Drop for Beside {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn sshd_beside(sb: &Sandbox, dir: &Path, extra: &str) -> Beside {
    let read = |name: &str| std::fs::read_to_string(sb.dir().join(name)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (old, new) = (format!("Port {}", sb.port()), format!("Port {port}"));
    let pid = sb.dir().join("sshd.pid").display().to_string();
    let sshd_config = dir.join("sshd_config");
    let own_pid = dir.join("sshd.pid").display().to_string();
    let server = (read("sshd_config").replace(&old, &new)).replace(&pid, &own_pid);
    std::fs::write(&sshd_config, format!("{server}{extra}\n")).unwrap();
    let known = dir.join("known_hosts");
    let at = |p: u16| format!("[127.0.0.1]:{p}");
    std::fs::write(
        &known,
        read("known_hosts").replace(&at(sb.port()), &at(port)),
    )
    .unwrap();
    let known_then = sb.dir().join("known_hosts").display().to_string();
    let client = (std::fs::read_to_string(sb.ssh_config()).unwrap())
        .replace(&old, &new)
        .replace(&known_then, &known.display().to_string());
    let ssh_config = dir.join("ssh_config");
    std::fs::write(&ssh_config, client).unwrap();
    let child = Command::new(sandbox::find_sshd().unwrap())
        .args(["-D", "-e", "-f"])
        .arg(&sshd_config)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let beside = Beside { child, ssh_config };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "sshd {extra} did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    beside
}

/// A stored run's destination, for runs built by hand.
pub static TARGET: std::sync::LazyLock<sshbench::destination::Target> =
    std::sync::LazyLock::new(|| sshbench::destination::Target::parse("pi@nas").unwrap());

/// The empty options record, for runs built by hand.
pub static OPTIONS: std::sync::LazyLock<sshbench::model::RunOptions> =
    std::sync::LazyLock::new(sshbench::model::RunOptions::default);

/// Run options with the fields of `json` (an object) set over the empty record.
pub fn options(json: &str) -> sshbench::model::RunOptions {
    let mut all = serde_json::to_value(sshbench::model::RunOptions::default()).unwrap();
    let given: serde_json::Value = serde_json::from_str(json).unwrap();
    for (k, v) in given.as_object().unwrap() {
        all[k] = v.clone();
    }
    serde_json::from_value(all).unwrap()
}
