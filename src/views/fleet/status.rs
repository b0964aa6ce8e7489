//! `sshbench fleet status`: where a fleet shared by workers stands. Hosts done,
//! measuring, failed and waiting; each worker, whether it is alive, and the hosts it
//! holds with the time left on their leases; hosts claimed more than once (resumed, or
//! taken over from a worker that died); an estimate of the time left.

use crate::model::fleet::{HostKind, HostWay};
use crate::model::{HostStatus, RunStatus, WorkerClient};
use crate::store::{FleetClock, FleetRecord, WorkerRecord};
use crate::views::export::{Document, Grid};
use serde::Serialize;

/// Where a worker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Renewed its leases or claimed within one lease.
    Alive,
    /// Silent for longer than a lease, without a word: dead, or cut off from the
    /// database; its hosts go to other workers.
    Silent,
    /// A worker on its machine found its process gone.
    Gone,
    /// Finished, or stopped (Ctrl-C).
    Ended,
}

#[derive(Clone, Debug, Serialize)]
pub struct WorkerLine {
    pub id: i64,
    pub machine: String,
    pub pid: u32,
    pub jobs: usize,
    pub state: WorkerState,
    /// Seconds since its last claim or renewal.
    pub seen_ago_s: f64,
    /// The hosts it holds now.
    pub holds: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeldHost {
    pub destination: String,
    pub worker: i64,
    pub run: Option<i64>,
    /// Seconds left on its lease (negative: ran out, the host waits for a worker).
    pub lease_left_s: f64,
    pub claims: u32,
}

/// A host claimed more than once.
#[derive(Clone, Debug, Serialize)]
pub struct Reclaimed {
    pub destination: String,
    pub claims: u32,
    pub status: HostStatus,
}

/// A kind of host (the same server software, offer and CPU) and how its hosts were
/// measured.
#[derive(Clone, Debug, Serialize)]
pub struct KindLine {
    pub server: Option<String>,
    pub cpu: Option<String>,
    pub hosts: Vec<String>,
    /// Measured with the whole design.
    pub full: usize,
    /// By the kind's contenders.
    pub contenders: usize,
    /// In full after their contenders disagreed.
    pub fell_back: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct HostCounts {
    pub total: usize,
    pub done: usize,
    pub measuring: usize,
    pub failed: usize,
    pub waiting: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct FleetStatusView {
    pub fleet: i64,
    pub name: Option<String>,
    pub status: RunStatus,
    pub started_at: String,
    pub lease_s: u32,
    pub client: Option<WorkerClient>,
    pub hosts: HostCounts,
    pub workers: Vec<WorkerLine>,
    pub measuring: Vec<HeldHost>,
    pub reclaimed: Vec<Reclaimed>,
    /// The kinds of host seen so far (where the fleet groups them).
    pub kinds: Vec<KindLine>,
    /// The median complete host's time × the hosts left ÷ the hosts measured at once by
    /// the live workers; `None` before a host completes or with no live worker.
    pub time_left_s: Option<f64>,
}

fn state(w: &WorkerRecord, now: f64, lease_s: u32) -> WorkerState {
    match (w.gone, w.ended_s) {
        (true, _) => WorkerState::Gone,
        (false, Some(_)) => WorkerState::Ended,
        (false, None) if now - w.seen_s > f64::from(lease_s) => WorkerState::Silent,
        _ => WorkerState::Alive,
    }
}

fn counts(fleet: &FleetRecord) -> HostCounts {
    let n = |s: HostStatus| fleet.hosts.iter().filter(|h| h.status == s).count();
    let (done, measuring, failed) = (
        n(HostStatus::Complete),
        n(HostStatus::Running),
        n(HostStatus::Failed),
    );
    HostCounts {
        total: fleet.hosts.len(),
        done,
        measuring,
        failed,
        waiting: fleet.hosts.len() - done - measuring - failed,
    }
}

/// The time left: the median complete host's time, for each host waiting and half of
/// each being measured, shared among the hosts live workers measure at once.
fn time_left(fleet: &FleetRecord, clock: &FleetClock, workers: &[WorkerLine]) -> Option<f64> {
    let mut took: Vec<f64> = (fleet.hosts.iter().zip(&clock.hosts))
        .filter(|(h, _)| h.status == HostStatus::Complete)
        .filter_map(|(_, c)| Some(c.finished_s? - c.claimed_s?))
        .filter(|t| t.is_finite() && *t >= 0.0)
        .collect();
    let at_once: usize = (workers.iter())
        .filter(|w| w.state == WorkerState::Alive)
        .map(|w| w.jobs)
        .sum();
    if took.is_empty() || at_once == 0 {
        return None;
    }
    took.sort_by(f64::total_cmp);
    let median = took[took.len() / 2];
    let c = counts(fleet);
    let left = c.waiting as f64 + c.measuring as f64 / 2.0;
    Some(median * left / at_once as f64)
}

/// The fleet's hosts by kind, in the order each kind was first seen.
fn kinds(fleet: &FleetRecord, kinds: &[(usize, HostKind)]) -> Vec<KindLine> {
    let mut out: Vec<(&HostKind, KindLine)> = Vec::new();
    for (position, kind) in kinds {
        let Some(h) = fleet.hosts.iter().find(|h| h.position == *position) else {
            continue;
        };
        let at = match out.iter().position(|(k, _)| *k == kind) {
            Some(at) => at,
            None => {
                let cpu = kind.cpu.as_ref().map(|c| {
                    let model = c.model.clone().unwrap_or_else(|| "an unknown CPU".into());
                    c.cpus.map_or(model.clone(), |n| format!("{model} ×{n}"))
                });
                let line = KindLine {
                    server: kind.server_version.clone(),
                    cpu,
                    hosts: Vec::new(),
                    full: 0,
                    contenders: 0,
                    fell_back: Vec::new(),
                };
                out.push((kind, line));
                out.len() - 1
            }
        };
        let line = &mut out[at].1;
        line.hosts.push(h.destination.clone());
        match &h.way {
            Some(HostWay::Full { .. }) => line.full += 1,
            Some(HostWay::Contenders { .. }) => line.contenders += 1,
            Some(HostWay::FellBack { .. }) => line.fell_back.push(h.destination.clone()),
            None => {}
        }
    }
    out.into_iter().map(|(_, l)| l).collect()
}

/// The view of `fleet` with its workers, claims and its hosts' kinds.
pub fn view(
    fleet: &FleetRecord,
    clock: &FleetClock,
    host_kinds: &[(usize, HostKind)],
) -> FleetStatusView {
    let name_of = |position: usize| {
        (fleet.hosts.iter().find(|h| h.position == position))
            .map_or_else(|| format!("#{position}"), |h| h.destination.clone())
    };
    let held: Vec<HeldHost> = (fleet.hosts.iter().zip(&clock.hosts))
        .filter(|(h, _)| h.status == HostStatus::Running)
        .filter_map(|(h, c)| {
            Some(HeldHost {
                destination: h.destination.clone(),
                worker: c.worker?,
                run: h.run_id,
                lease_left_s: c.lease_until.map_or(0.0, |u| u - clock.now_s),
                claims: c.claims,
            })
        })
        .collect();
    let workers: Vec<WorkerLine> = (clock.workers.iter())
        .map(|w| WorkerLine {
            id: w.id,
            machine: w.machine.clone(),
            pid: w.pid,
            jobs: w.jobs,
            state: state(w, clock.now_s, fleet.lease_s),
            seen_ago_s: (clock.now_s - w.seen_s).max(0.0),
            holds: (held.iter().filter(|h| h.worker == w.id))
                .map(|h| h.destination.clone())
                .collect(),
        })
        .collect();
    let reclaimed = (clock.hosts.iter())
        .filter(|c| c.claims > 1)
        .map(|c| Reclaimed {
            destination: name_of(c.position),
            claims: c.claims,
            status: (fleet.hosts.iter())
                .find(|h| h.position == c.position)
                .map_or(HostStatus::Pending, |h| h.status),
        })
        .collect();
    FleetStatusView {
        fleet: fleet.id,
        name: fleet.name.clone(),
        status: fleet.status,
        started_at: fleet.started_at.clone(),
        lease_s: fleet.lease_s,
        client: fleet.client.clone(),
        hosts: counts(fleet),
        time_left_s: time_left(fleet, clock, &workers),
        workers,
        measuring: held,
        reclaimed,
        kinds: kinds(fleet, host_kinds),
    }
}

fn duration(s: f64) -> String {
    match s {
        s if s < 1.0 => "under a second".to_string(),
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 5400.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

fn say_state(s: WorkerState) -> &'static str {
    match s {
        WorkerState::Alive => "alive",
        WorkerState::Silent => "silent (dead or cut off)",
        WorkerState::Gone => "gone (its process ended)",
        WorkerState::Ended => "ended",
    }
}

/// The status as a document: a summary, the workers, the hosts held, those reclaimed.
pub fn document(v: &FleetStatusView) -> Document {
    let mut doc = Document::default();
    doc.para(summary(v), "");
    doc.grid(workers(v));
    if !v.measuring.is_empty() {
        doc.grid(held(v));
    }
    if !v.kinds.is_empty() {
        doc.grid(kinds_grid(v));
    }
    if !v.reclaimed.is_empty() {
        doc.para(
            "Hosts claimed more than once (resumed, or taken over from a worker that \
             stopped), each going on from its stored run:",
            "",
        );
        let mut g = Grid::new("hosts claimed again", &["Host", "Claims", "Status"]).right(&[1]);
        for r in &v.reclaimed {
            g.row(vec![
                r.destination.clone(),
                r.claims.to_string(),
                r.status.as_str().to_string(),
            ]);
        }
        doc.grid(g);
    }
    doc
}

fn summary(v: &FleetStatusView) -> String {
    let name = v
        .name
        .as_deref()
        .map_or(String::new(), |n| format!(" ({n})"));
    let h = &v.hosts;
    let left = match (v.time_left_s, h.waiting + h.measuring) {
        (_, 0) => String::new(),
        (Some(s), _) => format!(" About {} left at this pace.", duration(s)),
        (None, _) => match v.workers.iter().any(|w| w.state == WorkerState::Alive) {
            true => " The time left is known once a host completes.".to_string(),
            false => " No worker is measuring: `sshbench run --fleet NAME` with its hosts \
                       joins it."
                .to_string(),
        },
    };
    format!(
        "Fleet {}{name}, started {}, {}: {} hosts, {} done, {} measuring, {} failed, {} \
         waiting. A worker's claim on a host lasts {} s unrenewed.{left}",
        v.fleet,
        v.started_at,
        v.status.as_str(),
        h.total,
        h.done,
        h.measuring,
        h.failed,
        h.waiting,
        v.lease_s
    )
}

fn kinds_grid(v: &FleetStatusView) -> Grid {
    let mut g = Grid::new(
        "kinds of host: the first of each measured in full, the others by its contenders",
        &[
            "Server",
            "CPU",
            "Hosts",
            "In full",
            "Contenders",
            "Fell back",
        ],
    )
    .right(&[2, 3, 4])
    .droppable(&[1]);
    for k in &v.kinds {
        g.row(vec![
            k.server.clone().unwrap_or_else(|| "-".into()),
            k.cpu.clone().unwrap_or_else(|| "-".into()),
            k.hosts.len().to_string(),
            k.full.to_string(),
            k.contenders.to_string(),
            match k.fell_back.is_empty() {
                true => "-".into(),
                false => k.fell_back.join(", "),
            },
        ]);
    }
    g
}

fn workers(v: &FleetStatusView) -> Grid {
    let mut g = Grid::new(
        "workers",
        &[
            "Worker", "Machine", "Process", "Jobs", "State", "Seen", "Holds",
        ],
    )
    .right(&[2, 3, 5])
    .droppable(&[1, 3, 5]);
    for w in &v.workers {
        g.row(vec![
            w.id.to_string(),
            w.machine.clone(),
            w.pid.to_string(),
            w.jobs.to_string(),
            say_state(w.state).to_string(),
            format!("{} ago", duration(w.seen_ago_s)),
            w.holds.join(", "),
        ]);
    }
    g
}

fn held(v: &FleetStatusView) -> Grid {
    let mut g = Grid::new(
        "hosts being measured",
        &["Host", "Worker", "Run", "Lease left", "Claims"],
    )
    .right(&[1, 2, 3, 4]);
    for m in &v.measuring {
        g.row(vec![
            m.destination.clone(),
            m.worker.to_string(),
            m.run.map_or("-".into(), |r| r.to_string()),
            match m.lease_left_s {
                s if s < 0.0 => "ran out".to_string(),
                s => format!("{s:.0} s"),
            },
            m.claims.to_string(),
        ]);
    }
    g
}
