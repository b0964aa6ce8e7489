//! Moving a pipe's bytes in batches: the writer naps until about a quarter of a full
//! pipe has drained, the reader until about a quarter of an empty one has filled, at
//! the rate it last saw, instead of being woken by each of the other end's reads or
//! writes (ssh moves 16-64 KiB at a time; a wakeup for each was most of the feeder's
//! and the drain's CPU).

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
        self.nap_on(fd, |before, after| (before.saturating_sub(after), after))
    }

    /// Wait for bytes in the drained pipe `fd`: one nap, then the next one sized by what
    /// arrived meanwhile (half as long when the pipe filled up: the writer waited).
    /// False where the pipe's fill cannot be read (the caller then reads at once).
    pub fn wait_for_bytes(&mut self, fd: BorrowedFd<'_>) -> bool {
        let capacity = self.capacity;
        self.nap_on(fd, |before, after| {
            (after.saturating_sub(before), capacity.saturating_sub(after))
        })
    }

    /// Nap, then size the next nap from the pipe's fill before and after: `moved` is
    /// what the other end did, and `room` what it still could (0: it had to wait).
    fn nap_on(
        &mut self,
        fd: BorrowedFd<'_>,
        moved: impl Fn(usize, usize) -> (usize, usize),
    ) -> bool {
        let Some(before) = queued(fd) else {
            return false;
        };
        std::thread::sleep(self.nap);
        let Some(after) = queued(fd) else {
            return false;
        };
        let (moved, room) = moved(before, after);
        self.nap = next_nap(self.nap, moved, room, self.capacity);
        true
    }
}

/// The nap after one of `nap` in which the other end moved `moved` bytes and had `room`
/// for more: long enough for it to move a quarter of `capacity` at that rate; half as
/// long when it ran out of room (it waited), twice when nothing moved.
fn next_nap(nap: Duration, moved: usize, room: usize, capacity: usize) -> Duration {
    let next = if room == 0 {
        nap / 2
    } else if moved == 0 {
        nap * 2
    } else {
        nap.mul_f64((capacity / 4) as f64 / moved as f64)
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
