//! The throwaway local sshd: the default target and the test fixture.
//!
//! A private `sshd` from the installed OpenSSH on 127.0.0.1 and a free port, with fresh
//! host keys (ed25519, ecdsa P-256/384/521, rsa, and dsa where the client still knows
//! it) and a client key in a private 0700 temp dir, the host keys pinned in a private
//! known_hosts, and every kex, host key, cipher and MAC this sshd binary accepts
//! switched on. `SetEnv HOME` points sessions at an empty home so login-shell start-up
//! files do not distort the figures, and `TMPDIR` there keeps the remote side's temp
//! files inside the private dir. Dropping the [`Sandbox`] stops sshd and every
//! session it spawned, removes the temp dir and, when running as root, whatever
//! privilege-separation directory or user it had to create.

mod config;
pub mod dropbear;
mod find;
mod keys;
pub mod lab;
mod privsep;
mod relay;
mod tcp;

pub use config::filter_accepted;
pub use find::{find_on_path, find_sshd};

use config::SshdConfig;
use find::{INSTALL_HINT, find_keygen};
use keys::{HostKey, generate_keys, host_key_type, keygen_one};
use privsep::Privsep;
use relay::Relay;

use crate::model::{AlgoKind, AlgoLists, LabOptions};
use crate::sys::scratch::Scratch;
use crate::sys::{affinity, proc};
use anyhow::{Context, Result, anyhow, bail};
use lab::{Cgroup, Netns};
use std::fs::{self, File};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `Host` alias of the sandbox in its private ssh_config.
pub const ALIAS: &str = "sshbench-sandbox";

/// How to build the sandbox.
#[derive(Clone, Debug, Default)]
pub struct SandboxOptions {
    /// Use this sshd binary instead of searching for one.
    pub sshd: Option<PathBuf>,
    /// Names to try to enable, per kind (normally the client's lists and the catalogue's).
    pub candidates: AlgoLists,
    /// Kinds listed here are restricted to exactly these names (tests of refusals).
    pub restrict: AlgoLists,
    /// A slow-machine lab: CPU quota and/or shaped link (Linux, root).
    pub lab: LabOptions,
    /// Run sshd and its sessions on these CPUs only (see [`crate::sys::affinity`]).
    pub server_cpus: Option<Vec<usize>>,
    /// Let clients forward TCP through it (a ProxyJump host for a server behind it).
    pub forwarding: bool,
    /// Serve no SFTP subsystem (a server like many embedded ones).
    pub no_sftp: bool,
    /// The sessions' `PATH` (a server whose tools are elsewhere, or missing).
    pub session_path: Option<String>,
    /// Log at DEBUG1, where sshd says what each connection negotiated: the check of a
    /// client that cannot say it itself (dbclient). Off otherwise, to keep sshd's
    /// per-connection work what a real server's is.
    pub log_kex: bool,
    /// Forward X11 (`x11` mode): sshd sets up a display and its cookie with xauth.
    pub x11: bool,
    /// Where sshd looks for xauth, when not its default (a server without it).
    pub xauth: Option<PathBuf>,
}

/// A running throwaway sshd. Dropping it tears everything down.
pub struct Sandbox {
    child: Option<Child>,
    /// Where sshd listens: 127.0.0.1, or the lab namespace's address.
    host: String,
    port: u16,
    user: String,
    ssh_config: PathBuf,
    client_key: PathBuf,
    sshd: PathBuf,
    offered: AlgoLists,
    log_kex: bool,
    privsep: Option<Privsep>,
    // Removed after sshd is stopped (field order).
    cgroup: Option<Cgroup>,
    netns: Option<Netns>,
    /// The delay lab's relay: clients reach sshd through it.
    relay: Option<Relay>,
    server_cpus: Option<Vec<usize>>,
    // Dropped last: removes the private directory.
    dir: Scratch,
}

