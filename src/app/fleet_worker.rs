//! One worker of a fleet: this process, registered in the database, measuring up to
//! `--jobs` hosts at once. Each thread claims the next host no live worker holds, keeps
//! its lease while it measures (a keeper thread renews it every third of the lease, and
//! stops the host's measuring when the lease is lost), and gives the host back with how
//! it ended. A worker of this machine whose process is gone loses its hosts at once;
//! one elsewhere when its leases run out. While other workers still measure, an idle
//! thread waits to take over a host whose worker dies.

use super::fleet::finish;
use super::fleet_kinds::{Design, Kinds, Narrow};
use super::progress::Progress;
use super::run::{HostRun, Shared, measure};
use anyhow::{Context, Result};
use sshbench::destination::Target;
use sshbench::model::fleet::{Disagreement, FleetFull, HostKind, HostWay};
use sshbench::model::{HostProblem, HostStatus, RunOptions, RunStatus, WorkerPlace};
use sshbench::plan::Plan;
use sshbench::runner::{Abort, End};
use sshbench::store::{Claim, FleetHost, FleetRecord, RunRecord, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::sys::{affinity, machine, proc};
use sshbench::views::fleet as fleet_view;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the worker's threads share.
struct Work<'a> {
    sh: &'a Shared<'a>,
    fleet: i64,
    worker: i64,
    place: WorkerPlace,
    lease_s: u32,
    /// Hosts of a kind measured in full.
    full: FleetFull,
    options: &'a RunOptions,
    ssh: &'a [String],
}

/// Register this process as a worker of `fleet` and measure hosts until none is left
/// (or the run is cancelled); then the fleet's state.
pub(super) fn drive(
    sh: &Shared,
    fleet: FleetRecord,
    options: RunOptions,
    ssh: Vec<String>,
    sets: Vec<Option<Vec<usize>>>,
) -> Result<u8> {
    let store = super::sealed_store(sh.db)?;
    let place = WorkerPlace {
        machine: machine::hostname(),
        boot: machine::boot_id(),
        pid: std::process::id(),
    };
    let client = super::fleet::worker_client(sh);
    let worker = store.register_worker(fleet.id, &place, &client, sets.len())?;
    if !sh.cfg.quiet {
        say_err!("{} (worker {worker})", announce(&fleet, &sets));
    }
    let work = Work {
        sh,
        fleet: fleet.id,
        worker,
        place,
        lease_s: fleet.lease_s,
        full: fleet.full,
        options: &options,
        ssh: &ssh,
    };
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let threads: Vec<_> = sets
            .iter()
            .map(|set| s.spawn(|| thread(&work, set.as_deref())))
            .collect();
        threads
            .into_iter()
            .filter_map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a host's worker panicked")))
                    .err()
            })
            .collect()
    });
    store.end_worker(worker)?;
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    finish(sh, fleet.id)
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
    let name = fleet
        .name
        .as_deref()
        .map_or(String::new(), |n| format!(" ({n})"));
    let n = fleet.hosts.len();
    format!(
        "fleet run {}{name}: {n} hosts, {} at once{cpus}",
        fleet.id,
        sets.len()
    )
}

/// Workers of this machine whose process is gone: their hosts are given up now.
fn reap_dead_here(work: &Work, store: &Store) -> Result<()> {
    let clock = store.fleet_clock(work.fleet)?;
    for w in clock.workers {
        let here = w.machine == work.place.machine && w.boot == work.place.boot;
        if here && w.id != work.worker && w.ended_s.is_none() && !w.gone && !proc::alive(w.pid) {
            store.mark_gone(work.fleet, w.id)?;
            if !work.sh.cfg.quiet {
                say_err!(
                    "worker {} (process {}) of this machine is gone: its hosts are taken over",
                    w.id,
                    w.pid
                );
            }
        }
    }
    Ok(())
}

/// The progress line: where the whole fleet stands.
fn tally(work: &Work, store: &Store) -> Result<()> {
    if work.sh.cfg.quiet {
        return Ok(());
    }
    let fleet = store
        .fleet(work.fleet)?
        .context("the fleet being measured")?;
    let count = |s: HostStatus| fleet.hosts.iter().filter(|h| h.status == s).count();
    let waiting = fleet.hosts.len()
        - count(HostStatus::Complete)
        - count(HostStatus::Running)
        - count(HostStatus::Failed);
    say_err!(
        "hosts: {} done, {} running, {} failed, {waiting} waiting",
        count(HostStatus::Complete),
        count(HostStatus::Running),
        count(HostStatus::Failed),
    );
    Ok(())
}

/// Whether another worker still holds a host of the fleet (one this thread may have to
/// take over should that worker die).
fn others_measure(work: &Work, store: &Store) -> Result<bool> {
    let clock = store.fleet_clock(work.fleet)?;
    Ok(clock.hosts.iter().any(|h| h.worker.is_some()))
}

