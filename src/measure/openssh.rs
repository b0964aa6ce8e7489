//! The real transport: one OpenSSH `ssh` process per sample, suite forced by `-o` options.
//!
//! Threads per sample: one reaps the process with `wait4` (exact exit time, client CPU),
//! one reads stderr (ssh's `-v` lines, timestamped, bounded), one reads stdout (the
//! remote ready line, then the data or the byte count), one feeds stdin. The calling
//! thread only waits, enforces the timeout and watches for cancellation; a sample that
//! overruns is killed with its whole process group.

use super::payload::Payload;
use super::{Transport, rekey, remote, sshlog};
use crate::model::{
    CpuWindow, FailureKind, Mode, Negotiated, Outcome, Sample, SampleRequest, Window,
};
use crate::sys::cancel::Cancel;
use crate::sys::proc::{self, Exit};
use crate::target::Target;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Lines of ssh stderr kept per sample, and their maximum length.
const MAX_STDERR_LINES: usize = 4000;
const MAX_LINE: usize = 1024;
/// Output a login shell may print before the ready line (motd-like noise).
const MAX_PRE_READY: usize = 64 * 1024;
/// How often the waiting thread checks for cancellation.
const POLL: Duration = Duration::from_millis(20);

/// Spawns the system's OpenSSH client.
pub struct OpenSsh {
    ssh: PathBuf,
    target: Target,
    payload: Payload,
}

impl OpenSsh {
    pub fn new(ssh: PathBuf, target: Target, payload: Payload) -> Self {
        OpenSsh {
            ssh,
            target,
            payload,
        }
    }

    /// The full argument list for one sample (without the program name).
    pub fn args(&self, req: &SampleRequest) -> Vec<String> {
        let timeout = req.timeout.as_secs().clamp(1, 30);
        let mut args: Vec<String> = vec!["-v".into(), "-T".into(), "-a".into(), "-x".into()];
        let mut opt = |kv: String| {
            args.push("-o".into());
            args.push(kv);
        };
        for fixed in [
            "BatchMode=yes",
            "ControlMaster=no",
            "ControlPath=none",
            "ClearAllForwardings=yes",
            "ForwardAgent=no",
            "ForwardX11=no",
            "RequestTTY=no",
            "PermitLocalCommand=no",
        ] {
            opt(fixed.to_string());
        }
        opt(format!("ConnectTimeout={timeout}"));
        opt(format!(
            "Compression={}",
            if req.suite.compression.is_some() {
                "yes"
            } else {
                "no"
            }
        ));
        let s = &req.suite;
        for (key, value) in [
            ("KexAlgorithms", &s.kex),
            ("HostKeyAlgorithms", &s.hostkey),
            ("Ciphers", &s.cipher),
            ("MACs", &s.mac),
        ] {
            if let Some(v) = value {
                opt(format!("{key}={v}"));
            }
        }
        args.extend(self.target.ssh_options.iter().cloned());
        args.push("--".into());
        args.push(self.target.destination.clone());
        args.push(match req.mode {
            Mode::Connect => remote::connect_command(),
            Mode::Send => remote::send_command(req.ramp),
            Mode::Receive => remote::receive_command(req.bytes),
            Mode::Echo => remote::echo_command(),
        });
        args
    }
}

/// What the stdout reader saw.
#[derive(Debug, Default)]
struct StdoutReport {
    ready_at: Option<Instant>,
    /// Send: when the PONG line arrived.
    pong_at: Option<Instant>,
    /// Send: when the MARK line arrived. Receive: when `ramp` bytes had arrived.
    mark_at: Option<Instant>,
    /// Receive: bytes received when `mark_at` was taken.
    mark_bytes: u64,
    /// Send: when the count line arrived. Receive: when the last expected byte arrived.
    end_at: Option<Instant>,
    /// Send: the count line. Receive: unused.
    count_line: Option<String>,
    /// Receive: bytes after the ready line.
    received: u64,
    /// Echo: each timed keystroke's round trip, in seconds.
    echoes: Vec<f64>,
    /// The ssh client's CPU time at the mark and at the end (where the OS tells).
    client_cpu_mark: Option<Duration>,
    client_cpu_end: Option<Duration>,
    error: Option<String>,
}

