//! A receive that ssh writes into a [`Sink`] (a file in memory) instead of a pipe
//! sshbench drains: the ready line is read from the file's head, then the bytes so far
//! are looked at now and then ([`look_after`]), and the window runs from the first look
//! past the ramp to the last look before the last byte that saw new bytes, each an
//! exact pair of a time and a count.

use super::streams::{StdoutReport, end_client, mark_client, wait_ready};
use super::{MAX_LINE, MAX_PRE_READY, proxy};
use crate::model::{Mode, SampleRequest};
use crate::sys::proc;
use crate::sys::sink::Sink;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the file's head is looked at for the ready line: while the connection is
/// made and the command starts, when nothing streams yet.
const LOOK_READY: Duration = Duration::from_millis(1);
/// How often the bytes so far are looked at while they stream: a fifth of the time since
/// the ready line, from 0.5 ms (a short transfer still has looks enough for a window) to
/// 10 ms (each look wakes a thread on the client's CPUs, and a receive looked at every
/// 2 ms read AES-GCM ~4% lower than one looked at every 10: bench/results/notebook.md, "A receive
/// into a file in memory").
fn look_after(since_ready: Duration) -> Duration {
    (since_ready / 5).clamp(Duration::from_micros(500), Duration::from_millis(10))
}

/// A file for `req` to write into, where it is a receive and the OS has one to give.
pub(super) fn sink_for(req: &SampleRequest) -> Option<Sink> {
    (req.mode == Mode::Receive).then(Sink::new).flatten()
}

/// Follow a receive in `sink` until `done` says ssh is gone (its sender dropped); its
/// client CPU is read from process `pid` (and its proxy's, `via_proxy`) at the window's
/// ends.
pub(super) fn follow(
    mut sink: Sink,
    req: &SampleRequest,
    pid: u32,
    via_proxy: bool,
    done: mpsc::Receiver<()>,
) -> mpsc::Receiver<StdoutReport> {
    let (tx, rx) = mpsc::channel();
    let (expected, ramp) = (req.bytes, req.ramp);
    proc::spawn_named("sb-sink", move || {
        let mut report = StdoutReport::default();
        if let Some(start) = ready(&mut sink, &done, &mut report) {
            report.proxies = proxy::find(pid, via_proxy);
            let bytes = Expected {
                start,
                total: expected,
                ramp,
            };
            stream(&mut sink, bytes, &done, &mut report, pid);
            // ssh is gone: what it wrote in all.
            report.received = sink.written_and_wrap() - start;
            if report.received != expected {
                report.end_at = None;
            }
        }
        let _ = tx.send(report);
    });
    rx
}

/// Wait one `look`, or less if ssh is gone first; true once it is.
fn gone(done: &mpsc::Receiver<()>, look: Duration) -> bool {
    !matches!(
        done.recv_timeout(look),
        Err(mpsc::RecvTimeoutError::Timeout)
    )
}

/// Look at the file's head until the ready line is in it: where the data starts, or
/// `None` when ssh ended first or printed too much before it.
fn ready(sink: &mut Sink, done: &mpsc::Receiver<()>, report: &mut StdoutReport) -> Option<u64> {
    loop {
        let ended = gone(done, LOOK_READY);
        let written = sink.written();
        if written > 0 {
            let head = sink.head((written as usize).min(MAX_PRE_READY + MAX_LINE));
            let mut rest: &[u8] = &head;
            let mut seen = StdoutReport::default();
            let found = wait_ready(&mut rest, &mut seen);
            let at = head.len() - rest.len();
            report.said = seen.said;
            // A ready line counts once its end of line is there.
            if found && head[at - 1] == b'\n' {
                report.ready_at = Some(Instant::now());
                return Some(at as u64);
            }
            if seen.error.is_some() {
                report.error = seen.error;
                return None;
            }
        }
        if ended {
            return None;
        }
    }
}

