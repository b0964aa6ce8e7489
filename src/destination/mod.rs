//! Destinations: `[user@]host[:port]`, an ssh_config alias, or the local sandbox, and
//! their resolution with `ssh -G` so the user's aliases, jumps and identities still apply.

mod hosts;
mod options;

pub use hosts::{fleet, parse_hosts};
pub use options::{NO_HOST_KEY_UPDATES, ssh_args};

use crate::model::AlgoKind;
use crate::model::AlgoLists;
use crate::model::{KeystrokeTiming, LabOptions, Placement};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};

/// Where samples are taken: the arguments that make `ssh` reach the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// What the user asked for, for display and storage.
    pub label: String,
    /// Options placed before the destination (`-F file`, `-p port`).
    pub ssh_options: Vec<String>,
    /// The destination argument given to ssh.
    pub destination: String,
    /// True for the throwaway local sshd.
    pub is_sandbox: bool,
    /// ssh reaches it through a ProxyJump or ProxyCommand (`ssh -G` says so): that hop
    /// is part of every measured path.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub via_proxy: bool,
}

impl Target {
    /// Parse a user-supplied destination: `[user@]host[:port]`, `[user@][v6addr]:port`,
    /// or an ssh_config alias (`Host` name), which ssh resolves itself.
    pub fn parse(dest: &str) -> Result<Target> {
        let dest = dest.trim();
        if dest.is_empty() {
            bail!("the destination is empty; give [user@]host[:port] or an ssh_config alias");
        }
        if dest.starts_with('-') {
            bail!("destination {dest:?} starts with '-'; ssh would take it for an option");
        }
        if let Some(c) = dest.chars().find(|&c| !destination_char(c)) {
            bail!(
                "destination {dest:?} contains {c:?}: a destination is [user@]host[:port] or an \
                 ssh_config alias, of letters, digits and . _ - + % : [ ] @"
            );
        }
        let (user, hostport) = match dest.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u), h),
            Some(_) => bail!("destination {dest:?} has an empty user name before '@'"),
            None => (None, dest),
        };
        let (host, port) = split_port(hostport)
            .with_context(|| format!("destination {dest:?} is not [user@]host[:port]"))?;
        if host.is_empty() {
            bail!("destination {dest:?} has no host name");
        }
        let mut ssh_options = Vec::new();
        if let Some(p) = port {
            ssh_options.extend(["-p".to_string(), p.to_string()]);
        }
        let destination = match user {
            Some(u) => format!("{u}@{host}"),
            None => host.to_string(),
        };
        Ok(Target {
            label: dest.to_string(),
            ssh_options,
            destination,
            is_sandbox: false,
            via_proxy: false,
        })
    }

    /// Check a stored target as its arguments are checked on the command line: a row of
    /// a database is not the user's word. Its destination as [`Target::parse`] takes
    /// it, its ssh options only `-F FILE`, `-p PORT` and `-o` options [`ssh_args`]
    /// accepts.
    pub fn check_stored(&self) -> Result<()> {
        let d = &self.destination;
        if d.is_empty() || d.starts_with('-') || !d.chars().all(destination_char) {
            bail!("the stored destination {d:?} is not one sshbench would take");
        }
        let mut args = self.ssh_options.chunks(2);
        for pair in args.by_ref() {
            match pair {
                [flag, file] if flag == "-F" => {
                    ssh_args(Some(Path::new(file)), &[])?;
                }
                [flag, port] if flag == "-p" => {
                    parse_port(port)?;
                }
                [flag, option] if flag == "-o" => {
                    ssh_args(None, std::slice::from_ref(option))?;
                }
                other => bail!("the stored ssh options {other:?} are not ones sshbench writes"),
            }
        }
        Ok(())
    }

    /// The same destination with ssh's own options (`-F`, `-o`, checked by
    /// [`ssh_args`]) after the ones it already has: ssh keeps the first value it is
    /// given, so a destination's own `host:port` wins over `-p` and `-o Port`.
    pub fn with_ssh_args(mut self, mut args: Vec<String>) -> Target {
        self.ssh_options.append(&mut args);
        self
    }

    /// The local sandbox, reached through its private ssh_config file (labelled as the
    /// default setup; see [`sandbox_label`]).
    pub fn sandbox(config: &Path, alias: &str) -> Target {
        Target {
            label: SANDBOX.to_string(),
            ssh_options: vec!["-F".to_string(), config.display().to_string()],
            destination: alias.to_string(),
            is_sandbox: true,
            via_proxy: false,
        }
    }
}

