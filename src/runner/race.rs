//! Racing: after a raced run's first pass, which items still contend for their mode's
//! best, why the others stopped, and the budget of extra samples the race may spend.
//! Figures are compared as the views compare them: moderated intervals, and the summed
//! pairs of a factorized design, whose parts race on while the sum is not told apart
//! from the best. Each mode's race has a budget of time of its own, a share of its
//! first pass's: a mode whose suites never part (echo's, within a few microseconds)
//! cannot starve another's. What a mode with nothing left to race has not spent is
//! spare, for the modes still racing once their own is gone: the budget goes where the
//! decision is, and a race lasts what its first pass did, at most.

use super::{Abort, ItemState, Runner};
use crate::analysis::{self, SuiteStats, connect, higher_is_better, not_distinguishable};
use crate::model::{EQUAL_WITHIN, FAILED_AFTER, Mode, Stop, StopReason, Suite};
use crate::plan::PlanItem;
use std::collections::BTreeMap;

/// The time a mode's race may spend by default, as a share of its first pass's (the
/// counted samples' wall times): enough for the close contenders' rounds, while a run
/// takes less than twice as long (bench/results/notebook.md, "The race's resolution and budget").
pub const EXTRA_SHARE: f64 = 0.8;

/// The seconds a race may still spend: each mode's own, and the spare that modes with
/// no contender left have not spent (less what racing modes already took of it).
#[derive(Clone, Debug, Default)]
pub(super) struct Budgets {
    own: BTreeMap<Mode, f64>,
    spare: f64,
}

impl Budgets {
    /// No limit of the race's own: every mode may spend from an endless spare.
    fn unlimited() -> Budgets {
        Budgets {
            own: BTreeMap::new(),
            spare: f64::INFINITY,
        }
    }

    /// Each mode's time left (`left`, negative where it spent more than its own) split
    /// into the own budgets of the modes `racing` says still race, and the spare.
    fn split(left: BTreeMap<Mode, f64>, racing: impl Fn(Mode) -> bool) -> Budgets {
        let (own, done): (BTreeMap<Mode, f64>, BTreeMap<Mode, f64>) =
            left.into_iter().partition(|(mode, _)| racing(*mode));
        // A mode that drew on the spare and then stopped racing took that from it.
        let spare = done.values().sum::<f64>() + own.values().map(|l| l.min(0.0)).sum::<f64>();
        Budgets { own, spare }
    }

    /// Take `cost` seconds for a sample of `mode`: from its own time while any is left,
    /// else from the spare; `false` when neither has any.
    fn take(&mut self, mode: Mode, cost: f64) -> bool {
        match self.own.get_mut(&mode) {
            Some(own) if *own > 0.0 => *own -= cost,
            _ if self.spare > 0.0 => self.spare -= cost,
            _ => return false,
        }
        true
    }
}

/// One live item: its index, mode, suite and counted figures so far.
pub struct Entry<'a> {
    pub item: usize,
    pub mode: Mode,
    pub suite: &'a Suite,
    pub figures: Vec<f64>,
}

/// Which of an item's figures, and their rests, a decision is taken on (all so far, or
/// the first pass's).
pub(super) type Pick = fn(&ItemState) -> (&Vec<f64>, &Vec<Option<f64>>);

/// Where a race stands after a round.
#[derive(Debug, Default, PartialEq)]
pub struct Standing {
    /// The items still not distinguishable from their mode's best, by the test `≈ best`
    /// uses, and the parts of every summed pair not distinguishable from it (or ahead of
    /// it); the best itself while any other item contends. An item without an interval
    /// yet stays; an item without any figure cannot be the best.
    pub contenders: Vec<usize>,
    /// Each mode's best so far (each client's, in a run of several).
    pub best: Vec<usize>,
    /// The items not distinguishable from their mode's best but equal to it within
    /// [`EQUAL_WITHIN`]; the best too when no contender is left beside them.
    pub equal: Vec<usize>,
}

