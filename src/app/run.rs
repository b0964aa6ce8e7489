//! `sshbench run`: resume or start a run, measure it into the store, print its table.

use super::fleet_kinds::{Narrow, kind_of};
use super::outcome::{conclude, fatal_error, keystroke_clock_note, print_results};
use super::outcome::{shell_start_note, status_of};
use super::overlap::Overlap;
use super::progress::Progress;
use super::reach::{self, Reach};
use super::resume::{Start, load_resumed, reopen};
use super::server::{SandboxSetup, Server, connect_server};
use super::{db_location, find_ssh};
use anyhow::{Context, Result, anyhow, bail};
use sshbench::cli::RunArgs;
use sshbench::cli::config::RunConfig;
use sshbench::destination::Target;
use sshbench::measure::Transport;
use sshbench::measure::by_client::ByClient;
use sshbench::measure::openssh::{Dialect, DropbearLogin, ServerLog};
use sshbench::measure::payload::Payload;
use sshbench::measure::window::Login;
use sshbench::model::{AlgoLists, ClientKind, Note, RunOptions, Sample, Stop};
use sshbench::offer::client;
use sshbench::plan::{self, Plan, PlanInput};
use sshbench::runner::{self, Abort, End, RunSettings, Sink};
use sshbench::store::{self, ClientSide, NewRun, RunRecord, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::sys::instances::Instances;
use sshbench::sys::machine;
use sshbench::views::notes;
use sshbench::views::scope::counted;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Stores each sample as it arrives, and each raced item's stop.
struct StoreSink<'a> {
    store: &'a Store,
    run_id: i64,
    /// The stops so far; a resumed race decides every stop again from its samples.
    stops: Vec<(usize, Stop)>,
    /// A fleet's host: set when this worker's lease on it ran out.
    lost: Option<&'a AtomicBool>,
}

impl<'a> StoreSink<'a> {
    fn new(store: &'a Store, run_id: i64, lost: Option<&'a AtomicBool>) -> Self {
        StoreSink {
            store,
            run_id,
            stops: Vec::new(),
            lost,
        }
    }
}

impl Sink for StoreSink<'_> {
    fn record(&mut self, item: usize, round: u32, sample: &Sample) -> Result<()> {
        // Another worker may have taken the host over: its samples are its own now.
        if self.lost.is_some_and(|l| l.load(Ordering::SeqCst)) {
            bail!("this worker's lease on the host ran out; another worker measures it");
        }
        // The driver's words ("connection closed") do not say which connection.
        (self.store.add_sample(self.run_id, item, round, sample))
            .with_context(|| format!("run {} in {}", self.run_id, self.store.describe()))
    }

    fn stopped(&mut self, item: usize, stop: Stop) -> Result<()> {
        self.stops.retain(|(i, _)| *i != item);
        self.stops.push((item, stop));
        self.stops.sort_by_key(|(i, _)| *i);
        self.store.set_stops(self.run_id, &self.stops)
    }
}

/// The plan for the client and the server's offer (`None`: not known yet, the client's
/// lists only).
pub(super) fn build_plan(
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
        pairs: options.pairs,
        compression: options.compression,
        workload: &options.workload,
    })
}

/// One client a run measures with: its program and what it can negotiate.
#[derive(Clone)]
pub(super) struct Client {
    pub ssh: PathBuf,
    pub offer: client::ClientOffer,
}

/// The clients `--ssh` names, each asked once what it can negotiate.
fn query_clients(programs: &[PathBuf]) -> Result<Vec<Client>> {
    (programs.iter())
        .map(|p| {
            let offer = client::query(p).with_context(|| format!("--ssh {}", p.display()))?;
            Ok(Client {
                ssh: p.clone(),
                offer,
            })
        })
        .collect()
}

/// The OpenSSH client that reads where the server is and what it offers: the first
/// of `given` that is one, else the `ssh` on PATH.
fn default_client(given: &[Client]) -> Result<Client> {
    if let Some(c) = given.iter().find(|c| c.offer.kind == ClientKind::OpenSsh) {
        return Ok(c.clone());
    }
    let ssh = find_ssh()?;
    let offer = client::query_openssh(&ssh)?;
    Ok(Client { ssh, offer })
}

