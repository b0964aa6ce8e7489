//! Checks: after the first pass, the summed pairs of a factorized design
//! (`analysis::sums`) that each mode's sums put first are measured as pairs, so that the
//! top of every table is measured, not summed, and the sums are checked where it
//! matters. They join the run as items of their own (a first pass, then the race like
//! any other), stored at slots after the plan's and the streams'.

use super::{Abort, End, Event, ItemState, Runner, leads::leads_of, streams};
use crate::analysis::{self, SuiteStats, higher_is_better};
use crate::model::{Mode, Sample};
use crate::plan::PlanItem;

/// How many summed pairs of each mode are measured.
pub const CHECKS: usize = 3;

/// Per mode (connect first), the summed pairs with the best figures, from the
/// statistics of the plan's first pass (so a resumed run picks the same ones whatever it
/// measured since).
pub fn picks(stats: &[SuiteStats]) -> Vec<PlanItem> {
    let sums = analysis::sums::sums(stats);
    let mut out = Vec::new();
    for mode in Mode::ALL {
        let mut of_mode: Vec<&SuiteStats> = sums.iter().filter(|s| s.mode == mode).collect();
        let key = |s: &&SuiteStats| {
            let m = s.figure.map_or(f64::NAN, |f| f.mean);
            if higher_is_better(mode) { -m } else { m }
        };
        of_mode.sort_by(|a, b| key(a).total_cmp(&key(b)));
        out.extend(of_mode.into_iter().take(CHECKS).map(|s| PlanItem {
            mode,
            suite: s.suite.clone(),
        }));
    }
    out
}

/// The stored slot of check `j`: after the plan's `items` and every stream slot.
pub fn slot(items: usize, j: usize) -> usize {
    items + streams::SLOTS + j
}

/// The checks' state: the stored samples of checks, taken in once the checks are known
/// again (a resumed run), and whether they have been picked.
#[derive(Default)]
pub(super) struct CheckState {
    pub pending: Vec<(usize, u32, Sample)>,
    pub picked: bool,
}

