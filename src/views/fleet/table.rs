//! `show --fleet` and `summary --fleet`: per mode and suite, across the hosts of a
//! selection, the median figure and each host's figure relative to that host's own
//! best, ranked by the worst host's (the suite that costs no host much comes first).

use super::HostFigures;
use crate::analysis::{SuiteStats, higher_is_better};
use crate::model::{Mode, Suite};
use crate::offer::grade::SuiteGrade;
use crate::views::export::{Document, Grid};
use crate::views::scope::{Scope, display_value, suite_label, unit};
use serde::Serialize;
use std::collections::HashMap;

/// One suite across the fleet.
#[derive(Clone, Debug, Serialize)]
pub struct FleetSuite {
    pub mode: Mode,
    #[serde(flatten)]
    pub suite: Suite,
    /// The worst grade any host gives it (Terrapin lowers some where strict KEX lacks).
    pub grade: String,
    /// Hosts it was measured on.
    pub hosts: usize,
    /// The median of the hosts' means (bytes/s, or seconds).
    pub median: f64,
    /// Each host's mean relative to its own best in the mode (1 = its best): median.
    pub median_of_best: f64,
    /// ... and the lowest, with its host.
    pub worst_of_best: f64,
    pub worst_host: String,
}

/// One mode's suites, best first.
#[derive(Clone, Debug, Serialize)]
pub struct FleetMode {
    pub mode: Mode,
    pub suites: Vec<FleetSuite>,
}

/// Every suite of the fleet, per mode.
#[derive(Clone, Debug, Serialize)]
pub struct FleetView {
    pub hosts: Vec<String>,
    pub modes: Vec<FleetMode>,
}