/// The entries' statistics as reports see them: the figures of each (mode, suite)
/// pooled (a replicated reference pair is several items), moderated mode by mode; one
/// row per entry, the same for entries of one suite.
pub fn stats_of(entries: &[Entry]) -> Vec<SuiteStats> {
    let mut pooled: Vec<(Mode, &Suite, Vec<f64>)> = Vec::new();
    let mut row_of: Vec<usize> = Vec::with_capacity(entries.len());
    for e in entries {
        match pooled.iter().position(|p| p.0 == e.mode && p.1 == e.suite) {
            Some(at) => {
                pooled[at].2.extend_from_slice(&e.figures);
                row_of.push(at);
            }
            None => {
                row_of.push(pooled.len());
                pooled.push((e.mode, e.suite, e.figures.to_vec()));
            }
        }
    }
    let mut stats: Vec<SuiteStats> = (pooled.into_iter())
        .map(|(mode, suite, figures)| {
            let mut s = SuiteStats::empty(mode, suite.clone());
            s.figure = analysis::summarize_figures(mode, &figures);
            s.ok = figures.len();
            s
        })
        .collect();
    analysis::moderate::moderate(&mut stats);
    row_of.into_iter().map(|r| stats[r].clone()).collect()
}

pub fn standing(live: &[Entry]) -> Standing {
    let stats = stats_of(live);
    let sums = analysis::sums::sums_with_parts(&stats);
    // Each client races on its own: its ranking and its advice are its own, and which
    // client is fastest is read from each one's best.
    let mut races: Vec<(Mode, u8)> = live.iter().map(|e| (e.mode, e.suite.client)).collect();
    races.sort();
    races.dedup();
    let mut out = Standing::default();
    for (mode, client) in races {
        let of_mode: Vec<(usize, &SuiteStats)> = (live.iter().zip(&stats))
            .filter(|(e, _)| e.mode == mode && e.suite.client == client)
            .map(|(e, s)| (e.item, s))
            .collect();
        let Some((best_item, best)) = best_of(&of_mode, mode) else {
            out.contenders.extend(of_mode.iter().map(|(i, _)| *i));
            continue;
        };
        let best_suite = &of_mode
            .iter()
            .find(|(i, _)| *i == best_item)
            .expect("best")
            .1
            .suite;
        let is_best = |s: &SuiteStats| s.suite == *best_suite;
        let mut contenders: Vec<usize> = (of_mode.iter())
            .filter(|(_, s)| !is_best(s) && contends(s.figure.as_ref(), &best, mode))
            .map(|(i, _)| *i)
            .collect();
        for sum in (sums.iter()).filter(|s| s.stats.mode == mode && s.stats.suite.client == client)
        {
            if contends(sum.stats.figure.as_ref(), &best, mode) {
                let parts = (of_mode.iter()).filter(|(_, s)| sum.parts.contains(&s.suite));
                contenders.extend(parts.filter(|(_, s)| !is_best(s)).map(|(i, _)| *i));
            }
        }
        let bests: Vec<usize> = (of_mode.iter())
            .filter(|(_, s)| is_best(s))
            .map(|(i, _)| *i)
            .collect();
        let mut equal: Vec<usize> = (of_mode.iter())
            .filter(|(_, s)| !is_best(s) && s.figure.is_some_and(|f| tied_equal(&f, &best)))
            .map(|(i, _)| *i)
            .collect();
        if !contenders.is_empty() {
            contenders.extend(&bests);
        } else if !equal.is_empty() {
            equal.extend(&bests);
        }
        out.equal.extend(equal);
        contenders.sort();
        contenders.dedup();
        out.contenders.extend(contenders);
        out.best.extend(bests);
    }
    out.contenders.sort();
    out.equal.sort();
    out
}

/// The best measured item of one mode.
fn best_of(of_mode: &[(usize, &SuiteStats)], mode: Mode) -> Option<(usize, analysis::Summary)> {
    let better = |a: f64, b: f64| {
        if higher_is_better(mode) { a > b } else { a < b }
    };
    (of_mode.iter())
        .filter_map(|(i, s)| Some((*i, s.figure?)))
        .reduce(|a, b| if better(b.1.mean, a.1.mean) { b } else { a })
}

/// A figure still contends with the best: it has no interval yet, or its interval
/// overlaps the best's, or (a sum) it is ahead, and the two are not equal within
/// [`EQUAL_WITHIN`].
fn contends(f: Option<&analysis::Summary>, best: &analysis::Summary, mode: Mode) -> bool {
    let Some(f) = f else { return true };
    let ahead = if higher_is_better(mode) {
        f.mean > best.mean
    } else {
        f.mean < best.mean
    };
    f.ci95.is_none() || (!within(f, best) && (ahead || not_distinguishable(f, best)))
}

