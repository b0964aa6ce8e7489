//! The answer first: what `run` prints at its end. Per mode the best suite with its
//! interval, what cannot be told apart from it, the verdict and the gain over what ssh
//! picks unforced; the path's ceilings; and the `ssh_config` block, cut to fit a
//! 100-column terminal. The full tables are `show`'s (and `run --tables`).

use super::export::Document;
use super::recommend::short::{self, fitting};
use super::recommend::{self, Goal, Order, RecommendView};
use super::rekey;
pub use super::scope::WIDTH;
use super::scope::{CutShort, Scope, ceiling_sentence, figure_text, suite_label, unit, wrap};
use super::show::SuiteRow;
use super::unforced::{self, Unforced};
use crate::analysis::{self, Bound, SuiteStats};
use crate::model::{EQUAL_WITHIN, Mode, StopReason, Suite};
use crate::offer::catalogue::Grade;
use crate::offer::client;
use serde::Serialize;

/// One mode's answer.
#[derive(Clone, Debug, Serialize)]
pub struct ModeLine {
    pub mode: Mode,
    /// The best suite of a grade the recommendation allows (the best of all when none is).
    pub best: SuiteRow,
    /// The fastest suite of all, when it is of a weak grade and so not `best`, and faster
    /// than `best` beyond the noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faster: Option<SuiteRow>,
    /// The other suites whose interval overlaps the best one's.
    pub ties: Vec<Suite>,
    /// What ssh uses unforced (its preference lists, `ssh -G`), where it was measured,
    /// and how much better the best suite is: a share (0.12 = 12% faster or quicker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unforced: Option<(Suite, f64)>,
    /// What ssh uses unforced cannot be told apart from the best: its gain is noise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unforced_tied: bool,
    /// A name ssh would try first that the run's option left out (`chacha20-poly1305`,
    /// `--ciphers`): what ssh picks unforced was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unforced_left_out: Option<(String, &'static str)>,
    /// A raced run: how its suites of this mode stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceTally>,
}

/// How a mode's suites stopped in a race.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RaceTally {
    pub dropped: usize,
    pub separated: usize,
    pub budget: usize,
    /// Still racing after the last round `--max-rounds` allows.
    pub out_of_rounds: usize,
    pub equal: usize,
    /// Every sample failed.
    pub failed: usize,
    /// The most rounds any of them got.
    pub rounds: u32,
}

fn race_tally(scope: &Scope, mode: Mode) -> Option<RaceTally> {
    let mut t = RaceTally::default();
    for (_, _, stop) in scope.stops.iter().filter(|(m, _, _)| *m == mode) {
        match stop.reason {
            StopReason::Dropped => t.dropped += 1,
            StopReason::Separated => t.separated += 1,
            StopReason::Budget => t.budget += 1,
            StopReason::Rounds => t.out_of_rounds += 1,
            StopReason::Equal => t.equal += 1,
            StopReason::Failed => t.failed += 1,
        }
        t.rounds = t.rounds.max(stop.round);
    }
    // A lone suite had nothing to race (a server with one cipher, say).
    let stops = t.dropped + t.separated + t.budget + t.out_of_rounds + t.equal + t.failed;
    (stops > 1).then_some(t)
}