/// A host's relative figures: (mode, suite, mean, share of the host's best).
pub(crate) fn relative(scope: &Scope) -> Vec<(Mode, Suite, f64, f64)> {
    let measured: Vec<&SuiteStats> = scope
        .stats
        .iter()
        .filter(|s| !s.sum && s.figure.is_some())
        .collect();
    let mean = |s: &SuiteStats| s.figure.map_or(f64::NAN, |f| f.mean);
    let mut out = Vec::new();
    for mode in Mode::ALL {
        let hib = higher_is_better(mode);
        let of_mode: Vec<&&SuiteStats> = measured.iter().filter(|s| s.mode == mode).collect();
        let best = of_mode
            .iter()
            .map(|s| mean(s))
            .filter(|v| v.is_finite() && *v > 0.0)
            .reduce(|a, b| if hib { a.max(b) } else { a.min(b) });
        let Some(best) = best else { continue };
        for s in of_mode {
            let m = mean(s);
            let share = if hib { m / best } else { best / m };
            if share.is_finite() {
                out.push((mode, s.suite.clone(), m, share));
            }
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The fleet view over each host's scope.
pub fn build(hosts: &[HostFigures]) -> FleetView {
    // (mode, suite) → per host: (host, mean, share), and the worst grade.
    type Across = Vec<(String, f64, f64)>;
    let mut rows: Vec<((Mode, Suite), Across, SuiteGrade)> = Vec::new();
    let mut index: HashMap<(Mode, Suite), usize> = HashMap::new();
    for h in hosts {
        for (mode, suite, mean, share) in h.relative.iter().cloned() {
            let grade = h.grader.suite(&suite);
            let at = *index.entry((mode, suite.clone())).or_insert_with(|| {
                rows.push(((mode, suite), Vec::new(), grade));
                rows.len() - 1
            });
            rows[at].1.push((h.destination.clone(), mean, share));
            rows[at].2 = rows[at].2.max(grade);
        }
    }
    let mut modes: Vec<FleetMode> = Vec::new();
    for ((mode, suite), across, grade) in rows {
        let (worst_host, _, worst) = across
            .iter()
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .cloned()
            .unwrap_or_default();
        let row = FleetSuite {
            mode,
            suite,
            grade: grade.as_str().to_string(),
            hosts: across.len(),
            median: median(across.iter().map(|a| a.1).collect()),
            median_of_best: median(across.iter().map(|a| a.2).collect()),
            worst_of_best: worst,
            worst_host,
        };
        match modes.iter_mut().find(|m| m.mode == mode) {
            Some(m) => m.suites.push(row),
            None => modes.push(FleetMode {
                mode,
                suites: vec![row],
            }),
        }
    }
    let n = hosts.len();
    for m in &mut modes {
        // Measured on every host first, then the worst host's share, then the median.
        m.suites.sort_by(|a, b| {
            (b.hosts == n)
                .cmp(&(a.hosts == n))
                .then(b.worst_of_best.total_cmp(&a.worst_of_best))
                .then(b.median_of_best.total_cmp(&a.median_of_best))
        });
    }
    modes.sort_by_key(|m| Mode::ALL.iter().position(|x| *x == m.mode));
    FleetView {
        hosts: hosts.iter().map(|h| h.destination.clone()).collect(),
        modes,
    }
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// The fleet's tables, `top` suites per mode (`None`: all).
pub fn render(view: &FleetView, top: Option<usize>) -> Document {
    let mut doc = Document::default();
    let n = view.hosts.len();
    doc.text(format!(
        "Fleet of {n} hosts: {}. Each host's figure is taken against its own best suite \
         in the mode (100% = its best); suites measured on every host come first, the \
         worst host's share ranks them.",
        view.hosts.join(", ")
    ));
    for m in &view.modes {
        let title = format!("{}: {} suites", m.mode, m.suites.len());
        let median = format!("Median {}", unit(m.mode));
        let mut g = Grid::new(
            title,
            &[
                "#",
                "Suite",
                "Grade",
                "Hosts",
                &median,
                "Median of best",
                "Worst of best",
                "Worst host",
            ],
        )
        .right(&[0, 3, 4, 5, 6])
        .names(&[1])
        .grade(2)
        .droppable(&[7, 6, 5]);
        for (i, s) in m.suites.iter().take(top.unwrap_or(usize::MAX)).enumerate() {
            g.row(vec![
                (i + 1).to_string(),
                suite_label(m.mode, &s.suite),
                s.grade.clone(),
                format!("{}/{n}", s.hosts),
                format!("{:.1}", display_value(m.mode, s.median)),
                percent(s.median_of_best),
                percent(s.worst_of_best),
                s.worst_host.clone(),
            ]);
        }
        doc.grid(g);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offer::grade::Grader;

    fn host(name: &str, figures: &[(&str, f64)]) -> HostFigures {
        let best = figures.iter().map(|f| f.1).fold(0.0, f64::max);
        let relative = figures
            .iter()
            .map(|(c, v)| {
                let suite = Suite {
                    cipher: Some(c.to_string()),
                    ..Suite::default()
                };
                (Mode::Send, suite, *v, v / best)
            })
            .collect();
        HostFigures {
            destination: name.into(),
            relative,
            grader: Grader::new(Some(true)),
            measured: Vec::new(),
            recommend: None,
            way: None,
        }
    }

    /// The suite no host loses much with leads, though another is faster on most.
    #[test]
    fn suites_rank_by_the_worst_hosts_share_of_its_own_best() {
        let hosts = [
            host("a", &[("fast", 100.0), ("steady", 90.0)]),
            host("b", &[("fast", 100.0), ("steady", 95.0)]),
            host("c", &[("fast", 40.0), ("steady", 80.0), ("only-c", 80.0)]),
        ];
        let v = build(&hosts);
        let send = &v.modes[0].suites;
        let names: Vec<&str> = send
            .iter()
            .filter_map(|s| s.suite.cipher.as_deref())
            .collect();
        assert_eq!(names, ["steady", "fast", "only-c"], "on every host first");
        assert_eq!(
            (send[0].worst_host.as_str(), send[0].worst_of_best),
            ("a", 0.9)
        );
        assert_eq!(
            (send[1].worst_host.as_str(), send[1].worst_of_best),
            ("c", 0.5)
        );
        assert_eq!((send[1].hosts, send[1].median), (3, 100.0));
    }
}