/// A character a destination may hold: what host names, IPv4 and IPv6 addresses (with a
/// zone), user names and ports are made of. Nothing a shell or ssh would read otherwise.
fn destination_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._-+%:[]@".contains(c)
}

/// The stored destination of the local sandbox in its default setup.
pub const SANDBOX: &str = "local sandbox";

/// The stored destination of a local sandbox run: [`SANDBOX`] for the default setup (its
/// two ends on separate CPUs, no lab), with the setup in parentheses otherwise
/// (`local sandbox (shared CPUs, sshd limited to 0.25 cores)`), so that reports never
/// pool samples measured under different conditions. A real destination never looks
/// like this: it cannot contain whitespace.
pub fn sandbox_label(placement: Placement, lab: &LabOptions) -> String {
    let mut parts = Vec::new();
    if placement == Placement::Shared {
        parts.push("shared CPUs".to_string());
    }
    parts.extend(lab.describe());
    if parts.is_empty() {
        SANDBOX.to_string()
    } else {
        format!("{SANDBOX} ({})", parts.join(", "))
    }
}

/// The software of an SSH banner (`OpenSSH_10.0p2` of `SSH-2.0-OpenSSH_10.0p2 Debian-7`),
/// safe to put in a label: printable ASCII only, at most 40 characters.
pub fn banner_software(banner: &str) -> &str {
    let rest = banner.strip_prefix("SSH-2.0-").unwrap_or(banner);
    let word = rest.split_whitespace().next().unwrap_or("");
    let ok = !word.is_empty() && word.len() <= 40 && word.bytes().all(|b| b.is_ascii_graphic());
    if ok { word } else { "unknown" }
}

/// A sandbox label with the sshd it ran when that was not the usual one (`--sshd`):
/// `local sandbox (sshd OpenSSH_10.0p2)`, `local sandbox (shared CPUs, sshd ...)`.
pub fn with_sshd(label: &str, software: &str) -> String {
    let sshd = format!("sshd {software}");
    match label.strip_suffix(')') {
        Some(open) => format!("{open}, {sshd})"),
        None => format!("{label} ({sshd})"),
    }
}

/// A destination as one client of a run of several saw it (`--ssh`):
/// `localhost (ssh OpenSSH_10.0p2)`, `local sandbox (sshd ..., ssh OpenSSH_10.0p2)`.
pub fn with_client(label: &str, client: &str) -> String {
    let ssh = format!("ssh {client}");
    match label.strip_suffix(')') {
        Some(open) if label.contains(" (") => format!("{open}, {ssh})"),
        _ => format!("{label} ({ssh})"),
    }
}

/// Whether a stored destination is the local sandbox, in any setup.
pub fn is_sandbox_label(destination: &str) -> bool {
    destination
        .strip_prefix(SANDBOX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(" ("))
}

/// A destination as users name it in reports: `sandbox` is the local sandbox's default
/// setup, `sandbox (shared CPUs)` and the like its other setups (as `sshbench runs`
/// lists them, with or without the leading `local`); anything else is as stored.
pub fn stored_destination(given: &str) -> String {
    match given.strip_prefix("sandbox") {
        Some(rest) if rest.is_empty() || rest.starts_with(" (") => format!("{SANDBOX}{rest}"),
        _ => given.to_string(),
    }
}

/// Split `host[:port]` and `[v6]:port`. A bare IPv6 address (several colons) has no port.
fn split_port(s: &str) -> Result<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .context("missing ']' after an IPv6 address")?;
        return match after {
            "" => Ok((host, None)),
            p => Ok((
                host,
                Some(parse_port(
                    p.strip_prefix(':').context("expected ':port' after ']'")?,
                )?),
            )),
        };
    }
    match s.matches(':').count() {
        0 => Ok((s, None)),
        1 => {
            let (h, p) = s.split_once(':').expect("one colon");
            Ok((h, Some(parse_port(p)?)))
        }
        _ => Ok((s, None)),
    }
}

fn parse_port(p: &str) -> Result<u16> {
    match p.parse::<u16>() {
        Ok(0) | Err(_) => bail!("port {p:?} is not a number from 1 to 65535"),
        Ok(n) => Ok(n),
    }
}