/// Steps the stdout reader tells the stdin writer to take (send mode).
#[derive(Debug)]
enum Go {
    /// Write the ping line.
    Ping,
    /// Write the ramp-up bytes.
    Ramp,
    /// Write the rest and close stdin.
    Rest,
}

/// What the stdin writer did.
#[derive(Debug, Default)]
struct WriterReport {
    ping_at: Option<Instant>,
    /// Send: bytes written, ramp included.
    written: u64,
    error: Option<String>,
}

/// Send: the rest after the ramp is written in pieces of this size, so that a
/// time-bounded transfer stops within one piece of its time.
const SEND_PIECE: u64 = 1 << 20;

impl Transport for OpenSsh {
    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        let start = Instant::now();
        let mut sample = Sample::new(req.suite.clone(), req.mode, Outcome::Success);
        let mut cmd = Command::new(&self.ssh);
        cmd.args(self.args(req))
            .stdin(if req.mode == Mode::Connect {
                Stdio::null()
            } else {
                Stdio::piped()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group: a timeout kills ssh and any ProxyCommand together,
            // and the terminal's Ctrl-C reaches sshbench, which decides.
            .process_group(0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                sample.outcome = Outcome::failed(
                    FailureKind::Client,
                    format!("cannot run {}: {e}", self.ssh.display()),
                );
                return sample;
            }
        };
        let pid = child.id();
        let exited = proc::reap_in_background(pid);
        let stderr = read_stderr(&mut child, start);
        let (stdout, writer) = if req.mode == Mode::Echo {
            (echo_session(&mut child, req), None)
        } else {
            let (go_tx, go_rx) = mpsc::channel::<Go>();
            let stdout = read_stdout(&mut child, req, go_tx);
            (stdout, feed_stdin(&mut child, req, &self.payload, go_rx))
        };

        let deadline = start + req.timeout;
        let mut killed: Option<FailureKind> = None;
        let exit: Exit = loop {
            match exited.recv_timeout(POLL) {
                Ok(exit) => break exit,
                Err(RecvTimeoutError::Disconnected) => {
                    unreachable!("the reaper always reports")
                }
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
        };
        // Every process of the group is gone or going; its pipes close, the readers end.
        // A descendant that escaped the group could hold a pipe open, so wait boundedly.
        proc::kill_group(pid, libc::SIGKILL);
        let grace = Duration::from_secs(2);
        let (lines, times) = stderr.recv_timeout(grace).unwrap_or_default();
        let mut out = stdout.recv_timeout(grace).unwrap_or_default();
        let written = writer
            .and_then(|w| w.recv_timeout(grace).ok())
            .unwrap_or_default();
        // What the sample moved: all it was asked to, or, for a time-bounded send, what
        // the writer wrote before its time was up (the server's count must agree).
        let moved = match (req.mode, req.until) {
            (Mode::Send, Some(_)) => written.written,
            _ => req.bytes,
        };

        sample.wall = exit.at - start;
        sample.client_cpu = Some(exit.cpu);
        sample.negotiated = sshlog::negotiated(&lines);
        sample.outcome = judge(
            req,
            moved,
            &Observed {
                exit: &exit,
                killed,
                lines: &lines,
                out: &out,
                write_error: written.error.as_deref(),
                negotiated: sample.negotiated.as_ref(),
            },
        );
        if let (Some(r), Some(e)) = (out.ready_at, out.end_at) {
            sample.transfer = Some(e - r);
        }
        if sample.outcome.is_success() && req.mode.is_transfer() {
            sample.bytes = moved;
            if let (Some(ping), Some(pong)) = (written.ping_at, out.pong_at) {
                sample.rtt = Some(pong.saturating_duration_since(ping));
            }
            sample.window = steady_window(req, moved, &out, sample.rtt);
            if let (Some(a), Some(b), Some(w)) =
                (out.client_cpu_mark, out.client_cpu_end, sample.window)
            {
                let seconds = b.saturating_sub(a).as_secs_f64();
                sample.client_window_cpu = Some(CpuWindow {
                    seconds,
                    peak: seconds,
                    limit: None,
                    throttled: None,
                    interval: w.time,
                    bytes: w.bytes,
                });
            }
            sample.server_cpu = server_cpu(req, &lines, &sample);
            sample.compression_factor = sshlog::compression_factor(&lines);
            let cipher = sample.negotiated.as_ref().and_then(|n| match req.mode {
                Mode::Send => n.cipher_cs.clone(),
                _ => n.cipher_sc.clone(),
            });
            sample.rekey = match (sshlog::phases(&lines, &times, sample.wall), cipher) {
                (Some(p), Some(c)) => rekey::rekey(&lines, req.mode, &c, p.kex),
                _ => None,
            };
        }
        if sample.outcome.is_success() && req.mode == Mode::Connect {
            sample.phases = sshlog::phases(&lines, &times, sample.wall);
        }
        if sample.outcome.is_success() && req.mode == Mode::Echo {
            sample.bytes = req.bytes;
            sample.echoes = std::mem::take(&mut out.echoes);
            sample.compression_factor = sshlog::compression_factor(&lines);
        }
        sample
    }
}

/// The steady-state window: from the mark (ramp bytes done) to the end. For send, both
/// instants are seen at the client after a trip back from the server, which cancels,
/// except that the first bytes after the mark still had to travel out: one round trip
/// is taken off. A window that would be mostly round trip is not trusted.
fn steady_window(
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
fn server_cpu(req: &SampleRequest, lines: &[String], sample: &Sample) -> Option<CpuWindow> {
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
struct Observed<'a> {
    exit: &'a Exit,
    /// Why sshbench killed ssh, if it did (timeout, cancellation).
    killed: Option<FailureKind>,
    /// ssh's stderr lines.
    lines: &'a [String],
    out: &'a StdoutReport,
    /// Writing to ssh's stdin failed.
    write_error: Option<&'a str>,
    /// What ssh reported it negotiated.
    negotiated: Option<&'a Negotiated>,
}

/// Decide the outcome from everything observed.
fn judge(req: &SampleRequest, expected: u64, seen: &Observed) -> Outcome {
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

/// Collect ssh's stderr lines (bounded) until EOF.
/// ssh's stderr lines and when each arrived (since spawn).
type StderrLines = (Vec<String>, Vec<Duration>);

fn read_stderr(child: &mut Child, start: Instant) -> mpsc::Receiver<StderrLines> {
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr piped");
    std::thread::spawn(move || {
        let mut r = BufReader::new(stderr);
        let (mut lines, mut times) = (Vec::new(), Vec::new());
        while let Ok(Some(line)) = proc::read_bounded_line(&mut r, MAX_LINE) {
            if lines.len() < MAX_STDERR_LINES {
                times.push(start.elapsed());
                lines.push(line);
            }
        }
        let _ = tx.send((lines, times));
    });
    rx
}

/// Follow the remote protocol on stdout: noise, the ready line, then data or a count.
fn read_stdout(
    child: &mut Child,
    req: &SampleRequest,
    go: mpsc::Sender<Go>,
) -> mpsc::Receiver<StdoutReport> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout piped");
    let mode = req.mode;
    if mode == Mode::Receive {
        // So ssh writes on while this thread waits for the CPU (see `widen_pipe`).
        proc::widen_pipe(&stdout);
    }
    let expected = req.bytes;
    let ramp = req.ramp;
    let pid = child.id();
    std::thread::spawn(move || {
        // Lines (the ready line, send's replies) need little; a receive's reads of a
        // whole pipe's worth go past this buffer once it is drained.
        let mut r = BufReader::with_capacity(256 * 1024, stdout);
        let mut report = StdoutReport::default();
        if mode == Mode::Connect {
            let _ = std::io::copy(&mut r, &mut std::io::sink());
            let _ = tx.send(report);
            return;
        }
        if wait_ready(&mut r, &mut report) {
            match mode {
                Mode::Send => follow_send(&mut r, &go, &mut report, pid),
                _ => {
                    let mut buf = vec![0u8; proc::WIDE_PIPE];
                    loop {
                        match r.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                report.received += n as u64;
                                let now = Instant::now();
                                if report.mark_at.is_none() && report.received >= ramp {
                                    report.mark_at = Some(now);
                                    report.mark_bytes = report.received;
                                    report.client_cpu_mark = proc::cpu_time(pid);
                                }
                                if report.received >= expected && report.end_at.is_none() {
                                    report.end_at = Some(now);
                                    report.client_cpu_end = proc::cpu_time(pid);
                                }
                            }
                        }
                    }
                    if report.received != expected {
                        report.end_at = None;
                    }
                }
            }
        }
        // Drain anything left so ssh never blocks on a full pipe.
        let _ = std::io::copy(&mut r, &mut std::io::sink());
        let _ = tx.send(report);
    });
    rx
}

