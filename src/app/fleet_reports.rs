//! The hosts a fleet view (`--fleet [GLOB]`, `--hosts FILE`) covers, read one host at a
//! time: each host's samples become its figures and are dropped before the next's are
//! read, so a fleet's views need memory for one host's samples, not all of them.

use super::open_existing;
use super::reports::MEASURE_FIRST;
use anyhow::{Result, bail};
use sshbench::cli::SelectionArgs;
use sshbench::cli::reports::{self as args, Hosts};
use sshbench::offer::catalogue::Grade;
use sshbench::store::RunRecord;
use sshbench::views::fleet::HostFigures;
use sshbench::views::recommend::{Goal, Order};
use sshbench::views::scope::Scope;

fn hosts_file(selection: &SelectionArgs) -> Result<Option<String>> {
    selection
        .hosts
        .as_deref()
        .map(super::hosts_file_text)
        .transpose()
}

/// The destinations in view order: as listed, else sorted; hosts listed without results
/// are named on stderr.
fn destinations(hosts: &Hosts, runs: &[RunRecord]) -> Vec<String> {
    let mut names: Vec<String> = runs.iter().map(|r| r.destination.clone()).collect();
    names.sort();
    names.dedup();
    if let Hosts::Listed(listed) = hosts {
        let missing: Vec<&str> = (listed.iter())
            .filter(|h| !names.contains(h))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            say_err!("note: no stored results for {}", missing.join(", "));
        }
        names = listed
            .iter()
            .filter(|h| names.contains(h))
            .cloned()
            .collect();
    }
    names
}

/// A host's figures from its runs, with how a fleet measured it; `None` for a host never
/// measured (its login refused, say), which has nothing to compare.
fn host_figures(
    store: &sshbench::store::Store,
    own: &[RunRecord],
    recommend: Option<(Goal, Grade, Order)>,
) -> Result<Option<HostFigures>> {
    let samples = store.counted_figures(own)?;
    if samples.is_empty() {
        return Ok(None);
    }
    let mut figures = HostFigures::of(&Scope::build(own, &samples), recommend);
    figures.way = way_of(store, own)?;
    Ok(Some(figures))
}

/// How a fleet measured a host: its newest run's way (a fallback's full run is newer
/// than its contenders').
fn way_of(
    store: &sshbench::store::Store,
    runs: &[RunRecord],
) -> Result<Option<sshbench::model::fleet::HostWay>> {
    let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    let mut ways = store.ways_of_runs(&ids)?;
    ways.sort_by_key(|(id, _)| *id);
    Ok(ways.pop().map(|(_, w)| w))
}

/// Each host's figures (with its own recommendation when `recommend` asks for one);
/// `None` when the selection is not a fleet view.
pub fn load(
    selection: &SelectionArgs,
    recommend: Option<(Goal, Grade, Order)>,
) -> Result<Option<Vec<HostFigures>>> {
    let text = hosts_file(selection)?;
    let Some((hosts, since)) =
        args::fleet(selection, text.as_deref()).map_err(sshbench::cli::Usage)?
    else {
        return Ok(None);
    };
    let store = open_existing(&selection.db.path, MEASURE_FIRST)?;
    let runs = store.runs_of(&|d| hosts.covers(d), since.as_deref())?;
    let names = destinations(&hosts, &runs);
    // Hosts are read side by side, each reader with a connection of its own.
    let readers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let db = super::db_location(&selection.db.path)?;
    let read = |k: usize| -> Result<Vec<(usize, Option<HostFigures>)>> {
        let store = sshbench::store::Store::connect(&db)?;
        let mut out = Vec::new();
        for (i, name) in names.iter().enumerate().skip(k).step_by(readers) {
            let own: Vec<RunRecord> = runs
                .iter()
                .filter(|r| &r.destination == name)
                .cloned()
                .collect();
            out.push((i, host_figures(&store, &own, recommend)?));
        }
        Ok(out)
    };
    let mut read_all: Vec<(usize, Option<HostFigures>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..readers).map(|k| s.spawn(move || read(k))).collect();
        let parts: Result<Vec<_>> = (workers.into_iter())
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| bail!("a reader of the fleet panicked"))
            })
            .collect();
        parts.map(|p| p.into_iter().flatten().collect())
    })?;
    read_all.sort_by_key(|r| r.0);
    let mut out = Vec::new();
    let mut unmeasured = Vec::new();
    for (i, figures) in read_all {
        match figures {
            Some(f) => out.push(f),
            None => unmeasured.push(names[i].clone()),
        }
    }
    if !unmeasured.is_empty() {
        say_err!("note: no counted samples of {}", unmeasured.join(", "));
    }
    if out.is_empty() {
        bail!("no counted samples of these hosts; `sshbench runs` lists what is stored");
    }
    Ok(Some(out))
}

/// `sshbench fleet status [NAME|ID]`: where a fleet stands, read without changing it.
pub fn fleet(args: sshbench::cli::FleetArgs) -> Result<u8> {
    use sshbench::cli::{FleetCommand, FormatArg};
    use sshbench::views::fleet::status;
    let FleetCommand::Status { fleet, db, format } = args.command;
    if !matches!(format, FormatArg::Table | FormatArg::Json) {
        bail!(sshbench::cli::Usage(anyhow::anyhow!(
            "fleet status prints a table or JSON (--format table|json)"
        )));
    }
    let store = open_existing(&db.path, "a fleet run stores its fleet")?;
    let id = match &fleet {
        None => store.latest_fleet()?,
        Some(f) => match store.fleet_named(f)? {
            Some(id) => Some(id),
            None => f.parse::<i64>().ok(),
        },
    };
    let what = match &fleet {
        Some(f) => format!("no fleet {f} in {}", store.describe()),
        None => format!("no fleet run in {}", store.describe()),
    };
    let record = match id {
        Some(id) => store.fleet(id)?,
        None => None,
    };
    let record = record.ok_or_else(|| anyhow::anyhow!("{what}"))?;
    let clock = store.fleet_clock(record.id)?;
    let view = status::view(&record, &clock, &store.fleet_kinds(record.id)?);
    super::emit(&status::document(&view), &view, format, false)
}
