//! `sshbench run` over several hosts (a fleet run): each host is a run of its own, with
//! the same options; hosts are measured side by side up to `--jobs`, each on CPUs of its
//! own, and the fleet's state is stored so that `--resume` finishes it after Ctrl-C or
//! `kill -9`. A host that fails is reported and skipped; the exit status says so.

use super::progress::Progress;
use super::run::{HostRun, Shared, build_plan, measure};
use anyhow::{Context, Result, bail};
use sshbench::destination::{self, Target};
use sshbench::model::{HostProblem, HostStatus, RunOptions, RunStatus};
use sshbench::runner::{Abort, End};
use sshbench::store::{FleetHost, FleetRecord, Store};
use sshbench::sys::affinity;
use sshbench::views::fleet as fleet_view;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

/// Exit status of a fleet run that finished with a host failed (ssh-audit's
/// "connection error"; 1 is an error that stopped everything, 2 a usage error).
pub const HOST_FAILED: u8 = 3;

fn read_hosts(path: &Path) -> Result<Vec<String>> {
    let text = super::hosts_file_text(path)?;
    let hosts = destination::parse_hosts(&text, &path.display().to_string())?;
    if hosts.is_empty() {
        bail!("the hosts file {} lists no destinations", path.display());
    }
    Ok(hosts)
}

/// The CPU sets of `jobs` hosts at once (`None`: not pinned): one host per CPU at most.
/// `given`: the user asked for `jobs` here (more than the CPUs is an error); else it
/// comes from a stored fleet, perhaps started on a bigger machine, and is cut to fit.
fn cpu_sets(jobs: Option<usize>, hosts: usize, given: bool) -> Result<Vec<Option<Vec<usize>>>> {
    let cpus = affinity::allowed().map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |a| a.len(),
    );
    let mut jobs = jobs.unwrap_or((cpus / 2).max(1)).min(hosts).max(1);
    if !given {
        jobs = jobs.min(cpus);
    }
    if jobs > cpus {
        bail!(
            "--jobs {jobs} is more than the {cpus} CPUs sshbench may use: hosts measured \
             at once would share cores and time each other's load"
        );
    }
    if jobs == 1 {
        return Ok(vec![None]);
    }
    Ok(match affinity::share_here(jobs) {
        Some(sets) if sets.len() == jobs => sets.into_iter().map(Some).collect(),
        _ => vec![None; jobs],
    })
}

/// A new fleet run of the destinations given and those of `--hosts`.
pub fn start(sh: &Shared) -> Result<u8> {
    let cfg = sh.cfg;
    let listed = cfg.hosts_file.as_deref().map(read_hosts).transpose()?;
    let hosts = destination::fleet(&cfg.destinations, &listed.unwrap_or_default())?;
    for h in &hosts {
        Target::parse(h)?;
    }
    // Filters that name nothing the client knows fail here, before any host.
    build_plan(&sh.own.offer, None, false, &cfg.options)?;
    let sets = cpu_sets(cfg.jobs, hosts.len(), true)?;
    if sets.len() > 1 {
        one_name_per_server(sh, &hosts)?;
    }
    let store = super::sealed_store(sh.db)?;
    let id = store.create_fleet(&hosts, &cfg.options, &cfg.ssh_args, sets.len())?;
    let fleet = store.fleet(id)?.context("the fleet just stored")?;
    drive(sh, fleet, cfg.options.clone(), cfg.ssh_args.clone(), sets)
}

/// Two names (aliases, a name and its address) that ssh takes to one server: measured
/// side by side, each would slow the other's figures. A name ssh cannot resolve is left
/// to its own run to report.
fn one_name_per_server(sh: &Shared, hosts: &[String]) -> Result<()> {
    let mut seen: Vec<((String, u16), &str)> = Vec::new();
    for h in hosts {
        let t = Target::parse(h)?.with_ssh_args(sh.cfg.ssh_args.clone());
        let Ok(r) = destination::resolve(&sh.own.ssh, &t) else {
            continue;
        };
        let server = (r.hostname.to_ascii_lowercase(), r.port);
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == server) {
            bail!(
                "{first} and {h} reach the same server ({} port {}): measured side by side, \
                 each would slow the other's figures; list it once, or give --jobs 1",
                server.0,
                server.1
            );
        }
        seen.push((server, h));
    }
    Ok(())
}

/// The fleet run `--resume` (without an id) means: the newest unfinished one, unless a
/// single run outside it was left unfinished after it.
pub fn to_resume(db: &str) -> Result<Option<FleetRecord>> {
    if !sshbench::store::is_url(db) && !Path::new(db).exists() {
        return Ok(None);
    }
    let store = super::sealed_store(db)?;
    let Some((fleet, started)) = store.latest_unfinished_fleet()? else {
        return Ok(None);
    };
    if let Some(run) = store.latest_unfinished()? {
        let newer = store.run(run)?.is_some_and(|r| r.started_at > started);
        if newer && store.fleet_of(run)? != Some(fleet) {
            return Ok(None);
        }
    }
    store.fleet(fleet)
}

