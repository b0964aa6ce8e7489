//! The threads that talk to one ssh process: stderr lines, stdout (ready line, data,
//! reports), the echo session, and the stdin feeder.

use super::reference::Pipes;
use super::{MAX_LINE, MAX_PRE_READY, MAX_STDERR_LINES, proxy};
use crate::measure::payload::Payload;
use crate::measure::{rekey, remote};
use crate::model::{Mode, Problem, SampleRequest};
use crate::sys::drain::drain;
use crate::sys::pacer::Pacer;
use crate::sys::proc;
use std::io::{BufReader, Read, Write};
use std::process::Child;
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the stdout reader saw.
#[derive(Debug, Default)]
pub(super) struct StdoutReport {
    pub(super) ready_at: Option<Instant>,
    /// Send: when the PONG line arrived.
    pub(super) pong_at: Option<Instant>,
    /// Send: when the MARK line arrived. Receive: when `ramp` bytes had arrived.
    pub(super) mark_at: Option<Instant>,
    /// Receive: bytes received when `mark_at` was taken.
    pub(super) mark_bytes: u64,
    /// Send: when the count line arrived. Receive: when the last expected byte arrived.
    pub(super) end_at: Option<Instant>,
    /// Send: the count line. Receive: unused.
    pub(super) count_line: Option<String>,
    /// Send: ssh read its stdin from a file (no ping, no pause after the ramp).
    pub(super) from_file: bool,
    /// Receive: bytes after the ready line.
    pub(super) received: u64,
    /// Receive into a file: the window's end (a look before the last byte) and the
    /// bytes by then; else the window ends at `end_at` with every byte.
    pub(super) window_end: Option<(Instant, u64)>,
    /// Echo: each timed keystroke's round trip, in seconds.
    pub(super) echoes: Vec<f64>,
    /// Echo beside a reference: the reference's round trip after each of them.
    pub(super) echoes_ref: Vec<f64>,
    /// Typing: each key's place and echo, and the wire.
    pub(super) typing: Option<crate::model::Typing>,
    /// The reference's pipes, given back after a sample that went well.
    pub(super) reference: Option<Pipes>,
    /// The ssh client's CPU time at the mark and at the end (where the OS tells).
    pub(super) client_cpu_mark: Option<Duration>,
    pub(super) client_cpu_end: Option<Duration>,
    /// ssh's run-queue delay at the same two instants (Linux).
    pub(super) client_wait_mark: Option<Duration>,
    pub(super) client_wait_end: Option<Duration>,
    /// How many CPUs ssh may run on, read at the mark.
    pub(super) client_cores: Option<usize>,
    /// Through a proxy: its processes beside ssh (found at the ready line), and their
    /// CPU at the mark and at the end.
    pub(super) proxies: Vec<u32>,
    pub(super) proxy_mark: Vec<proxy::Reading>,
    pub(super) proxy_end: Vec<proxy::Reading>,
    /// Receive: this reading thread's own CPU time at the mark and at the end.
    pub(super) drain_cpu_mark: Option<Duration>,
    pub(super) drain_cpu_end: Option<Duration>,
    /// The remote side broke sshbench's protocol.
    pub(super) error: Option<Problem>,
    /// The last line the server printed before the ready line (connect: at all), made
    /// printable and short: when the command never ran (an sftp-only account, a
    /// restricted shell), it is the server's reason.
    pub(super) said: Option<String>,
}

/// Steps the stdout reader tells the stdin writer to take (send mode).
#[derive(Debug)]
pub(super) enum WriteStep {
    /// Write the ping line.
    Ping,
    /// Write the ramp-up bytes.
    Ramp,
    /// Write the rest and close stdin.
    Rest,
}

/// What the stdin writer did.
#[derive(Debug, Default)]
pub(super) struct WriterReport {
    pub(super) ping_at: Option<Instant>,
    /// Send: bytes written, ramp included.
    pub(super) written: u64,
    /// Send: this writing thread's CPU time over the rest (the measured window).
    pub(super) rest_cpu: Option<Duration>,
    pub(super) error: Option<String>,
}

/// Send: the rest after the ramp is written in pieces of this size, so that a
/// time-bounded transfer stops within one piece of its time.
pub(super) const SEND_PIECE: u64 = 1 << 20;

/// Collect ssh's stderr lines (bounded) until EOF.
/// ssh's stderr lines and when each arrived (since spawn).
pub(super) type StderrLines = (Vec<String>, Vec<Duration>);

pub(super) fn read_stderr(child: &mut Child, start: Instant) -> mpsc::Receiver<StderrLines> {
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr piped");
    proc::spawn_named("sb-stderr", move || {
        let mut r = BufReader::new(stderr);
        let (mut lines, mut times) = (Vec::new(), Vec::new());
        while let Ok(Some(line)) = proc::read_bounded_line(&mut r, MAX_LINE) {
            if lines.len() < MAX_STDERR_LINES && !rekey::is_flood(&line) {
                times.push(start.elapsed());
                lines.push(line);
            }
        }
        let _ = tx.send((lines, times));
    });
    rx
}