/// Skip what a login shell prints before the ready line (bounded); true once it came.
fn wait_ready(r: &mut impl std::io::BufRead, report: &mut StdoutReport) -> bool {
    let mut noise = 0usize;
    loop {
        match proc::read_bounded_line(r, MAX_LINE) {
            Ok(Some(line)) if line == remote::READY => {
                report.ready_at = Some(Instant::now());
                return true;
            }
            Ok(Some(line)) => {
                noise += line.len() + 1;
                if noise > MAX_PRE_READY {
                    report.error = Some(format!(
                        "more than {MAX_PRE_READY} bytes of output before {}",
                        remote::READY
                    ));
                    return false;
                }
            }
            Ok(None) | Err(_) => return false,
        }
    }
}

/// Echo: after the ready line, type `req.bytes` keystrokes one at a time, each only
/// after the previous one came back, and time each round trip (the first `req.ramp`
/// are not timed). Every echoed byte is checked. One thread owns both pipes, so a round
/// trip is one write and one read with nothing in between.
fn echo_session(child: &mut Child, req: &SampleRequest) -> mpsc::Receiver<StdoutReport> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout piped");
    let mut stdin = child.stdin.take().expect("stdin piped");
    let (total, untimed) = (req.bytes, req.ramp.min(req.bytes));
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut report = StdoutReport::default();
        if wait_ready(&mut r, &mut report) {
            report.echoes.reserve((total - untimed) as usize);
            let typed = (|| -> Result<(), String> {
                for i in 0..total {
                    let key = [b'a' + (i % 26) as u8];
                    let t0 = Instant::now();
                    stdin
                        .write_all(&key)
                        .map_err(|e| format!("writing to ssh: {e}"))?;
                    let mut back = [0u8; 1];
                    r.read_exact(&mut back).map_err(|_| {
                        format!("the session ended after {i} of {total} keystrokes")
                    })?;
                    let rtt = t0.elapsed();
                    if back != key {
                        return Err(format!(
                            "keystroke {i}: sent {:?}, got {:?} back",
                            key[0] as char, back[0] as char
                        ));
                    }
                    if i >= untimed {
                        report.echoes.push(rtt.as_secs_f64());
                    }
                }
                Ok(())
            })();
            match typed {
                Ok(()) => report.end_at = Some(Instant::now()),
                Err(e) => report.error = Some(e),
            }
        }
        // EOF ends the remote `cat`, and with it the session.
        drop(stdin);
        let extra = std::io::copy(&mut r, &mut std::io::sink()).unwrap_or(0);
        if extra > 0 && report.error.is_none() {
            report.error = Some(format!("{extra} unexpected bytes after the last echo"));
        }
        let _ = tx.send(report);
    });
    rx
}

