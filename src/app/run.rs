//! `sshbench run`: resume or start a run, measure it into the store, print its table.

use super::progress::Progress;
use super::server::{SandboxSetup, Server, connect_server};
use super::{db_path, emit, find_ssh};
use anyhow::{Context, Result, anyhow, bail};
use sshbench::cli::config::RunConfig;
use sshbench::cli::{FormatArg, RunArgs};
use sshbench::measure::Transport;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::measure::window;
use sshbench::model::{AlgoLists, FailureKind, Mode, Outcome, RunOptions, Sample};
use sshbench::offer::client;
use sshbench::plan::{self, Plan, PlanInput};
use sshbench::runner::{self, Abort, End, RunSettings, Sink};
use sshbench::store::{self, NewRun, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::sys::machine;
use sshbench::target::Target;
use sshbench::views::headline;
use sshbench::views::scope::Scope;
use sshbench::views::show::{self, ShowOptions, SortKey};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Stores each sample as it arrives.
struct StoreSink<'a> {
    store: &'a Store,
    run_id: i64,
}

impl<'a> StoreSink<'a> {
    fn new(store: &'a Store, run_id: i64) -> Self {
        StoreSink { store, run_id }
    }
}

impl Sink for StoreSink<'_> {
    fn record(&mut self, item: usize, round: u32, sample: &Sample) -> Result<()> {
        self.store.add_sample(self.run_id, item, round, sample)
    }
}

/// A stored run being finished: its record, options and destination.
type Resumed = (store::RunRecord, RunOptions, Target);

/// The run `--resume` asks for, with the options and destination it was started with.
fn load_resumed(path: &Path, id: Option<i64>) -> Result<Resumed> {
    if !path.exists() {
        bail!(
            "nothing to resume: the database {} does not exist",
            path.display()
        );
    }
    let store = Store::open(path)?;
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
    Ok((run, options, target))
}

/// The plan for the client and the server's offer (`None`: not known yet, the client's
/// lists only).
fn build_plan(
    client: &client::ClientOffer,
    server: Option<&AlgoLists>,
    sandbox: bool,
    options: &RunOptions,
) -> Result<Plan> {
    plan::build(&PlanInput {
        client,
        server,
        filters: &options.filters,
        modes: &options.modes,
        vary_hostkeys: sandbox,
        full: options.full,
        compression: options.compression,
        workload: &options.workload,
    })
}

fn make_plan(
    resumed: Option<&Resumed>,
    client: &client::ClientOffer,
    srv: &Server,
    options: &RunOptions,
) -> Result<Plan> {
    match resumed {
        Some((run, _, _)) => Ok(Plan {
            items: run.plan.clone(),
            notes: Vec::new(),
        }),
        None => build_plan(client, srv.offer.as_ref(), srv.target.is_sandbox, options),
    }
}

/// What a run starts from: its id, seed, and the samples it already has.
type Start = (i64, u64, Vec<(usize, u32, Sample)>);

/// Reopen a resumed run, keeping its successful and refused samples (failed slots,
/// say while the network was down, are measured again).
fn reopen(store: &Store, run: &store::RunRecord, progress: &Progress) -> Result<Start> {
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

struct NewRunInput<'a> {
    cfg: &'a RunConfig,
    client: &'a client::ClientOffer,
    srv: &'a Server,
    options: &'a RunOptions,
    plan: &'a Plan,
    ssh: &'a Path,
    cancel: &'a Cancel,
    progress: &'a Progress,
}

