//! What follows complete rounds, stored with the run (and finished by `--resume`): the
//! connect pairs that the sums put first, measured directly, and with `--streams N` the
//! parallel batches of the run's best send and receive suites.

use super::progress::Progress;
use sshbench::measure::Transport;
use sshbench::model::{RunOptions, Sample};
use sshbench::runner::checks::{self, Checks};
use sshbench::runner::streams::{self, Batches};
use sshbench::runner::{Abort, End, Sink};
use sshbench::store::{Selection, Store};
use sshbench::sys::cancel::Cancel;
use std::collections::HashSet;
use std::time::Duration;

/// What the batches need from the run.
pub struct Context<'a> {
    pub store: &'a Store,
    pub run_id: i64,
    pub options: &'a RunOptions,
    /// The plan's items: the streams' slots follow them.
    pub items: usize,
    pub previous: &'a [(usize, u32, Sample)],
    pub cancel: &'a Cancel,
    pub progress: &'a Progress,
}

/// The run's samples as stored, with their slots.
fn stored(cx: &Context) -> Result<Vec<(usize, Sample)>, Abort> {
    let sel = Selection {
        run: Some(cx.run_id),
        ..Default::default()
    };
    let (_, stored) = cx.store.select(&sel).map_err(Abort::Store)?;
    Ok(stored.into_iter().map(|s| (s.item, s.sample)).collect())
}

/// The rounds' result, followed by the connect checks when the rounds completed and
/// summed pairs.
pub fn connect_checks(
    rounds: Result<End, Abort>,
    cx: &Context,
    transport: &mut dyn Transport,
    sink: &mut dyn Sink,
) -> Result<End, Abort> {
    if !matches!(rounds, Ok(End::Complete)) {
        return rounds;
    }
    let samples = stored(cx)?;
    let refs: Vec<(usize, &Sample)> = samples.iter().map(|(i, s)| (*i, s)).collect();
    let picks = checks::picks(&refs, cx.items);
    if picks.is_empty() {
        return rounds;
    }
    let labels: Vec<String> = picks.iter().map(|s| s.label()).collect();
    cx.progress.say(&format!(
        "connect, measured as pairs: {}",
        labels.join(", ")
    ));
    let c = Checks {
        items: cx.items,
        rounds: cx.options.rounds,
        timeout: Duration::from_secs(cx.options.timeout_s),
        done: &cx.previous.iter().map(|(i, r, _)| (*i, *r)).collect(),
    };
    checks::run(&c, &picks, transport, cx.cancel, sink, &mut |e| {
        cx.progress.event(e)
    })?;
    rounds
}

/// The rounds' result, followed by the batches when asked for and the rounds completed.
pub fn after_rounds(
    rounds: Result<End, Abort>,
    cx: &Context,
    transport: &dyn Transport,
    sink: &mut dyn Sink,
) -> Result<End, Abort> {
    let (Ok(End::Complete), Some(n)) = (&rounds, cx.options.streams) else {
        return rounds;
    };
    let samples: Vec<Sample> = stored(cx)?.into_iter().map(|(_, s)| s).collect();
    let picks = streams::picks(&samples);
    let done: HashSet<(usize, u32)> = cx.previous.iter().map(|(i, r, _)| (*i, *r)).collect();
    cx.progress.say(&format!(
        "parallel: {n} streams of {}",
        picks
            .iter()
            .map(|p| format!("{} {}", p.mode, p.suite.label()))
            .collect::<Vec<_>>()
            .join(" and ")
    ));
    let b = Batches {
        n,
        items: cx.items,
        sample_time: Duration::from_secs_f64(cx.options.sample_time_s),
        timeout: Duration::from_secs(cx.options.timeout_s),
        done: &done,
    };
    streams::run(&b, &picks, transport, cx.cancel, sink, &mut |e| {
        cx.progress.event(e)
    })?;
    Ok(End::Complete)
}
