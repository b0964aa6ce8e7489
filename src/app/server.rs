//! The server side of a run or of `algos`: the local sandbox started and pinned, or a
//! real destination resolved and its offer read.

use super::outcome::UNREACHABLE_HINT;
use super::progress::Progress;
use super::reach::Reach;
use anyhow::{Context, Result, bail};
use sshbench::destination::{self, Target};
use sshbench::model::{AlgoLists, LabOptions, Placement};
use sshbench::offer::server::{self, ProbeError, ProbeMethod, ServerOffer};
use sshbench::offer::{self, client};
use sshbench::sandbox::dropbear::DropbearFiles;
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use sshbench::sys::{affinity, machine};
use sshbench::views::scope::TERRAPIN_NOTE;
use std::path::Path;
use std::time::Duration;

/// Read a real destination's offer: directly, or through ssh when a proxy is in the way.
pub fn probe_remote(
    ssh: &Path,
    t: &Target,
    r: &destination::Resolved,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    if r.via_proxy {
        let server = format!("{}:{}", r.hostname, r.port);
        server::probe_via_ssh(ssh, t, &server, timeout)
    } else {
        server::probe(&r.hostname, r.port, timeout)
    }
}

/// How to set up the local sandbox: its lab, where its two ends run, and which sshd.
#[derive(Clone, Debug, Default)]
pub struct SandboxSetup {
    pub lab: LabOptions,
    pub placement: Placement,
    /// `--sshd`; `None`: the one found on this machine.
    pub sshd: Option<std::path::PathBuf>,
    /// A client measures that cannot say what it negotiated (dbclient): sshd logs it.
    pub log_kex: bool,
    /// The run measures X11: sshd forwards it.
    pub x11: bool,
}

/// Start the sandbox; with a split placement its sshd runs on the server's CPUs, and the
/// split is returned so that the caller can keep its clients on the others.
pub fn start_sandbox(
    client: &client::ClientOffer,
    setup: &SandboxSetup,
) -> Result<(Sandbox, Option<affinity::Split>)> {
    let split = affinity::plan(setup.placement);
    let sb = Sandbox::start(&SandboxOptions {
        sshd: setup.sshd.clone(),
        candidates: offer::candidates(client),
        lab: setup.lab,
        server_cpus: split.as_ref().map(|s| s.server.clone()),
        log_kex: setup.log_kex,
        x11: setup.x11,
        ..SandboxOptions::default()
    })?;
    Ok((sb, split))
}

/// Why a `split` sandbox cannot be had here (one CPU allowed, or no pinning on this OS);
/// `None` when it can, or when it was not asked for.
pub fn unsplittable(asked: Placement) -> Option<String> {
    (asked == Placement::Split)
        .then(|| affinity::unsplittable(affinity::allowed().as_deref()))
        .flatten()
}

/// Where a new sandbox run's two ends will run: `asked`, unless it is a split this
/// machine cannot give; then shared, said once, so that the run is stored and pooled as
/// what it measured.
pub fn sandbox_placement(asked: Placement, progress: &Progress) -> Placement {
    match unsplittable(asked) {
        Some(why) => {
            progress.say(&format!(
                "note: {why}: the sandbox's sshd and ssh run on the same CPUs, and the run is \
                 stored as `{}`",
                destination::sandbox_label(Placement::Shared, &LabOptions::default())
            ));
            Placement::Shared
        }
        None => asked,
    }
}

/// ", sshd on CPU 1, clients on CPU 0" for a split placement.
pub fn placement_label(split: Option<&affinity::Split>, client_side: &str) -> String {
    split.map_or_else(String::new, |s| {
        let cpus = |l: &[usize]| {
            let word = if l.len() == 1 { "CPU" } else { "CPUs" };
            format!("{word} {}", affinity::format_list(l))
        };
        format!(
            ", sshd on {}, {client_side} on {}",
            cpus(&s.server),
            cpus(&s.client)
        )
    })
}

/// " (lab: ...)" for messages.
pub fn lab_label(lab: &LabOptions) -> String {
    let parts = lab.describe();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" (lab: {})", parts.join(", "))
    }
}

/// The server side of a run: where it is, what it offers, what it runs.
pub struct Server {
    pub target: Target,
    pub offer: Option<AlgoLists>,
    pub version: Option<String>,
    /// Whether its offer includes strict KEX (the Terrapin countermeasure).
    pub strict_kex: Option<bool>,
    pub resolved: Option<destination::Resolved>,
    /// A real server on this machine itself (its offer read from one of this machine's
    /// addresses, no proxy between): its sshd shares the client's CPUs.
    pub here: bool,
    /// Kept alive for the whole run; dropping it tears the sandbox down.
    sandbox: Option<Sandbox>,
}

impl Server {
    /// Whether the server can give a session a terminal: a real one can; the sandbox
    /// run by an ordinary user may not.
    pub fn gives_terminals(&self) -> bool {
        self.sandbox.as_ref().is_none_or(Sandbox::gives_terminals)
    }

    /// dbclient's home and key for the sandbox (`None` for a real server, which it
    /// reaches with the user's own).
    pub fn dropbear_files(&self, dbclient: &Path) -> Option<Result<DropbearFiles>> {
        Some(self.sandbox.as_ref()?.dropbear_files(dbclient))
    }