fn create(store: &Store, i: NewRunInput) -> Result<Start> {
    let seed = i.cfg.seed.unwrap_or_else(|| fastrand::u64(..));
    let machine = machine::this_machine();
    let r = i.srv.resolved.as_ref();
    let id = store.create_run(&NewRun {
        destination: &i.srv.target.label,
        target_json: serde_json::to_string(&i.srv.target)?,
        resolved: r.map(|r| (r.hostname.as_str(), r.port, r.user.as_str())),
        client_version: &i.client.version.raw,
        server_version: i.srv.version.as_deref(),
        server_strict_kex: i.srv.strict_kex,
        machine: &machine,
        options_json: serde_json::to_string(i.options)?,
        plan: &i.plan.items,
        seed,
        client_defaults: &r.map(|r| r.defaults.clone()).unwrap_or_default(),
    })?;
    if !i.cfg.mock_transport {
        record_server_window(store, id, i.ssh, i.srv, i.cancel)?;
    }
    match i.srv.tcp_rate() {
        Some(Ok(rate)) => {
            let mb = rate / 1e6;
            i.progress
                .say(&format!("path: one raw TCP stream moves {mb:.1} MB/s"));
            store.set_tcp_rate(id, rate)?;
        }
        Some(Err(e)) => i
            .progress
            .say(&format!("the path's raw TCP rate is unknown: {e:#}")),
        None => {}
    }
    Ok((id, seed, Vec::new()))
}

/// Read the server's session channel window (one `ssh -vv` connection) and store it
/// with the run; the window verdict needs it, and a server that does not say leaves it
/// unknown.
fn record_server_window(
    store: &Store,
    run_id: i64,
    ssh: &Path,
    srv: &Server,
    cancel: &Cancel,
) -> Result<()> {
    let timeout = std::time::Duration::from_secs(30);
    match window::server_window(ssh, &srv.target, timeout, cancel) {
        Some(w) => store.set_server_window(run_id, w),
        None => Ok(()),
    }
}

/// The transport for the run's `options` (a resumed run's own, not the command line's).
fn transport(
    cfg: &RunConfig,
    options: &RunOptions,
    ssh: PathBuf,
    srv: &Server,
    payload: Payload,
) -> Box<dyn Transport> {
    if cfg.mock_transport {
        Box::new(Mock::default())
    } else {
        let workloads = options.workload.clone();
        Box::new(OpenSsh::new(ssh, srv.target.clone(), payload).with_workloads(workloads))
    }
}

