//! The data sent through ssh: one block generated once and reused.
//!
//! The default block is random (incompressible), so a later compression test measures
//! compression honestly; repeating a 1 MiB block does not help zlib, whose window is
//! 32 KiB.

use crate::model::{Note, PayloadKind, ZerosStep};
use crate::sys::pacer::Pacer;
use crate::sys::scratch;

/// A reusable payload block, shared by every clone: it lives as long as the transport,
/// so pages of it handed to a pipe by reference (`vmsplice`) never change under ssh.
#[derive(Clone, Debug)]
pub struct Payload {
    block: std::sync::Arc<[u8]>,
}

impl Payload {
    /// `len` pseudo-random bytes from a fixed seed (same bytes every run).
    pub fn random(len: usize, seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut block = vec![0u8; len];
        rng.fill(&mut block);
        Payload {
            block: block.into(),
        }
    }

    /// `len` bytes of the given kind (deterministic for a seed).
    pub fn new(kind: PayloadKind, len: usize, seed: u64) -> Self {
        match kind {
            PayloadKind::Random => Self::random(len, seed),
            PayloadKind::Zeros => Payload {
                block: vec![0; len].into(),
            },
            PayloadKind::Text => {
                const WORDS: [&str; 48] = [
                    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was",
                    "with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from",
                    "at", "which", "but", "have", "an", "had", "they", "you", "were", "their",
                    "one", "all", "we", "can", "her", "has", "there", "been", "server", "backup",
                    "archive", "network", "config", "secure", "shell",
                ];
                let mut rng = fastrand::Rng::with_seed(seed);
                let mut block = Vec::with_capacity(len + 16);
                while block.len() < len {
                    block.extend_from_slice(WORDS[rng.usize(..WORDS.len())].as_bytes());
                    block.push(if rng.u8(..16) == 0 { b'\n' } else { b' ' });
                }
                block.truncate(len);
                Payload {
                    block: block.into(),
                }
            }
        }
    }

    pub fn block(&self) -> &[u8] {
        &self.block
    }

    /// Write exactly `total` bytes of the endlessly repeated block to `out`, starting
    /// at stream offset `offset` (so consecutive calls continue the same stream).
    pub fn write_repeated(
        &self,
        out: &mut impl std::io::Write,
        total: u64,
        offset: u64,
    ) -> std::io::Result<()> {
        let len = self.block.len() as u64;
        let mut pos = offset % len;
        let mut left = total;
        while left > 0 {
            let n = left.min(len - pos);
            out.write_all(&self.block[pos as usize..(pos + n) as usize])?;
            left -= n;
            pos = (pos + n) % len;
        }
        out.flush()
    }

    /// As [`write_repeated`](Self::write_repeated) into a pipe, the block's pages handed
    /// to it by reference (Linux `vmsplice`) instead of copied: ssh's read is then the
    /// only copy. A full pipe is refilled at `pacer`'s pace. Falls back to writing where
    /// the kernel refuses.
    pub fn splice_repeated(
        &self,
        pipe: &mut (impl std::io::Write + std::os::fd::AsFd),
        total: u64,
        offset: u64,
        pacer: &mut Pacer,
    ) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use crate::sys::gift::{Spliced, splice_block};
            match splice_block(&self.block, pipe.as_fd(), total, offset, pacer)? {
                Spliced::All => Ok(()),
                Spliced::Refused { left, pos } => self.write_repeated(pipe, left, pos),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pacer;
            self.write_repeated(pipe, total, offset)
        }
    }
}

/// The zeros' file's size: far more than any one transfer moves, and free while a hole.
const ZEROS: u64 = 1 << 36;

/// Zeros for a send to read as its stdin: one sparse file (a hole: no memory on tmpfs,
/// no disk), from which each send opens exactly the bytes it moves, so ssh reads them
/// itself and sshbench never touches them. Without compression the bytes do not matter:
/// a cipher's and a MAC's work is the same for any data.
#[derive(Debug)]
pub struct Zeros {
    file: std::fs::File,
    /// What [`Zeros::take`] opens: on Linux this process's link to the file, whose name
    /// is gone; elsewhere the name.
    open_as: std::path::PathBuf,
    /// The name while it is kept (removed on drop).
    _named: Option<tempfile::TempPath>,
    len: u64,
}

