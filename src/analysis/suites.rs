//! Per-suite statistics: samples grouped by (mode, suite) into figures with intervals,
//! CPU per GB, busy fractions and the bottleneck verdict, phases, echo percentiles and
//! the rekeying spread into the figures.

use super::connect::{common_rest, connect_figure, rest};
use super::echo::{echo_figure, echo_median, echo_ratio, echo_scale};
use super::typing::{TypingStats, typing_stats};
use super::{Percentiles, Summary, median, percentiles_of, summarize, summarize_figures};
use crate::model::{CpuWindow, Mode, Outcome, Phases, Problem, Rekey, Sample, Suite};

/// Everything known about one suite in one mode.
#[derive(Clone, Debug)]
pub struct SuiteStats {
    pub mode: Mode,
    pub suite: Suite,
    pub ok: usize,
    pub failed: usize,
    pub refused: bool,
    /// What the mode needs is missing on the server or here (see `Outcome::Unavailable`).
    pub unavailable: bool,
    /// Connect: seconds. Send/receive: bytes per second. Echo: each session's median
    /// round trip, seconds.
    pub figure: Option<Summary>,
    /// Echo and typing: percentiles over every timed keystroke of every session.
    pub echo: Option<Percentiles>,
    /// Typing: the keys by their place, and the wire.
    pub typing: Option<TypingStats>,
    /// X11: the bulk X client's seconds per sample.
    pub x11_bulk: Option<Summary>,
    /// Client CPU seconds per GB moved (transfers: over the steady window where the OS
    /// tells, else the whole process) or per connection (connect).
    pub client_cpu: Option<Summary>,
    /// Server session CPU seconds per GB moved, where the server tells.
    pub server_cpu: Option<Summary>,
    /// Busy fraction of one core during transfers (1.0 = saturated): see [`busy`].
    pub client_busy: Option<f64>,
    pub server_busy: Option<f64>,
    /// Connect: median time of each phase.
    pub phases: Option<Phases>,
    /// Median compressed/raw ratio with compression.
    pub compression_factor: Option<f64>,
    /// Transfers: the rekeying spread into the figure (the shortest interval seen, the
    /// median stall), where the samples recorded it.
    pub rekey: Option<Rekey>,
    /// Median bytes per transfer sample.
    pub bytes: u64,
    /// Workloads: files per sample (the most any sample verified).
    pub files: Option<u64>,
    /// Send: the median round trip through the session before the transfer.
    pub rtt: Option<f64>,
    /// Moved less than half of what the best suite of its mode moved on the same path:
    /// then the path (network, window) cannot be what limits it.
    pub behind_the_path: bool,
    /// Not measured as a pair but summed from the figures of its parts (a key exchange's
    /// and a host key's, a cipher's and a MAC's: see `analysis::sums`).
    pub sum: bool,
    /// Send and receive: the channel window the sending side met and the path's round
    /// trip, when both are known (see [`mark_windows`]).
    pub path_window: Option<PathWindow>,
    /// Bytes per second one raw TCP stream moved along the same path (the sandbox):
    /// a suite far below it is not limited by the link.
    pub path_tcp: Option<f64>,
    /// The last failure or refusal message.
    pub last_error: Option<Problem>,
}

/// Which side limits a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The ssh client saturates a core.
    Client,
    /// The server's sshd saturates a core.
    Server,
    /// Both sides' processes want a whole core (in a shared sandbox, the one they share).
    Both,
    /// Neither side's CPU is saturated: the network or flow control limits (the channel
    /// window is not known).
    #[serde(rename = "network-or-window")]
    Network,
    /// Neither side's CPU is saturated and the rate is within [`WINDOW_MARGIN`] of the
    /// channel window over the round trip: SSH's flow control limits.
    Window,
    /// Neither side's CPU is saturated and the window allows more: the link limits.
    #[serde(rename = "network")]
    Link,
    /// Rekeys take [`REKEY_BOUND`] of a long transfer's time or more (a small
    /// `RekeyLimit`): their stalls, not a CPU or the path, set the rate.
    Rekeying,
    /// Not enough is known (the server does not expose its CPU).
    Unknown,
}

/// A side counts as the bottleneck when its busiest process uses this much of a core.
pub const SATURATED: f64 = 0.85;
/// A suite far behind its path is CPU-bound only if a side uses at least this much of
/// a core.
pub const BUSY_ENOUGH: f64 = 0.5;
/// Rekeys that take this share of a long transfer's time set its rate, whatever the CPUs
/// (which are busy with the key exchanges then).
pub const REKEY_BOUND: f64 = 0.5;

