//! Judging a finished sample: what it observed (exit, ssh's log, the far end's report)
//! against what was asked, the steady window and server CPU it yields, and the wait for
//! its exit that may kill it.

use super::POLL;
use super::streams::StdoutReport;
use crate::measure::{remote, sshlog};
use crate::model::{
    CpuWindow, FailureKind, Mode, Negotiated, Outcome, Problem, ProcessEnd, Sample, SampleRequest,
    Window,
};
use crate::sys::cancel::Cancel;
use crate::sys::proc::{self, Exit};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
/// The steady-state window: from the mark (ramp bytes done) to the end. For send, both
/// instants are seen at the client after a trip back from the server, which cancels;
/// when the client paused at the mark (stdin fed by sshbench), the first bytes after it
/// still had to travel out: one round trip is taken off, and a window that would be
/// mostly round trip is not trusted. From a file the window's bytes are the count. A
/// receive into a file ends its window at a look before the last byte.
pub(super) fn steady_window(
    req: &SampleRequest,
    moved: u64,
    out: &StdoutReport,
    rtt: Option<Duration>,
) -> Option<Window> {
    let mark = out.mark_at?;
    let (end, received) = out.window_end.unwrap_or((out.end_at?, req.bytes));
    let mut time = end.checked_duration_since(mark)?;
    let bytes = match req.mode {
        // Exactly what arrived after the mark, whatever `head` took before it.
        Mode::Send if out.from_file => out.count_line.as_deref()?.trim().parse().ok()?,
        Mode::Send => {
            let rtt = rtt?;
            if rtt * 2 > time {
                return None;
            }
            time -= rtt;
            moved - req.ramp
        }
        _ => received.saturating_sub(out.mark_bytes),
    };
    (bytes > 0 && !time.is_zero()).then_some(Window { bytes, time })
}

/// The server's CPU over the measured part, from the remote probes on stderr: a send
/// covers the steady window (the probes bracket it), a receive the whole stream (its
/// probes stay out of the window).
pub(super) fn server_cpu(
    req: &SampleRequest,
    lines: &[String],
    sample: &Sample,
) -> Option<CpuWindow> {
    let find = |marker: &str| {
        lines
            .iter()
            .find_map(|l| remote::parse_cpu_probe(l, marker))
    };
    let (a, b) = (find(remote::CPU0)?, find(remote::CPU1)?);
    let (interval, bytes) = match req.mode {
        Mode::Send => sample.window.map(|w| (w.time, w.bytes))?,
        _ => (sample.transfer?, sample.bytes),
    };
    remote::cpu_between(&a, &b, interval, bytes)
}

/// Everything a sample's outcome is decided from.
pub(super) struct Observed<'a> {
    pub(super) exit: &'a Exit,
    /// Why sshbench killed ssh, if it did (timeout, cancellation).
    pub(super) killed: Option<FailureKind>,
    /// ssh's stderr lines.
    pub(super) lines: &'a [String],
    pub(super) out: &'a StdoutReport,
    /// Writing to ssh's stdin failed.
    pub(super) write_error: Option<&'a str>,
    /// What ssh reported it negotiated.
    pub(super) negotiated: Option<&'a Negotiated>,
    /// The client offered the forced names alone (dbclient's `-c`, `-m`): nothing to
    /// check beyond the connection having been made.
    pub(super) offered_alone: bool,
}

/// A check that either passes or decides the outcome.
type Check = Result<(), Outcome>;

/// Killed by sshbench, or ssh (or the remote command) failed.
fn process_end(req: &SampleRequest, seen: &Observed) -> Check {
    let (exit, lines) = (seen.exit, seen.lines);
    if let Some(kind) = seen.killed {
        let problem = match kind {
            FailureKind::Cancelled => Problem::Interrupted,
            _ => Problem::NoResult {
                after_s: req.timeout.as_secs_f64().round() as u64,
                last: proc::last_message(lines),
            },
        };
        return Err(Outcome::failed(kind, problem));
    }
    if exit.code == Some(0) {
        return Ok(());
    }
    // ssh's own failures end it with 255; any other status is the remote command's, and
    // what its session printed on stderr is the server's text, never a failure class.
    if exit.code == Some(255)
        && let Some(outcome) = sshlog::classify(lines)
    {
        return Err(outcome);
    }
    let end = match (exit.code, exit.signal) {
        (Some(255), _) => ProcessEnd::Ssh,
        (Some(code), _) => ProcessEnd::Status { code },
        (None, Some(signal)) => ProcessEnd::Signal { signal },
        (None, None) => ProcessEnd::Abnormal,
    };
    let last = proc::last_message(lines);
    // Without a word on stderr, the remote side's own protocol error is the reason.
    let remote = (last.is_none()).then(|| seen.out.error.clone()).flatten();
    if remote.is_none()
        && let Some(why) = never_ran(exit.code, seen.out, last.as_deref())
    {
        return Err(Outcome::failed(FailureKind::Command, why));
    }
    let remote = remote.map(Box::new);
    let kind = if exit.code == Some(255) {
        FailureKind::Network
    } else {
        FailureKind::Remote
    };
    let why = Problem::Ended {
        end,
        said: last,
        remote,
    };
    Err(Outcome::failed(kind, why))
}

