//! The client's other processes through a ProxyJump or ProxyCommand: the jump host's
//! `ssh -W` (or `nc`, ...) that ssh starts and that carries every byte again, encrypted
//! for the jump host's connection. They work on the client too, so their CPU over the
//! measured window joins ssh's, and the busiest of them all is the side's peak: a
//! proxy's ssh saturating a core limits the transfer as surely as ssh itself.

use crate::model::CpuWindow;
use crate::sys::proc;
use std::time::Duration;

/// One process's CPU time and run-queue delay at an instant, where known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Reading {
    pid: u32,
    cpu: Option<Duration>,
    waited: Option<Duration>,
}

/// The proxy processes of the ssh (or master) `pid`: its descendants, looked for only
/// when the destination is reached through a proxy (the search reads all of `/proc`).
pub(super) fn find(pid: u32, via_proxy: bool) -> Vec<u32> {
    if via_proxy {
        proc::descendants(pid)
    } else {
        Vec::new()
    }
}

/// Each of `pids`' CPU time and run-queue delay now.
pub(super) fn read(pids: &[u32]) -> Vec<Reading> {
    (pids.iter())
        .map(|&pid| Reading {
            pid,
            cpu: proc::cpu_time(pid),
            waited: proc::run_queue_wait(pid),
        })
        .collect()
}

/// Fold the proxies' CPU between `mark` and `end` into ssh's window `w`: their seconds
/// join the side's, and one busier than the busiest so far becomes the peak, with its
/// own run-queue delay.
pub(super) fn fold(w: &mut CpuWindow, mark: &[Reading], end: &[Reading]) {
    for e in end {
        let Some(m) = mark.iter().find(|m| m.pid == e.pid) else {
            continue;
        };
        let (Some(a), Some(b)) = (m.cpu, e.cpu) else {
            continue;
        };
        let seconds = b.saturating_sub(a).as_secs_f64();
        w.seconds += seconds;
        if seconds > w.peak {
            w.peak = seconds;
            w.waited = (m.waited.zip(e.waited)).map(|(a, b)| b.saturating_sub(a).as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pid: u32, cpu_ms: u64, wait_ms: u64) -> Reading {
        Reading {
            pid,
            cpu: Some(Duration::from_millis(cpu_ms)),
            waited: Some(Duration::from_millis(wait_ms)),
        }
    }

    #[test]
    fn a_busier_proxy_is_the_peak_and_every_proxy_counts() {
        let mut w = CpuWindow::of(0.120, Duration::from_millis(200), 1 << 27);
        w.waited = Some(0.010);
        // The jump host's ssh: 190 ms of CPU and 8 ms waiting; a shell: 1 ms; one that
        // ended before the end: nothing.
        let mark = [at(7, 1000, 50), at(8, 20, 0), at(9, 5, 0)];
        let end = [at(7, 1190, 58), at(8, 21, 0)];
        fold(&mut w, &mark, &end);
        assert!((w.seconds - 0.311).abs() < 1e-9, "{w:?}");
        assert!((w.peak - 0.190).abs() < 1e-9, "{w:?}");
        assert!((w.waited.unwrap() - 0.008).abs() < 1e-9, "{w:?}");
    }

    #[test]
    fn a_quieter_proxy_leaves_ssh_the_peak() {
        let mut w = CpuWindow::of(0.180, Duration::from_millis(200), 1 << 27);
        w.waited = Some(0.015);
        fold(&mut w, &[at(7, 0, 0)], &[at(7, 90, 40)]);
        assert!((w.seconds - 0.270).abs() < 1e-9 && w.peak == 0.180, "{w:?}");
        assert_eq!(w.waited, Some(0.015));
        // Nothing read at the mark: nothing folded.
        let before = w;
        fold(&mut w, &[], &[at(7, 90, 40)]);
        assert_eq!(w, before);
    }

    /// The descendants of a process are found only for a proxied destination.
    #[cfg(target_os = "linux")]
    #[test]
    fn proxies_are_looked_for_only_behind_a_proxy() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while find(child.id(), true).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let found = find(child.id(), true);
        assert_eq!(found.len(), 1);
        assert!(find(child.id(), false).is_empty());
        assert!(read(&found)[0].cpu.is_some());
        proc::kill(found[0], libc::SIGKILL);
        let _ = child.kill();
        let _ = child.wait();
    }
}
