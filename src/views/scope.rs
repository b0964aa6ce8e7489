//! What a report is about ([`Scope`]: a destination, its runs and their statistics) and
//! the figure formatting every view shares.

use crate::analysis::ceiling::PathCeiling;
use crate::analysis::streams::StreamsFigure;
use crate::analysis::{self, ChannelWindow, SuiteStats};
use crate::measure::window;
use crate::model::{
    ClientKind, DBCLIENT_WINDOW, ExecVia, Mode, PayloadKind, RunStatus, Sample, Stop, StopReason,
    Suite,
};
use crate::offer::client;
use crate::offer::grade::{Grader, SuiteGrade};
use crate::plan::PlanItem;
use crate::store::{RunRecord, StoredSample};
use serde::Serialize;
use std::collections::HashMap;

/// A run's word on how it measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunNote {
    pub run: i64,
    pub note: String,
}

/// "How the runs measured:" with a line per note, for a text view; `None` without notes.
pub fn notes_text(notes: &[RunNote]) -> Option<String> {
    let lines: Vec<String> = (notes.iter())
        .map(|n| wrap(&format!("  run {}: {}", n.run, n.note), "    "))
        .collect();
    (!lines.is_empty()).then(|| format!("\nHow the runs measured:\n{}", lines.join("\n")))
}

/// The width every line fits in.
pub const WIDTH: usize = 100;

/// `text` wrapped at [`WIDTH`], each line's continuation indented by `indent`.
pub fn wrap(text: &str, indent: &str) -> String {
    wrap_at(text, indent, WIDTH)
}