/// What the login's shell says when it has no `sh` to run sshbench's commands with:
/// Windows' cmd.exe and PowerShell, bash, zsh, fish, a POSIX sh.
const NO_SH: [&str; 5] = [
    "'sh' is not recognized",
    "sh: command not found",
    "command not found: sh",
    "Unknown command: sh",
    "sh: not found",
];

/// A remote exit (not ssh's own 255) before sshbench's command began (no ready line;
/// connect's `exit 0` has none and cannot fail), with nothing said on stderr: the login
/// ran something else. What the server printed instead is its reason (OpenSSH's "This
/// service allows sftp connections only." for a `ForceCommand internal-sftp` account).
/// Or its shell said, on stderr, that there is no `sh` (a Windows server).
fn never_ran(code: Option<i32>, out: &StdoutReport, stderr: Option<&str>) -> Option<Problem> {
    let status = code.filter(|&c| c != 255)?;
    if out.ready_at.is_some() {
        return None;
    }
    if let Some(said) = stderr {
        let no_sh = NO_SH.iter().any(|n| said.contains(n));
        return no_sh.then(|| Problem::NoSh {
            status,
            said: said.to_string(),
        });
    }
    let printed = out.said.clone();
    Some(Problem::NeverRan { status, printed })
}

/// What ssh negotiated is what was forced.
pub(crate) fn negotiation(req: &SampleRequest, negotiated: Option<&Negotiated>) -> Check {
    let s = &req.suite;
    let forced = [&s.kex, &s.hostkey, &s.cipher, &s.mac]
        .iter()
        .any(|v| v.is_some());
    match negotiated {
        None if forced => Err(Outcome::failed(FailureKind::Mismatch, Problem::NotReported)),
        None => Ok(()),
        Some(n) => {
            let differences = n.mismatches(s);
            if differences.is_empty() {
                Ok(())
            } else {
                let why = Problem::Mismatch { differences };
                Err(Outcome::failed(FailureKind::Mismatch, why))
            }
        }
    }
}

/// The remote side followed the protocol: no error, a ready line.
fn remote_side(out: &StdoutReport) -> Check {
    if let Some(e) = &out.error {
        return Err(Outcome::failed(FailureKind::Remote, e.clone()));
    }
    if out.ready_at.is_none() {
        let want = remote::READY.to_string();
        return Err(Outcome::failed(
            FailureKind::Remote,
            Problem::NoReady { want },
        ));
    }
    Ok(())
}

/// Echo: every timed keystroke came back.
fn echo_count(req: &SampleRequest, out: &StdoutReport) -> Check {
    let timed = req.bytes - req.ramp.min(req.bytes);
    if out.end_at.is_some() && out.echoes.len() as u64 == timed {
        return Ok(());
    }
    let count = Problem::EchoCount {
        expected: timed,
        timed: out.echoes.len() as u64,
    };
    Err(Outcome::failed(FailureKind::ByteCount, count))
}

/// Transfers: the far end counted exactly the bytes moved.
fn byte_count(req: &SampleRequest, expected: u64, seen: &Observed) -> Check {
    let out = seen.out;
    if let Some(e) = seen.write_error {
        let error = e.to_string();
        return Err(Outcome::failed(
            FailureKind::Network,
            Problem::Pipe { error },
        ));
    }
    let counted = match req.mode {
        // The ramp bytes were swallowed (exactly, see remote::send_command; perhaps
        // more, see remote::send_file_command) before wc.
        Mode::Send => match out.count_line.as_deref().map(|l| l.trim().parse::<u64>()) {
            Some(Ok(n)) => {
                // From a file nothing pauses at the ramp: a stdio `head` may read ahead.
                let ahead = expected.saturating_sub(req.ramp).saturating_sub(n);
                let read_ahead = out.from_file && ahead <= remote::HEAD_AHEAD;
                n + req.ramp + if read_ahead { ahead } else { 0 }
            }
            Some(Err(_)) => {
                let said = out.count_line.clone().unwrap_or_default();
                let why = Problem::CountNotNumber { said };
                return Err(Outcome::failed(FailureKind::Remote, why));
            }
            None => return Err(Outcome::failed(FailureKind::Remote, Problem::NoCount)),
        },
        _ => out.received,
    };
    if counted != expected || out.end_at.is_none() {
        let why = Problem::ByteCount { expected, counted };
        return Err(Outcome::failed(FailureKind::ByteCount, why));
    }
    Ok(())
}

/// Decide the outcome from everything observed, the checks in order.
pub(super) fn judge(req: &SampleRequest, expected: u64, seen: &Observed) -> Outcome {
    let checks = || -> Check {
        process_end(req, seen)?;
        if !seen.offered_alone {
            negotiation(req, seen.negotiated)?;
        }
        match req.mode {
            Mode::Connect => Ok(()),
            Mode::Echo | Mode::Typing => {
                remote_side(seen.out)?;
                echo_count(req, seen.out)
            }
            _ => {
                remote_side(seen.out)?;
                byte_count(req, expected, seen)
            }
        }
    };
    match checks() {
        Ok(()) => Outcome::Success,
        Err(outcome) => outcome,
    }
}

