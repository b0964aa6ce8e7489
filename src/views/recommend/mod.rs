//! `recommend`: an `ssh_config` block (and the matching `sshd_config` lines) with the
//! measured algorithms fastest first, among acceptable grades only: broken never unless
//! asked for, legacy only with `--allow legacy`.

mod dead_end;
mod kept;
mod rank;
mod server;
pub mod short;

use super::export::Document;
use super::scope::{Scope, TERRAPIN_NOTE, display_value, unit};
use crate::analysis::SuiteStats;
use crate::destination;
use crate::model::{AlgoKind, AlgoLists, Filters, Mode};
use crate::offer::catalogue::{self, Grade};
use crate::store::clients::client_software;
use crate::views::exec;
use kept::hold_host_keys;
pub use kept::{HELD, hold_mark};
pub use rank::Order;
use rank::{Policy, RankedName, indistinguishable, rank_names};
use serde::Serialize;
pub use server::ServerSoftware;

/// What to optimize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    Send,
    Receive,
    Connect,
    /// Send and receive equally (geometric mean of each mode's relative speed).
    Balanced,
    /// Keystroke echo latency (typing, tmux, X11).
    Interactive,
    /// Many short commands: one shared connection (ControlMaster), its ciphers as connect's.
    Commands,
    /// A tool's transfers one way, as measured by its workloads (both shapes alike).
    SftpPut,
    SftpGet,
    RsyncPut,
    RsyncGet,
    ScpPut,
    ScpGet,
}

impl Goal {
    fn session_modes(self) -> &'static [Mode] {
        match self {
            Goal::Send => &[Mode::Send],
            Goal::Receive => &[Mode::Receive],
            Goal::Connect | Goal::Balanced | Goal::Commands => &[Mode::Send, Mode::Receive],
            Goal::Interactive => &[Mode::Echo],
            Goal::SftpPut => &[Mode::SftpPutFile, Mode::SftpPutTree],
            Goal::SftpGet => &[Mode::SftpGetFile, Mode::SftpGetTree],
            Goal::RsyncPut => &[Mode::RsyncPutFile, Mode::RsyncPutTree],
            Goal::RsyncGet => &[Mode::RsyncGetFile, Mode::RsyncGetTree],
            Goal::ScpPut => &[Mode::ScpPutFile, Mode::ScpPutTree],
            Goal::ScpGet => &[Mode::ScpGetFile, Mode::ScpGetTree],
        }
    }

    /// A workload goal's tool and direction (`rsync-put`).
    fn workload(self) -> Option<&'static str> {
        self.session_modes()[0].tool_way()
    }
}

/// One recommended list.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub keyword: &'static str,
    pub kind: AlgoKind,
    /// Fastest first.
    pub names: Vec<String>,
    /// Each name's score: its best figure relative to the best name (1.0 = best).
    pub scores: Vec<f64>,
    pub comments: Vec<String>,
    /// Names of a better grade than any measured, which the client lists and the run's
    /// filter left out (see [`kept`]): written with the measured ones, unmeasured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Why the line is written as a comment for the person to place, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// Everything `recommend` prints.
#[derive(Clone, Debug, Serialize)]
pub struct RecommendView {
    pub destination: String,
    pub runs: Vec<i64>,
    pub goal: Goal,
    pub order: Order,
    pub allowed: Grade,
    pub lines: Vec<Line>,
    pub notes: Vec<String>,
    /// The `ssh_config` keywords of kinds that were measured but left nothing the
    /// grades allow (a note says why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dead_ends: Vec<&'static str>,
    /// What the server's software takes (its banner's): `sshd_config` lines or not.
    #[serde(skip_serializing_if = "ServerSoftware::is_sshd")]
    pub server: ServerSoftware,
    /// Results of one client of a run of several (`--ssh`): that client's software, whose
    /// names another client may not know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The client is Dropbear's dbclient, which reads no ssh_config: its advice is its
    /// own flags.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dbclient: bool,
    #[serde(flatten)]
    pub figures: GoalFigures,
}

/// What a goal of its own measured beside the lists: typing for `interactive`, short
/// commands for `commands`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GoalFigures {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<crate::views::typing::TypingView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<exec::ExecView>,
}

impl GoalFigures {
    fn of(scope: &Scope, goal: Goal) -> GoalFigures {
        GoalFigures {
            typing: (goal == Goal::Interactive)
                .then(|| crate::views::typing::view(scope))
                .flatten(),
            commands: (goal == Goal::Commands)
                .then(|| exec::view(scope))
                .flatten(),
        }
    }
}

