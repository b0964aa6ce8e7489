//! Connect's figures. A connection's time is its key exchange's (host key verification
//! included) plus parts no suite of the connect table changes: process start and TCP,
//! version strings, authentication, session start. Those parts carry most of a
//! connection's spread on a busy machine (delayed ACKs, late wake-ups) and none of the
//! suites' differences. A report (and a race) therefore takes them once, as their median
//! over all its connections, and a connection's figure is its own key exchange plus that
//! median: the same mean time, without the common noise (bench/results/notebook.md, "Connect: the
//! key exchange and the rest").

use crate::model::{Mode, Sample};

/// The part of a successful connection that its suite does not change: its time
/// outside the key exchange phase (`None` without phases, e.g. an older record).
pub fn rest(s: &Sample) -> Option<f64> {
    if s.mode != Mode::Connect || !s.outcome.is_success() {
        return None;
    }
    let p = s.phases?;
    Some((s.wall.as_secs_f64() - p.kex).max(0.0))
}

/// The median of `rests` (the report's common rest), `None` when there are none.
pub fn common_rest(rests: impl IntoIterator<Item = f64>) -> Option<f64> {
    super::median(&mut rests.into_iter().collect::<Vec<f64>>())
}

/// A connection's figure: its time `wall` with its own `rest` replaced by the `common`
/// one; the time itself when either is unknown.
pub fn adjusted(wall: f64, rest: Option<f64>, common: Option<f64>) -> f64 {
    match (rest, common) {
        (Some(own), Some(common)) => wall - own + common,
        _ => wall,
    }
}

/// A connect sample's figure in a report whose common rest is `common`.
pub fn connect_figure(s: &Sample, common: Option<f64>) -> Option<f64> {
    super::figure(s).map(|wall| adjusted(wall, rest(s), common))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Phases, Suite};
    use std::time::Duration;

    fn connection(wall_ms: u64, kex_ms: Option<u64>) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Connect, Outcome::Success);
        s.wall = Duration::from_millis(wall_ms);
        s.phases = kex_ms.map(|k| Phases {
            kex: k as f64 / 1000.0,
            ..Phases::default()
        });
        s
    }

    #[test]
    fn a_connection_keeps_its_key_exchange_and_takes_the_common_rest() {
        // Two connections of one suite: the second waited 40 ms for an ACK outside its
        // key exchange. Their figures differ by the key exchanges alone.
        let (a, b) = (connection(150, Some(12)), connection(195, Some(15)));
        let common = common_rest([rest(&a).unwrap(), rest(&b).unwrap(), 0.140]);
        assert_eq!(common, Some(0.140));
        let fa = connect_figure(&a, common).unwrap();
        let fb = connect_figure(&b, common).unwrap();
        assert!((fa - 0.152).abs() < 1e-9, "{fa}");
        assert!((fb - 0.155).abs() < 1e-9, "{fb}");
    }

    #[test]
    fn a_report_sets_every_connection_against_the_rest_of_all() {
        // Suite x: 150 and 195 ms (the second waited for an ACK), key exchanges 12 and
        // 15 ms; suite y: 160 ms, 20 ms. Rests 138, 180, 140: their median is 140 ms.
        let mut y = connection(160, Some(20));
        y.suite.kex = Some("y".into());
        let samples = [connection(150, Some(12)), connection(195, Some(15)), y];
        let stats = crate::analysis::aggregate(&samples);
        let mean = |i: usize| stats[i].figure.unwrap().mean;
        assert!((mean(0) - 0.1535).abs() < 1e-9, "{}", mean(0));
        assert!((mean(1) - 0.160).abs() < 1e-9, "{}", mean(1));
    }

    #[test]
    fn without_phases_or_a_common_rest_the_figure_is_the_time() {
        let plain = connection(150, None);
        assert_eq!(rest(&plain), None);
        assert_eq!(connect_figure(&plain, Some(0.1)), Some(0.150));
        assert_eq!(
            connect_figure(&connection(150, Some(12)), None),
            Some(0.150)
        );
        let failed = Sample::new(
            Suite::default(),
            Mode::Connect,
            Outcome::Failed {
                kind: crate::model::FailureKind::Other,
                problem: crate::model::Problem::Interrupted,
            },
        );
        assert_eq!(connect_figure(&failed, Some(0.1)), None);
        assert_eq!(rest(&failed), None);
        assert_eq!(common_rest([]), None);
    }
}
