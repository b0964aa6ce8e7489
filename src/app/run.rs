//! `sshbench run`: resume or start a run, measure it into the store, print its table.

use super::progress::Progress;
use super::server::{SandboxSetup, connect_server};
use super::{db_path, emit, find_ssh};
use anyhow::{Context, Result, anyhow, bail};
use sshbench::analysis;
use sshbench::cli::config::RunConfig;
use sshbench::cli::{FormatArg, RunArgs};
use sshbench::measure::Transport;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::model::{FailureKind, Mode, RunOptions, Sample};
use sshbench::offer::client;
use sshbench::plan::{self, Plan, PlanInput};
use sshbench::runner::{self, Abort, End, RunSettings, Sink};
use sshbench::store::{self, NewRun, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::sys::machine;
use sshbench::target::Target;
use sshbench::views::scope::Scope;
use sshbench::views::show::{self, ShowOptions, SortKey};
use std::time::Duration;

/// Stores each sample as it arrives.
struct StoreSink<'a> {
    store: &'a Store,
    run_id: i64,
}

impl Sink for StoreSink<'_> {
    fn record(&mut self, item: usize, round: u32, sample: &Sample) -> Result<()> {
        self.store.add_sample(self.run_id, item, round, sample)
    }
}

/// `sshbench run`. The exit code for a run stopped by a signal is 128 + signal.
pub fn run(args: RunArgs) -> Result<u8> {
    let cfg = RunConfig::from_args(args)?;
    let path = db_path(&cfg.db)?;
    store::check(&path)?;
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let ssh = find_ssh()?;
    let client = client::query(&ssh)?;

    // A resumed run brings its own destination, options, plan and seed.
    let resumed = match cfg.resume {
        None => None,
        Some(id) => {
            if !path.exists() {
                bail!(
                    "nothing to resume: the database {} does not exist",
                    path.display()
                );
            }
            let store = Store::open(&path)?;
            let id = match id {
                Some(id) => id,
                None => store
                    .latest_unfinished()?
                    .ok_or_else(|| anyhow!("no interrupted run to resume in {}", path.display()))?,
            };
            let run = store
                .run(id)?
                .ok_or_else(|| anyhow!("no run {id} in {}", path.display()))?;
            if run.status == "complete" {
                bail!("run {id} is already complete");
            }
            let options: RunOptions =
                serde_json::from_str(&run.options_json).context("reading the run's options")?;
            let target: Target =
                serde_json::from_str(&run.target_json).context("reading the run's destination")?;
            Some((run, options, target))
        }
    };
    let options = resumed
        .as_ref()
        .map_or_else(|| cfg.options.clone(), |r| r.1.clone());
    let progress = Progress::new(cfg.quiet, cfg.verbose, options.rounds);
    progress.say(&format!("client: {}", client.version.raw));
    let destination: Option<String> = match &resumed {
        Some((_, _, t)) if t.is_sandbox => None,
        Some((_, _, t)) => Some(t.label.clone()),
        None => cfg.destination.clone(),
    };
    let probe_timeout = Duration::from_secs(options.timeout_s.min(15));
    let srv = connect_server(
        destination.as_deref(),
        &ssh,
        &client,
        probe_timeout,
        cfg.mock_transport,
        SandboxSetup {
            lab: options.lab,
            placement: options.sandbox_cpus,
        },
        &progress,
    )?;

    let plan = match &resumed {
        Some((run, _, _)) => Plan {
            items: run.plan.clone(),
            notes: Vec::new(),
        },
        None => plan::build(&PlanInput {
            client: &client,
            server: srv.offer.as_ref(),
            filters: &options.filters,
            modes: &options.modes,
            vary_hostkeys: srv.target.is_sandbox,
            full: options.full,
            compression: options.compression,
        })?,
    };
    for note in &plan.notes {
        progress.say(&format!("note: {note}"));
    }

    let store = Store::open(&path)?;
    let (run_id, seed, previous) = match &resumed {
        Some((run, _, _)) => {
            store.set_status(run.id, "running")?;
            // Failed slots (say, while the network was down) are measured again.
            let previous: Vec<(usize, u32, Sample)> = store
                .samples(&[run.id])?
                .into_iter()
                .filter(|s| !matches!(s.sample.outcome, sshbench::model::Outcome::Failed { .. }))
                .map(|s| (s.item, s.round, s.sample))
                .collect();
            progress.say(&format!(
                "resuming run {} ({} samples already stored)",
                run.id,
                previous.len()
            ));
            (run.id, run.seed, previous)
        }
        None => {
            let seed = cfg.seed.unwrap_or_else(|| fastrand::u64(..));
            let machine = machine::this_machine();
            let r = srv.resolved.as_ref();
            let id = store.create_run(&NewRun {
                destination: &srv.target.label,
                target_json: serde_json::to_string(&srv.target)?,
                resolved: r.map(|r| (r.hostname.as_str(), r.port, r.user.as_str())),
                client_version: &client.version.raw,
                server_version: srv.version.as_deref(),
                server_strict_kex: srv.strict_kex,
                machine: &machine,
                options_json: serde_json::to_string(&options)?,
                plan: &plan.items,
                seed,
                client_defaults: &r.map(|r| r.defaults.clone()).unwrap_or_default(),
            })?;
            (id, seed, Vec::new())
        }
    };
    progress.say(&format!(
        "run {run_id}: {} measurements × {} rounds after {} warm-ups, seed {seed}, stored in {}",
        plan.items.len(),
        options.rounds,
        runner::leads(&plan).iter().filter(|l| l.is_none()).count(),
        path.display()
    ));

    let mut transport: Box<dyn Transport> = if cfg.mock_transport {
        Box::new(Mock::default())
    } else {
        Box::new(OpenSsh::new(
            ssh,
            srv.target.clone(),
            Payload::new(options.payload, 1 << 20, seed),
        ))
    };
    let settings = RunSettings::new(&options, seed);
    let mut sink = StoreSink {
        store: &store,
        run_id,
    };
    let result = runner::run(
        &plan,
        &settings,
        transport.as_mut(),
        &cancel,
        &mut sink,
        &previous,
        &mut |e| progress.event(e),
    );
    progress.finish();
    // Tear the sandbox down before printing: nothing of it outlives the measurements.
    drop(srv);

    let status = match &result {
        Ok(End::Complete) => "complete",
        Ok(End::Budget) => "budget",
        Err(Abort::Cancelled) => "interrupted",
        Err(_) => "failed",
    };
    store.set_status(run_id, status)?;
    match result {
        Ok(end) => {
            if end == End::Budget {
                progress.say("time budget reached; finish with `sshbench run --resume`");
            }
        }
        Err(Abort::Cancelled) => {
            eprintln!(
                "sshbench: interrupted; run {run_id} keeps every finished sample (`sshbench run --resume` finishes it)"
            );
            return Ok(cancel.exit_code().unwrap_or(130) as u8);
        }
        Err(Abort::Fatal { kind, message }) => {
            let hint = match kind {
                FailureKind::Network => {
                    "check the host name and port, and that `ssh DEST true` connects"
                }
                FailureKind::HostKey => {
                    "connect once with plain `ssh DEST` to verify and record the server's host key"
                }
                _ => {
                    "sshbench needs key-based login that works without prompts \
                     (try `ssh -o BatchMode=yes DEST true`)"
                }
            };
            bail!("{message}\nhint: {hint}");
        }
        Err(e) => bail!("{e}"),
    }
    let (runs, samples) = store.select(&store::Selection {
        run: Some(run_id),
        ..Default::default()
    })?;
    if samples.is_empty() {
        println!("No counted samples yet (only warm-ups); finish with `sshbench run --resume`.");
        return Ok(0);
    }
    let scope = Scope {
        destination: runs[0].destination.clone(),
        runs: &runs,
        stats: analysis::aggregate(samples.iter().map(|s| &s.sample)),
    };
    let (doc, json) = show::show(
        &scope,
        &ShowOptions {
            chart: None,
            modes: Mode::ALL.to_vec(),
            top: None,
            worst: false,
            sort: SortKey::Speed,
        },
    );
    emit(&doc, &json, FormatArg::Table)?;
    if !cfg.quiet {
        eprintln!(
            "more: sshbench summary / recommend / show --help (results of every run of {} are combined)",
            scope.destination
        );
    }
    Ok(0)
}
