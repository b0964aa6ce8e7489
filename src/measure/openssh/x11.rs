//! X11 forwarding (`x11` mode): a private Xvfb display on this machine, kept for the
//! transport's life, and per sample one `ssh -tt -X` (untrusted) whose server side waits
//! for a key (typed as a person starts an X program from a terminal, which starts the
//! keystroke clock where the client has one), then runs the round-trip-bound X client
//! [`ROUND_TRIPS`] times and the bulk one once, a line after each.

use super::OpenSsh;
use crate::measure::{remote, sshlog};
use crate::model::x11::{ROUND_TRIPS, SCREEN};
use crate::model::{Doing, FailureKind, Mode, Outcome, Problem, Sample, SampleRequest, X11Missing};
use crate::sys::cancel::Cancel;
use crate::sys::proc;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const NOX: &str = "SSHBENCH-NOX";
const RAN: &str = "SSHBENCH-X";
const MAX_LINE: usize = 4096;

/// A private X server for the forwarded sessions; stopped when dropped.
pub(super) struct XDisplay {
    child: Child,
    pub display: String,
}

impl XDisplay {
    /// Start Xvfb on the first free display (it says which), local connections only.
    pub(super) fn start() -> Result<XDisplay, Outcome> {
        XDisplay::start_program(Path::new("Xvfb"))
    }

    fn start_program(xvfb: &Path) -> Result<XDisplay, Outcome> {
        let mut cmd = Command::new(xvfb);
        proc::die_with_parent(&mut cmd);
        let spawned = cmd
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                SCREEN,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Outcome::Unavailable {
                    problem: Problem::NoXvfb,
                });
            }
            Err(e) => {
                let e = format!("{}: {e}", xvfb.display());
                return Err(Outcome::local(Doing::RunningTool, e));
            }
        };
        let mut out = BufReader::new(child.stdout.take().expect("piped"));
        let number = proc::read_bounded_line(&mut out, 16).ok().flatten();
        match number.as_deref().map(str::trim).map(str::parse::<u32>) {
            Some(Ok(n)) => Ok(XDisplay {
                child,
                display: format!(":{n}"),
            }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                Err(Outcome::Unavailable {
                    problem: Problem::NoXvfb,
                })
            }
        }
    }
}

impl Drop for XDisplay {
    fn drop(&mut self) {
        proc::kill_group(self.child.id(), libc::SIGTERM);
        let _ = self.child.wait();
    }
}

/// The server's side: what it lacks, or ready; after a key, each X client's line.
fn x11_command() -> String {
    let need = |p: &str| format!("command -v {p} >/dev/null || {{ echo {NOX} {p}; exit 0; }}");
    remote::sh(&format!(
        "stty raw -echo 2>/dev/null; [ -n \"$DISPLAY\" ] || {{ echo {NOX} display; exit 0; }}; \
         {}; {}; echo {READY}; dd bs=1 count=1 >/dev/null 2>&1; i=0; \
         while [ $i -lt {ROUND_TRIPS} ]; do xdpyinfo >/dev/null 2>&1 || exit 3; echo {RAN}; \
         i=$((i + 1)); done; xwd -root -silent | wc -c",
        need("xdpyinfo"),
        need("xwd"),
        READY = remote::READY,
    ))
}

/// What the session printed, read as it came.
#[derive(Default)]
struct Seen {
    missing: Option<X11Missing>,
    /// When the key was typed, each X client's line, and the bulk's count line.
    typed: Option<Instant>,
    ran: Vec<Instant>,
    bulk: Option<(Instant, u64)>,
}

/// Read the session's lines, typing the key once it is ready.
fn follow(out: impl Read, mut stdin: impl Write, tx: mpsc::Sender<Seen>) {
    let mut r = BufReader::new(out);
    let mut seen = Seen::default();
    let mut noise = 0usize;
    while let Ok(Some(line)) = proc::read_bounded_line(&mut r, MAX_LINE) {
        let line = line.trim();
        if let Some(word) = line.strip_prefix(NOX) {
            seen.missing = X11Missing::parse(word.trim());
            break;
        } else if line.ends_with(remote::READY) && seen.typed.is_none() {
            seen.typed = Some(Instant::now());
            if stdin.write_all(b"x").is_err() {
                break;
            }
        } else if line == RAN && seen.typed.is_some() {
            seen.ran.push(Instant::now());
        } else if seen.ran.len() as u64 == ROUND_TRIPS {
            seen.bulk = line.parse().ok().map(|n| (Instant::now(), n));
            break;
        } else {
            noise += line.len();
            if noise > 64 << 10 {
                break;
            }
        }
    }
    let _ = tx.send(seen);
}