/// The 95% interval of the difference from the best lies within ±[`EQUAL_WITHIN`] of
/// the best's figure: a test of equivalence (two one-sided tests), the two half-widths
/// combined as the independent errors they are.
fn within(f: &analysis::Summary, best: &analysis::Summary) -> bool {
    let (Some(a), Some(b)) = (f.ci95, best.ci95) else {
        return false;
    };
    (f.mean - best.mean).abs() + a.hypot(b) <= EQUAL_WITHIN * best.mean.abs()
}

/// Tied with the best (the test `≈ best` uses) and equal to it within [`EQUAL_WITHIN`].
fn tied_equal(f: &analysis::Summary, best: &analysis::Summary) -> bool {
    not_distinguishable(f, best) && within(f, best)
}

/// Why an item that no longer contends stopped after `round`: its mode's best is
/// separated from every other; another item was dropped if it was behind already after
/// the first pass (`first_pass` rounds), else separated.
pub fn reason(best: bool, round: u32, first_pass: u32) -> StopReason {
    if round <= first_pass && !best {
        StopReason::Dropped
    } else {
        StopReason::Separated
    }
}

impl ItemState {
    /// No figure from at least [`FAILED_AFTER`] counted samples: every one failed.
    fn all_failed(&self) -> bool {
        self.figures.is_empty() && self.walls.len() >= FAILED_AFTER
    }
}

/// What the runner has measured so far, read by the race: the items and their state.
#[derive(Clone, Copy)]
pub(super) struct Ledger<'a> {
    pub items: &'a [PlanItem],
    pub state: &'a [ItemState],
}

impl<'a> Ledger<'a> {
    /// The moderated statistics of `items`, from the figures `pick` chooses.
    pub(super) fn summaries(&self, items: &[usize], pick: Pick) -> Vec<SuiteStats> {
        stats_of(&self.entries(items, pick))
    }

    /// The entries of `items`, their figures as reports take them: a connection's with
    /// the common rest of every connection `pick` chooses (see `analysis::connect`).
    fn entries(&self, items: &[usize], pick: Pick) -> Vec<Entry<'a>> {
        let all = self.state.iter().flat_map(|st| pick(st).1.iter().flatten());
        let common = connect::common_rest(all.copied());
        (items.iter())
            .map(|&item| {
                let (figures, rests) = pick(&self.state[item]);
                let figures = match self.items[item].mode {
                    Mode::Connect => (figures.iter().zip(rests))
                        .map(|(f, r)| connect::adjusted(*f, *r, common))
                        .collect(),
                    _ => figures.clone(),
                };
                Entry {
                    item,
                    mode: self.items[item].mode,
                    suite: &self.items[item].suite,
                    figures,
                }
            })
            .collect()
    }

    /// What one more sample of `item` is expected to take: its counted samples' mean
    /// wall time (its mode's when it has none).
    fn cost(&self, item: usize) -> f64 {
        fn mean(walls: impl Iterator<Item = f64>) -> Option<f64> {
            let (n, sum) = walls.fold((0usize, 0.0), |(n, s), w| (n + 1, s + w));
            (n > 0).then(|| sum / n as f64)
        }
        let mode = self.items[item].mode;
        mean(self.state[item].walls.iter().map(|w| w.1))
            .or_else(|| {
                let of_mode =
                    (self.items.iter().zip(self.state)).filter(|(planned, _)| planned.mode == mode);
                mean(of_mode.flat_map(|(_, st)| st.walls.iter().map(|w| w.1)))
            })
            .unwrap_or(0.0)
    }

    /// The `items` the budgets `left` admit, in order, each taken from its mode's or the
    /// spare: an item starts while either has any time left.
    fn admitted(&self, left: &mut Budgets, items: &[usize]) -> Vec<usize> {
        (items.iter().copied())
            .filter(|&i| left.take(self.items[i].mode, self.cost(i)))
            .collect()
    }
}

/// A raced run's state once its first pass is over: the items still racing, and the
/// seconds each mode's race, and the spare, may still spend.
#[derive(Default)]
pub(super) struct Race {
    pub racing: Option<Vec<usize>>,
    pub left: Budgets,
}