impl Runner<'_> {
    /// After the first pass, once: pick the checks from its figures, add them as items,
    /// and give them a first pass of their own.
    pub(super) fn checks(&mut self) -> Result<Option<End>, Abort> {
        if std::mem::replace(&mut self.check.picked, true) {
            return Ok(None);
        }
        let plan: Vec<usize> = (0..self.planned)
            .filter(|&i| !self.state[i].refused)
            .collect();
        let summaries = self
            .ledger()
            .summaries(&plan, |st| (&st.first, &st.first_rests));
        let picks = picks(&summaries);
        if picks.is_empty() {
            return Ok(None);
        }
        (self.progress)(Event::Checks { items: &picks });
        let first = self.items.len();
        self.items.extend(picks.iter().cloned());
        self.state
            .extend(picks.iter().map(|_| ItemState::default()));
        self.leads = leads_of(&self.items);
        for (stored, round, s) in std::mem::take(&mut self.check.pending) {
            let item = first + (stored - slot(self.planned, 0));
            if item < self.items.len() {
                self.done.insert((stored, round));
                self.tally.done += 1;
                self.take_in(item, round, &s);
            }
        }
        self.tally.total += picks.len() * self.settings.rounds as usize;
        let added: Vec<usize> = (first..self.items.len()).collect();
        for round in 1..=self.settings.rounds {
            if let Some(end) = self.round(round, &added)? {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;
    use crate::model::Suite;

    fn stats(mode: Mode, a: &str, b: &str, figure: f64) -> SuiteStats {
        let suite = match mode {
            Mode::Connect => Suite {
                kex: Some(a.into()),
                hostkey: Some(b.into()),
                ..Suite::default()
            },
            _ => Suite {
                cipher: Some(a.into()),
                mac: Some(b.into()),
                ..Suite::default()
            },
        };
        let mut s = SuiteStats::empty(mode, suite);
        s.figure = summarize(&[figure * 0.99, figure, figure * 1.01]);
        s
    }

    #[test]
    fn the_best_sums_of_each_mode_are_picked() {
        let design = [
            stats(Mode::Connect, "c", "ed", 0.10),
            stats(Mode::Connect, "a", "ed", 0.12),
            stats(Mode::Connect, "b", "ed", 0.20),
            stats(Mode::Connect, "c", "rsa", 0.11),
            stats(Mode::Connect, "c", "dsa", 0.15),
            // Send: ctr + sha2 at 1 ns/B; cbc + sha2 2 ns/B; ctr + sha1 and ctr + md5
            // 1.5 and 1.2 ns/B.
            stats(Mode::Send, "ctr", "sha2", 1e9),
            stats(Mode::Send, "cbc", "sha2", 5e8),
            stats(Mode::Send, "ctr", "sha1", 1e9 / 1.5),
            stats(Mode::Send, "ctr", "md5", 1e9 / 1.2),
        ];
        let labels: Vec<String> = (picks(&design).iter())
            .map(|p| format!("{} {}", p.mode, p.suite.label()))
            .collect();
        // Connect: a+rsa 0.13, a+dsa 0.17, b+rsa 0.21 (b+dsa 0.25 is fourth). Send:
        // cbc + md5 (2.2 ns/B) before cbc + sha1 (2.5 ns/B).
        assert_eq!(
            labels,
            [
                "connect a + rsa",
                "connect a + dsa",
                "connect b + rsa",
                "send cbc + md5",
                "send cbc + sha1"
            ]
        );
        assert!(slot(5, 0) >= 5 + streams::SLOTS);
    }

    /// Send at 1/(cipher's + MAC's ns per byte): ctr 0.5, cbc 1.5; sha2 0.5, sha1 1.0,
    /// md5 0.7.
    struct Additive;
    impl crate::measure::Transport for Additive {
        fn measure(
            &mut self,
            req: &crate::model::SampleRequest,
            cancel: &crate::sys::cancel::Cancel,
        ) -> crate::model::Sample {
            let ns = |name: &Option<String>| match name.as_deref() {
                Some("ctr" | "sha2") => 0.5,
                Some("cbc") => 1.5,
                Some("sha1") => 1.0,
                Some("md5") => 0.7,
                _ => 0.0,
            };
            let rate = 1e9 / (ns(&req.suite.cipher) + ns(&req.suite.mac));
            super::super::tests::at_rate(req, cancel, rate)
        }
    }

    fn factorized() -> crate::plan::Plan {
        let mut p = super::super::tests::plan(&["ctr", "cbc", "ctr", "ctr"]);
        for (item, mac) in p.items.iter_mut().zip(["sha2", "sha2", "sha1", "md5"]) {
            item.suite.mac = Some(mac.into());
        }
        p
    }

    fn run_checks(
        previous: &[(usize, u32, crate::model::Sample)],
    ) -> (super::super::tests::VecSink, Vec<String>) {
        let mut sink = super::super::tests::VecSink::default();
        let mut said = Vec::new();
        super::super::run(
            &factorized(),
            &super::super::tests::settings(2),
            &mut Additive,
            &crate::sys::cancel::Cancel::new(),
            &mut sink,
            previous,
            &mut |e| {
                if let Event::Checks { items } = e {
                    said.extend(items.iter().map(|i| i.suite.label()));
                }
            },
        )
        .unwrap();
        (sink, said)
    }

    #[test]
    fn checks_are_measured_after_the_first_pass_and_picked_again_on_resume() {
        let (sink, said) = run_checks(&[]);
        // cbc + md5 (2.2 ns/B) and cbc + sha1 (2.5 ns/B): the only two sums.
        assert_eq!(said, ["cbc + md5", "cbc + sha1"]);
        let at = |j: usize| -> Vec<(u32, String)> {
            (sink.0.iter())
                .filter(|s| s.0 == slot(4, j))
                .map(|s| (s.1, s.2.suite.label()))
                .collect()
        };
        assert_eq!(at(0), [(1, "cbc + md5".into()), (2, "cbc + md5".into())]);
        assert_eq!(at(1), [(1, "cbc + sha1".into()), (2, "cbc + sha1".into())]);
        // The plan's first pass comes first.
        let first_check = sink.0.iter().position(|s| s.0 >= slot(4, 0)).unwrap();
        assert!(sink.0[..first_check].iter().filter(|s| s.1 == 2).count() == 4);
        // A resumed run with everything stored picks the same checks, measures nothing.
        let (again, said) = run_checks(&sink.0);
        assert_eq!(said, ["cbc + md5", "cbc + sha1"]);
        assert!(
            again.0.is_empty(),
            "{:?}",
            super::super::tests::slots(&again)
        );
        // Interrupted after the checks' first sample: the rest is measured, in the
        // same (seeded) order.
        let (rest, _) = run_checks(&sink.0[..=first_check]);
        let after = super::super::tests::slots(&super::super::tests::VecSink(
            sink.0[first_check + 1..].to_vec(),
            Vec::new(),
        ));
        assert_eq!(super::super::tests::slots(&rest), after);
        assert_eq!(after.len(), 3);
    }
}