/// The bytes a receive is to stream: where its stream starts in the file, how many in
/// all, and the ramp before its window.
#[derive(Clone, Copy)]
struct Expected {
    start: u64,
    total: u64,
    ramp: u64,
}

/// Look at the bytes so far until `expected` (or ssh's end). Each end of the window is
/// a look that saw new bytes: the mark the first past `ramp`, the end the last before
/// the last byte, so that over a path that delivers in bursts both ends fall just after
/// one (a look that saw nothing new moves neither). ssh's CPU is read at the end's
/// candidates once at most three of the widest steps so far remain; when the last byte
/// came is told from the window's rate.
fn stream(
    sink: &mut Sink,
    bytes: Expected,
    done: &mpsc::Receiver<()>,
    report: &mut StdoutReport,
    pid: u32,
) {
    let Expected {
        start,
        total: expected,
        ramp,
    } = bytes;
    // The last look before the end: when, how many bytes, whether ssh's CPU was read.
    let mut last: Option<(Instant, u64, bool)> = None;
    let (mut before, mut widest) = (0u64, 0u64);
    let ready = report.ready_at.unwrap_or_else(Instant::now);
    loop {
        let ended = gone(done, look_after(ready.elapsed()));
        let now = Instant::now();
        let got = sink.written_and_wrap() - start;
        if got >= expected {
            report.end_at = Some(last_byte(report, last, now, expected));
            break;
        }
        if got > before {
            widest = widest.max(got - before);
            before = got;
            if report.mark_at.is_none() && got >= ramp {
                report.mark_at = Some(now);
                report.mark_bytes = got;
                mark_client(report, pid);
                report.drain_cpu_mark = proc::thread_cpu_time();
            } else if report.mark_at.is_some() {
                let near = expected - got <= 3 * widest;
                if near {
                    end_client(report, pid);
                    report.drain_cpu_end = proc::thread_cpu_time();
                }
                last = Some((now, got, near));
            }
        }
        if ended {
            break;
        }
    }
    if let Some((at, bytes, read)) = last {
        report.window_end = Some((at, bytes));
        if !read {
            // ssh's CPU was not read at the window's end: the window stands without it.
            report.client_cpu_end = None;
            report.drain_cpu_end = None;
        }
    }
}

