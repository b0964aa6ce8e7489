//! Echo's figures. A session's figure is its median round trip. A session typed beside
//! a reference (each keystroke followed by one into a session of the run's reference
//! suite, over a connection of its own) is ranked by the ratio of its median to the
//! reference's: the machine's spells of slow wake-ups, which move a session's median
//! threefold, move both alike, so the ratio keeps only what the suite costs
//! (bench/results/notebook.md, "Echo beside a reference"). A report over sessions that all had a
//! reference shows each ratio times the reference's median over all of them.

use super::{median, summarize};
use crate::model::{Mode, Sample};

/// The median round trip of a session, in seconds.
pub fn echo_median(s: &Sample) -> Option<f64> {
    if !s.outcome.is_success() {
        return None;
    }
    median(&mut s.echoes.clone())
}

/// A session's median over its reference's, when it was typed beside one.
pub fn echo_ratio(s: &Sample) -> Option<f64> {
    let own = echo_median(s)?;
    let reference = median(&mut s.echoes_ref.clone())?;
    (reference > 0.0).then(|| own / reference)
}

/// The scale of a report's echo figures: the reference sessions' median round trip,
/// when every successful echo session of the report had a reference; `None` (plain
/// medians) when any had none, as sessions stored before references existed.
pub fn echo_scale<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Option<f64> {
    let mut refs: Vec<f64> = Vec::new();
    for s in samples {
        if s.mode != Mode::Echo || !s.outcome.is_success() {
            continue;
        }
        refs.push(median(&mut s.echoes_ref.clone())?);
    }
    summarize(&refs).map(|r| r.median)
}

/// An echo session's figure in a report of scale `scale` (see [`echo_scale`]).
pub fn echo_figure(s: &Sample, scale: Option<f64>) -> Option<f64> {
    match scale {
        Some(k) => echo_ratio(s).map(|r| r * k),
        None => echo_median(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Suite};

    fn session(own: &[f64], reference: &[f64]) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Echo, Outcome::Success);
        s.echoes = own.to_vec();
        s.echoes_ref = reference.to_vec();
        s
    }

    #[test]
    fn a_slow_spell_moves_the_median_not_the_ratio() {
        let calm = session(&[100e-6, 110e-6, 105e-6], &[120e-6, 118e-6, 122e-6]);
        let slow = session(&[300e-6, 330e-6, 315e-6], &[360e-6, 354e-6, 366e-6]);
        let (a, b) = (echo_ratio(&calm).unwrap(), echo_ratio(&slow).unwrap());
        assert!((a - 105.0 / 120.0).abs() < 1e-9 && (a - b).abs() < 1e-9);
        // The report's scale: the reference medians' median (of 120 and 360 µs: 240).
        let scale = echo_scale([&calm, &slow]).unwrap();
        assert!((scale - 240e-6).abs() < 1e-12);
        assert!((echo_figure(&slow, Some(scale)).unwrap() - a * 240e-6).abs() < 1e-15);
        // One session without a reference: plain medians for every session.
        let plain = session(&[100e-6], &[]);
        assert_eq!(echo_scale([&calm, &plain]), None);
        assert_eq!(echo_figure(&slow, None), Some(315e-6));
        assert_eq!(echo_ratio(&plain), None);
    }
}