/// What `ssh -G` says the destination resolves to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Resolved {
    pub hostname: String,
    pub port: u16,
    pub user: String,
    /// A ProxyJump or ProxyCommand is configured: a direct socket cannot reach it.
    pub via_proxy: bool,
    /// The client's effective preference lists for this destination (its defaults,
    /// or what the user's ssh_config sets): what ssh would use without sshbench.
    pub defaults: AlgoLists,
    /// OpenSSH 9.5+'s `ObscureKeystrokeTiming` as this destination resolves it; `None`
    /// when the client does not know the option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keystrokes: Option<KeystrokeTiming>,
    /// `StrictHostKeyChecking` as ssh will apply it (`true`, `ask`, `accept-new`,
    /// `false`), whatever spelling set it.
    #[serde(skip)]
    pub strict_host_keys: String,
    /// The `UserKnownHostsFile` entries as ssh will read them.
    #[serde(skip)]
    pub known_hosts: Vec<String>,
}

/// How a destination's settings would weaken host key checking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weakened {
    /// `StrictHostKeyChecking no`: any key accepted, a changed one too.
    Unchecked,
    /// `StrictHostKeyChecking accept-new`: an unknown key accepted and written down.
    AcceptNew,
    /// No known_hosts file to check against (`/dev/null`, `none`).
    NoKnownHosts,
}

impl Resolved {
    /// The clock (ms) on whose ticks a terminal's keystrokes leave; `None` when off or
    /// unknown to this client.
    pub fn keystroke_interval_ms(&self) -> Option<u32> {
        match self.keystrokes? {
            KeystrokeTiming::Yes => Some(20),
            KeystrokeTiming::Interval(ms) => Some(ms.into()),
            KeystrokeTiming::No => None,
        }
    }

    /// Whether ssh, as configured for this destination, would accept a key it cannot
    /// check: judged on the values `ssh -G` resolved, not on how they were spelt.
    pub fn weakened(&self) -> Option<Weakened> {
        match self.strict_host_keys.as_str() {
            "false" | "no" | "off" => return Some(Weakened::Unchecked),
            "accept-new" => return Some(Weakened::AcceptNew),
            _ => {}
        }
        let nowhere = |f: &String| {
            f == "none"
                || std::fs::canonicalize(f).is_ok_and(|p| p == std::path::Path::new("/dev/null"))
        };
        (!self.known_hosts.is_empty() && self.known_hosts.iter().all(nowhere))
            .then_some(Weakened::NoKnownHosts)
    }
}

/// Parse `ssh -G` output (lower-case `key value` lines).
pub fn parse_ssh_g(text: &str) -> Resolved {
    let mut r = Resolved::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        match key {
            "hostname" => r.hostname = value.to_string(),
            "port" => r.port = value.parse().unwrap_or(22),
            "user" => r.user = value.to_string(),
            "proxyjump" | "proxycommand" if value != "none" => r.via_proxy = true,
            "stricthostkeychecking" => r.strict_host_keys = value.to_string(),
            "userknownhostsfile" => {
                r.known_hosts = value.split_whitespace().map(str::to_string).collect()
            }
            // `yes`, `no`, or an interval as a bare number of milliseconds.
            "obscurekeystroketiming" => {
                r.keystrokes = KeystrokeTiming::parse(value)
                    .or_else(|| KeystrokeTiming::parse(&format!("interval:{value}")))
            }
            "kexalgorithms" | "hostkeyalgorithms" | "ciphers" | "macs" => {
                let kind = match key {
                    "kexalgorithms" => AlgoKind::Kex,
                    "hostkeyalgorithms" => AlgoKind::HostKey,
                    "ciphers" => AlgoKind::Cipher,
                    _ => AlgoKind::Mac,
                };
                r.defaults
                    .set(kind, value.split(',').map(str::to_string).collect());
            }
            _ => {}
        }
    }
    r
}