/// The clients a run measures with: those its options name (`--ssh`; already asked
/// when they are the command's own), else this command's own client.
fn clients_of(sh: &Shared, options: &RunOptions) -> Result<Vec<Client>> {
    if options.clients.is_empty() {
        return Ok(vec![sh.own.clone()]);
    }
    if options.clients.iter().eq(sh.given.iter().map(|c| &c.ssh)) {
        return Ok(sh.given.to_vec());
    }
    query_clients(&options.clients)
}

/// Another user's (or machine's) run, taken over in a shared fleet: its stored suites go
/// on ssh's command line only if this client would plan them itself.
fn plan_of_unsealed(
    run: &RunRecord,
    clients: &[Client],
    srv: &Server,
    options: &RunOptions,
) -> Result<Plan> {
    let own = make_plan(None, clients, srv, options)?;
    // A fleet's host measured by its kind's contenders stored a part of the plan; its
    // samples name items by their place in the stored plan, so that order is kept.
    let part = (run.plan.iter().enumerate())
        .all(|(i, p)| own.items.contains(p) && !run.plan[..i].contains(p));
    if run.plan.is_empty() || !part {
        bail!(
            "run {} was stored by another sshbench, and its plan is not one this client \
             makes for the server: it is not resumed from the database",
            run.id
        );
    }
    Ok(Plan {
        items: run.plan.clone(),
        notes: Vec::new(),
    })
}

/// The plan: each client's suites (what it and the server can negotiate), the clients
/// one after the other, for the rounds to interleave; a resumed run's as stored.
fn make_plan(
    resumed: Option<&RunRecord>,
    clients: &[Client],
    srv: &Server,
    options: &RunOptions,
) -> Result<Plan> {
    if let Some(run) = resumed.filter(|r| !r.sealed) {
        return plan_of_unsealed(run, clients, srv, options);
    }
    if let Some(run) = resumed {
        if let Some(p) = (run.plan.iter()).find(|p| usize::from(p.suite.client) >= clients.len()) {
            bail!(
                "run {} plans a suite for client {} of {}; it cannot be resumed",
                run.id,
                p.suite.client + 1,
                clients.len()
            );
        }
        return Ok(Plan {
            items: run.plan.clone(),
            notes: Vec::new(),
        });
    }
    let mut plan = Plan::default();
    let every: Vec<&AlgoLists> = clients.iter().map(|c| &c.offer.lists).collect();
    for (k, c) in clients.iter().enumerate() {
        let mut own = options.clone();
        if clients.len() > 1 {
            own.filters = plan::filter::known_to(&options.filters, &c.offer.lists, &every)
                .map_err(|(kind, p)| {
                    anyhow!(
                        "{} {p:?}: none of the --ssh clients has it",
                        plan::filter::option(kind)
                    )
                })?;
        }
        let mut own = build_plan(&c.offer, srv.offer.as_ref(), srv.target.is_sandbox, &own)
            .with_context(|| format!("planning for {}", c.ssh.display()))?;
        for item in &mut own.items {
            item.suite.client = k as u8;
        }
        plan.items.extend(own.items);
        for note in own.notes {
            if !plan.notes.contains(&note) {
                plan.notes.push(note);
            }
        }
    }
    Ok(plan)
}

/// What each client of a run that names its clients (`--ssh`) is and uses unforced for
/// the run's server; the first OpenSSH one's lists were read with the server (see
/// [`server_for`]).
fn client_sides(clients: &[Client], srv: &Server) -> Result<Vec<ClientSide>> {
    let opener = clients
        .iter()
        .position(|c| c.offer.kind == ClientKind::OpenSsh);
    (clients.iter().enumerate())
        .map(|(k, c)| {
            // dbclient reads no ssh_config: what it uses unforced is its own order.
            let defaults = match (&srv.resolved, c.offer.kind) {
                (_, ClientKind::Dropbear) => c.offer.lists.clone(),
                (Some(r), _) if opener == Some(k) => r.defaults.clone(),
                _ => sshbench::destination::resolve(&c.ssh, &srv.target)?.defaults,
            };
            Ok(ClientSide {
                version: c.offer.version.raw.clone(),
                defaults,
            })
        })
        .collect()
}