impl SuiteStats {
    /// A suite with no samples: every figure unknown.
    pub fn empty(mode: Mode, suite: Suite) -> SuiteStats {
        suite_stats(mode, &suite, &[], Scales::default())
    }

    /// The bottleneck of a transfer suite, from the busy fractions.
    pub fn bound(&self) -> Option<Bound> {
        if !self.mode.is_transfer() || self.figure.is_none() {
            return None;
        }
        if self.rekey_share().is_some_and(|s| s >= REKEY_BOUND) {
            return Some(Bound::Rekeying);
        }
        let c = self.client_busy.map(|b| b >= SATURATED);
        let s = self.server_busy.map(|b| b >= SATURATED);
        Some(match (c, s) {
            (Some(true), Some(true)) => Bound::Both,
            (Some(true), _) => Bound::Client,
            (_, Some(true)) => Bound::Server,
            (Some(false), Some(false)) if self.behind_the_path => self.busier_side(),
            (Some(false), Some(false)) => match (self.path_window, self.figure) {
                (Some(w), Some(f)) if w.binds(f.mean, self.receiver_busy().unwrap_or(1.0)) => {
                    Bound::Window
                }
                (_, Some(f)) if self.path_tcp.is_some_and(|t| f.mean < t * BEHIND) => {
                    self.busier_side()
                }
                // A window that grows sets no cap to say the link fell short of.
                (Some(w), Some(_)) if !w.grows => Bound::Link,
                _ => Bound::Network,
            },
            _ => Bound::Unknown,
        })
    }

    /// The share of a long transfer's time its rekeys take at the suite's rate (at most
    /// 1 but for a stall estimated long).
    pub fn rekey_share(&self) -> Option<f64> {
        Some(self.rekey?.share(self.figure?.mean))
    }

    /// The busy share of the side that takes the window in: the server for uploads.
    fn receiver_busy(&self) -> Option<f64> {
        match self.mode {
            Mode::Send => self.server_busy,
            _ => self.client_busy,
        }
    }

    /// A suite far behind its path is limited by its own cost, that is by CPU, though
    /// neither side reached the saturation mark (scheduling delays, the other side's
    /// turn): the busier side, or both when they are within a tenth of a core.
    fn busier_side(&self) -> Bound {
        match (self.client_busy, self.server_busy) {
            // Neither side near half a core: not its own cost but the path (a window
            // whose round trip was not measured) holds it back.
            (Some(c), Some(s)) if c.max(s) < BUSY_ENOUGH => Bound::Network,
            (Some(c), Some(s)) if (c - s).abs() < 0.1 => Bound::Both,
            (Some(c), Some(s)) if c > s => Bound::Client,
            (Some(_), Some(_)) => Bound::Server,
            _ => Bound::Unknown,
        }
    }
}

/// How saturated a side is over a suite's samples (1.0 = a core fully used). CPU times
/// come in clock ticks (10 ms on most systems), so one 200 ms window is only good to a
/// tick or two: a saturated process can read 0.85 in one window and 0.95 in the next.
/// The windows are therefore pooled (all the busiest process's CPU over all the time),
/// which averages the rounding out; so is the side's CPU over the cores it may use
/// (its processes together can fill a core that none of them fills alone). Under an
/// enforced quota each window's own figure (from its throttled periods) is used, and
/// the median of those.
pub fn busy(windows: &[CpuWindow]) -> Option<f64> {
    if windows
        .iter()
        .any(|w| w.limit.is_some_and(|l| l < 1.0) && w.throttled.is_some())
    {
        let mut each: Vec<f64> = windows.iter().filter_map(CpuWindow::busy).collect();
        return median(&mut each);
    }
    let time: f64 = windows.iter().map(|w| w.interval.as_secs_f64()).sum();
    let cpu: f64 = windows.iter().map(CpuWindow::demand).sum();
    // The cores the side may use, pooled the same way where every window knows them.
    let set: Option<f64> = windows
        .iter()
        .map(|w| Some(w.set_demand() / w.set_cores()?))
        .sum();
    (time > 0.0).then(|| (cpu / time).max(set.unwrap_or(0.0) / time))
}

