//! `sshbench runs`, `sshbench sandbox` and `sshbench algos`.

use super::server::{
    SandboxSetup, lab_label, placement_label, probe_remote, start_sandbox, unsplittable,
};
use super::{find_ssh, open_existing};
use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use sshbench::cli::config::{destination_ssh_args, parse_rate, sshd_program};
use sshbench::cli::{
    AlgosArgs, AlgosFormat, Cli, CompletionsArgs, DbArgs, DbCommand, RunsArgs, SandboxArgs,
};
use sshbench::destination::{self, Target};
use sshbench::model::LabOptions;
use sshbench::offer::{self, client, server};
use sshbench::sandbox;
use sshbench::store::{self, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::views::algos::{self as algos_view, AlgosReport};
use sshbench::views::safe;
use std::io::Write;
use std::time::Duration;

/// `sshbench db copy`.
pub fn db(args: DbArgs) -> Result<u8> {
    let (from, to, runs) = match args.command {
        DbCommand::Copy { from, to, runs } => (from, to, runs),
        DbCommand::Upgrade { db } => {
            let db = super::db_location(&db.path)?;
            if !store::is_url(&db) && !std::path::Path::new(&db).exists() {
                bail!("no database to upgrade: {db} does not exist");
            }
            let store = Store::connect(&db)?;
            say_err!("{} is up to date", store.describe());
            return Ok(0);
        }
    };
    if from == to {
        bail!(
            "FROM and TO are the same database: {}",
            store::redact(&from)
        );
    }
    let source = open_existing(&Some(from), "nothing to copy")?;
    store::check(&to)?;
    let target = Store::connect(&to)?;
    let copied = store::copy(&source, &target, &runs, &mut |id, n| {
        say_err!("copied run {id} ({n} samples)");
    })?;
    say_err!(
        "{} runs and {} samples copied from {} to {}{}",
        copied.runs,
        copied.samples,
        source.describe(),
        target.describe(),
        match copied.skipped {
            0 => String::new(),
            n => format!("; {n} runs were there already"),
        }
    );
    Ok(0)
}

/// `sshbench runs`.
pub fn runs(args: RunsArgs) -> Result<u8> {
    let store = open_existing(&args.db.path, "`sshbench run` creates it")?;
    if let Some(id) = args.delete {
        // Deleting writes: the database opened to read is opened again to write.
        let store = Store::connect(&super::db_location(&args.db.path)?)?;
        if !store.delete_run(id)? {
            bail!("no run {id} in {}", store.describe());
        }
        say_err!("deleted run {id}");
        return Ok(0);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let runs = store.runs()?;
    if runs.is_empty() {
        say_err!("no runs stored in {} yet", store.describe());
        return Ok(0);
    }
    let doc = sshbench::views::runs::table(&runs, &store.sample_counts()?, now);
    super::emit(&doc, &(), sshbench::cli::FormatArg::Table, args.wide)
}

/// `sshbench sandbox`: the sandbox for manual use and benchmark scripts.
pub fn sandbox(args: SandboxArgs) -> Result<u8> {
    let lab = LabOptions {
        cpu: args.cpu,
        rate_kbit: args.rate.as_deref().map(parse_rate).transpose()?,
        delay_ms: args
            .delay
            .as_deref()
            .map(sshbench::cli::config::parse_delay)
            .transpose()?,
    };
    let cancel = Cancel::from_signals().context("installing signal handlers")?;
    let client = client::query_openssh(&find_ssh()?)?;
    let placement = sshbench::cli::config::placement(args.cpus);
    if let Some(why) = unsplittable(placement) {
        say_err!("note: {why}: the sandbox's sshd and its clients run on the same CPUs");
    }
    let sshd = args.sshd.as_deref().map(sshd_program).transpose()?;
    let setup = SandboxSetup {
        lab,
        placement,
        sshd,
        ..SandboxSetup::default()
    };
    let (sb, split) = start_sandbox(&client, &setup)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", sb.ssh_config().display())?;
    out.flush()?;
    drop(out);
    say_err!(
        "sandbox sshd {} listening on {}:{}{}{}\nconnect with: ssh -F {} {}\nCtrl-C stops it",
        sb.sshd().display(),
        sb.host(),
        sb.port(),
        placement_label(split.as_ref(), "clients belong"),
        lab_label(&lab),
        sb.ssh_config().display(),
        sandbox::ALIAS
    );
    while !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(sb);
    Ok(0)
}

/// `sshbench algos`.
pub fn algos(args: AlgosArgs) -> Result<u8> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    // algos resolves the destination with the client it shows: an OpenSSH one.
    let ssh = match &args.client {
        Some(p) => sshbench::cli::config::client_program(p)?,
        None => find_ssh()?,
    };
    let client = client::query_openssh(&ssh)?;
    let ssh_args = destination_ssh_args(args.destination.as_deref(), &args.ssh)?;
    let (label, server) = match &args.destination {
        None => {
            let setup = SandboxSetup {
                sshd: args.sshd.as_deref().map(sshd_program).transpose()?,
                ..SandboxSetup::default()
            };
            let (sb, _) = start_sandbox(&client, &setup)?;
            let o = server::probe(sb.host(), sb.port(), timeout);
            (destination::SANDBOX.to_string(), o)
        }
        Some(dest) => {
            let t = Target::parse(dest)?.with_ssh_args(ssh_args);
            let r = destination::resolve(&ssh, &t)?;
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
    // What the server offered is its own text: through the sanitiser (`emit`'s too).
    match args.format {
        AlgosFormat::Table => {
            let doc = algos_view::document(&report);
            super::emit(&doc, &(), sshbench::cli::FormatArg::Table, args.wide)?;
        }
        AlgosFormat::Json => {
            let text = safe::json(&algos_view::render_json(&report)).into_owned();
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        }
    }
    Ok(if server.is_some() { 0 } else { 1 })
}

/// `sshbench completions SHELL`: from the clap definitions, so they never drift.
pub fn completions(args: CompletionsArgs) -> Result<u8> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "sshbench", &mut script);
    // A closed pipe (e.g. `| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(&script);
    Ok(0)
}

/// `sshbench man`: the manual page, with a section per subcommand.
pub fn man() -> Result<u8> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        writeln!(out, ".SH \"SSHBENCH {}\"", sub.get_name().to_uppercase())?;
        let page = clap_mangen::Man::new(sub.clone());
        page.render_synopsis_section(&mut out)?;
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
    }
    let _ = std::io::stdout().lock().write_all(&out);
    Ok(0)
}