/// The sandbox's private 0700 directory (locked for the sandbox's lifetime: one whose
/// lock is free was left by a killed sshbench and is removed by the next sandbox, see
/// `sys::scratch`) and the sessions' empty home in it.
fn private_dir() -> Result<(Scratch, PathBuf)> {
    let dir = Scratch::create(DIR_PREFIX).context("creating the sandbox's private directory")?;
    let home = dir.path().join("home");
    fs::create_dir(&home)?;
    fs::set_permissions(&home, fs::Permissions::from_mode(0o700))?;
    Ok((dir, home))
}

/// Switch on, per kind, every candidate name this sshd accepts (host keys: those it has
/// a key for); what is switched on is what the sandbox offers.
fn enable_algorithms(
    opts: &SandboxOptions,
    sshd: &Path,
    config: &mut SshdConfig,
    host_keys: &[HostKey],
) -> Result<AlgoLists> {
    let key_types: Vec<&str> = host_keys.iter().map(|k| k.kind).collect();
    let mut offered = AlgoLists::new();
    for kind in [
        AlgoKind::Kex,
        AlgoKind::HostKey,
        AlgoKind::Cipher,
        AlgoKind::Mac,
    ] {
        let names = match opts.restrict.get(kind) {
            Some(r) => r.to_vec(),
            None => opts.candidates.get(kind).unwrap_or_default().to_vec(),
        };
        let mut accepted = filter_accepted(&names, &mut |list| config.accepts(sshd, kind, list));
        if kind == AlgoKind::HostKey {
            accepted.retain(|alg| host_key_type(alg).is_some_and(|t| key_types.contains(&t)));
        }
        if accepted.is_empty() {
            bail!(
                "the sandbox sshd ({}) accepts none of the {} names tried: {}",
                sshd.display(),
                kind.label(),
                names.join(",")
            );
        }
        config.algorithms.push((kind, accepted.join(",")));
        offered.set(kind, accepted);
    }

    Ok(offered)
}

/// A given sshd (`--sshd`) runs its own helpers, not those compiled into it, which for
/// one unpacked beside the system's are the system's.
fn run_helpers_beside(opts: &SandboxOptions, sshd: &Path, config: &mut SshdConfig) {
    if opts.sshd.is_some() {
        for (option, path) in find::helpers_beside(sshd) {
            config.set(option, &path.display().to_string());
        }
    }
}

impl Sandbox {
    /// Start a sandbox sshd and wait until it listens.
    pub fn start(opts: &SandboxOptions) -> Result<Sandbox> {
        let sshd = match &opts.sshd {
            Some(p) => p.clone(),
            None => find_sshd().ok_or_else(|| anyhow!("no sshd binary found; {INSTALL_HINT}"))?,
        };
        let keygen = find_keygen(&sshd)
            .ok_or_else(|| anyhow!("ssh-keygen not found; install the OpenSSH client"))?;
        let (dir, home) = private_dir()?;
        let with_dsa = opts.candidates.contains(AlgoKind::HostKey, "ssh-dss");
        let host_keys = generate_keys(&keygen, dir.path(), with_dsa)?;
        let client_key = dir.path().join("client_ed25519");
        keygen_one(&keygen, &client_key, "ed25519", None)?;
        fs::copy(
            client_key.with_extension("pub"),
            dir.path().join("authorized_keys"),
        )?;

        let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .ok_or_else(|| anyhow!("the current user has no passwd entry"))?;

        let mut config = SshdConfig::new(dir.path(), &home, &user, &host_keys);
        config.apply(opts);
        run_helpers_beside(opts, &sshd, &mut config);
        let privsep = config.make_valid(&sshd)?;

        let offered = enable_algorithms(opts, &sshd, &mut config, &host_keys)?;
        let netns = opts
            .lab
            .rate_kbit
            .map(|kbit| Netns::create(Some(kbit)))
            .transpose()?;
        let cgroup = opts.lab.cpu.map(Cgroup::create).transpose()?;
        let host = netns
            .as_ref()
            .map_or_else(|| "127.0.0.1".to_string(), |n| n.ns_ip.clone());
        config.set("ListenAddress", &host);
        let mut sandbox = Sandbox {
            child: None,
            host,
            cgroup,
            netns,
            relay: None,
            server_cpus: opts.server_cpus.clone(),
            port: 0,
            user,
            ssh_config: dir.path().join("ssh_config"),
            client_key,
            sshd,
            offered,
            log_kex: opts.log_kex,
            privsep,
            dir,
        };
        sandbox.launch(&config, &host_keys)?;
        if let Some(ms) = opts.lab.delay_ms {
            sandbox.put_behind_relay(Duration::from_millis(ms.into()), &host_keys)?;
        }
        Ok(sandbox)
    }