/// Claim and measure hosts until none is left or the run is cancelled.
fn thread(work: &Work, cpus: Option<&[usize]>) -> Result<()> {
    if let Some(cpus) = cpus {
        // Every ssh this thread starts, and every thread feeding one, inherits this.
        affinity::pin_thread(cpus).context("giving a host CPUs of its own")?;
    }
    let store = super::sealed_store(work.sh.db)?;
    let mut keeper_store = Some(super::sealed_store(work.sh.db)?);
    let poll = Duration::from_secs_f64((f64::from(work.lease_s) / 4.0).min(2.0));
    loop {
        if work.sh.cancel.is_cancelled() {
            return Ok(());
        }
        reap_dead_here(work, &store)?;
        let Some(claim) = store.claim_host(work.fleet, work.worker, work.lease_s)? else {
            if !others_measure(work, &store)? {
                return Ok(());
            }
            std::thread::sleep(poll);
            continue;
        };
        tally(work, &store)?;
        let keeper = keeper_store.take().context("the lease keeper's store")?;
        let (host, back) = measure_claimed(work, &store, keeper, claim)?;
        keeper_store = Some(back);
        if let Some(host) = host {
            store.set_claimed_host(work.fleet, work.worker, &host)?;
        }
        tally(work, &store)?;
    }
}

/// Measure a claimed host while a keeper thread holds its lease: the host's end (`None`
/// when the lease was lost and the host is another worker's now) and the keeper's store.
fn measure_claimed(
    work: &Work,
    store: &Store,
    keeper: Store,
    claim: Claim,
) -> Result<(Option<FleetHost>, Store)> {
    let mut host = claim.host;
    let progress = Progress::for_host(
        &host.destination,
        work.sh.cfg.quiet,
        work.sh.cfg.verbose,
        work.options.rounds,
    );
    if let Some(from) = claim.taken_from {
        progress.say(&format!(
            "taken over from worker {from}, which stopped measuring it{}",
            match host.run_id {
                Some(id) => format!("; run {id} goes on from its stored samples"),
                None => String::new(),
            }
        ));
    }
    let cancel = Cancel::new();
    let lost = AtomicBool::new(false);
    let (done, stop) = mpsc::channel::<()>();
    let lease = Lease {
        work,
        position: host.position,
        cancel: &cancel,
        lost: &lost,
    };
    let (result, back) = std::thread::scope(|s| {
        let keeper = s.spawn(move || lease.keep(keeper, stop));
        let sh = Shared {
            cancel: &cancel,
            ..*work.sh
        };
        let result = measure_host(work, &sh, store, &mut host, &lost, &progress);
        drop(done);
        (result, keeper.join())
    });
    let back = back.map_err(|_| anyhow::anyhow!("a host's lease keeper panicked"))?;
    result?;
    if lost.load(Ordering::SeqCst) {
        progress.say("this worker's lease ran out; another worker measures the host now");
        return Ok((None, back));
    }
    Ok((Some(host), back))
}

/// A claimed host's lease, kept by a thread of its own.
struct Lease<'a> {
    work: &'a Work<'a>,
    position: usize,
    /// The host's measuring: cancelled with the run, or when the lease is lost.
    cancel: &'a Cancel,
    lost: &'a AtomicBool,
}

impl Lease<'_> {
    /// Renew the lease every third of it until `stop` ends; pass the run's cancellation
    /// on. A lease not renewed for two thirds of it is given up before it can run out,
    /// so the host is never measured by two workers at once.
    fn keep(self, store: Store, stop: mpsc::Receiver<()>) -> Store {
        let lease = Duration::from_secs(u64::from(self.work.lease_s));
        let mut renewed = Instant::now();
        let mut tried = Instant::now();
        let tick = Duration::from_millis(200);
        while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(tick) {
            if let Some(signal) = self.work.sh.cancel.signal() {
                self.cancel.cancel(signal);
            }
            if tried.elapsed() >= lease / 3 {
                tried = Instant::now();
                let (w, fleet, s) = (self.work.worker, self.work.fleet, self.work.lease_s);
                match store.renew_lease(fleet, self.position, w, s) {
                    Ok(true) => renewed = Instant::now(),
                    Ok(false) => return self.give_up(store),
                    // The database may be back before the lease runs out.
                    Err(_) => {}
                }
            }
            if renewed.elapsed() >= lease * 2 / 3 {
                return self.give_up(store);
            }
        }
        store
    }

    fn give_up(self, store: Store) -> Store {
        self.lost.store(true, Ordering::SeqCst);
        self.cancel.cancel(libc::SIGTERM);
        store
    }
}