/// Wait for ssh to exit, killing its group at the deadline or on cancellation; says
/// which of the two killed it, if one did.
pub(super) fn wait_exit(
    exited: &mpsc::Receiver<Exit>,
    pid: u32,
    deadline: Instant,
    cancel: &Cancel,
) -> (Exit, Option<FailureKind>) {
    let mut killed: Option<FailureKind> = None;
    loop {
        match exited.recv_timeout(POLL) {
            Ok(exit) => return (exit, killed),
            Err(RecvTimeoutError::Disconnected) => unreachable!("the reaper always reports"),
            Err(RecvTimeoutError::Timeout) => {
                if killed.is_none() && (cancel.is_cancelled() || Instant::now() >= deadline) {
                    killed = Some(if cancel.is_cancelled() {
                        FailureKind::Cancelled
                    } else {
                        FailureKind::Timeout
                    });
                    proc::kill_group(pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// A forced host key algorithm whose key ssh could not check against the user's
/// known_hosts (none of that type recorded for the server, or another one: ssh says the
/// key changed): the algorithm and a refusal in place of the failure. The run's first
/// login passed the check with ssh's own choice of algorithm, so this one is left out,
/// nothing accepted, instead of the run stopped.
pub(super) fn unverified_host_key(req: &SampleRequest, o: &Outcome) -> Option<(String, Outcome)> {
    let algorithm = req.suite.hostkey.clone()?;
    let Outcome::Failed {
        kind: FailureKind::HostKey,
        ..
    } = o
    else {
        return None;
    };
    let problem = Problem::UnverifiedHostKey {
        algorithm: algorithm.clone(),
    };
    Some((algorithm, Outcome::Refused { problem }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forced_host_key_that_known_hosts_cannot_check_is_refused_not_failed() {
        let mut req = SampleRequest {
            suite: crate::model::Suite {
                kex: Some("curve25519-sha256".into()),
                hostkey: Some("ecdsa-sha2-nistp256".into()),
                ..Default::default()
            },
            mode: Mode::Connect,
            bytes: 0,
            ramp: 0,
            timeout: Duration::from_secs(10),
            until: None,
            together: None,
            reference: None,
        };
        let said = |said: &str| Problem::Said { said: said.into() };
        let changed = Outcome::failed(FailureKind::HostKey, said("@ WARNING: REMOTE HOST ..."));
        let (algorithm, o) = unverified_host_key(&req, &changed).unwrap();
        assert_eq!(algorithm, "ecdsa-sha2-nistp256");
        let unverified = Problem::UnverifiedHostKey { algorithm };
        assert_eq!(
            o,
            Outcome::Refused {
                problem: unverified
            }
        );
        // Other failures stay failures; ssh's own choice of host key is the run's concern.
        let denied = Outcome::failed(FailureKind::Auth, said("Permission denied"));
        assert!(unverified_host_key(&req, &denied).is_none());
        req.suite.hostkey = None;
        assert!(unverified_host_key(&req, &changed).is_none());
    }

    fn report(said: Option<&str>, ready: bool) -> StdoutReport {
        StdoutReport {
            said: said.map(str::to_string),
            ready_at: ready.then(Instant::now),
            ..StdoutReport::default()
        }
    }

    #[test]
    fn a_session_that_ended_before_the_ready_line_quotes_the_server() {
        let why = never_ran(Some(1), &report(Some("sftp only"), false), None);
        let printed = Some("sftp only".to_string());
        assert_eq!(why, Some(Problem::NeverRan { status: 1, printed }));
        let silent = never_ran(Some(1), &report(None, false), None);
        let printed = None;
        assert_eq!(silent, Some(Problem::NeverRan { status: 1, printed }));
        // ssh's own failure, or a command that began: something else went wrong.
        assert_eq!(never_ran(Some(255), &report(Some("x"), false), None), None);
        assert_eq!(never_ran(None, &report(Some("x"), false), None), None);
        assert_eq!(never_ran(Some(1), &report(Some("x"), true), None), None);
    }

    #[test]
    fn a_shell_without_sh_is_a_login_that_runs_no_commands() {
        let none = report(None, false);
        for said in [
            "'sh' is not recognized as an internal or external command,",
            "sh : The term 'sh' is not recognized as a name of a cmdlet, function, script file",
            "bash: line 1: sh: command not found",
            "zsh:1: command not found: sh",
            "fish: Unknown command: sh",
            "ksh: sh: not found",
        ] {
            let why = never_ran(Some(1), &none, Some(said));
            let said = said.to_string();
            assert_eq!(why, Some(Problem::NoSh { status: 1, said }));
        }
        // The command's own failures, before or after its ready line, are not.
        for said in [
            "sh: 1: mktemp: not found",
            "mktemp: cannot create temp file",
        ] {
            assert_eq!(never_ran(Some(127), &none, Some(said)), None, "{said}");
        }
        let began = report(None, true);
        assert_eq!(
            never_ran(Some(127), &began, Some("ksh: sh: not found")),
            None
        );
    }
}
