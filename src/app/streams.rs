//! What follows complete rounds, stored with the run (and finished by `--resume`): with
//! `--streams N` the parallel batches of the run's best send and receive suites.

use super::progress::Progress;
use sshbench::measure::Transport;
use sshbench::model::{RunOptions, Sample};
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
    /// A shared fleet's host: set when this worker's lease on it ran out.
    pub lost: Option<&'a std::sync::atomic::AtomicBool>,
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

/// The rounds' result, followed, when they completed, by the `--streams` batches (when
/// asked for), picked from the run's samples as stored after the rounds.
pub fn after_rounds(
    rounds: Result<End, Abort>,
    cx: &Context,
    transport: &mut dyn Transport,
    sink: &mut dyn Sink,
) -> Result<End, Abort> {
    if !matches!(rounds, Ok(End::Complete)) {
        return rounds;
    }
    let samples = stored(cx)?;
    let done: HashSet<(usize, u32)> = cx.previous.iter().map(|(i, r, _)| (*i, *r)).collect();
    if let Some(n) = cx.options.streams {
        let picks = streams::picks(samples.iter().map(|(_, s)| s));
        if picks.is_empty() {
            // Every send and receive failed or was given up (a login without commands).
            cx.progress
                .say("parallel: not measured: no send or receive suite has a figure to stream");
        } else {
            parallel(n, &picks, &done, cx, transport, sink)?;
        }
    }
    rounds
}

/// `n` parallel streams of each pick, in batches.
fn parallel(
    n: u32,
    picks: &[streams::Pick],
    done: &HashSet<(usize, u32)>,
    cx: &Context,
    transport: &dyn Transport,
    sink: &mut dyn Sink,
) -> Result<(), Abort> {
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
        sample_time: cx.options.sample_times(),
        timeout: Duration::from_secs(cx.options.timeout_s),
        done,
    };
    streams::run(&b, picks, transport, cx.cancel, sink, &mut |e| {
        cx.progress.event(e)
    })
}