fn figure_text(mode: Mode, s: &SuiteStats) -> String {
    let mean = s.figure.map_or(f64::NAN, |f| f.mean);
    format!("{:.1} {} {mode}", display_value(mode, mean), unit(mode))
}

fn figures(bests: &[(Mode, SuiteStats)]) -> String {
    let v: Vec<String> = bests.iter().map(|(m, s)| figure_text(*m, s)).collect();
    v.join(", ")
}

/// The client's first choice of the names measured here: the first name of its
/// preference list (`ssh -G`) that was measured in the goal's modes, as the name that was
/// measured (an alias counts as its canonical name), and the names its list puts before
/// it that were not measured (the server does not offer them, or the run left them out).
pub(crate) fn client_choice(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    defaults: &AlgoLists,
) -> Option<(String, Vec<String>)> {
    let canonical = |n: &str| catalogue::canonical(kind, n).to_string();
    let measured_as = |d: &str| {
        stats
            .iter()
            .filter(|s| modes.contains(&s.mode) && s.figure.is_some())
            .filter_map(|s| s.suite.get(kind))
            .find(|n| canonical(n) == canonical(d))
            .map(str::to_string)
    };
    let prefs = defaults.get(kind).unwrap_or_default();
    let at = prefs.iter().position(|d| measured_as(d).is_some())?;
    let chosen = measured_as(&prefs[at])?;
    let mut skipped: Vec<String> = Vec::new();
    // Certificate algorithms need a certificate, which no measurement uses.
    for d in prefs[..at].iter().filter(|d| !d.contains("-cert-v0")) {
        if canonical(d) != canonical(&chosen) && !skipped.contains(d) {
            skipped.push(d.clone());
        }
    }
    Some((chosen, skipped))
}

/// "; your client lists NAMES before it, not measured here", or nothing.
fn listed_before(skipped: &[String]) -> String {
    match skipped.is_empty() {
        true => String::new(),
        false => format!(
            "; your client lists {} before it, not measured here",
            skipped.join(", ")
        ),
    }
}

/// What the line says about the client's own first choice.
fn default_comment(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    policy: Policy,
    defaults: &AlgoLists,
    ranked: &[RankedName],
) -> Option<String> {
    let (d, skipped) = client_choice(stats, kind, modes, defaults)?;
    let before = listed_before(&skipped);
    let (first, first_score, first_bests) = ranked.first()?;
    if &d == first {
        // Names listed before it but not measured may be ones ssh would take first.
        let already = match skipped.is_empty() {
            true => "is already your client's first choice",
            false => "comes first in your client's list of the names measured",
        };
        return Some(format!("{d} {already}{before}"));
    }
    let grade = |n: &str| policy.grade(kind, n);
    let Some((_, score, bests)) = ranked.iter().find(|r| r.0 == d) else {
        let g = grade(&d).map_or("unknown".into(), |g| {
            if policy.demoted(kind, &d) {
                format!("{g} here (Terrapin)")
            } else {
                g.to_string()
            }
        });
        return Some(format!(
            "your client's first choice {d} is {g} and not recommended{before}"
        ));
    };
    let noise = if indistinguishable(first_bests, bests) {
        ", within noise"
    } else {
        ""
    };
    let gain = (first_score / score - 1.0) * 100.0;
    let reason = catalogue::lookup(kind, &d).map_or("", |e| e.reason);
    let what = if gain < 0.0 && grade(first) < grade(&d) {
        format!(
            "{:.0}% slower than your client's first choice {d} ({}{noise}), for a better grade: {d} is {}, {reason}",
            -gain,
            figures(bests),
            grade(&d).map_or("unknown", |g| g.as_str()),
        )
    } else {
        let worse = if grade(first) > grade(&d) {
            let why = catalogue::lookup(kind, first).map_or("", |e| e.reason);
            format!("; {first} is a worse grade: {why}")
        } else {
            String::new()
        };
        format!(
            "{gain:+.0}% over your client's first choice {d} ({}{noise}){worse}",
            figures(bests)
        )
    };
    Some(what + &before)
}

/// One ssh_config keyword to recommend, and the modes whose figures decide it.
#[derive(Clone, Copy)]
pub(super) struct Keyword<'a> {
    pub kind: AlgoKind,
    pub modes: &'a [Mode],
}

