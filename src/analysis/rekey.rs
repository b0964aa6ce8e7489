//! A suite's rekeying: the limit its samples recorded, or a sooner one their windows
//! show (a server's `RekeyLimit` is not visible from the client and shows only so).

use super::median;
use crate::model::{Rekey, Sample};

/// A window that held a rekey although its known limit gave one less than this chance
/// (its bytes over the limit's) is evidence of a sooner one; two such windows are
/// enough, since each alone happens by chance one time in twenty or less.
const UNLIKELY: f64 = 0.05;

/// The interval the suite's windows show, where they held more rekeys than the limit
/// each recorded explains: more than one beyond their bytes' share in one window (which
/// no phase of the known limit allows), or one each in two windows that the limit
/// gives under [`UNLIKELY`] a chance. The interval is then all the windows' stream
/// bytes per rekey they held.
pub fn seen_every(samples: &[&Sample]) -> Option<u64> {
    // (stream bytes of the window, the known limit's share of them, rekeys it held)
    let windows: Vec<(f64, f64, u32)> = (samples.iter())
        .filter_map(|s| {
            let (w, r) = (s.window?, s.rekey?);
            let stream = w.bytes as f64 * s.compression_factor.unwrap_or(1.0);
            Some((stream, stream / r.every.max(1) as f64, r.within))
        })
        .collect();
    let certain = (windows.iter()).any(|&(_, share, n)| f64::from(n) > share + 1.0);
    let unlikely = (windows.iter())
        .filter(|&&(_, share, n)| n >= 1 && share < UNLIKELY)
        .count();
    if !certain && unlikely < 2 {
        return None;
    }
    let bytes: f64 = windows.iter().map(|w| w.0).sum();
    let held: u32 = windows.iter().map(|w| w.2).sum();
    Some((bytes / f64::from(held)) as u64)
}

/// The rekeying of a suite's samples: the shortest interval any recorded (the one a
/// long transfer meets first), or the windows' own where they show a shorter one, and
/// the median stall.
pub(super) fn of(samples: &[&Sample]) -> Option<Rekey> {
    let recorded: Vec<Rekey> = samples.iter().filter_map(|s| s.rekey).collect();
    let known = recorded.iter().map(|r| r.every).min()?;
    let every = seen_every(samples).map_or(known, |seen| seen.min(known));
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
    use crate::model::{Mode, Outcome, Rekey, Suite, Window};
    use std::time::Duration;

    const GIB: u64 = 1 << 30;

    fn sample(window: u64, every: u64, within: u32) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Receive, Outcome::Success);
        s.window = Some(Window {
            bytes: window,
            time: Duration::from_millis(200),
        });
        s.rekey = Some(Rekey {
            every,
            seconds: 0.1,
            within,
        });
        s
    }

    fn seen(samples: &[Sample]) -> Option<u64> {
        seen_every(&samples.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_server_s_small_limit_shows_in_the_windows() {
        // RekeyLimit 4M on the server: windows of 6 MiB hold one or two.
        let s = [
            sample(6 << 20, GIB, 1),
            sample(6 << 20, GIB, 2),
            sample(6 << 20, GIB, 1),
            sample(6 << 20, GIB, 2),
        ];
        assert_eq!(seen(&s), Some(4 << 20));
        // One window with three rekeys in 12 MiB: no phase of 1 GiB allows that.
        assert_eq!(seen(&[sample(12 << 20, GIB, 3)]), Some(4 << 20));
        // Compressed to a half: the stream carried half the payload's bytes.
        let mut c = sample(12 << 20, GIB, 3);
        c.compression_factor = Some(0.5);
        assert_eq!(seen(&[c]), Some(2 << 20));
    }

    #[test]
    fn rekeys_the_known_limit_explains_say_nothing() {
        // One unlikely window alone happens by chance.
        assert_eq!(
            seen(&[sample(6 << 20, GIB, 1), sample(6 << 20, GIB, 0)]),
            None
        );
        // A fast suite's windows of 300 MiB meet a 1 GiB limit often.
        let fast = [sample(300 << 20, GIB, 1), sample(300 << 20, GIB, 1)];
        assert_eq!(seen(&fast), None);
        // The client's own RekeyLimit 2M, recorded: two in 3 MiB are its share.
        assert_eq!(seen(&[sample(3 << 20, 2 << 20, 2)]), None);
        assert_eq!(
            seen(&[sample(6 << 20, GIB, 0), sample(6 << 20, GIB, 0)]),
            None
        );
    }
}