/// The figure a sample is ranked by: seconds for connect (its own time; a report's
/// figure takes the common rest, see [`super::connect`]), bytes/s for transfers, for
/// echo the median round trip (seconds) or, typed beside a reference, its ratio to the
/// reference's (see [`super::echo`]).
pub fn figure(s: &Sample) -> Option<f64> {
    if !s.outcome.is_success() {
        return None;
    }
    match s.mode {
        Mode::Connect => Some(s.wall.as_secs_f64()),
        Mode::Echo => echo_ratio(s).or_else(|| echo_median(s)),
        Mode::Typing | Mode::Exec | Mode::X11 => echo_median(s),
        _ => s.throughput(),
    }
}

/// The figures of one suite's samples in a report of `scales`.
fn figures_of(mode: Mode, list: &[&Sample], scales: Scales) -> Vec<f64> {
    let each = list.iter();
    match mode {
        Mode::Echo => each.filter_map(|s| echo_figure(s, scales.echo)).collect(),
        Mode::Typing | Mode::Exec | Mode::X11 => each.filter_map(|s| echo_median(s)).collect(),
        Mode::Connect => each
            .filter_map(|s| connect_figure(s, scales.connect))
            .collect(),
        _ => each.filter_map(|s| figure(s)).collect(),
    }
}

/// What a report's figures are set against: echo's reference scale, connect's common
/// rest.
#[derive(Clone, Copy, Debug, Default)]
struct Scales {
    echo: Option<f64>,
    connect: Option<f64>,
}

/// Samples grouped by (mode, suite), in the order suites first appear.
fn group<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
) -> Vec<(Mode, &'a Suite, Vec<&'a Sample>)> {
    // A stream of a parallel batch is not a sample of its suite alone.
    let all: Vec<&Sample> = samples.into_iter().filter(|s| s.stream.is_none()).collect();
    group_split_at(&all, SPLIT_AT)
}

/// [`group`], in halves from `split_at` samples on.
fn group_split_at<'a>(
    all: &[&'a Sample],
    split_at: usize,
) -> Vec<(Mode, &'a Suite, Vec<&'a Sample>)> {
    if all.len() < split_at || !crate::sys::machine::two_cores() {
        return group_in_order(all);
    }
    // Two halves side by side (hashing each sample's suite was a tenth of a large
    // report's statistics, on one core), then the second's groups joined to the first's:
    // the same groups in the same order as one pass.
    let (a, b) = all.split_at(all.len() / 2);
    let (mut groups, second) = std::thread::scope(|s| {
        let other = s.spawn(|| group_in_order(b));
        let first = group_in_order(a);
        (
            first,
            other.join().expect("grouping half the samples panicked"),
        )
    });
    let mut index: Index = (groups.iter().enumerate())
        .map(|(i, g)| ((g.0, g.1), i))
        .collect();
    for (mode, suite, list) in second {
        match index.get(&(mode, suite)) {
            Some(&i) => groups[i].2.extend(list),
            None => {
                index.insert((mode, suite), groups.len());
                groups.push((mode, suite, list));
            }
        }
    }
    groups
}

/// Where each (mode, suite) group is. A fast hash: the suites are ours, not an
/// attacker's, and hashing each sample's suite with SipHash was a third of building a
/// large report's statistics.
type Index<'a> = std::collections::HashMap<(Mode, &'a Suite), usize, foldhash::fast::RandomState>;

/// [`group`] in one pass.
fn group_in_order<'a>(samples: &[&'a Sample]) -> Vec<(Mode, &'a Suite, Vec<&'a Sample>)> {
    let mut groups: Vec<(Mode, &Suite, Vec<&Sample>)> = Vec::new();
    let mut index: Index = Default::default();
    for &s in samples {
        match index.get(&(s.mode, &s.suite)) {
            Some(&i) => groups[i].2.push(s),
            None => {
                index.insert((s.mode, &s.suite), groups.len());
                groups.push((s.mode, &s.suite, vec![s]));
            }
        }
    }
    groups
}

/// Client CPU of one sample: seconds per connection for connect, per GB over the
/// steady window (or the whole transfer, for samples without one) for transfers.
fn client_cpu(mode: Mode, s: &Sample) -> Option<f64> {
    match (mode, s.client_window_cpu) {
        (Mode::Connect, _) => Some(s.client_cpu?.total().as_secs_f64()),
        (Mode::Echo | Mode::Typing | Mode::Exec | Mode::X11, _) => None,
        (_, Some(w)) => w.per_gb(),
        _ => {
            let c = s.client_cpu?.total().as_secs_f64();
            (s.bytes > 0).then(|| c / s.bytes as f64 * 1e9)
        }
    }
}