impl Zeros {
    /// A sparse file of [`ZEROS`] bytes: in `/dev/shm` where there is one (Linux),
    /// else in the temp directory; readable by its owner only. On Linux its name is
    /// removed at once (nothing is left behind even by a `kill -9`); elsewhere it is
    /// removed on drop, and locked while it lives, so that the next one made sweeps
    /// those a killed sshbench left.
    pub fn new() -> std::io::Result<Self> {
        const PREFIX: &str = "sshbench-zeros.";
        let shm = std::path::Path::new("/dev/shm");
        let dirs = [
            shm.is_dir().then(|| shm.to_path_buf()),
            Some(std::env::temp_dir()),
        ];
        let mut last = None;
        for dir in dirs.into_iter().flatten() {
            scratch::remove_stale_files(&dir, PREFIX);
            let made = tempfile::Builder::new().prefix(PREFIX).tempfile_in(&dir);
            let file = match made {
                Ok(f) => f,
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            };
            scratch::flock(file.as_file(), libc::LOCK_EX | libc::LOCK_NB)?;
            file.as_file().set_len(ZEROS)?;
            let (file, name) = file.into_parts();
            let (open_as, named) = match unnamed(&file) {
                Some(link) => (link, None),
                None => (name.to_path_buf(), Some(name)),
            };
            return Ok(Zeros {
                file,
                open_as,
                _named: named,
                len: ZEROS,
            });
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no directory for a sparse file")))
    }

    /// The file opened anew (an offset of its own), `bytes` before its end. (A larger
    /// transfer than any before grows the file, and with it what a file opened earlier
    /// and still read would hold: at [`ZEROS`] bytes, none is that large.)
    pub fn take(&mut self, bytes: u64) -> std::io::Result<std::fs::File> {
        use std::io::{Seek, SeekFrom};
        if bytes > self.len {
            self.file.set_len(bytes)?;
            self.len = bytes;
        }
        let mut f = std::fs::File::open(&self.open_as)?;
        f.seek(SeekFrom::Start(self.len - bytes))?;
        Ok(f)
    }
}

/// Linux: `/proc/self/fd/N` for `file`, which opens it anew (an offset of its own) even
/// once it has no name; `None` where that does not work.
fn unnamed(file: &std::fs::File) -> Option<std::path::PathBuf> {
    use std::os::fd::AsRawFd;
    if !cfg!(target_os = "linux") {
        return None;
    }
    let link = std::path::PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    std::fs::File::open(&link).ok().map(|_| link)
}

/// A transport's zeros: made on first use. If they cannot be made, or opened, they are
/// not tried again, so that every send of the run is fed the same way (through a pipe,
/// see [`Payload::write_to`]), and why is noted once for the user.
#[derive(Debug, Default)]
pub struct ZerosSlot(Option<Option<Zeros>>);

impl ZerosSlot {
    /// `bytes` of zeros to read (see [`Zeros::take`]), the zeros made by `make` if none
    /// were tried yet; `None` from the first failure on, which adds a line to `notes`.
    pub fn take(
        &mut self,
        bytes: u64,
        make: impl FnOnce() -> std::io::Result<Zeros>,
        notes: &mut Vec<Note>,
    ) -> Option<std::fs::File> {
        let zeros = self.0.get_or_insert_with(|| {
            make()
                .map_err(|e| notes.push(unfed(ZerosStep::Made, &e)))
                .ok()
        });
        let taken = zeros.as_mut()?.take(bytes);
        taken
            .map_err(|e| {
                notes.push(unfed(ZerosStep::Opened, &e));
                self.0 = Some(None);
            })
            .ok()
    }
}

fn unfed(step: ZerosStep, e: &std::io::Error) -> Note {
    Note::ZerosUnavailable {
        step,
        error: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made once: a failure is noted once and never retried; made zeros serve every send.
    #[test]
    fn zeros_that_cannot_be_made_are_noted_once_and_not_tried_again() {
        let mut notes = Vec::new();
        let mut failed = ZerosSlot::default();
        let refuse = || Err(std::io::Error::other("no room"));
        assert!(failed.take(10, refuse, &mut notes).is_none());
        let never = || -> std::io::Result<Zeros> { panic!("tried again") };
        assert!(failed.take(10, never, &mut notes).is_none());
        assert_eq!(notes.len(), 1, "{notes:?}");
        let no_room = Note::ZerosUnavailable {
            step: ZerosStep::Made,
            error: "no room".into(),
        };
        assert_eq!(notes[0], no_room);

        let mut made = ZerosSlot::default();
        let mut makes = 0;
        for _ in 0..3 {
            let make = || {
                makes += 1;
                Zeros::new()
            };
            assert!(made.take(1 << 20, make, &mut notes).is_some());
        }
        assert_eq!((makes, notes.len()), (1, 1));
    }

    #[test]
    fn zeros_open_exactly_the_bytes_asked_for_each_with_an_offset_of_its_own() {
        use std::io::Read;
        let mut z = Zeros::new().unwrap();
        let read = |f: std::fs::File| {
            let mut v = Vec::new();
            f.take(1 << 30).read_to_end(&mut v).unwrap();
            v
        };
        let big = z.take(300_000).unwrap();
        // A smaller one after a larger one, each read after the next was opened.
        let small = z.take(1000).unwrap();
        let bigger = z.take(400_000).unwrap();
        for (f, n) in [(small, 1000), (big, 300_000), (bigger, 400_000)] {
            let v = read(f);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|b| *b == 0));
        }
        // One past the file's size grows it.
        let mut huge = z.take(ZEROS + 5).unwrap();
        assert_eq!(huge.metadata().unwrap().len(), ZEROS + 5);
        let mut first = [1u8; 10];
        std::io::Read::read_exact(&mut huge, &mut first).unwrap();
        assert_eq!(first, [0; 10]);
        assert_eq!(read(z.take(0).unwrap()).len(), 0);
        if cfg!(target_os = "linux") {
            // No name left while it lives: a killed sshbench leaves nothing.
            assert!(z._named.is_none());
            let link = std::fs::read_link(&z.open_as).unwrap();
            assert!(link.to_string_lossy().ends_with(" (deleted)"), "{link:?}");
            return;
        }
        let path = z.open_as.clone();
        let other = std::fs::File::open(&path).unwrap();
        assert!(
            scratch::flock(&other, libc::LOCK_EX | libc::LOCK_NB).is_err(),
            "held while it lives"
        );
        drop(z);
        assert!(!path.exists(), "removed on drop");
    }

