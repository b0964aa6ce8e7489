//! Refilling a full pipe in batches: the writer naps until about a quarter of the pipe
//! has drained, at the rate it last saw, instead of being woken by each of the reader's
//! reads (ssh reads 16 KiB at a time; a wakeup for each was most of the feeder's CPU).

use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// The shortest and longest nap: below 50 µs a nap is all wakeups; above 20 ms a slow
/// reader (3DES, ~20 MB/s) would still find a quarter of a 1 MiB pipe drained.
const MIN_NAP: Duration = Duration::from_micros(50);
const MAX_NAP: Duration = Duration::from_millis(20);

/// The pace of one pipe's refills: the next nap, learned from the last.
#[derive(Debug)]
pub struct Pacer {
    capacity: usize,
    nap: Duration,
}

impl Pacer {
    /// For a pipe that holds `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Pacer {
            capacity,
            nap: Duration::from_micros(200),
        }
    }

    /// Wait for room in the full pipe `fd`: one nap, then the next one sized by what
    /// drained meanwhile. False where the pipe's fill cannot be read (the caller then
    /// blocks in its write instead).
    pub fn wait(&mut self, fd: BorrowedFd<'_>) -> bool {
        let Some(before) = queued(fd) else {
            return false;
        };
        std::thread::sleep(self.nap);
        let Some(after) = queued(fd) else {
            return false;
        };
        self.nap = next_nap(self.nap, before.saturating_sub(after), after, self.capacity);
        true
    }
}

/// The nap after one of `nap` in which `drained` bytes left the pipe and `left` stayed:
/// long enough for a quarter of `capacity` to drain at that rate; half as long when the
/// pipe ran dry (the reader waited), twice when nothing moved.
fn next_nap(nap: Duration, drained: usize, left: usize, capacity: usize) -> Duration {
    let next = if left == 0 {
        nap / 2
    } else if drained == 0 {
        nap * 2
    } else {
        nap.mul_f64((capacity / 4) as f64 / drained as f64)
    };
    next.clamp(MIN_NAP, MAX_NAP)
}

/// Bytes waiting in the pipe behind `fd` (either end), or None where the OS refuses.
fn queued(fd: BorrowedFd<'_>) -> Option<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which outlives the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    (rc == 0).then(|| usize::try_from(n).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn naps_follow_the_rate_and_shrink_when_the_pipe_ran_dry() {
        let ms = Duration::from_millis;
        // A quarter of 1 MiB drained in 1 ms: the same again.
        assert_eq!(next_nap(ms(1), 1 << 18, 1 << 19, 1 << 20), ms(1));
        // Half the pipe drained: nap half as long.
        assert_eq!(next_nap(ms(2), 1 << 19, 1 << 19, 1 << 20), ms(1));
        // Dry: half; nothing moved: twice; both bounded.
        assert_eq!(next_nap(ms(2), 1 << 20, 0, 1 << 20), ms(1));
        assert_eq!(next_nap(ms(2), 0, 1 << 20, 1 << 20), ms(4));
        assert_eq!(next_nap(ms(15), 0, 1 << 20, 1 << 20), MAX_NAP);
        assert_eq!(next_nap(MIN_NAP, 1 << 20, 0, 1 << 20), MIN_NAP);
    }

    #[test]
    fn the_fill_of_a_pipe_is_read_from_either_end() {
        let (r, mut w) = std::io::pipe().unwrap();
        w.write_all(&[1u8; 3000]).unwrap();
        assert_eq!(queued(w.as_fd()), Some(3000));
        assert_eq!(queued(r.as_fd()), Some(3000));
        let mut p = Pacer::new(1 << 16);
        let before = p.nap;
        // Nothing drains while it naps: the next nap is longer.
        assert!(p.wait(w.as_fd()));
        assert_eq!(p.nap, before * 2);
        let mut buf = [0u8; 3000];
        (&r).read_exact(&mut buf).unwrap();
        assert_eq!(queued(w.as_fd()), Some(0));
    }
}