struct NewRunInput<'a> {
    cfg: &'a RunConfig,
    clients: &'a [Client],
    srv: &'a Server,
    options: &'a RunOptions,
    plan: &'a Plan,
    /// The server's session window and shell start-up, read before the run was stored.
    login: Login,
    progress: &'a Progress,
}

fn create(store: &Store, i: NewRunInput) -> Result<Start> {
    let seed = i.cfg.seed.unwrap_or_else(|| fastrand::u64(..));
    let machine = machine::this_machine();
    let r = i.srv.resolved.as_ref();
    let id = store.create_run(&NewRun {
        destination: &i.srv.target.label,
        target: &i.srv.target,
        resolved: r.map(|r| (r.hostname.as_str(), r.port, r.user.as_str())),
        client_version: &i.clients[0].offer.version.raw,
        server_version: i.srv.version.as_deref(),
        server_strict_kex: i.srv.strict_kex,
        machine: &machine,
        options: i.options,
        plan: &i.plan.items,
        seed,
        client_defaults: &r.map(|r| r.defaults.clone()).unwrap_or_default(),
    })?;
    if let Some(w) = i.login.window {
        store.set_server_window(id, w)?;
    }
    if let Some(cpu) = &i.login.server_cpu {
        store.set_server_cpu(id, cpu)?;
    }
    if !i.options.clients.is_empty() {
        store.set_clients(id, &client_sides(i.clients, i.srv)?)?;
    }
    store.add_notes(id, &Vec::from_iter(shell_start_note(i.login.shell_start)))?;
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
    Ok(Start {
        run_id: id,
        seed,
        previous: Vec::new(),
    })
}

/// Log in once (`ssh -vv DEST`) for the server's session channel window, which the
/// window verdict needs (a server that does not say leaves it unknown), and how long its
/// login shell takes to start. A login refused for the key or the host key, or a server
/// that cannot be reached, would fail every sample: it stops here, before a run is stored.
/// Every client logs in: the first's login reads the window, the others' only show
/// that theirs would work too.
fn login_window(sh: &Shared, clients: &[Client], srv: &Server) -> Result<Login> {
    let mut first = None;
    // dbclient cannot read the server's window (no -v): its first samples tell.
    for c in clients
        .iter()
        .filter(|c| c.offer.kind == ClientKind::OpenSsh)
    {
        let login =
            (sh.reach.login(&c.ssh, srv, sh.cancel)).map_err(|f| anyhow!("{}", fatal_error(&f)));
        // Which client failed, where there is more than one to tell apart.
        let login = match clients.len() {
            1 => login?,
            _ => login.with_context(|| format!("logging in with {}", c.ssh.display()))?,
        };
        first.get_or_insert(login);
    }
    for c in clients
        .iter()
        .filter(|c| c.offer.kind == ClientKind::Dropbear)
    {
        (sh.reach
            .dbclient_login(&c.ssh, dialect_of(c, srv)?, srv, sh.cancel))
        .map_err(|o| {
            let why = sshbench::views::problem::of_outcome(&o).unwrap_or_default();
            anyhow!("logging in with {}: {why}", c.ssh.display())
        })?;
    }
    Ok(first.unwrap_or_default())
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
    let mut sink = StoreSink::new(cx.store, cx.run_id, cx.lost);
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

fn announce(run_id: i64, seed: u64, plan: &Plan, options: &RunOptions, db: &str) -> String {
    let then = ["", ", then more for those not told apart from the best"][options.race as usize];
    let warmups = runner::leads(plan).iter().filter(|l| l.is_none()).count();
    // Each client is a run's worth of work: say so where the count grows with them.
    let clients = options.clients.len();
    let through = match clients {
        0 | 1 => String::new(),
        n => {
            let each =
                |k: usize| (plan.items.iter()).filter(move |i| usize::from(i.suite.client) == k);
            let counts: Vec<String> = (0..n).map(|k| each(k).count().to_string()).collect();
            format!(" ({} through the {n} clients)", counts.join(" + "))
        }
    };
    format!(
        "run {run_id}: {}{through} × {}{then} after {}, seed {seed}, stored in {db}",
        counted(plan.items.len(), "measurement"),
        counted(options.rounds as usize, "round"),
        counted(warmups, "warm-up"),
    )
}

/// What every host's run of one command shares.
pub(super) struct Shared<'a> {
    pub cfg: &'a RunConfig,
    pub db: &'a str,
    pub cancel: &'a Cancel,
    /// The OpenSSH client that resolves destinations and reads offers (see
    /// [`default_client`]), and measures where no `--ssh` is given.
    pub own: &'a Client,
    /// The clients the command's `--ssh` named, as they answered.
    pub given: &'a [Client],
    /// This process among those measuring on this machine (see [`Instances`]).
    pub instances: Option<&'a Instances>,
    /// How every host is reached, chosen once (see [`Reach`]).
    pub reach: &'a dyn Reach,
}

