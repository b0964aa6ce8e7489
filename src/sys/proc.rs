//! Child-process plumbing shared by the transport and the sandbox: reaping with resource
//! usage, killing whole process groups, finding descendants, widening pipes, bounded line
//! reading.

use crate::model::CpuTimes;
use std::io::{BufRead, Read};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a reaped child ended.
#[derive(Clone, Copy, Debug)]
pub struct Exit {
    pub at: Instant,
    /// Exit code, or `None` when killed by a signal.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub cpu: CpuTimes,
}

/// Reap `pid` on a background thread with `wait4`, so the exit instant is exact and its
/// CPU time is known. The caller must not also `wait()` on the `Child`.
pub fn reap_in_background(pid: u32) -> mpsc::Receiver<Exit> {
    let (tx, rx) = mpsc::channel();
    spawn_named("sb-reap", move || {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain old data.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: valid pointers to locals; pid is our own child.
            let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru) };
            if r == pid as libc::pid_t {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            // ECHILD or similar: nothing to reap.
            let _ = tx.send(Exit {
                at: Instant::now(),
                code: None,
                signal: None,
                cpu: CpuTimes::default(),
            });
            return;
        }
        let at = Instant::now();
        let (code, signal) = if libc::WIFEXITED(status) {
            (Some(libc::WEXITSTATUS(status)), None)
        } else if libc::WIFSIGNALED(status) {
            (None, Some(libc::WTERMSIG(status)))
        } else {
            (None, None)
        };
        let _ = tx.send(Exit {
            at,
            code,
            signal,
            cpu: cpu_of(&ru),
        });
    });
    rx
}

/// Send `signal` to the process group led by `pid` (spawned with `process_group(0)`).
pub fn kill_group(pid: u32, signal: i32) {
    // SAFETY: plain syscall; a stale group only yields ESRCH.
    unsafe {
        libc::killpg(pid as libc::pid_t, signal);
    }
}

/// Whether process `pid` exists on this machine (one of another user counts).
pub fn alive(pid: u32) -> bool {
    // 0 and negative ids name process groups, not a process.
    let Some(pid) = i32::try_from(pid).ok().filter(|&p| p > 0) else {
        return false;
    };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e != nix::errno::Errno::ESRCH,
    }
}

/// Send `signal` to one process.
pub fn kill(pid: u32, signal: i32) {
    // SAFETY: plain syscall; a stale pid only yields ESRCH.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// Every live descendant of `pid`. Known on Linux (from `/proc`); elsewhere an empty
/// list, and callers rely on sessions ending when their connection closes.
pub fn descendants(pid: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        let mut parents: Vec<(u32, u32)> = Vec::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(p) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
                    if let Some(ppid) = parse_ppid(&stat) {
                        parents.push((p, ppid));
                    }
                }
            }
        }
        let mut out = Vec::new();
        let mut frontier = vec![pid];
        while let Some(parent) = frontier.pop() {
            for &(child, ppid) in &parents {
                if ppid == parent && !out.contains(&child) {
                    out.push(child);
                    frontier.push(child);
                }
            }
        }
        out
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        Vec::new()
    }
}

/// Live processes whose command name is `name` (Linux `/proc/PID/comm`; elsewhere
/// `ps -A -o pid=,comm=`), zombies left out.
pub fn processes_named(name: &str) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"));
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
                comm.is_ok_and(|c| c.trim() == name) && stat.is_ok_and(|s| !s.contains(") Z "))
            })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let Ok(out) = std::process::Command::new("ps")
            .args(["-A", "-o", "pid=,comm="])
            .output()
        else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (pid, comm) = l.trim().split_once(char::is_whitespace)?;
                let base = comm.trim().rsplit('/').next()?;
                (base == name).then(|| pid.parse().ok())?
            })
            .collect()
    }
}