/// The run's end as the user sees it: `Ok(Some(code))` to exit now, `Ok(None)` to print
/// the results.
fn conclude(
    result: Result<End, Abort>,
    run_id: i64,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<Option<u8>> {
    match result {
        Ok(End::Complete) => Ok(None),
        Ok(End::Budget) => {
            progress.say("time budget reached; finish with `sshbench run --resume`");
            Ok(None)
        }
        Err(Abort::Cancelled) => {
            eprintln!(
                "sshbench: interrupted; run {run_id} keeps every finished sample (`sshbench run --resume` finishes it)"
            );
            Ok(Some(cancel.exit_code().unwrap_or(130) as u8))
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
}

fn status_of(result: &Result<End, Abort>) -> &'static str {
    match result {
        Ok(End::Complete) => "complete",
        Ok(End::Budget) => "budget",
        Err(Abort::Cancelled) => "interrupted",
        Err(_) => "failed",
    }
}

/// The run's rounds, then the connect checks and the parallel streams, every sample
/// stored.
fn rounds_then_streams(
    plan: &Plan,
    seed: u64,
    transport: &mut dyn Transport,
    cx: &super::streams::Context,
) -> Result<End, Abort> {
    let settings = RunSettings::new(cx.options, seed);
    let mut sink = StoreSink::new(cx.store, cx.run_id);
    let rounds = runner::run(
        plan,
        &settings,
        transport,
        cx.cancel,
        &mut sink,
        cx.previous,
        &mut |e| cx.progress.event(e),
    );
    super::streams::after_rounds(rounds, cx, transport, &mut sink)
}

/// The run's table on stdout.
fn print_results(store: &Store, run_id: i64, cfg: &RunConfig) -> Result<u8> {
    let (runs, samples) = store.select(&store::Selection {
        run: Some(run_id),
        ..Default::default()
    })?;
    if samples.is_empty() {
        println!("No counted samples yet (only warm-ups); finish with `sshbench run --resume`.");
        return Ok(0);
    }
    let scope = Scope::build(&runs, &samples);
    if cfg.tables {
        let opts = ShowOptions {
            chart: None,
            modes: Mode::ALL.to_vec(),
            top: None,
            worst: false,
            sort: SortKey::Speed,
        };
        let (doc, view) = show::show(&scope, &opts);
        emit(&doc, &view, FormatArg::Table)?;
    } else {
        let (doc, view) = headline::headline(&scope);
        emit(&doc, &view, FormatArg::Table)?;
    }
    if !cfg.quiet {
        eprintln!(
            "more: sshbench show (every suite) / summary / recommend (results of every run of {} are combined)",
            scope.destination
        );
    }
    Ok(0)
}

fn announce(run_id: i64, seed: u64, plan: &Plan, options: &RunOptions, path: &Path) -> String {
    format!(
        "run {run_id}: {} measurements × {} rounds after {} warm-ups, seed {seed}, stored in {}",
        plan.items.len(),
        options.rounds,
        runner::leads(plan).iter().filter(|l| l.is_none()).count(),
        path.display()
    )
}

/// The server side: a resumed run's destination, else the one given (none: the sandbox).
fn server_for(
    cfg: &RunConfig,
    resumed: Option<&Resumed>,
    options: &RunOptions,
    ssh: &Path,
    client: &client::ClientOffer,
    progress: &Progress,
) -> Result<Server> {
    // A resumed run goes where it went, with the ssh options it had.
    let destination: Option<Target> = match resumed {
        Some((_, _, t)) => (!t.is_sandbox).then(|| t.clone()),
        None => match &cfg.destination {
            Some(d) => Some(Target::parse(d)?.with_ssh_args(cfg.ssh_args.clone())),
            None => None,
        },
    };
    let setup = SandboxSetup {
        lab: options.lab,
        placement: options.sandbox_cpus,
    };
    let probe_timeout = Duration::from_secs(options.timeout_s.min(15));
    connect_server(
        destination,
        ssh,
        client,
        probe_timeout,
        cfg.mock_transport,
        setup,
        progress,
    )
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
    let resumed = cfg.resume.map(|id| load_resumed(&path, id)).transpose()?;
    let options = resumed
        .as_ref()
        .map_or_else(|| cfg.options.clone(), |r| r.1.clone());
    let progress = Progress::new(cfg.quiet, cfg.verbose, options.rounds);
    progress.say(&format!("client: {}", client.version.raw));
    if resumed.is_none() {
        // Filters that name nothing the client knows fail here, before a sandbox starts
        // or a server is probed.
        build_plan(&client, None, cfg.destination.is_none(), &options)?;
    }
    let srv = server_for(&cfg, resumed.as_ref(), &options, &ssh, &client, &progress)?;
    let plan = make_plan(resumed.as_ref(), &client, &srv, &options)?;
    for note in &plan.notes {
        progress.say(&format!("note: {note}"));
    }
    let store = Store::open(&path)?;
    let (run_id, seed, previous) = match &resumed {
        Some((run, _, _)) => reopen(&store, run, &progress)?,
        None => create(
            &store,
            NewRunInput {
                cfg: &cfg,
                client: &client,
                srv: &srv,
                options: &options,
                plan: &plan,
                ssh: &ssh,
                cancel: &cancel,
                progress: &progress,
            },
        )?,
    };
    progress.say(&announce(run_id, seed, &plan, &options, &path));
    let payload = Payload::new(options.payload, 1 << 20, seed);
    let mut transport = transport(&cfg, &options, ssh, &srv, payload);
    let cx = super::streams::Context {
        store: &store,
        run_id,
        options: &options,
        items: plan.items.len(),
        previous: &previous,
        cancel: &cancel,
        progress: &progress,
    };
    let result = rounds_then_streams(&plan, seed, transport.as_mut(), &cx);
    progress.finish();
    // Tear the sandbox down before printing: nothing of it outlives the measurements.
    drop(srv);
    store.set_status(run_id, status_of(&result))?;
    match conclude(result, run_id, &cancel, &progress)? {
        Some(code) => Ok(code),
        None => print_results(&store, run_id, &cfg),
    }
}
