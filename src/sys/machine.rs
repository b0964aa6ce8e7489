//! Facts about the client machine recorded with every run: CPU model, cores, crypto
//! instructions, OS. Linux reads `/proc/cpuinfo`; the BSDs and macOS ask `sysctl`;
//! anything unavailable is "unknown", never a guess.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub os: String,
    pub arch: String,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub cores: Option<usize>,
    /// AES instructions (x86 `aes`, ARM `aes`); `None` when unknown.
    pub aes: Option<bool>,
    /// SHA instructions (x86 `sha_ni`, ARM `sha2`); `None` when unknown.
    pub sha: Option<bool>,
}

/// Model name and crypto flags from Linux `/proc/cpuinfo` text (x86 and ARM layouts).
pub fn parse_cpuinfo(text: &str) -> (Option<String>, Option<bool>, Option<bool>) {
    let mut model = None;
    let mut flags: Option<Vec<&str>> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "model name" | "Model" | "cpu model" if model.is_none() && !value.is_empty() => {
                model = Some(value.to_string())
            }
            "flags" | "Features" if flags.is_none() => {
                flags = Some(value.split_whitespace().collect())
            }
            _ => {}
        }
    }
    let aes = flags.as_ref().map(|f| f.contains(&"aes"));
    let sha = flags
        .as_ref()
        .map(|f| f.contains(&"sha_ni") || f.contains(&"sha2"));
    (model, aes, sha)
}

/// Read `sysctl -n name`, if the command and the name exist.
#[cfg(not(target_os = "linux"))]
fn sysctl(name: &str) -> Option<String> {
    let out = std::process::Command::new("sysctl")
        .args(["-n", name])
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// Facts about this machine.
pub fn this_machine() -> Machine {
    let mut m = Machine {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel: nix::sys::utsname::uname().ok().map(|u| {
            format!(
                "{} {}",
                u.sysname().to_string_lossy(),
                u.release().to_string_lossy()
            )
        }),
        cores: std::thread::available_parallelism().ok().map(|n| n.get()),
        ..Machine::default()
    };
    #[cfg(target_os = "linux")]
    if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
        (m.cpu_model, m.aes, m.sha) = parse_cpuinfo(&text);
    }
    #[cfg(not(target_os = "linux"))]
    {
        m.cpu_model = sysctl("machdep.cpu.brand_string").or_else(|| sysctl("hw.model"));
        if let Some(features) = sysctl("machdep.cpu.features") {
            m.aes = Some(features.split_whitespace().any(|f| f == "AES"));
        }
    }
    m
}

/// This machine's name, one line of at most 200 characters.
pub fn hostname() -> String {
    let name = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// This boot of the machine (Linux's boot id), so that a process id stored with it
/// means one process: after a reboot it differs. `None` where unknown.
pub fn boot_id() -> Option<String> {
    #[cfg(target_os = "linux")]
    if let Ok(boot) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        return Some(boot.trim().chars().take(64).collect());
    }
    None
}

/// The machine's online CPUs (not this process's affinity, which the sandbox narrows).
pub fn online_cpus() -> Option<usize> {
    // SAFETY: sysconf is thread-safe.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

/// Clock ticks per second, the unit of `/proc`'s CPU times.
pub fn clock_ticks() -> Option<f64> {
    // SAFETY: sysconf is thread-safe.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then_some(hz as f64)
}

/// Whether `ip` reaches this machine itself: a loopback address or one of its
/// interfaces' (where they cannot be listed, loopback only).
pub fn own_address(ip: std::net::IpAddr) -> bool {
    if ip.is_loopback() {
        return true;
    }
    let Ok(interfaces) = nix::ifaddrs::getifaddrs() else {
        return false;
    };
    interfaces
        .filter_map(|i| i.address)
        .any(|a| match (a.as_sockaddr_in(), a.as_sockaddr_in6()) {
            (Some(v4), _) => std::net::IpAddr::V4(v4.ip()) == ip,
            (_, Some(v6)) => std::net::IpAddr::V6(v6.ip()) == ip,
            _ => false,
        })
}

/// Whether a second thread has a core of its own (else splitting work in two only
/// interleaves it on one).
pub fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_cpuinfo() {
        let (model, aes, sha) = parse_cpuinfo(
            "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 aes avx2 sha_ni\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n",
        );
        assert_eq!(model.as_deref(), Some("AMD EPYC"));
        assert_eq!((aes, sha), (Some(true), Some(true)));
    }

    #[test]
    fn raspberry_pi_cpuinfo_without_crypto() {
        let (model, aes, sha) = parse_cpuinfo(
            "processor\t: 0\nFeatures\t: fp asimd evtstrm crc32 cpuid\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
        );
        assert_eq!(model.as_deref(), Some("Raspberry Pi 4 Model B Rev 1.4"));
        assert_eq!((aes, sha), (Some(false), Some(false)));
    }

    #[test]
    fn this_machine_s_own_addresses_are_told_from_others() {
        use std::net::IpAddr;
        for own in ["127.0.0.1", "127.0.0.53", "::1"] {
            assert!(own_address(own.parse().unwrap()), "{own}");
        }
        // Documentation addresses (RFC 5737, RFC 3849) are nobody's.
        for other in ["198.51.100.77", "2001:db8::77"] {
            assert!(!own_address(other.parse().unwrap()), "{other}");
        }
        let interfaces: Vec<IpAddr> = nix::ifaddrs::getifaddrs()
            .unwrap()
            .filter_map(|i| i.address)
            .filter_map(|a| {
                (a.as_sockaddr_in().map(|v4| IpAddr::V4(v4.ip())))
                    .or_else(|| a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
            })
            .filter(|ip| !ip.is_loopback())
            .collect();
        for ip in interfaces {
            assert!(own_address(ip), "{ip}");
        }
    }

    #[test]
    fn nothing_known() {
        assert_eq!(parse_cpuinfo(""), (None, None, None));
    }

    #[test]
    fn this_machine_has_an_os() {
        let m = this_machine();
        assert!(!m.os.is_empty() && !m.arch.is_empty());
    }
}