/// The median of each connect phase.
fn median_phases(good: &[&Sample]) -> Option<Phases> {
    let list: Vec<Phases> = good.iter().filter_map(|s| s.phases).collect();
    if list.is_empty() {
        return None;
    }
    let m = |f: fn(&Phases) -> f64| {
        let mut v: Vec<f64> = list.iter().map(f).collect();
        median(&mut v).unwrap_or(0.0)
    };
    Some(Phases {
        tcp: m(|p| p.tcp),
        version: m(|p| p.version),
        kex: m(|p| p.kex),
        auth: m(|p| p.auth),
        session: m(|p| p.session),
    })
}

/// Everything known about one suite in one mode, from its samples; echo figures on the
/// report's scale (see [`echo_scale`]), connect's with the report's common rest (see
/// [`super::connect`]).
fn suite_stats(mode: Mode, suite: &Suite, list: &[&Sample], scales: Scales) -> SuiteStats {
    let figures = figures_of(mode, list, scales);
    let good: Vec<&Sample> = list
        .iter()
        .copied()
        .filter(|s| s.outcome.is_success())
        .collect();
    let cpu: Vec<f64> = good.iter().filter_map(|s| client_cpu(mode, s)).collect();
    let server: Vec<f64> = good.iter().filter_map(|s| s.server_cpu?.per_gb()).collect();
    let client_windows: Vec<CpuWindow> = good.iter().filter_map(|s| s.client_window_cpu).collect();
    let server_windows: Vec<CpuWindow> = good.iter().filter_map(|s| s.server_cpu).collect();
    let mut factors: Vec<f64> = good.iter().filter_map(|s| s.compression_factor).collect();
    let mut bytes: Vec<u64> = good.iter().map(|s| s.bytes).collect();
    bytes.sort();
    let echoes: Vec<f64> = good.iter().flat_map(|s| s.echoes.iter().copied()).collect();
    SuiteStats {
        mode,
        suite: suite.clone(),
        ok: good.len(),
        failed: list
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Failed { .. }))
            .count(),
        refused: list
            .iter()
            .any(|s| matches!(s.outcome, Outcome::Refused { .. })),
        unavailable: list
            .iter()
            .any(|s| matches!(s.outcome, Outcome::Unavailable { .. })),
        figure: summarize_figures(mode, &figures),
        echo: percentiles_of(echoes),
        typing: typing_stats(&good),
        x11_bulk: x11_bulk(mode, &good),
        client_cpu: summarize(&cpu),
        server_cpu: summarize(&server),
        client_busy: busy(&client_windows),
        server_busy: busy(&server_windows),
        phases: median_phases(&good),
        compression_factor: median(&mut factors),
        rekey: super::rekey::of(&good),
        bytes: bytes.get(bytes.len() / 2).copied().unwrap_or(0),
        files: good.iter().filter_map(|s| s.files).max(),
        behind_the_path: false,
        sum: false,
        path_window: None,
        path_tcp: None,
        rtt: median(
            &mut good
                .iter()
                .filter_map(|s| s.rtt)
                .map(|d| d.as_secs_f64())
                .collect::<Vec<_>>(),
        ),
        last_error: list.iter().rev().find_map(|s| s.outcome.problem().cloned()),
    }
}

/// X11: the bulk X client's seconds per sample.
fn x11_bulk(mode: Mode, good: &[&Sample]) -> Option<Summary> {
    let secs: Vec<f64> = (good.iter())
        .filter_map(|s| s.transfer)
        .map(|d| d.as_secs_f64())
        .collect();
    (mode == Mode::X11).then(|| summarize(&secs))?
}

/// Group samples by (mode, suite), in the order suites first appear; each mode's
/// intervals moderated (see [`super::moderate`]).
pub fn aggregate<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Vec<SuiteStats> {
    let groups = group(samples);
    let all = || groups.iter().flat_map(|g| g.2.iter().copied());
    let scales = Scales {
        echo: echo_scale(all()),
        connect: common_rest(all().filter_map(rest)),
    };
    let mut stats = all_stats(&groups, scales);
    super::moderate::moderate(&mut stats);
    mark_behind_the_path(&mut stats);
    stats
}

/// Groups of at least this many samples in all are summarized in two halves at once.
const SPLIT_AT: usize = 20_000;

