//! The edge where the stages meet the terminal: builds the pipeline for a command, shows
//! progress on stderr and the results on stdout.

use anyhow::{Context, Result, anyhow};
use sshbench::cancel::Cancel;
use sshbench::cli::RunArgs;
use sshbench::config::RunConfig;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::measure::{FailureKind, Outcome, Sample, Transport};
use sshbench::offer::{self, AlgoLists, client};
use sshbench::plan::{self, PlanInput};
use sshbench::runner::{self, Abort, Event, RunSettings};
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use sshbench::target::{self, Target};
use sshbench::views::table;
use std::io::Write;

/// Exit code for a run stopped by a signal is 128 + signal (130 for Ctrl-C).
pub fn run(args: RunArgs) -> Result<u8> {
    let cfg = RunConfig::from_args(args)?;
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let ssh = sandbox::find_on_path("ssh").ok_or_else(|| {
        anyhow!("no ssh client on PATH; install OpenSSH (Debian: apt-get install openssh-client)")
    })?;
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
            (t, None)
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
