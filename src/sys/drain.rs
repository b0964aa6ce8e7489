//! Reading a pipe to nowhere, as cheaply as the OS allows: on Linux the pipe's pages are
//! spliced into `/dev/null` (handed over, never copied into this process); elsewhere,
//! or where the kernel refuses, read into a buffer and dropped.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;

/// Bytes per step: a whole widened pipe.
const STEP: usize = super::proc::WIDE_PIPE;

/// Drain `r` (what its buffer holds first) to its end, calling `each` with the bytes
/// so far after every step; the total.
pub fn drain<R: Read + AsFd>(r: &mut BufReader<R>, mut each: impl FnMut(u64)) -> u64 {
    let mut total = r.buffer().len() as u64;
    r.consume(total as usize);
    if total > 0 {
        each(total);
    }
    #[cfg(target_os = "linux")]
    if let Some(n) = splice_to_null(r.get_ref(), total, &mut each) {
        return n;
    }
    let mut buf = vec![0u8; STEP];
    loop {
        match r.get_mut().read(&mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => {
                total += n as u64;
                each(total);
            }
        }
    }
}

/// Linux: splice to `/dev/null` until EOF; `None` when splicing is refused before any
/// byte moved (the caller then reads).
#[cfg(target_os = "linux")]
fn splice_to_null(fd: &impl AsFd, mut total: u64, each: &mut impl FnMut(u64)) -> Option<u64> {
    use nix::errno::Errno;
    use nix::fcntl::{SpliceFFlags, splice};
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .ok()?;
    let mut moved_any = false;
    loop {
        match splice(fd, None, &null, None, STEP, SpliceFFlags::SPLICE_F_MOVE) {
            Ok(0) => return Some(total),
            Ok(n) => {
                moved_any = true;
                total += n as u64;
                each(total);
            }
            Err(Errno::EINTR) => {}
            Err(Errno::EINVAL | Errno::ENOSYS) if !moved_any => return None,
            Err(_) => return Some(total),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    #[test]
    fn every_byte_is_counted_whatever_the_buffer_held() {
        // 3 MiB and a line through a child's stdout pipe, the line read first.
        let mut child = Command::new("sh")
            .args(["-c", "echo ready; head -c 3145728 /dev/zero"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut r = BufReader::with_capacity(64 << 10, child.stdout.take().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n");
        let mut seen = Vec::new();
        let total = drain(&mut r, |n| seen.push(n));
        assert_eq!(total, 3 << 20);
        assert_eq!(seen.last(), Some(&(3 << 20)));
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        child.wait().unwrap();
        // A pipe of our own: what was written, then EOF.
        let (rx, mut tx) = std::io::pipe().unwrap();
        tx.write_all(&[7u8; 1000]).unwrap();
        drop(tx);
        assert_eq!(drain(&mut BufReader::new(rx), |_| {}), 1000);
    }
}