/// Each group's statistics, in order; a large selection's in two halves side by side
/// (summaries of 100,000 samples took a fifth of `show`'s time).
fn all_stats(groups: &[(Mode, &Suite, Vec<&Sample>)], scales: Scales) -> Vec<SuiteStats> {
    stats_split_at(groups, scales, SPLIT_AT)
}

/// [`all_stats`], in halves from `split_at` samples on.
fn stats_split_at(
    groups: &[(Mode, &Suite, Vec<&Sample>)],
    scales: Scales,
    split_at: usize,
) -> Vec<SuiteStats> {
    let each = |part: &[(Mode, &Suite, Vec<&Sample>)]| -> Vec<SuiteStats> {
        (part.iter())
            .map(|(mode, suite, list)| suite_stats(*mode, suite, list, scales))
            .collect()
    };
    let total: usize = groups.iter().map(|g| g.2.len()).sum();
    if total < split_at || !crate::sys::machine::two_cores() {
        return each(groups);
    }
    let mut seen = 0;
    let mid = (groups.iter())
        .position(|g| {
            seen += g.2.len();
            seen * 2 >= total
        })
        .map_or(groups.len(), |i| i + 1);
    let (first, second) = groups.split_at(mid);
    std::thread::scope(|s| {
        let other = s.spawn(|| each(second));
        let mut out = each(first);
        out.extend(other.join().expect("summarizing half the suites panicked"));
        out
    })
}

/// A rate at least this share of what the window allows per loaded round trip is the
/// window's.
pub const WINDOW_MARGIN: f64 = 0.8;

/// A window is only the limit when a round trip is a real share of the time it lasts at
/// the rate that moved (it holds at most five): a large window on a short path is never
/// waited for, and a receiving end near saturation is the CPU's limit, not the window's.
pub const WINDOW_ROUND_TRIPS: f64 = 5.0;

/// The channel window a transfer met (bytes), the path's round trip (seconds), and the
/// time the receiving end spent taking one window in at the suite's rate (its busiest
/// process's CPU share of the window's time): the window only reopens once the receiver
/// has consumed the data, so that time adds to the round trip.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PathWindow {
    pub bytes: u64,
    pub rtt: f64,
    pub handling: f64,
    /// The receiver's window follows its TCP receive buffer (HPN-SSH): `bytes` is where
    /// it starts, so it binds only a transfer that moved about that much per round trip,
    /// and says nothing of a link that allowed more.
    pub grows: bool,
}

/// A receiver's channel window: its size, and whether it grows from there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelWindow {
    pub bytes: u64,
    pub grows: bool,
}

impl ChannelWindow {
    /// A window that stays as it is.
    pub fn fixed(bytes: u64) -> Self {
        ChannelWindow {
            bytes,
            grows: false,
        }
    }
}

impl PathWindow {
    /// The most one channel can move: a window per loaded round trip.
    pub fn cap(&self) -> f64 {
        self.bytes as f64 / (self.rtt + self.handling)
    }

    /// Whether a transfer at `rate` whose receiver was `busy` (cores) waited on this
    /// window: it moved near [`cap`](Self::cap), the window held few round trips of
    /// it, and the receiver had room for more.
    pub fn binds(&self, rate: f64, busy: f64) -> bool {
        rate >= self.cap() * WINDOW_MARGIN
            && (!self.grows || rate <= self.cap() / WINDOW_MARGIN)
            && self.bytes as f64 <= rate * self.rtt * WINDOW_ROUND_TRIPS
            && busy < WINDOW_MARGIN
    }
}

/// The path's round trip: the median of the send suites' pings (measured before each
/// upload, so on an idle connection).
pub fn path_rtt(stats: &[SuiteStats]) -> Option<f64> {
    let mut v: Vec<f64> = stats.iter().filter_map(|s| s.rtt).collect();
    median(&mut v)
}

/// Give the send suites the server's window (`send`) and the receive suites the
/// client's (`receive`), each over the path's round trip ([`path_rtt`]) and the
/// receiving side's time to take it in.
pub fn mark_windows(
    stats: &mut [SuiteStats],
    send: Option<ChannelWindow>,
    receive: Option<ChannelWindow>,
) {
    let Some(rtt) = path_rtt(stats).filter(|r| *r > 0.0) else {
        return;
    };
    for s in stats.iter_mut() {
        let bytes = match s.mode {
            Mode::Send => send,
            Mode::Receive => receive,
            _ => None,
        };
        let rate = s.figure.map(|f| f.mean).filter(|r| *r > 0.0);
        let busy = s.receiver_busy();
        s.path_window = bytes.map(|ChannelWindow { bytes, grows }| {
            let handling = match (busy, rate) {
                (Some(b), Some(r)) => bytes as f64 * b / r,
                _ => 0.0,
            };
            PathWindow {
                bytes,
                rtt,
                handling,
                grows,
            }
        });
    }
}