/// The CPU time (user + system) a live process has used so far: Linux only (`/proc`);
/// `None` elsewhere or when it cannot be read. To the nanosecond where the kernel says
/// (`schedstat`): `stat`'s clock ticks (10 ms) are most of a slow transfer's window.
pub fn cpu_time(pid: u32) -> Option<std::time::Duration> {
    #[cfg(target_os = "linux")]
    {
        if let Some(t) = run_time(pid) {
            return Some(t);
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 1..];
        let f: Vec<&str> = after.split_whitespace().collect();
        // Fields 14 and 15 of the whole line (utime, stime) are 12 and 13 after ')'.
        let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        let hz = super::machine::clock_ticks()?;
        Some(std::time::Duration::from_secs_f64(ticks as f64 / hz))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The time on a CPU of each of `pid`'s live threads (the first field of their
/// `schedstat`), summed: Linux only.
#[cfg(target_os = "linux")]
fn run_time(pid: u32) -> Option<std::time::Duration> {
    let mut ns = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(std::time::Duration::from_nanos(ns))
}

/// The CPU time the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`: Linux,
/// the BSDs, macOS); `None` where the clock is missing.
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(std::time::Duration::from(t))
}

/// A thread with a name (profilers and `top -H` show it; at most 15 bytes on Linux).
pub fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .expect("the OS starts a thread")
}

