//! X11 forwarding, in words: each variant's round-trip-bound and bulk X client, and
//! whether compression or the keystroke clock changes X11 for this server (beyond the
//! noise: the 95% intervals of the two apart).

use super::scope::Scope;
use crate::analysis::Summary;
use crate::model::{KeystrokeTiming, Mode, Suite};
use serde::Serialize;

/// A mean (seconds) and the half-width of its 95% interval.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Figure {
    pub mean: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
}

impl From<Summary> for Figure {
    fn from(s: Summary) -> Figure {
        Figure {
            mean: s.mean,
            ci95: s.ci95,
        }
    }
}

/// One variant measured.
#[derive(Clone, Debug, Serialize)]
pub struct X11Variant {
    pub compression: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keystrokes: Option<KeystrokeTiming>,
    /// Seconds per xdpyinfo run (each sample's median).
    pub round_trip: Figure,
    /// Seconds of the xwd of the display.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bulk: Option<Figure>,
    /// Bytes the bulk client drew (the median sample's).
    pub bulk_bytes: u64,
}

/// What one setting changes, the others alike: each figure with it over without, where
/// the intervals are apart; `None` where they overlap.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    pub round_trip: Option<f64>,
    pub bulk: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct X11View {
    pub variants: Vec<X11Variant>,
    /// Compression on against off, the keystroke clock as it came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<Change>,
    /// The clock on against off, without compression.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<Change>,
}

/// The X11 figures of `scope`, if it has any.
pub fn view(scope: &Scope) -> Option<X11View> {
    let variants: Vec<X11Variant> = (scope.stats.iter())
        .filter(|s| s.mode == Mode::X11)
        .filter_map(|s| {
            Some(X11Variant {
                compression: s.suite.compression.is_some(),
                keystrokes: s.suite.keystrokes,
                round_trip: s.figure?.into(),
                bulk: s.x11_bulk.map(Figure::from),
                bulk_bytes: s.bytes,
            })
        })
        .collect();
    if variants.is_empty() {
        return None;
    }
    let find = |zlib: bool, k: Option<KeystrokeTiming>| {
        (variants.iter()).find(|v| v.compression == zlib && v.keystrokes == k)
    };
    // Compression is judged with the clock off where it was measured so: no wait of the
    // clock's in either figure.
    let off = Some(KeystrokeTiming::No);
    let base_clock = match variants.iter().any(|v| v.keystrokes == off) {
        true => off,
        false => (variants.iter())
            .find(|v| !v.compression)
            .and_then(|v| v.keystrokes),
    };
    let compression = find(true, base_clock)
        .zip(find(false, base_clock))
        .map(|(a, b)| change(a, b));
    let clock = (find(false, Some(KeystrokeTiming::Yes)))
        .zip(find(false, Some(KeystrokeTiming::No)))
        .map(|(a, b)| change(a, b));
    Some(X11View {
        variants,
        compression,
        clock,
    })
}

/// `a` over `b`, figure by figure, where their intervals are apart.
fn change(a: &X11Variant, b: &X11Variant) -> Change {
    let apart = |x: &Figure, y: &Figure| {
        let (cx, cy) = (
            x.ci95.unwrap_or(f64::INFINITY),
            y.ci95.unwrap_or(f64::INFINITY),
        );
        let disjoint = x.mean - cx > y.mean + cy || y.mean - cy > x.mean + cx;
        (disjoint && y.mean > 0.0).then(|| x.mean / y.mean)
    };
    Change {
        round_trip: apart(&a.round_trip, &b.round_trip),
        bulk: a.bulk.zip(b.bulk).and_then(|(x, y)| apart(&x, &y)),
    }
}

fn label(v: &X11Variant) -> String {
    let s = Suite {
        compression: v.compression.then(|| "zlib@openssh.com".into()),
        keystrokes: v.keystrokes,
        ..Suite::default()
    };
    super::scope::suite_label(Mode::X11, &s)
}

fn ms(s: f64) -> String {
    format!("{:.1} ms", s * 1e3)
}

/// `takes 1.8× as long` / `is 2.1× as quick`, or within the noise.
fn ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r >= 1.0 => format!("takes {r:.1}× as long"),
        Some(r) => format!("is {:.1}× as quick", 1.0 / r),
        None => "is the same within the noise".into(),
    }
}

/// One sentence per variant, then what compression and the clock change.
pub fn sentences(v: &X11View) -> (Vec<String>, Vec<String>) {
    let each = (v.variants.iter())
        .map(|x| {
            let bulk = x.bulk.map_or(String::new(), |b| {
                format!(
                    ", xwd of the display ({:.1} MB) {}",
                    x.bulk_bytes as f64 / 1e6,
                    ms(b.mean)
                )
            });
            format!("{}: xdpyinfo {}{bulk}", label(x), ms(x.round_trip.mean))
        })
        .collect();
    let mut after = Vec::new();
    if let Some(c) = &v.compression {
        after.push(format!(
            "with compression xdpyinfo {} and the xwd {}",
            ratio(c.round_trip),
            ratio(c.bulk)
        ));
    }
    if let Some(c) = &v.clock {
        after.push(format!(
            "with ObscureKeystrokeTiming on, an X program started from the terminal: xdpyinfo \
             {} and the xwd {}",
            ratio(c.round_trip),
            ratio(c.bulk)
        ));
    }
    (each, after)
}