/// A mode asked for that has no figure: every sample of it failed, or it could not be
/// measured on this server (`failed` is 0).
#[derive(Clone, Debug, Serialize)]
pub struct FailedMode {
    pub mode: Mode,
    pub failed: usize,
    /// The last failure's message, of the first suite that has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything the headline says.
#[derive(Clone, Debug, Serialize)]
pub struct HeadlineView {
    pub destination: String,
    pub runs: Vec<i64>,
    pub modes: Vec<ModeLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedMode>,
    /// Why a window- or link-bound mode's best is as fast as it is, and what would help.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<String>,
    pub ceilings: Vec<String>,
    pub recommendation: RecommendView,
    /// The runs' notes on how they measured, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The tools and directions measured (`rsync-put`): `recommend --for` ranks the
    /// ciphers by what each moved, where the block above goes by the raw streams.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<String>,
    /// The newest run's `--budget` ran out before each of its measurements had a sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<CutShort>,
}

fn mode_line(scope: &Scope, mode: Mode) -> Option<ModeLine> {
    let ranked = analysis::rank(&scope.stats, mode);
    // Measured suites only: a summed connect pair's interval is wide, and the sums
    // that looked quickest were measured after the rounds.
    let rows: Vec<SuiteRow> = (ranked.iter())
        .filter(|r| r.stats.figure.is_some() && r.stats.suite.compression.is_none())
        .filter(|r| !r.stats.sum)
        .map(|r| SuiteRow::in_scope(r, scope))
        .collect();
    // The answer is among what the recommendation allows; a faster weak suite is named
    // beside it, never put first.
    let at = rows.iter().position(|r| !r.grade.is_weak()).unwrap_or(0);
    // No figure at all (every sample failed): the run's failures say why.
    let best = rows.get(at)?.clone();
    // Named only when it is faster beyond the noise: otherwise there is nothing to give up.
    let faster = (at > 0 && !overlaps(&rows[0], &best)).then(|| rows[0].clone());
    let ties = (rows.iter().skip(at + 1))
        .filter(|r| !r.grade.is_weak() && overlaps(r, &best))
        .map(|r| r.suite.clone())
        .collect();
    let pick = unforced::unforced(scope, mode);
    let unforced = pick.as_ref().and_then(|p| {
        let Unforced::Measured(d) = p else {
            return None;
        };
        let (b, u) = (best.mean?, d.figure?.mean);
        let gain = if analysis::higher_is_better(mode) {
            b / u - 1.0
        } else {
            u / b - 1.0
        };
        Some((d.suite.clone(), gain))
    });
    // Whatever its grade: a gain inside the noise is no gain to claim.
    let unforced_tied = unforced.as_ref().is_some_and(|(s, _)| {
        (rows.iter()).any(|r| &r.suite == s && r.suite != best.suite && overlaps(r, &best))
    });
    Some(ModeLine {
        mode,
        best,
        faster,
        ties,
        unforced,
        unforced_tied,
        unforced_left_out: match pick {
            Some(Unforced::LeftOut { name, option }) => Some((name, option)),
            _ => None,
        },
        race: race_tally(scope, mode),
    })
}

/// Whether two rows' 95% intervals overlap: the data cannot tell them apart.
fn overlaps(a: &SuiteRow, b: &SuiteRow) -> bool {
    let span = |r: &SuiteRow| {
        let (m, c) = (r.mean.unwrap_or(f64::NAN), r.ci95.unwrap_or(0.0));
        (m - c, m + c)
    };
    let ((a0, a1), (b0, b1)) = (span(a), span(b));
    a0 <= b1 && b0 <= a1
}

/// Build the headline of `scope`.
pub fn view(scope: &Scope) -> HeadlineView {
    let (mut modes, mut failed) = (Vec::new(), Vec::new());
    for m in scope.modes() {
        match mode_line(scope, m) {
            Some(line) => modes.push(line),
            None => failed.push(failed_mode(scope, m)),
        }
    }
    let bounds = modes
        .iter()
        .filter_map(|l| l.best.bound_sentence())
        .collect();
    HeadlineView {
        destination: scope.destination.clone(),
        runs: scope.run_ids(),
        modes,
        failed,
        bounds,
        ceilings: scope.ceilings.iter().map(ceiling_sentence).collect(),
        recommendation: recommend::view(scope, Goal::Balanced, Grade::Acceptable, Order::Grade),
        workloads: workload_goals(scope),
        notes: scope.notes(),
        cut_short: scope.cut_short(),
    }
}

/// `sftp-put`, `rsync-get`, ... for the workloads with figures in `scope`, each once;
/// none where no raw stream has a figure (the block is ranked by the workloads then).
fn workload_goals(scope: &Scope) -> Vec<String> {
    let mut goals: Vec<String> = Vec::new();
    let raw = |s: &SuiteStats| s.mode.is_transfer() && s.figure.is_some();
    if !scope.stats.iter().any(raw) {
        return goals;
    }
    for m in scope.modes() {
        let has = |s: &SuiteStats| s.mode == m && s.figure.is_some();
        let goal = m.tool_way().map(str::to_string);
        if let Some(g) = goal.filter(|g| !goals.contains(g) && scope.stats.iter().any(has)) {
            goals.push(g);
        }
    }
    goals
}

fn failed_mode(scope: &Scope, mode: Mode) -> FailedMode {
    let stats = || (scope.stats.iter()).filter(|s| s.mode == mode && !s.sum);
    FailedMode {
        mode,
        failed: stats().map(|s| s.failed).sum(),
        error: stats().find_map(|s| s.last_error.as_ref().map(super::problem::say)),
    }
}

/// `above`: why the mode just above was not measured, if it was not.
fn failed_text(f: &FailedMode, above: Option<&str>) -> String {
    let mode = f.mode.as_str();
    match (f.failed, f.error.as_deref()) {
        (0, Some(e)) if above == Some(e) => format!("{mode:<8} not measured: as above"),
        // Nothing failed: the mode could not be measured here (a tool missing, say).
        (0, Some(e)) => format!("{mode:<8} not measured: {e}"),
        (0, None) => format!("{mode:<8} not measured"),
        (n, Some(e)) => format!("{mode:<8} no figure: all {n} samples failed; the last said: {e}"),
        (n, None) => format!("{mode:<8} no figure: all {n} samples failed"),
    }
}

/// A line per mode in the modes' own order, those without a figure among them; a reason
/// not to measure that the mode above gave too is not said again.
fn mode_lines(v: &HeadlineView) -> Vec<String> {
    let mut modes: Vec<(Mode, Result<&ModeLine, &FailedMode>)> = (v.modes.iter())
        .map(|l| (l.mode, Ok(l)))
        .chain(v.failed.iter().map(|f| (f.mode, Err(f))))
        .collect();
    modes.sort_by_key(|(m, _)| *m);
    let mut above: Option<&str> = None;
    (modes.into_iter())
        .map(|(_, line)| match line {
            Ok(l) => {
                above = None;
                mode_text(l)
            }
            Err(f) => {
                let text = failed_text(f, above);
                above = f.error.as_deref().filter(|_| f.failed == 0);
                text
            }
        })
        .collect()
}

fn interval(r: &SuiteRow) -> String {
    match (r.mean, r.ci95) {
        (Some(m), Some(c)) if m > 0.0 => relative(c / m),
        _ => String::new(),
    }
}

/// A 95% interval as a share of the mean; below 1% with a decimal (an interval of a few
/// tenths of a percent is not "±0%").
fn relative(share: f64) -> String {
    let pct = share * 100.0;
    if pct < 0.95 {
        format!(" ±{pct:.1}%")
    } else {
        format!(" ±{pct:.0}%")
    }
}

fn verdict(r: &SuiteRow) -> String {
    match r.bound {
        Some(Bound::Unknown) | None => String::new(),
        Some(b) => format!(", bound: {}", super::verdicts::bound_label(b)),
    }
}

/// A mode's first line: its best suite, figure, interval and verdict.
fn best_text(mode: Mode, r: &SuiteRow) -> String {
    let mean = r.mean.map_or("-".into(), |m| figure_text(mode, m));
    let sum = if r.sum {
        " (a sum, not measured as a pair)"
    } else {
        ""
    };
    // The best of all, when nothing of an allowed grade was measured: said, not hidden.
    let weak = match r.grade.is_weak() {
        true => format!(" ({})", r.grade),
        false => String::new(),
    };
    format!(
        "{:<8} {}{weak}: {mean} {}{}{}{sum}",
        mode.as_str(),
        suite_label(mode, &r.suite),
        unit(mode),
        interval(r),
        verdict(r)
    )
}

/// The lines of one mode.
fn mode_text(l: &ModeLine) -> String {
    let (mode, r) = (l.mode, &l.best);
    let mut text = best_text(mode, r);
    text.extend(
        r.rekey
            .zip(r.mean)
            .and_then(|(k, rate)| rekey::sentence(k, rate)),
    );
    if let Some(f) = &l.faster {
        let mean = f.mean.map_or("-".into(), |m| figure_text(mode, m));
        let label = suite_label(mode, &f.suite);
        text.push_str(&format!(
            "\n         faster but {}: {label}, {mean} {}",
            f.grade,
            unit(mode)
        ));
    }
    let labels: Vec<String> = l.ties.iter().map(|s| suite_label(mode, s)).collect();
    if !labels.is_empty() {
        let lead = "         as good within the noise: ";
        let (list, left) = fitting(&labels, WIDTH - lead.len() - 12);
        let rest = if left > 0 {
            format!(" and {left} more")
        } else {
            String::new()
        };
        text.push_str(&format!("\n{lead}{list}{rest}"));
    }
    if let Some((s, gain)) = &l.unforced {
        let what = if *s == r.suite {
            "is what ssh picks unforced".to_string()
        } else if l.unforced_tied {
            let label = suite_label(mode, s);
            format!("what ssh picks unforced ({label}) is as good within the noise")
        } else {
            let (label, pct) = (suite_label(mode, s), gain * 100.0);
            // A time's gain reads as the longer time of the other: "+62%" of a connect
            // time would say the best is slower.
            if analysis::higher_is_better(mode) {
                format!("{pct:+.0}% over what ssh picks unforced ({label})")
            } else {
                format!("what ssh picks unforced ({label}) takes {pct:.0}% longer")
            }
        };
        text.push_str(&format!("\n         {what}"));
    }
    if let Some((name, option)) = &l.unforced_left_out {
        text.push_str(&format!(
            "\n         what ssh picks unforced was not measured: {option} left out {name}, \
             which your client prefers"
        ));
    }
    if let Some(t) = &l.race {
        text.push_str(&race_text(t));
    }
    text
}

/// The race's line: how the mode's suites stopped. Those still racing at the end are
/// tied with the best or parts of a sum that is, so they can outnumber the ties listed
/// above the line. Equal and failed stops and those at --max-rounds are named only when
/// there are any.
fn race_text(t: &RaceTally) -> String {
    let equal = match t.equal {
        0 => String::new(),
        n => format!(", {n} equal within {:.0}%", EQUAL_WITHIN * 100.0),
    };
    let out_of_rounds = match t.out_of_rounds {
        0 => String::new(),
        n => format!(", {n} still racing at --max-rounds"),
    };
    let failed = match t.failed {
        0 => String::new(),
        n => format!(", {n} failed"),
    };
    format!(
        "\n         race: {} dropped at once, {} separated{equal}, {} still racing at the budget\
         {out_of_rounds}{failed}; at most {} rounds",
        t.dropped, t.separated, t.budget, t.rounds
    )
}

/// What would part the suites still racing when a race ended (tied with their best, or
/// parts of a sum that is): a longer race, which `--budget` allows (the user's budget
/// replaces the race's own), or more rounds than `--max-rounds` allowed.
fn race_advice(modes: &[ModeLine]) -> Vec<String> {
    let tied = |count: fn(&RaceTally) -> usize| {
        let each: Vec<String> = (modes.iter())
            .filter_map(|l| Some((l.mode, count(l.race.as_ref()?))))
            .filter(|&(_, n)| n > 0)
            .map(|(mode, n)| format!("{n} {}", mode.as_str()))
            .collect();
        (!each.is_empty()).then(|| each.join(", "))
    };
    let budget = tied(|t| t.budget).map(|list| {
        format!(
            "Still racing when the budget ran out: {list} suites; `--budget` (say, twice \
             this run's time) lets a run race on until they part."
        )
    });
    let rounds = tied(|t| t.out_of_rounds).map(|list| {
        format!(
            "Still racing after the last round: {list} suites; a higher `--max-rounds` \
             lets a run race on until they part."
        )
    });
    budget.into_iter().chain(rounds).collect()
}

/// The headline as a document.
pub fn headline(scope: &Scope) -> (Document, HeadlineView) {
    let v = view(scope);
    let mut doc = Document::default();
    doc.text(wrap(&scope.header(), ""));
    if let Some(c) = v.cut_short {
        doc.text(wrap(&c.sentence("what follows leaves"), ""));
    }
    doc.text(wrap(&mode_lines(&v).join("\n"), "           "));
    for advice in race_advice(&v.modes) {
        doc.text(wrap(&advice, "  "));
    }
    for c in v.bounds.iter().chain(&v.ceilings) {
        doc.text(wrap(c, "  "));
    }
    for n in &v.notes {
        doc.text(wrap(&format!("note: {n}"), "  "));
    }
    doc.text("Recommended ~/.ssh/config (recommended and acceptable grades, best grade first):");
    // The newest run's client is the one the block is for.
    let client = scope
        .runs
        .last()
        .map(|r| client::parse_version(&r.client_version));
    let heads = client.is_some_and(|c| c.takes_head_lists());
    let mut block = short::block(&v.recommendation, WIDTH, heads);
    if !v.workloads.is_empty() {
        block.push_str("# ranked by the raw streams; by what a tool moved instead:\n");
    }
    for g in &v.workloads {
        block.push_str(&format!("#   sshbench recommend --for {g}\n"));
    }
    doc.code(block);
    (doc, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_cut_where_they_stop_fitting() {
        let names: Vec<String> = ["aaaa", "bbbb", "cccc"].map(String::from).to_vec();
        assert_eq!(fitting(&names, 100), ("aaaa, bbbb, cccc".into(), 0));
        assert_eq!(fitting(&names, 10), ("aaaa, bbbb".into(), 1));
        // The first name always stands, however long.
        assert_eq!(fitting(&names, 2), ("aaaa".into(), 2));
    }

    #[test]
    fn the_race_line_names_failed_suites_only_when_there_are_any() {
        let mut t = RaceTally {
            dropped: 9,
            separated: 2,
            budget: 1,
            rounds: 8,
            ..RaceTally::default()
        };
        let line = "race: 9 dropped at once, 2 separated, 1 still racing at the budget";
        assert_eq!(race_text(&t).trim(), format!("{line}; at most 8 rounds"));
        t.failed = 3;
        let failed = format!("{line}, 3 failed; at most 8 rounds");
        assert_eq!(race_text(&t).trim(), failed);
    }

    #[test]
    fn narrow_intervals_keep_a_decimal() {
        assert_eq!(relative(0.004), " ±0.4%");
        assert_eq!(relative(0.0094), " ±0.9%");
        assert_eq!(relative(0.0096), " ±1%");
        assert_eq!(relative(0.104), " ±10%");
    }

    #[test]
    fn long_sentences_wrap_within_the_width() {
        let long = "word ".repeat(60);
        let text = wrap(&long, "  ");
        assert!(text.lines().count() > 1);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(
            text.lines().skip(1).all(|l| l.starts_with("  word")),
            "{text}"
        );
    }
}
