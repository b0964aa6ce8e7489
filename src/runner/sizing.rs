//! How big each sample is: warm-ups calibrate, and counted samples are sized so that
//! their measured window lasts the sample time at the suite's estimated rate (or round
//! trip, for echo), after a ramp the connection needs to reach its steady rate.

use super::race::Ledger;
use super::{Abort, RunSettings, Runner};
use crate::analysis;
use crate::model::{Mode, Sample, SampleRequest};
use std::time::Duration;

/// Bytes of a warm-up transfer when the size is calibrated.
pub const WARMUP_BYTES: u64 = 8 << 20;
/// A calibrated transfer's ramp is at least this long (at most two sample times at the
/// suite's rate): a shorter one ends before sshd's buffers have grown to hold a
/// flow-control window, and a slow suite's window then pays for that growth.
pub const RAMP_MIN: u64 = 8 << 20;
/// A calibrated send's ramp also lasts at least this long at the suite's rate: a
/// connection's first tenths of a second move client → server slower than what follows
/// (bench/results/notebook.md, "A connection's first tenths").
pub const SEND_RAMP_TIME: Duration = Duration::from_millis(200);
/// A send warm-up with nothing to go on ramps over the minimum ramp, then streams for
/// [`warmup_window`].
pub const WARMUP_RAMP: u64 = RAMP_MIN;
/// A measured window spans at least this many of the path's round trips (see
/// `Runner::window_time`), up to [`MAX_WINDOW_TIME`].
pub const RTTS_PER_WINDOW: u32 = 20;
pub const MAX_WINDOW_TIME: Duration = Duration::from_secs(5);
/// Calibrated sizes stay within these bounds.
pub const MIN_BYTES: u64 = 1 << 20;
pub const MAX_BYTES: u64 = 4 << 30;
/// Echo: keystrokes of a warm-up session; counted sessions type enough to last about
/// the sample time, within these bounds (a session's round trips are stored one by one).
pub const ECHO_WARMUP: u64 = 100;
pub const ECHO_MIN: u64 = 100;
pub const ECHO_MAX: u64 = 5_000;
/// Echo: keystrokes at the start of each session that are echoed and checked, not timed.
pub const ECHO_UNTIMED: u64 = 10;
/// Further receive warm-ups, each sized from the previous one, while a warm-up is over
/// in less than half the sample time: a transfer of a few MiB is dominated by the stall
/// where ssh's first channel window runs out, and samples sized from it come out far
/// too small. (Send warm-ups stream for a time instead.)
pub const WARMUP_RETRIES: u32 = 3;

/// How long a send warm-up streams after its ramp: enough to tell the steady rate, which
/// is all a warm-up is for.
pub fn warmup_window(sample_time: Duration) -> Duration {
    sample_time / 2
}

/// A calibrated ramp's length against its window's: a third for send; a sixth for
/// receive, whose every byte passes through sshbench's drain (most of its own CPU) and
/// which reads the same after the shorter ramp (bench/results/notebook.md, "A receive's ramp").
fn ramp_share(mode: Mode) -> f64 {
    if mode == Mode::Receive { 6.0 } else { 3.0 }
}

/// Transfer size and ramp (the bytes before the measured window) for a suite at an
/// estimated steady `rate` (bytes/s): the window lasts `sample_time`; the ramp is a
/// [`ramp_share`] of that, but at least [`RAMP_MIN`] (or two sample times' worth, if
/// less), and for send at least [`SEND_RAMP_TIME`] at that rate.
pub fn calibrate(rate: Option<f64>, sample_time: Duration, mode: Mode) -> (u64, u64) {
    let Some(rate) = rate.filter(|r| *r > 0.0) else {
        return (WARMUP_BYTES, ramp_bytes(WARMUP_BYTES));
    };
    let window = rate * sample_time.as_secs_f64();
    let mut ramp = (window / ramp_share(mode)).max((RAMP_MIN as f64).min(2.0 * window));
    if mode == Mode::Send {
        ramp = ramp.max(rate * SEND_RAMP_TIME.as_secs_f64());
    }
    let rounded = ((window + ramp) as u64).div_ceil(64 << 10) * (64 << 10);
    let bytes = rounded.clamp(MIN_BYTES, MAX_BYTES);
    let ramp = if bytes < rounded {
        ramp_bytes(bytes)
    } else {
        ramp as u64
    };
    (bytes, ramp)
}

/// A measured window of the sample time, but at least [`RTTS_PER_WINDOW`] round trips
/// (`rtt`, seconds) of the path, up to [`MAX_WINDOW_TIME`].
pub fn window_for(sample_time: Duration, rtt: f64) -> Duration {
    let floor = Duration::from_secs_f64(rtt.max(0.0) * RTTS_PER_WINDOW as f64);
    sample_time.max(floor.min(MAX_WINDOW_TIME))
}

