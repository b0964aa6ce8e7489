//! Where the local sandbox's two ends run: the split of this machine's CPUs between the
//! client (sshbench and its `ssh` processes) and the sandbox `sshd` (with its sessions).
//!
//! Both ends of a sandbox run share one machine. Left to the scheduler, a CPU-bound
//! `ssh` and `sshd` now and then take turns on one core while another idles, and a
//! sample reads half the rate (README, "The sandbox"). [`split`] gives the server the upper half of the
//! cores this process may use and the client the lower half (hardware threads of one
//! core on one side), as two machines would have them. Pinning works on Linux
//! (`sched_setaffinity`, the topology from sysfs); elsewhere [`allowed`] is `None` and
//! nothing is pinned.

use crate::model::Placement;
use anyhow::Result;
use std::process::Command;

/// A physical core: (package, core id).
type Core = (u32, u32);

/// The CPUs of each end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub client: Vec<usize>,
    pub server: Vec<usize>,
}

/// Split `allowed` (CPU numbers) between the client and the server by physical core:
/// `core_of` names a CPU's core (package, core), so that hardware threads of one core
/// stay on one side instead of the two ends sharing every core through SMT. Cores are
/// taken in the order of their lowest CPU; the client gets the lower half (the larger
/// one when the count is odd). A single core's threads, or CPUs whose core is unknown,
/// are split one by one. `None` below two CPUs.
pub fn split(allowed: &[usize], core_of: impl Fn(usize) -> Option<Core>) -> Option<Split> {
    let mut cpus = allowed.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.len() < 2 {
        return None;
    }
    let mut groups: Vec<(Option<Core>, Vec<usize>)> = Vec::new();
    for c in cpus {
        let core = core_of(c);
        match groups
            .iter_mut()
            .find(|(k, _)| core.is_some() && *k == core)
        {
            Some((_, g)) => g.push(c),
            None => groups.push((core, vec![c])),
        }
    }
    let mut groups: Vec<Vec<usize>> = match groups.len() {
        1 => groups.remove(0).1.into_iter().map(|c| vec![c]).collect(),
        _ => groups.into_iter().map(|(_, g)| g).collect(),
    };
    let server = groups.split_off(groups.len().div_ceil(2));
    let flat = |g: Vec<Vec<usize>>| {
        let mut v: Vec<usize> = g.into_iter().flatten().collect();
        v.sort_unstable();
        v
    };
    Some(Split {
        client: flat(groups),
        server: flat(server),
    })
}

/// The split for `placement` on this machine, if it pins anything.
pub fn plan(placement: Placement) -> Option<Split> {
    match placement {
        Placement::Shared => None,
        Placement::Split => split(&allowed()?, os::core_of),
    }
}

/// Why a split placement cannot be had with `allowed` (the CPUs this process may use,
/// `None` where the OS does not tell or pin), if it cannot: the sandbox's two ends then
/// share what there is, and a run must not be stored as if they did not.
pub fn unsplittable(allowed: Option<&[usize]>) -> Option<String> {
    match allowed {
        None => Some("sshbench cannot pin processes to CPUs here".to_string()),
        Some(cpus) if split(cpus, |_| None).is_none() => Some(match cpus {
            [] => "this process may run on no CPU it can name".to_string(),
            _ => format!("this process may run on CPU {} only", format_list(cpus)),
        }),
        Some(_) => None,
    }
}

/// Share `allowed` out between `jobs` concurrent hosts of a fleet run: groups of whole
/// physical cores where the topology is known (hardware threads of one core stay in
/// one group), sizes differing by at most one. Empty when there are fewer CPUs than
/// jobs (two hosts would share a CPU).
pub fn share(
    allowed: &[usize],
    jobs: usize,
    core_of: impl Fn(usize) -> Option<Core>,
) -> Vec<Vec<usize>> {
    let mut cpus = allowed.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    if jobs == 0 || cpus.len() < jobs {
        return Vec::new();
    }
    // Units to hand out: whole cores when there are enough of them, else single CPUs.
    let mut cores: Vec<(Option<Core>, Vec<usize>)> = Vec::new();
    for c in &cpus {
        match core_of(*c) {
            Some(k) if cores.iter().any(|(g, _)| *g == Some(k)) => {
                let g = cores.iter_mut().find(|(g, _)| *g == Some(k));
                g.expect("found above").1.push(*c);
            }
            k => cores.push((k, vec![*c])),
        }
    }
    let units: Vec<Vec<usize>> = if cores.len() >= jobs {
        cores.into_iter().map(|(_, c)| c).collect()
    } else {
        cpus.iter().map(|c| vec![*c]).collect()
    };
    let (each, extra) = (units.len() / jobs, units.len() % jobs);
    let mut units = units.into_iter();
    (0..jobs)
        .map(|j| {
            let n = each + usize::from(j < extra);
            units.by_ref().take(n).flatten().collect()
        })
        .collect()
}