    /// The delay lab: clients reach sshd through a relay that adds `rtt`.
    fn put_behind_relay(&mut self, rtt: Duration, host_keys: &[HostKey]) -> Result<()> {
        let sshd = (self.host.clone(), self.port);
        self.relay = Some(Relay::start(sshd, rtt).context("starting the delay relay")?);
        self.write_client_files(host_keys)
    }

    /// Pick a port, start sshd, wait for it to listen; retry when the port was taken.
    fn launch(&mut self, config: &SshdConfig, host_keys: &[HostKey]) -> Result<()> {
        let mut last_error = String::new();
        for _ in 0..8 {
            // A fresh namespace has every port free.
            let port = if self.netns.is_some() {
                22
            } else {
                free_port()?
            };
            let cfg_path = self.dir.path().join("sshd_config");
            fs::write(&cfg_path, config.render(port))?;
            let log_path = self.dir.path().join("sshd.log");
            let log = File::create(&log_path)?;
            let mut cmd = match &self.netns {
                Some(ns) => ns.command(&self.sshd),
                None => Command::new(&self.sshd),
            };
            cmd.arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&cfg_path)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .process_group(0);
            proc::die_with_parent(&mut cmd);
            if let Some(cpus) = &self.server_cpus {
                affinity::pin_command(&mut cmd, cpus)?;
            }
            let mut child = cmd
                .spawn()
                .with_context(|| format!("starting {}", self.sshd.display()))?;
            if let Some(cg) = &self.cgroup {
                if let Err(e) = cg.add(child.id()) {
                    stop_child(&mut child);
                    return Err(e);
                }
            }
            match wait_listening(&mut child, &log_path, port) {
                Ok(()) => {
                    self.port = port;
                    self.child = Some(child);
                    self.write_client_files(host_keys)?;
                    return Ok(());
                }
                Err(log_text) => {
                    stop_child(&mut child);
                    if !log_text.contains("Address already in use") {
                        bail!(
                            "the sandbox sshd ({}) did not start:\n{}",
                            self.sshd.display(),
                            log_text.trim()
                        );
                    }
                    last_error = log_text;
                }
            }
        }
        bail!("no free port for the sandbox sshd: {}", last_error.trim())
    }

    /// The private known_hosts and ssh_config the client uses to reach the sandbox.
    fn write_client_files(&self, host_keys: &[HostKey]) -> Result<()> {
        let known_hosts = self.dir.path().join("known_hosts");
        let mut kh = String::new();
        for key in host_keys {
            let public = fs::read_to_string(key.path.with_extension("pub"))?;
            let mut parts = public.split_whitespace();
            let (Some(t), Some(k)) = (parts.next(), parts.next()) else {
                bail!("unreadable public key {}", key.path.display());
            };
            // known_hosts names port 22 without brackets.
            let name = if self.port() == 22 {
                self.host().to_string()
            } else {
                format!("[{}]:{}", self.host(), self.port())
            };
            kh.push_str(&format!("{name} {t} {k}\n"));
        }
        fs::write(&known_hosts, kh)?;
        let config = format!(
            "Host {ALIAS}\n  HostName {host}\n  Port {port}\n  User {user}\n  \
             IdentityFile \"{key}\"\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
             UserKnownHostsFile \"{kh}\"\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking yes\n  UpdateHostKeys no\n  CheckHostIP no\n  \
             PasswordAuthentication no\n  KbdInteractiveAuthentication no\n  \
             PreferredAuthentications publickey\n",
            host = self.host(),
            port = self.port(),
            user = self.user,
            key = self.client_key.display(),
            kh = known_hosts.display(),
        );
        fs::write(&self.ssh_config, config)?;
        Ok(())
    }

    /// The private ssh_config; use with `ssh -F <this> sshbench-sandbox`.
    pub fn ssh_config(&self) -> &Path {
        &self.ssh_config
    }

    /// The port clients connect to: sshd's, or the delay relay's in front of it.
    pub fn port(&self) -> u16 {
        self.relay.as_ref().map_or(self.port, Relay::port)
    }

    /// The address clients connect to: where sshd listens (127.0.0.1, or the lab
    /// namespace's), or 127.0.0.1 for the delay relay.
    pub fn host(&self) -> &str {
        match self.relay {
            Some(_) => "127.0.0.1",
            None => &self.host,
        }
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    /// The private directory (keys, configs, logs).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The sshd binary in use.
    pub fn sshd(&self) -> &Path {
        &self.sshd
    }

    /// The client key the sandbox authorizes.
    pub fn client_key(&self) -> &Path {
        &self.client_key
    }

    /// What this sshd was configured to offer (kex, host key, cipher, MAC).
    pub fn offered(&self) -> &AlgoLists {
        &self.offered
    }

    /// The CPUs sshd and its sessions are pinned to, if any.
    pub fn server_cpus(&self) -> Option<&[usize]> {
        self.server_cpus.as_deref()
    }

    /// The sshd listener's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// sshd's log so far (for diagnostics).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Whether its sshd can give a session a terminal: it runs as whoever started it,
    /// which as an ordinary user it may not (see [`crate::sys::pty`]).
    pub fn gives_terminals(&self) -> bool {
        crate::sys::pty::terminals_handed_over()
    }

    /// sshd's log, when it says what each connection negotiated (see
    /// [`SandboxOptions::log_kex`]).
    pub fn kex_log(&self) -> Option<PathBuf> {
        self.log_kex.then(|| self.dir.path().join("sshd.log"))
    }

    /// Stop sshd and every session process it spawned. Idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let sessions = proc::descendants(child.id());
            stop_child(&mut child);
            for pid in sessions {
                proc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop();
        if let Some(p) = self.privsep.take() {
            p.release();
        }
    }
}