/// The send protocol after READY: ping/PONG, ramp bytes/MARK, rest/count. Each step
/// waits for the remote side's line before telling the writer to go on.
fn follow_send(
    r: &mut impl std::io::BufRead,
    go: &mpsc::Sender<Go>,
    report: &mut StdoutReport,
    pid: u32,
) {
    let _ = go.send(Go::Ping);
    let mut expect = |want: &str, report: &mut StdoutReport| -> Option<Instant> {
        match proc::read_bounded_line(r, MAX_LINE) {
            Ok(Some(line)) if line == want => Some(Instant::now()),
            Ok(Some(line)) => {
                report.error = Some(format!("expected {want} from the server, got {line:?}"));
                None
            }
            _ => None,
        }
    };
    let Some(pong) = expect(remote::PONG, report) else {
        return;
    };
    report.pong_at = Some(pong);
    let _ = go.send(Go::Ramp);
    let Some(mark) = expect(remote::MARK, report) else {
        return;
    };
    report.mark_at = Some(mark);
    report.client_cpu_mark = proc::cpu_time(pid);
    let _ = go.send(Go::Rest);
    if let Ok(Some(line)) = proc::read_bounded_line(r, MAX_LINE) {
        report.end_at = Some(Instant::now());
        report.client_cpu_end = proc::cpu_time(pid);
        report.count_line = Some(line);
    }
}