/// What the client picks unforced, and the run's own filters.
#[derive(Clone, Copy)]
struct ClientLists<'a> {
    defaults: &'a AlgoLists,
    filters: Option<&'a Filters>,
}

/// Build one line with its comments.
fn line(
    stats: &[SuiteStats],
    keyword: Keyword,
    policy: Policy,
    client: ClientLists,
    notes: &mut Vec<String>,
) -> Option<Line> {
    let Keyword { kind, modes } = keyword;
    let ClientLists { defaults, filters } = client;
    let ranked = rank_names(stats, kind, modes, policy);
    let (first, _, first_bests) = ranked.first()?;
    let spec = filters.and_then(|f| f.get(kind));
    let prefs = defaults.get(kind).unwrap_or_default();
    let kept = kept::kept(kind, prefs, spec, &ranked, policy);
    let mut comments = Vec::from_iter(kept::comment(kind, &kept, policy));
    comments.push(format!("{first}: {}", figures(first_bests)));
    comments.extend(default_comment(
        stats, kind, modes, policy, defaults, &ranked,
    ));
    // Tie with the runner-up: the data cannot decide between them.
    if let Some((second, _, second_bests)) = ranked.get(1) {
        if indistinguishable(first_bests, second_bests) {
            comments.push(format!(
                "{first} and {second} are not distinguishable in these measurements (the better grade is listed first)"
            ));
        }
    }
    if first_bests.iter().any(|(_, s)| s.ok < 3) {
        notes.push(format!(
            "{}: the data is too thin to decide (fewer than 3 samples); measure more rounds",
            kind.config_keyword()
        ));
    }
    Some(Line {
        keyword: kind.config_keyword(),
        kind,
        names: ranked.iter().map(|r| r.0.clone()).collect(),
        scores: ranked.iter().map(|r| r.1).collect(),
        comments,
        kept,
        held: None,
    })
}

/// The `Host` pattern for a destination as stored.
pub(crate) fn host_pattern(destination: &str) -> String {
    if destination::is_sandbox_label(destination) {
        return "*".into();
    }
    // One client's results of several (`localhost (ssh OpenSSH_10.0p2)`): a host name
    // never holds a space.
    let destination = destination.split_once(" (").map_or(destination, |(d, _)| d);
    let host = destination.rsplit_once('@').map_or(destination, |(_, h)| h);
    let host = host.trim_start_matches('[');
    match host.split_once(']') {
        Some((h, _)) => h.to_string(),
        None if host.matches(':').count() == 1 => {
            host.split(':').next().unwrap_or(host).to_string()
        }
        None => host.to_string(),
    }
}

/// The modes ciphers and MACs are ranked by: the goal's own, or where none of them has
/// a figure (a login that allows sftp alone) the workloads that move data its way.
fn cipher_modes(measured: &[SuiteStats], goal: Goal, notes: &mut Vec<String>) -> Vec<Mode> {
    let own = goal.session_modes();
    let has = |m: Mode| measured.iter().any(|s| s.mode == m && s.figure.is_some());
    if goal == Goal::Interactive || own.iter().any(|&m| has(m)) {
        return own.to_vec();
    }
    if let Some(name) = goal.workload() {
        let raw = own[0].raw_stream().unwrap_or(Mode::Send);
        notes.push(format!(
            "Ciphers and MACs are ranked by {raw}: {name} was not measured (`sshbench run \
             DEST --mode {name}` measures it)"
        ));
        return vec![raw];
    }
    let ways = |put: bool| match goal {
        Goal::Send => put,
        Goal::Receive => !put,
        _ => true,
    };
    let workloads: Vec<Mode> = (Mode::ALL.into_iter())
        .filter(|&m| m.workload().is_some_and(|w| ways(w.put)) && has(m))
        .collect();
    if !workloads.is_empty() {
        let names: Vec<&str> = workloads.iter().map(|m| m.as_str()).collect();
        notes.push(format!(
            "Ciphers and MACs are ranked by {}: no raw stream was measured",
            names.join(", ")
        ));
    }
    workloads
}

