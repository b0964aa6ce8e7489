//! Resuming a stored run: finding it with the options and destination it was started
//! with, checking that it can go on here, and reopening it with the samples it keeps.

use super::progress::Progress;
use anyhow::{Context, Result, anyhow, bail};
use sshbench::destination::Target;
use sshbench::model::{Outcome, RunOptions, Sample};
use sshbench::store::{self, Store};
use std::path::Path;

/// A stored run being finished: its record, options and destination.
pub(super) type Resumed = (store::RunRecord, RunOptions, Target);

/// The run `--resume` asks for, with the options and destination it was started with.
pub(super) fn load_resumed(db: &str, id: Option<i64>) -> Result<Resumed> {
    if !store::is_url(db) && !Path::new(db).exists() {
        bail!("nothing to resume: the database {db} does not exist");
    }
    let store = Store::connect(db)?;
    let id = match id {
        Some(id) => id,
        None => store
            .latest_unfinished()?
            .ok_or_else(|| anyhow!("no interrupted run to resume in {}", store.describe()))?,
    };
    let run = store
        .run(id)?
        .ok_or_else(|| anyhow!("no run {id} in {}", store.describe()))?;
    if run.status == "complete" {
        bail!("run {id} is already complete");
    }
    let resumed = resumed_of(run)?;
    check_placement(id, &resumed.1, &resumed.2)?;
    Ok(resumed)
}

/// A stored run with the options and destination it was started with.
pub(super) fn resumed_of(run: store::RunRecord) -> Result<Resumed> {
    let options: RunOptions =
        serde_json::from_str(&run.options_json).context("reading the run's options")?;
    let target: Target =
        serde_json::from_str(&run.target_json).context("reading the run's destination")?;
    Ok((run, options, target))
}

/// Refuse to resume run `id` on the sandbox with `options` where its split placement
/// cannot be had: its samples so far kept the two ends apart, and shared ones would pool
/// with them under its label.
fn check_placement(id: i64, options: &RunOptions, target: &Target) -> Result<()> {
    if !target.is_sandbox {
        return Ok(());
    }
    match super::server::unsplittable(options.sandbox_cpus) {
        Some(why) => bail!(
            "run {id} measured the sandbox with its sshd and ssh on separate CPUs, but {why}: \
             resume it where it may use two CPUs or more, or start a new run"
        ),
        None => Ok(()),
    }
}

/// What a run starts from: its id, seed, and the samples it already has.
pub(super) type Start = (i64, u64, Vec<(usize, u32, Sample)>);

/// Reopen a resumed run, keeping its successful and refused samples (failed slots,
/// say while the network was down, are measured again).
pub(super) fn reopen(store: &Store, run: &store::RunRecord, progress: &Progress) -> Result<Start> {
    store.set_status(run.id, "running")?;
    let previous: Vec<(usize, u32, Sample)> = store
        .samples(&[run.id])?
        .into_iter()
        .filter(|s| !matches!(s.sample.outcome, Outcome::Failed { .. }))
        .map(|s| (s.item, s.round, s.sample))
        .collect();
    progress.say(&format!(
        "resuming run {} ({} samples already stored)",
        run.id,
        previous.len()
    ));
    Ok((run.id, run.seed, previous))
}
