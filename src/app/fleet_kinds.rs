//! A fleet's kinds of host (`--fleet-full`): the first hosts of a kind are measured with
//! the whole design; every later one measures the kind's contenders only, and is
//! measured in full once more when its figures disagree with the full hosts' (see
//! `analysis::contenders`). The host's kind and how it was measured are stored with it.

use super::progress::Progress;
use super::server::Server;
use anyhow::Result;
use sshbench::analysis::{SuiteStats, contenders};
use sshbench::measure::window::Login;
use sshbench::model::fleet::{Disagreement, FleetFull, HostKind, HostWay};
use sshbench::model::{HostStatus, Mode, Suite};
use sshbench::plan::Plan;
use sshbench::store::{FleetHost, Selection, Store};
use sshbench::views::scope::Scope;
use sshbench::views::unforced::{Unforced, unforced};

/// What a fleet's host measures: its plan, and whether it races once the first pass is
/// done (a host measured by its kind's contenders does not: see `fleet_kinds`).
pub(super) struct Design {
    pub plan: Plan,
    pub race: bool,
}

/// How a fleet makes a new host's design from its kind and the whole plan.
pub(super) type Narrow<'a> = dyn Fn(&HostKind, Plan) -> Result<Design> + 'a;

/// What decides how the server ranks suites (see [`HostKind`]).
pub(super) fn kind_of(srv: &Server, login: &Login) -> HostKind {
    HostKind {
        server_version: srv.version.clone(),
        offer: srv.offer.clone(),
        strict_kex: srv.strict_kex,
        cpu: login.server_cpu.clone(),
    }
}

/// What deciding a host's way needs.
pub(super) struct Kinds<'a> {
    pub store: &'a Store,
    pub fleet: i64,
    pub worker: i64,
    pub position: usize,
    pub full: FleetFull,
    pub progress: &'a Progress,
}

/// Runs' suite figures taken together, and ssh's unforced pick per mode.
struct RunFigures {
    stats: Vec<SuiteStats>,
    picks: Vec<(Mode, Suite)>,
}

/// The figures of `runs` (one host's, or a kind's full hosts') pooled.
fn figures_of(store: &Store, ids: &[i64]) -> Result<RunFigures> {
    let (mut runs, mut samples) = (Vec::new(), Vec::new());
    for &id in ids {
        let sel = Selection {
            run: Some(id),
            ..Selection::default()
        };
        let (r, s) = store.select(&sel)?;
        runs.extend(r);
        samples.extend(s);
    }
    let scope = Scope::build(&runs, &samples);
    let picks = (scope.modes().into_iter())
        .filter_map(|m| match unforced(&scope, m)? {
            Unforced::Measured(s) => Some((m, s.suite.clone())),
            Unforced::LeftOut { .. } => None,
        })
        .collect();
    Ok(RunFigures {
        stats: scope.stats,
        picks,
    })
}

/// How many hosts of a kind are measured in full before the others measure its
/// contenders; `None`: every host.
fn first_full(full: FleetFull) -> Option<usize> {
    match full {
        FleetFull::All => None,
        FleetFull::First(n) => Some(n as usize),
    }
}

/// The hosts whose figures stand for `kind` (their names and complete runs): the first
/// `--fleet-full` N other hosts of it measured in full, in the fleet's order (every one
/// for `all`). Only the first: where a design has nothing to narrow every host of the
/// kind is measured in full, and pooling them all made each host's cost grow with the
/// hosts before it (in a 1,000-host fleet the 578th took 39 s; see the notebook).
fn deciders(
    hosts: Vec<FleetHost>,
    kinds: &[(usize, HostKind)],
    position: usize,
    kind: &HostKind,
    full: FleetFull,
) -> Vec<(String, i64)> {
    (hosts.into_iter())
        .filter(|h| h.position != position && h.status == HostStatus::Complete)
        .filter(|h| matches!(h.way, Some(HostWay::Full { .. })))
        .filter(|h| kinds.iter().any(|(p, k)| *p == h.position && k == kind))
        .filter_map(|h| Some((h.destination, h.run_id?)))
        .take(first_full(full).unwrap_or(usize::MAX))
        .collect()
}