/// This machine's CPUs shared out between `jobs` hosts ([`share`]); `None` where
/// CPUs cannot be pinned.
pub fn share_here(jobs: usize) -> Option<Vec<Vec<usize>>> {
    Some(share(&allowed()?, jobs, os::core_of))
}

/// `0-3,6` style, as `taskset -c` and `/proc/*/status` write CPU lists.
pub fn format_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(target_os = "linux")]
mod os {
    use anyhow::{Context, Result};
    use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
    use nix::unistd::Pid;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn set_of(cpus: &[usize]) -> Result<CpuSet> {
        let mut set = CpuSet::new();
        for &c in cpus {
            set.set(c)
                .with_context(|| format!("CPU {c} is beyond the CPU set"))?;
        }
        Ok(set)
    }

    pub fn allowed() -> Option<Vec<usize>> {
        let set = sched_getaffinity(Pid::from_raw(0)).ok()?;
        Some(
            (0..CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect(),
        )
    }

    pub fn cpus_of(pid: u32) -> Option<usize> {
        let set = sched_getaffinity(Pid::from_raw(i32::try_from(pid).ok()?)).ok()?;
        let n = (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .count();
        let online = crate::sys::machine::online_cpus().unwrap_or(n);
        (n > 0).then(|| n.min(online))
    }

    /// (package, core) from sysfs.
    pub fn core_of(cpu: usize) -> Option<(u32, u32)> {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{name}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Some((read("physical_package_id")?, read("core_id")?))
    }

    pub fn pin_thread(cpus: &[usize]) -> Result<()> {
        sched_setaffinity(Pid::from_raw(0), &set_of(cpus)?).context("sched_setaffinity")
    }

    pub fn pin_command(cmd: &mut Command, cpus: &[usize]) -> Result<()> {
        let set = set_of(cpus)?;
        // SAFETY: sched_setaffinity is a plain system call on a set built beforehand;
        // nothing is allocated or locked between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                sched_setaffinity(Pid::from_raw(0), &set).map_err(std::io::Error::from)
            });
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    use anyhow::{Result, bail};
    use std::process::Command;

    pub fn allowed() -> Option<Vec<usize>> {
        None
    }

    pub fn core_of(_: usize) -> Option<(u32, u32)> {
        None
    }

    pub fn cpus_of(_: u32) -> Option<usize> {
        None
    }

    pub fn pin_thread(_: &[usize]) -> Result<()> {
        bail!("CPU pinning is implemented for Linux only")
    }

    pub fn pin_command(_: &mut Command, _: &[usize]) -> Result<()> {
        bail!("CPU pinning is implemented for Linux only")
    }
}

/// The CPUs this process may run on (ascending); `None` where that is unknown.
pub fn allowed() -> Option<Vec<usize>> {
    os::allowed()
}

/// How many CPUs process `pid` may run on (its affinity, at most the online CPUs);
/// `None` where that is unknown.
pub fn cpus_of(pid: u32) -> Option<usize> {
    os::cpus_of(pid)
}

/// Restrict the calling thread, and every thread and process it starts afterwards, to
/// `cpus`.
pub fn pin_thread(cpus: &[usize]) -> Result<()> {
    os::pin_thread(cpus)
}

/// Start `cmd` (and whatever it starts) on `cpus` only.
pub fn pin_command(cmd: &mut Command, cpus: &[usize]) -> Result<()> {
    os::pin_command(cmd, cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cpu_or_none_named_cannot_be_split() {
        assert_eq!(unsplittable(Some(&[0, 1])), None);
        assert_eq!(unsplittable(Some(&[3, 5, 6])), None);
        // A cpuset of one CPU, as `taskset -c 2` or a container gives.
        assert_eq!(
            unsplittable(Some(&[2])).as_deref(),
            Some("this process may run on CPU 2 only")
        );
        assert!(unsplittable(Some(&[])).is_some());
        assert!(unsplittable(None).unwrap().contains("cannot pin"));
    }

    #[test]
    fn fleet_jobs_get_whole_cores_of_their_own() {
        // 4 cores with 2 threads each (CPU n and n + 4 are siblings).
        let smt = |c: usize| Some((0, (c % 4) as u32));
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(share(&all, 2, smt), [vec![0, 4, 1, 5], vec![2, 6, 3, 7]]);
        assert_eq!(
            share(&all, 3, smt),
            [vec![0, 4, 1, 5], vec![2, 6], vec![3, 7]]
        );
        // More jobs than cores: single CPUs; more jobs than CPUs: none.
        assert_eq!(share(&all, 8, smt).iter().map(Vec::len).max(), Some(1));
        assert!(share(&all, 9, smt).is_empty());
        assert_eq!(share(&[0, 1], 2, |_| None), [vec![0], vec![1]]);
        assert_eq!(share(&[3], 1, |_| None), [vec![3]]);
    }

    #[test]
    fn splits_into_a_lower_client_half_and_an_upper_server_half() {
        let unknown = |_| None;
        let halves = |allowed: &[usize], core_of: &dyn Fn(usize) -> Option<(u32, u32)>| {
            split(allowed, core_of).map(|s| (s.client, s.server))
        };
        assert_eq!(halves(&[], &unknown), None);
        assert_eq!(halves(&[3], &unknown), None);
        assert_eq!(halves(&[0, 1], &unknown), Some((vec![0], vec![1])));
        assert_eq!(halves(&[0, 1, 2], &unknown), Some((vec![0, 1], vec![2])));
        // A cpuset with holes, unsorted, as a container may allow.
        assert_eq!(
            halves(&[7, 2, 4, 5], &unknown),
            Some((vec![2, 4], vec![5, 7]))
        );
        assert_eq!(plan(Placement::Shared), None);
    }

    #[test]
    fn hardware_threads_of_one_core_stay_on_one_side() {
        // 2 cores × 2 threads, numbered as on most x86 machines: CPU n and n + 2 are
        // siblings. By number the halves would share both cores.
        let smt = |c: usize| Some((0, (c % 2) as u32));
        let s = split(&[0, 1, 2, 3], smt).unwrap();
        assert_eq!((s.client, s.server), (vec![0, 2], vec![1, 3]));
        // Two packages of two cores: cores, not packages, are split.
        let packages = |c: usize| Some(((c / 2) as u32, (c % 2) as u32));
        let s = split(&[0, 1, 2, 3], packages).unwrap();
        assert_eq!((s.client, s.server), (vec![0, 1], vec![2, 3]));
        // One core with two threads: split by thread.
        let s = split(&[4, 5], |_| Some((0, 0))).unwrap();
        assert_eq!((s.client, s.server), (vec![4], vec![5]));
    }

    #[test]
    fn formats_cpu_lists_like_taskset() {
        assert_eq!(format_list(&[]), "");
        assert_eq!(format_list(&[1]), "1");
        assert_eq!(format_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(format_list(&[0, 2, 3, 5]), "0,2-3,5");
    }

    #[test]
    fn placement_is_stored_in_lowercase_and_old_runs_read_shared() {
        assert_eq!(
            serde_json::to_string(&Placement::Split).unwrap(),
            "\"split\""
        );
        assert_eq!(Placement::default(), Placement::Shared);
    }

    /// The kernel's own view (`Cpus_allowed_list` of a child) after pinning: a thread
    /// pinned to one CPU starts its processes there, and a pinned command runs there.
    #[cfg(target_os = "linux")]
    #[test]
    fn pinned_threads_and_commands_run_where_they_were_put() {
        let allowed = allowed().expect("Linux knows the affinity");
        assert!(!allowed.is_empty());
        let last = *allowed.last().unwrap();
        let child_list = |cmd: &mut Command| {
            let out = cmd.output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            text.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string())
                .unwrap()
        };
        let status = || {
            let mut c = Command::new("cat");
            c.arg("/proc/self/status");
            c
        };
        let from_thread = std::thread::spawn(move || {
            pin_thread(&[last]).unwrap();
            assert_eq!(super::allowed().unwrap(), vec![last]);
            child_list(&mut status())
        })
        .join()
        .unwrap();
        assert_eq!(from_thread, last.to_string());
        // This thread is untouched.
        assert_eq!(super::allowed().unwrap(), allowed);

        let first = allowed[0];
        let mut cmd = status();
        pin_command(&mut cmd, &[first]).unwrap();
        assert_eq!(child_list(&mut cmd), first.to_string());
        assert_eq!(child_list(&mut status()), format_list(&allowed));
    }
}
