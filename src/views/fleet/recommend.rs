//! `recommend --fleet`: one `ssh_config` block for every host of a selection. Each list
//! keeps the single-host rule (allowed grades only, the best grade first), and within a
//! grade its order minimises the worst host's loss against that host's own best: each
//! host negotiates the first name it supports, so names are placed greedily, the one
//! whose worst not-yet-covered host fares best first (greedy is exact for a worst-case
//! objective: covering hosts only raises the worst of those left). Hosts that would gain
//! more than 10% from their own list, or support none of the fleet's, get a `Host` block
//! of their own before it (ssh takes the first value it finds).

use super::HostFigures;
use crate::model::AlgoKind;
use crate::model::fleet::HostWay;
use crate::offer::catalogue::Grade;
use crate::views::export::{Document, Grid};
use crate::views::recommend::{HELD, Order, RecommendView, hold_mark, host_pattern};
use serde::Serialize;
use std::collections::HashMap;

/// A per-host override pays when it gains more than this.
pub const OVERRIDE_GAIN: f64 = 0.10;

/// One list of the fleet's block.
#[derive(Clone, Debug, Serialize)]
pub struct FleetLine {
    pub keyword: &'static str,
    pub kind: AlgoKind,
    pub names: Vec<String>,
    /// The worst host's share of its fastest allowed name with this list, and the host.
    pub worst_share: f64,
    pub worst_host: String,
    /// Why the line is written as a comment, if it is (see [`HELD`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// What one host negotiates from one fleet list.
#[derive(Clone, Debug, Serialize)]
pub struct HostChoice {
    pub host: String,
    pub kind: AlgoKind,
    /// `None`: the host supports no name of the list.
    pub negotiated: Option<String>,
    /// Its share of the host's fastest allowed name (1 = that one).
    pub share: f64,
    /// The first name of the host's own recommendation, and its share.
    pub own_best: String,
    pub own_share: f64,
}

impl HostChoice {
    /// What the host's own list would gain over the fleet's (0.1 = 10%); infinite when
    /// it supports no name of the fleet's list.
    pub fn gain(&self) -> f64 {
        if self.share <= 0.0 {
            return f64::INFINITY;
        }
        self.own_share / self.share - 1.0
    }
}

/// A host's own block, where the fleet's costs it more than [`OVERRIDE_GAIN`].
#[derive(Clone, Debug, Serialize)]
pub struct Override {
    pub host: String,
    pub pattern: String,
    pub lines: Vec<(String, Vec<String>)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FleetRecommendView {
    pub hosts: Vec<String>,
    pub pattern: String,
    pub lines: Vec<FleetLine>,
    pub choices: Vec<HostChoice>,
    pub overrides: Vec<Override>,
    pub notes: Vec<String>,
    /// How a fleet measured each host, where one did (`--fleet-full`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<(String, crate::model::fleet::HostWay)>,
}

/// A host's scores of one kind: name → share of its best name (1 = best).
type Scores = HashMap<String, f64>;

/// Place `names` for `hosts` (each with its scores): greedy max-min, see the module.
fn order_names(mut names: Vec<String>, hosts: &[&Scores]) -> Vec<String> {
    let mut uncovered: Vec<usize> = (0..hosts.len()).collect();
    let mut out = Vec::new();
    while !names.is_empty() {
        let worth = |n: &String| {
            let shares: Vec<f64> = uncovered
                .iter()
                .filter_map(|&h| hosts[h].get(n).copied())
                .collect();
            let worst = shares.iter().copied().reduce(f64::min).unwrap_or(0.0);
            (worst, shares.len(), shares.iter().sum::<f64>())
        };
        let best = (0..names.len())
            .max_by(|&a, &b| {
                let (x, y) = (worth(&names[a]), worth(&names[b]));
                (x.0.total_cmp(&y.0))
                    .then(x.1.cmp(&y.1))
                    .then(x.2.total_cmp(&y.2))
                    .then(names[b].cmp(&names[a]))
            })
            .expect("names is not empty");
        let n = names.remove(best);
        uncovered.retain(|&h| !hosts[h].contains_key(&n));
        out.push(n);
    }
    out
}

/// The worst grade any host gives a name (Terrapin demotes per host).
fn fleet_grade(hosts: &[&HostFigures], kind: AlgoKind, name: &str) -> Grade {
    let grades = hosts
        .iter()
        .map(|h| h.grader.algo(kind, name).unwrap_or(Grade::Broken));
    grades.max().unwrap_or(Grade::Broken)
}

/// Names another host may use but one host measured and may not (a grade it lowers
/// there, Terrapin without strict KEX): left out everywhere, since a host that supports
/// a listed name negotiates it. Names no host may use are not listed in the first place.
fn excluded(
    hosts: &[&HostFigures],
    per_host: &[&RecommendView],
    kind: AlgoKind,
) -> Vec<(String, String)> {
    let allowed = |v: &RecommendView| -> Vec<String> {
        let lines = v.lines.iter().filter(|l| l.kind == kind);
        lines.flat_map(|l| l.names.iter().cloned()).collect()
    };
    let anywhere: Vec<String> = per_host.iter().flat_map(|v| allowed(v)).collect();
    let mut out = Vec::new();
    for (h, v) in hosts.iter().zip(per_host) {
        let here = allowed(v);
        for (_, n) in h.measured.iter().filter(|(k, _)| *k == kind) {
            // Only the host's grade counts: a name it measured only beside a cipher
            // whose grade it may not use is no reason.
            let lowered = anywhere.contains(n) && !here.contains(n) && h.grader.demoted(kind, n);
            if lowered && !out.iter().any(|(x, _)| x == n) {
                out.push((n.to_string(), h.destination.clone()));
            }
        }
    }
    out
}

/// Each host's scores of `kind`, against its best name of the kind (a MAC's score is
/// against the mode's best suite, an AEAD cipher's): the list's order is what is chosen.
fn host_scores(per_host: &[&RecommendView], kind: AlgoKind) -> Vec<Scores> {
    let of = |v: &&RecommendView| -> Scores {
        let Some(l) = v.lines.iter().find(|l| l.kind == kind) else {
            return Scores::new();
        };
        let top = l.scores.iter().copied().fold(0.0, f64::max);
        l.names
            .iter()
            .cloned()
            .zip(l.scores.iter().map(|s| s / top))
            .collect()
    };
    per_host.iter().map(of).collect()
}

/// The fleet's order of `names`: by grade tier first unless `--order speed`.
fn ordered(
    hosts: &[&HostFigures],
    names: Vec<String>,
    scores: &[Scores],
    kind: AlgoKind,
    order: Order,
) -> Vec<String> {
    let refs: Vec<&Scores> = scores.iter().collect();
    if order == Order::Speed {
        return order_names(names, &refs);
    }
    let mut tiers: Vec<(Grade, Vec<String>)> = Vec::new();
    for n in names {
        let g = fleet_grade(hosts, kind, &n);
        match tiers.iter_mut().find(|t| t.0 == g) {
            Some(t) => t.1.push(n),
            None => tiers.push((g, vec![n])),
        }
    }
    tiers.sort_by_key(|t| t.0);
    tiers
        .into_iter()
        .flat_map(|(_, t)| order_names(t, &refs))
        .collect()
}

/// What each host negotiates from the fleet's list: the first name it supports.
fn choices(
    hosts: &[&HostFigures],
    per_host: &[&RecommendView],
    scores: &[Scores],
    list: &[String],
    kind: AlgoKind,
) -> Vec<HostChoice> {
    let choice = |((h, s), v): ((&&HostFigures, &Scores), &&RecommendView)| {
        let negotiated = list.iter().find(|n| s.contains_key(*n)).cloned();
        let own = v
            .lines
            .iter()
            .find(|l| l.kind == kind)
            .and_then(|l| l.names.first());
        HostChoice {
            host: h.destination.clone(),
            kind,
            share: negotiated
                .as_ref()
                .and_then(|n| s.get(n))
                .copied()
                .unwrap_or(0.0),
            negotiated,
            own_share: own.and_then(|n| s.get(n)).copied().unwrap_or(0.0),
            own_best: own.cloned().unwrap_or_default(),
        }
    };
    hosts.iter().zip(scores).zip(per_host).map(choice).collect()
}

/// The names some host's own line keeps unmeasured for their grade (its run's filter
/// left out what its client prefers, see `recommend`), in the order first met.
fn kept(per_host: &[&RecommendView], kind: AlgoKind, measured: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let lines = per_host
        .iter()
        .flat_map(|v| v.lines.iter().filter(|l| l.kind == kind));
    for n in lines.flat_map(|l| l.kept.iter()) {
        if !measured.contains(n) && !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// One kind's fleet line, and what each host negotiates from it.
fn line(
    hosts: &[&HostFigures],
    per_host: &[&RecommendView],
    kind: AlgoKind,
    order: Order,
    notes: &mut Vec<String>,
) -> Option<(FleetLine, Vec<HostChoice>)> {
    // A host that measured no allowed name of this kind (one measured by its kind's
    // contenders, whose ciphers all carry their own MAC, say) has no say in its order.
    let all = host_scores(per_host, kind);
    let said: Vec<usize> = (0..all.len()).filter(|&i| !all[i].is_empty()).collect();
    let hosts: &[&HostFigures] = &said.iter().map(|&i| hosts[i]).collect::<Vec<_>>();
    let per_host: &[&RecommendView] = &said.iter().map(|&i| per_host[i]).collect::<Vec<_>>();
    let scores: Vec<Scores> = said.iter().map(|&i| all[i].clone()).collect();
    let out = excluded(hosts, per_host, kind);
    for (n, h) in &out {
        notes.push(format!(
            "{}: {n} is left out: {h} may not use it (its grade there)",
            kind.config_keyword()
        ));
    }
    let mut names: Vec<String> = scores.iter().flat_map(|s| s.keys().cloned()).collect();
    names.sort();
    names.dedup();
    names.retain(|n| !out.iter().any(|(x, _)| x == n));
    if names.is_empty() {
        return None;
    }
    let ordered = ordered_by_voters(hosts, names, &scores, kind, order);
    let choices = choices(hosts, per_host, &scores, &ordered, kind);
    let worst = choices.iter().min_by(|a, b| a.share.total_cmp(&b.share))?;
    let kept = kept(per_host, kind, &ordered);
    if !kept.is_empty() {
        notes.push(format!(
            "{}: {} not measured (the runs' filter left it out), kept {} for its grade",
            kind.config_keyword(),
            kept.join(", "),
            if order == Order::Grade {
                "first"
            } else {
                "last"
            }
        ));
    }
    let names: Vec<String> = match order {
        Order::Grade => kept.into_iter().chain(ordered).collect(),
        Order::Speed => ordered.into_iter().chain(kept).collect(),
    };
    // A host key type some host was not measured with may be one its known_hosts lacks.
    let known = |h: &&HostFigures| h.measured.iter().any(|m| m.0 == kind && m.1 == names[0]);
    let held = (kind == AlgoKind::HostKey && !hosts.iter().all(known)).then(|| HELD.to_string());
    let l = FleetLine {
        keyword: kind.config_keyword(),
        kind,
        held,
        names,
        worst_share: worst.share,
        worst_host: worst.host.clone(),
    };
    Some((l, choices))
}

/// The list's order, decided by the hosts measured in full: a host measured by its
/// kind's contenders agreed with the kind's full hosts (or it would have been measured
/// in full), which speak for it, since it measured the names that could win there, not
/// every name. Where every host was measured by contenders, all of them.
fn ordered_by_voters(
    hosts: &[&HostFigures],
    names: Vec<String>,
    scores: &[Scores],
    kind: AlgoKind,
    order: Order,
) -> Vec<String> {
    let voters: Vec<usize> = (0..hosts.len())
        .filter(|&i| !matches!(hosts[i].way, Some(HostWay::Contenders { .. })))
        .collect();
    if voters.is_empty() {
        return ordered(hosts, names, scores, kind, order);
    }
    let vh: Vec<&HostFigures> = voters.iter().map(|&i| hosts[i]).collect();
    let vs: Vec<Scores> = voters.iter().map(|&i| scores[i].clone()).collect();
    ordered(&vh, names, &vs, kind, order)
}

/// Hosts whose own lists gain more than [`OVERRIDE_GAIN`] (or that support no name of
/// a fleet list): their blocks.
fn overrides(choices: &[HostChoice], per_host: &[&RecommendView]) -> Vec<Override> {
    let mut out: Vec<Override> = Vec::new();
    for (c, v) in choices
        .iter()
        .filter(|c| c.gain() > OVERRIDE_GAIN)
        .filter_map(|c| {
            per_host
                .iter()
                .find(|v| v.destination == c.host)
                .map(|v| (c, v))
        })
    {
        let Some(own) = v.lines.iter().find(|l| l.kind == c.kind) else {
            continue;
        };
        let entry = (own.keyword.to_string(), own.listed(v.order));
        match out.iter_mut().find(|o| o.host == c.host) {
            Some(o) => o.lines.push(entry),
            None => out.push(Override {
                host: c.host.clone(),
                pattern: host_pattern(&c.host),
                lines: vec![entry],
            }),
        }
    }
    out
}

/// The fleet's block for `hosts` (`pattern`: the `Host` line, else each host's name).
/// Each host's figures carry its own recommendation ([`HostFigures::of`] asked for one);
/// a host without is left out.
pub fn view_of(all: &[HostFigures], pattern: Option<&str>, order: Order) -> FleetRecommendView {
    let hosts: Vec<&HostFigures> = all.iter().filter(|h| h.recommend.is_some()).collect();
    let per_host: Vec<&RecommendView> = hosts.iter().filter_map(|h| h.recommend.as_ref()).collect();
    let hosts = &hosts[..];
    let mut notes = Vec::new();
    let (mut lines, mut choices) = (Vec::new(), Vec::new());
    for kind in [
        AlgoKind::Kex,
        AlgoKind::HostKey,
        AlgoKind::Cipher,
        AlgoKind::Mac,
    ] {
        match line(hosts, &per_host, kind, order, &mut notes) {
            Some((l, c)) => {
                lines.push(l);
                choices.extend(c);
            }
            None => notes.push(format!(
                "{}: nothing measured may be recommended; hosts keep their defaults",
                kind.config_keyword()
            )),
        }
    }
    let patterns: Vec<String> = hosts.iter().map(|h| host_pattern(&h.destination)).collect();
    let pattern = pattern.map_or_else(|| patterns.join(" "), str::to_string);
    if pattern.split_whitespace().any(|p| p == "*") {
        let host_keys = lines.iter_mut().filter(|l| l.kind == AlgoKind::HostKey);
        host_keys.for_each(|l| l.held = Some(HELD.to_string()));
    }
    FleetRecommendView {
        hosts: hosts.iter().map(|h| h.destination.clone()).collect(),
        pattern,
        overrides: overrides(&choices, &per_host),
        lines,
        choices,
        notes,
        measured: (hosts.iter())
            .filter_map(|h| Some((h.destination.clone(), h.way.clone()?)))
            .collect(),
    }
}

/// How the hosts were measured: in full, by their kind's contenders, or in full after
/// their contenders disagreed (and why); `None` where no fleet said.
fn measured_text(v: &FleetRecommendView) -> Option<String> {
    if v.measured.is_empty() {
        return None;
    }
    let of = |f: fn(&HostWay) -> bool| -> Vec<&str> {
        (v.measured.iter())
            .filter(|(_, w)| f(w))
            .map(|(h, _)| h.as_str())
            .collect()
    };
    let full = of(|w| matches!(w, HostWay::Full { .. }));
    let contenders = of(|w| matches!(w, HostWay::Contenders { .. }));
    let mut parts = Vec::new();
    if !full.is_empty() {
        parts.push(format!("in full: {}", full.join(", ")));
    }
    if !contenders.is_empty() {
        parts.push(format!(
            "by the suites that could still win on their kind (the others measured on the \
             full hosts of their kind): {}",
            contenders.join(", ")
        ));
    }
    for (h, w) in &v.measured {
        if let HostWay::FellBack { why } = w {
            parts.push(format!(
                "in full after its contenders disagreed: {h} ({})",
                super::say_disagreement(why)
            ));
        }
    }
    Some(format!(
        "How the hosts were measured: {}.",
        parts.join("; ")
    ))
}

/// The block as text: the overrides first (ssh takes the first value it finds).
fn block(v: &FleetRecommendView) -> String {
    let mut out = String::from("# ~/.ssh/config\n");
    for o in &v.overrides {
        out.push_str(&format!(
            "Host {}\n    # its own lists gain more than 10% over the fleet's\n",
            o.pattern
        ));
        for (k, names) in &o.lines {
            out.push_str(&format!("    {k} {}\n", names.join(",")));
        }
    }
    out.push_str(&format!("Host {}\n", v.pattern));
    for l in &v.lines {
        let hash = hold_mark(&mut out, "    ", l.held.as_deref());
        out.push_str(&format!(
            "    # worst host {}: {:.0}% of its fastest allowed name\n    {hash}{} {}\n",
            l.worst_host,
            l.worst_share * 100.0,
            l.keyword,
            l.names.join(",")
        ));
    }
    out
}

pub fn recommend(
    hosts: &[HostFigures],
    pattern: Option<&str>,
    order: Order,
) -> (Document, FleetRecommendView) {
    let v = view_of(hosts, pattern, order);
    let mut doc = Document::default();
    doc.text(format!(
        "# sshbench recommendation for a fleet of {} hosts: each list the best grade first, \
         and within a grade the order that costs the worst host least against its own \
         fastest; a host whose own list gains more than 10% gets a block of its own.",
        v.hosts.len()
    ));
    doc.code(block(&v));
    if let Some(t) = measured_text(&v) {
        doc.para(t, "");
    }
    let mut g = Grid::new(
        "What each host negotiates",
        &[
            "Host",
            "List",
            "Negotiated",
            "Of its fastest",
            "Its own first",
            "Own list gains",
        ],
    )
    .right(&[3, 5])
    .names(&[2, 4])
    .droppable(&[5, 3]);
    for c in &v.choices {
        g.row(vec![
            c.host.clone(),
            c.kind.config_keyword().to_string(),
            c.negotiated
                .clone()
                .unwrap_or_else(|| "(none: its own block)".into()),
            format!("{:.0}%", c.share * 100.0),
            c.own_best.clone(),
            match c.gain() {
                g if g.is_infinite() => "-".into(),
                g => format!("{:+.0}%", g * 100.0),
            },
        ]);
    }
    doc.grid(g);
    for n in &v.notes {
        doc.text(format!("note: {n}"));
    }
    (doc, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(pairs: &[(&str, f64)]) -> Scores {
        pairs.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn the_order_costs_the_worst_host_least() {
        // a is everyone's fastest but slow on h2; b is good for all; c only h2 has.
        let h1 = scores(&[("a", 1.0), ("b", 0.95)]);
        let h2 = scores(&[("a", 0.5), ("b", 0.9), ("c", 1.0)]);
        let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let order = order_names(names.clone(), &[&h1, &h2]);
        // c first costs h2 nothing and h1 does not have it; then a for h1.
        assert_eq!(order, ["c", "a", "b"]);
        // Without c, b first: a first would leave h2 at 50%.
        let h2 = scores(&[("a", 0.5), ("b", 0.9)]);
        assert_eq!(order_names(names[..2].to_vec(), &[&h1, &h2]), ["b", "a"]);
    }
}

#[cfg(test)]
mod override_tests {
    use super::*;
    use crate::offer::grade::Grader;
    use crate::views::recommend::{Goal, Line};

    /// A host whose own cipher list (fastest first) has these names and scores.
    fn host(name: &str, ciphers: &[(&str, f64)]) -> HostFigures {
        host_of(name, AlgoKind::Cipher, ciphers)
    }

    /// A host whose own list of `kind` (fastest first) has these names and scores.
    fn host_of(name: &str, kind: AlgoKind, ciphers: &[(&str, f64)]) -> HostFigures {
        let line = Line {
            keyword: kind.config_keyword(),
            kind,
            names: ciphers.iter().map(|c| c.0.to_string()).collect(),
            scores: ciphers.iter().map(|c| c.1).collect(),
            comments: Vec::new(),
            kept: Vec::new(),
            held: None,
        };
        HostFigures {
            destination: name.into(),
            relative: Vec::new(),
            grader: Grader::new(Some(true)),
            measured: ciphers.iter().map(|c| (kind, c.0.to_string())).collect(),
            recommend: Some(RecommendView {
                destination: name.into(),
                runs: Vec::new(),
                goal: Goal::Balanced,
                order: Order::Grade,
                allowed: Grade::Acceptable,
                lines: vec![line],
                notes: Vec::new(),
                dead_ends: Vec::new(),
                server: Default::default(),
                client: None,
                dbclient: false,
                figures: Default::default(),
            }),
            way: None,
        }
    }

    #[test]
    fn hosts_that_gain_over_ten_percent_from_their_own_list_get_their_own_block() {
        let gcm = "aes128-gcm@openssh.com";
        let ctr = "aes128-ctr";
        let chacha = "chacha20-poly1305@openssh.com";
        let mut a = host("pi@a", &[(gcm, 1.0), (ctr, 0.5)]);
        // a measured chacha20-poly1305 but may not use it (no strict KEX there).
        a.measured.push((AlgoKind::Cipher, chacha.to_string()));
        a.grader = Grader::new(Some(false));
        let hosts = [
            a,
            host("pi@b", &[(gcm, 1.0), (ctr, 0.95)]),
            // The fleet's gcm costs c 20% against its own first, ctr.
            host("c:2222", &[(ctr, 1.0), (gcm, 0.8)]),
            // d alone has aes256-ctr: the fleet's list reaches it with that.
            host("d", &[("aes256-ctr", 1.0)]),
            // e's only name is left out for a's sake: only its own block reaches it.
            host("e", &[(chacha, 1.0)]),
        ];
        let v = view_of(&hosts, None, Order::Grade);
        assert_eq!(v.lines[0].names, [gcm, "aes256-ctr", ctr]);
        let blocks: Vec<&str> = v.overrides.iter().map(|o| o.pattern.as_str()).collect();
        assert_eq!(blocks, ["c", "e"], "{:?}", v.choices);
        let own = |names: &[&str]| {
            vec![(
                "Ciphers".to_string(),
                names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            )]
        };
        assert_eq!(v.overrides[0].lines, own(&[ctr, gcm]));
        assert_eq!(v.overrides[1].lines, own(&[chacha]));
        assert_eq!(v.pattern, "a b c d e");
        assert!(
            (v.notes.iter()).any(|n| n.contains("chacha20-poly1305@openssh.com is left out: pi@a")),
            "{:?}",
            v.notes
        );
        let text = block(&v);
        let at = |h: &str| text.find(h).unwrap_or_else(|| panic!("{h:?} in {text}"));
        assert!(
            at("Host c\n") < at("Host a b c d e\n"),
            "overrides first: {text}"
        );
    }

    /// Each host's host key types are those its known_hosts holds: a fleet list whose
    /// first type one host was not measured with is left as a comment.
    #[test]
    fn a_host_key_type_some_host_was_not_measured_with_leaves_the_line_a_comment() {
        let hk = AlgoKind::HostKey;
        let both = |name| host_of(name, hk, &[("ssh-ed25519", 1.0), ("rsa-sha2-256", 0.9)]);
        let rsa = host_of("b", hk, &[("rsa-sha2-256", 1.0)]);
        let v = view_of(&[both("a"), rsa], None, Order::Grade);
        assert_eq!(v.lines[0].names, ["ssh-ed25519", "rsa-sha2-256"]);
        assert!(v.lines[0].held.is_some());
        let text = block(&v);
        assert!(
            text.contains("\n    # HostKeyAlgorithms ssh-ed25519,"),
            "{text}"
        );
        let v = view_of(&[both("a"), both("c")], None, Order::Grade);
        assert_eq!(v.lines[0].held, None);
        assert!(block(&v).contains("\n    HostKeyAlgorithms ssh-ed25519,"));
    }
}