/// When the last byte came: after the window's last look, at the window's rate (not
/// later than the look that saw it).
fn last_byte(
    report: &StdoutReport,
    last: Option<(Instant, u64, bool)>,
    seen_at: Instant,
    expected: u64,
) -> Instant {
    let (Some(mark), Some((at, bytes, _))) = (report.mark_at, last) else {
        return seen_at;
    };
    let time = at.saturating_duration_since(mark).as_secs_f64();
    let moved = bytes.saturating_sub(report.mark_bytes) as f64;
    if time <= 0.0 || moved <= 0.0 {
        return seen_at;
    }
    let rest = (expected - bytes) as f64 / (moved / time);
    (at + Duration::from_secs_f64(rest)).min(seen_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::remote;
    use crate::model::Suite;

    fn receive(bytes: u64, ramp: u64) -> SampleRequest {
        SampleRequest {
            suite: Suite::default(),
            mode: Mode::Receive,
            bytes,
            ramp,
            timeout: Duration::from_secs(60),
            until: None,
            together: None,
            reference: None,
        }
    }

    #[test]
    fn every_receive_goes_into_a_file_where_there_is_one() {
        let small = receive(2 << 20, 1 << 20);
        assert_eq!(sink_for(&small).is_some(), cfg!(target_os = "linux"));
        let send = SampleRequest {
            mode: Mode::Send,
            ..small
        };
        assert!(sink_for(&send).is_none());
    }

    #[test]
    fn looks_come_more_often_early_in_a_transfer() {
        let ms = Duration::from_millis;
        assert_eq!(look_after(Duration::ZERO), Duration::from_micros(500));
        assert_eq!(look_after(ms(30)), ms(6));
        assert_eq!(look_after(ms(400)), ms(10));
    }

    #[test]
    fn the_last_byte_comes_at_the_windows_rate_but_not_after_it_was_seen() {
        let t = Instant::now();
        let ms = |n| t + Duration::from_millis(n);
        let report = StdoutReport {
            mark_at: Some(t),
            mark_bytes: 1000,
            ..StdoutReport::default()
        };
        // 100 bytes a millisecond: the last 500 came 5 ms after the last look.
        let last = Some((ms(10), 2000, true));
        assert_eq!(last_byte(&report, last, ms(12), 2500), ms(12));
        assert_eq!(last_byte(&report, last, ms(20), 2500), ms(15));
        assert_eq!(last_byte(&report, None, ms(20), 2500), ms(20));
    }

    /// What following a receive of `req` sees when a child writes into its file: a line
    /// of noise, the ready line, then `mib` MiB, each in one write with a pause of
    /// `pause` seconds after it.
    #[cfg(target_os = "linux")]
    fn followed(req: &SampleRequest, mib: u32, pause: &str) -> StdoutReport {
        let sink = Sink::new().unwrap();
        let script = format!(
            "echo welcome; echo {}; i=0; while [ $i -lt {mib} ]; do \
             dd if=/dev/zero bs=1048576 count=1 2>/dev/null; sleep {pause}; i=$((i + 1)); done",
            remote::READY
        );
        let mut child = std::process::Command::new("sh")
            .args(["-c", &script])
            .stdout(std::process::Stdio::from(sink.for_child().unwrap()))
            .spawn()
            .unwrap();
        let (gone, done) = mpsc::channel();
        let rx = follow(sink, req, child.id(), false, done);
        child.wait().unwrap();
        drop(gone);
        rx.recv().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_receive_into_a_file_counts_its_bytes_after_the_ready_line_and_times_a_window() {
        let out = followed(&receive(40 << 20, 8 << 20), 40, "0.005");
        assert_eq!(out.received, 40 << 20);
        assert_eq!(out.said.as_deref(), Some("welcome"));
        let (ready, mark, end) = (out.ready_at.unwrap(), out.mark_at.unwrap(), out.end_at);
        let (at, bytes) = out.window_end.expect("a look before the end");
        assert!(out.mark_bytes >= 8 << 20 && bytes > out.mark_bytes && bytes < 40 << 20);
        assert!(ready < mark && mark < at && at <= end.unwrap());
        // The window's rate is the writer's: about 1 MiB per 5 ms and a bit.
        let rate = (bytes - out.mark_bytes) as f64 / (at - mark).as_secs_f64();
        assert!(rate > 20e6 && rate < 250e6, "{rate}");
        assert!(out.client_cpu_end.is_some() && out.drain_cpu_end.is_some());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_receive_cut_short_has_no_end() {
        let out = followed(&receive(40 << 20, 8 << 20), 12, "0.005");
        assert_eq!(out.received, 12 << 20);
        assert!(out.end_at.is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn over_bursts_the_window_ends_just_after_one_as_it_starts() {
        // A MiB every 30 ms: a window that ended at the last look before the last burst
        // would hold one pause more than its bursts.
        let out = followed(&receive(16 << 20, 4 << 20), 16, "0.03");
        let (at, bytes) = out.window_end.unwrap();
        assert_eq!(bytes % (1 << 20), 0, "{bytes}");
        let after = out.end_at.unwrap() - at;
        assert!(after > Duration::from_millis(15), "{after:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_short_receive_still_has_a_window_between_looks() {
        // 4 MiB in about 8 ms, fewer than a look of a long transfer.
        let out = followed(&receive(4 << 20, 1 << 20), 4, "0.001");
        assert_eq!(out.received, 4 << 20);
        let (_, bytes) = out.window_end.expect("a look inside the window");
        assert!(bytes > out.mark_bytes);
    }
}
