//! A sample's figures from what its reading and writing threads saw: the steady
//! window, the round trip, both sides' CPU, compression and rekeying.

use super::group::Shared;
use super::judge::{server_cpu, steady_window};
use super::streams::{StderrLines, StdoutReport, WriterReport};
use super::{proxy, rekey, sshlog};
use crate::model::{CpuWindow, Mode, Sample, SampleRequest};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the reading and writing threads saw of one sample.
pub(super) struct Seen {
    pub(super) lines: Vec<String>,
    /// When each line arrived, since `started`.
    pub(super) times: Vec<Duration>,
    /// When ssh was started.
    pub(super) started: Instant,
    pub(super) out: StdoutReport,
    pub(super) written: WriterReport,
}

/// A successful transfer's figures: bytes, round trip, steady window, CPU on both sides,
/// compression and rekeying.
fn fill_transfer(
    sample: &mut Sample,
    req: &SampleRequest,
    moved: u64,
    seen: &Seen,
    over: Option<&Shared>,
) {
    let (lines, out) = (&seen.lines, &seen.out);
    sample.bytes = moved;
    if let (Some(ping), Some(pong)) = (seen.written.ping_at, out.pong_at) {
        sample.rtt = Some(pong.saturating_duration_since(ping));
    }
    sample.window = steady_window(req, moved, out, sample.rtt);
    // An ssh of its own reaped before its last CPU reading: the window ends at its exit.
    let at_exit = sample
        .client_cpu
        .filter(|_| over.is_none())
        .map(|c| c.total());
    let end = out.client_cpu_end.or(at_exit);
    if let (Some(a), Some(b), Some(w)) = (out.client_cpu_mark, end, sample.window) {
        let seconds = b.saturating_sub(a).as_secs_f64();
        let span = |a: Option<Duration>, b: Option<Duration>| {
            a.zip(b).map(|(a, b)| b.saturating_sub(a).as_secs_f64())
        };
        let feeder = match req.mode {
            Mode::Send => seen.written.rest_cpu.map(|d| d.as_secs_f64()),
            _ => span(out.drain_cpu_mark, out.drain_cpu_end),
        };
        let mut window = CpuWindow {
            waited: span(out.client_wait_mark, out.client_wait_end),
            cores: out.client_cores.map(|n| n as f64),
            feeder,
            ..CpuWindow::of(seconds, w.time, w.bytes)
        };
        proxy::fold(&mut window, &out.proxy_mark, &out.proxy_end);
        sample.client_window_cpu = Some(window);
    }
    sample.server_cpu = server_cpu(req, lines, sample);
    sample.compression_factor = sshlog::compression_factor(lines);
    fill_rekey(sample, req, seen, over);
}

/// A transfer's rekey interval and cost, and the rekeys inside its window.
fn fill_rekey(sample: &mut Sample, req: &SampleRequest, seen: &Seen, over: Option<&Shared>) {
    let cipher = sample.negotiated.as_ref().and_then(|n| match req.mode {
        Mode::Send => n.cipher_cs.clone(),
        _ => n.cipher_sc.clone(),
    });
    // Over a shared connection, its own key exchange and limits are the master's, and
    // the rekeys of every session so far are in the master's log as it stands now, read
    // once the sample is over.
    let now;
    let (lines, times, wall, started) = match over {
        Some(o) => {
            now = o.master.log();
            (&now.0, &now.1, now.2, o.master.started())
        }
        None => (&seen.lines, &seen.times, sample.wall, seen.started),
    };
    sample.rekey = match (sshlog::phases(lines, times, wall), cipher) {
        (Some(p), Some(c)) => rekey::rekey(lines, req.mode, &c, p.kex),
        _ => None,
    };
    if let Some(r) = sample.rekey.as_mut() {
        r.within = rekeys_in_window(
            &seen.out,
            Log {
                lines,
                times,
                started,
            },
        );
    }
}

/// An ssh's `-v` log: its lines, each one's time since `started`, when that ssh began.
#[derive(Clone, Copy)]
struct Log<'a> {
    lines: &'a [String],
    times: &'a [Duration],
    started: Instant,
}

/// The rekeys that ended inside the sample's window (a small `RekeyLimit`, or bytes the
/// connection carried before), in the log of the ssh that carried it (`started` is when
/// that ssh began, which the log's times count from).
fn rekeys_in_window(out: &StdoutReport, log: Log) -> u32 {
    let (Some(mark), Some(end)) = (out.mark_at, out.end_at) else {
        return 0;
    };
    let since = |t: Instant| t.saturating_duration_since(log.started);
    rekey::key_exchanges_between(log.lines, log.times, since(mark)..=since(end))
}

