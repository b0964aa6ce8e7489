//! Leads: a cipher's first suite warms up for all its suites (and the first connect item
//! for every connect item), and what a lead's warm-up and a suite's siblings tell.

use super::ItemState;
use super::sizing::Sizer;
use crate::analysis::figure;
use crate::model::{Mode, Sample};
use crate::plan::{Plan, PlanItem};

/// For each item, its lead: the earlier item whose warm-up stands for it, if any. A
/// connect item is led by the plan's first connect item; a send, receive or echo item by
/// the first such item of the same cipher (and compression), whatever its MAC and mode.
/// Every sample is a new connection (a fresh ssh and a fresh sshd process), so nothing
/// a warm-up does carries over to the next sample of its own suite rather than to any
/// other: what a warm-up is for is telling the rate and round trip the counted samples
/// are sized from, and a cipher's suites are of the same order (round 1 is sized from
/// the lead's warm-up, later rounds from the suite's own samples). Items with a lead
/// skip their own warm-up.
pub fn leads(plan: &Plan) -> Vec<Option<usize>> {
    leads_of(&plan.items)
}

/// [`leads`] of a list of items.
pub fn leads_of(items: &[PlanItem]) -> Vec<Option<usize>> {
    (0..items.len())
        .map(|i| {
            let (mode, suite) = (items[i].mode, &items[i].suite);
            (0..i).find(|&j| {
                let other = &items[j];
                if mode == Mode::Connect {
                    other.mode == Mode::Connect
                } else {
                    other.mode != Mode::Connect
                        && other.suite.cipher == suite.cipher
                        && other.suite.compression == suite.compression
                }
            })
        })
        .collect()
}

impl<'a> Sizer<'a> {
    /// `item`'s lead's warm-up, if it succeeded.
    fn lead_warmup(&self, item: usize) -> Option<&Sample> {
        let w = self.ledger.state[self.leads[item]?].warmup.as_ref()?;
        w.outcome.is_success().then_some(w)
    }

    /// Whether `item`'s lead's warm-up succeeded and told what `item` needs (a connect
    /// item needs nothing but the success).
    pub(super) fn lead_warmed(&self, item: usize) -> bool {
        match self.ledger.items[item].mode {
            Mode::Connect => self.lead_warmup(item).is_some(),
            _ => self.lead_estimate(item).is_some(),
        }
    }

    /// What `item`'s lead's warm-up says about it: the rate for a transfer, the round
    /// trip for echo (an echo lead's median; else the lead's ping, when it measured one;
    /// else 0, which sizes the first session like a warm-up). None when there is no lead
    /// or it told nothing.
    pub(super) fn lead_estimate(&self, item: usize) -> Option<f64> {
        let w = self.lead_warmup(item)?;
        match self.ledger.items[item].mode {
            Mode::Send | Mode::Receive => w.throughput(),
            Mode::Echo if w.mode == Mode::Echo => figure(w),
            Mode::Echo => Some(w.rtt.map_or(0.0, |d| d.as_secs_f64())),
            Mode::Connect => None,
            // A workload moves what its shape says; any warm connection will do.
            _ => Some(0.0),
        }
    }

    /// The state of the other suites of `item`'s cipher (and compression) measured in
    /// the same mode: same order of rate, so each tells about the others.
    pub(super) fn siblings(&self, item: usize) -> impl Iterator<Item = &'a ItemState> + use<'a> {
        let planned = &self.ledger.items[item];
        self.ledger
            .items
            .iter()
            .zip(self.ledger.state)
            .filter(move |(p, _)| {
                p.mode == planned.mode
                    && p.suite != planned.suite
                    && p.suite.cipher == planned.suite.cipher
                    && p.suite.compression == planned.suite.compression
            })
            .map(|(_, st)| st)
    }
}