/// `text` wrapped at `width` columns, each line's continuation indented by `indent`.
pub fn wrap_at(text: &str, indent: &str, width: usize) -> String {
    // Names and options (`chacha20-poly1305@openssh.com`, `--budget`) are never split.
    let opts = (textwrap::Options::new(width).subsequent_indent(indent))
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let lines: Vec<String> = text.lines().map(|l| textwrap::fill(l, &opts)).collect();
    lines.join("\n")
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

pub fn race_tally(scope: &Scope, mode: Mode) -> Option<RaceTally> {
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

/// How a mode's race went, in words (under `show`'s table): the run's answer leaves it
/// out. Equal and failed stops and those at --max-rounds are named only when there are
/// any.
pub fn race_sentence(t: &RaceTally) -> String {
    let mut parts = vec![
        format!("{} dropped after their first rounds", t.dropped),
        format!("{} separated from the best", t.separated),
    ];
    if t.equal > 0 {
        parts.push(format!(
            "{} equal to it within {:.0}%",
            t.equal,
            crate::model::EQUAL_WITHIN * 100.0
        ));
    }
    parts.push(format!("{} not told apart when the time ran out", t.budget));
    if t.out_of_rounds > 0 {
        parts.push(format!(
            "{} not told apart at --max-rounds",
            t.out_of_rounds
        ));
    }
    if t.failed > 0 {
        parts.push(format!("{} failed", t.failed));
    }
    format!(
        "How the race went: {}; at most {} rounds.",
        parts.join(", "),
        t.rounds
    )
}

/// What a report is about.
pub struct Scope<'a> {
    pub destination: String,
    pub runs: &'a [RunRecord],
    pub stats: Vec<SuiteStats>,
    /// Parallel streams (`--streams`) of the best suites, against one stream.
    pub streams: Vec<StreamsFigure>,
    /// What the path carries, per transfer direction.
    pub ceilings: Vec<PathCeiling>,
    /// Why each suite of a raced run stopped (the newest run's word for a suite).
    pub stops: Vec<(Mode, Suite, Stop)>,
}

impl<'a> Scope<'a> {
    /// The report over `runs` (of one destination) and their `samples`.
    pub fn build(runs: &'a [RunRecord], samples: &[StoredSample]) -> Scope<'a> {
        let reported = samples.iter().map(|s| (&s.sample, s.payload));
        let mut stats = with_windows(analysis::aggregate_reported(reported), runs);
        let tcp = runs.iter().rev().find_map(|r| r.tcp_rate);
        analysis::mark_tcp(&mut stats, tcp);
        let sums = analysis::sums::sums(&stats);
        stats.extend(sums);
        let batches: Vec<((i64, u32, Mode), &Sample)> = (samples.iter())
            .filter(|s| s.sample.stream.is_some())
            .map(|s| ((s.run_id, s.round, s.sample.mode), &s.sample))
            .collect();
        let single = |mode: Mode, suite: &Suite| {
            let row = stats.iter().find(|s| s.mode == mode && &s.suite == suite);
            Some(row?.figure?.mean)
        };
        let streams = analysis::streams::figures(&batches, single);
        Scope {
            ceilings: analysis::ceiling::ceilings(&stats, tcp, runs.iter().any(|r| r.via_proxy())),
            stops: stops(runs, samples),
            destination: runs
                .last()
                .map(|r| r.destination.clone())
                .unwrap_or_default(),
            runs,
            stats,
            streams,
        }
    }
}

/// The raced runs' stops by suite, as reports name suites; the newest run's first.
fn stops(runs: &[RunRecord], samples: &[StoredSample]) -> Vec<(Mode, Suite, Stop)> {
    // The items past each raced run's plan, named by their first sample (one pass, and
    // none when no stop lies past a plan).
    let planned: HashMap<i64, usize> = (runs.iter())
        .filter(|r| r.stops.iter().any(|(item, _)| *item >= r.plan.len()))
        .map(|r| (r.id, r.plan.len()))
        .collect();
    let mut past: HashMap<(i64, usize), &Sample> = HashMap::new();
    if !planned.is_empty() {
        for s in samples {
            if planned.get(&s.run_id).is_some_and(|&n| s.item >= n) {
                past.entry((s.run_id, s.item)).or_insert(&s.sample);
            }
        }
    }
    let mut out: Vec<(Mode, Suite, Stop)> = Vec::new();
    for r in runs.iter().rev().filter(|r| !r.stops.is_empty()) {
        let payload = r.options.payload;
        let beyond = |item: usize| (past.get(&(r.id, item))).map(|s| (s.mode, s.suite.clone()));
        for (mode, suite, stop) in named_stops(&r.stops, &r.plan, beyond, payload) {
            if !out.iter().any(|(m, s, _)| *m == mode && *s == suite) {
                out.push((mode, suite, stop));
            }
        }
    }
    out
}

/// One run's stops with the mode and suite of their items: a planned item's from the
/// plan, an item past it (a summed pair measured as such after the first pass) from
/// its samples (`beyond`); an item neither names is left out.
fn named_stops(
    stops: &[(usize, Stop)],
    plan: &[PlanItem],
    beyond: impl Fn(usize) -> Option<(Mode, Suite)>,
    payload: PayloadKind,
) -> Vec<(Mode, Suite, Stop)> {
    (stops.iter())
        .filter_map(|&(item, stop)| {
            let (mode, mut suite) = match plan.get(item) {
                Some(p) => (p.mode, p.suite.clone()),
                None => beyond(item)?,
            };
            analysis::mark_suite(mode, &mut suite, payload);
            Some((mode, suite, stop))
        })
        .collect()
}

/// The stored runs' statistics with the channel windows their transfers met: the newest
/// run's reading of the server's window for uploads and, for downloads, the client's
/// own (HPN-SSH's, on either side, start there and grow).
pub fn with_windows(mut stats: Vec<SuiteStats>, runs: &[RunRecord]) -> Vec<SuiteStats> {
    let send = runs.iter().rev().find_map(|r| r.server_window);
    // The newest run's client: dbclient's window is its `-W`, 24 KiB unless given.
    let dbclient = runs.last().and_then(RunRecord::client_kind) == Some(ClientKind::Dropbear);
    let hpn = runs.iter().any(RunRecord::client_is_hpn);
    let receive = match dbclient {
        true => ChannelWindow::fixed(DBCLIENT_WINDOW),
        false => ChannelWindow {
            bytes: window::OPENSSH_WINDOW,
            grows: hpn,
        },
    };
    // An HPN-SSH server grows the window it takes uploads into, as its client does.
    let hpn_server = (runs.iter().rev())
        .find_map(|r| r.server_version.as_deref())
        .is_some_and(client::is_hpn);
    let send = send.map(|bytes| ChannelWindow {
        bytes,
        grows: hpn_server,
    });
    analysis::mark_windows(&mut stats, send, Some(receive));
    stats
}

/// The path ceiling's sentence, its suite named as the mode's tables name it.
pub fn ceiling_sentence(c: &PathCeiling) -> String {
    super::verdicts::ceiling(c, &suite_label(c.mode, &c.suite))
}

/// What `summary` and `recommend` say about a server without strict KEX.
pub const TERRAPIN_NOTE: &str = "the server does not offer strict KEX, so chacha20-poly1305, and CBC \
     ciphers with -etm MACs, are open to the Terrapin attack (CVE-2023-48795): they count \
     as legacy here; a server with OpenSSH 9.6 or later (or its distribution's fix) removes this";

impl Scope<'_> {
    /// Whether the newest run that read the server's offer found no strict KEX.
    pub fn lacks_strict_kex(&self) -> bool {
        self.grader().lacks_strict_kex()
    }

    /// The grades for this server, from the newest run that read its offer.
    pub fn grader(&self) -> Grader {
        Grader::new(self.runs.iter().rev().find_map(|r| r.server_strict_kex))
    }

    /// One suite's grade for this server.
    pub fn grade(&self, suite: &Suite) -> SuiteGrade {
        self.grader().suite(suite)
    }

    /// Why a raced suite stopped.
    pub fn stop(&self, mode: Mode, suite: &Suite) -> Option<Stop> {
        let found = self.stops.iter().find(|(m, s, _)| *m == mode && s == suite);
        found.map(|(_, _, stop)| *stop)
    }

    pub fn run_ids(&self) -> Vec<i64> {
        self.runs.iter().map(|r| r.id).collect()
    }

    /// The runs' notes on how they measured, each said once.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for n in self.runs.iter().flat_map(|r| &r.notes) {
            let said = super::notes::say(n);
            if !notes.contains(&said) {
                notes.push(said);
            }
        }
        notes
    }

    /// Every run's notes, each with its run.
    pub fn run_notes(&self) -> Vec<RunNote> {
        let mut out = Vec::new();
        for r in self.runs {
            out.extend(r.notes.iter().map(|n| RunNote {
                run: r.id,
                note: super::notes::say(n),
            }));
        }
        out
    }

    pub fn modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| self.stats.iter().any(|s| s.mode == *m))
            .collect()
    }

    /// The newest run, where its time budget ended it before every measurement had a
    /// sample: how many had none, of how many.
    pub fn cut_short(&self) -> Option<CutShort> {
        let run = self.runs.last().filter(|r| r.status == RunStatus::Budget)?;
        let sampled = |p: &PlanItem| {
            (self.stats.iter())
                .any(|s| s.mode == p.mode && s.suite == p.suite && s.ok + s.failed > 0)
        };
        let unmeasured = run.plan.iter().filter(|p| !sampled(p)).count();
        (unmeasured > 0).then_some(CutShort {
            unmeasured,
            planned: run.plan.len(),
        })
    }

    /// The measured samples: counted rounds (no warm-ups) of the suites measured as
    /// such, the same number `runs` gives (a sum adds no sample of its own).
    pub fn measured_samples(&self) -> usize {
        (self.stats.iter().filter(|s| !s.sum))
            .map(|s| s.ok + s.failed)
            .sum()
    }

    pub(crate) fn header(&self) -> String {
        let samples = self.measured_samples();
        let ids: Vec<String> = self.run_ids().iter().map(i64::to_string).collect();
        format!(
            "destination: {} (run{} {}; {})",
            self.destination,
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", "),
            counted(samples, "measured sample")
        )
    }
}