    #[test]
    fn spliced_bytes_are_the_written_ones() {
        let p = Payload::random(4096, 3);
        let (r, w) = nix::unistd::pipe().unwrap();
        let (mut r, mut w) = (std::fs::File::from(r), std::fs::File::from(w));
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut r, &mut got).unwrap();
            got
        });
        // Across the block's end, from an offset into it, through a full pipe.
        let mut pacer = Pacer::new(1 << 16);
        p.splice_repeated(&mut w, 300_000, 1000, &mut pacer)
            .unwrap();
        drop(w);
        let mut want = Vec::new();
        p.write_repeated(&mut want, 300_000, 1000).unwrap();
        assert_eq!(reader.join().unwrap(), want);
    }

    #[test]
    fn random_block_is_deterministic_and_not_constant() {
        let a = Payload::random(4096, 7);
        let b = Payload::random(4096, 7);
        assert_eq!(a.block(), b.block());
        let distinct: std::collections::HashSet<u8> = a.block().iter().copied().collect();
        assert!(
            distinct.len() > 200,
            "only {} distinct byte values",
            distinct.len()
        );
    }

    #[test]
    fn kinds_differ_in_compressibility() {
        let text = Payload::new(PayloadKind::Text, 1 << 16, 3);
        assert_eq!(text.block().len(), 1 << 16);
        assert!(
            text.block()
                .iter()
                .all(|b| b.is_ascii_lowercase() || *b == b' ' || *b == b'\n')
        );
        assert!(
            Payload::new(PayloadKind::Zeros, 10, 0)
                .block()
                .iter()
                .all(|b| *b == 0)
        );
        assert_eq!(
            Payload::new(PayloadKind::Random, 64, 9).block(),
            Payload::random(64, 9).block()
        );
    }

    #[test]
    fn writes_exact_totals_across_block_boundaries() {
        let p = Payload::random(10, 1);
        for total in [0u64, 3, 10, 25] {
            let mut out = Vec::new();
            p.write_repeated(&mut out, total, 0).unwrap();
            assert_eq!(out.len() as u64, total);
            if total == 25 {
                assert_eq!(&out[20..25], &p.block()[..5]);
            }
        }
        // Two calls continue one stream.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        p.write_repeated(&mut a, 23, 0).unwrap();
        p.write_repeated(&mut b, 7, 0).unwrap();
        p.write_repeated(&mut b, 16, 7).unwrap();
        assert_eq!(a, b);
    }
}
