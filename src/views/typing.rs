//! Typing in a terminal, in words: each ObscureKeystrokeTiming variant's keys by their
//! place and the wire it used, and what turning the clock off gives back and gives up.
//! The answer `run` ends with and `recommend --for interactive` say it; neither puts
//! `ObscureKeystrokeTiming no` in a block (it trades a protection for speed).

use super::export::Grid;
use super::scope::Scope;
use crate::analysis::typing::{ClockCost, TypingStats, WireRate, clock_cost};
use crate::model::{KeyPlace, KeystrokeTiming, Mode};
use serde::Serialize;

/// One variant measured.
#[derive(Clone, Debug, Serialize)]
pub struct TypingVariant {
    /// `None`: the client's own (a client without the option).
    pub keystrokes: Option<KeystrokeTiming>,
    pub samples: usize,
    pub stats: TypingStats,
}

#[derive(Clone, Debug, Serialize)]
pub struct TypingView {
    pub variants: Vec<TypingVariant>,
    /// The clock on (its default where measured) against off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<ClockCost>,
}

/// The typing figures of `scope`, if it has any.
pub fn view(scope: &Scope) -> Option<TypingView> {
    let variants: Vec<TypingVariant> = (scope.stats.iter())
        .filter(|s| s.mode == Mode::Typing)
        .filter_map(|s| {
            Some(TypingVariant {
                keystrokes: s.suite.keystrokes,
                samples: s.ok,
                stats: s.typing.clone()?,
            })
        })
        .collect();
    if variants.is_empty() {
        return None;
    }
    let find = |k: KeystrokeTiming| variants.iter().find(|v| v.keystrokes == Some(k));
    let on = find(KeystrokeTiming::Yes).or_else(|| {
        (variants.iter()).find(|v| matches!(v.keystrokes, Some(KeystrokeTiming::Interval(_))))
    });
    let cost = on.zip(find(KeystrokeTiming::No)).map(|(on, off)| {
        let k = on.keystrokes.unwrap_or(KeystrokeTiming::Yes);
        clock_cost(k, &on.stats, &off.stats)
    });
    Some(TypingView { variants, cost })
}

fn ms(seconds: f64) -> String {
    format!("{:.1} ms", seconds * 1e3)
}

fn place_label(p: KeyPlace) -> &'static str {
    match p {
        KeyPlace::InBurst => "in a burst",
        KeyPlace::AfterShortPause => "first after a short pause",
        KeyPlace::AfterLongPause => "first after a long pause",
    }
}

fn variant_label(k: Option<KeystrokeTiming>) -> String {
    match k {
        Some(k) => format!("ObscureKeystrokeTiming {k}"),
        None => "the client's own (no ObscureKeystrokeTiming)".into(),
    }
}

/// One sentence per variant: each place's median echo (with its p90).
fn variant_sentence(v: &TypingVariant) -> String {
    let places: Vec<String> = (v.stats.places.iter())
        .map(|p| {
            let (p50, p90) = (p.echo.p50, p.echo.p90);
            format!("{} {} (p90 {})", place_label(p.place), ms(p50), ms(p90))
        })
        .collect();
    format!(
        "{}: keys {}",
        variant_label(v.keystrokes),
        places.join(", ")
    )
}

fn rate(w: Option<WireRate>) -> String {
    w.map_or("?".into(), |w| format!("{:.0} packets/s", w.packets_per_s))
}

/// What the clock costs and what turning it off gives up.
fn cost_sentences(v: &TypingView, cost: &ClockCost) -> Vec<String> {
    let waits: Vec<String> = (cost.sooner.iter())
        .filter(|(p, _)| *p != KeyPlace::AfterLongPause)
        .map(|(p, d)| format!("{} {} sooner", place_label(*p), ms(*d)))
        .collect();
    let mut out = vec![format!(
        "ObscureKeystrokeTiming no gives back the clock's wait for keys typed within 3 s of \
         the last ({}); a key after a longer pause goes at once either way. It gives up hiding \
         when you type from anyone who watches the connection: that is why sshbench leaves it \
         out of the block; add it yourself under the Host where typing matters more.",
        waits.join(", ")
    )];
    let on = v.variants.iter().find(|x| x.keystrokes == Some(cost.on));
    let idle = on.and_then(|x| x.stats.idle_wire);
    match idle {
        Some(w) if w.packets_per_s < 1.0 => out.push(format!(
            "With {} the client sent no chaff in the pause after typing: it sends chaff only to \
             a server that answers pings (ping@openssh.com, OpenSSH 9.5 and later), so this \
             server's clients keep the wait without the cover.",
            variant_label(Some(cost.on))
        )),
        Some(_) => out.push(format!(
            "The wire: {} while typing and {} in the 3.5 s pause after it with {}, against {} \
             and {} without (both directions, from the client's socket).",
            rate(on.and_then(|x| x.stats.typing_wire)),
            rate(idle),
            variant_label(Some(cost.on)),
            rate(off_wire(v, |s| s.typing_wire)),
            rate(off_wire(v, |s| s.idle_wire)),
        )),
        None => {}
    }
    out
}

fn off_wire(v: &TypingView, pick: fn(&TypingStats) -> Option<WireRate>) -> Option<WireRate> {
    let off = (v.variants.iter()).find(|x| x.keystrokes == Some(KeystrokeTiming::No));
    off.and_then(|x| pick(&x.stats))
}

/// The sentences the answer and `recommend --for interactive` print: one per variant,
/// then what the clock costs.
pub fn sentences(v: &TypingView) -> (Vec<String>, Vec<String>) {
    let variants = v.variants.iter().map(variant_sentence).collect();
    let cost = (v.cost.as_ref()).map_or_else(Vec::new, |c| cost_sentences(v, c));
    (variants, cost)
}

/// The variants as a table: each place's p50/p90/p99 and the wire.
pub fn grid(v: &TypingView) -> Grid {
    let mut g = Grid::new(
        "Typing in a terminal (echo per key, ms)",
        &[
            "Keystroke timing",
            "Keys",
            "p50",
            "p90",
            "p99",
            "n",
            "Packets/s typing",
            "Packets/s after",
        ],
    )
    .right(&[2, 3, 4, 5, 6, 7])
    .names(&[0]);
    for x in &v.variants {
        for p in &x.stats.places {
            let e = p.echo;
            let cell = |s: f64| format!("{:.2}", s * 1e3);
            let wire =
                |w: Option<WireRate>| w.map_or("-".into(), |w| format!("{:.0}", w.packets_per_s));
            g.row(vec![
                x.keystrokes.map_or("(client's)".into(), |k| k.to_string()),
                place_label(p.place).into(),
                cell(e.p50),
                cell(e.p90),
                cell(e.p99),
                e.n.to_string(),
                wire(x.stats.typing_wire),
                wire(x.stats.idle_wire),
            ]);
        }
    }
    g
}