/// A run its time budget ended early: its measurements without a sample, of all planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CutShort {
    pub unmeasured: usize,
    pub planned: usize,
}

impl CutShort {
    /// What the budget left out, and that `--resume` makes it; `what` says what leaves it
    /// out ("these lists leave").
    pub fn sentence(&self, what: &str) -> String {
        format!(
            "The time budget (--budget) ran out before {} of {} measurements had a sample: \
             {what} them out; `sshbench run --resume` makes them.",
            self.unmeasured, self.planned
        )
    }
}

/// `1 round`, `3 rounds`.
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Figures in the unit people read: MB/s for transfers and workloads, ms for connect and
/// typing (its keys wait milliseconds for a clock), µs for echo.
pub fn display_value(mode: Mode, v: f64) -> f64 {
    match mode {
        Mode::Connect | Mode::Typing | Mode::Exec | Mode::X11 => v * 1e3,
        Mode::Echo => v * 1e6,
        _ => v / 1e6,
    }
}

pub fn unit(mode: Mode) -> &'static str {
    match mode {
        Mode::Connect | Mode::Typing | Mode::Exec | Mode::X11 => "ms",
        Mode::Echo => "µs",
        _ => "MB/s",
    }
}

/// A figure in its display unit, one decimal.
pub fn figure_text(mode: Mode, v: f64) -> String {
    format!("{:.1}", display_value(mode, v))
}