/// Give the send and receive suites the raw TCP rate of their path, where it was
/// measured (see [`SuiteStats::path_tcp`]).
pub fn mark_tcp(stats: &mut [SuiteStats], tcp: Option<f64>) {
    for s in stats.iter_mut().filter(|s| s.mode.is_transfer()) {
        s.path_tcp = tcp;
    }
}

/// A suite is far behind its path when another suite of the same mode, over the same
/// samples' path, moved more than twice as much (see [`SuiteStats::behind_the_path`]).
/// Compressed suites take no part: their rate is the data's, not the path's.
pub const BEHIND: f64 = 0.5;

fn mark_behind_the_path(stats: &mut [SuiteStats]) {
    for mode in [Mode::Send, Mode::Receive] {
        let best = stats
            .iter()
            .filter(|s| s.mode == mode && s.suite.compression.is_none())
            .filter_map(|s| s.figure.map(|f| f.mean))
            .fold(0.0, f64::max);
        let plain = |s: &&mut SuiteStats| s.mode == mode && s.suite.compression.is_none();
        for s in stats.iter_mut().filter(plain) {
            s.behind_the_path = s.figure.is_some_and(|f| f.mean < best * BEHIND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuTimes, FailureKind};
    use std::time::Duration;

    #[test]
    fn halves_summarize_as_one_pass_does() {
        let samples: Vec<Sample> = (0..300)
            .map(|i| {
                sample(
                    &format!("c{}", i % 7),
                    100 + (i * 37 % 50),
                    Outcome::Success,
                )
            })
            .collect();
        let groups = group(&samples);
        let one = stats_split_at(&groups, Scales::default(), usize::MAX);
        for split_at in [1, 299, 300] {
            let two = stats_split_at(&groups, Scales::default(), split_at);
            assert_eq!(format!("{one:?}"), format!("{two:?}"), "{split_at}");
        }
        assert_eq!(one.len(), 7);
    }

    /// Grouped in two halves, the samples fall into the same groups, in the same order
    /// of groups and of samples within each, as in one pass: suites in both halves, in
    /// the first or the second only.
    #[test]
    fn halves_group_as_one_pass_does() {
        let samples: Vec<Sample> = (0..60u64)
            .map(|i| {
                let cipher = match i {
                    0..20 => format!("first{}", i % 3),
                    20..40 => format!("both{}", i % 4),
                    _ => format!("second{}", i % 5),
                };
                sample(&cipher, 100 + i, Outcome::Success)
            })
            .chain((0..10).map(|i| sample(&format!("both{}", i % 4), 200 + i, Outcome::Success)))
            .collect();
        let all: Vec<&Sample> = samples.iter().collect();
        let shown = |g: &[(Mode, &Suite, Vec<&Sample>)]| {
            let each = |l: &Vec<&Sample>| l.iter().map(|s| s.wall).collect::<Vec<_>>();
            (g.iter()
                .map(|(m, s, l)| format!("{m:?} {s:?} {:?}", each(l))))
            .collect::<Vec<_>>()
        };
        let one = shown(&group_in_order(&all));
        assert_eq!(one.len(), 3 + 4 + 5);
        for split_at in [1, 35, 69, 70] {
            assert_eq!(shown(&group_split_at(&all, split_at)), one, "{split_at}");
        }
    }

    fn slow() -> Problem {
        Problem::Said {
            said: "slow".into(),
        }
    }

    fn sample(cipher: &str, transfer_ms: u64, outcome: Outcome) -> Sample {
        Sample {
            suite: Suite {
                cipher: Some(cipher.into()),
                ..Suite::default()
            },
            mode: Mode::Send,
            outcome,
            wall: Duration::from_millis(transfer_ms + 200),
            transfer: Some(Duration::from_millis(transfer_ms)),
            bytes: 100_000_000,
            files: None,
            window: None,
            rtt: None,
            client_cpu: Some(CpuTimes {
                user: Duration::from_millis(400),
                system: Duration::from_millis(100),
            }),
            negotiated: None,
            stream: None,
            client_window_cpu: None,
            server_cpu: None,
            phases: None,
            compression_factor: None,
            rekey: None,
            echoes: Vec::new(),
            echoes_ref: Vec::new(),
            typing: None,
        }
    }

    #[test]
    fn groups_by_suite_and_counts_outcomes() {
        let samples = vec![
            sample("a", 100, Outcome::Success),
            sample("b", 200, Outcome::Success),
            sample("a", 300, Outcome::Success),
            sample("a", 100, Outcome::failed(FailureKind::Timeout, slow())),
        ];
        let stats = aggregate(&samples);
        assert_eq!(stats.len(), 2);
        let a = &stats[0];
        assert_eq!((a.ok, a.failed, a.refused), (2, 1, false));
        let f = a.figure.unwrap();
        // 1e8 bytes in 0.1 s and 0.3 s.
        assert!((f.max - 1e9).abs() < 1.0 && (f.min - 1e8 / 0.3).abs() < 1.0);
        // The figure is the rate of their total, 2e8 bytes in 0.4 s (not 6.67e8, the
        // mean of the two rates).
        assert!((f.mean - 5e8).abs() < 1.0, "{}", f.mean);
        // 0.5 s of CPU per 1e8 bytes = 5 s per GB.
        assert!((a.client_cpu.unwrap().median - 5.0).abs() < 1e-9);
        assert_eq!(a.last_error, Some(slow()));
        assert_eq!(stats[1].ok, 1);
    }

    /// A sample of `cipher` whose two sides were `busy` of a core over its window.
    fn busy_sample(cipher: &str, transfer_ms: u64, busy: (f64, f64), zlib: bool) -> Sample {
        let mut s = sample(cipher, transfer_ms, Outcome::Success);
        s.suite.compression = zlib.then(|| "zlib@openssh.com".to_string());
        let t = Duration::from_millis(transfer_ms);
        let window = |b: f64| CpuWindow::of(b * t.as_secs_f64(), t, s.bytes);
        s.client_window_cpu = Some(window(busy.0));
        s.server_cpu = Some(window(busy.1));
        s
    }

    #[test]
    fn a_window_binds_when_few_round_trips_fit_in_it_and_the_receiver_has_room() {
        // Dropbear's 24 KiB over a 0.26 ms loopback round trip, the server 64% busy.
        let dropbear = PathWindow {
            bytes: 24576,
            rtt: 0.000255,
            handling: 24576.0 * 0.64 / 46.9e6,
            grows: false,
        };
        assert!(dropbear.binds(46.9e6, 0.64));
        // The same rate, the server nearly saturated: its CPU, not the window.
        assert!(!dropbear.binds(46.9e6, 0.82));
        // OpenSSH's 2 MiB on loopback holds twenty round trips of 900 MB/s.
        let openssh = PathWindow {
            bytes: 2 << 20,
            rtt: 0.0001,
            handling: (2 << 20) as f64 * 0.7 / 900e6,
            grows: false,
        };
        assert!(!openssh.binds(900e6, 0.7));
        // Far away, a window per round trip is the rate.
        let far = PathWindow {
            bytes: 2 << 20,
            rtt: 0.05,
            handling: 0.001,
            grows: false,
        };
        assert!(far.binds(40e6, 0.05));
        assert!(!far.binds(20e6, 0.05), "half the cap is the link's");
        assert!(
            far.binds(200e6, 0.05),
            "a fixed window's cap is only a floor here"
        );
        // HPN-SSH's window starts at 2 MiB and grows: it binds only what its start allows.
        let hpn = PathWindow { grows: true, ..far };
        assert!(hpn.binds(40e6, 0.05));
        assert!(!hpn.binds(200e6, 0.05), "it grew");
    }

    #[test]
    fn a_growing_window_that_grew_leaves_the_path_unknown() {
        let s = busy_sample("aes128-gcm@openssh.com", 2, (0.3, 0.3), false);
        let mut stats = aggregate([&s, &s, &s]);
        // A window that allows far more than moved: the link fell short of it.
        stats[0].path_window = Some(PathWindow {
            bytes: 1 << 40,
            rtt: 0.05,
            handling: 0.0,
            grows: false,
        });
        assert_eq!(stats[0].bound(), Some(Bound::Link));
        stats[0].path_window = stats[0]
            .path_window
            .map(|w| PathWindow { grows: true, ..w });
        assert_eq!(stats[0].bound(), Some(Bound::Network));
    }

    #[test]
    fn a_suite_far_behind_its_path_is_cpu_bound_though_no_side_reads_saturated() {
        let fast = busy_sample("aes128-gcm@openssh.com", 100, (0.6, 0.5), false);
        let slow = busy_sample("3des-cbc", 5000, (0.82, 0.78), false);
        let half = busy_sample("aes256-ctr", 180, (0.7, 0.4), false);
        let stats = aggregate([&fast, &slow, &half, &fast, &slow, &half]);
        let bound = |c: &str| {
            stats
                .iter()
                .find(|s| s.suite.cipher.as_deref() == Some(c))
                .unwrap()
                .bound()
        };
        assert_eq!(bound("aes128-gcm@openssh.com"), Some(Bound::Network));
        assert_eq!(
            bound("3des-cbc"),
            Some(Bound::Both),
            "within a tenth of a core"
        );
        // Slower, but not by half: the path may still be what limits it.
        assert_eq!(bound("aes256-ctr"), Some(Bound::Network));
        let lopsided = busy_sample("3des-cbc", 5000, (0.8, 0.3), false);
        let stats = aggregate([&fast, &lopsided]);
        assert_eq!(stats[1].bound(), Some(Bound::Client));
    }

    /// A download held back by a window whose round trip was not measured (dbclient's
    /// 24 KiB over 50 ms: 0.5 MB/s) is far behind raw TCP with both sides nearly idle:
    /// the path's, not CPU.
    #[test]
    fn a_suite_far_behind_its_path_with_idle_sides_is_not_cpu_bound() {
        let idle = busy_sample("aes128-ctr", 100, (0.02, 0.04), false);
        let mut stats = aggregate([&idle, &idle]);
        mark_tcp(&mut stats, Some(1e12));
        assert_eq!(stats[0].bound(), Some(Bound::Network));
    }

    #[test]
    fn rekeys_that_take_half_the_time_set_the_verdict_whatever_the_cpus() {
        let fast = busy_sample("aes128-gcm@openssh.com", 100, (0.9, 0.5), false);
        let mut stats = aggregate([&fast, &fast]);
        assert_eq!(stats[0].bound(), Some(Bound::Client));
        // 1e9 B/s with a 0.1 s rekey every 200 MB: half the time.
        stats[0].rekey = Some(Rekey {
            every: 200_000_000,
            seconds: 0.1,
            within: 0,
        });
        assert_eq!(stats[0].bound(), Some(Bound::Rekeying));
        stats[0].rekey = Some(Rekey {
            every: 250_000_000,
            ..stats[0].rekey.unwrap()
        });
        assert_eq!(stats[0].bound(), Some(Bound::Client), "two fifths");
    }

    #[test]
    fn a_suite_far_below_the_path_s_raw_tcp_rate_is_not_the_link_s() {
        // The fastest suite, 1e9 B/s, with neither side at the saturation mark.
        let fast = busy_sample("aes128-gcm@openssh.com", 100, (0.8, 0.83), false);
        let mut stats = aggregate([&fast, &fast]);
        assert_eq!(stats[0].bound(), Some(Bound::Network));
        // One raw TCP stream moved 4× as much along the same path: both CPUs, taking
        // turns with their neighbours, are what limits it.
        mark_tcp(&mut stats, Some(4e9));
        assert_eq!(stats[0].bound(), Some(Bound::Both));
        // Near the TCP rate the link may well be the limit.
        mark_tcp(&mut stats, Some(1.5e9));
        assert_eq!(stats[0].bound(), Some(Bound::Network));
        // A window that binds (its receiver has room) stays the window's, however fast
        // raw TCP is.
        stats[0].server_busy = Some(0.5);
        stats[0].path_window = Some(PathWindow {
            bytes: 50_000_000,
            rtt: 0.05,
            handling: 0.0,
            grows: false,
        });
        mark_tcp(&mut stats, Some(4e9));
        assert_eq!(stats[0].bound(), Some(Bound::Window));
    }

    #[test]
    fn a_compressed_suite_does_not_set_the_path_s_pace() {
        // Zeros compress: the "rate" says nothing about the link.
        let zlib = busy_sample("aes128-gcm@openssh.com", 10, (0.3, 0.3), true);
        let plain = busy_sample("aes128-gcm@openssh.com", 100, (0.3, 0.3), false);
        let stats = aggregate([&zlib, &plain]);
        assert!(stats.iter().all(|s| !s.behind_the_path));
        assert_eq!(stats[1].bound(), Some(Bound::Network));
    }
}
