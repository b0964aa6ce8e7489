//! A slow-machine lab for the sandbox (Linux, root): a CPU quota for the sandbox sshd
//! and its sessions (a cgroup, v1 `cpu` controller or v2 `cpu.max`), and a network
//! namespace whose veth link is shaped with `tc tbf`, so a "slow server" and a "slow
//! link" exist on one machine. Everything is removed on drop. The namespace's addresses
//! (10.231.x.y/30) exist only on that veth pair.

use anyhow::{Context, Result, bail};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn run(cmd: &mut Command) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn need_root(what: &str) -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!("{what} needs root (it creates a cgroup or a network namespace)");
    }
    Ok(())
}

/// Whether the process that made a lab object named `sshbench-PID-ID` still runs: not
/// for one a `kill -9`ed sshbench left behind. (A PID reused since keeps its object: only
/// what is surely orphaned goes.)
fn maker_alive(name: &str) -> bool {
    let Some(pid) = (name.strip_prefix("sshbench-"))
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(pid, _)| pid.parse::<i32>().ok())
        .and_then(|pid| u32::try_from(pid).ok())
        .filter(|&pid| pid > 0)
    else {
        return true;
    };
    crate::sys::proc::alive(pid)
}

/// Remove the cgroups and network namespaces a `kill -9`ed sshbench left (Drop never
/// ran): each named for a process no longer running. A cgroup that still holds a
/// process stays (`rmdir` refuses it); called before a lab makes its own.
pub fn sweep_leftovers() {
    let named = |dir: &Path| -> Vec<PathBuf> {
        fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("sshbench-") && !maker_alive(n))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for cgroups in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup"] {
        for dir in named(Path::new(cgroups)) {
            let _ = fs::remove_dir(dir);
        }
    }
    for ns in named(Path::new("/run/netns")) {
        if let Some(name) = ns.file_name().and_then(|n| n.to_str()) {
            let _ = Command::new("ip").args(["netns", "del", name]).output();
        }
    }
}

/// A CPU-limited cgroup.
pub struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    pub fn create(cores: f64) -> Result<Cgroup> {
        need_root("--sandbox-cpu")?;
        if !(cores > 0.0 && cores <= 64.0) {
            bail!("the CPU limit must be between 0 and 64 cores, not {cores}");
        }
        sweep_leftovers();
        let name = format!("sshbench-{}-{}", std::process::id(), fastrand::u32(..));
        let period: u64 = 100_000;
        let quota = ((cores * period as f64) as u64).max(1000);
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(name);
            fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let cg = Cgroup { dir };
            fs::write(cg.dir.join("cpu.cfs_period_us"), period.to_string())?;
            fs::write(cg.dir.join("cpu.cfs_quota_us"), quota.to_string())?;
            return Ok(cg);
        }
        let v2 = Path::new("/sys/fs/cgroup");
        if v2.join("cgroup.controllers").exists() {
            let dir = v2.join(name);
            fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let cg = Cgroup { dir };
            fs::write(cg.dir.join("cpu.max"), format!("{quota} {period}"))
                .context("setting cpu.max (is the cpu controller enabled in the parent?)")?;
            return Ok(cg);
        }
        bail!("no cgroup CPU controller found under /sys/fs/cgroup")
    }

    /// Move a process (and so its future children) into the group.
    pub fn add(&self, pid: u32) -> Result<()> {
        fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .with_context(|| format!("adding {pid} to {}", self.dir.display()))
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Empty once the sandbox's processes are gone; retry briefly while they exit.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Move the calling thread (only it) into the network namespace `name`, so that what
/// it binds listens where the sandbox sshd does.
#[cfg(target_os = "linux")]
pub fn enter_netns(name: &str) -> Result<()> {
    let f = fs::File::open(Path::new("/run/netns").join(name))
        .with_context(|| format!("opening network namespace {name}"))?;
    nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET)
        .with_context(|| format!("entering network namespace {name}"))
}

#[cfg(not(target_os = "linux"))]
pub fn enter_netns(name: &str) -> Result<()> {
    bail!("network namespaces ({name}) exist on Linux only")
}

/// A network namespace joined to this one by a shaped veth pair.
pub struct Netns {
    pub name: String,
    /// This side's address (the client's).
    pub host_ip: String,
    /// The namespace's address (where the sandbox sshd listens).
    pub ns_ip: String,
    host_dev: String,
}

impl Netns {
    pub fn create(rate_kbit: Option<u32>) -> Result<Netns> {
        need_root("--sandbox-rate")?;
        sweep_leftovers();
        let id = fastrand::u16(..);
        let name = format!("sshbench-{}-{id}", std::process::id());
        let (host_dev, ns_dev) = (format!("sbh{id}"), format!("sbn{id}"));
        // A /30 out of 10.231.0.0/16: the namespace's own, nothing else is there.
        let base = (id as u32 % 16384) * 4;
        let ip = |n: u32| format!("10.231.{}.{}", (base + n) >> 8, (base + n) & 255);
        let ns = Netns {
            name: name.clone(),
            host_ip: ip(1),
            ns_ip: ip(2),
            host_dev: host_dev.clone(),
        };
        run(Command::new("ip").args(["netns", "add", &name]))?;
        // From here on, Drop cleans up.
        run(Command::new("ip").args([
            "link", "add", &host_dev, "type", "veth", "peer", "name", &ns_dev,
        ]))?;
        run(Command::new("ip").args(["link", "set", &ns_dev, "netns", &name]))?;
        run(Command::new("ip").args([
            "addr",
            "add",
            &format!("{}/30", ns.host_ip),
            "dev",
            &host_dev,
        ]))?;
        run(Command::new("ip").args(["link", "set", &host_dev, "up"]))?;
        let in_ns = |args: &[&str]| {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", &name]).args(args);
            c
        };
        run(&mut in_ns(&[
            "ip",
            "addr",
            "add",
            &format!("{}/30", ns.ns_ip),
            "dev",
            &ns_dev,
        ]))?;
        run(&mut in_ns(&["ip", "link", "set", &ns_dev, "up"]))?;
        run(&mut in_ns(&["ip", "link", "set", "lo", "up"]))?;
        if let Some(kbit) = rate_kbit {
            let rate = format!("{kbit}kbit");
            let burst = format!("{}kbit", (kbit / 50).max(32));
            let tbf = [
                "root", "tbf", "rate", &rate, "burst", &burst, "latency", "100ms",
            ];
            run(Command::new("tc")
                .args(["qdisc", "add", "dev", &host_dev])
                .args(tbf))?;
            run(in_ns(&["tc", "qdisc", "add", "dev", &ns_dev]).args(tbf))?;
        }
        Ok(ns)
    }

    /// A command that runs `program` inside the namespace.
    pub fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the veth pair, and so both ends.
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_dev])
            .output();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}
