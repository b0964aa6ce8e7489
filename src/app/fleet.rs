//! `sshbench run` over several hosts (a fleet run): each host is a run of its own, with
//! the same options. The fleet is stored, or joined by name (`--fleet`), and this process
//! is one of its workers (`fleet_worker`): up to `--jobs` hosts at once, each on CPUs of
//! its own, claimed from the database, so that `--resume` and other workers finish it
//! after Ctrl-C or `kill -9`. A host that fails is reported and skipped; the exit status
//! says so.

use super::fleet_worker;
use super::run::{Shared, build_plan};
use anyhow::{Context, Result, bail};
use sshbench::destination::{self, Target};
use sshbench::model::fleet::DEFAULT_LEASE_S;
use sshbench::model::{ClientPart, HostStatus, RunStatus, WorkerClient};
use sshbench::store::{FleetRecord, NewFleet};
use sshbench::sys::{affinity, machine};
use sshbench::views::fleet as fleet_view;
use std::path::Path;

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

/// A new fleet run of the destinations given and those of `--hosts`, or (`--fleet NAME`)
/// the shared fleet of that name joined.
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
    // A named fleet's other workers measure beside this one, whatever its --jobs.
    if sets.len() > 1 || cfg.fleet_name.is_some() {
        one_name_per_server(sh, &hosts)?;
    }
    let store = super::sealed_store(sh.db)?;
    let client = worker_client(sh);
    let new = NewFleet {
        hosts: &hosts,
        options: &cfg.options,
        ssh: &cfg.ssh_args,
        jobs: sets.len(),
        name: cfg.fleet_name.as_deref(),
        lease_s: cfg.fleet_lease_s.unwrap_or(DEFAULT_LEASE_S),
        client: &client,
        full: cfg.fleet_full,
    };
    let (id, created) = match new.name {
        Some(_) => store.create_or_join(&new)?,
        None => (store.create_fleet(&new)?, true),
    };
    let fleet = store.fleet(id)?.context("the fleet just stored")?;
    if !created {
        check_joinable(&fleet, &new)?;
        if cfg.fleet_lease_s.is_some_and(|l| l != fleet.lease_s) && !cfg.quiet {
            say_err!(
                "note: fleet {} keeps the lease it was created with, {} s",
                fleet.id,
                fleet.lease_s
            );
        }
    }
    fleet_worker::drive(sh, fleet, cfg.options.clone(), cfg.ssh_args.clone(), sets)
}

/// The client this process measures with, as a fleet's workers must share it.
pub(super) fn worker_client(sh: &Shared) -> WorkerClient {
    let m = machine::this_machine();
    let ssh = match sh.given.is_empty() {
        true => vec![sh.own.offer.version.raw.clone()],
        false => sh
            .given
            .iter()
            .map(|c| c.offer.version.raw.clone())
            .collect(),
    };
    WorkerClient {
        cpu_model: m.cpu_model,
        cores: m.cores,
        ssh,
    }
}

/// Refuse to join a fleet that measures other hosts, with other options, or from
/// another client: its figures would not be one fleet's. Nothing stored is used: the
/// worker measures what its own command line says, once that is the fleet's.
fn check_joinable(fleet: &FleetRecord, mine: &NewFleet) -> Result<()> {
    let name = fleet.name.as_deref().unwrap_or_default();
    let theirs: Vec<&str> = fleet.hosts.iter().map(|h| h.destination.as_str()).collect();
    if !theirs.iter().eq(mine.hosts.iter()) {
        bail!(
            "fleet {name} measures other hosts ({} listed) than yours ({}): give the hosts \
             it was created with, or another --fleet name",
            theirs.len(),
            mine.hosts.len()
        );
    }
    if fleet.options != *mine.options || fleet.ssh != mine.ssh || fleet.full != mine.full {
        bail!(
            "fleet {name} was created with other options (modes, filters, rounds, ssh \
             options, --fleet-full): give the same ones, or another --fleet name"
        );
    }
    let Some(client) = &fleet.client else {
        return Ok(());
    };
    let differs = mine.client.differences(client);
    if !differs.is_empty() {
        let say = |c: &WorkerClient, part: &ClientPart| match part {
            ClientPart::CpuModel => c.cpu_model.clone().unwrap_or("an unknown CPU".into()),
            ClientPart::Cores => c
                .cores
                .map_or("unknown cores".into(), |n| format!("{n} cores")),
            ClientPart::Ssh => c.ssh.join(", "),
        };
        let parts: Vec<String> = (differs.iter())
            .map(|p| {
                format!(
                    "{} here, {} in the fleet",
                    say(mine.client, p),
                    say(client, p)
                )
            })
            .collect();
        bail!(
            "this client differs from fleet {name}'s ({}): its figures would not compare \
             with the fleet's; join from a client like the fleet's, or measure these hosts \
             as a fleet of their own (another --fleet name)",
            parts.join("; ")
        );
    }
    Ok(())
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
            let or = match sh.cfg.fleet_name {
                Some(_) => " (a named fleet's workers measure side by side)",
                None => ", or give --jobs 1",
            };
            bail!(
                "{first} and {h} reach the same server ({} port {}): measured side by side, \
                 each would slow the other's figures; list it once{or}",
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
    super::sealed_store(sh.db)?.reopen_hosts(fleet.id)?;
    fleet_worker::drive(sh, fleet, options, ssh, sets)
}

/// This worker's end: the fleet's status stored (unless another worker still measures
/// a host of it), every host's state on stdout, the exit status.
pub(super) fn finish(sh: &Shared, id: i64) -> Result<u8> {
    let store = super::sealed_store(sh.db)?;
    let fleet = store.fleet(id)?.context("the fleet being finished")?;
    let all = |s: HostStatus| fleet.hosts.iter().all(|h| h.status == s);
    let any = |s: HostStatus| fleet.hosts.iter().any(|h| h.status == s);
    let status = if all(HostStatus::Complete) {
        Some(RunStatus::Complete)
    } else if any(HostStatus::Running) {
        None
    } else if sh.cancel.is_cancelled() {
        Some(RunStatus::Interrupted)
    } else if any(HostStatus::Failed) {
        Some(RunStatus::Failed)
    } else {
        Some(RunStatus::Budget)
    };
    if let Some(status) = status {
        store.set_fleet_status(id, status)?;
    }
    let (doc, view) = fleet_view::fleet_run(&fleet, &store.sample_counts()?);
    super::emit(&doc, &view, sshbench::cli::FormatArg::Table, sh.cfg.wide)?;
    if let Some(code) = sh.cancel.exit_code() {
        let again = match &fleet.name {
            Some(name) => format!("`sshbench run --fleet {name}` with its hosts joins it again"),
            None => "`sshbench run --resume` finishes it".to_string(),
        };
        say_err!("sshbench: interrupted; fleet run {id} keeps every finished sample ({again})");
        return Ok(code as u8);
    }
    if !sh.cfg.quiet {
        if any(HostStatus::Running) {
            say_err!(
                "other workers still measure hosts of fleet run {id}: `sshbench fleet status {id}`"
            );
        }
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
