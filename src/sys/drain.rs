//! Reading a pipe to nowhere, as cheaply as the OS allows: on Linux the pipe's pages are
//! spliced into `/dev/null` (handed over, never copied into this process), a quarter of
//! a wide pipe at a time (see [`Pacer`](super::pacer::Pacer)); elsewhere, or where the
//! kernel refuses, read into a buffer and dropped.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;

/// Bytes per step: a whole widened pipe.
const STEP: usize = super::proc::WIDE_PIPE;

/// Drain `r` (what its buffer holds first) to its end, calling `each` with the bytes
/// so far after every step; the total. Until the last pipe's worth before `last` bytes,
/// a step may wait for bytes to gather; the step that reaches `last` comes as soon as
/// the writer's last write (a caller times it).
pub fn drain<R: Read + AsFd>(r: &mut BufReader<R>, last: u64, mut each: impl FnMut(u64)) -> u64 {
    let mut total = r.buffer().len() as u64;
    r.consume(total as usize);
    if total > 0 {
        each(total);
    }
    #[cfg(target_os = "linux")]
    if let Some(n) = splice_to_null(r.get_ref(), total, last, &mut each) {
        return n;
    }
    // Elsewhere every read is a step of its own: nothing to pace by.
    #[cfg(not(target_os = "linux"))]
    let _ = last;
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
/// byte moved (the caller then reads). A wide pipe is left to gather bytes between
/// steps while more than its capacity remains before `last`.
#[cfg(target_os = "linux")]
fn splice_to_null(
    fd: &impl AsFd,
    mut total: u64,
    last: u64,
    each: &mut impl FnMut(u64),
) -> Option<u64> {
    use super::pacer::Pacer;
    use nix::errno::Errno;
    use nix::fcntl::{FcntlArg, SpliceFFlags, fcntl, splice};
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .ok()?;
    // A narrow pipe (64 KiB) holds too little to gather in: its writer would wait.
    let mut pacer = fcntl(fd, FcntlArg::F_GETPIPE_SZ)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n >= STEP / 2)
        .map(|n| (Pacer::new(n), n as u64));
    let mut moved_any = false;
    loop {
        if let Some((p, capacity)) = pacer.as_mut()
            && last.saturating_sub(total) > *capacity
            && !p.wait_for_bytes(fd.as_fd())
        {
            pacer = None;
        }
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
        let total = drain(&mut r, 3 << 20, |n| seen.push(n));
        assert_eq!(total, 3 << 20);
        assert_eq!(seen.last(), Some(&(3 << 20)));
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        child.wait().unwrap();
        // A pipe of our own: what was written, then EOF.
        let (rx, mut tx) = std::io::pipe().unwrap();
        tx.write_all(&[7u8; 1000]).unwrap();
        drop(tx);
        assert_eq!(drain(&mut BufReader::new(rx), 1000, |_| {}), 1000);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_wide_pipe_gathers_bytes_between_steps_until_its_last_pipes_worth() {
        // 16 MiB written 16 KiB at a time with a pause after each: a drain woken by every
        // write takes ~1024 steps; one that lets a quarter of the pipe gather takes ~64,
        // then goes step by step through the last 1 MiB (64 writes). The last MiB's
        // pauses are long (2 ms) so that a busy machine, which runs the drain late, does
        // not merge its writes; a drain that gathered there would still take ~4 steps.
        let (rx, mut tx) = std::io::pipe().unwrap();
        assert_eq!(super::super::proc::widen_pipe(&rx), Some(STEP));
        let writer = std::thread::spawn(move || {
            for i in 0..1024 {
                tx.write_all(&[0u8; 16 << 10]).unwrap();
                let pause = if i >= 1024 - 64 { 2000 } else { 100 };
                std::thread::sleep(std::time::Duration::from_micros(pause));
            }
        });
        let mut steps = Vec::new();
        let total = drain(&mut BufReader::new(rx), 16 << 20, |n| steps.push(n));
        writer.join().unwrap();
        assert_eq!(total, 16 << 20);
        let tail = steps.iter().filter(|&&n| n > 15 << 20).count();
        assert!(steps.len() < 400, "{} steps", steps.len());
        // Within the last pipe's worth, each write is its own step.
        assert!(tail > 32, "{tail} steps in the last MiB");
    }
}