impl Race {
    /// Set the seconds the race may still spend with `contenders` left: each mode's
    /// share of its first pass (`first_pass` rounds) less what its raced samples took
    /// (from the samples, so a resumed race keeps its budget); what modes without a
    /// contender have left is spare, less what any mode spent beyond its own. A time
    /// budget of the user's (`--budget`, `user`) replaces the race's own: contenders race
    /// on until they part, --max-rounds, or that time.
    fn refill(&mut self, ledger: &Ledger, contenders: &[usize], first_pass: u32, user: bool) {
        if user {
            self.left = Budgets::unlimited();
            return;
        }
        let mut own = BTreeMap::new();
        for (planned, st) in ledger.items.iter().zip(ledger.state) {
            let mode_left: &mut f64 = own.entry(planned.mode).or_default();
            for &(round, wall) in &st.walls {
                *mode_left += match round <= first_pass {
                    true => wall * EXTRA_SHARE,
                    false => -wall,
                };
            }
        }
        self.left = Budgets::split(own, |mode| {
            contenders.iter().any(|&i| ledger.items[i].mode == mode)
        });
    }

    /// How many of `items` the budgets left would admit.
    fn fitting(&self, ledger: &Ledger, items: &[usize]) -> usize {
        ledger.admitted(&mut self.left.clone(), items).len()
    }

    /// Take from the budgets what `group` is expected to cost, first leaving out the
    /// items whose mode has no time left.
    pub(super) fn spend(&mut self, ledger: &Ledger, group: &mut Vec<usize>) {
        *group = ledger.admitted(&mut self.left, group);
    }
}

