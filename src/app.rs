//! The edge where the stages meet the terminal: builds the pipeline for a command, shows
//! progress on stderr and the results on stdout.

use anyhow::{Context, Result, anyhow};
use sshbench::cancel::Cancel;
use sshbench::cli::{AlgosArgs, AlgosFormat, RunArgs};
use sshbench::config::RunConfig;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::measure::{FailureKind, Outcome, Sample, Transport};
use sshbench::offer::server::{self, ProbeError, ProbeMethod, ServerOffer};
use sshbench::offer::{self, AlgoLists, client};
use sshbench::plan::{self, PlanInput};
use sshbench::runner::{self, Abort, Event, RunSettings};
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use sshbench::target::{self, Target};
use sshbench::views::algos::{self as algos_view, AlgosReport};
use sshbench::views::table;
use std::io::Write;
use std::time::Duration;

/// Exit code for a run stopped by a signal is 128 + signal (130 for Ctrl-C).
pub fn run(args: RunArgs) -> Result<u8> {
    let cfg = RunConfig::from_args(args)?;
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let ssh = find_ssh()?;
    let client = client::query(&ssh)?;
    let say = |msg: String| {
        if !cfg.quiet {
            eprintln!("{msg}");
        }
    };
    say(format!("client: {}", client.version.raw));

    // The sandbox lives until the end of this function: dropping it tears it down,
    // whichever way we leave.
    let mut sandbox_guard: Option<Sandbox> = None;
    let (target, server): (Target, Option<AlgoLists>) = match &cfg.destination {
        None => {
            let sb = Sandbox::start(&SandboxOptions {
                candidates: offer::candidates(&client),
                ..SandboxOptions::default()
            })?;
            say(format!(
                "server: local sandbox {} on 127.0.0.1:{} (private dir {})",
                sb.sshd().display(),
                sb.port(),
                sb.dir().display()
            ));
            let t = Target::sandbox(sb.ssh_config(), sandbox::ALIAS);
            let offered = sb.offered().clone();
            sandbox_guard = Some(sb);
            (t, Some(offered))
        }
        Some(dest) => {
            let t = Target::parse(dest)?;
            let r = target::resolve(&ssh, &t)?;
            say(format!(
                "server: {} ({}@{} port {})",
                t.label, r.user, r.hostname, r.port
            ));
            // Plan only what the server offers; if its offer cannot be read, ssh
            // itself will report refusals.
            let offer = if cfg.mock_transport {
                None
            } else {
                match probe_remote(&ssh, &t, &r, cfg.timeout.min(Duration::from_secs(15))) {
                    Ok(o) => {
                        say(format!(
                            "server offer: {} ({})",
                            o.banner,
                            method_label(&o.method)
                        ));
                        Some(o.kexinit.lists())
                    }
                    Err(e) => {
                        say(format!(
                            "warning: cannot read the server's offer ({e}); planning from the client's lists"
                        ));
                        None
                    }
                }
            };
            (t, offer)
        }
    };

    let plan = plan::build(&PlanInput {
        client: &client,
        server: server.as_ref(),
        filters: &cfg.filters,
        modes: &cfg.modes,
        vary_hostkeys: target.is_sandbox,
    })?;
    for note in &plan.notes {
        say(format!("note: {note}"));
    }
    say(format!("{} measurements planned", plan.items.len()));

    let mut transport: Box<dyn Transport> = if cfg.mock_transport {
        Box::new(Mock::default())
    } else {
        Box::new(OpenSsh::new(ssh, target, Payload::random(1 << 20, 0x5eed)))
    };
    let settings = RunSettings {
        size: cfg.size,
        timeout: cfg.timeout,
    };
    let quiet = cfg.quiet;
    let mut progress = |e: Event| {
        if quiet {
            return;
        }
        if let Event::Finished {
            index,
            total,
            sample,
        } = e
        {
            eprintln!("[{}/{}] {}", index + 1, total, describe(sample));
        }
    };
    let result = runner::run(&plan, &settings, transport.as_mut(), &cancel, &mut progress);
    drop(sandbox_guard);
    let samples = match result {
        Ok(samples) => samples,
        Err(Abort::Cancelled) => {
            eprintln!("sshbench: interrupted; the sandbox (if any) was stopped");
            return Ok(cancel.exit_code().unwrap_or(130) as u8);
        }
        Err(Abort::Fatal { message, samples }) => {
            let hint = match samples.last().map(|s| &s.outcome) {
                Some(Outcome::Failed {
                    kind: FailureKind::Network,
                    ..
                }) => "check the host name and port, and that `ssh DEST true` connects",
                Some(Outcome::Failed {
                    kind: FailureKind::HostKey,
                    ..
                }) => {
                    "connect once with plain `ssh DEST` to verify and record the server's host key"
                }
                _ => {
                    "sshbench needs key-based login that works without prompts \
                     (try `ssh -o BatchMode=yes DEST true`)"
                }
            };
            return Err(anyhow!("{message}\nhint: {hint}"));
        }
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth a panic.
    let _ = stdout.write_all(table::render(&samples).as_bytes());
    Ok(0)
}

/// Read a real destination's offer: directly, or through ssh when a proxy is in the way.
fn probe_remote(
    ssh: &std::path::Path,
    t: &Target,
    r: &target::Resolved,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    if r.via_proxy {
        server::probe_via_ssh(ssh, t, timeout)
    } else {
        server::probe(&r.hostname, r.port, timeout)
    }
}

fn method_label(m: &ProbeMethod) -> String {
    match m {
        ProbeMethod::Direct { address } => format!("KEXINIT read from {address}"),
        ProbeMethod::SshVerbose => "proposal read from ssh -vv".into(),
    }
}

/// `sshbench algos`.
pub fn algos(args: AlgosArgs) -> Result<u8> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    let ssh = find_ssh()?;
    let client = client::query(&ssh)?;
    let (label, server) = match &args.destination {
        None => {
            let sb = Sandbox::start(&SandboxOptions {
                candidates: offer::candidates(&client),
                ..SandboxOptions::default()
            })?;
            let o = server::probe("127.0.0.1", sb.port(), timeout);
            ("local sandbox".to_string(), o)
        }
        Some(dest) => {
            let t = Target::parse(dest)?;
            let r = target::resolve(&ssh, &t)?;
            (t.label.clone(), probe_remote(&ssh, &t, &r, timeout))
        }
    };
    let (server, server_error) = match server {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let rows = offer::compare(
        &client.lists,
        server.as_ref().map(|s| s.kexinit.lists()).as_ref(),
        server.as_ref().map(|s| s.kexinit.strict_kex()),
    );
    let report = AlgosReport {
        destination: &label,
        client: &client.version,
        server: server.as_ref(),
        server_error,
        algorithms: &rows,
    };
    let text = match args.format {
        AlgosFormat::Table => algos_view::render_table(&report),
        AlgosFormat::Json => algos_view::render_json(&report),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if server.is_some() { 0 } else { 1 })
}

fn find_ssh() -> Result<std::path::PathBuf> {
    sandbox::find_on_path("ssh").ok_or_else(|| {
        anyhow!("no ssh client on PATH; install OpenSSH (Debian: apt-get install openssh-client)")
    })
}

fn describe(s: &Sample) -> String {
    let figure = match (s.outcome.is_success(), s.throughput()) {
        (true, Some(r)) => format!("{:.1} MB/s", r / 1e6),
        (true, None) => format!("{:.1} ms", s.wall.as_secs_f64() * 1e3),
        (false, _) => format!(
            "{}: {}",
            s.outcome.label(),
            s.outcome.message().unwrap_or("")
        ),
    };
    format!("{} {} {}", s.mode, s.suite.label(), figure)
}