/// The reading and writing threads' reports, each waited for boundedly: a descendant
/// that escaped the process group could hold a pipe open.
pub(super) fn collect(
    started: Instant,
    stderr: mpsc::Receiver<StderrLines>,
    stdout: mpsc::Receiver<StdoutReport>,
    writer: Option<mpsc::Receiver<WriterReport>>,
) -> Seen {
    let grace = Duration::from_secs(2);
    let (lines, times) = stderr.recv_timeout(grace).unwrap_or_default();
    Seen {
        lines,
        times,
        started,
        out: stdout.recv_timeout(grace).unwrap_or_default(),
        written: writer
            .and_then(|w| w.recv_timeout(grace).ok())
            .unwrap_or_default(),
    }
}

/// A successful sample's figures, by mode.
pub(super) fn fill(
    sample: &mut Sample,
    req: &SampleRequest,
    moved: u64,
    seen: &mut Seen,
    over: Option<&Shared>,
) {
    match req.mode {
        Mode::Send | Mode::Receive => fill_transfer(sample, req, moved, seen, over),
        Mode::Connect => sample.phases = sshlog::phases(&seen.lines, &seen.times, sample.wall),
        Mode::Echo => {
            sample.bytes = req.bytes;
            sample.echoes = std::mem::take(&mut seen.out.echoes);
            sample.echoes_ref = std::mem::take(&mut seen.out.echoes_ref);
            sample.compression_factor = sshlog::compression_factor(&seen.lines);
        }
        Mode::Typing => {
            sample.bytes = req.bytes;
            sample.echoes = std::mem::take(&mut seen.out.echoes);
            sample.typing = seen.out.typing.take().map(Box::new);
        }
        m => unreachable!("{m} runs through measure::workload, not one ssh"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Suite};

    fn receive(bytes: u64) -> SampleRequest {
        SampleRequest {
            suite: Suite::default(),
            mode: Mode::Receive,
            bytes,
            ramp: 10 << 20,
            timeout: Duration::from_secs(60),
            until: None,
            together: None,
            reference: None,
        }
    }

    #[test]
    fn a_client_reaped_before_its_last_cpu_reading_ends_the_window_at_its_exit() {
        let req = receive(100 << 20);
        let mark = Instant::now();
        let out = StdoutReport {
            mark_at: Some(mark),
            end_at: Some(mark + Duration::from_millis(100)),
            mark_bytes: 10 << 20,
            client_cpu_mark: Some(Duration::from_millis(50)),
            ..StdoutReport::default()
        };
        let seen = Seen {
            lines: Vec::new(),
            times: Vec::new(),
            started: mark,
            out,
            written: WriterReport::default(),
        };
        let mut sample = Sample::new(Suite::default(), Mode::Receive, Outcome::Success);
        sample.client_cpu = Some(crate::model::CpuTimes {
            user: Duration::from_millis(120),
            system: Duration::from_millis(30),
        });
        fill_transfer(&mut sample, &req, req.bytes, &seen, None);
        let cpu = sample
            .client_window_cpu
            .expect("the window's CPU, to the exit");
        assert!((cpu.seconds - 0.100).abs() < 1e-9, "{cpu:?}");
    }

    #[test]
    fn the_rekeys_of_an_ssh_of_its_own_are_counted_inside_its_window() {
        let started = Instant::now();
        let ms = Duration::from_millis;
        let newkeys = "debug1: SSH2_MSG_NEWKEYS received".to_string();
        let seen = Seen {
            lines: vec![newkeys.clone(), newkeys.clone(), newkeys],
            // At login, then twice while the window (0.5-1.0 s) ran.
            times: vec![ms(150), ms(600), ms(900)],
            started,
            out: StdoutReport {
                mark_at: Some(started + ms(500)),
                end_at: Some(started + ms(1000)),
                ..StdoutReport::default()
            },
            written: WriterReport::default(),
        };
        let log = Log {
            lines: &seen.lines,
            times: &seen.times,
            started: seen.started,
        };
        assert_eq!(rekeys_in_window(&seen.out, log), 2);
        let unmarked = StdoutReport::default();
        assert_eq!(rekeys_in_window(&unmarked, log), 0);
    }
}