/// Rank once per kind and collect the lines and notes.
pub fn view(scope: &Scope, goal: Goal, max: Grade, order: Order) -> RecommendView {
    let defaults = (scope.runs.last()).map_or_else(Default::default, |r| r.client_defaults.clone());
    let server = (scope.runs.last()).and_then(|r| r.server_version.as_deref());
    let filters = (scope.runs.last()).map(|r| r.options.filters.clone());
    let policy = Policy {
        max,
        grader: scope.grader(),
        order,
        server: ServerSoftware::from_banner(server),
    };
    let mut notes = Vec::from_iter(scope.cut_short().map(|c| c.sentence("these lists leave")));
    if scope.lacks_strict_kex() {
        notes.push(TERRAPIN_NOTE.to_string());
    }
    // Every name is ranked by what was measured of it, never by a summed pair, and a
    // tool by its defaults (its option variants are its own question, in `show`).
    let measured: Vec<SuiteStats> = (scope.stats.iter())
        .filter(|s| !s.sum && s.suite.tool.is_none())
        .cloned()
        .collect();
    let transfer = &cipher_modes(&measured, goal, &mut notes)[..];
    let (mut lines, mut dead_ends) = (Vec::new(), Vec::new());
    for (kind, modes) in [
        (AlgoKind::Kex, &[Mode::Connect][..]),
        (AlgoKind::HostKey, &[Mode::Connect][..]),
        (AlgoKind::Cipher, transfer),
        (AlgoKind::Mac, transfer),
    ] {
        let lists = ClientLists {
            defaults: &defaults,
            filters: filters.as_ref(),
        };
        let keyword = Keyword { kind, modes };
        match line(&measured, keyword, policy, lists, &mut notes) {
            Some(l) => lines.push(l),
            None => {
                if dead_end::measured_any(&measured, kind, modes) {
                    dead_ends.push(kind.config_keyword());
                }
                notes.push(dead_end::note(&measured, keyword, policy, &defaults));
            }
        }
    }
    if host_pattern(&scope.destination) == "*" {
        hold_host_keys(&mut lines);
    }
    RecommendView {
        destination: scope.destination.clone(),
        runs: scope.run_ids(),
        goal,
        order,
        allowed: max,
        lines,
        notes,
        dead_ends,
        server: policy.server,
        client: client_of(scope),
        dbclient: is_dbclient(scope),
        figures: GoalFigures::of(scope, goal),
    }
}

/// Whether the newest run's client is Dropbear's dbclient.
fn is_dbclient(scope: &Scope) -> bool {
    scope.runs.last().and_then(|r| r.client_kind()) == Some(crate::model::ClientKind::Dropbear)
}

/// dbclient's advice: `-c` and `-m` with the lists in order (it offers only those
/// names, so a server that offers none of them is refused), for the destination.
pub(crate) fn dbclient_block(v: &RecommendView) -> String {
    let host = match host_pattern(&v.destination).as_str() {
        "*" => "HOST".to_string(),
        h => h.to_string(),
    };
    let mut out = String::from(
        "# dbclient reads no ssh_config: give it these (it offers only the names given, first \
         preferred)\n",
    );
    let mut flags = Vec::new();
    for l in &v.lines {
        let flag = match l.keyword {
            "Ciphers" => "-c",
            "MACs" => "-m",
            _ => continue,
        };
        for c in &l.comments {
            out.push_str(&format!("# {c}\n"));
        }
        flags.push(format!("{flag} {}", l.listed(v.order).join(",")));
    }
    if flags.is_empty() {
        out.push_str("# nothing to give it; the notes below say why\n");
    } else {
        out.push_str(&format!("dbclient {} {host}\n", flags.join(" ")));
    }
    out
}

/// The client of results of one client of several.
fn client_of(scope: &Scope) -> Option<String> {
    (scope.runs.last())
        .filter(|r| r.clients.len() > 1)
        .map(|r| client_software(&r.client_version).to_string())
}

/// The comment a block of one client's of several carries: another ssh reading it may
/// stop at a name it does not know.
pub(crate) fn client_comment(v: &RecommendView) -> String {
    v.client.as_ref().map_or_else(String::new, |c| {
        format!("    # measured through {c}: for that client's config; another ssh may not know these names\n")
    })
}

/// "uploads with rsync (...)" for a workload goal.
fn workload_goal_text(goal: Goal) -> String {
    let w = (goal.session_modes()[0].workload()).expect("the other goals are named in header");
    let way = if w.put { "uploads" } else { "downloads" };
    format!(
        "{way} with {} (one large file and a tree of small files)",
        w.tool.label()
    )
}