/// Resolve a target through the user's ssh configuration.
pub fn resolve(ssh: &Path, target: &Target) -> Result<Resolved> {
    let out = Command::new(ssh)
        .arg("-G")
        .args(&target.ssh_options)
        .arg(&target.destination)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {} -G", ssh.display()))?;
    if !out.status.success() {
        bail!(
            "ssh -G {} failed: {}",
            target.destination,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let resolved = parse_ssh_g(&String::from_utf8_lossy(&out.stdout));
    if let Some(w) = resolved.weakened() {
        let how = match w {
            Weakened::Unchecked => "sets StrictHostKeyChecking no",
            Weakened::AcceptNew => "sets StrictHostKeyChecking accept-new",
            Weakened::NoKnownHosts => "has no known_hosts file (UserKnownHostsFile /dev/null)",
        };
        bail!(
            "{}: its ssh configuration (with -o and -F) {how}: sshbench never weakens host key \
             checking; connect once with plain `ssh DEST` to verify and record the server's \
             host key, and keep checking on",
            target.destination
        );
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sandbox_setup_is_a_destination_of_its_own() {
        let none = LabOptions::default();
        let cpu = LabOptions {
            cpu: Some(0.25),
            ..LabOptions::default()
        };
        let both = LabOptions {
            cpu: Some(0.5),
            rate_kbit: Some(16_000),
            delay_ms: Some(50),
        };
        assert_eq!(sandbox_label(Placement::Split, &none), "local sandbox");
        let ten = "SSH-2.0-OpenSSH_10.0p2 Debian-7~bpo12+1";
        assert_eq!(banner_software(ten), "OpenSSH_10.0p2");
        assert_eq!(banner_software("SSH-2.0-\x1b[2J"), "unknown");
        let shared = sandbox_label(Placement::Shared, &none);
        assert_eq!(
            with_sshd(&shared, "OpenSSH_10.0p2"),
            "local sandbox (shared CPUs, sshd OpenSSH_10.0p2)"
        );
        assert_eq!(
            with_sshd("local sandbox", "OpenSSH_10.0p2"),
            "local sandbox (sshd OpenSSH_10.0p2)"
        );
        assert_eq!(
            sandbox_label(Placement::Shared, &none),
            "local sandbox (shared CPUs)"
        );
        assert_eq!(
            sandbox_label(Placement::Split, &cpu),
            "local sandbox (sshd limited to 0.25 cores)"
        );
        let mixed = sandbox_label(Placement::Shared, &both);
        assert_eq!(
            mixed,
            "local sandbox (shared CPUs, sshd limited to 0.5 cores, link shaped to 16000 kbit/s, 50 ms round trip added)"
        );
        for label in ["local sandbox", mixed.as_str()] {
            assert!(is_sandbox_label(label), "{label}");
        }
        for other in ["localhost", "local sandboxes", "pi@nas", ""] {
            assert!(!is_sandbox_label(other), "{other}");
        }
        // What users type in reports.
        assert_eq!(stored_destination("sandbox"), "local sandbox");
        assert_eq!(
            stored_destination("sandbox (shared CPUs)"),
            "local sandbox (shared CPUs)"
        );
        assert_eq!(
            stored_destination("local sandbox (shared CPUs)"),
            "local sandbox (shared CPUs)"
        );
        assert_eq!(stored_destination("sandboxhost"), "sandboxhost");
        assert_eq!(stored_destination("pi@nas:2222"), "pi@nas:2222");
    }

    #[test]
    fn parses_user_host_port() {
        let t = Target::parse("alice@pi.local:2222").unwrap();
        assert_eq!(t.destination, "alice@pi.local");
        assert_eq!(t.ssh_options, vec!["-p", "2222"]);
        assert!(!t.is_sandbox);
    }

    #[test]
    fn alias_and_bare_ipv6_pass_through() {
        assert_eq!(Target::parse("nas").unwrap().destination, "nas");
        let t = Target::parse("::1").unwrap();
        assert_eq!((t.destination.as_str(), t.ssh_options.len()), ("::1", 0));
    }

    #[test]
    fn bracketed_ipv6_with_port() {
        let t = Target::parse("root@[::1]:2200").unwrap();
        assert_eq!(t.destination, "root@::1");
        assert_eq!(t.ssh_options, vec!["-p", "2200"]);
    }

    #[test]
    fn rejects_bad_destinations() {
        for bad in [
            "",
            "-oProxyCommand=x",
            "host:0",
            "host:99999",
            "host:x",
            "@host",
            "a b",
            "[::1",
            "[::1]x",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn parses_ssh_g_output() {
        let r = parse_ssh_g(
            "user root\nhostname 127.0.0.1\nport 2200\nproxyjump none\nproxycommand none\nciphers chacha20-poly1305@openssh.com,aes128-ctr\n",
        );
        assert_eq!(
            (r.hostname.as_str(), r.port, r.user.as_str(), r.via_proxy),
            ("127.0.0.1", 2200, "root", false)
        );
        assert_eq!(
            r.defaults.get(AlgoKind::Cipher).unwrap(),
            ["chacha20-poly1305@openssh.com", "aes128-ctr"]
        );
        assert!(parse_ssh_g("proxyjump bastion\n").via_proxy);
        // OpenSSH 9.5+ prints its keystroke clock; older clients print nothing of it.
        let keys = |line: &str| parse_ssh_g(line).keystroke_interval_ms();
        assert_eq!(keys("obscurekeystroketiming yes\n"), Some(20));
        assert_eq!(keys("obscurekeystroketiming 80\n"), Some(80));
        assert_eq!(keys("obscurekeystroketiming no\n"), None);
        assert_eq!(keys("user root\n"), None);
    }
}
