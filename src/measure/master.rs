//! One connection that samples run over as sessions: an OpenSSH control master with the
//! suite forced, whose handshake is over before the first session starts (a workload's
//! tool, or the send, receive and echo samples of a suite's round). An attached `ssh`
//! can never open a second connection: `ProxyCommand=false` makes that fail loudly
//! instead of negotiating anew.

use super::{openssh, rekey, sshlog};
use crate::destination::Target;
use crate::model::{Doing, FailureKind, Negotiated, Outcome, Problem, SampleRequest};
use crate::sys::cancel::Cancel;
use crate::sys::proc::{self, Exit};
use crate::sys::run::{self, Finished};
use std::io::BufReader;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

const MAX_LINES: usize = 4000;
/// How long a master's log may lag behind its control socket.
const LOG_LAG: Duration = Duration::from_secs(1);

/// ssh's log lines and when each arrived (since ssh was started).
type Log = Arc<Mutex<(Vec<String>, Vec<Duration>)>>;

/// A live control master; dropping it closes the connection.
pub struct Master {
    child: Child,
    exited: mpsc::Receiver<Exit>,
    log: Log,
    /// From ssh's start until the master listened.
    up_after: Duration,
    /// When ssh was started: the log's times count from it.
    started: Instant,
    ssh: PathBuf,
    socket: PathBuf,
    /// `-F`/`-o` options of the target that the attached clients repeat.
    config: Vec<String>,
    destination: String,
    _dir: tempfile::TempDir,
}

/// Keep the target's `-F` and `-o` options (a port or jump host belongs to the
/// master's connection only).
fn config_options(target: &Target) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = target.ssh_options.iter();
    while let Some(a) = it.next() {
        if a == "-F" || a == "-o" {
            if let Some(v) = it.next() {
                out.extend([a.clone(), v.clone()]);
            }
        }
    }
    out
}

fn read_lines(child: &mut Child, start: Instant) -> Log {
    let log: Log = Arc::default();
    let stderr = child.stderr.take().expect("stderr piped");
    let shared = Arc::clone(&log);
    proc::spawn_named("sb-master-log", move || {
        let mut r = BufReader::new(stderr);
        while let Ok(Some(line)) = proc::read_bounded_line(&mut r, 1024) {
            let mut v = shared.lock().expect("log lock");
            if v.0.len() < MAX_LINES && !rekey::is_flood(&line) {
                v.0.push(line);
                v.1.push(start.elapsed());
            }
        }
    });
    log
}

