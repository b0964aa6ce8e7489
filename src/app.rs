//! The edge where the stages meet the terminal and the database: builds the pipeline for
//! a command, shows progress on stderr and the results on stdout.

use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use sshbench::affinity::{self, Placement};
use sshbench::analysis;
use sshbench::cancel::Cancel;
use sshbench::cli::{
    AlgosArgs, AlgosFormat, AllowArg, CompareArgs, FormatArg, GoalArg, ModeArg, RecommendArgs,
    RunArgs, RunsArgs, ShowArgs, SortArg, SummaryArgs, Which,
};
use sshbench::cli::{ReportArgs, SandboxArgs};
use sshbench::config::{RunConfig, RunOptions};
use sshbench::lab::LabOptions;
use sshbench::machine;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::measure::{FailureKind, Sample, Transport};
use sshbench::offer::catalogue::Grade;
use sshbench::offer::server::{self, ProbeError, ServerOffer};
use sshbench::offer::{self, AlgoLists, client};
use sshbench::plan::{self, Plan, PlanInput};
use sshbench::runner::{self, Abort, End, Event, RunSettings, Sink};
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use sshbench::store::{self, NewRun, Store};
use sshbench::suite::Mode;
use sshbench::target::{self, Target};
use sshbench::views::algos::{self as algos_view, AlgosReport};
use sshbench::views::export::{self, Document, Format, Style};
use sshbench::views::recommend::{self, Goal};
use sshbench::views::report::{self, Scope, ShowOptions, SortKey};
use sshbench::views::{charts, compare, html};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn find_ssh() -> Result<PathBuf> {
    sandbox::find_on_path("ssh").ok_or_else(|| {
        anyhow!("no ssh client on PATH; install OpenSSH (Debian: apt-get install openssh-client)")
    })
}

fn db_path(given: &Option<PathBuf>) -> Result<PathBuf> {
    given.clone().map_or_else(store::default_path, Ok)
}

/// Progress on stderr: a bar on a terminal, one line per sample otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    verbose: bool,
    rounds: u32,
}

