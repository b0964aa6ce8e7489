//! Executes a plan through a [`Transport`]: uncounted warm-up samples first, one per
//! cipher (which also calibrates the transfer size, repeated larger while it is too short
//! to tell, and sizes the first counted samples of every suite and mode of that cipher)
//! and one for the connect items, then interleaved rounds in a shuffled order, with
//! stop rules by rounds, precision and time budget, or a race (see [`race`]). After the
//! first pass the pairs its sums put first are measured as pairs too ([`checks`]). With
//! `--connections suite` the samples of one suite in a round share one connection
//! ([`group`]). It never prints and never runs samples in parallel (they would disturb
//! each other); progress goes to a callback and every sample to a [`Sink`] as soon as it
//! is measured.

pub mod checks;
mod group;
mod leads;
pub mod race;
mod retry;
mod sizing;
pub mod streams;

pub use leads::leads;
pub use retry::{ATTEMPTS, MAX_CONSECUTIVE_FAILURES};

use crate::analysis::figure;
use crate::measure::Transport;
use crate::model::{
    Connections, Failure, Mode, Outcome, Problem, RunOptions, Sample, SampleRequest, SampleTimes,
    Stop,
};
use crate::plan::{Plan, PlanItem};
use crate::sys::cancel::Cancel;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Settings that apply to every sample of a run.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub size: Option<u64>,
    pub sample_time: SampleTimes,
    pub rounds: u32,
    pub precision: Option<f64>,
    pub max_rounds: u32,
    pub budget: Option<Duration>,
    pub timeout: Duration,
    pub seed: u64,
    /// Race after the first `rounds` (see [`race`]).
    pub race: bool,
    /// Whether a suite's samples of one round share a connection.
    pub connections: Connections,
}

impl RunSettings {
    pub fn new(o: &RunOptions, seed: u64) -> Self {
        RunSettings {
            size: o.size,
            sample_time: o.sample_times(),
            rounds: o.rounds,
            precision: o.precision,
            max_rounds: o.max_rounds.max(o.rounds),
            budget: o.budget_s.map(Duration::from_secs_f64),
            timeout: Duration::from_secs(o.timeout_s),
            seed,
            race: o.race,
            connections: o.connections,
        }
    }
}

/// Where samples go (the store); an error stops the run.
pub trait Sink {
    /// A sample of the item stored at `slot` (see [`checks::slot`]).
    fn record(&mut self, slot: usize, round: u32, sample: &Sample) -> anyhow::Result<()>;
    /// A raced item gets no more rounds, for this reason.
    fn stopped(&mut self, slot: usize, stop: Stop) -> anyhow::Result<()>;
}

/// Progress events for whoever displays them.
#[derive(Debug)]
pub enum Event<'a> {
    Starting {
        round: u32,
        done: usize,
        total: usize,
        request: &'a SampleRequest,
    },
    Finished {
        round: u32,
        done: usize,
        total: usize,
        sample: &'a Sample,
        /// This attempt failed and will be retried.
        retrying: bool,
    },
    /// After the first pass: these summed pairs are measured as pairs.
    Checks { items: &'a [PlanItem] },
    /// The login runs no commands: these modes are given up, the `rest` go on.
    GivenUp {
        modes: &'a [Mode],
        rest: &'a [Mode],
        problem: &'a Problem,
    },
}

/// How a run ended without error.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    Complete,
    /// The time budget ran out.
    Budget,
}

/// Why a run stopped early (worded by the app, which ends the run for its user).
#[derive(Debug)]
pub enum Abort {
    Cancelled,
    /// A failure every further sample would repeat (authentication, host key, an
    /// unreachable server).
    Fatal(Failure),
    /// [`MAX_CONSECUTIVE_FAILURES`] samples in a row failed: the last one's failure.
    TooManyFailures(Failure),
    /// Storing a sample failed.
    Store(anyhow::Error),
}

/// Per-item state.
#[derive(Default)]
struct ItemState {
    warmup: Option<Sample>,
    refused: bool,
    figures: Vec<f64>,
    /// Connect: each figure's time outside the key exchange (see `analysis::connect`).
    rests: Vec<Option<f64>>,
    /// The figures of the first pass (rounds 1 to `--rounds`), which the checks are
    /// picked from, whatever a resumed run measured since, and their rests.
    first: Vec<f64>,
    first_rests: Vec<Option<f64>>,
    /// Each counted sample's round and wall time in seconds: what the race has spent on
    /// it and what its next raced sample costs.
    walls: Vec<(u32, f64)>,
    /// Echo: each counted session's own median round trip (its figure may be a ratio
    /// to the reference's), which sizes the next session.
    rtts: Vec<f64>,
    /// The last counted round it was measured in.
    last_round: u32,
}