impl Master {
    /// Connect with `req`'s suite forced and wait until the master listens (ssh sets the
    /// socket up only once authenticated; it lives in a directory under `scratch`). The
    /// failure is ssh's own outcome.
    pub fn start(
        ssh: &Path,
        target: &Target,
        req: &SampleRequest,
        scratch: &Path,
        cancel: &Cancel,
    ) -> Result<Master, Outcome> {
        let dir = tempfile::Builder::new()
            .prefix("mux.")
            .tempdir_in(scratch)
            .map_err(|e| Outcome::local(Doing::TempDir, e))?;
        let socket = dir.path().join("s");
        let mut args: Vec<String> = ["-N", "-o", "ControlMaster=yes", "-o", "ControlPersist=no"]
            .map(String::from)
            .to_vec();
        args.extend(["-o".into(), format!("ControlPath={}", socket.display())]);
        args.extend(openssh::session_options(req));
        args.extend(target.ssh_options.iter().cloned());
        args.extend(["--".into(), target.destination.clone()]);
        let start = Instant::now();
        let mut cmd = Command::new(ssh);
        // A master outliving a killed sshbench would hold its connection open.
        proc::die_with_parent(&mut cmd);
        let mut child = cmd
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| Outcome::local(Doing::RunningSsh, e))?;
        let exited = proc::reap_in_background(child.id());
        let log = read_lines(&mut child, start);
        let mut master = Master {
            child,
            exited,
            log,
            up_after: Duration::ZERO,
            started: start,
            ssh: ssh.to_path_buf(),
            socket,
            config: config_options(target),
            destination: target.destination.clone(),
            _dir: dir,
        };
        master.wait_ready(req.timeout, cancel)?;
        master.up_after = start.elapsed();
        Ok(master)
    }

    /// Wait for the control socket, and (up to [`LOG_LAG`] more) for the log reader to
    /// have taken in ssh's authentication line, logged before the socket exists: the
    /// samples' key exchange time and rekey limits come from the log as it is then.
    fn wait_ready(&self, timeout: Duration, cancel: &Cancel) -> Result<(), Outcome> {
        let start = Instant::now();
        let mut socket_at: Option<Instant> = None;
        let logged = || {
            let (lines, times, _) = self.log();
            sshlog::phases(&lines, &times, Duration::ZERO).is_some()
        };
        loop {
            if socket_at.is_none() && self.socket.exists() {
                socket_at = Some(Instant::now());
            }
            if socket_at.is_some_and(|at| logged() || at.elapsed() >= LOG_LAG) {
                return Ok(());
            }
            if self.exited.try_recv().is_ok() {
                // Let the reader take in ssh's last words.
                std::thread::sleep(Duration::from_millis(50));
                let lines = self.lines();
                return Err(sshlog::classify(&lines).unwrap_or_else(|| {
                    let why = match proc::last_message(&lines) {
                        Some(said) => Problem::Said { said },
                        None => Problem::MasterExited,
                    };
                    Outcome::failed(FailureKind::Network, why)
                }));
            }
            if cancel.is_cancelled() {
                return Err(Outcome::failed(
                    FailureKind::Cancelled,
                    Problem::Interrupted,
                ));
            }
            if start.elapsed() >= timeout {
                return Err(Outcome::failed(
                    FailureKind::Timeout,
                    Problem::ConnectionNotUp,
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.log.lock().expect("log lock").0.clone()
    }

    /// When ssh was started: the log's times count from it.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The log so far with each line's time since ssh started, and how long the
    /// connection took to come up.
    pub fn log(&self) -> (Vec<String>, Vec<Duration>, Duration) {
        let log = self.log.lock().expect("log lock");
        (log.0.clone(), log.1.clone(), self.up_after)
    }

    pub fn negotiated(&self) -> Option<Negotiated> {
        sshlog::negotiated(&self.lines())
    }

    /// The connection is still up (its ssh has not exited).
    pub fn alive(&self) -> bool {
        // Signal 0 only checks; once reaped, the pid is gone (ESRCH).
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, None).is_ok()
    }

    /// Whether the connection has ended, given the moment an ending connection takes
    /// to notice (after a session that failed because it was ending).
    pub fn ended(&self) -> bool {
        self.ends_within(Duration::from_millis(200))
    }

    /// Whether the connection ends within `within` (polled: the reaper owns the exit).
    fn ends_within(&self, within: Duration) -> bool {
        let start = Instant::now();
        while self.alive() {
            if start.elapsed() >= within {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Whether the server ends a connection after its first session, as tinysshd does
    /// (one channel per connection): a fresh connection is asked for two trivial
    /// sessions, and the second finds it gone. Anything else that goes wrong says no.
    pub fn one_session_only(
        ssh: &Path,
        target: &Target,
        req: &SampleRequest,
        scratch: &Path,
        cancel: &Cancel,
    ) -> bool {
        let Ok(master) = Master::start(ssh, target, req, scratch, cancel) else {
            return false;
        };
        let ran = |m: &Master| m.run("exit 0", req.timeout, cancel).exit.code == Some(0);
        ran(&master) && !ran(&master) && master.ends_within(Duration::from_secs(1))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The options that make an `ssh` (or a tool's) use this connection and nothing
    /// else.
    pub fn attach_options(&self) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "-o".into(),
            format!("ControlPath={}", self.socket.display()),
        ];
        for o in [
            "ControlMaster=no",
            "ProxyCommand=false",
            "BatchMode=yes",
            "RemoteCommand=none",
            "RequestTTY=no",
        ] {
            v.extend(["-o".into(), o.into()]);
        }
        v.extend(self.config.iter().cloned());
        v
    }

    pub fn destination(&self) -> &str {
        &self.destination
    }

    /// The destination as sftp, scp and rsync take it: an IPv6 address in brackets, or
    /// their `host:path` would split it at its first colon.
    pub fn tool_destination(&self) -> String {
        bracketed(&self.destination)
    }

    /// Run `command` on the server over this connection.
    pub fn run(&self, command: &str, timeout: Duration, cancel: &Cancel) -> Finished {
        let mut cmd = Command::new(&self.ssh);
        cmd.args(self.attach_options())
            .args(["-T", "--", &self.destination, command]);
        run::run(cmd, timeout, cancel).unwrap_or_else(|e| Finished {
            exit: Exit {
                at: Instant::now(),
                code: None,
                signal: None,
                cpu: Default::default(),
            },
            wall: Duration::ZERO,
            stdout: String::new(),
            stderr: format!("cannot run ssh: {e}"),
            killed_by_deadline: None,
        })
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        proc::kill_group(self.child.id(), libc::SIGTERM);
        if self.exited.recv_timeout(Duration::from_secs(2)).is_err() {
            proc::kill_group(self.child.id(), libc::SIGKILL);
        }
    }
}

/// `user@[::1]` for `user@::1`; any other destination as it is.
fn bracketed(destination: &str) -> String {
    let (user, host) = match destination.rsplit_once('@') {
        Some((user, host)) => (&destination[..=user.len()], host),
        None => ("", destination),
    };
    if host.contains(':') && !host.starts_with('[') {
        format!("{user}[{host}]")
    } else {
        destination.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_are_bracketed_for_the_copying_tools() {
        assert_eq!(bracketed("root@::1"), "root@[::1]");
        assert_eq!(bracketed("2001:db8::5"), "[2001:db8::5]");
        assert_eq!(bracketed("root@[::1]"), "root@[::1]");
        assert_eq!(bracketed("pi@nas.local"), "pi@nas.local");
        assert_eq!(bracketed("a@b@::1"), "a@b@[::1]");
        assert_eq!(bracketed("nas"), "nas");
    }

    #[test]
    fn attached_clients_keep_only_config_options() {
        let t = Target::parse("bob@nas:2222").unwrap().with_ssh_args(vec![
            "-F".into(),
            "/x/cfg".into(),
            "-o".into(),
            "User=al".into(),
        ]);
        assert_eq!(config_options(&t), ["-F", "/x/cfg", "-o", "User=al"]);
    }
}