/// Finish a stored fleet run: its unfinished hosts with its own options.
pub fn resume(sh: &Shared, fleet: FleetRecord) -> Result<u8> {
    if !fleet.sealed {
        bail!(
            "fleet run {} was not stored by your sshbench on this machine, or was changed \
             since (it carries no seal of your key): its hosts and ssh options are not run \
             again from the database; start a new fleet run",
            fleet.id
        );
    }
    sshbench::cli::workload::check_stored(&fleet.options.workload)
        .with_context(|| format!("fleet run {} cannot be resumed", fleet.id))?;
    let options = fleet.options.clone();
    let ssh = fleet.ssh.clone();
    let left = fleet
        .hosts
        .iter()
        .filter(|h| h.status != HostStatus::Complete)
        .count();
    let sets = cpu_sets(Some(fleet.jobs), left.max(1), false)?;
    if !sh.cfg.quiet {
        say_err!(
            "resuming fleet run {} ({left} of {} hosts left; ssh options: {})",
            fleet.id,
            fleet.hosts.len(),
            match ssh.is_empty() {
                true => "none".to_string(),
                false => ssh.join(" "),
            }
        );
    }
    drive(sh, fleet, options, ssh, sets)
}

/// Hosts done, running and failed, for the progress line.
#[derive(Default)]
struct Tally {
    done: usize,
    running: usize,
    failed: usize,
    waiting: usize,
}

impl Tally {
    fn line(&self) -> String {
        format!(
            "hosts: {} done, {} running, {} failed, {} waiting",
            self.done, self.running, self.failed, self.waiting
        )
    }
}

/// What the hosts' workers share.
struct Work<'a> {
    sh: &'a Shared<'a>,
    fleet: i64,
    options: &'a RunOptions,
    ssh: &'a [String],
    queue: Mutex<VecDeque<FleetHost>>,
    tally: Mutex<Tally>,
}

impl Work<'_> {
    fn update(&self, f: impl FnOnce(&mut Tally)) {
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut t);
        if !self.sh.cfg.quiet {
            say_err!("{}", t.line());
        }
    }
}

fn announce(fleet: &FleetRecord, sets: &[Option<Vec<usize>>]) -> String {
    let pinned: Vec<String> = sets
        .iter()
        .flatten()
        .map(|s| affinity::format_list(s))
        .collect();
    let cpus = match pinned.len() {
        0 => String::new(),
        _ => format!(" (client CPUs {})", pinned.join(" / ")),
    };
    let n = fleet.hosts.len();
    format!(
        "fleet run {}: {n} hosts, {} at once{cpus}",
        fleet.id,
        sets.len()
    )
}

fn drive(
    sh: &Shared,
    fleet: FleetRecord,
    options: RunOptions,
    ssh: Vec<String>,
    sets: Vec<Option<Vec<usize>>>,
) -> Result<u8> {
    let todo: VecDeque<FleetHost> = fleet
        .hosts
        .iter()
        .filter(|h| h.status != HostStatus::Complete)
        .cloned()
        .collect();
    let tally = Tally {
        done: fleet.hosts.len() - todo.len(),
        waiting: todo.len(),
        ..Tally::default()
    };
    if !sh.cfg.quiet {
        say_err!("{}", announce(&fleet, &sets));
    }
    let work = Work {
        sh,
        fleet: fleet.id,
        options: &options,
        ssh: &ssh,
        queue: Mutex::new(todo),
        tally: Mutex::new(tally),
    };
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let workers: Vec<_> = sets
            .iter()
            .map(|set| s.spawn(|| worker(&work, set.as_deref())))
            .collect();
        workers
            .into_iter()
            .filter_map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a host's worker panicked")))
                    .err()
            })
            .collect()
    });
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    finish(sh, fleet.id)
}

/// Measure hosts from the queue until it is empty or the run is cancelled.
fn worker(work: &Work, cpus: Option<&[usize]>) -> Result<()> {
    if let Some(cpus) = cpus {
        // Every ssh this thread starts, and every thread feeding one, inherits this.
        affinity::pin_thread(cpus).context("giving a host CPUs of its own")?;
    }
    let store = super::sealed_store(work.sh.db)?;
    loop {
        if work.sh.cancel.is_cancelled() {
            return Ok(());
        }
        let next = work
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        let Some(mut host) = next else {
            return Ok(());
        };
        work.update(|t| {
            t.waiting -= 1;
            t.running += 1;
        });
        measure_host(work, &store, &mut host)?;
        store.set_fleet_host(work.fleet, &host)?;
        work.update(|t| {
            t.running -= 1;
            match host.status {
                HostStatus::Complete => t.done += 1,
                HostStatus::Failed => t.failed += 1,
                _ => t.waiting += 1,
            }
        });
    }
}