/// One destination's run (`None`: the sandbox), new or resumed.
pub(super) struct HostRun<'a> {
    pub destination: Option<Target>,
    pub resumed: Option<&'a RunRecord>,
    pub options: &'a RunOptions,
    /// A shared fleet's host: set when this worker's lease on it ran out.
    pub lost: Option<&'a AtomicBool>,
    /// A fleet's new host: given its kind and the whole design, what it measures.
    pub narrow: Option<&'a Narrow<'a>>,
}

impl<'a> HostRun<'a> {
    /// A run of its own, outside any fleet.
    fn single(
        destination: Option<Target>,
        resumed: Option<&'a RunRecord>,
        options: &'a RunOptions,
    ) -> Self {
        HostRun {
            destination,
            resumed,
            options,
            lost: None,
            narrow: None,
        }
    }
}

/// The run resumed, or stored anew once a login has worked (see [`login_window`]), with
/// its plan and options.
fn start(
    sh: &Shared,
    clients: &[Client],
    store: &Store,
    host: &HostRun,
    srv: &Server,
    plan: Plan,
    progress: &Progress,
) -> Result<(Start, Plan, RunOptions)> {
    let mut options = host.options.clone();
    let Some(run) = host.resumed else {
        let login = login_window(sh, clients, srv)?;
        let plan = match host.narrow {
            Some(narrow) => {
                let design = narrow(&kind_of(srv, &login), plan)?;
                options.race &= design.race;
                design.plan
            }
            None => plan,
        };
        let input = NewRunInput {
            cfg: sh.cfg,
            clients,
            srv,
            options: &options,
            plan: &plan,
            login,
            progress,
        };
        return Ok((create(store, input)?, plan, options));
    };
    // A stored run that did not race goes on without: a row can only take racing away.
    options.race &= run.options.race;
    Ok((reopen(store, run, progress)?, plan, options))
}

/// The host's server for `clients`: the sandbox started, or the destination resolved
/// and its offer read, with an OpenSSH client (the first of them, else this command's
/// own), once the clients are known to take the modes asked for.
fn server_for(
    sh: &Shared,
    clients: &[Client],
    host: &HostRun,
    progress: &Progress,
) -> Result<Server> {
    let dropbear = clients.iter().any(|c| c.offer.kind == ClientKind::Dropbear);
    if dropbear && host.options.modes.iter().any(|m| m.workload().is_some()) {
        bail!("dbclient runs no scp, sftp or rsync workloads: leave them out of --mode");
    }
    let opener = (clients.iter())
        .find(|c| c.offer.kind == ClientKind::OpenSsh)
        .unwrap_or(sh.own);
    let setup = SandboxSetup {
        lab: host.options.lab,
        placement: host.options.sandbox_cpus,
        sshd: host.options.sandbox_sshd.clone(),
        log_kex: dropbear,
        x11: host.options.modes.contains(&sshbench::model::Mode::X11),
    };
    let probe_timeout = Duration::from_secs(host.options.timeout_s.min(15));
    connect_server(
        host.destination.clone(),
        &opener.ssh,
        &opener.offer,
        probe_timeout,
        sh.reach,
        setup,
        progress,
    )
}

