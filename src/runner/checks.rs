//! Connect pairs measured directly after the rounds: the few that the sums of a
//! factorized connect design (`analysis::connect`) put first, so that the top of the
//! connect table is measured, not summed, and the sums are checked where it matters.
//! Their slots follow the plan's and the streams'.

use super::{Abort, Event, Sink, streams};
use crate::analysis;
use crate::measure::Transport;
use crate::model::{Mode, Sample, SampleRequest, Suite};
use crate::sys::cancel::Cancel;
use std::collections::HashSet;
use std::time::Duration;

/// How many summed pairs are measured.
pub const CHECKS: usize = 3;

/// The summed pairs quickest to connect, from the rounds' samples of the plan's `items`
/// alone (so a resumed run picks the same ones whatever it measured since).
pub fn picks(samples: &[(usize, &Sample)], items: usize) -> Vec<Suite> {
    let design = (samples.iter())
        .filter(|(item, s)| *item < items && s.mode == Mode::Connect)
        .map(|(_, s)| *s);
    let mut sums = analysis::connect::sums(&analysis::aggregate(design));
    let time = |s: &analysis::SuiteStats| s.figure.map_or(f64::INFINITY, |f| f.mean);
    sums.sort_by(|a, b| time(a).total_cmp(&time(b)));
    sums.into_iter().take(CHECKS).map(|s| s.suite).collect()
}

/// The stored slot of check `j`: after the plan's `items` and every stream slot.
pub fn slot(items: usize, j: usize) -> usize {
    items + streams::SLOTS + j
}

/// What the checks need.
pub struct Checks<'a> {
    pub items: usize,
    pub rounds: u32,
    pub timeout: Duration,
    /// Slots an interrupted run already stored.
    pub done: &'a HashSet<(usize, u32)>,
}

/// Measure each pick once per round (rounds outside, so drift spreads over them), every
/// sample to `sink`.
pub fn run(
    c: &Checks,
    picks: &[Suite],
    transport: &mut dyn Transport,
    cancel: &Cancel,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Event),
) -> Result<(), Abort> {
    let total = picks.len() * c.rounds as usize;
    for round in 1..=c.rounds {
        for (j, suite) in picks.iter().enumerate() {
            let slot = slot(c.items, j);
            if c.done.contains(&(slot, round)) {
                continue;
            }
            let req = SampleRequest {
                suite: suite.clone(),
                mode: Mode::Connect,
                bytes: 0,
                ramp: 0,
                timeout: c.timeout,
                until: None,
                start_at: None,
            };
            let at = (round, (round as usize - 1) * picks.len() + j, total);
            let take = || {
                let sample = transport.measure(&req, cancel);
                if cancel.is_cancelled() {
                    return Err(Abort::Cancelled);
                }
                sink.record(slot, round, &sample).map_err(Abort::Store)?;
                Ok(sample)
            };
            streams::step(progress, at, &req, take)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Outcome;

    fn connect(k: &str, h: &str, secs: f64) -> Sample {
        let suite = Suite {
            kex: Some(k.into()),
            hostkey: Some(h.into()),
            ..Suite::default()
        };
        let mut s = Sample::new(suite, Mode::Connect, Outcome::Success);
        s.wall = Duration::from_secs_f64(secs);
        s
    }

    #[test]
    fn the_quickest_sums_are_picked_from_the_design_alone() {
        let design = [
            connect("c", "ed", 0.10),
            connect("a", "ed", 0.12),
            connect("b", "ed", 0.20),
            connect("c", "rsa", 0.11),
            connect("c", "dsa", 0.15),
        ];
        let mut samples: Vec<(usize, &Sample)> = design.iter().enumerate().collect();
        // A check already measured (its slot after the plan's) changes nothing.
        let check = connect("a", "rsa", 0.5);
        samples.push((slot(5, 0), &check));
        let picks = picks(&samples, 5);
        let labels: Vec<String> = picks.iter().map(Suite::label).collect();
        // a+rsa 0.13, a+dsa 0.17, b+rsa 0.21, b+dsa 0.25: the three quickest.
        assert_eq!(labels, ["a + rsa", "a + dsa", "b + rsa"]);
        assert!(slot(5, 0) >= 5 + streams::SLOTS);
    }
}