/// Keystrokes for an echo session at an estimated median round trip `rtt` (seconds).
pub fn calibrate_echo(rtt: Option<f64>, sample_time: Duration) -> u64 {
    match rtt.filter(|r| *r > 0.0) {
        None => ECHO_WARMUP,
        Some(r) => ((sample_time.as_secs_f64() / r) as u64).clamp(ECHO_MIN, ECHO_MAX),
    }
}

/// Bytes at the start of a transfer of a fixed size (`--size`, a warm-up's first size)
/// that ramp the connection up and are not measured.
pub fn ramp_bytes(bytes: u64) -> u64 {
    bytes / 4
}

/// What one sample moves: its bytes, the ramp before its window, and how long it may
/// stream instead (a send warm-up).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Size {
    bytes: u64,
    ramp: u64,
    until: Option<Duration>,
}

impl Size {
    const NONE: Size = Size {
        bytes: 0,
        ramp: 0,
        until: None,
    };

    /// A sized transfer, `(bytes, ramp)` as [`calibrate`] gives them.
    fn of((bytes, ramp): (u64, u64)) -> Size {
        Size {
            bytes,
            ramp,
            until: None,
        }
    }
}

/// What sizes a sample: the items measured so far and their state, each item's lead,
/// where the plan's items end, and the run's settings.
#[derive(Clone, Copy)]
pub(super) struct Sizer<'a> {
    pub ledger: Ledger<'a>,
    pub leads: &'a [Option<usize>],
    pub planned: usize,
    pub settings: &'a RunSettings,
}

