//! Racing: after a raced run's first pass, which items still contend for their mode's
//! best, why the others stopped, and the budget of extra samples the race may spend.

use super::{Abort, Runner};
use crate::analysis::{Summary, higher_is_better, not_distinguishable, summarize};
use crate::model::{Mode, Stop, StopReason};

/// Extra counted samples a race may spend by default, as a share of its first pass's:
/// enough for the close contenders' rounds, while a run takes at most twice as long.
pub const EXTRA_SHARE: f64 = 1.0;

/// One live item: its index, mode and counted figures so far.
pub struct Entry<'a> {
    pub item: usize,
    pub mode: Mode,
    pub figures: &'a [f64],
}

/// Where a race stands after a round.
#[derive(Debug, Default, PartialEq)]
pub struct Standing {
    /// The items still not distinguishable from their mode's best, by the test `≈ best`
    /// uses; the best itself while any other item ties with it. An item with fewer than
    /// two figures has no interval yet and stays; an item without any cannot be the best.
    pub contenders: Vec<usize>,
    /// Each mode's best so far.
    pub best: Vec<usize>,
}

pub fn standing(live: &[Entry]) -> Standing {
    let mut modes: Vec<Mode> = live.iter().map(|e| e.mode).collect();
    modes.sort();
    modes.dedup();
    let mut out = Standing::default();
    for mode in modes {
        let (contenders, best) = of_mode(live.iter().filter(|e| e.mode == mode), mode);
        out.contenders.extend(contenders);
        out.best.extend(best);
    }
    out.contenders.sort();
    out
}

/// The contenders of one mode and its best.
fn of_mode<'a>(
    entries: impl Iterator<Item = &'a Entry<'a>>,
    mode: Mode,
) -> (Vec<usize>, Option<usize>) {
    let summarized: Vec<(usize, Option<Summary>)> =
        entries.map(|e| (e.item, summarize(e.figures))).collect();
    let better = |a: f64, b: f64| {
        if higher_is_better(mode) { a > b } else { a < b }
    };
    let best = summarized
        .iter()
        .filter_map(|(i, s)| s.map(|s| (*i, s)))
        .reduce(|a, b| if better(b.1.mean, a.1.mean) { b } else { a });
    let Some((best_item, best)) = best else {
        return (summarized.into_iter().map(|(i, _)| i).collect(), None);
    };
    let mut out: Vec<usize> = (summarized.iter())
        .filter(|(i, _)| *i != best_item)
        .filter(|(_, s)| s.is_none_or(|s| s.n < 2 || not_distinguishable(&s, &best)))
        .map(|(i, _)| *i)
        .collect();
    if !out.is_empty() {
        out.push(best_item);
    }
    (out, Some(best_item))
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

/// The default budget: extra counted samples after a first pass of `first` samples.
pub fn default_extra(first: usize) -> usize {
    (first as f64 * EXTRA_SHARE).ceil() as usize
}

impl Runner<'_> {
    /// The items of the next racing round: the contenders among `live` (`None`: the
    /// race is over, or its budget spent).
    pub(super) fn race_items(&mut self, live: Vec<usize>) -> Result<Option<Vec<usize>>, Abort> {
        if self.racing.is_none() {
            // Counted from the slots, so that a resumed race keeps its budget.
            let first_pass = self.settings.rounds;
            let first = self.done.iter().filter(|s| (1..=first_pass).contains(&s.1));
            let spent = self.done.iter().filter(|s| s.1 > first_pass).count();
            self.race_left = default_extra(first.count()).saturating_sub(spent);
            self.racing = Some(live.clone());
        }
        let contenders: Vec<usize> = self
            .settle()?
            .into_iter()
            .filter(|i| live.contains(i))
            .collect();
        if contenders.is_empty() || self.race_left == 0 {
            return Ok(None);
        }
        self.total = self.done_count + contenders.len().min(self.race_left);
        Ok(Some(contenders))
    }

    /// Stop the items that no longer contend; the contenders.
    fn settle(&mut self) -> Result<Vec<usize>, Abort> {
        let Some(racing) = self.racing.take() else {
            return Ok(Vec::new());
        };
        let entries: Vec<Entry> = racing
            .iter()
            .map(|&item| Entry {
                item,
                mode: self.plan.items[item].mode,
                figures: &self.state[item].figures,
            })
            .collect();
        let now = standing(&entries);
        for &item in racing.iter().filter(|i| !now.contenders.contains(i)) {
            let round = self.state[item].last_round;
            let why = reason(now.best.contains(&item), round, self.settings.rounds);
            self.stop(item, why)?;
        }
        self.racing = Some(now.contenders.clone());
        Ok(now.contenders)
    }

    /// The race is over: items told apart by the last rounds stop as such, the others
    /// for the budget.
    pub(super) fn stop_racing(&mut self) -> Result<(), Abort> {
        for item in self.settle()? {
            self.stop(item, StopReason::Budget)?;
        }
        self.racing = None;
        Ok(())
    }

    fn stop(&mut self, item: usize, reason: StopReason) -> Result<(), Abort> {
        let round = self.state[item].last_round;
        self.sink
            .stopped(item, Stop { reason, round })
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
            figures,
        }
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

    #[test]
    fn reasons_and_the_default_budget() {
        assert_eq!(reason(false, 3, 3), StopReason::Dropped);
        assert_eq!(reason(false, 4, 3), StopReason::Separated);
        // The best is never dropped: after the first pass it is separated from all.
        assert_eq!(reason(true, 3, 3), StopReason::Separated);
        assert_eq!(default_extra(345), 345);
    }
}