impl Runner<'_> {
    /// The items and their state, as the race and the checks read them.
    pub(super) fn ledger(&self) -> Ledger<'_> {
        Ledger {
            items: &self.items,
            state: &self.state,
        }
    }

    /// The items of the next racing round: the contenders among `live` (`None`: the
    /// race is over, or its budget spent).
    pub(super) fn race_items(&mut self, live: Vec<usize>) -> Result<Option<Vec<usize>>, Abort> {
        if self.race.racing.is_none() {
            self.race.racing = Some(live);
        }
        let contenders = self.settle()?;
        let (first_pass, user) = (self.settings.rounds, self.settings.budget.is_some());
        let ledger = Ledger {
            items: &self.items,
            state: &self.state,
        };
        self.race.refill(&ledger, &contenders, first_pass, user);
        // The round's shuffled order decides which contenders a nearly spent budget
        // still admits (`spend`); all of them go in.
        let fit = self.race.fitting(&ledger, &contenders);
        if fit == 0 {
            return Ok(None);
        }
        self.tally.left(fit);
        Ok(Some(contenders))
    }

    /// Stop the racing items that no longer contend (or whose every sample failed); the
    /// contenders among every live item (a part of a sum that ties with the best races
    /// again).
    fn settle(&mut self) -> Result<Vec<usize>, Abort> {
        let Some(racing) = self.race.racing.take() else {
            return Ok(Vec::new());
        };
        let live: Vec<usize> = (0..self.items.len())
            .filter(|&i| !self.state[i].refused && !self.state[i].all_failed())
            .collect();
        let now = standing(&self.ledger().entries(&live, |st| (&st.figures, &st.rests)));
        for &item in racing.iter().filter(|i| !now.contenders.contains(i)) {
            let round = self.state[item].last_round;
            let why = if self.state[item].all_failed() {
                StopReason::Failed
            } else if now.equal.contains(&item) {
                StopReason::Equal
            } else {
                reason(now.best.contains(&item), round, self.settings.rounds)
            };
            self.stop(item, why)?;
        }
        self.race.racing = Some(now.contenders.clone());
        Ok(now.contenders)
    }

    /// The race is over: items told apart by the last rounds stop as such, the others
    /// for `--max-rounds` when they ran in the last round it allows, else for the
    /// budget (their mode's, or the user's, ran out while rounds were left).
    pub(super) fn stop_racing(&mut self) -> Result<(), Abort> {
        for item in self.settle()? {
            let why = match self.state[item].last_round >= self.settings.max_rounds {
                true => StopReason::Rounds,
                false => StopReason::Budget,
            };
            self.stop(item, why)?;
        }
        self.race.racing = None;
        Ok(())
    }

    fn stop(&mut self, item: usize, reason: StopReason) -> Result<(), Abort> {
        let round = self.state[item].last_round;
        self.sink
            .stopped(self.slot(item), Stop { reason, round })
            .map_err(Abort::Store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(item: usize, mode: Mode, figures: &[f64]) -> Entry<'_> {
        Entry {
            item,
            mode,
            suite: Box::leak(Box::new(Suite {
                cipher: Some(format!("c{item}")),
                ..Suite::default()
            })),
            figures: figures.to_vec(),
        }
    }

    /// The race weighs a transfer by the rate of its samples' total, as reports do (equal
    /// bytes at 100 and 50 per second: 66.7, not 75), and connect by its mean time.
    #[test]
    fn the_race_sees_the_figures_reports_show() {
        let f = [100.0, 50.0];
        let stats = stats_of(&[entry(0, Mode::Send, &f), entry(1, Mode::Connect, &f)]);
        let mean = |i: usize| stats[i].figure.unwrap().mean;
        assert!((mean(0) - 200.0 / 3.0).abs() < 1e-9, "{}", mean(0));
        assert_eq!(mean(1), 75.0);
    }

    #[test]
    fn only_suites_tied_with_the_best_go_on() {
        let (best, close, far) = ([100.0, 104.0, 96.0], [97.0, 92.0, 99.0], [50.0, 52.0, 48.0]);
        let live = [
            entry(0, Mode::Send, &best),
            entry(1, Mode::Send, &close),
            entry(2, Mode::Send, &far),
        ];
        assert_eq!(standing(&live).contenders, [0, 1]);
        assert_eq!(standing(&live).best, [0]);
        // Without the close one, the best has no rival left and stops too.
        let alone = standing(&[entry(0, Mode::Send, &best), entry(2, Mode::Send, &far)]);
        assert!(alone.contenders.is_empty());
        assert_eq!(alone.best, [0]);
    }

    /// A slower client's suites race among themselves: its best goes on beside its own
    /// rival, however far behind the other client's it is.
    #[test]
    fn each_client_races_its_own_suites() {
        fn through(item: usize, client: u8, figures: &[f64]) -> Entry<'static> {
            Entry {
                item,
                mode: Mode::Send,
                suite: Box::leak(Box::new(Suite {
                    cipher: Some(format!("c{item}")),
                    client,
                    ..Suite::default()
                })),
                figures: figures.to_vec(),
            }
        }
        let (fast, slow, slower) = (
            [200.0, 204.0, 196.0],
            [100.0, 104.0, 96.0],
            [97.0, 92.0, 99.0],
        );
        let live = [
            through(0, 0, &fast),
            through(1, 1, &slow),
            through(2, 1, &slower),
        ];
        let s = standing(&live);
        assert_eq!(s.best, [0, 1]);
        assert_eq!(s.contenders, [1, 2]);
    }

    #[test]
    fn lower_is_better_for_connect_and_modes_race_apart() {
        let (quick, slow, near) = ([10.0, 10.5, 9.5], [20.0, 21.0, 19.0], [11.0, 12.0, 10.0]);
        let live = [
            entry(0, Mode::Connect, &quick),
            entry(1, Mode::Connect, &slow),
            entry(2, Mode::Connect, &near),
            // A send suite slower than every connect time is its mode's only suite.
            entry(3, Mode::Send, &slow),
        ];
        assert_eq!(standing(&live).contenders, [0, 2]);
        assert_eq!(standing(&live).best, [0, 3]);
    }

    #[test]
    fn the_spare_is_what_finished_modes_left_less_what_any_mode_overdrew() {
        // Receive finished with 10 s unspent, send finished after drawing 3 s beyond its
        // own, echo races on 2 s over its own, connect races within its own 4 s.
        let left = BTreeMap::from([
            (Mode::Receive, 10.0),
            (Mode::Send, -3.0),
            (Mode::Echo, -2.0),
            (Mode::Connect, 4.0),
        ]);
        let mut b = Budgets::split(left, |m| matches!(m, Mode::Echo | Mode::Connect));
        assert_eq!(b.spare, 5.0);
        assert_eq!(
            b.own,
            BTreeMap::from([(Mode::Echo, -2.0), (Mode::Connect, 4.0)])
        );
        // Connect takes its own first; echo only the spare, until it is gone.
        assert!(b.take(Mode::Connect, 3.0) && b.spare == 5.0);
        assert!(b.take(Mode::Echo, 4.0) && b.take(Mode::Echo, 4.0));
        assert!(!b.take(Mode::Echo, 1.0));
        assert!(b.take(Mode::Connect, 1.0) && !b.take(Mode::Connect, 1.0));
    }

    #[test]
    fn suites_equal_to_the_best_within_the_resolution_stop_with_it() {
        // 100 and 99.8, each ± about 1%: both intervals within about 3% of the best.
        let (best, twin) = ([100.0, 100.5, 99.5], [99.8, 100.3, 99.3]);
        let close = [97.0, 92.0, 99.0];
        let both = standing(&[entry(0, Mode::Send, &best), entry(1, Mode::Send, &twin)]);
        assert!(both.contenders.is_empty(), "{both:?}");
        assert_eq!((both.best, both.equal), (vec![0], vec![0, 1]));
        // Beside a contender still open, the twin stops as equal and the best races on.
        let three = standing(&[
            entry(0, Mode::Send, &best),
            entry(1, Mode::Send, &twin),
            entry(2, Mode::Send, &close),
        ]);
        assert_eq!((three.contenders, three.equal), (vec![0, 2], vec![1]));
        // Alone beside the best, the wide one still contends: nothing is equal.
        let open = standing(&[entry(0, Mode::Send, &best), entry(2, Mode::Send, &close)]);
        assert_eq!((open.contenders, open.equal), (vec![0, 2], vec![]));
    }

    fn figure(mean: f64, ci95: f64) -> analysis::Summary {
        let mut s = analysis::summarize(&[mean, mean]).unwrap();
        s.ci95 = Some(ci95);
        s
    }

    #[test]
    fn equal_means_the_differences_interval_lies_within_the_resolution() {
        let best = figure(1000.0, 15.0);
        // 25 ± 21.2 (15 and 15 combined) lies within ±50, though the two intervals
        // together span 985-1040.
        assert!(within(&figure(1025.0, 15.0), &best));
        assert!(within(&figure(975.0, 15.0), &best));
        // 30 ± 21.2 reaches past 50; so does 10 ± 42.7 (a wide interval).
        assert!(!within(&figure(1030.0, 15.0), &best));
        assert!(!within(&figure(1010.0, 40.0), &best));
        // No interval, no equality.
        let mut one = figure(1000.0, 1.0);
        one.ci95 = None;
        assert!(!within(&one, &best) && !within(&best, &one));
    }

    #[test]
    fn a_suite_without_an_interval_stays_and_keeps_the_best_racing() {
        let (best, one) = ([100.0, 101.0, 99.0], [10.0]);
        let live = [
            entry(0, Mode::Send, &best),
            entry(1, Mode::Send, &one),
            entry(2, Mode::Send, &[]),
        ];
        assert_eq!(standing(&live).contenders, [0, 1, 2]);
        let unmeasured = standing(&[entry(2, Mode::Send, &[])]);
        assert_eq!((unmeasured.contenders, unmeasured.best), (vec![2], vec![]));
    }

    fn pair<'a>(item: usize, c: &str, m: Option<&str>, figures: &'a [f64]) -> Entry<'a> {
        Entry {
            item,
            mode: Mode::Send,
            suite: Box::leak(Box::new(Suite {
                cipher: Some(c.into()),
                mac: m.map(str::to_string),
                ..Suite::default()
            })),
            figures: figures.to_vec(),
        }
    }

    #[test]
    fn the_parts_of_a_sum_tied_with_the_best_race_on() {
        // gcm 1000 is the best. Each part is told apart from it, but cbc + md5, their
        // sum (1/900 + 1/900 − 1/850 s per MB: 956 MB/s), with three parts' spread, is
        // not: its parts race on.
        let best = [1000.0, 1025.0, 975.0];
        let (cbc, md5, base) = (
            [900.0, 922.0, 878.0],
            [900.0, 922.0, 878.0],
            [850.0, 871.0, 829.0],
        );
        let live = |md5: &'static [f64]| {
            standing(&[
                pair(0, "gcm", None, &best),
                pair(1, "cbc", Some("sha2"), &cbc),
                pair(2, "ctr", Some("md5"), md5),
                pair(3, "ctr", Some("sha2"), &base),
            ])
        };
        let tied = live(Box::leak(Box::new(md5)));
        assert_eq!(tied.contenders, [0, 1, 2, 3]);
        // A slow MAC makes the sum far behind: nothing contends with the best.
        let far = live(Box::leak(Box::new([500.0, 512.0, 488.0])));
        assert!(far.contenders.is_empty(), "{far:?}");
        assert_eq!(far.best, [0]);
    }

    #[test]
    fn reasons() {
        assert_eq!(reason(false, 3, 3), StopReason::Dropped);
        assert_eq!(reason(false, 4, 3), StopReason::Separated);
        // The best is never dropped: after the first pass it is separated from all.
        assert_eq!(reason(true, 3, 3), StopReason::Separated);
    }
}