/// One host's run, new or resumed, then (measured by its kind's contenders, and
/// disagreeing with them) in full; its state and error land in `host`. Only a store
/// that cannot be written is an error here: anything the host does is its own failure.
fn measure_host(
    work: &Work,
    sh: &Shared,
    store: &Store,
    host: &mut FleetHost,
    lost: &AtomicBool,
    progress: &Progress,
) -> Result<()> {
    let kinds = Kinds {
        store,
        fleet: work.fleet,
        worker: work.worker,
        position: host.position,
        full: work.full,
        progress,
    };
    let narrow = |kind: &HostKind, plan: Plan| kinds.narrow(kind, plan);
    // A run finished on its own (`run --resume ID`) counts; an unfinished one goes on;
    // a deleted one starts anew.
    let run = host.run_id.map(|id| store.run(id)).transpose()?.flatten();
    if run
        .as_ref()
        .is_some_and(|r| r.status == RunStatus::Complete)
    {
        (host.status, host.problem) = (HostStatus::Complete, None);
    } else {
        let one = OneRun {
            resumed: run.as_ref(),
            narrow: &narrow,
        };
        run_once(work, sh, store, host, lost, progress, one)?;
    }
    if disagreement(host, &kinds)?.is_none() {
        return Ok(());
    }
    // Three rounds can all land in one of a busy machine's modes (loopback receive is
    // bimodal here), or in a passing disturbance: a second pass of the contenders must
    // disagree on its own before the whole design is spent on the host.
    progress.say("its figures differ from its kind's: its contenders once more, to be sure");
    let again = OneRun {
        resumed: None,
        narrow: &narrow,
    };
    run_once(work, sh, store, host, lost, progress, again)?;
    let Some(why) = disagreement(host, &kinds)? else {
        return Ok(());
    };
    progress.say(&format!(
        "measured in full now: {}",
        sshbench::views::fleet::say_disagreement(&why)
    ));
    kinds.fall_back(why)?;
    let whole = |_: &HostKind, plan: Plan| Ok(Design { plan, race: true });
    let one = OneRun {
        resumed: None,
        narrow: &whole,
    };
    run_once(work, sh, store, host, lost, progress, one)
}

/// How a host whose run by its kind's contenders is complete disagrees with its kind;
/// `None` for any other host.
fn disagreement(host: &FleetHost, kinds: &Kinds) -> Result<Option<Disagreement>> {
    let contenders = matches!(host.way, Some(HostWay::Contenders { .. }));
    match (host.run_id, host.status, contenders) {
        (Some(run), HostStatus::Complete, true) => kinds.disagreement(run),
        _ => Ok(None),
    }
}

/// A host's run to measure: one stored to go on with, else a new one and how its plan
/// is made.
struct OneRun<'a> {
    resumed: Option<&'a RunRecord>,
    narrow: &'a Narrow<'a>,
}

/// Measure one run of `host`; its state, error and way land in `host`.
fn run_once(
    work: &Work,
    sh: &Shared,
    store: &Store,
    host: &mut FleetHost,
    lost: &AtomicBool,
    progress: &Progress,
    one: OneRun,
) -> Result<()> {
    let resumed = one.resumed;
    // A host's run goes on where it went only if this user's sshbench stored it; else the
    // fleet's own host and ssh options, this worker's own, are used. Either is checked as
    // arguments.
    let destination = match resumed.filter(|r| r.sealed) {
        Some(r) => Ok(r.target.clone()),
        None => Target::parse(&host.destination).map(|t| t.with_ssh_args(work.ssh.to_vec())),
    }
    .and_then(|t| t.check_stored().map(|()| t));
    let (fleet, worker) = (work.fleet, work.worker);
    // While it measures, the host is running: a host measured in full after its
    // contenders was complete, and a finished state would give the claim back.
    let mut base = FleetHost {
        status: HostStatus::Running,
        problem: None,
        ..host.clone()
    };
    let result = destination.and_then(|d| {
        let run = HostRun {
            destination: Some(d),
            resumed,
            options: work.options,
            lost: Some(lost),
            narrow: Some(one.narrow),
        };
        measure(sh, store, run, progress, &mut |id| {
            base.run_id = Some(id);
            store.set_claimed_host(fleet, worker, &base).map(|_| ())
        })
    });
    host.run_id = base.run_id;
    let (status, problem) = host_end(result);
    if let Some(why) = fleet_view::why(status, problem.as_ref()) {
        if !lost.load(Ordering::SeqCst) {
            progress.say(&format!("{}: {why}", status.as_str()));
        }
    }
    host.status = status;
    host.problem = problem;
    host.way = store.fleet(fleet)?.and_then(|f| {
        let h = f.hosts.into_iter().find(|h| h.position == host.position)?;
        h.way
    });
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
