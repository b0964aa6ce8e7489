//! How busy other processes kept this machine's CPUs over a stretch of time: the whole
//! machine's busy time (user, nice and system in Linux's `/proc/stat`) less this
//! process's and its reaped descendants' (`getrusage`). Unknown elsewhere.

use std::time::{Duration, Instant};

/// A point to measure others' CPU from.
pub struct Busy {
    machine: Duration,
    own: Duration,
    at: Instant,
}

impl Busy {
    /// Now; `None` where the machine's busy time is unknown.
    pub fn now() -> Option<Busy> {
        Some(Busy {
            machine: machine_busy()?,
            own: own_cpu(),
            at: Instant::now(),
        })
    }

    /// The CPUs other processes kept busy on average since `self` (a little below zero
    /// on an idle machine: the machine's time is counted in clock ticks). Children of
    /// this process still running count as others until they are reaped.
    pub fn others_since(&self) -> Option<f64> {
        let machine = machine_busy()?.as_secs_f64() - self.machine.as_secs_f64();
        let own = own_cpu().as_secs_f64() - self.own.as_secs_f64();
        let wall = self.at.elapsed().as_secs_f64();
        (wall > 0.0).then(|| (machine - own) / wall)
    }

    /// The time since `self`.
    pub fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }
}

/// The machine's CPU time spent on processes (user, nice, system) since boot.
fn machine_busy() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        parse_busy(stat.lines().next()?, super::machine::clock_ticks()?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `cpu  USER NICE SYSTEM IDLE ...` in clock ticks of `hz`.
#[cfg(any(target_os = "linux", test))]
fn parse_busy(line: &str, hz: f64) -> Option<Duration> {
    let mut f = line.split_whitespace();
    (f.next()? == "cpu").then_some(())?;
    let mut ticks = 0u64;
    for _ in 0..3 {
        ticks += f.next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_secs_f64(ticks as f64 / hz))
}

/// This process's CPU and that of every descendant it (or they) reaped.
fn own_cpu() -> Duration {
    let of = |who| {
        // SAFETY: rusage is plain old data, filled by the call.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a local.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return Duration::ZERO;
        }
        super::proc::cpu_of(&ru).total()
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_s_busy_time_is_user_nice_and_system() {
        let line = "cpu  1000 50 250 90000 300 0 40 0 0 0";
        assert_eq!(parse_busy(line, 100.0), Some(Duration::from_secs(13)));
        assert_eq!(parse_busy("cpu0 1 2 3 4", 100.0), None);
        assert_eq!(parse_busy("cpu  1 x 3", 100.0), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_s_work_is_this_process_s_own_once_reaped() {
        let start = Busy::now().expect("Linux has /proc/stat");
        let before = own_cpu();
        // About 0.3 s of CPU in a child shell.
        let st = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(st.success());
        assert!(own_cpu() - before > Duration::from_millis(50));
        assert!(start.others_since().is_some());
    }
}
