//! A file in memory that a child writes its output into, written over again and again:
//! a reader that only counts the bytes takes nothing out of it. Through a pipe, every
//! page the writer fills is freed by whoever empties it, and that cost goes with every
//! byte (bench/results/notebook.md, "A receive into a file in memory"). Here the writer's offset is
//! moved back now and then (the pages stay and are written again), and the bytes so
//! far are that offset plus what was moved back. Linux (`O_TMPFILE` in `/dev/shm`).

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// The offset past which the writer is moved back: the file's size, at most this plus
/// what is written between two looks.
const RING: u64 = 4 << 20;

/// The file, and how far its offset was moved back so far.
#[derive(Debug)]
pub struct Sink {
    file: File,
    rewound: u64,
}

impl Sink {
    /// A new, nameless file in `/dev/shm`; `None` where there is none to be had (not
    /// Linux, no writable `/dev/shm`): the caller reads a pipe instead.
    pub fn new() -> Option<Sink> {
        let file = nameless()?;
        Some(Sink { file, rewound: 0 })
    }

    /// The child's end: the same open file, so that both see one offset.
    pub fn for_child(&self) -> std::io::Result<File> {
        self.file.try_clone()
    }

    /// Bytes written so far (the writer's offset plus what was moved back).
    pub fn written(&mut self) -> u64 {
        let at = self.file.stream_position().unwrap_or(0);
        at + self.rewound
    }

    /// The first `n` bytes written (what came before any move back); fewer when fewer
    /// are there.
    pub fn head(&self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        let mut got = 0;
        while got < n {
            match self.file.read_at(&mut buf[got..], got as u64) {
                Ok(0) | Err(_) => break,
                Ok(k) => got += k,
            }
        }
        buf.truncate(got);
        buf
    }

    /// Bytes written so far, the offset moved back to where it was `RING` ago if it is
    /// past that: relative to the writer's offset at that moment, so that a write in
    /// between is neither lost nor counted twice. Only once the head is no longer
    /// needed.
    pub fn written_and_wrap(&mut self) -> u64 {
        let at = self.file.stream_position().unwrap_or(0);
        if at < RING {
            return at + self.rewound;
        }
        let back = at - at % RING;
        match self.file.seek(SeekFrom::Current(-(back as i64))) {
            // The offset the move left, which counts any write in between.
            Ok(now) => {
                self.rewound += back;
                now + self.rewound
            }
            Err(_) => at + self.rewound,
        }
    }
}

/// Linux: an unnamed file in `/dev/shm` (memory; it vanishes with its last descriptor).
#[cfg(target_os = "linux")]
fn nameless() -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open("/dev/shm")
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn nameless() -> Option<File> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn every_byte_a_child_writes_is_counted_while_its_offset_is_moved_back() {
        let mut sink = Sink::new().expect("a file in /dev/shm");
        let total: u64 = 48 << 20;
        let mut child = Command::new("sh")
            .args(["-c", &format!("echo ready; head -c {total} /dev/zero")])
            .stdout(Stdio::from(sink.for_child().unwrap()))
            .spawn()
            .unwrap();
        let mut seen = Vec::new();
        while child.try_wait().unwrap().is_none() {
            if sink.written() >= 6 {
                seen.push(sink.written_and_wrap());
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        assert_eq!(sink.head(6), b"ready\n");
        assert_eq!(sink.written_and_wrap(), total + 6);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        // The pages were written over: the file never held more than a ring and what
        // came between two looks.
        let size = sink.file.metadata().unwrap().len();
        assert!(size < total / 2, "{size} bytes");
    }
}