/// The MAC column of an AEAD cipher, whose MAC is its own (ssh says `<implicit>`).
pub const BUILT_IN_MAC: &str = "built-in";

/// A name, or what stands for it when ssh chose (`(default)`, [`BUILT_IN_MAC`]).
pub fn name_or(v: &Option<String>, implicit: &str) -> String {
    v.clone().unwrap_or_else(|| implicit.to_string())
}

/// A readable suite label for one mode (the parts that vary in it).
pub fn suite_label(mode: Mode, s: &Suite) -> String {
    match mode {
        // What was forced: a key exchange alone was measured with ssh's own host key.
        Mode::Connect => match (&s.kex, &s.hostkey) {
            (Some(k), Some(h)) => format!("{k} + {h}"),
            (Some(k), None) => k.clone(),
            (None, Some(h)) => format!("{h} (host key)"),
            // dbclient's connections differ by their cipher alone.
            (None, None) => match &s.cipher {
                Some(c) => format!("{c} (cipher)"),
                None => "ssh's defaults".into(),
            },
        },
        Mode::Exec => match s.exec {
            Some(ExecVia::Fresh) => "a fresh connection per command".into(),
            Some(ExecVia::Master) => "over one ControlMaster connection".into(),
            None => "commands".into(),
        },
        Mode::X11 => {
            let zlib = if s.compression.is_some() {
                "compression"
            } else {
                "no compression"
            };
            match s.keystrokes {
                Some(k) => format!("{zlib}, ObscureKeystrokeTiming {k}"),
                None => zlib.into(),
            }
        }
        Mode::Typing => match s.keystrokes {
            Some(k) => format!("ObscureKeystrokeTiming {k}"),
            None => "the client's own".into(),
        },
        // An AEAD cipher's MAC is its own: the cipher alone names the pair.
        _ => format!(
            "{}{}{}",
            name_or(&s.cipher, "(default)"),
            s.mac
                .as_ref()
                .map(|m| format!(" + {m}"))
                .unwrap_or_default(),
            s.compression_label()
                .map(|c| format!(" + {c}"))
                .unwrap_or_default()
        ),
    }
}

/// What a `sum` in the n column means.
pub fn sum_note(mode: Mode) -> &'static str {
    match mode {
        Mode::Connect => {
            "n = sum: a pair not measured as such, its key exchange's time (beside the reference host key) plus its host key's (beside the reference key exchange) less the reference pair's; run --pairs measures every pair."
        }
        Mode::Echo => {
            "n = sum: a pair not measured as such, its cipher's round trip (beside the reference MAC) plus its MAC's (beside the reference cipher) less the reference pair's; run --pairs measures every pair."
        }
        _ => {
            "n = sum: a pair not measured as such, its cipher's time per byte (beside the reference MAC) plus its MAC's (beside the reference cipher) less the reference pair's; run --pairs measures every pair."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StopReason;

    #[test]
    fn one_of_a_thing_is_not_plural() {
        assert_eq!(counted(1, "round"), "1 round");
        assert_eq!(counted(0, "warm-up"), "0 warm-ups");
        assert_eq!(counted(3, "measured sample"), "3 measured samples");
    }

    #[test]
    fn a_stop_past_the_plan_is_named_by_its_samples() {
        let suite = |c: &str| Suite {
            cipher: Some(c.into()),
            ..Suite::default()
        };
        let plan = [PlanItem {
            mode: Mode::Echo,
            suite: suite("aes128-ctr"),
        }];
        let stop = |reason| Stop { reason, round: 5 };
        let stops = [
            (0, stop(StopReason::Budget)),
            (7, stop(StopReason::Separated)),
            (9, stop(StopReason::Dropped)),
        ];
        // Item 7 is a summed pair measured as such; item 9 has no sample to name it.
        let beyond = |item: usize| (item == 7).then(|| (Mode::Echo, suite("aes256-cbc")));
        let named = named_stops(&stops, &plan, beyond, PayloadKind::Random);
        assert_eq!(
            named,
            [
                (Mode::Echo, suite("aes128-ctr"), stop(StopReason::Budget)),
                (Mode::Echo, suite("aes256-cbc"), stop(StopReason::Separated)),
            ]
        );
    }
}
