//! Running a helper command to its end with a deadline and bounded output: what the
//! workloads use for the server's setup, count and clean-up commands and for the tools
//! themselves. The command runs in its own process group, so a deadline or a
//! cancellation kills it with everything it started.

use super::cancel::Cancel;
use super::proc::{self, Exit};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Bytes of stdout and of stderr kept; a server may send anything.
pub const MAX_OUTPUT: u64 = 256 * 1024;

/// How a helper command ended.
#[derive(Debug)]
pub struct Finished {
    pub exit: Exit,
    /// Spawn to exit.
    pub wall: Duration,
    pub stdout: String,
    pub stderr: String,
    /// `Some(true)` when the deadline killed it, `Some(false)` when cancellation did.
    pub killed_by_deadline: Option<bool>,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.killed_by_deadline.is_none() && self.exit.code == Some(0)
    }

    /// The last line a person would read: stderr's, else stdout's.
    pub fn last_line(&self) -> String {
        [&self.stderr, &self.stdout]
            .into_iter()
            .flat_map(|s| s.lines().rev())
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("debug"))
            .unwrap_or("no message")
            .to_string()
    }
}

fn read_bounded(r: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut r = r;
        let _ = r.by_ref().take(MAX_OUTPUT).read_to_end(&mut buf);
        // Drain the rest so the child never blocks on a full pipe.
        let _ = std::io::copy(&mut r, &mut std::io::sink());
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

/// Run `cmd` (stdin closed) until it exits, `timeout` passes or `cancel` fires.
pub fn run(mut cmd: Command, timeout: Duration, cancel: &Cancel) -> std::io::Result<Finished> {
    let start = Instant::now();
    // This thread waits for it: the child goes if sshbench is killed meanwhile.
    proc::die_with_parent(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pid = child.id();
    let exited = proc::reap_in_background(pid);
    let out = read_bounded(child.stdout.take().expect("stdout piped"));
    let err = read_bounded(child.stderr.take().expect("stderr piped"));
    let mut killed = None;
    let exit = loop {
        match exited.recv_timeout(Duration::from_millis(10)) {
            Ok(exit) => break exit,
            Err(RecvTimeoutError::Disconnected) => unreachable!("the reaper always reports"),
            Err(RecvTimeoutError::Timeout) => {
                let late = start.elapsed() >= timeout;
                if killed.is_none() && (late || cancel.is_cancelled()) {
                    killed = Some(late);
                    proc::kill_group(pid, libc::SIGKILL);
                }
            }
        }
    };
    proc::kill_group(pid, libc::SIGKILL);
    let grace = Duration::from_secs(2);
    Ok(Finished {
        wall: exit.at - start,
        exit,
        stdout: out.recv_timeout(grace).unwrap_or_default(),
        stderr: err.recv_timeout(grace).unwrap_or_default(),
        killed_by_deadline: killed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn output_and_status_come_back() {
        let f = run(
            sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(5),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!((f.stdout.as_str(), f.stderr.as_str()), ("out\n", "err\n"));
        assert_eq!(f.exit.code, Some(3));
        assert!(!f.success());
        assert_eq!(f.last_line(), "err");
    }

    #[test]
    fn the_deadline_kills_the_whole_group() {
        let f = run(
            sh("sleep 30 & sleep 30; echo never"),
            Duration::from_millis(200),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(f.killed_by_deadline, Some(true));
        assert!(f.wall < Duration::from_secs(5), "{:?}", f.wall);
        assert!(f.stdout.is_empty());
    }

    #[test]
    fn output_is_bounded() {
        let f = run(
            sh("head -c 2000000 /dev/zero"),
            Duration::from_secs(10),
            &Cancel::new(),
        )
        .unwrap();
        assert!(f.success());
        assert_eq!(f.stdout.len() as u64, MAX_OUTPUT);
    }
}