/// Feed stdin: for `send`, each step of the protocol when the reader says so; for
/// `receive`, the payload block up front. Closing stdin signals EOF to the remote side.
fn feed_stdin(
    child: &mut Child,
    req: &SampleRequest,
    payload: &Payload,
    go: mpsc::Receiver<Go>,
) -> Option<mpsc::Receiver<WriterReport>> {
    let mut stdin = child.stdin.take()?;
    let (tx, rx) = mpsc::channel();
    let mode = req.mode;
    let (bytes, ramp, until) = (req.bytes, req.ramp.min(req.bytes), req.until);
    let payload = payload.clone();
    std::thread::spawn(move || {
        let mut report = WriterReport::default();
        let result = match mode {
            Mode::Send => (|| {
                // A closed channel means the reader gave up; it reports why.
                while let Ok(step) = go.recv() {
                    match step {
                        Go::Ping => {
                            report.ping_at = Some(Instant::now());
                            stdin.write_all(b"ping\n")?;
                            stdin.flush()?;
                        }
                        Go::Ramp => {
                            payload.write_repeated(&mut stdin, ramp, 0)?;
                            report.written = ramp;
                        }
                        Go::Rest => {
                            let started = Instant::now();
                            while report.written < bytes
                                && until.is_none_or(|u| started.elapsed() < u)
                            {
                                let n = (bytes - report.written).min(SEND_PIECE);
                                payload.write_repeated(&mut stdin, n, report.written)?;
                                report.written += n;
                            }
                            break;
                        }
                    }
                }
                Ok(())
            })(),
            Mode::Receive => {
                let block = &payload.block()[..remote::RECEIVE_BLOCK.min(payload.block().len())];
                stdin.write_all(block).and_then(|()| stdin.flush())
            }
            Mode::Connect | Mode::Echo => Ok(()),
        };
        drop(stdin);
        report.error = result.err().map(|e: std::io::Error| e.to_string());
        let _ = tx.send(report);
    });
    Some(rx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Suite;

    fn transport() -> OpenSsh {
        OpenSsh::new(
            "ssh".into(),
            Target::parse("bob@example.org:2222").unwrap(),
            Payload::random(16, 1),
        )
    }

    #[test]
    fn args_force_suite_and_disable_extras() {
        let req = SampleRequest {
            suite: Suite {
                cipher: Some("aes128-ctr".into()),
                mac: Some("hmac-sha1".into()),
                ..Suite::default()
            },
            mode: Mode::Send,
            bytes: 10,
            ramp: 5,
            timeout: Duration::from_secs(60),
            until: None,
        };
        let args = transport().args(&req).join(" ");
        for want in [
            "-o BatchMode=yes",
            "-o ControlMaster=no",
            "-o ControlPath=none",
            "-o Compression=no",
            "-o Ciphers=aes128-ctr",
            "-o MACs=hmac-sha1",
            "-o ConnectTimeout=30",
            "-p 2222 -- bob@example.org sh -c",
        ] {
            assert!(args.contains(want), "{want:?} missing from {args}");
        }
        assert!(!args.contains("KexAlgorithms"));
        assert!(
            !args.contains("StrictHostKeyChecking"),
            "never weaken host key checks"
        );
    }
}