/// One host's run, new or resumed; its state and error land in `host`. Only a store
/// that cannot be written is an error here: anything the host does is its own failure.
fn measure_host(work: &Work, store: &Store, host: &mut FleetHost) -> Result<()> {
    let sh = work.sh;
    let progress = Progress::for_host(
        &host.destination,
        sh.cfg.quiet,
        sh.cfg.verbose,
        work.options.rounds,
    );
    // A run finished on its own (`run --resume ID`) counts; an unfinished one goes on;
    // a deleted one starts anew.
    let run = host.run_id.map(|id| store.run(id)).transpose()?.flatten();
    if run
        .as_ref()
        .is_some_and(|r| r.status == RunStatus::Complete)
    {
        host.status = HostStatus::Complete;
        host.problem = None;
        return Ok(());
    }
    let resumed = run;
    host.status = HostStatus::Running;
    host.problem = None;
    store.set_fleet_host(work.fleet, host)?;
    // A host's run goes on where it went only if this user's sshbench stored it; else the
    // fleet's own (sealed) host and ssh options are used. Either is checked as arguments.
    let destination = match resumed.as_ref().filter(|r| r.sealed) {
        Some(r) => Ok(r.target.clone()),
        None => Target::parse(&host.destination).map(|t| t.with_ssh_args(work.ssh.to_vec())),
    }
    .and_then(|t| t.check_stored().map(|()| t));
    let fleet = work.fleet;
    let mut base = host.clone();
    let result = destination.and_then(|d| {
        let run = HostRun {
            destination: Some(d),
            resumed: resumed.as_ref(),
            options: work.options,
        };
        measure(sh, store, run, &progress, &mut |id| {
            base.run_id = Some(id);
            store.set_fleet_host(fleet, &base)
        })
    });
    host.run_id = base.run_id;
    let (status, problem) = host_end(result);
    if let Some(why) = fleet_view::why(status, problem.as_ref()) {
        progress.say(&format!("{}: {why}", status.as_str()));
    }
    host.status = status;
    host.problem = problem;
    Ok(())
}

/// A host's state and why, from how its run ended.
fn host_end(result: Result<(i64, Result<End, Abort>)>) -> (HostStatus, Option<HostProblem>) {
    let error = |text| Some(HostProblem::Error { text });
    match result {
        Ok((_, Ok(End::Complete))) => (HostStatus::Complete, None),
        Ok((_, Ok(End::Budget))) => (HostStatus::Budget, None),
        Ok((_, Err(Abort::Cancelled))) => (HostStatus::Interrupted, None),
        Ok((_, Err(Abort::Fatal(f)))) => (HostStatus::Failed, Some(HostProblem::Fatal(f))),
        Ok((_, Err(Abort::TooManyFailures(f)))) => {
            (HostStatus::Failed, Some(HostProblem::TooManyFailures(f)))
        }
        Ok((_, Err(Abort::Store(e)))) => (
            HostStatus::Failed,
            error(format!("storing a sample: {e:#}")),
        ),
        Err(e) => (HostStatus::Failed, error(format!("{e:#}"))),
    }
}

/// The fleet's end: its status stored, every host's state on stdout, the exit status.
fn finish(sh: &Shared, id: i64) -> Result<u8> {
    let store = super::sealed_store(sh.db)?;
    let fleet = store.fleet(id)?.context("the fleet being finished")?;
    let all = |s: HostStatus| fleet.hosts.iter().all(|h| h.status == s);
    let any = |s: HostStatus| fleet.hosts.iter().any(|h| h.status == s);
    let status = if sh.cancel.is_cancelled() {
        RunStatus::Interrupted
    } else if all(HostStatus::Complete) {
        RunStatus::Complete
    } else if any(HostStatus::Failed) {
        RunStatus::Failed
    } else {
        RunStatus::Budget
    };
    store.set_fleet_status(id, status)?;
    let (doc, view) = fleet_view::fleet_run(&fleet, &store.sample_counts()?);
    super::emit(&doc, &view, sshbench::cli::FormatArg::Table, sh.cfg.wide)?;
    if let Some(code) = sh.cancel.exit_code() {
        say_err!(
            "sshbench: interrupted; fleet run {id} keeps every finished sample \
             (`sshbench run --resume` finishes it)"
        );
        return Ok(code as u8);
    }
    if !sh.cfg.quiet {
        say_err!(
            "more: sshbench summary --fleet / show --fleet / recommend --fleet / report --fleet"
        );
    }
    Ok(if any(HostStatus::Failed) {
        HOST_FAILED
    } else {
        0
    })
}