    /// The sandbox sshd's log, when it says what each connection negotiated.
    pub fn kex_log(&self) -> Option<std::path::PathBuf> {
        self.sandbox.as_ref()?.kex_log()
    }

    /// The sandbox's path: what one raw TCP stream moves along it (see
    /// [`Sandbox::tcp_rate`]); `None` for a real server, or with why it failed.
    pub fn tcp_rate(&self) -> Option<Result<f64>> {
        Some(self.sandbox.as_ref()?.tcp_rate())
    }
}

/// The sandbox started and pinned, and what it offers.
fn sandbox_server(
    ssh: &Path,
    client: &client::ClientOffer,
    probe_timeout: Duration,
    setup: SandboxSetup,
    progress: &Progress,
) -> Result<Server> {
    let (sb, split) = start_sandbox(client, &setup)?;
    if let Some(s) = &split {
        // This thread starts every ssh of the run (and the threads feeding them).
        affinity::pin_thread(&s.client).context("keeping the client off sshd's CPUs")?;
    }
    progress.say(&format!(
        "server: local sandbox {} on {}:{} (private dir {}){}{}",
        sb.sshd().display(),
        sb.host(),
        sb.port(),
        sb.dir().display(),
        placement_label(split.as_ref(), "ssh"),
        lab_label(&setup.lab)
    ));
    let probed = server::probe(sb.host(), sb.port(), probe_timeout).ok();
    let strict_kex = probed.as_ref().map(|o| o.kexinit.strict_kex());
    let version = probed.map(|o| o.banner);
    let mut target = Target::sandbox(sb.ssh_config(), sandbox::ALIAS);
    target.label = destination::sandbox_label(setup.placement, &setup.lab);
    // Another sshd is another server: its runs never pool with the usual sandbox's.
    if setup.sshd.is_some() {
        let software = version
            .as_deref()
            .map_or("unknown", destination::banner_software);
        target.label = destination::with_sshd(&target.label, software);
    }
    let resolved = destination::resolve(ssh, &target)?;
    Ok(Server {
        target,
        offer: Some(sb.offered().clone()),
        version,
        strict_kex,
        resolved: Some(resolved),
        here: false,
        sandbox: Some(sb),
    })
}

/// A real server's offer, lists, banner and strict KEX, and whether it was read from
/// this machine's own address; nothing when it cannot be read (the plan then comes from
/// the client's lists).
#[derive(Default)]
pub(super) struct Offered {
    lists: Option<AlgoLists>,
    banner: Option<String>,
    strict: Option<bool>,
    here: bool,
}

/// The offer, or an error where nothing answers at the server's address (refused, no
/// such host, no route, silence): ssh, which connects there too, would meet the same,
/// so no run is begun. Through a proxy, or where something answers but not as
/// expected, the run goes on and ssh's own connections tell.
pub(super) fn read_offer(
    ssh: &Path,
    t: &Target,
    r: &destination::Resolved,
    probe_timeout: Duration,
    progress: &Progress,
) -> Result<Offered> {
    match probe_remote(ssh, t, r, probe_timeout) {
        Ok(o) => {
            progress.say(&format!("server offer: {} ({})", o.banner, o.method));
            let strict = o.kexinit.strict_kex();
            if !strict {
                progress.say(&format!("warning: {TERRAPIN_NOTE}"));
            }
            let here = match &o.method {
                ProbeMethod::Direct { address } => address
                    .parse::<std::net::SocketAddr>()
                    .is_ok_and(|a| machine::own_address(a.ip())),
                ProbeMethod::SshVerbose => false,
            };
            Ok(Offered {
                lists: Some(o.kexinit.lists()),
                banner: Some(o.banner),
                strict: Some(strict),
                here,
            })
        }
        Err(e @ ProbeError::Connect(_)) if !r.via_proxy => bail!("{e}\nhint: {UNREACHABLE_HINT}"),
        Err(e) => {
            progress.say(&format!(
                "warning: cannot read the server's offer ({e}); planning from the client's lists"
            ));
            Ok(Offered::default())
        }
    }
}

/// The server of a run: the sandbox without a destination, else the destination
/// resolved and its offer read as `reach` reads one.
pub fn connect_server(
    destination: Option<Target>,
    ssh: &Path,
    client: &client::ClientOffer,
    probe_timeout: Duration,
    reach: &dyn Reach,
    setup: SandboxSetup,
    progress: &Progress,
) -> Result<Server> {
    let Some(t) = destination else {
        return sandbox_server(ssh, client, probe_timeout, setup, progress);
    };
    let mut t = t;
    let r = destination::resolve(ssh, &t)?;
    t.via_proxy = r.via_proxy;
    let via = if r.via_proxy { ", through a proxy" } else { "" };
    progress.say(&format!(
        "server: {} ({}@{} port {}{via})",
        t.label, r.user, r.hostname, r.port
    ));
    let offered = reach.offer(ssh, &t, &r, probe_timeout, progress)?;
    Ok(Server {
        target: t,
        offer: offered.lists,
        version: offered.banner,
        strict_kex: offered.strict,
        resolved: Some(r),
        here: offered.here,
        sandbox: None,
    })
}
