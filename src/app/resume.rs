//! Resuming a stored run: finding it with the options and destination it was started
//! with, checking that it can go on here, and reopening it with the samples it keeps.

use super::progress::Progress;
use anyhow::{Context, Result, anyhow, bail};
use sshbench::destination::Target;
use sshbench::model::{Outcome, RunOptions, RunStatus, Sample};
use sshbench::store::{self, RunRecord, Store};
use std::path::Path;

/// The run `--resume` asks for; its record holds the options and destination it was
/// started with.
pub(super) fn load_resumed(db: &str, id: Option<i64>) -> Result<RunRecord> {
    if !store::is_url(db) && !Path::new(db).exists() {
        bail!("nothing to resume: the database {db} does not exist");
    }
    let store = super::sealed_store(db)?;
    let id = match id {
        Some(id) => id,
        None => store
            .latest_unfinished()?
            .ok_or_else(|| anyhow!("no interrupted run to resume in {}", store.describe()))?,
    };
    let run = store
        .run(id)?
        .ok_or_else(|| anyhow!("no run {id} in {}", store.describe()))?;
    if run.status == RunStatus::Complete {
        bail!("run {id} is already complete");
    }
    if !run.sealed {
        bail!(
            "run {id} was not stored by your sshbench on this machine, or was changed since \
             (it carries no seal of your key): its destination and ssh options are not run \
             again from the database; start a new run with the destination and options you \
             mean"
        );
    }
    if !run.target.is_sandbox {
        run.target
            .check_stored()
            .with_context(|| format!("run {id} cannot be resumed"))?;
    }
    sshbench::cli::workload::check_stored(&run.options.workload)
        .with_context(|| format!("run {id} cannot be resumed"))?;
    check_placement(id, &run.options, &run.target)?;
    Ok(run)
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

/// What a run starts from.
pub(super) struct Start {
    pub run_id: i64,
    pub seed: u64,
    /// The samples it already has: (plan item, round, sample).
    pub previous: Vec<(usize, u32, Sample)>,
}

/// Reopen a resumed run, keeping its successful and refused samples (failed slots,
/// say while the network was down, are measured again).
pub(super) fn reopen(store: &Store, run: &RunRecord, progress: &Progress) -> Result<Start> {
    store.set_status(run.id, RunStatus::Running)?;
    let previous: Vec<(usize, u32, Sample)> = store
        .samples(&[run.id])?
        .into_iter()
        .filter(|s| !matches!(s.sample.outcome, Outcome::Failed { .. }))
        .map(|s| (s.item, s.round, s.sample))
        .collect();
    let to = match run.target.is_sandbox {
        true => run.destination.clone(),
        false => std::iter::once(run.target.destination.as_str())
            .chain(run.target.ssh_options.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
    };
    progress.say(&format!(
        "resuming run {} of {to} ({} samples already stored)",
        run.id,
        previous.len()
    ));
    Ok(Start {
        run_id: run.id,
        seed: run.seed,
        previous,
    })
}