/// Measure one destination into `store`: the run's id (told to `created` as soon as
/// the run is stored) and how its measurements ended. An error before the run is
/// stored (a name that does not resolve, nothing to measure) has no run.
pub(super) fn measure(
    sh: &Shared,
    store: &Store,
    host: HostRun,
    progress: &Progress,
    created: &mut dyn FnMut(i64) -> Result<()>,
) -> Result<(i64, Result<End, Abort>)> {
    let clients = clients_of(sh, host.options)?;
    if !host.options.clients.is_empty() {
        for (k, c) in clients.iter().enumerate() {
            let (n, version, path) = (k + 1, &c.offer.version.raw, c.ssh.display());
            progress.say(&format!("client {n}: {version} ({path})"));
        }
    }
    let srv = server_for(sh, &clients, &host, progress)?;
    let plan = make_plan(host.resumed, &clients, &srv, host.options)?;
    // The login comes first: the plan's notes are no news to a run it stops.
    let (started, plan, options) = start(sh, &clients, store, &host, &srv, plan, progress)?;
    let (
        Start {
            run_id,
            seed,
            previous,
        },
        options,
    ) = (started, &options);
    created(run_id)?;
    for note in &plan.notes {
        progress.say(&format!("note: {}", sshbench::views::plan::say(note)));
    }
    progress.say(&announce(run_id, seed, &plan, options, &store.describe()));
    // A server on this machine (not the sandbox) is busy as others are, and cannot be
    // told from them.
    let load = (sh.reach.disturbable() && !srv.here).then_some(srv.target.is_sandbox);
    let overlap = Overlap::begin(sh.instances, load, progress);
    let payload = Payload::new(options.payload, 1 << 20, seed);
    let mut transport = transport_of(sh, &clients, options, &srv, payload)?;
    let cx = super::streams::Context {
        store,
        run_id,
        options,
        items: plan.items.len(),
        previous: &previous,
        cancel: sh.cancel,
        progress,
        lost: host.lost,
    };
    let reconnects = store.reconnects();
    let result = rounds_then_streams(&plan, seed, transport.as_mut(), &cx);
    progress.finish();
    let mut notes = transport.notes();
    notes.extend(keystroke_clock_note(srv.resolved.as_ref(), &options.modes));
    // Tear the sandbox down before printing: nothing of it outlives the measurements, and
    // once reaped its sshd's CPU is this run's own.
    drop(transport);
    drop(srv);
    notes.extend(overlap.note());
    say_notes(&notes, result.is_err(), progress);
    note_reconnects(store.reconnects() - reconnects, progress);
    // A store that failed under the run would hide its first error behind this one.
    if !matches!(result, Err(Abort::Store(_))) {
        store.add_notes(run_id, &notes)?;
        store.set_status(run_id, status_of(&result))?;
    }
    Ok((run_id, result))
}

/// The run's transport: its client's, or one per client that each sample's suite picks.
fn transport_of(
    sh: &Shared,
    clients: &[Client],
    options: &RunOptions,
    srv: &Server,
    payload: Payload,
) -> Result<Box<dyn Transport>> {
    let mut each: Vec<Box<dyn Transport>> = Vec::new();
    for c in clients {
        let dialect = dialect_of(c, srv)?;
        each.push(
            sh.reach
                .transport(options, &c.ssh, dialect, srv, payload.clone()),
        );
    }
    Ok(match each.len() {
        1 => each.remove(0),
        _ => Box::new(ByClient::new(each)),
    })
}