impl Kinds<'_> {
    /// The hosts whose figures stand for `kind` (see [`deciders`]).
    fn full_of(&self, kind: &HostKind) -> Result<Vec<(String, i64)>> {
        let kinds = self.store.fleet_kinds(self.fleet)?;
        let Some(fleet) = self.store.fleet(self.fleet)? else {
            return Ok(Vec::new());
        };
        Ok(deciders(
            fleet.hosts,
            &kinds,
            self.position,
            kind,
            self.full,
        ))
    }

    fn record(&self, kind: &HostKind, way: &HostWay) -> Result<()> {
        (self.store).set_host_way(self.fleet, self.worker, self.position, kind, way)?;
        Ok(())
    }

    /// The design of a new host of `kind`: the whole plan among the first of its kind,
    /// else the contenders of the kind's full hosts, measured in the first pass only.
    /// Its figures serve the check alone: the contenders were tied over the full hosts'
    /// samples pooled, which decide the fleet's order, and a race of one host could not
    /// part them (bench/results/notebook.md, "A fleet's kinds").
    pub fn narrow(&self, kind: &HostKind, mut plan: Plan) -> Result<Design> {
        let whole = |plan| Design { plan, race: true };
        let full = self.full_of(kind)?;
        let first = first_full(self.full);
        let Some(n) = first.filter(|&n| full.len() >= n) else {
            self.record(
                kind,
                &HostWay::Full {
                    first: first.is_some(),
                },
            )?;
            return Ok(whole(plan));
        };
        let runs: Vec<i64> = full.iter().map(|(_, r)| *r).collect();
        let kind_figures = figures_of(self.store, &runs)?;
        let keep = contenders::contenders(&kind_figures.stats, &kind_figures.picks);
        let of = plan.items.len();
        plan.items
            .retain(|i| keep.contains(&(i.mode, i.suite.clone())));
        if plan.items.is_empty() || plan.items.len() == of {
            // Nothing the full hosts measured is in this design, or all of it is.
            self.record(kind, &HostWay::Full { first: false })?;
            return Ok(whole(plan));
        }
        let names: Vec<&str> = full[..n].iter().map(|(d, _)| d.as_str()).collect();
        self.progress.say(&format!(
            "measuring {} of {of} suites: the contenders of its kind, whose first hosts \
             ({}) were measured in full",
            plan.items.len(),
            names.join(", ")
        ));
        let way = HostWay::Contenders {
            items: plan.items.len(),
            of,
        };
        self.record(kind, &way)?;
        Ok(Design { plan, race: false })
    }

    /// Whether a host measured by contenders (its complete `run`) disagrees with its
    /// kind's full hosts.
    pub fn disagreement(&self, run: i64) -> Result<Option<Disagreement>> {
        let kinds = self.store.fleet_kinds(self.fleet)?;
        let Some((_, kind)) = kinds.into_iter().find(|(p, _)| *p == self.position) else {
            return Ok(None);
        };
        let runs: Vec<i64> = self.full_of(&kind)?.iter().map(|(_, r)| *r).collect();
        if runs.is_empty() {
            return Ok(None);
        }
        let pooled = figures_of(self.store, &runs)?.stats;
        let here = figures_of(self.store, &[run])?.stats;
        Ok(contenders::disagreement(&here, &pooled))
    }

    /// Record that the host falls back to the whole design, and why.
    pub fn fall_back(&self, why: Disagreement) -> Result<()> {
        let kinds = self.store.fleet_kinds(self.fleet)?;
        let kind = (kinds.into_iter())
            .find(|(p, _)| *p == self.position)
            .map(|(_, k)| k)
            .unwrap_or_default();
        self.record(&kind, &HostWay::FellBack { why })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(position: usize, status: HostStatus, way: HostWay) -> FleetHost {
        FleetHost {
            position,
            destination: format!("h{position}"),
            status,
            problem: None,
            run_id: Some(100 + position as i64),
            way: Some(way),
        }
    }

    #[test]
    fn a_kind_stands_on_its_first_full_hosts_in_the_fleet_s_order() {
        let (a, b) = (
            HostKind::default(),
            HostKind {
                strict_kex: Some(true),
                ..HostKind::default()
            },
        );
        let full = HostWay::Full { first: false };
        let contenders = HostWay::Contenders { items: 1, of: 2 };
        let hosts = vec![
            host(0, HostStatus::Complete, full.clone()),
            host(1, HostStatus::Complete, full.clone()),
            host(2, HostStatus::Failed, full.clone()),
            host(3, HostStatus::Complete, contenders),
            host(4, HostStatus::Complete, full.clone()),
            host(5, HostStatus::Complete, full.clone()),
            host(6, HostStatus::Complete, full.clone()),
            host(7, HostStatus::Running, full.clone()),
        ];
        let mut kinds: Vec<(usize, HostKind)> = (0..8).map(|p| (p, a.clone())).collect();
        kinds[4].1 = b;
        let names = |position, n| {
            let d = deciders(hosts.clone(), &kinds, position, &a, n);
            d.into_iter().map(|(h, _)| h).collect::<Vec<_>>()
        };
        // Not a failed or running host, one measured by contenders, another kind's, or
        // the host itself; and no more than N.
        assert_eq!(names(7, FleetFull::First(3)), ["h0", "h1", "h5"]);
        assert_eq!(names(0, FleetFull::First(3)), ["h1", "h5", "h6"]);
        assert_eq!(names(7, FleetFull::All), ["h0", "h1", "h5", "h6"]);
        let runs = deciders(hosts.clone(), &kinds, 7, &a, FleetFull::First(1));
        assert_eq!(runs, [("h0".to_string(), 100)]);
    }
}
