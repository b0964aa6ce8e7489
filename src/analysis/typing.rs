//! Typing's figures: a suite's keys pooled by their place in the typing (in a burst,
//! after a short pause, after a long one), since the keystroke clock holds back some
//! places and not others; and the wire while typing and after, per second.

use super::{Percentiles, median, percentiles_of};
use crate::model::{KeyPlace, KeystrokeTiming, Sample, WireSpan};
use serde::Serialize;

/// Percentiles of one place's keys.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PlaceFigure {
    pub place: KeyPlace,
    pub echo: Percentiles,
}

/// What a connection carried per second, the median over samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WireRate {
    pub packets_per_s: f64,
    pub bytes_per_s: f64,
}

/// A typing suite's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypingStats {
    /// Each place that had keys, in [`KeyPlace::ALL`]'s order.
    pub places: Vec<PlaceFigure>,
    /// While typing (the bursts) and in the long pause after them; `None` where the OS
    /// did not tell.
    pub typing_wire: Option<WireRate>,
    pub idle_wire: Option<WireRate>,
}

impl TypingStats {
    pub fn place(&self, place: KeyPlace) -> Option<&Percentiles> {
        (self.places.iter())
            .find(|p| p.place == place)
            .map(|p| &p.echo)
    }
}

/// The figures of a typing suite's successful samples; `None` when none had keys.
pub fn typing_stats(good: &[&Sample]) -> Option<TypingStats> {
    let typed: Vec<_> = good.iter().filter_map(|s| s.typing.as_deref()).collect();
    let places: Vec<PlaceFigure> = KeyPlace::ALL
        .into_iter()
        .filter_map(|place| {
            let echoes = (typed.iter().flat_map(|t| &t.keys))
                .filter(|k| k.place() == place)
                .map(|k| k.echo_s)
                .collect();
            Some(PlaceFigure {
                place,
                echo: percentiles_of(echoes)?,
            })
        })
        .collect();
    if places.is_empty() {
        return None;
    }
    let rate = |pick: fn(crate::model::TypingWire) -> WireSpan| {
        let spans: Vec<WireSpan> = typed.iter().filter_map(|t| t.wire.map(pick)).collect();
        let mut packets: Vec<f64> = spans.iter().filter_map(WireSpan::packets_per_s).collect();
        let mut bytes: Vec<f64> = spans.iter().filter_map(WireSpan::bytes_per_s).collect();
        Some(WireRate {
            packets_per_s: median(&mut packets)?,
            bytes_per_s: median(&mut bytes)?,
        })
    };
    Some(TypingStats {
        places,
        typing_wire: rate(|w| w.typing),
        idle_wire: rate(|w| w.idle),
    })
}

/// What turning the keystroke clock off changes, from a suite with it (`on`) and one
/// without (`off`): per place, how much sooner the median key echoes (seconds; negative
/// when later), and how many fewer packets per second cross while typing and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClockCost {
    pub on: KeystrokeTiming,
    pub sooner: Vec<(KeyPlace, f64)>,
    pub fewer_packets_typing: Option<f64>,
    pub fewer_packets_idle: Option<f64>,
}

pub fn clock_cost(on: KeystrokeTiming, with: &TypingStats, without: &TypingStats) -> ClockCost {
    let sooner = KeyPlace::ALL
        .into_iter()
        .filter_map(|place| Some((place, with.place(place)?.p50 - without.place(place)?.p50)))
        .collect();
    let fewer = |a: Option<WireRate>, b: Option<WireRate>| {
        a.zip(b).map(|(a, b)| a.packets_per_s - b.packets_per_s)
    };
    ClockCost {
        on,
        sooner,
        fewer_packets_typing: fewer(with.typing_wire, without.typing_wire),
        fewer_packets_idle: fewer(with.idle_wire, without.idle_wire),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Outcome, Suite, TypedKey, Typing, TypingWire};

    fn sample(first: f64, later: f64, idle_packets: u64) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Typing, Outcome::Success);
        let key = |idle_s, position, echo_s| TypedKey {
            idle_s,
            position,
            echo_s,
        };
        let span = |packets_out| WireSpan {
            seconds: 2.0,
            packets_out,
            bytes_out: packets_out * 100,
            ..WireSpan::default()
        };
        s.typing = Some(Box::new(Typing {
            keys: vec![
                key(None, 0, first),
                key(Some(0.05), 1, later),
                key(Some(0.8), 0, later),
                key(Some(3.5), 0, first),
            ],
            wire: Some(TypingWire {
                typing: span(40),
                idle: span(idle_packets),
            }),
        }));
        s
    }

    #[test]
    fn keys_are_pooled_by_place_and_the_clock_s_cost_is_their_difference() {
        let on = [sample(0.001, 0.011, 100), sample(0.001, 0.013, 120)];
        let off = [sample(0.001, 0.001, 0)];
        let stats = |v: &[Sample]| typing_stats(&v.iter().collect::<Vec<_>>()).unwrap();
        let (with, without) = (stats(&on), stats(&off));
        assert_eq!(with.place(KeyPlace::AfterLongPause).unwrap().n, 4);
        assert_eq!(with.place(KeyPlace::InBurst).unwrap().p50, 0.011);
        assert_eq!(with.idle_wire.unwrap().packets_per_s, 55.0);
        let cost = clock_cost(KeystrokeTiming::Yes, &with, &without);
        let sooner = |p| cost.sooner.iter().find(|(q, _)| *q == p).unwrap().1;
        assert!((sooner(KeyPlace::InBurst) - 0.010).abs() < 1e-12);
        assert!((sooner(KeyPlace::AfterShortPause) - 0.010).abs() < 1e-12);
        assert_eq!(sooner(KeyPlace::AfterLongPause), 0.0);
        assert_eq!(cost.fewer_packets_idle, Some(55.0));
        assert_eq!(cost.fewer_packets_typing, Some(0.0));
    }

    #[test]
    fn samples_without_keys_have_no_figures() {
        let s = Sample::new(Suite::default(), Mode::Typing, Outcome::Success);
        assert_eq!(typing_stats(&[&s]), None);
    }
}
