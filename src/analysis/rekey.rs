//! A suite's rekeying: the soonest interval its samples recorded (the one a long
//! transfer meets first) and the median stall.

use super::median;
use crate::model::{Rekey, Sample};

/// The rekeying of a suite's samples: the shortest interval any recorded, and the median
/// stall.
pub(super) fn of(samples: &[&Sample]) -> Option<Rekey> {
    let recorded: Vec<Rekey> = samples.iter().filter_map(|s| s.rekey).collect();
    let every = recorded.iter().map(|r| r.every).min()?;
    let mut seconds: Vec<f64> = recorded.iter().map(|r| r.seconds).collect();
    Some(Rekey {
        every,
        seconds: median(&mut seconds)?,
        within: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Outcome, Suite};

    fn sample(rekey: Option<(u64, f64, u32)>) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Receive, Outcome::Success);
        s.rekey = rekey.map(|(every, seconds, within)| Rekey {
            every,
            seconds,
            within,
        });
        s
    }

    #[test]
    fn the_soonest_interval_and_the_median_stall() {
        // A sample that saw the server's rekeys recorded their interval; one before them
        // only the known limits.
        let s = [
            sample(Some((64 << 30, 0.1, 0))),
            sample(Some((3 << 20, 0.3, 2))),
            sample(None),
            sample(Some((2 << 20, 0.2, 1))),
        ];
        let r = of(&s.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!((r.every, r.seconds, r.within), (2 << 20, 0.2, 0));
        assert_eq!(of(&[&sample(None)]), None);
    }
}
