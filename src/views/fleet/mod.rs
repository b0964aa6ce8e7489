//! Fleet views: how a fleet run's hosts ended, and (`--fleet`) every suite across the
//! hosts of a selection, each host against its own best.

pub mod heat;
pub mod recommend;
pub mod status;
pub mod table;

use crate::model::{AlgoKind, HostProblem, HostStatus, Mode, Suite};
use crate::offer::catalogue::Grade;
use crate::offer::grade::Grader;
use crate::store::{FleetRecord, SampleCounts};
use crate::views::export::{Document, Grid};
use crate::views::recommend::{Goal, Order, RecommendView};
use crate::views::scope::Scope;
use serde::Serialize;

/// What the fleet views need of one host, taken from its scope so that its samples can
/// go before the next host's are read (a fleet's samples need not fit in memory).
pub struct HostFigures {
    pub destination: String,
    /// (mode, suite, mean, share of the host's best in the mode).
    pub relative: Vec<(Mode, Suite, f64, f64)>,
    pub grader: Grader,
    /// Every name measured (any grade), by kind.
    pub measured: Vec<(AlgoKind, String)>,
    /// The host's own recommendation, when a fleet recommendation is wanted.
    pub recommend: Option<RecommendView>,
    /// How a fleet measured it, where one did (its newest run's way).
    pub way: Option<crate::model::fleet::HostWay>,
}

impl HostFigures {
    pub fn of(scope: &Scope, recommend: Option<(Goal, Grade, Order)>) -> HostFigures {
        let mut measured: Vec<(AlgoKind, String)> = Vec::new();
        for s in scope.stats.iter().filter(|s| !s.sum && s.figure.is_some()) {
            for kind in [
                AlgoKind::Kex,
                AlgoKind::HostKey,
                AlgoKind::Cipher,
                AlgoKind::Mac,
            ] {
                if let Some(n) = s.suite.get(kind) {
                    if !measured.iter().any(|(k, m)| *k == kind && m == n) {
                        measured.push((kind, n.to_string()));
                    }
                }
            }
        }
        HostFigures {
            destination: scope.destination.clone(),
            relative: table::relative(scope),
            grader: scope.grader(),
            measured,
            recommend: recommend.map(|(g, m, o)| crate::views::recommend::view(scope, g, m, o)),
            way: None,
        }
    }
}

/// One host of a fleet run, as its end lists it.
#[derive(Clone, Debug, Serialize)]
pub struct HostLine {
    pub destination: String,
    pub status: HostStatus,
    pub run: Option<i64>,
    /// Measured samples (warm-ups are not counted).
    pub samples: u64,
    pub error: Option<String>,
    /// How it was measured (a fleet that groups its hosts by kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub way: Option<crate::model::fleet::HostWay>,
}

/// How a fleet run's hosts ended.
#[derive(Clone, Debug, Serialize)]
pub struct FleetRunView {
    pub fleet: i64,
    pub hosts: Vec<HostLine>,
    pub complete: usize,
    pub failed: usize,
}

/// The table a fleet run ends with: every host, its state, its run, its measured
/// samples (`counts`, by run id: warm-ups are not counted, as in every report) and why
/// it failed.
pub fn fleet_run(fleet: &FleetRecord, counts: &[(i64, SampleCounts)]) -> (Document, FleetRunView) {
    let hosts: Vec<HostLine> = fleet
        .hosts
        .iter()
        .map(|h| HostLine {
            destination: h.destination.clone(),
            status: h.status,
            run: h.run_id,
            samples: h
                .run_id
                .and_then(|id| counts.iter().find(|(r, _)| *r == id))
                .map_or(0, |(_, c)| c.measured),
            error: why(h.status, h.problem.as_ref()),
            way: h.way.clone(),
        })
        .collect();
    let count = |s: HostStatus| hosts.iter().filter(|h| h.status == s).count();
    let view = FleetRunView {
        fleet: fleet.id,
        complete: count(HostStatus::Complete),
        failed: count(HostStatus::Failed),
        hosts,
    };
    let mut doc = Document::default();
    let mut g = Grid::new(
        format!(
            "fleet run {}: {} of {} hosts measured",
            fleet.id,
            view.complete,
            view.hosts.len()
        ),
        &["Host", "Status", "Run", "Samples", "Measured", "Why"],
    )
    .right(&[2, 3])
    .droppable(&[3, 2, 4]);
    for h in &view.hosts {
        g.row(vec![
            h.destination.clone(),
            h.status.as_str().to_string(),
            h.run.map_or("-".into(), |r| r.to_string()),
            h.samples.to_string(),
            say_way(h.way.as_ref()),
            h.error.as_deref().map(first_line).unwrap_or_default(),
        ]);
    }
    doc.grid(g);
    for h in &view.hosts {
        if let Some(crate::model::fleet::HostWay::FellBack { why }) = &h.way {
            let why = say_disagreement(why);
            doc.para(
                format!(
                    "{} was measured in full after its contenders: {why}.",
                    h.destination
                ),
                "",
            );
        }
    }
    (doc, view)
}

/// Why a host did not complete, in words.
pub fn why(status: HostStatus, problem: Option<&HostProblem>) -> Option<String> {
    let failure = |f: &crate::model::Failure| crate::views::problem::say(&f.problem);
    match problem {
        Some(HostProblem::Fatal(f)) => Some(failure(f)),
        Some(HostProblem::TooManyFailures(f)) => Some(crate::views::problem::too_many(f)),
        Some(HostProblem::Error { text } | HostProblem::Legacy { text }) => Some(text.clone()),
        None if status == HostStatus::Budget => Some("its time budget ran out".into()),
        None => None,
    }
}

/// Why a host measured by its kind's contenders is measured in full after all.
pub fn say_disagreement(d: &crate::model::fleet::Disagreement) -> String {
    use crate::model::fleet::Disagreement;
    use crate::views::scope::suite_label;
    match d {
        Disagreement::OtherBest {
            mode,
            best,
            kind_best,
        } => format!(
            "in {}, {} beat {} here, the best of the hosts of its kind measured in full",
            mode.as_str(),
            suite_label(*mode, best),
            suite_label(*mode, kind_best)
        ),
        Disagreement::OtherLevel { mode, ratio } => format!(
            "in {}, its best figure is {:.2}× that of the hosts of its kind measured in full \
             (another machine than they are: a CPU quota, a busier server, a longer path)",
            mode.as_str(),
            ratio
        ),
    }
}

/// How a host was measured, in a table cell.
pub fn say_way(way: Option<&crate::model::fleet::HostWay>) -> String {
    use crate::model::fleet::HostWay;
    match way {
        None => "-".into(),
        Some(HostWay::Full { first: true }) => "in full (first of its kind)".into(),
        Some(HostWay::Full { first: false }) => "in full".into(),
        Some(HostWay::Contenders { items, of }) => format!("contenders ({items} of {of})"),
        Some(HostWay::FellBack { .. }) => "in full after contenders disagreed".into(),
    }
}

/// An error's first line, cut to a table cell's width.
fn first_line(e: &str) -> String {
    let line = e.lines().next().unwrap_or_default();
    match line.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}