impl Sizer<'_> {
    /// The best estimate of `item`'s figure: its counted samples' median, else its
    /// warm-up's, else its lead's. A transfer with fewer than two counted samples of its
    /// own takes the median of everything its cipher (and compression) has shown in this
    /// direction: one warm-up can read far low in a slow spell of the machine, and a
    /// cipher's suites differ by less than sizing cares about.
    fn estimate(&self, item: usize) -> Option<f64> {
        let (planned, st) = (&self.ledger.items[item], &self.ledger.state[item]);
        let own = match planned.mode {
            Mode::Echo => analysis::summarize(&st.rtts),
            _ => analysis::summarize(&st.figures),
        };
        if planned.mode.is_transfer() && own.as_ref().is_none_or(|s| s.n < 2) {
            let mut known: Vec<f64> = st.figures.clone();
            for other in self.siblings(item) {
                known.extend(&other.figures);
            }
            known.extend(st.warmup.as_ref().and_then(analysis::figure));
            known.extend(self.lead_estimate(item));
            return analysis::summarize(&known).map(|s| s.median);
        }
        own.map(|s| s.median)
            .or_else(|| st.warmup.as_ref().and_then(analysis::figure))
            .or_else(|| self.lead_estimate(item))
    }

    /// A transfer's bytes, ramp and time bound. A warm-up starts from the rate of a
    /// warmed-up sibling suite in this direction, else from a fixed small size; a send
    /// warm-up streams for a while after its ramp whatever the rate, so that one
    /// connection tells the steady rate.
    fn transfer_size(&self, item: usize, round: u32) -> Size {
        let mode = self.ledger.items[item].mode;
        let t = self.window_time(mode);
        let sibling = || {
            self.siblings(item)
                .find_map(|st| st.warmup.as_ref().and_then(Sample::throughput))
        };
        let streamed = |ramp| Size {
            bytes: MAX_BYTES,
            ramp,
            until: Some(warmup_window(t)),
        };
        match self.settings.size {
            Some(fixed) => Size::of((fixed, ramp_bytes(fixed))),
            // Over a slow path a send warm-up is sized as a counted sample: one that
            // streams for a time moves what ssh, the sockets and the link's queue hold
            // by then, seconds' worth (and one over in too little time warms up again).
            None if round == 0 && mode == Mode::Send => match sibling() {
                Some(rate) => streamed(calibrate(Some(rate), t, mode).1),
                None => match self.slow_path(item, t) {
                    Some(rate) => Size::of(calibrate(Some(rate), t, mode)),
                    None => streamed(WARMUP_RAMP),
                },
            },
            None => {
                let rate = if round == 0 {
                    sibling().or_else(|| self.slow_path(item, t))
                } else {
                    self.estimate(item)
                };
                Size::of(calibrate(rate, t, mode))
            }
        }
    }

    /// The fastest rate any warm-up in `item`'s direction (and compression) has shown,
    /// where even that is too slow for a ramp of [`RAMP_MIN`]: a slow link or server,
    /// over which an 8 MiB ramp would take seconds for every cipher's warm-up. A path
    /// that has shown a faster rate gives nothing, and warm-ups ramp as before.
    fn slow_path(&self, item: usize, t: Duration) -> Option<f64> {
        let planned = &self.ledger.items[item];
        let fastest = (self.ledger.items.iter().zip(self.ledger.state))
            .filter(|(p, _)| {
                p.mode == planned.mode && p.suite.compression == planned.suite.compression
            })
            .filter_map(|(_, st)| st.warmup.as_ref()?.throughput())
            .reduce(f64::max)?;
        (calibrate(Some(fastest), t, planned.mode).1 < RAMP_MIN).then_some(fastest)
    }

    /// How long a transfer's measured window lasts: the sample time, but at least
    /// [`RTTS_PER_WINDOW`] round trips of the path. A send window starts with a whole
    /// channel window of data let go at once (the client waited a round trip for the
    /// mark), so on a window-bound far link a window of n round trips reads n/(n-1) of
    /// the rate (bench/results/notebook.md, "Workloads and the delay relay").
    fn window_time(&self, mode: Mode) -> Duration {
        let mut rtts: Vec<f64> = (self.ledger.state.iter())
            .filter_map(|st| st.warmup.as_ref()?.rtt)
            .map(|d| d.as_secs_f64())
            .collect();
        let rtt = analysis::median(&mut rtts).unwrap_or(0.0);
        window_for(self.settings.sample_time.of(mode), rtt)
    }

    /// The run's echo reference: the first echo item of the plan not refused. Its
    /// sessions run over a connection of their own beside every counted echo session.
    fn echo_reference(&self) -> Option<crate::model::Suite> {
        (0..self.planned)
            .find(|&i| self.ledger.items[i].mode == Mode::Echo && !self.ledger.state[i].refused)
            .map(|i| self.ledger.items[i].suite.clone())
    }

    /// The request for one sample of `item` in `round`.
    pub(super) fn request(&self, item: usize, round: u32) -> SampleRequest {
        let planned = &self.ledger.items[item];
        let Size { bytes, ramp, until } = match planned.mode {
            Mode::Connect => Size::NONE,
            Mode::Echo => {
                // Beside a reference, a keystroke costs two round trips.
                let n = if round == 0 {
                    ECHO_WARMUP
                } else {
                    let pair = self.estimate(item).map(|rtt| rtt * 2.0);
                    calibrate_echo(pair, self.settings.sample_time.of(Mode::Echo))
                };
                Size::of((n + ECHO_UNTIMED, ECHO_UNTIMED))
            }
            // A typing sample's keys are its pattern's, whatever the machine.
            Mode::Typing => Size::of((crate::model::typing::TYPED_KEYS, 0)),
            Mode::Exec => Size::of((crate::model::exec::COMMANDS_PER_SAMPLE, 0)),
            Mode::Send | Mode::Receive => self.transfer_size(item, round),
            // A workload's data is its shape's, which the transport holds.
            _ => Size::NONE,
        };
        SampleRequest {
            suite: planned.suite.clone(),
            mode: planned.mode,
            bytes,
            ramp,
            timeout: self.settings.timeout,
            until,
            together: None,
            // Warm-ups only size: they type alone.
            reference: (planned.mode == Mode::Echo && round > 0)
                .then(|| self.echo_reference())
                .flatten(),
        }
    }
}

impl Runner<'_> {
    /// What sizes this run's samples, as measured so far.
    pub(super) fn sizer(&self) -> Sizer<'_> {
        Sizer {
            ledger: self.ledger(),
            leads: &self.leads,
            planned: self.planned,
            settings: self.settings,
        }
    }

    /// One sample of `item` in `round`, sized for it. A sized warm-up transfer that was
    /// over in a fraction of the sample time says little about the steady rate: warm up
    /// again with the size it suggests, a few times at most.
    pub(super) fn measure(&mut self, item: usize, round: u32) -> Result<Sample, Abort> {
        let mut request = self.sizer().request(item, round);
        let mut sample = self.attempt(item, round, &request)?;
        let sized_warmup = round == 0
            && request.mode.is_transfer()
            && request.until.is_none()
            && self.settings.size.is_none();
        if !sized_warmup {
            return Ok(sample);
        }
        let target = self.settings.sample_time.of(request.mode);
        for _ in 0..WARMUP_RETRIES {
            let Some(w) = sample.window.filter(|_| sample.outcome.is_success()) else {
                break;
            };
            if w.time * 2 >= target {
                break;
            }
            let (next, ramp) = calibrate(sample.throughput(), target, request.mode);
            if next < request.bytes * 3 / 2 {
                break;
            }
            request.bytes = next;
            request.ramp = ramp;
            sample = self.attempt(item, round, &request)?;
        }
        Ok(sample)
    }
}