/// On Linux, ask the kernel to SIGTERM the child `cmd` starts if the thread that starts
/// it dies without cleaning up (sshbench killed with `kill -9`); elsewhere only the
/// normal teardown stops it.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Start `cmd`'s child in a session of its own, without a controlling terminal: a
/// client that would ask the terminal (a password, an unknown host key: dbclient has no
/// batch mode) cannot, and fails instead of waiting on the user's screen. Its process
/// group is its own, as with `process_group(0)`.
pub fn without_terminal(cmd: &mut std::process::Command) {
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// How long a live process has been ready to run but waited for a CPU (the run-queue
/// delay, second field of `/proc/PID/schedstat`): Linux only; `None` elsewhere or when
/// the kernel does not keep it.
pub fn run_queue_wait(pid: u32) -> Option<std::time::Duration> {
    #[cfg(target_os = "linux")]
    {
        let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
        let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
        Some(std::time::Duration::from_nanos(ns))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Bytes a pipe to or from a child may hold when [`widen_pipe`] can set it.
pub const WIDE_PIPE: usize = 1 << 20;

/// Let the pipe behind `fd` hold [`WIDE_PIPE`] bytes instead of the default 64 KiB
/// (Linux; the size it now holds, or None where the OS has no such setting or refuses).
/// A fast receive through a 64 KiB pipe keeps ssh waiting on its reader's scheduling
/// (bench/results/notebook.md, "Fast receive").
pub fn widen_pipe(fd: &impl std::os::fd::AsFd) -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        use nix::fcntl::{FcntlArg, fcntl};
        fcntl(fd, FcntlArg::F_SETPIPE_SZ(WIDE_PIPE as libc::c_int))
            .ok()
            .and_then(|n| usize::try_from(n).ok())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        None
    }
}

/// The parent pid from a `/proc/PID/stat` line; the command name may contain spaces and
/// parentheses, so parse after the last `)`.
pub fn parse_ppid(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The lines ssh wrote for a person, without what `-v` adds to every connection (debug
/// lines, its version, `Authenticated to ...`, the statistics at exit), which would
/// otherwise be the last line of a failed sample.
pub fn messages(lines: &[String]) -> impl Iterator<Item = &str> {
    const CHATTER: [&str; 6] = [
        "debug",
        "Warning: Permanently added",
        "OpenSSH_",
        "Authenticated to ",
        "Transferred: sent ",
        "Bytes per second: sent ",
    ];
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !CHATTER.iter().any(|c| l.starts_with(c)))
}

/// The last line ssh wrote for a person, for error reports.
pub fn last_message(lines: &[String]) -> Option<String> {
    messages(lines).last().map(str::to_string)
}

/// Read a line of at most `max` bytes (the rest of a longer line is discarded).
/// Returns `None` at EOF.
pub fn read_bounded_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r.by_ref().take(max as u64).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && n == max {
        // Discard the rest of an over-long line.
        let mut sink = Vec::new();
        loop {
            sink.clear();
            let m = r.by_ref().take(64 * 1024).read_until(b'\n', &mut sink)?;
            if m == 0 || sink.last() == Some(&b'\n') {
                break;
            }
        }
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// A process's CPU times from the `rusage` that `wait4` or `getrusage` filled in.
pub fn cpu_of(ru: &libc::rusage) -> CpuTimes {
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    CpuTimes {
        user: tv(ru.ru_utime),
        system: tv(ru.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_rusage_times() {
        // SAFETY: rusage is plain old data; all-zero is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        ru.ru_utime.tv_sec = 1;
        ru.ru_utime.tv_usec = 500_000;
        ru.ru_stime.tv_usec = 250;
        let cpu = cpu_of(&ru);
        assert_eq!(cpu.user, Duration::from_millis(1500));
        assert_eq!(cpu.system, Duration::from_micros(250));
        assert_eq!(cpu.total(), Duration::from_micros(1_500_250));
    }
    use std::io::Cursor;

    #[test]
    fn ppid_survives_odd_command_names() {
        assert_eq!(parse_ppid("123 (sshd: root) S 45 123 123 0"), Some(45));
        assert_eq!(parse_ppid("9 (a) b)) R 7 9"), Some(7));
        assert_eq!(parse_ppid("garbage"), None);
    }

    #[test]
    fn messages_leave_out_debug_lines_and_the_exit_statistics() {
        let lines: Vec<String> = [
            "OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19 27 Jan 2026",
            "sh: 1: head: not found",
            "Authenticated to 127.0.0.1 ([127.0.0.1]:44400) using \"publickey\".",
            "debug1: Exit status 1",
            "Transferred: sent 2412, received 2604 bytes, in 0.0 seconds",
            "Bytes per second: sent 101284.0, received 118510.4",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            last_message(&lines).as_deref(),
            Some("sh: 1: head: not found")
        );
    }

    #[test]
    fn bounded_lines_truncate_and_resync() {
        let mut r = Cursor::new(b"short\nxxxxxxxxxxxxxxxx\nnext\r\n".to_vec());
        assert_eq!(
            read_bounded_line(&mut r, 8).unwrap().as_deref(),
            Some("short")
        );
        assert_eq!(
            read_bounded_line(&mut r, 8).unwrap().as_deref(),
            Some("xxxxxxxx")
        );
        assert_eq!(
            read_bounded_line(&mut r, 8).unwrap().as_deref(),
            Some("next")
        );
        assert_eq!(read_bounded_line(&mut r, 8).unwrap(), None);
    }

    // The children are reaped by `reap_in_background`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    #[test]
    fn reaps_with_exit_code_and_cpu() {
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .unwrap();
        let exit = reap_in_background(child.id()).recv().unwrap();
        assert_eq!(exit.code, Some(3));
        assert_eq!(exit.signal, None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_time_of_a_busy_process_grows() {
        let me = std::process::id();
        let a = cpu_time(me).unwrap();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(100) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        assert!(cpu_time(me).unwrap() > a);
        assert_eq!(cpu_time(u32::MAX), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_time_is_finer_than_a_clock_tick() {
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let tick = std::time::Duration::from_millis(10);
        let mut readings = Vec::new();
        for _ in 0..10 {
            std::thread::sleep(std::time::Duration::from_millis(3));
            readings.extend(cpu_time(busy.id()));
        }
        busy.kill().unwrap();
        busy.wait().unwrap();
        // Ticks would read whole multiples of 10 ms, every time.
        let whole = |t: &std::time::Duration| t.as_nanos() % tick.as_nanos() == 0;
        assert!(!readings.iter().all(whole), "{readings:?}");
        assert!(readings.windows(2).all(|w| w[0] <= w[1]), "{readings:?}");
    }

    #[cfg(target_os = "linux")]
    #[allow(clippy::zombie_processes)]
    #[test]
    fn finds_grandchildren() {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let reaped = reap_in_background(child.id());
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        while descendants(child.id()).len() < 2 && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(descendants(child.id()).len(), 2);
        kill_group(child.id(), libc::SIGKILL);
        assert_eq!(reaped.recv().unwrap().signal, Some(libc::SIGKILL));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_child_s_pipe_can_be_widened() {
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let size = |fd: &std::process::ChildStdout| {
            nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETPIPE_SZ).unwrap() as usize
        };
        assert!(size(&out) < WIDE_PIPE);
        assert_eq!(widen_pipe(&out), Some(WIDE_PIPE));
        assert_eq!(size(&out), WIDE_PIPE);
        drop(child.stdin.take());
        child.wait().unwrap();
    }
}