/// How a client is driven: OpenSSH's options, or dbclient's flags with where `ssh -G`
/// resolved the destination to (and, for the sandbox, a key and known_hosts of its own).
fn dialect_of(c: &Client, srv: &Server) -> Result<Dialect> {
    if c.offer.version.is_hpn() {
        return Ok(Dialect::Hpn);
    }
    if c.offer.kind != ClientKind::Dropbear {
        return Ok(Dialect::OpenSsh);
    }
    let r = (srv.resolved.as_ref()).context("dbclient needs the destination resolved")?;
    let files = srv.dropbear_files(&c.ssh).transpose()?;
    Ok(Dialect::Dropbear(DropbearLogin {
        host: r.hostname.clone(),
        port: r.port,
        user: r.user.clone(),
        identity: files.as_ref().map(|f| f.identity.clone()),
        home: files.map(|f| f.home),
        server_log: srv.kex_log().map(ServerLog::new),
    }))
}

/// The transport's notes on how the run measured, where no answer will carry them: a
/// single run that ends well prints its answer, notes included (with -q too).
fn say_notes(notes: &[Note], stopped: bool, progress: &Progress) {
    if progress.in_fleet() || stopped {
        for note in notes {
            progress.say(&format!("note: {}", notes::say(note)));
        }
    }
}

/// Say that the database's connection was lost `n` times under the run and made again.
fn note_reconnects(n: u32, progress: &Progress) {
    let times = match n {
        0 => return,
        1 => "once".to_string(),
        n => format!("{n} times"),
    };
    progress.say(&format!(
        "note: the connection to the database was lost {times} and made again; every sample \
         measured meanwhile was stored"
    ));
}

/// `sshbench run`. The exit code for a run stopped by a signal is 128 + signal.
pub fn run(args: RunArgs) -> Result<u8> {
    let cfg = RunConfig::from_args(args).map_err(sshbench::cli::Usage)?;
    let db = db_location(&cfg.db)?;
    store::check(&db)?;
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let given = query_clients(&cfg.options.clients)?;
    let own = default_client(&given)?;
    let reach = reach::chosen(cfg.mock_transport, cfg.mock_pace);
    let instances = reach.disturbable().then(Instances::register).flatten();
    let sh = Shared {
        cfg: &cfg,
        db: &db,
        cancel: &cancel,
        own: &own,
        given: &given,
        instances: instances.as_ref(),
        reach: reach.as_ref(),
    };
    if !cfg.destinations.is_empty() || cfg.hosts_file.is_some() {
        return super::fleet::start(&sh);
    }
    if cfg.resume == Some(None) {
        if let Some(fleet) = super::fleet::to_resume(&db)? {
            return super::fleet::resume(&sh, fleet);
        }
    }
    // A resumed run brings its own destination, options, plan and seed.
    let resumed = cfg.resume.map(|id| load_resumed(&db, id)).transpose()?;
    let mut options = resumed
        .as_ref()
        .map_or_else(|| cfg.options.clone(), |r| r.options.clone());
    let progress = Progress::new(cfg.quiet, cfg.verbose, options.rounds);
    if options.clients.is_empty() {
        progress.say(&format!("client: {}", own.offer.version.raw));
    }
    if resumed.is_none() {
        options.sandbox_cpus = super::server::sandbox_placement(options.sandbox_cpus, &progress);
        // Filters that name nothing the client knows fail here, before a sandbox starts
        // or a server is probed (a run of several clients plans each client's own).
        if options.clients.is_empty() {
            build_plan(&own.offer, None, cfg.destination.is_none(), &options)
                .map_err(sshbench::cli::Usage)?;
        }
    }
    // A resumed run goes where it went, with the ssh options it had.
    let destination: Option<Target> = match &resumed {
        Some(r) => (!r.target.is_sandbox).then(|| r.target.clone()),
        None => (cfg.destination.as_deref())
            .map(|d| Target::parse(d).map(|t| t.with_ssh_args(cfg.ssh_args.clone())))
            .transpose()?,
    };
    let store = super::sealed_store(&db)?;
    let host = HostRun::single(destination, resumed.as_ref(), &options);
    let (run_id, result) = measure(&sh, &store, host, &progress, &mut |_| Ok(()))?;
    match conclude(result, run_id, &cancel, &progress)? {
        Some(code) => Ok(code),
        None => print_results(&store, run_id, &cfg),
    }
}