impl Progress {
    fn new(quiet: bool, verbose: bool, rounds: u32) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:25}] {pos}/{len} ETA {eta} {wide_msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        });
        Progress {
            bar,
            quiet,
            verbose,
            rounds,
        }
    }

    fn say(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    fn event(&self, e: Event) {
        if self.quiet {
            return;
        }
        match e {
            Event::Starting {
                round,
                done,
                total,
                request,
            } => {
                if let Some(b) = &self.bar {
                    b.set_length(total as u64);
                    b.set_position(done as u64);
                    b.set_message(format!(
                        "{} {} {}",
                        self.round_label(round),
                        request.mode,
                        request.suite.label()
                    ));
                }
            }
            Event::Finished {
                round,
                done,
                total,
                sample,
                retrying,
            } => {
                let line = format!(
                    "[{done}/{total}] {} {}{}",
                    self.round_label(round),
                    describe(sample, self.verbose),
                    if retrying { " (retrying)" } else { "" }
                );
                match &self.bar {
                    Some(b) => {
                        b.set_position(done as u64);
                        b.set_prefix(describe(sample, false));
                        if self.verbose || retrying {
                            b.println(line);
                        }
                    }
                    None => eprintln!("{line}"),
                }
            }
        }
    }

    fn round_label(&self, round: u32) -> String {
        if round == 0 {
            "warm-up".into()
        } else {
            format!("round {round}/{}", self.rounds)
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn describe(s: &Sample, verbose: bool) -> String {
    let figure = match (s.outcome.is_success(), analysis::figure(s)) {
        (true, Some(v)) => format!(
            "{:.1} {}",
            report::display_value(s.mode, v),
            report::unit(s.mode)
        ),
        (true, None) => format!("ok in {:.1} ms", s.wall.as_secs_f64() * 1e3),
        (false, _) if verbose => format!(
            "{}: {}",
            s.outcome.label(),
            s.outcome.message().unwrap_or("")
        ),
        (false, _) => s.outcome.label().to_string(),
    };
    format!("{} {} {}", s.mode, s.suite.label(), figure)
}

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

/// Read a real destination's offer: directly, or through ssh when a proxy is in the way.
fn probe_remote(
    ssh: &Path,
    t: &Target,
    r: &target::Resolved,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    if r.via_proxy {
        server::probe_via_ssh(ssh, t, timeout)
    } else {
        server::probe(&r.hostname, r.port, timeout)
    }
}

/// How to set up the local sandbox: its lab and where its two ends run.
#[derive(Clone, Copy, Debug, Default)]
struct SandboxSetup {
    lab: LabOptions,
    placement: Placement,
}

/// Start the sandbox; with a split placement its sshd runs on the server's CPUs, and the
/// split is returned so that the caller can keep its clients on the others.
fn start_sandbox(
    client: &client::ClientOffer,
    setup: SandboxSetup,
) -> Result<(Sandbox, Option<affinity::Split>)> {
    let split = affinity::plan(setup.placement);
    let sb = Sandbox::start(&SandboxOptions {
        candidates: offer::candidates(client),
        lab: setup.lab,
        server_cpus: split.as_ref().map(|s| s.server.clone()),
        ..SandboxOptions::default()
    })?;
    Ok((sb, split))
}

/// ", sshd on CPU 1, clients on CPU 0" for a split placement.
fn placement_label(split: Option<&affinity::Split>, client_side: &str) -> String {
    split.map_or_else(String::new, |s| {
        let cpus = |l: &[usize]| {
            let word = if l.len() == 1 { "CPU" } else { "CPUs" };
            format!("{word} {}", affinity::format_list(l))
        };
        format!(
            ", sshd on {}, {client_side} on {}",
            cpus(&s.server),
            cpus(&s.client)
        )
    })
}

/// The server side of a run: where it is, what it offers, what it runs.
struct Server {
    target: Target,
    offer: Option<AlgoLists>,
    version: Option<String>,
    /// Whether its offer includes strict KEX (the Terrapin countermeasure).
    strict_kex: Option<bool>,
    resolved: Option<target::Resolved>,
    /// Kept alive for the whole run; dropping it tears the sandbox down.
    _sandbox: Option<Sandbox>,
}

fn connect_server(
    destination: Option<&str>,
    ssh: &Path,
    client: &client::ClientOffer,
    probe_timeout: Duration,
    mock: bool,
    setup: SandboxSetup,
    progress: &Progress,
) -> Result<Server> {
    let Some(dest) = destination else {
        let (sb, split) = start_sandbox(client, setup)?;
        if let Some(s) = &split {
            // This thread starts every ssh of the run (and the threads feeding them).
            affinity::pin_thread(&s.client).context("keeping the client off sshd's CPUs")?;
        }
        progress.say(&format!(
            "server: local sandbox {} on {}:{} (private dir {}){}{}",
            sb.sshd().display(),
            sb.host(),
            sb.port(),
            sb.dir().display(),
            placement_label(split.as_ref(), "ssh"),
            lab_label(&setup.lab)
        ));
        let probed = server::probe(sb.host(), sb.port(), probe_timeout).ok();
        let strict_kex = probed.as_ref().map(|o| o.kexinit.strict_kex());
        let version = probed.map(|o| o.banner);
        let mut target = Target::sandbox(sb.ssh_config(), sandbox::ALIAS);
        target.label = target::sandbox_label(setup.placement, &setup.lab);
        let resolved = target::resolve(ssh, &target)?;
        return Ok(Server {
            target,
            offer: Some(sb.offered().clone()),
            version,
            strict_kex,
            resolved: Some(resolved),
            _sandbox: Some(sb),
        });
    };
    let t = Target::parse(dest)?;
    let r = target::resolve(ssh, &t)?;
    progress.say(&format!(
        "server: {} ({}@{} port {})",
        t.label, r.user, r.hostname, r.port
    ));
    let (offer, version, strict_kex) = if mock {
        (None, None, None)
    } else {
        match probe_remote(ssh, &t, &r, probe_timeout) {
            Ok(o) => {
                progress.say(&format!("server offer: {} ({})", o.banner, o.method));
                let strict = o.kexinit.strict_kex();
                if !strict {
                    progress.say(&format!("warning: {}", report::TERRAPIN_NOTE));
                }
                (Some(o.kexinit.lists()), Some(o.banner), Some(strict))
            }
            Err(e) => {
                progress.say(&format!(
                    "warning: cannot read the server's offer ({e}); planning from the client's lists"
                ));
                (None, None, None)
            }
        }
    };
    Ok(Server {
        target: t,
        offer,
        version,
        strict_kex,
        resolved: Some(r),
        _sandbox: None,
    })
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
                .filter(|s| !matches!(s.sample.outcome, sshbench::measure::Outcome::Failed { .. }))
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
    let (doc, json) = report::show(
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

/// `sshbench runs`.
pub fn runs(args: RunsArgs) -> Result<u8> {
    let path = db_path(&args.db)?;
    if !path.exists() {
        bail!(
            "no database at {} yet; `sshbench run` creates it",
            path.display()
        );
    }
    let store = Store::open(&path)?;
    if let Some(id) = args.delete {
        if !store.delete_run(id)? {
            bail!("no run {id} in {}", path.display());
        }
        eprintln!("deleted run {id}");
        return Ok(0);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "ID",
        "Started (UTC)",
        "Status",
        "Destination",
        "Suites",
        "Samples",
        "Client",
    ]);
    for r in store.runs()? {
        t.add_row(vec![
            r.id.to_string(),
            r.started_at
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            r.status.clone(),
            r.destination.clone(),
            r.plan.len().to_string(),
            r.samples.to_string(),
            r.client_version.split(',').next().unwrap_or("").to_string(),
        ]);
    }
    let _ = writeln!(std::io::stdout().lock(), "{t}");
    Ok(0)
}

/// " (lab: ...)" for messages.
fn lab_label(lab: &LabOptions) -> String {
    let parts = lab.describe();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" (lab: {})", parts.join(", "))
    }
}

/// `sshbench sandbox`: the sandbox for manual use and benchmark scripts.
pub fn sandbox(args: SandboxArgs) -> Result<u8> {
    let lab = LabOptions {
        cpu: args.cpu,
        rate_kbit: args
            .rate
            .as_deref()
            .map(sshbench::lab::parse_rate)
            .transpose()?,
    };
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let client = client::query(&find_ssh()?)?;
    let (sb, split) = start_sandbox(
        &client,
        SandboxSetup {
            lab,
            placement: sshbench::config::placement(args.cpus),
        },
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", sb.ssh_config().display())?;
    out.flush()?;
    drop(out);
    eprintln!(
        "sandbox sshd {} listening on {}:{}{}{}\nconnect with: ssh -F {} {}\nCtrl-C stops it",
        sb.sshd().display(),
        sb.host(),
        sb.port(),
        placement_label(split.as_ref(), "clients belong"),
        lab_label(&lab),
        sb.ssh_config().display(),
        sandbox::ALIAS
    );
    while !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(sb);
    Ok(0)
}

/// `sshbench algos`.
pub fn algos(args: AlgosArgs) -> Result<u8> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    let ssh = find_ssh()?;
    let client = client::query(&ssh)?;
    let (label, server) = match &args.destination {
        None => {
            let (sb, _) = start_sandbox(&client, SandboxSetup::default())?;
            let o = server::probe(sb.host(), sb.port(), timeout);
            (target::SANDBOX.to_string(), o)
        }
        Some(dest) => {
            let t = Target::parse(dest)?;
            let r = target::resolve(&ssh, &t)?;
            (t.label.clone(), probe_remote(&ssh, &t, &r, timeout))
        }
    };
    let (server, server_error) = match server {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let rows = offer::compare(
        &client.lists,
        server.as_ref().map(|s| s.kexinit.lists()).as_ref(),
        server.as_ref().map(|s| s.kexinit.strict_kex()),
    );
    let report = AlgosReport {
        destination: &label,
        client: &client.version,
        server: server.as_ref(),
        server_error,
        algorithms: &rows,
    };
    let text = match args.format {
        AlgosFormat::Table => algos_view::render_table(&report),
        AlgosFormat::Json => algos_view::render_json(&report),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if server.is_some() { 0 } else { 1 })
}

// ---- Reports over stored results -------------------------------------------------

fn open_existing(db: &Option<PathBuf>) -> Result<Store> {
    let path = db_path(db)?;
    if !path.exists() {
        bail!(
            "no results yet: {} does not exist; measure with `sshbench run` first",
            path.display()
        );
    }
    Store::open(&path)
}

fn check_since(since: &Option<String>) -> Result<()> {
    if let Some(s) = since {
        let ok = s.len() >= 10
            && s.as_bytes()[..10].iter().enumerate().all(|(i, c)| {
                if i == 4 || i == 7 {
                    *c == b'-'
                } else {
                    c.is_ascii_digit()
                }
            })
            && s[10..]
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, 'T' | ':' | '.' | 'Z'));
        if !ok {
            bail!("--since {s:?} is not a date like 2026-11-30 or 2026-11-30T14:00");
        }
    }
    Ok(())
}

/// The stored results a report covers, aggregated per suite.
fn load_scope(
    store: &Store,
    sel: &store::Selection,
) -> Result<(Vec<store::RunRecord>, Vec<analysis::SuiteStats>, String)> {
    let (runs, samples) = store.select(sel)?;
    if runs.is_empty() {
        let all = store.runs()?;
        let known: Vec<String> = all
            .iter()
            .map(|r| r.destination.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        bail!(
            "no stored runs match; destinations with results: {}",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        );
    }
    // Every selected run is of one destination (as stored), unless a single run was
    // asked for, which is of one too.
    let destination = runs
        .last()
        .map(|r| r.destination.clone())
        .unwrap_or_default();
    let stats = analysis::aggregate(samples.iter().map(|s| &s.sample));
    Ok((runs, stats, destination))
}

/// The stored results a report command covers: its selection, from its database.
fn load_which(which: &Which) -> Result<(Vec<store::RunRecord>, Vec<analysis::SuiteStats>, String)> {
    let sel = selection(which)?;
    let store = open_existing(&which.db)?;
    load_scope(&store, &sel)
}

fn selection(sel: &Which) -> Result<store::Selection> {
    check_since(&sel.since)?;
    Ok(store::Selection {
        destination: sel.destination.clone(),
        run: sel.run,
        since: sel.since.clone(),
    })
}

fn style() -> Style {
    let tty = std::io::stdout().is_terminal();
    Style {
        width: if tty {
            comfy_table::Table::new().width()
        } else {
            None
        },
        color: tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
    }
}

fn emit(doc: &Document, json: &serde_json::Value, format: FormatArg) -> Result<u8> {
    let text = export::render(doc, json, format_of(format), style());
    // A closed pipe (e.g. `| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}

fn modes_of(m: &[ModeArg]) -> Vec<Mode> {
    m.iter().map(|m| Mode::from(*m)).collect()
}

/// `sshbench show`.
pub fn show(args: ShowArgs) -> Result<u8> {
    let top = match args.top.as_str() {
        "all" => None,
        n => Some(
            n.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| anyhow!("--top {n:?}: give a positive number or `all`"))?,
        ),
    };
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (doc, json) = report::show(
        &scope,
        &ShowOptions {
            chart: args.chart.then(|| args.ascii || !utf8_locale()),
            modes: modes_of(&args.mode),
            top,
            worst: args.worst,
            sort: match args.sort {
                SortArg::Fastest => SortKey::Speed,
                SortArg::Cpu => SortKey::Cpu,
                SortArg::Name => SortKey::Name,
            },
        },
    );
    emit(&doc, &json, args.sel.format)
}

/// `sshbench summary`.
pub fn summary(args: SummaryArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (doc, json) = report::summary(&scope, args.top.max(1));
    emit(&doc, &json, args.sel.format)
}

/// `sshbench recommend`.
pub fn recommend(args: RecommendArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let goal = match args.goal {
        GoalArg::Send => Goal::Send,
        GoalArg::Receive => Goal::Receive,
        GoalArg::Connect => Goal::Connect,
        GoalArg::Balanced => Goal::Balanced,
        GoalArg::Interactive => Goal::Interactive,
    };
    let max = match args.allow {
        None => Grade::Acceptable,
        Some(AllowArg::Legacy) => Grade::Legacy,
        Some(AllowArg::Broken) => Grade::Broken,
    };
    let (doc, json) = recommend::recommend(&scope, goal, max);
    emit(&doc, &json, args.sel.format)
}

/// `run:ID` or a destination.
fn compare_side(s: &str) -> Result<store::Selection> {
    Ok(match s.strip_prefix("run:") {
        Some(id) => store::Selection {
            run: Some(
                id.parse()
                    .map_err(|_| anyhow!("{s:?}: run:ID needs a number"))?,
            ),
            ..Default::default()
        },
        None => store::Selection {
            destination: Some(s.to_string()),
            ..Default::default()
        },
    })
}

/// `sshbench compare`.
pub fn compare(args: CompareArgs) -> Result<u8> {
    let store = open_existing(&args.db)?;
    let (ra, sa, da) = load_scope(&store, &compare_side(&args.a)?)?;
    let (rb, sb, db) = load_scope(&store, &compare_side(&args.b)?)?;
    let label = |s: &str, d: String| {
        if s.starts_with("run:") {
            format!("{s} ({d})")
        } else {
            d
        }
    };
    let a = Scope {
        destination: label(&args.a, da),
        runs: &ra,
        stats: sa,
    };
    let b = Scope {
        destination: label(&args.b, db),
        runs: &rb,
        stats: sb,
    };
    let (doc, json) = compare::compare(&a, &b);
    emit(&doc, &json, args.format)
}

/// Whether the locale says UTF-8 (for Unicode bars).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| v.to_ascii_uppercase().replace('-', "").contains("UTF8"))
}

/// `sshbench report`.
pub fn report(args: ReportArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (rec_doc, _) = recommend::recommend(&scope, Goal::Balanced, Grade::Acceptable);
    let recommendation = export::render(&rec_doc, &(), Format::Table, Style::default());
    let (_, summary_json) = report::summary(&scope, 5);
    let warnings: Vec<String> = summary_json["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let charts = html::charts(&scope)?;
    let page = html::render(&scope, &recommendation, &warnings, &charts)?;
    std::fs::write(&args.output, &page)
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "wrote {} ({} KiB)",
        args.output.display(),
        page.len() / 1024
    );
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in &charts {
            let path = dir.join(format!("{}.png", c.name));
            charts::save_png(&c.svg, &path)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(0)
}
