//! Judging a finished sample: what it observed (exit, ssh's log, the far end's report)
//! against what was asked, and the steady window and server CPU it yields.

use super::*;

/// The steady-state window: from the mark (ramp bytes done) to the end. For send, both
/// instants are seen at the client after a trip back from the server, which cancels,
/// except that the first bytes after the mark still had to travel out: one round trip
/// is taken off. A window that would be mostly round trip is not trusted.
pub(super) fn steady_window(
    req: &SampleRequest,
    moved: u64,
    out: &StdoutReport,
    rtt: Option<Duration>,
) -> Option<Window> {
    let (mark, end) = (out.mark_at?, out.end_at?);
    let mut time = end.checked_duration_since(mark)?;
    let bytes = match req.mode {
        Mode::Send => {
            let rtt = rtt?;
            if rtt * 2 > time {
                return None;
            }
            time -= rtt;
            moved - req.ramp
        }
        _ => req.bytes - out.mark_bytes,
    };
    (bytes > 0 && !time.is_zero()).then_some(Window { bytes, time })
}

/// The server's CPU over the measured part, from the remote probes on stderr: send
/// covers the steady window (the probes bracket it), receive the whole stream.
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
    let sshd = b.sshd? - a.sshd?;
    let shell = match (a.shell, b.shell) {
        (Some(x), Some(y)) => y - x,
        _ => 0.0,
    };
    let (interval, bytes) = match req.mode {
        Mode::Send => (sample.window?.time, sample.bytes - req.ramp),
        _ => (sample.transfer?, req.bytes),
    };
    Some(CpuWindow {
        seconds: (sshd + shell).max(0.0),
        peak: sshd.max(0.0),
        limit: b.limit,
        throttled: match (a.periods, b.periods) {
            (Some((p0, t0)), Some((p1, t1))) if p1 > p0 => {
                Some(t1.saturating_sub(t0) as f64 / (p1 - p0) as f64)
            }
            _ => None,
        },
        interval,
        bytes,
    })
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
}

/// Decide the outcome from everything observed.
pub(super) fn judge(req: &SampleRequest, expected: u64, seen: &Observed) -> Outcome {
    let Observed {
        exit,
        killed,
        lines,
        out,
        write_error,
        negotiated,
    } = *seen;
    if let Some(kind) = killed {
        let message = match kind {
            FailureKind::Cancelled => "interrupted".to_string(),
            _ => format!(
                "no result within {:.0} s; ssh killed{}",
                req.timeout.as_secs_f64(),
                proc::last_message(lines)
                    .map(|m| format!(" (last message: {m})"))
                    .unwrap_or_default()
            ),
        };
        return Outcome::failed(kind, message);
    }
    if exit.code != Some(0) {
        if let Some(outcome) = sshlog::classify(lines) {
            return outcome;
        }
        let how = match (exit.code, exit.signal) {
            (Some(255), _) => "ssh failed".to_string(),
            (Some(c), _) => format!("remote command exited with status {c}"),
            (None, Some(s)) => format!("ssh killed by signal {s}"),
            (None, None) => "ssh ended abnormally".to_string(),
        };
        let detail = proc::last_message(lines)
            .or_else(|| out.error.clone())
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let kind = if exit.code == Some(255) {
            FailureKind::Network
        } else {
            FailureKind::Remote
        };
        return Outcome::failed(kind, format!("{how}{detail}"));
    }
    let forced = [
        &req.suite.kex,
        &req.suite.hostkey,
        &req.suite.cipher,
        &req.suite.mac,
    ]
    .iter()
    .any(|v| v.is_some());
    match negotiated {
        None if forced => {
            return Outcome::failed(
                FailureKind::Mismatch,
                "ssh did not report the negotiated algorithms (no 'debug1: kex:' lines)",
            );
        }
        None => {}
        Some(n) => {
            let diffs = n.mismatches(&req.suite);
            if !diffs.is_empty() {
                return Outcome::failed(FailureKind::Mismatch, diffs.join("; "));
            }
        }
    }
    if req.mode == Mode::Connect {
        return Outcome::Success;
    }
    if let Some(e) = &out.error {
        return Outcome::failed(FailureKind::Remote, e.clone());
    }
    if out.ready_at.is_none() {
        return Outcome::failed(
            FailureKind::Remote,
            format!("the remote side never printed {}", remote::READY),
        );
    }
    if req.mode == Mode::Echo {
        let timed = req.bytes - req.ramp.min(req.bytes);
        return if out.end_at.is_some() && out.echoes.len() as u64 == timed {
            Outcome::Success
        } else {
            Outcome::failed(
                FailureKind::ByteCount,
                format!(
                    "{timed} keystrokes expected back, {} timed",
                    out.echoes.len()
                ),
            )
        };
    }
    if let Some(e) = write_error {
        return Outcome::failed(FailureKind::Network, format!("writing to ssh: {e}"));
    }
    let counted = match req.mode {
        // The ramp bytes were swallowed (exactly, see remote::send_command) before wc.
        Mode::Send => match out.count_line.as_deref().map(|l| l.trim().parse::<u64>()) {
            Some(Ok(n)) => n + req.ramp,
            Some(Err(_)) => {
                return Outcome::failed(
                    FailureKind::Remote,
                    format!(
                        "the server's byte count is not a number: {:?}",
                        out.count_line.as_deref().unwrap_or("")
                    ),
                );
            }
            None => {
                return Outcome::failed(FailureKind::Remote, "the server reported no byte count");
            }
        },
        _ => out.received,
    };
    if counted != expected || out.end_at.is_none() {
        return Outcome::failed(
            FailureKind::ByteCount,
            format!("{expected} bytes expected, {counted} counted at the far end"),
        );
    }
    Outcome::Success
}
