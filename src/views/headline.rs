//! The answer first: what `run` prints at its end. Per mode the best suite with its
//! interval, what cannot be told apart from it, the verdict and the gain over what ssh
//! picks unforced; the path's ceilings; and the `ssh_config` block, cut to fit a
//! 100-column terminal. The full tables are `show`'s (and `run --tables`).

use super::exec;
use super::export::Document;
use super::recommend::short::{self, fitting};
use super::recommend::{self, Goal, Order, RecommendView};
use super::rekey;
pub use super::scope::WIDTH;
use super::scope::{
    CutShort, RaceTally, Scope, ceiling_sentence, figure_text, race_tally, suite_label, unit,
};
use super::show::SuiteRow;
use super::typing;
use super::unforced::{self, Unforced};
use super::x11;
use crate::analysis::{self, Bound, SuiteStats};
use crate::model::{Mode, Suite};
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
    /// Typing in a terminal, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<typing::TypingView>,
    /// Short commands, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec: Option<exec::ExecView>,
    /// X11 forwarding, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x11: Option<x11::X11View>,
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
pub(crate) fn overlaps(a: &SuiteRow, b: &SuiteRow) -> bool {
    let span = |r: &SuiteRow| {
        let (m, c) = (r.mean.unwrap_or(f64::NAN), r.ci95.unwrap_or(0.0));
        (m - c, m + c)
    };
    let ((a0, a1), (b0, b1)) = (span(a), span(b));
    a0 <= b1 && b0 <= a1
}

/// Each mode's answer: its line, or why it has no figure.
fn mode_answers(scope: &Scope) -> (Vec<ModeLine>, Vec<FailedMode>) {
    let (mut modes, mut failed) = (Vec::new(), Vec::new());
    // Typing's variants are not suites to rank: they trade a protection for time
    // (`views::typing` says both); exec's ways are said with what they cost
    // (`views::exec`), X11's with what compression and the clock change (`views::x11`).
    let own_words = |m: Mode| matches!(m, Mode::Typing | Mode::Exec | Mode::X11);
    for m in (scope.modes().into_iter()).filter(|&m| !own_words(m)) {
        match mode_line(scope, m) {
            Some(line) => modes.push(line),
            None => failed.push(failed_mode(scope, m)),
        }
    }
    (modes, failed)
}

/// The answer's lines per mode alone (what `summary` opens with), without the rest of
/// the headline (its recommendation is the costly part).
pub fn answer_lines(scope: &Scope, width: usize) -> Vec<String> {
    let (modes, failed) = mode_answers(scope);
    mode_lines(&modes, &failed, width)
}