/// The order of one round: all `items`, shuffled by the run's seed and the round number.
pub fn round_order(items: &[usize], seed: u64, round: u32) -> Vec<usize> {
    let mut order = items.to_vec();
    let mut rng =
        fastrand::Rng::with_seed(seed ^ (round as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    rng.shuffle(&mut order);
    order
}

struct Runner<'a> {
    /// The plan's items, then the checks once the first pass has picked them.
    items: Vec<PlanItem>,
    planned: usize,
    settings: &'a RunSettings,
    transport: &'a mut dyn Transport,
    cancel: &'a Cancel,
    sink: &'a mut dyn Sink,
    progress: &'a mut dyn FnMut(Event),
    /// Stored `(slot, round)`s.
    done: HashSet<(usize, u32)>,
    state: Vec<ItemState>,
    /// For each item, the earlier item of the same suite that warms it up (see [`leads`]).
    leads: Vec<Option<usize>>,
    /// What the samples so far say of failing (see [`retry::Streak`]).
    streak: retry::Streak,
    tally: Tally,
    /// Modes this login cannot serve (it runs no commands): given up, not measured.
    gone: Vec<Mode>,
    race: race::Race,
    check: checks::CheckState,
}

/// How far the run has come, for progress; and since when, for the user's `--budget`.
struct Tally {
    /// Samples stored.
    done: usize,
    /// Samples planned in all, as far as known.
    total: usize,
    started: Instant,
}

impl Tally {
    /// `left` more samples are planned from now on.
    fn left(&mut self, left: usize) {
        self.total = self.done + left;
    }
}

/// Run the plan. `previous` holds the samples an interrupted run already stored as
/// `(slot, round, sample)`; their slots are not measured again.
pub fn run(
    plan: &Plan,
    settings: &RunSettings,
    transport: &mut dyn Transport,
    cancel: &Cancel,
    sink: &mut dyn Sink,
    previous: &[(usize, u32, Sample)],
    progress: &mut dyn FnMut(Event),
) -> Result<End, Abort> {
    let n = plan.items.len();
    let mut r = Runner {
        items: plan.items.clone(),
        planned: n,
        settings,
        transport,
        cancel,
        sink,
        progress,
        done: HashSet::new(),
        state: (0..n).map(|_| ItemState::default()).collect(),
        leads: leads(plan),
        streak: Default::default(),
        tally: Tally {
            done: 0,
            total: n * (1 + settings.rounds as usize),
            started: Instant::now(),
        },
        gone: Vec::new(),
        race: Default::default(),
        check: Default::default(),
    };
    r.replay(previous);
    let end = r.rounds();
    r.stop_racing()?;
    end
}

impl Runner<'_> {
    /// Warm-ups, the first pass, its checks, and the rounds after it.
    fn rounds(&mut self) -> Result<End, Abort> {
        if let Some(end) = self.warm_up()? {
            return Ok(end);
        }
        for round in 1..=self.settings.max_rounds {
            let Some(items) = self.round_items(round)? else {
                break;
            };
            if let Some(end) = self.round(round, &items)? {
                return Ok(end);
            }
            if round == self.settings.rounds
                && let Some(end) = self.checks()?
            {
                return Ok(end);
            }
        }
        Ok(End::Complete)
    }

    /// Where item `i` is stored: the plan's items at their index, checks after the
    /// streams' slots.
    fn slot(&self, i: usize) -> usize {
        if i < self.planned {
            i
        } else {
            checks::slot(self.planned, i - self.planned)
        }
    }

    /// Take in what an interrupted run already stored; the checks' samples wait until
    /// the checks are known again.
    fn replay(&mut self, previous: &[(usize, u32, Sample)]) {
        for (slot, round, s) in previous {
            if *slot >= checks::slot(self.planned, 0) {
                self.check.pending.push((*slot, *round, s.clone()));
                continue;
            }
            if *slot >= self.planned {
                continue;
            }
            self.done.insert((*slot, *round));
            self.tally.done += 1;
            self.take_in(*slot, *round, s);
        }
        self.resume_without_commands(previous);
    }

    /// Round 0: warm-up and calibration, first of the items without a lead; then of
    /// those whose lead's warm-up gave nothing to go on (it failed, or was refused: then
    /// this item finds out for itself, and may be refused where its lead was not).
    fn warm_up(&mut self) -> Result<Option<End>, Abort> {
        let all: Vec<usize> = (0..self.items.len()).collect();
        let (first, followers): (Vec<usize>, Vec<usize>) =
            all.iter().partition(|&&i| self.leads[i].is_none());
        self.tally.total -= followers.len();
        if let Some(end) = self.round(0, &first)? {
            return Ok(Some(end));
        }
        let cold: Vec<usize> = followers
            .into_iter()
            .filter(|&i| self.done.contains(&(i, 0)) || !self.sizer().lead_warmed(i))
            .collect();
        self.tally.total += cold.len();
        self.round(0, &cold)
    }

    /// The items of a counted round: every item not refused in the fixed rounds; past
    /// them, those still racing or, with `--precision`, those whose interval is still
    /// wider than asked (`None`: no more rounds).
    fn round_items(&mut self, round: u32) -> Result<Option<Vec<usize>>, Abort> {
        let live: Vec<usize> = (0..self.items.len())
            .filter(|&i| !self.state[i].refused)
            .collect();
        if round <= self.settings.rounds {
            return Ok(Some(live));
        }
        if self.settings.race {
            return self.race_items(live);
        }
        Ok(self.imprecise(live))
    }

    /// With `--precision`, the items whose (moderated) interval is still wider than
    /// asked.
    fn imprecise(&mut self, live: Vec<usize>) -> Option<Vec<usize>> {
        let p = self.settings.precision?;
        let summaries = self
            .ledger()
            .summaries(&live, |st| (&st.figures, &st.rests));
        let imprecise: Vec<usize> = live
            .into_iter()
            .zip(summaries)
            .filter(|(_, s)| {
                s.figure
                    .and_then(|f| f.relative_ci())
                    .is_none_or(|rel| rel > p)
            })
            .map(|(i, _)| i)
            .collect();
        if imprecise.is_empty() {
            return None;
        }
        self.tally.left(imprecise.len());
        Some(imprecise)
    }

    fn take_in(&mut self, item: usize, round: u32, s: &Sample) {
        match &s.outcome {
            Outcome::Refused { .. } => self.state[item].refused = true,
            Outcome::Unavailable { .. } => {
                // No suite of this mode can run on this server: stop them all.
                let mode = self.items[item].mode;
                for (i, planned) in self.items.iter().enumerate() {
                    if planned.mode == mode {
                        self.state[i].refused = true;
                    }
                }
            }
            Outcome::Success => self.streak.succeeded_in(self.items[item].mode),
            Outcome::Failed { .. } => {}
        }
        let first_pass = round <= self.settings.rounds;
        let st = &mut self.state[item];
        if round == 0 {
            st.warmup = Some(s.clone());
            return;
        }
        st.last_round = st.last_round.max(round);
        st.walls.push((round, s.wall.as_secs_f64()));
        st.rtts.extend(crate::analysis::echo_median(s));
        if let Some(f) = figure(s) {
            let rest = crate::analysis::connect::rest(s);
            st.figures.push(f);
            st.rests.push(rest);
            if first_pass {
                st.first.push(f);
                st.first_rests.push(rest);
            }
        }
    }

    /// Whether the time budget ends the round before the next connection; takes what a
    /// raced round may spend of `group` (without the items whose mode's race budget is
    /// spent).
    fn admit(&mut self, round: u32, group: &mut Vec<usize>) -> Option<End> {
        if round > self.settings.rounds && self.race.racing.is_some() {
            let ledger = race::Ledger {
                items: &self.items,
                state: &self.state,
            };
            self.race.spend(&ledger, group);
        }
        let over = (self.settings.budget).is_some_and(|b| self.tally.started.elapsed() >= b);
        over.then_some(End::Budget)
    }

    /// Measure every item of one round, a connection's group at a time; `Some(End)` when
    /// the budget stopped it.
    fn round(&mut self, round: u32, items: &[usize]) -> Result<Option<End>, Abort> {
        let order = round_order(items, self.settings.seed, round);
        for mut group in self.connection_groups(&order, round) {
            group.retain(|&i| {
                !self.done.contains(&(self.slot(i), round))
                    && (round == 0 || !self.state[i].refused)
                    && !self.given_up(i)
            });
            if group.is_empty() {
                continue;
            }
            if self.cancel.is_cancelled() {
                return Err(Abort::Cancelled);
            }
            if let Some(end) = self.admit(round, &mut group) {
                return Ok(Some(end));
            }
            if group.is_empty() {
                continue;
            }
            for (item, sample) in self.measure_group(&group, round)? {
                self.store(item, round, &sample)?;
            }
        }
        Ok(None)
    }

    /// Item `i`'s mode was given up: this login cannot serve it (it runs no commands).
    fn given_up(&self, i: usize) -> bool {
        self.gone.contains(&self.items[i].mode)
    }

    /// Keep one sample: the sink, the state, the count of failures in a row.
    fn store(&mut self, item: usize, round: u32, sample: &Sample) -> Result<(), Abort> {
        let slot = self.slot(item);
        self.sink
            .record(slot, round, sample)
            .map_err(Abort::Store)?;
        self.done.insert((slot, round));
        self.tally.done += 1;
        self.take_in(item, round, sample);
        self.streak.after(&sample.outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::mock::Mock;
    use crate::model::{FailureKind, StopReason, Suite};
    use crate::plan::PlanItem;
    use sizing::{
        ECHO_MAX, ECHO_MIN, ECHO_UNTIMED, ECHO_WARMUP, MAX_BYTES, MIN_BYTES, RAMP_MIN,
        WARMUP_BYTES, WARMUP_RAMP, calibrate, calibrate_echo, ramp_bytes,
    };

    pub(super) fn plan(ciphers: &[&str]) -> Plan {
        Plan {
            items: ciphers
                .iter()
                .map(|c| PlanItem {
                    mode: Mode::Send,
                    suite: Suite {
                        cipher: Some(c.to_string()),
                        ..Suite::default()
                    },
                })
                .collect(),
            notes: vec![],
        }
    }

    pub(super) fn settings(rounds: u32) -> RunSettings {
        RunSettings {
            size: None,
            sample_time: SampleTimes::all(Duration::from_millis(250)),
            rounds,
            precision: None,
            max_rounds: 20,
            budget: None,
            timeout: Duration::from_secs(5),
            seed: 7,
            race: false,
            connections: Connections::PerSample,
        }
    }

    #[derive(Default)]
    pub(super) struct VecSink(
        pub(super) Vec<(usize, u32, Sample)>,
        pub(super) Vec<(usize, Stop)>,
    );
    impl Sink for VecSink {
        fn record(&mut self, item: usize, round: u32, s: &Sample) -> anyhow::Result<()> {
            self.0.push((item, round, s.clone()));
            Ok(())
        }
        fn stopped(&mut self, item: usize, stop: Stop) -> anyhow::Result<()> {
            self.1.push((item, stop));
            Ok(())
        }
    }

    pub(super) fn slots(sink: &VecSink) -> Vec<(usize, u32)> {
        sink.0.iter().map(|(i, r, _)| (*i, *r)).collect()
    }

    #[test]
    fn warmup_then_interleaved_rounds() {
        let mut sink = VecSink::default();
        let end = run(
            &plan(&["a", "b", "c"]),
            &settings(3),
            &mut Mock::default(),
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(end, End::Complete);
        let s = slots(&sink);
        assert_eq!(s.len(), 12);
        for round in 0..4 {
            let mut items: Vec<usize> = s.iter().filter(|x| x.1 == round).map(|x| x.0).collect();
            items.sort();
            assert_eq!(items, [0, 1, 2], "round {round}");
        }
        // Rounds are in order; send warm-ups stream for a while after their ramp and
        // move what fits, later rounds a calibrated size.
        assert!(s.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(
            sink.0
                .iter()
                .filter(|x| x.1 == 0)
                .all(|x| x.2.bytes > WARMUP_RAMP && x.2.bytes < MAX_BYTES)
        );
    }

    #[test]
    fn the_seed_fixes_the_order_and_rounds_differ() {
        let items: Vec<usize> = (0..20).collect();
        assert_eq!(round_order(&items, 1, 1), round_order(&items, 1, 1));
        assert_ne!(round_order(&items, 1, 1), round_order(&items, 1, 2));
        assert_ne!(round_order(&items, 1, 1), round_order(&items, 2, 1));
        let mut sorted = round_order(&items, 1, 1);
        sorted.sort();
        assert_eq!(sorted, items);
    }

    /// A mock sample of `req` whose measured part moves at `rate` (a time-bounded send
    /// streams for its time after the ramp).
    pub(super) fn at_rate(req: &SampleRequest, cancel: &Cancel, rate: f64) -> Sample {
        let mut s = Mock::default().measure(req, cancel);
        let bytes = match req.until {
            Some(t) => (rate * t.as_secs_f64()) as u64,
            None => req.bytes - req.ramp,
        };
        s.bytes = req.ramp + bytes;
        s.window = Some(crate::model::Window {
            bytes,
            time: Duration::from_secs_f64(bytes as f64 / rate),
        });
        s
    }

    /// Transfers below 16 MiB run at 200 MB/s (a connection's slow start), larger ones
    /// at 1 GB/s; a time-bounded send streams at 1 GB/s after its ramp.
    struct SlowStart;
    impl Transport for SlowStart {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let slow = req.until.is_none() && req.bytes < 16 << 20;
            at_rate(req, cancel, if slow { 200e6 } else { 1e9 })
        }
    }

    /// Every request of a run of `p` over `rounds` through `transport`:
    /// (round, item, bytes, ramp, until).
    fn requests_of(
        p: &Plan,
        rounds: u32,
        transport: &mut impl Transport,
    ) -> Vec<(u32, usize, u64, u64, Option<Duration>)> {
        requests_with(p, &settings(rounds), transport)
    }

    /// [`requests_of`] under `settings`.
    fn requests_with(
        p: &Plan,
        settings: &RunSettings,
        transport: &mut impl Transport,
    ) -> Vec<(u32, usize, u64, u64, Option<Duration>)> {
        let mut requests = Vec::new();
        run(
            p,
            settings,
            transport,
            &Cancel::new(),
            &mut VecSink::default(),
            &[],
            &mut |e| {
                if let Event::Starting { round, request, .. } = e {
                    let item = p
                        .items
                        .iter()
                        .position(|i| i.mode == request.mode && i.suite == request.suite);
                    requests.push((
                        round,
                        item.unwrap(),
                        request.bytes,
                        request.ramp,
                        request.until,
                    ));
                }
            },
        )
        .unwrap();
        requests
    }

    /// Round-0 requests through `SlowStart`: (item, bytes, ramp, until).
    fn warm_up_requests(p: &Plan) -> Vec<(usize, u64, u64, Option<Duration>)> {
        requests_of(p, 1, &mut SlowStart)
            .into_iter()
            .filter(|r| r.0 == 0)
            .map(|(_, item, bytes, ramp, until)| (item, bytes, ramp, until))
            .collect()
    }

    /// `plan`, measured in `mode`.
    pub(super) fn plan_in(mode: Mode, ciphers: &[&str]) -> Plan {
        let mut p = plan(ciphers);
        for i in &mut p.items {
            i.mode = mode;
        }
        p
    }

    #[test]
    fn a_send_warm_up_streams_for_half_the_sample_time_in_one_connection() {
        let warm = warm_up_requests(&plan(&["a", "b"]));
        let half = Some(Duration::from_millis(125));
        // One request per cipher, each over the fixed warm-up ramp.
        assert_eq!(warm.len(), 2, "{warm:?}");
        assert!(
            warm.iter()
                .all(|w| w.1 == MAX_BYTES && w.2 == WARMUP_RAMP && w.3 == half)
        );
    }

    /// A transport whose every transfer moves at one rate.
    struct Steady(f64);
    impl Transport for Steady {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            at_rate(req, cancel, self.0)
        }
    }

    /// Over a slow path (1 MB/s), only the first cipher's warm-up ramps over the fixed
    /// 8 MiB (8 s there) and streams for a time: the others are sized as a counted
    /// sample at the fastest rate seen, in either direction. Over a fast path every
    /// warm-up is as before.
    #[test]
    fn warm_ups_over_a_slow_path_ramp_for_its_rate_after_the_first() {
        let t = Duration::from_millis(250);
        // Each cipher's first warm-up (a fast receive warms up again, sized from it).
        let warm = |mode: Mode, rate: f64| -> Vec<(u64, u64)> {
            let p = plan_in(mode, &["a", "b", "c"]);
            let mut seen = Vec::new();
            (requests_of(&p, 1, &mut Steady(rate)).into_iter())
                .filter(|r| {
                    r.0 == 0 && !seen.contains(&r.1) && {
                        seen.push(r.1);
                        true
                    }
                })
                .map(|r| (r.2, r.3))
                .collect()
        };
        let slow = warm(Mode::Send, 1e6);
        assert_eq!(slow.len(), 3, "{slow:?}");
        assert_eq!(slow[0], (MAX_BYTES, WARMUP_RAMP));
        let sized = calibrate(Some(1e6), t, Mode::Send);
        assert!(sized.0 <= 1 << 20, "{sized:?}");
        assert!(slow[1..].iter().all(|w| *w == sized), "{slow:?}");
        let fast = warm(Mode::Send, 1e8);
        assert!(fast.iter().all(|w| w.1 == WARMUP_RAMP), "{fast:?}");
        let slow = warm(Mode::Receive, 1e6);
        assert_eq!(slow[0], (WARMUP_BYTES, ramp_bytes(WARMUP_BYTES)));
        let sized = calibrate(Some(1e6), t, Mode::Receive);
        assert!(sized.0 <= 1 << 20, "{sized:?}");
        assert!(slow[1..].iter().all(|w| *w == sized), "{slow:?}");
        let fast = warm(Mode::Receive, 1e8);
        assert!(fast.iter().all(|w| w.0 == WARMUP_BYTES), "{fast:?}");
    }

    /// Send's samples are sized for send's own sample time, receive's for the general
    /// one; a send warm-up streams for half of send's.
    #[test]
    fn send_and_receive_are_sized_for_their_own_sample_times() {
        let mut p = plan_in(Mode::Send, &["a", "a"]);
        p.items[1].mode = Mode::Receive;
        let mut s = settings(2);
        s.sample_time = SampleTimes {
            general: Duration::from_millis(200),
            send: Duration::from_millis(400),
            echo: Duration::from_millis(100),
        };
        let requests = requests_with(&p, &s, &mut SlowStart);
        let window = |item: usize| -> Vec<u64> {
            (requests.iter())
                .filter(|r| r.0 > 0 && r.1 == item)
                .map(|r| r.2 - r.3)
                .collect()
        };
        // 1 GB/s: 400 MB in a send window, 200 MB in a receive one (64 KiB steps).
        let near = |v: Vec<u64>, want: f64| {
            assert!(
                !v.is_empty() && v.iter().all(|&b| (b as f64 - want).abs() < 70_000.0),
                "{v:?}"
            );
        };
        near(window(0), 4e8);
        near(window(1), 2e8);
        let warm = requests.iter().find(|r| r.0 == 0 && r.1 == 0).unwrap();
        assert_eq!(warm.4, Some(Duration::from_millis(200)));
    }

    /// Cipher "a" with MACs m1 and m2, and cipher "b", in `mode`.
    fn two_macs(mode: Mode) -> Plan {
        let mut p = plan_in(mode, &["a", "a", "b"]);
        p.items[0].suite.mac = Some("m1".into());
        p.items[1].suite.mac = Some("m2".into());
        p
    }

    #[test]
    fn the_suites_of_a_cipher_share_one_warm_up() {
        let requests = requests_of(&two_macs(Mode::Send), 2, &mut SlowStart);
        let warm: Vec<usize> = requests.iter().filter(|r| r.0 == 0).map(|r| r.1).collect();
        assert_eq!(warm, [0, 2], "{requests:?}");
        // The second MAC's first counted sample is sized from the first's warm-up (its
        // stream ran at 1 GB/s), like the first MAC's own.
        let (at_1g, _) = calibrate(Some(1e9), Duration::from_millis(250), Mode::Send);
        let round_1: Vec<(usize, u64)> = requests
            .iter()
            .filter(|r| r.0 == 1 && r.1 < 2)
            .map(|r| (r.1, r.2))
            .collect();
        assert_eq!(round_1.len(), 2, "{requests:?}");
        assert!(round_1.iter().all(|r| r.1 == at_1g), "{round_1:?}");
    }

    /// Warm-ups (time-bounded sends) read 50 MB/s, counted samples 1 GB/s.
    struct SlowWarmUp;
    impl Transport for SlowWarmUp {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            at_rate(req, cancel, if req.until.is_some() { 50e6 } else { 1e9 })
        }
    }

    #[test]
    fn a_warm_up_that_read_low_sizes_only_the_first_counted_samples() {
        let mut p = plan(&["a"; 5]);
        for (i, item) in p.items.iter_mut().enumerate() {
            item.suite.mac = Some(format!("m{i}"));
        }
        let requests = requests_of(&p, 2, &mut SlowWarmUp);
        let at = |rate| calibrate(Some(rate), Duration::from_millis(250), Mode::Send).0;
        let sizes = |round| -> Vec<u64> {
            requests
                .iter()
                .filter(|r| r.0 == round)
                .map(|r| r.2)
                .collect()
        };
        // Round 1, in its shuffled order: the first suite knows only the warm-up; the
        // second the median of it and the first's 1 GB/s; from the third on the low
        // warm-up is outvoted.
        let mut expected = vec![at(50e6), at(525e6)];
        expected.extend([at(1e9); 3]);
        assert_eq!(sizes(1), expected, "{requests:?}");
        // Round 2: every suite has one figure of its own, and its siblings agree.
        assert_eq!(sizes(2), [at(1e9); 5], "{requests:?}");
    }

    /// The mock, refusing every suite with MAC "m1".
    struct RefusingM1;
    impl Transport for RefusingM1 {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = SlowStart.measure(req, cancel);
            if req.suite.mac.as_deref() == Some("m1") {
                s.outcome = Outcome::refused("no matching MAC found".into());
            }
            s
        }
    }

    #[test]
    fn a_warm_up_starts_from_a_suite_of_the_same_cipher() {
        // The cipher's lead (MAC m1) is refused: its other suites warm up themselves,
        // the first from scratch (three receive transfers), the next from its rate.
        let mut p = two_macs(Mode::Receive);
        p.items.insert(2, p.items[1].clone());
        p.items[2].suite.mac = Some("m3".into());
        let requests = requests_of(&p, 1, &mut RefusingM1);
        let sizes = |item| -> Vec<u64> {
            requests
                .iter()
                .filter(|r| r.0 == 0 && r.1 == item)
                .map(|r| r.2)
                .collect()
        };
        let at = |rate| calibrate(Some(rate), Duration::from_millis(250), Mode::Receive).0;
        let scratch = vec![WARMUP_BYTES, at(200e6), at(1e9)];
        assert_eq!(sizes(0), [WARMUP_BYTES]);
        assert_eq!(sizes(3), scratch);
        // Items 1 and 2 are shuffled: one starts from scratch, the other from its rate.
        let (mut a, mut b) = (sizes(1), sizes(2));
        if a.len() < b.len() {
            std::mem::swap(&mut a, &mut b);
        }
        assert_eq!((a, b), (scratch, vec![at(1e9)]), "{requests:?}");
        // Round 1 measures only what was not refused.
        let counted: Vec<usize> = requests.iter().filter(|r| r.0 == 1).map(|r| r.1).collect();
        assert!(!counted.contains(&0) && counted.len() == 3, "{requests:?}");
    }

    #[test]
    fn connect_items_share_one_warm_up_unless_it_fails() {
        let mut p = plan_in(Mode::Connect, &["a", "b", "c"]);
        let warm = |p: &Plan, mock: &mut Mock| -> Vec<usize> {
            requests_of(p, 1, mock)
                .into_iter()
                .filter(|r| r.0 == 0)
                .map(|r| r.1)
                .collect()
        };
        assert_eq!(warm(&p, &mut Mock::default()), [0]);
        // Refused: the others find out for themselves (in round 0, uncounted).
        let mut refusing = Mock {
            refuse: vec!["a".into()],
            ..Mock::default()
        };
        let cold = warm(&p, &mut refusing);
        assert_eq!(cold.len(), 3, "{cold:?}");
        assert_eq!(cold[0], 0);
        // A session item of the same cipher is not led by a connect item.
        p.items.push(PlanItem {
            mode: Mode::Send,
            ..p.items[1].clone()
        });
        assert_eq!(leads(&p), [None, Some(0), Some(0), None]);
    }

    /// A slow suite: 20 MB/s whatever the size.
    struct Slow;
    impl Transport for Slow {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            at_rate(req, cancel, 20e6)
        }
    }

    #[test]
    fn a_slow_suite_ramps_over_at_least_ramp_min() {
        let requests = requests_of(&plan(&["a"]), 2, &mut Slow);
        // 20 MB/s for 250 ms: 5 MB measured after 8 MiB, not after a quarter (1.7 MB).
        let counted: Vec<_> = requests.iter().filter(|r| r.0 > 0).collect();
        assert_eq!(counted.len(), 2, "{requests:?}");
        for (_, _, bytes, ramp, _) in counted {
            assert_eq!(*ramp, RAMP_MIN);
            assert!(
                (5_000_000..5_000_000 + (64 << 10)).contains(&(bytes - ramp)),
                "{bytes}"
            );
        }
    }

    #[test]
    fn a_warm_up_too_short_to_tell_is_repeated_larger() {
        let mut sink = VecSink::default();
        let mut sizes: Vec<(u32, u64)> = Vec::new();
        run(
            &plan_in(Mode::Receive, &["a"]),
            &settings(1),
            &mut SlowStart,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |e| {
                if let Event::Starting { round, request, .. } = e {
                    sizes.push((round, request.bytes));
                }
            },
        )
        .unwrap();
        let warm = |rate| calibrate(Some(rate), Duration::from_millis(250), Mode::Receive).0;
        let at_1g = warm(1e9);
        assert_eq!(
            sizes,
            [
                (0, WARMUP_BYTES),
                (0, warm(200e6)),
                (0, warm(1e9)),
                (1, at_1g),
            ]
        );
        // One warm-up is stored: the last.
        assert_eq!(slots(&sink), [(0, 0), (0, 1)]);
        assert_eq!(sink.0[0].2.bytes, warm(1e9));
    }

    /// Suite "a" in send, receive and echo, and suite "b" in receive only.
    fn three_modes() -> Plan {
        let mut p = plan(&["a"]);
        for mode in [Mode::Receive, Mode::Echo] {
            p.items.push(PlanItem {
                mode,
                ..p.items[0].clone()
            });
        }
        p.items.push(PlanItem {
            mode: Mode::Receive,
            suite: Suite {
                cipher: Some("b".into()),
                ..Suite::default()
            },
        });
        p
    }

    #[test]
    fn a_suite_in_several_modes_is_led_by_its_first_item() {
        let mut p = three_modes();
        p.items.insert(
            0,
            PlanItem {
                mode: Mode::Connect,
                suite: p.items[0].suite.clone(),
            },
        );
        assert_eq!(leads(&p), [None, None, Some(1), Some(1), None]);
        // Another MAC of cipher "a", in receive: led by the cipher's first item too;
        // compressed, it is a suite of its own.
        let mut other = p.items[2].clone();
        other.suite.mac = Some("m2".into());
        p.items.push(other.clone());
        other.suite.compression = Some("zlib@openssh.com".into());
        p.items.push(other);
        assert_eq!(
            leads(&p),
            [None, None, Some(1), Some(1), None, Some(1), None]
        );
    }

    #[test]
    fn a_suite_measured_in_several_modes_is_warmed_up_once() {
        let p = three_modes();
        let mut sink = VecSink::default();
        let mut requests: Vec<(usize, u32, u64)> = Vec::new();
        let mut totals = Vec::new();
        run(
            &p,
            &settings(2),
            &mut SlowStart,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |e| {
                if let Event::Starting {
                    round,
                    request,
                    total,
                    ..
                } = e
                {
                    let item = p
                        .items
                        .iter()
                        .position(|i| i.mode == request.mode && i.suite == request.suite);
                    requests.push((item.unwrap(), round, request.bytes));
                    totals.push(total);
                }
            },
        )
        .unwrap();
        // Round 0: the send of "a" (streaming for a while) and the receive of "b" (three
        // transfers to reach the steady rate), nothing else.
        let warm: Vec<usize> = requests.iter().filter(|r| r.1 == 0).map(|r| r.0).collect();
        assert_eq!(warm.iter().filter(|&&i| i == 0).count(), 1, "{requests:?}");
        assert_eq!(warm.iter().filter(|&&i| i == 3).count(), 3, "{requests:?}");
        assert_eq!(warm.len(), 4);
        // The receive of "a" is sized from its send's warm-up from the first round on.
        let (at_1g, _) = calibrate(Some(1e9), Duration::from_millis(250), Mode::Receive);
        let receive_a: Vec<u64> = requests.iter().filter(|r| r.0 == 1).map(|r| r.2).collect();
        assert_eq!(receive_a, [at_1g, at_1g]);
        // Two stored warm-ups and 4 × 2 counted samples; progress counted just as many.
        assert_eq!(slots(&sink).iter().filter(|s| s.1 == 0).count(), 2);
        assert_eq!(sink.0.len(), 10);
        assert!(totals.iter().all(|&t| t == 10), "{totals:?}");
    }

    /// Echo types for its own sample time, which here differs from the other modes'.
    #[test]
    fn echo_is_sized_from_its_leads_round_trip() {
        let p = three_modes();
        let mut requests = Vec::new();
        let mut warm = Pinging(Mock::default());
        let mut s = settings(1);
        s.sample_time.echo = Duration::from_millis(125);
        run(
            &p,
            &s,
            &mut warm,
            &Cancel::new(),
            &mut VecSink::default(),
            &[],
            &mut |e| {
                if let Event::Starting { request, round, .. } = e
                    && request.mode == Mode::Echo
                {
                    requests.push((round, request.bytes));
                }
            },
        )
        .unwrap();
        // A 250 µs ping, and as long again for the reference's keystroke: 250
        // keystrokes fill echo's 125 ms.
        assert_eq!(requests, [(1, 250 + ECHO_UNTIMED)]);
    }

    #[test]
    fn echo_led_by_an_echo_warm_up_is_sized_from_its_median() {
        let p = two_macs(Mode::Echo);
        let requests = requests_of(&p, 1, &mut Mock::default());
        let of_m2: Vec<(u32, u64)> = requests
            .iter()
            .filter(|r| r.1 == 1)
            .map(|r| (r.0, r.2))
            .collect();
        // The lead's warm-up session again (the mock is deterministic): its median.
        let lead = Mock::default().measure(
            &SampleRequest {
                suite: p.items[0].suite.clone(),
                mode: Mode::Echo,
                bytes: ECHO_WARMUP + ECHO_UNTIMED,
                ramp: ECHO_UNTIMED,
                timeout: Duration::from_secs(5),
                until: None,
                together: None,
                reference: None,
            },
            &Cancel::new(),
        );
        let median = crate::analysis::echo_median(&lead);
        assert!(median.is_some());
        let t = Duration::from_millis(250);
        let pair = median.map(|m| m * 2.0);
        assert_eq!(of_m2, [(1, calibrate_echo(pair, t) + ECHO_UNTIMED)]);
        assert_ne!(of_m2[0].1, ECHO_WARMUP + ECHO_UNTIMED);
    }

    /// The mock, with a 250 µs ping round trip in every sample.
    struct Pinging(Mock);
    impl Transport for Pinging {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = self.0.measure(req, cancel);
            s.rtt = Some(Duration::from_micros(250));
            s
        }
    }

    #[test]
    fn items_whose_lead_was_refused_find_out_for_themselves() {
        let p = three_modes();
        let mut sink = VecSink::default();
        // "a" is refused in its lead's warm-up: the receive and echo of "a" warm up
        // themselves (and are refused too); no later round measures "a" again.
        run(
            &p,
            &settings(3),
            &mut Mock {
                refuse: vec!["a".into()],
                ..Mock::default()
            },
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        )
        .unwrap();
        let a: Vec<(usize, u32)> = slots(&sink).into_iter().filter(|s| s.0 < 3).collect();
        assert_eq!(a.len(), 3, "{a:?}");
        assert!(a.iter().all(|s| s.1 == 0));
    }

    #[test]
    fn resume_does_not_repeat_a_followers_own_warm_up() {
        let p = three_modes();
        let mut mock = Mock {
            refuse: vec!["a".into()],
            ..Mock::default()
        };
        let mut first = VecSink::default();
        run(
            &p,
            &settings(1),
            &mut mock,
            &Cancel::new(),
            &mut first,
            &[],
            &mut |_| {},
        )
        .unwrap();
        let mut second = VecSink::default();
        let mut totals = Vec::new();
        run(
            &p,
            &settings(1),
            &mut mock,
            &Cancel::new(),
            &mut second,
            &first.0,
            &mut |e| {
                if let Event::Starting { total, .. } = e {
                    totals.push(total);
                }
            },
        )
        .unwrap();
        assert!(second.0.is_empty(), "{:?}", slots(&second));
        assert!(totals.is_empty());
    }

    #[test]
    fn echo_sessions_last_about_the_sample_time() {
        // 100 µs round trips: 2000 keystrokes fill 200 ms.
        assert_eq!(
            calibrate_echo(Some(100e-6), Duration::from_millis(200)),
            2000
        );
        assert_eq!(
            calibrate_echo(None, Duration::from_millis(200)),
            ECHO_WARMUP
        );
        // A 300 ms satellite link still types the minimum; loopback is capped.
        assert_eq!(
            calibrate_echo(Some(0.3), Duration::from_millis(200)),
            ECHO_MIN
        );
        assert_eq!(calibrate_echo(Some(1e-9), Duration::from_secs(1)), ECHO_MAX);
    }

    #[test]
    fn echo_requests_type_untimed_keystrokes_first() {
        let mut p = plan(&["a"]);
        p.items[0].mode = Mode::Echo;
        let mut sink = VecSink::default();
        let mut requests = Vec::new();
        run(
            &p,
            &settings(2),
            &mut Mock::default(),
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |e| {
                if let Event::Starting { request, .. } = e {
                    let beside = request.reference.as_ref().map(Suite::label);
                    requests.push((request.bytes, request.ramp, beside));
                }
            },
        )
        .unwrap();
        // The warm-up types alone; counted sessions beside the reference (the plan's
        // first echo suite), sized for two round trips per keystroke.
        assert_eq!(
            requests[0],
            (ECHO_WARMUP + ECHO_UNTIMED, ECHO_UNTIMED, None)
        );
        let rtt = crate::analysis::echo_median(&sink.0[0].2).unwrap();
        let n = calibrate_echo(Some(rtt * 2.0), Duration::from_millis(250));
        assert_eq!(
            requests[1],
            (n + ECHO_UNTIMED, ECHO_UNTIMED, Some("a".into()))
        );
        assert_eq!(sink.0[1].2.echoes.len() as u64, n);
        assert_eq!(sink.0[1].2.echoes_ref.len() as u64, n);
        // The next session is sized from the first's own round trip, not its ratio.
        let own = crate::analysis::echo_median(&sink.0[1].2).unwrap();
        let next = calibrate_echo(Some(own * 2.0), Duration::from_millis(250));
        assert_eq!(requests[2].0, next + ECHO_UNTIMED);
    }

    #[test]
    fn calibration_targets_the_sample_time() {
        let t = Duration::from_millis(300);
        // 1 GB/s for 300 ms after a ramp of a sixth of that: 350 MB.
        let (size, ramp) = calibrate(Some(1e9), t, Mode::Receive);
        assert!((size as f64 - 3.5e8).abs() < 70_000.0, "{size}");
        assert_eq!(size % (64 << 10), 0);
        assert!((ramp as f64 - 5e7).abs() < 1.0, "{ramp}");
        // 100 MB/s: a sixth (5 MB) is shorter than RAMP_MIN.
        let (size, ramp) = calibrate(Some(1e8), t, Mode::Receive);
        assert_eq!(ramp, RAMP_MIN);
        assert!((size - ramp) as f64 >= 3e7 && size - ramp < 30_000_000 + (64 << 10));
        // 20 MB/s: 6 MB in the window, after a ramp of at least RAMP_MIN.
        let (size, ramp) = calibrate(Some(2e7), t, Mode::Receive);
        assert_eq!(ramp, RAMP_MIN);
        assert!((size - ramp) as f64 >= 6e6 && size - ramp < 6_000_000 + (64 << 10));
        // 1 MB/s: the ramp is two sample times' worth, not 8 MiB (8 s).
        let (size, ramp) = calibrate(Some(1e6), t, Mode::Receive);
        assert_eq!((size, ramp), (MIN_BYTES, 600_000));
        assert_eq!(
            calibrate(None, Duration::from_secs(1), Mode::Receive),
            (WARMUP_BYTES, WARMUP_BYTES / 4)
        );
        assert_eq!(
            calibrate(Some(1.0), Duration::from_millis(250), Mode::Receive).0,
            MIN_BYTES
        );
        assert_eq!(
            calibrate(Some(1e12), Duration::from_secs(10), Mode::Receive),
            (MAX_BYTES, MAX_BYTES / 4)
        );
        assert_eq!(ramp_bytes(100), 25);
    }

    #[test]
    fn a_send_ramps_for_a_while_before_its_window() {
        let t = Duration::from_millis(200);
        // 1 GB/s: a receive ramps for a sixth of the window (33 MB), a send for
        // SEND_RAMP_TIME (200 MB); both windows hold 200 MB.
        let (size, ramp) = calibrate(Some(1e9), t, Mode::Receive);
        assert!((ramp as f64 - 2e8 / 6.0).abs() < 1.0, "{ramp}");
        assert!((size - ramp) as f64 >= 2e8 && size - ramp < 200_000_000 + (64 << 10));
        let (size, ramp) = calibrate(Some(1e9), t, Mode::Send);
        assert_eq!(ramp, 200_000_000);
        assert!((size - ramp) as f64 >= 2e8 && size - ramp < 200_000_000 + (64 << 10));
        // 20 MB/s: RAMP_MIN is longer than 0.2 s (4 MB) there; both directions alike.
        assert_eq!(
            calibrate(Some(2e7), t, Mode::Send),
            calibrate(Some(2e7), t, Mode::Receive)
        );
        // A long sample time's third is longer than SEND_RAMP_TIME: a send ramps over
        // it, a receive over a sixth.
        let long = Duration::from_secs(2);
        assert_eq!(calibrate(Some(1e9), long, Mode::Send).1, 666_666_666);
        assert_eq!(calibrate(Some(1e9), long, Mode::Receive).1, 333_333_333);
    }

    #[test]
    fn resume_skips_finished_slots() {
        let mut first = VecSink::default();
        run(
            &plan(&["a", "b"]),
            &settings(2),
            &mut Mock::default(),
            &Cancel::new(),
            &mut first,
            &[],
            &mut |_| {},
        )
        .unwrap();
        let previous: Vec<_> = first.0[..3].to_vec();
        let mut second = VecSink::default();
        run(
            &plan(&["a", "b"]),
            &settings(2),
            &mut Mock::default(),
            &Cancel::new(),
            &mut second,
            &previous,
            &mut |_| {},
        )
        .unwrap();
        let mut all = slots(&first)[..3].to_vec();
        all.extend(slots(&second));
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "a slot was measured twice");
        assert_eq!(all.len(), 6);
    }

    #[test]
    fn refused_suites_are_not_retried_in_later_rounds() {
        let mut sink = VecSink::default();
        let mut mock = Mock {
            refuse: vec!["b".into()],
            ..Mock::default()
        };
        run(
            &plan(&["a", "b"]),
            &settings(3),
            &mut mock,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(sink.0.iter().filter(|x| x.0 == 1).count(), 1);
    }

    /// Suite `noisy` alternates between two rates from one of its samples to the next;
    /// every other suite moves at one steady rate.
    struct Noisy {
        calls: u32,
    }
    impl Transport for Noisy {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let noisy = req.suite.cipher.as_deref() == Some("noisy");
            self.calls += u32::from(noisy);
            let rate = match (noisy, self.calls % 2) {
                (true, 0) => 100e6,
                (true, _) => 300e6,
                (false, _) => 200e6,
            };
            at_rate(req, cancel, rate)
        }
    }

    /// Counted samples per item of a run of `noisy` and `steady`.
    fn counted_with(precision: Option<f64>, max_rounds: u32) -> (usize, usize) {
        let mut sink = VecSink::default();
        let mut s = settings(2);
        s.precision = precision;
        s.max_rounds = max_rounds;
        run(
            &plan(&["noisy", "steady"]),
            &s,
            &mut Noisy { calls: 0 },
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        )
        .unwrap();
        let count = |item| {
            sink.0
                .iter()
                .filter(|(i, r, _)| *i == item && *r > 0)
                .count()
        };
        (count(0), count(1))
    }

    #[test]
    fn precision_adds_rounds_until_tight() {
        // Without --precision, the fixed rounds only.
        assert_eq!(counted_with(None, 8), (2, 2));
        // With it, the noisy suite (a coefficient of variation near 50%) gets rounds
        // until --max-rounds; the steady one (interval 0) stops at the fixed rounds.
        assert_eq!(counted_with(Some(0.05), 8), (8, 2));
        // A loose target is met by the noisy suite after a few more rounds.
        let (noisy, steady) = counted_with(Some(0.5), 20);
        assert!((3..20).contains(&noisy), "{noisy}");
        assert_eq!(steady, 2);
    }

    /// Each suite's rate by name, alternating around it from one of its samples to the
    /// next: `fast` 1000 ± 10 MB/s, `twin` the same, `close` 850 ± 100, `wide` 700 ± 300,
    /// `wobble` 1000 ± 300 (never told from `fast`, nor equal to it), `farN` N × 10 steady;
    /// every sample of `broken` fails. The spread is even in seconds per byte, so the
    /// rate of a pair's total is the named one.
    #[derive(Default)]
    struct Spread(std::collections::HashMap<String, u32>);
    impl Transport for Spread {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let name = req.suite.cipher.clone().unwrap_or_default();
            if name == "broken" {
                let mut s = Mock::default().measure(req, cancel);
                let died = Problem::quote("the remote command died");
                s.outcome = Outcome::failed(FailureKind::Remote, died);
                return s;
            }
            let calls = self.0.entry(name.clone()).or_default();
            *calls += 1;
            let sign = if *calls % 2 == 0 { 1.0 } else { -1.0 };
            let around = |rate: f64, spread: f64| rate / (1.0 - sign * spread / rate);
            let rate = match name.as_str() {
                "fast" | "twin" => around(1000e6, 10e6),
                "close" => around(850e6, 100e6),
                "wide" => around(700e6, 300e6),
                "wobble" => around(1000e6, 300e6),
                far => far[3..].parse::<f64>().unwrap() * 10e6,
            };
            at_rate(req, cancel, rate)
        }
    }

    /// A raced run of `names` through [`Spread`]: its sink.
    fn raced(names: &[&str], previous: &[(usize, u32, Sample)]) -> VecSink {
        raced_through(&plan(names), &mut Spread::default(), previous)
    }

    /// A raced run of `p` (3 rounds first) through `transport`: its sink.
    fn raced_through(
        p: &Plan,
        transport: &mut dyn Transport,
        previous: &[(usize, u32, Sample)],
    ) -> VecSink {
        let mut sink = VecSink::default();
        let mut s = settings(3);
        s.race = true;
        let cancel = Cancel::new();
        run(p, &s, transport, &cancel, &mut sink, previous, &mut |_| {}).unwrap();
        sink
    }

    fn rounds_of(sink: &VecSink, item: usize) -> Vec<u32> {
        let rounds = sink.0.iter().filter(|s| s.0 == item && s.1 > 0);
        rounds.map(|s| s.1).collect()
    }

    #[test]
    fn a_race_drops_the_slow_and_measures_the_close_until_separated() {
        let names = [
            "fast", "close", "far10", "far20", "far30", "far40", "far50", "far60",
        ];
        let sink = raced(&names, &[]);
        let stop = |item: usize| sink.1.iter().find(|s| s.0 == item).map(|s| s.1);
        for (far, name) in names.iter().enumerate().skip(2) {
            assert_eq!(rounds_of(&sink, far), [1, 2, 3], "{name}");
            let dropped = Stop {
                reason: StopReason::Dropped,
                round: 3,
            };
            assert_eq!(stop(far), Some(dropped));
        }
        // 850 ± 100 against 1000 ± 10 (each warm-up took the first of its rates):
        // 870 ± 136 still overlaps 1002 ± 14 after 5 rounds, 850 ± 115 is apart after 6.
        assert_eq!(rounds_of(&sink, 1), [1, 2, 3, 4, 5, 6]);
        assert_eq!(rounds_of(&sink, 0), [1, 2, 3, 4, 5, 6]);
        let separated = Stop {
            reason: StopReason::Separated,
            round: 6,
        };
        assert_eq!((stop(0), stop(1)), (Some(separated), Some(separated)));
        assert_eq!(sink.1.len(), names.len(), "one stop per item");
    }

    /// Connections whose key exchange takes about 10 ms (`a`) or 14 ms (`b`), behind a
    /// rest of 140 ms, or 180 ms every other connection (a delayed ACK).
    #[derive(Default)]
    struct Acks(u32);
    impl Transport for Acks {
        fn measure(&mut self, req: &SampleRequest, _: &Cancel) -> Sample {
            self.0 += 1;
            let base = if req.suite.cipher.as_deref() == Some("a") {
                0.010
            } else {
                0.014
            };
            let kex = base + 0.0002 * f64::from(self.0 % 3);
            let rest = if self.0 % 2 == 0 { 0.140 } else { 0.180 };
            let mut s = Sample::new(req.suite.clone(), Mode::Connect, Outcome::Success);
            s.wall = Duration::from_secs_f64(kex + rest);
            s.phases = Some(crate::model::Phases {
                kex,
                ..Default::default()
            });
            s
        }
    }

    #[test]
    fn a_connect_race_sets_each_connection_against_the_common_rest() {
        // With their own rests, a's and b's times tie (±40 ms of delayed ACKs); with the
        // common rest, their key exchanges are apart after the first pass.
        let p = plan_in(Mode::Connect, &["a", "b"]);
        let sink = raced_through(&p, &mut Acks::default(), &[]);
        assert_eq!(rounds_of(&sink, 0), [1, 2, 3]);
        assert_eq!(rounds_of(&sink, 1), [1, 2, 3]);
        let stop = |item: usize| sink.1.iter().find(|s| s.0 == item).map(|s| s.1.reason);
        assert_eq!(stop(0), Some(StopReason::Separated));
        assert_eq!(stop(1), Some(StopReason::Dropped));
    }

    /// A sink's counted seconds of `mode`: (first pass, raced rounds after 3).
    fn seconds(sink: &VecSink, mode: Mode) -> (f64, f64) {
        let of_mode = sink.0.iter().filter(|s| s.1 > 0 && s.2.mode == mode);
        of_mode.fold((0.0, 0.0), |(first, raced), s| match s.1 {
            1..=3 => (first + s.2.wall.as_secs_f64(), raced),
            _ => (first, raced + s.2.wall.as_secs_f64()),
        })
    }

    #[test]
    fn a_suite_whose_every_sample_failed_stops_as_failed() {
        // Without a figure it would contend (and take rounds) until the budget.
        let sink = raced(&["fast", "close", "broken"], &[]);
        assert_eq!(rounds_of(&sink, 2), [1, 2, 3]);
        let stop = |item: usize| sink.1.iter().find(|s| s.0 == item).map(|s| s.1);
        let failed = Stop {
            reason: StopReason::Failed,
            round: 3,
        };
        assert_eq!(stop(2), Some(failed));
        assert_eq!(rounds_of(&sink, 1), [1, 2, 3, 4, 5, 6], "the race goes on");
    }

    #[test]
    fn a_race_ends_with_its_budget() {
        // 700 ± 300 against 1000 ± 10: 9 figures would tell them apart, but the race may
        // spend only 0.8 of the first pass's time: it stops both at the budget.
        let sink = raced(&["fast", "wide"], &[]);
        let (first, spent) = seconds(&sink, Mode::Send);
        let longest = sink
            .0
            .iter()
            .map(|s| s.2.wall.as_secs_f64())
            .fold(0.0, f64::max);
        let budget = first * race::EXTRA_SHARE;
        assert!(
            spent >= budget && spent < budget + longest,
            "{spent} of {budget}"
        );
        for item in [0, 1] {
            let rounds = rounds_of(&sink, item);
            assert!(rounds.len() > 3 && rounds.len() < 9, "{rounds:?}");
            let stop = sink.1.iter().find(|s| s.0 == item).unwrap().1;
            assert_eq!(stop.reason, StopReason::Budget);
            assert_eq!(Some(&stop.round), rounds.last());
        }
        // Twins (1000 ± 10 each) are equal within 5% after the first pass: they stop as
        // such, and the budget is not spent on them.
        let names = ["fast", "twin", "far10"];
        let sink = raced(&names, &[]);
        let extra = sink.0.iter().filter(|s| s.1 > 3).count();
        assert_eq!(extra, 0);
        let stops: Vec<(usize, Stop)> = sink.1.clone();
        let stop = |reason, round| Stop { reason, round };
        assert_eq!(
            stops,
            [
                (0, stop(StopReason::Equal, 3)),
                (1, stop(StopReason::Equal, 3)),
                (2, stop(StopReason::Dropped, 3))
            ]
        );
        // A fixed design of the same suites records no stops and no extra rounds.
        let mut fixed = VecSink::default();
        run(
            &plan(&names),
            &settings(3),
            &mut Spread::default(),
            &Cancel::new(),
            &mut fixed,
            &[],
            &mut |_| {},
        )
        .unwrap();
        assert!(fixed.1.is_empty());
        assert_eq!(fixed.0.len(), 3 * 4);
    }

    /// A raced run of `p` through `transport` with `--budget` of `budget` seconds (if
    /// any) and `--max-rounds`: how it ended, and its sink.
    fn raced_with(
        p: &Plan,
        transport: &mut dyn Transport,
        budget: Option<u64>,
        max_rounds: u32,
    ) -> (End, VecSink) {
        let mut sink = VecSink::default();
        let mut s = settings(3);
        (s.race, s.max_rounds) = (true, max_rounds);
        s.budget = budget.map(Duration::from_secs);
        let end = run(
            p,
            &s,
            transport,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        );
        (end.unwrap(), sink)
    }

    #[test]
    fn a_time_budget_given_replaces_the_races_own() {
        // The suites that `a_race_ends_with_its_budget` stops at the race's budget, with
        // `--budget 1h`: they race on, past 0.8 of the first pass's time, until they part.
        let p = plan(&["fast", "wide"]);
        let (end, sink) = raced_with(&p, &mut Spread::default(), Some(3600), 20);
        assert_eq!(end, End::Complete);
        let (first, spent) = seconds(&sink, Mode::Send);
        assert!(spent > first * race::EXTRA_SHARE, "{spent} of {first}");
        for item in [0, 1] {
            let stop = sink.1.iter().find(|s| s.0 == item).unwrap().1;
            assert_ne!(stop.reason, StopReason::Budget, "{item}: {stop:?}");
            assert_eq!(Some(&stop.round), rounds_of(&sink, item).last());
        }
    }

    #[test]
    fn a_race_out_of_rounds_says_so() {
        // The same pair with `--max-rounds 5` and a budget of an hour: still tied after
        // the last round, they stop for the rounds; without that budget, and with 8
        // rounds allowed, the race's own budget ends them first (after 5-7 rounds).
        let cases = [
            (Some(3600), 5, StopReason::Rounds),
            (None, 8, StopReason::Budget),
        ];
        for (budget, max_rounds, why) in cases {
            let p = plan(&["fast", "wide"]);
            let (_, sink) = raced_with(&p, &mut Spread::default(), budget, max_rounds);
            let stops: Vec<StopReason> = sink.1.iter().map(|s| s.1.reason).collect();
            assert_eq!(stops, [why, why], "{budget:?}");
        }
        // Two modes, 8 rounds: send's race spends its own 4.8 s by round 6 while
        // receive's (100.8 s, 14 s a round) still has time at round 8. Send's pair
        // stopped for the budget, receive's for the rounds.
        let mut p = plan(&["fast", "wobble"]);
        let receive = ["fast", "wobble", "far10", "far20", "far30", "far40"];
        p.items.extend(plan_in(Mode::Receive, &receive).items);
        let (_, sink) = raced_with(&p, &mut Timed::default(), None, 8);
        let reasons: Vec<(usize, StopReason)> = sink.1.iter().map(|s| (s.0, s.1.reason)).collect();
        for (item, why) in [(0, StopReason::Budget), (1, StopReason::Budget)] {
            assert!(reasons.contains(&(item, why)), "{reasons:?}");
        }
        for (item, why) in [(2, StopReason::Rounds), (3, StopReason::Rounds)] {
            assert!(reasons.contains(&(item, why)), "{reasons:?}");
        }
    }

    /// [`Spread`]'s rates, each receive sample lasting 7 s of wall time, others 1 s.
    #[derive(Default)]
    struct Timed(Spread);
    impl Transport for Timed {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = self.0.measure(req, cancel);
            let slow = req.mode == Mode::Receive;
            s.wall = Duration::from_secs(if slow { 7 } else { 1 });
            s
        }
    }

    #[test]
    fn each_mode_races_on_a_budget_of_its_own_time() {
        // Send's `fast` and `wobble` (1 s a sample) never part, nor do receive's (7 s a
        // sample), whose four `farN` drop after the first pass. Send's
        // race spends 0.8 of its own first pass's 6 s, not a share of both modes' 132 s
        // (one budget would give send 2 of every 16 s, some 13 s).
        let mut p = plan(&["fast", "wobble"]);
        let receive = ["fast", "wobble", "far10", "far20", "far30", "far40"];
        p.items.extend(plan_in(Mode::Receive, &receive).items);
        let sink = raced_through(&p, &mut Timed::default(), &[]);
        let (first, spent) = seconds(&sink, Mode::Send);
        assert_eq!(first, 6.0);
        // The last sample starts while any time is left: at most one sample over.
        assert!((4.8..5.8).contains(&spent), "send raced {spent} s");
        let (first, spent) = seconds(&sink, Mode::Receive);
        assert_eq!(first, 126.0);
        assert!((100.8..107.8).contains(&spent), "receive raced {spent} s");
        let reasons: Vec<(usize, StopReason)> = sink.1.iter().map(|s| (s.0, s.1.reason)).collect();
        for (item, why) in [(0, StopReason::Budget), (3, StopReason::Budget)] {
            assert!(reasons.contains(&(item, why)), "{reasons:?}");
        }
        assert!(reasons.contains(&(4, StopReason::Dropped)), "{reasons:?}");
    }

    #[test]
    fn a_mode_done_racing_leaves_its_time_to_the_modes_still_racing() {
        // Receive's suites part after the first pass (42 s): its 33.6 s of race go to
        // send's `fast` and `wobble`, which never part, beside send's own 4.8 s: they
        // race on to --max-rounds (34 s) instead of stopping after some 5 s.
        let mut p = plan(&["fast", "wobble"]);
        p.items
            .extend(plan_in(Mode::Receive, &["fast", "far10"]).items);
        let sink = raced_through(&p, &mut Timed::default(), &[]);
        assert_eq!(seconds(&sink, Mode::Send), (6.0, 34.0));
        assert_eq!(seconds(&sink, Mode::Receive), (42.0, 0.0));
        assert_eq!(rounds_of(&sink, 0), (1..=20).collect::<Vec<u32>>());
        let reasons: Vec<(usize, StopReason)> = sink.1.iter().map(|s| (s.0, s.1.reason)).collect();
        assert!(reasons.contains(&(3, StopReason::Dropped)), "{reasons:?}");
        assert!(reasons.contains(&(0, StopReason::Rounds)), "{reasons:?}");
    }

    #[test]
    fn a_resumed_race_keeps_its_budget_and_repeats_no_slot() {
        let names = ["fast", "wide"];
        let whole = raced(&names, &[]);
        // Interrupted after two of its racing samples.
        let at = whole.0.iter().position(|s| s.1 > 3).unwrap() + 2;
        let previous = whole.0[..at].to_vec();
        let rest = raced(&names, &previous);
        let mut slots: Vec<(usize, u32)> = previous.iter().map(|s| (s.0, s.1)).collect();
        slots.extend(rest.0.iter().map(|s| (s.0, s.1)));
        let n = slots.len();
        slots.sort();
        slots.dedup();
        assert_eq!(slots.len(), n, "a slot was measured twice");
        // A fresh budget would have given the resumed race as many samples again as the
        // whole race took.
        let extra = slots.iter().filter(|s| s.1 > 3).count();
        assert_eq!(extra, whole.0.iter().filter(|s| s.1 > 3).count());
        assert!(rest.1.iter().all(|s| s.1.reason == StopReason::Budget));
        assert_eq!(rest.1.len(), 2);
    }

    #[test]
    fn budget_stops_early() {
        let mut sink = VecSink::default();
        let mut s = settings(3);
        s.budget = Some(Duration::ZERO);
        let end = run(
            &plan(&["a"]),
            &s,
            &mut Mock::default(),
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        )
        .unwrap();
        assert_eq!((end, sink.0.len()), (End::Budget, 0));
    }

    #[test]
    fn cancellation_stops_before_the_next_sample() {
        let cancel = Cancel::new();
        cancel.cancel(libc::SIGINT);
        let r = run(
            &plan(&["a"]),
            &settings(1),
            &mut Mock::default(),
            &cancel,
            &mut VecSink::default(),
            &[],
            &mut |_| {},
        );
        assert!(matches!(r, Err(Abort::Cancelled)));
    }

    struct Failing(FailureKind, u32);
    impl Transport for Failing {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            self.1 += 1;
            let mut s = Mock::default().measure(req, cancel);
            s.outcome = Outcome::failed(self.0, Problem::quote(format!("failure {}", self.1)));
            s
        }
    }

    #[test]
    fn authentication_failure_aborts_at_once() {
        let mut t = Failing(FailureKind::Auth, 0);
        let r = run(
            &plan(&["a", "b", "c"]),
            &settings(1),
            &mut t,
            &Cancel::new(),
            &mut VecSink::default(),
            &[],
            &mut |_| {},
        );
        assert!(
            matches!(
                r,
                Err(Abort::Fatal(Failure {
                    kind: FailureKind::Auth,
                    ..
                }))
            ),
            "{r:?}"
        );
        assert_eq!(t.1, 1);
    }

    #[test]
    fn transient_failures_are_retried_then_recorded_and_many_stop_the_run() {
        let mut sink = VecSink::default();
        let mut t = Failing(FailureKind::Timeout, 0);
        let items: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
        let names: Vec<&str> = items.iter().map(String::as_str).collect();
        let r = run(
            &plan(&names),
            &settings(1),
            &mut t,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |_| {},
        );
        assert!(matches!(r, Err(Abort::TooManyFailures { .. })), "{r:?}");
        assert_eq!(sink.0.len() as u32, MAX_CONSECUTIVE_FAILURES);
        assert_eq!(t.1, MAX_CONSECUTIVE_FAILURES * ATTEMPTS);
    }
}