/// Follow the remote protocol on stdout: noise, the ready line, then data or a count
/// (a send `from_file`: the mark and the count); the client's CPU is read from process
/// `pid` (ssh, or the master it runs over) and, `via_proxy`, from its proxy's.
pub(super) fn read_stdout(
    child: &mut Child,
    req: &SampleRequest,
    go: mpsc::Sender<WriteStep>,
    pid: u32,
    from_file: bool,
    via_proxy: bool,
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
    proc::spawn_named("sb-stdout", move || {
        // Lines (the ready line, send's replies) need little; a receive's reads of a
        // whole pipe's worth go past this buffer once it is drained.
        let mut r = BufReader::with_capacity(256 * 1024, stdout);
        let mut report = StdoutReport {
            from_file,
            ..StdoutReport::default()
        };
        if mode == Mode::Connect {
            // Nothing is expected: `wait_ready` only keeps the last line said.
            wait_ready(&mut r, &mut report);
            let _ = std::io::copy(&mut r, &mut std::io::sink());
            let _ = tx.send(report);
            return;
        }
        if wait_ready(&mut r, &mut report) {
            report.proxies = proxy::find(pid, via_proxy);
            match mode {
                Mode::Send if from_file => follow_file_send(&mut r, &mut report, pid),
                Mode::Send => follow_send(&mut r, &go, &mut report, pid),
                _ => {
                    let received = drain(&mut r, expected, |received| {
                        let now = Instant::now();
                        if report.mark_at.is_none() && received >= ramp {
                            report.mark_at = Some(now);
                            report.mark_bytes = received;
                            mark_client(&mut report, pid);
                            report.drain_cpu_mark = proc::thread_cpu_time();
                        }
                        if received >= expected && report.end_at.is_none() {
                            report.end_at = Some(now);
                            end_client(&mut report, pid);
                            report.drain_cpu_end = proc::thread_cpu_time();
                        }
                    });
                    report.received = received;
                    if received != expected {
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
pub(super) fn wait_ready(r: &mut impl std::io::BufRead, report: &mut StdoutReport) -> bool {
    let mut noise = 0usize;
    loop {
        match proc::read_bounded_line(r, MAX_LINE) {
            Ok(Some(line)) if line.ends_with(remote::READY) => {
                let before = &line[..line.len() - remote::READY.len()];
                if !before.trim().is_empty() {
                    report.said = Some(remote::printable(before));
                }
                report.ready_at = Some(Instant::now());
                return true;
            }
            Ok(Some(line)) => {
                noise += line.len() + 1;
                if !line.trim().is_empty() {
                    report.said = Some(remote::printable(&line));
                }
                if noise > MAX_PRE_READY {
                    let limit = MAX_PRE_READY as u64;
                    report.error = Some(Problem::NoisyStart { limit });
                    return false;
                }
            }
            Ok(None) | Err(_) => return false,
        }
    }
}

/// One keystroke through a session: write it, read it back, check it; its round trip.
fn keystroke(
    stdin: &mut impl Write,
    stdout: &mut impl Read,
    key: u8,
    i: u64,
    total: u64,
) -> Result<Duration, Problem> {
    let t0 = Instant::now();
    stdin.write_all(&[key]).map_err(|e| Problem::Pipe {
        error: e.to_string(),
    })?;
    let mut back = [0u8; 1];
    stdout
        .read_exact(&mut back)
        .map_err(|_| Problem::KeysEnded { at: i, total })?;
    let rtt = t0.elapsed();
    if back[0] != key {
        let (sent, got) = (key, back[0]);
        return Err(Problem::KeyGarbled { at: i, sent, got });
    }
    Ok(rtt)
}

/// Type `total` keystrokes, each only after the previous one came back, each followed
/// by one into the reference session when there is one; time all but the first
/// `untimed`.
fn type_keys(
    stdin: &mut ChildStdin,
    r: &mut BufReader<ChildStdout>,
    reference: &mut Option<Pipes>,
    total: u64,
    untimed: u64,
    report: &mut StdoutReport,
) -> Result<(), Problem> {
    for i in 0..total {
        let key = b'a' + (i % 26) as u8;
        let rtt = keystroke(stdin, r, key, i, total)?;
        let beside = match reference.as_mut() {
            Some((rin, rout)) => {
                Some(
                    keystroke(rin, rout, key, i, total).map_err(|e| Problem::Reference {
                        label: None,
                        why: Box::new(e),
                    })?,
                )
            }
            None => None,
        };
        if i >= untimed {
            report.echoes.push(rtt.as_secs_f64());
            report.echoes_ref.extend(beside.map(|d| d.as_secs_f64()));
        }
    }
    Ok(())
}

/// Echo: after the ready line, type `req.bytes` keystrokes one at a time (see
/// [`type_keys`]; the first `req.ramp` are not timed). Every echoed byte is checked.
/// One thread owns every pipe, so a round trip is one write and one read with nothing
/// in between. The reference's pipes come back in the report if all went well.
pub(super) fn echo_session(
    child: &mut Child,
    req: &SampleRequest,
    mut reference: Option<Pipes>,
) -> mpsc::Receiver<StdoutReport> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout piped");
    let mut stdin = child.stdin.take().expect("stdin piped");
    let (total, untimed) = (req.bytes, req.ramp.min(req.bytes));
    proc::spawn_named("sb-echo", move || {
        let mut r = BufReader::new(stdout);
        let mut report = StdoutReport::default();
        if wait_ready(&mut r, &mut report) {
            report.echoes.reserve((total - untimed) as usize);
            match type_keys(
                &mut stdin,
                &mut r,
                &mut reference,
                total,
                untimed,
                &mut report,
            ) {
                Ok(()) => {
                    report.end_at = Some(Instant::now());
                    report.reference = reference;
                }
                Err(e) => report.error = Some(e),
            }
        }
        // EOF ends the remote `cat`, and with it the session.
        drop(stdin);
        let extra = std::io::copy(&mut r, &mut std::io::sink()).unwrap_or(0);
        if extra > 0 && report.error.is_none() {
            report.error = Some(Problem::AfterEcho { bytes: extra });
        }
        let _ = tx.send(report);
    });
    rx
}

/// The send protocol after READY: ping/PONG, ramp bytes/MARK, rest/count. Each step
/// waits for the remote side's line before telling the writer to go on.
pub(super) fn follow_send(
    r: &mut impl std::io::BufRead,
    go: &mpsc::Sender<WriteStep>,
    report: &mut StdoutReport,
    pid: u32,
) {
    let _ = go.send(WriteStep::Ping);
    let mut expect = |want: &str, report: &mut StdoutReport| -> Option<Instant> {
        match proc::read_bounded_line(r, MAX_LINE) {
            Ok(Some(line)) if line == want => Some(Instant::now()),
            Ok(Some(line)) => {
                let (want, got) = (want.to_string(), line);
                report.error = Some(Problem::Unexpected { want, got });
                None
            }
            _ => None,
        }
    };
    let Some(pong) = expect(remote::PONG, report) else {
        return;
    };
    report.pong_at = Some(pong);
    let _ = go.send(WriteStep::Ramp);
    let Some(mark) = expect(remote::MARK, report) else {
        return;
    };
    report.mark_at = Some(mark);
    mark_client(report, pid);
    let _ = go.send(WriteStep::Rest);
    read_count(r, report, pid);
}

/// A send that ssh reads from a file: the mark after the ramp, then the count.
fn follow_file_send(r: &mut impl std::io::BufRead, report: &mut StdoutReport, pid: u32) {
    match proc::read_bounded_line(r, MAX_LINE) {
        Ok(Some(line)) if line == remote::MARK => {
            report.mark_at = Some(Instant::now());
            mark_client(report, pid);
        }
        Ok(Some(line)) => {
            let want = remote::MARK;
            let (want, got) = (want.to_string(), line);
            report.error = Some(Problem::Unexpected { want, got });
            return;
        }
        _ => return,
    }
    read_count(r, report, pid);
}

/// The server's count line: the end of a send, and the client's CPU then.
fn read_count(r: &mut impl std::io::BufRead, report: &mut StdoutReport, pid: u32) {
    if let Ok(Some(line)) = proc::read_bounded_line(r, MAX_LINE) {
        report.end_at = Some(Instant::now());
        end_client(report, pid);
        report.count_line = Some(line);
    }
}

/// Note ssh's CPU, run-queue delay and CPU set at the start of the measured window.
pub(super) fn mark_client(report: &mut StdoutReport, pid: u32) {
    report.client_cpu_mark = proc::cpu_time(pid);
    report.client_wait_mark = proc::run_queue_wait(pid);
    report.client_cores = crate::sys::affinity::cpus_of(pid);
    report.proxy_mark = proxy::read(&report.proxies);
}

/// Note ssh's (and its proxy's) CPU and run-queue delay at the end of the window.
pub(super) fn end_client(report: &mut StdoutReport, pid: u32) {
    report.client_cpu_end = proc::cpu_time(pid);
    report.client_wait_end = proc::run_queue_wait(pid);
    report.proxy_end = proxy::read(&report.proxies);
}

/// Wait, when called, until `at` (a parallel batch's moment to let its data go).
fn hold_until(at: Option<Instant>) -> impl Fn() {
    move || {
        if let Some(d) = at.and_then(|t| t.checked_duration_since(Instant::now())) {
            std::thread::sleep(d);
        }
    }
}

/// Send: everything after the ramp, in pieces until `bytes` are written or `until`
/// has passed, and this thread's CPU over it.
fn write_rest(
    stdin: &mut std::process::ChildStdin,
    payload: &Payload,
    bytes: u64,
    until: Option<Duration>,
    pacer: &mut Pacer,
    report: &mut WriterReport,
) -> std::io::Result<()> {
    let started = Instant::now();
    let cpu = proc::thread_cpu_time();
    while report.written < bytes && until.is_none_or(|u| started.elapsed() < u) {
        let n = (bytes - report.written).min(SEND_PIECE);
        payload.splice_repeated(stdin, n, report.written, pacer)?;
        report.written += n;
    }
    report.rest_cpu = cpu
        .zip(proc::thread_cpu_time())
        .map(|(a, b)| b.saturating_sub(a));
    Ok(())
}

/// The first byte a receive writes, before the server has answered: dbclient, asked
/// without a terminal whether to trust a host key it does not know, reads its answer
/// from stdin and takes a `y` for yes, so that byte is never one.
fn not_yes(first: &[u8]) -> Vec<u8> {
    first
        .iter()
        .map(|&b| if matches!(b, b'y' | b'Y') { b'n' } else { b })
        .collect()
}

/// Feed stdin: for `send`, each step of the protocol when the reader says so; for
/// `receive`, the payload block up front. Closing stdin signals EOF to the remote side.
pub(super) fn feed_stdin(
    child: &mut Child,
    req: &SampleRequest,
    payload: &Payload,
    go: mpsc::Receiver<WriteStep>,
) -> Option<mpsc::Receiver<WriterReport>> {
    let mut stdin = child.stdin.take()?;
    // A 1 MiB pipe takes a whole piece of the block per call (bench/results/notebook.md, "The
    // feeder's cost"); else it holds the default 64 KiB.
    let capacity = match req.mode {
        Mode::Send => proc::widen_pipe(&stdin).unwrap_or(64 << 10),
        _ => 64 << 10,
    };
    let (tx, rx) = mpsc::channel();
    let mode = req.mode;
    let (bytes, ramp, until) = (req.bytes, req.ramp.min(req.bytes), req.until);
    let hold = hold_until(req.together.map(|t| t.at));
    let payload = payload.clone();
    proc::spawn_named("sb-feed", move || {
        let mut report = WriterReport::default();
        let result = match mode {
            Mode::Send => (|| {
                // A closed channel means the reader gave up; it reports why.
                while let Ok(step) = go.recv() {
                    match step {
                        WriteStep::Ping => {
                            report.ping_at = Some(Instant::now());
                            stdin.write_all(b"ping\n")?;
                            stdin.flush()?;
                        }
                        WriteStep::Ramp => {
                            hold();
                            payload.write_repeated(&mut stdin, ramp, 0)?;
                            report.written = ramp;
                        }
                        WriteStep::Rest => {
                            let mut pacer = Pacer::new(capacity);
                            let (pacer, report) = (&mut pacer, &mut report);
                            write_rest(&mut stdin, &payload, bytes, until, pacer, report)?;
                            break;
                        }
                    }
                }
                Ok(())
            })(),
            Mode::Receive => {
                hold();
                let block = &payload.block()[..remote::RECEIVE_BLOCK.min(payload.block().len())];
                let (first, rest) = block.split_at(block.len().min(1));
                (stdin.write_all(&not_yes(first)))
                    .and_then(|()| stdin.write_all(rest))
                    .and_then(|()| stdin.flush())
            }
            _ => Ok(()),
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

    #[test]
    fn a_receive_never_starts_with_a_yes() {
        assert_eq!(not_yes(b"y"), b"n");
        assert_eq!(not_yes(b"Y"), b"n");
        assert_eq!(not_yes(b"x"), b"x");
        assert!(not_yes(b"").is_empty());
    }

    #[test]
    fn the_last_line_before_the_ready_line_is_kept() {
        let mut r = std::io::Cursor::new(format!("motd\n\nhello\n{}\ndata\n", remote::READY));
        let mut report = StdoutReport::default();
        assert!(wait_ready(&mut r, &mut report));
        assert_eq!(report.said.as_deref(), Some("hello"));
        // A start-up file that prints without a newline ends on the ready line's start.
        let mut r = std::io::Cursor::new(format!("Welcome to the NAS{}\ndata\n", remote::READY));
        let mut report = StdoutReport::default();
        assert!(wait_ready(&mut r, &mut report));
        assert_eq!(report.said.as_deref(), Some("Welcome to the NAS"));
    }
}
