//! A shared block's pages handed to a pipe by reference (Linux `vmsplice`) instead of
//! copied, so that the reader's `read` is the only copy of a send's bytes.

use super::pacer::Pacer;
use std::os::fd::BorrowedFd;
use std::sync::Arc;

/// How far a splice got.
#[derive(Debug, PartialEq, Eq)]
pub enum Spliced {
    /// Every byte is in the pipe.
    All,
    /// The kernel refuses `vmsplice` on this pipe: `left` bytes remain, from `pos` in the
    /// block, for the caller to write.
    Refused { left: u64, pos: u64 },
}

/// Hand `total` bytes of `block`, repeated endlessly from stream offset `offset`, to the
/// pipe `fd`; a full pipe is refilled at `pacer`'s pace.
///
/// The block is an `Arc<[u8]>`: nobody can change its bytes while a clone lives, and
/// whoever owns the pipe's reader keeps a clone until that reader is gone (the
/// transport keeps its payload until its ssh processes have exited).
#[cfg(target_os = "linux")]
pub fn splice_block(
    block: &Arc<[u8]>,
    fd: BorrowedFd<'_>,
    total: u64,
    offset: u64,
    pacer: &mut Pacer,
) -> std::io::Result<Spliced> {
    use nix::errno::Errno;
    use nix::fcntl::{SpliceFFlags, vmsplice};
    let len = block.len() as u64;
    let (mut pos, mut left) = (offset % len, total);
    let mut flags = SpliceFFlags::SPLICE_F_NONBLOCK;
    while left > 0 {
        let n = left.min(len - pos) as usize;
        let piece = &block[pos as usize..pos as usize + n];
        // SAFETY: the pages handed over belong to `block`, whose bytes never change and
        // which lives while the pipe's reader does (the caller's clone, see above).
        let spliced = unsafe { vmsplice(fd, &[std::io::IoSlice::new(piece)], flags) };
        match spliced {
            Ok(done) => {
                left -= done as u64;
                pos = (pos + done as u64) % len;
            }
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                if !pacer.wait(fd) {
                    flags = SpliceFFlags::empty();
                }
            }
            Err(Errno::EINVAL | Errno::ENOSYS) => return Ok(Spliced::Refused { left, pos }),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Spliced::All)
}