/// Prefix of every sandbox's private directory in the temp dir.
const DIR_PREFIX: &str = "sshbench-sandbox-";

/// SIGTERM, a short grace period, then SIGKILL; always reaps.
fn stop_child(child: &mut Child) {
    proc::kill(child.id(), libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Wait for sshd's "Server listening" line; on failure return its log.
fn wait_listening(child: &mut Child, log: &Path, port: u16) -> std::result::Result<(), String> {
    let needle = format!("port {port}");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = fs::read_to_string(log).unwrap_or_default();
        if text
            .lines()
            .any(|l| l.contains("Server listening") && l.contains(&needle))
        {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{text}\n(sshd exited: {status})"));
        }
        if Instant::now() > deadline {
            return Err(format!("{text}\n(sshd did not listen within 15 s)"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1 to find a free port")?;
    Ok(l.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bisection_keeps_exactly_the_accepted_names() {
        let names = v(&["a", "bad1", "b", "c", "bad2", "d", "e"]);
        let mut calls = 0;
        let kept = filter_accepted(&names, &mut |list| {
            calls += 1;
            !list.iter().any(|n| n.starts_with("bad"))
        });
        assert_eq!(kept, v(&["a", "b", "c", "d", "e"]));
        assert!(calls < names.len() * 2, "{calls} calls");
    }

    #[test]
    fn bisection_one_call_when_all_accepted() {
        let mut calls = 0;
        let kept = filter_accepted(&v(&["a", "b"]), &mut |_| {
            calls += 1;
            true
        });
        assert_eq!((kept.len(), calls), (2, 1));
        assert!(filter_accepted(&[], &mut |_| true).is_empty());
    }

    #[test]
    fn host_key_types() {
        assert_eq!(host_key_type("rsa-sha2-512"), Some("rsa"));
        assert_eq!(host_key_type("ssh-ed25519-cert-v01@openssh.com"), None);
    }
}