fn header(v: &RecommendView) -> String {
    let goal_text = match v.goal {
        Goal::Send => "sending",
        Goal::Receive => "receiving",
        Goal::Connect => "connecting (ciphers and MACs for send and receive alike)",
        Goal::Balanced => "sending and receiving alike",
        Goal::Interactive => "interactive latency (keystroke echo round trip)",
        Goal::Commands => "many short commands (one shared connection)",
        g => &workload_goal_text(g),
    };
    let allowed = match v.allowed {
        Grade::Recommended => "recommended",
        Grade::Acceptable => "recommended, acceptable",
        Grade::Legacy => "recommended, acceptable, legacy (--allow legacy)",
        Grade::Broken => "ALL, INCLUDING BROKEN (--allow broken)",
    };
    let warning = if v.allowed == Grade::Broken {
        " -- except now, as asked: do not use this on a network you do not trust"
    } else {
        ""
    };
    let runs: Vec<String> = v.runs.iter().map(i64::to_string).collect();
    let order = match v.order {
        Order::Grade => "the best grade first, fastest first within a grade",
        Order::Speed => "fastest first across the allowed grades (--order speed)",
    };
    format!(
        "# sshbench recommendation for {} (runs {}) for {goal_text}: {order}.\n# Grades allowed: {allowed}; broken algorithms are never listed{warning}.",
        v.destination,
        runs.join(", "),
    )
}

fn client_block(v: &RecommendView) -> String {
    if v.dbclient {
        return dbclient_block(v);
    }
    // ssh keeps the first value it reads: a block below `Host *` defaults is ignored.
    let mut client = format!(
        "# ~/.ssh/config, above any Host * or Match block that sets these (ssh keeps the \
         first value it reads)\nHost {}\n",
        host_pattern(&v.destination)
    );
    client.push_str(&client_comment(v));
    if destination::is_sandbox_label(&v.destination) {
        client.push_str(&format!(
            "    # measured against the {}: this machine as both client and server\n",
            v.destination
        ));
    }
    for l in &v.lines {
        for c in &l.comments {
            client.push_str(&format!("    # {c}\n"));
        }
        let hash = hold_mark(&mut client, "    ", l.held.as_deref());
        let names = l.listed(v.order).join(",");
        client.push_str(&format!("    {hash}{} {names}\n", l.keyword));
    }
    let shared = v
        .figures
        .commands
        .as_ref()
        .map(exec::config_lines)
        .unwrap_or_default();
    for line in &shared {
        client.push_str(&format!("    {line}\n"));
    }
    if v.lines.is_empty() && shared.is_empty() {
        client.push_str("    # nothing to set here; the notes below say why\n");
    }
    client
}

fn server_block(v: &RecommendView) -> String {
    let lines: Vec<(&str, String)> = (v.lines.iter())
        .map(|l| (l.keyword, l.listed(v.order).join(",")))
        .collect();
    v.server.block(&lines)
}

/// The ssh_config block, the sshd_config lines and the notes.
pub fn recommend(scope: &Scope, goal: Goal, max: Grade, order: Order) -> (Document, RecommendView) {
    let v = view(scope, goal, max, order);
    let mut doc = Document::default();
    doc.text(header(&v));
    doc.code(client_block(&v));
    // A server block of no lines would read as advice to clear the server's lists.
    if !v.lines.is_empty() {
        doc.code(server_block(&v));
    }
    if !v.notes.is_empty() {
        let notes: Vec<String> = v.notes.iter().map(|n| format!("# note: {n}")).collect();
        doc.text(notes.join("\n"));
    }
    if let Some(c) = &v.figures.commands {
        let (ways, after) = exec::sentences(c, false);
        for s in ways.into_iter().chain(after) {
            doc.para(s, "");
        }
        if c.master_helps() {
            for caveat in exec::caveats() {
                doc.para(format!("caveat: {caveat}"), "  ");
            }
        }
    }
    if let Some(t) = &v.figures.typing {
        doc.grid(crate::views::typing::grid(t));
        let (variants, cost) = crate::views::typing::sentences(t);
        for s in variants.into_iter().chain(cost) {
            doc.para(s, "");
        }
    }
    (doc, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert_eq!(host_pattern("pi@nas.local:2222"), "nas.local");
        assert_eq!(host_pattern("nas"), "nas");
        assert_eq!(host_pattern("root@[::1]:22"), "::1");
        assert_eq!(host_pattern("local sandbox"), "*");
        assert_eq!(host_pattern("local sandbox (shared CPUs)"), "*");
    }
}