impl OpenSsh {
    /// One X11 sample: each round-trip-bound client's time in `echoes`, the bulk one's in
    /// `transfer` with the bytes it drew.
    pub(super) fn x11(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        let start = Instant::now();
        let mut sample = Sample::new(req.suite.clone(), Mode::X11, Outcome::Success);
        match self.x11_session(req, cancel, &mut sample) {
            Ok(()) => {}
            Err(o) => sample.outcome = o,
        }
        sample.wall = start.elapsed();
        sample
    }

    fn x11_session(
        &mut self,
        req: &SampleRequest,
        cancel: &Cancel,
        sample: &mut Sample,
    ) -> Result<(), Outcome> {
        if self.display.is_none() {
            self.display = Some(XDisplay::start()?);
        }
        let display = self.display.as_ref().expect("just started").display.clone();
        let mut cmd = Command::new(&self.ssh);
        proc::die_with_parent(&mut cmd);
        cmd.args(super::options::session_options(req))
            .args(&self.target.ssh_options)
            .args(["--", &self.target.destination, &x11_command()])
            .env("DISPLAY", display)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| Outcome::local(Doing::RunningSsh, e))?;
        let pid = child.id();
        let (out, stdin) = (child.stdout.take().expect("piped"), child.stdin.take());
        let mut err = child.stderr.take().expect("piped");
        let stderr = proc::spawn_named("sb-x11-err", move || {
            let mut text = String::new();
            let _ = (&mut err).take(1 << 20).read_to_string(&mut text);
            text
        });
        let (tx, rx) = mpsc::channel();
        proc::spawn_named("sb-x11", move || follow(out, stdin.expect("piped"), tx));
        let seen = wait(&rx, req.timeout, cancel);
        proc::kill_group(pid, libc::SIGKILL);
        let _ = child.wait();
        let lines: Vec<String> = (stderr.join().unwrap_or_default().lines())
            .map(str::to_string)
            .collect();
        judged(req, seen, &lines, sample)
    }
}

/// The session's report, or why none came: the deadline or a cancel.
fn wait(rx: &mpsc::Receiver<Seen>, timeout: Duration, cancel: &Cancel) -> Result<Seen, Outcome> {
    let deadline = Instant::now() + timeout;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(seen) => return Ok(seen),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(Seen::default()),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if cancel.is_cancelled() {
            return Err(Outcome::failed(
                FailureKind::Cancelled,
                Problem::Interrupted,
            ));
        }
        if Instant::now() >= deadline {
            let last = None;
            let after_s = timeout.as_secs();
            return Err(Outcome::failed(
                FailureKind::Timeout,
                Problem::NoResult { after_s, last },
            ));
        }
    }
}

/// The sample's figures from what the session printed, or its outcome.
fn judged(
    req: &SampleRequest,
    seen: Result<Seen, Outcome>,
    lines: &[String],
    sample: &mut Sample,
) -> Result<(), Outcome> {
    let seen = seen?;
    if let Some(missing) = seen.missing {
        return Err(Outcome::Unavailable {
            problem: Problem::NoX11There { missing },
        });
    }
    let negotiated = sshlog::negotiated(lines);
    super::judge::negotiation(req, negotiated.as_ref())?;
    sample.negotiated = negotiated.map(Box::new);
    let (Some(typed), Some((end, bytes))) = (seen.typed, seen.bulk) else {
        return Err(sshlog::classify(lines).unwrap_or_else(|| {
            let said = proc::last_message(lines).unwrap_or_else(|| "no X client ran".into());
            Outcome::failed(FailureKind::Remote, Problem::Said { said })
        }));
    };
    let mut at = typed;
    for &ran in &seen.ran {
        sample.echoes.push(ran.duration_since(at).as_secs_f64());
        at = ran;
    }
    sample.transfer = Some(end.duration_since(at));
    sample.bytes = bytes;
    sample.compression_factor = sshlog::compression_factor(lines);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_side_passes_through_any_login_shell() {
        let c = x11_command();
        assert!(c.starts_with("sh -c '") && c.ends_with('\''), "{c}");
        assert!(c.contains("xwd -root -silent | wc -c"), "{c}");
    }

    #[test]
    fn an_xvfb_that_cannot_run_is_this_machine_s_failure_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let xvfb = dir.path().join("Xvfb");
        std::fs::write(&xvfb, "not a program").unwrap();
        let Err(outcome) = XDisplay::start_program(&xvfb) else {
            panic!("a file without the execute bit ran");
        };
        let Outcome::Failed {
            kind: FailureKind::Client,
            problem: Problem::Local { doing, error },
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert_eq!(doing, Doing::RunningTool);
        assert!(
            error.starts_with(&format!("{}: ", xvfb.display())),
            "{error}"
        );
        let missing = XDisplay::start_program(&dir.path().join("none"));
        assert!(
            matches!(
                missing,
                Err(Outcome::Unavailable {
                    problem: Problem::NoXvfb
                })
            ),
            "{:?}",
            missing.err()
        );
    }
}