/// Build the headline of `scope`.
pub fn view(scope: &Scope) -> HeadlineView {
    let (modes, failed) = mode_answers(scope);
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
        typing: typing::view(scope),
        exec: exec::view(scope),
        x11: x11::view(scope),
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
fn mode_lines(lines: &[ModeLine], failed: &[FailedMode], width: usize) -> Vec<String> {
    let mut modes: Vec<(Mode, Result<&ModeLine, &FailedMode>)> = (lines.iter())
        .map(|l| (l.mode, Ok(l)))
        .chain(failed.iter().map(|f| (f.mode, Err(f))))
        .collect();
    modes.sort_by_key(|(m, _)| *m);
    let mut above: Option<&str> = None;
    (modes.into_iter())
        .map(|(_, line)| match line {
            Ok(l) => {
                above = None;
                mode_text(l, width)
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
        Some(b) => format!(", limited by {}", super::verdicts::bound_label(b)),
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

/// Where a mode's lines after its first start.
const FOLLOW: &str = "         ";

/// The lines of one mode, in plain words: the best suite, what cannot be told from it,
/// and what ssh does unforced. How the race went is `show`'s.
fn mode_text(l: &ModeLine, width: usize) -> String {
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
            "\n{FOLLOW}faster, but {} and so not advised: {label}, {mean} {}",
            f.grade,
            unit(mode)
        ));
    }
    let labels: Vec<String> = l.ties.iter().map(|s| suite_label(mode, s)).collect();
    if !labels.is_empty() {
        let lead = format!("{FOLLOW}too close to call (within the noise): ");
        let (list, left) = fitting(&labels, width.saturating_sub(lead.len() + 12));
        let rest = if left > 0 {
            format!(" and {left} more")
        } else {
            String::new()
        };
        text.push_str(&format!("\n{lead}{list}{rest}"));
    }
    if let Some((s, gain)) = &l.unforced {
        let label = suite_label(mode, s);
        let what = if *s == r.suite {
            "ssh already uses it when nothing is set".to_string()
        } else if l.unforced_tied {
            format!("ssh's own choice ({label}) is as good: nothing to gain")
        } else {
            // A time's gain reads as the longer time of the other: "+62%" of a connect
            // time would say the best is slower. Twice or more reads as a factor.
            let (pct, times) = (gain * 100.0, 1.0 + gain);
            match (analysis::higher_is_better(mode), times >= 2.0) {
                (true, false) => format!("{pct:.0}% faster than ssh's own choice ({label})"),
                (true, true) => format!("{times:.1}× as fast as ssh's own choice ({label})"),
                (false, false) => format!("ssh's own choice ({label}) takes {pct:.0}% longer"),
                (false, true) => format!("ssh's own choice ({label}) takes {times:.1}× as long"),
            }
        };
        text.push_str(&format!("\n{FOLLOW}{what}"));
    }
    if let Some((name, option)) = &l.unforced_left_out {
        text.push_str(&format!(
            "\n{FOLLOW}ssh's own choice was not measured: {option} left out {name}, \
             which your client prefers"
        ));
    }
    text
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
            "Not told apart when the run's time ran out: {list} suites; a longer \
             `--budget` (say, twice this run's time) would part them."
        )
    });
    let rounds = tied(|t| t.out_of_rounds).map(|list| {
        format!(
            "Not told apart after the last round: {list} suites; a higher \
             `--max-rounds` would part them."
        )
    });
    budget.into_iter().chain(rounds).collect()
}

/// Typing's, exec's and X11's lines: each variant, then what they tell.
fn own_mode_lines(doc: &mut Document, v: &HeadlineView) {
    let own = [
        ("typing", v.typing.as_ref().map(typing::sentences)),
        ("exec", v.exec.as_ref().map(|e| exec::sentences(e, true))),
        ("x11", v.x11.as_ref().map(x11::sentences)),
    ];
    for (mode, (each, after)) in own.into_iter().filter_map(|(m, s)| Some((m, s?))) {
        for line in each {
            doc.para(format!("{mode:<8} {line}"), "           ");
        }
        for line in after {
            doc.para(format!("{FOLLOW}{line}"), "           ");
        }
    }
}

/// The headline as a document for a terminal `width` columns wide ([`WIDTH`] when
/// piped): the config block's lists are cut to fit it.
pub fn headline(scope: &Scope, width: usize) -> (Document, HeadlineView) {
    let v = view(scope);
    let mut doc = Document::default();
    doc.para(scope.header(), "");
    if let Some(c) = v.cut_short {
        doc.para(c.sentence("what follows leaves"), "");
    }
    for line in mode_lines(&v.modes, &v.failed, width) {
        doc.para(line, "           ");
    }
    own_mode_lines(&mut doc, &v);
    for advice in race_advice(&v.modes) {
        doc.para(advice, "  ");
    }
    for c in v.bounds.iter().chain(&v.ceilings) {
        doc.para(c, "  ");
    }
    for n in &v.notes {
        doc.para(format!("note: {n}"), "  ");
    }
    let what = match v.recommendation.dbclient {
        true => "dbclient options",
        false => "~/.ssh/config",
    };
    doc.text(format!(
        "Recommended {what} (recommended and acceptable grades, best grade first):"
    ));
    // The newest run's client is the one the block is for.
    let client = scope
        .runs
        .last()
        .map(|r| client::parse_version(&r.client_version));
    let heads = client.is_some_and(|c| c.takes_head_lists());
    let mut block = short::block(&v.recommendation, width, heads);
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
    use crate::views::scope::wrap;

    #[test]
    fn lists_are_cut_where_they_stop_fitting() {
        let names: Vec<String> = ["aaaa", "bbbb", "cccc"].map(String::from).to_vec();
        assert_eq!(fitting(&names, 100), ("aaaa, bbbb, cccc".into(), 0));
        assert_eq!(fitting(&names, 10), ("aaaa, bbbb".into(), 1));
        // The first name always stands, however long.
        assert_eq!(fitting(&names, 2), ("aaaa".into(), 2));
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
