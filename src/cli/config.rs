//! Owned, validated configuration built from the parsed command line. No clap types
//! travel past this module.

use super::args::{ConnectionsArg, CpusArg, PayloadArg, RunArgs, SshArgs};
use crate::model::{Connections, Filters, LabOptions, Mode, PayloadKind, Placement, RunOptions};
use crate::plan::filter;
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::time::Duration;

/// Everything `sshbench run` needs to know.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `None`: the local sandbox.
    pub destination: Option<String>,
    /// A fleet run: every destination given, beyond the first (`destination`).
    pub destinations: Vec<String>,
    /// A fleet run: the file of more destinations.
    pub hosts_file: Option<PathBuf>,
    /// A fleet run: hosts measured at once (`None`: the default for this machine).
    pub jobs: Option<usize>,
    /// A fleet shared by workers under this name (`--fleet`).
    pub fleet_name: Option<String>,
    /// `--fleet-lease`: checked in range.
    pub fleet_lease_s: Option<u32>,
    /// `--fleet-full`: hosts of a kind measured in full.
    pub fleet_full: crate::model::fleet::FleetFull,
    pub options: RunOptions,
    /// Shuffle seed; random when not given.
    pub seed: Option<u64>,
    /// Database file or PostgreSQL URL; the XDG default file when not given.
    pub db: Option<String>,
    /// `Some(None)`: resume the newest unfinished run; `Some(Some(id))`: that run.
    pub resume: Option<Option<i64>>,
    pub quiet: bool,
    pub verbose: bool,
    /// End with the full tables instead of the headline.
    pub tables: bool,
    /// Terminal output unfitted: every column, full names (`--wide`).
    pub wide: bool,
    pub mock_transport: bool,
    /// `--mock-pace`: how long each mock sample takes.
    pub mock_pace: Option<std::time::Duration>,
    /// ssh's own `-F` and `-o` for the destination, checked.
    pub ssh_args: Vec<String>,
}

/// `--sshd`: an executable file, kept as an absolute path (a resumed run starts it
/// again from wherever it is run).
pub fn sshd_program(p: &std::path::Path) -> Result<std::path::PathBuf> {
    executable(
        p,
        &format!("--sshd {}", p.display()),
        "the path of an OpenSSH sshd",
    )
}

/// `found`, an executable file, as an absolute path; else an error that begins with
/// `given` (the option and what it named) and says to give `what`.
fn executable(found: &std::path::Path, given: &str, what: &str) -> Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(found).map_err(|e| anyhow::anyhow!("{given}: {e}"))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        bail!("{given}: not an executable file; give {what}");
    }
    Ok(std::fs::canonicalize(found)?)
}

/// `--ssh`: a program found on PATH when it is a bare name, else a path; an executable
/// file, kept as an absolute path (a resumed run runs it again from anywhere).
pub fn client_program(p: &std::path::Path) -> Result<std::path::PathBuf> {
    let shown = p.display();
    let bare = p.components().count() == 1 && !p.to_string_lossy().starts_with('.');
    let found = if bare {
        let name = p.to_string_lossy();
        crate::sandbox::find_on_path(&name)
            .ok_or_else(|| anyhow::anyhow!("--ssh {shown}: no such program on PATH"))?
    } else {
        p.to_path_buf()
    };
    executable(
        &found,
        &format!("--ssh {shown}"),
        "an OpenSSH-compatible client",
    )
}

/// Every `--ssh` given, each once, at most [`MAX_CLIENTS`].
pub fn client_programs(given: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    if given.len() > crate::model::MAX_CLIENTS {
        bail!(
            "--ssh names {} clients; one run measures at most {}",
            given.len(),
            crate::model::MAX_CLIENTS
        );
    }
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for (g, p) in given.iter().zip(given.iter().map(|g| client_program(g))) {
        let p = p?;
        if out.contains(&p) {
            bail!("--ssh {} names {} again", g.display(), p.display());
        }
        out.push(p);
    }
    Ok(out)
}

/// The fixed rounds, or a race's first pass.
fn first_rounds(a: &RunArgs) -> u32 {
    a.rounds.unwrap_or(FIRST_PASS)
}

/// A race's first pass, and the rounds of `--precision` before it adds any: three
/// figures give the first interval that can tell suites apart.
pub const FIRST_PASS: u32 = 3;

/// The default measured part of a transfer, and send's: a send sample's noise lies
/// within it, so a longer window tells more per second than more rounds (bench/results/notebook.md,
/// "Where a send sample's noise comes from").
const SAMPLE_TIME: Duration = Duration::from_millis(200);
const SEND_SAMPLE_TIME: Duration = Duration::from_millis(300);
const ECHO_SAMPLE_TIME: Duration = Duration::from_millis(100);
/// Most rounds a race or `--precision` may use, unless `--max-rounds` says.
const DEFAULT_MAX_ROUNDS: u32 = 20;

/// The counts and times that have a floor: a clear error before anything starts. The
/// sample time given, if any.
fn check_limits(a: &RunArgs) -> Result<Option<Duration>> {
    if a.timeout == 0 {
        bail!("--timeout must be at least 1 second");
    }
    let rounds = first_rounds(a);
    if rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    if let Some(max) = a.max_rounds.filter(|&max| max < rounds) {
        match a.rounds {
            Some(_) => bail!("--max-rounds ({max}) is below --rounds ({rounds})"),
            None => bail!(
                "--max-rounds ({max}) is below the race's first pass ({rounds} rounds): give \
                 --max-rounds {rounds} or more, or --rounds N for a fixed number of rounds"
            ),
        }
    }
    let Some(given) = &a.sample_time else {
        return Ok(None);
    };
    let sample_time = parse_duration(given)?;
    if sample_time < Duration::from_millis(10) {
        bail!("--sample-time must be at least 10ms");
    }
    Ok(Some(sample_time))
}

fn filters(a: &RunArgs) -> Result<Filters> {
    let parse = |v: &Option<String>| v.as_deref().map(filter::parse).transpose();
    Ok(Filters {
        kex: parse(&a.kex)?,
        hostkeys: parse(&a.hostkeys)?,
        ciphers: parse(&a.ciphers)?,
        macs: parse(&a.macs)?,
    })
}

/// The options stored with the run.
fn run_options(a: &RunArgs) -> Result<RunOptions> {
    let sample_time = check_limits(a)?;
    let asked: Vec<Mode> = a
        .mode
        .iter()
        .flat_map(|m| m.modes().iter().copied())
        .collect();
    let modes = super::workload::with_raw_streams(asked);
    if a.streams.is_some()
        && !modes
            .iter()
            .any(|m| matches!(m, Mode::Send | Mode::Receive))
    {
        bail!("--streams measures the best send and receive suites: add send or receive to --mode");
    }
    let budget = a.budget.as_deref().map(parse_duration).transpose()?;
    // A mode's own default applies only where no time was given for all.
    let own_default = |t: Duration| sample_time.is_none().then_some(t.as_secs_f64());
    Ok(RunOptions {
        modes,
        size: a.size.as_deref().map(parse_size).transpose()?,
        sample_time_s: sample_time.unwrap_or(SAMPLE_TIME).as_secs_f64(),
        send_sample_time_s: own_default(SEND_SAMPLE_TIME),
        echo_sample_time_s: own_default(ECHO_SAMPLE_TIME),
        rounds: first_rounds(a),
        precision: a.precision.as_deref().map(parse_percent).transpose()?,
        // Unless given, never below the rounds asked for.
        max_rounds: (a.max_rounds).unwrap_or(DEFAULT_MAX_ROUNDS.max(first_rounds(a))),
        race: a.rounds.is_none() && a.precision.is_none(),
        budget_s: budget.map(|d| d.as_secs_f64()),
        timeout_s: a.timeout,
        full: a.full,
        pairs: a.pairs,
        connections: match a.connections {
            ConnectionsArg::Suite => Connections::PerSuite,
            ConnectionsArg::Sample => Connections::PerSample,
        },
        compression: a.compression,
        lab: LabOptions {
            cpu: a.sandbox_cpu,
            rate_kbit: a.sandbox_rate.as_deref().map(parse_rate).transpose()?,
            delay_ms: a.sandbox_delay.as_deref().map(parse_delay).transpose()?,
        },
        // Only the sandbox is placed; a real server's run records none.
        sandbox_cpus: match (a.destinations.first(), &a.hosts) {
            (None, None) => placement(a.sandbox_cpus),
            _ => Placement::Shared,
        },
        sandbox_sshd: a.sshd.as_deref().map(sshd_program).transpose()?,
        clients: client_programs(&a.clients)?,
        payload: match a.payload {
            PayloadArg::Random => PayloadKind::Random,
            PayloadArg::Text => PayloadKind::Text,
            PayloadArg::Zeros => PayloadKind::Zeros,
        },
        filters: filters(a)?,
        workload: super::workload::spec(&a.workload)?,
        streams: a.streams,
    })
}

/// ssh's `-F` and `-o` (with `-p`, `-i`, `-J` as `-o`) for a destination, checked
/// (`crate::destination::ssh_args`); the sandbox has its own ssh_config and takes none.
pub fn destination_ssh_args(destination: Option<&str>, a: &SshArgs) -> Result<Vec<String>> {
    let options = [shortcuts(a)?, a.options.clone()].concat();
    if destination.is_none() && (a.config.is_some() || !options.is_empty()) {
        bail!(
            "-F, -o, -p, -i and -J apply to a destination; the local sandbox has its own ssh_config"
        );
    }
    crate::destination::ssh_args(a.config.as_deref(), &options)
}

/// ssh's `-p`, `-i` and `-J` as the `-o` options they stand for: every tool sshbench
/// runs (ssh, sftp, scp, rsync's ssh) takes `-o` alike, where scp and sftp spell the
/// port `-P`.
fn shortcuts(a: &SshArgs) -> Result<Vec<String>> {
    let mut out: Vec<String> = a.port.iter().map(|p| format!("Port={p}")).collect();
    for file in &a.identity {
        let file = file.display().to_string();
        if file.contains('"') || file.chars().any(char::is_control) {
            bail!("-i {file:?}: an identity file's path with a quote or control character");
        }
        out.push(format!("IdentityFile=\"{file}\""));
    }
    if let Some(jump) = &a.jump {
        if jump.is_empty() || jump.starts_with('-') || jump.contains(char::is_whitespace) {
            bail!("-J {jump:?}: give [user@]host[:port], comma-separated for several hops");
        }
        out.push(format!("ProxyJump={jump}"));
    }
    Ok(out)
}

/// `--fleet`, `--fleet-lease` and `--fleet-full`: in range, and only where a fleet is.
fn check_fleet_args(a: &RunArgs, fleet: bool) -> Result<()> {
    if let Some(name) = &a.fleet_name {
        if !crate::model::fleet::valid_fleet_name(name) {
            bail!("--fleet {name:?}: give 1-64 letters, digits, '.', '_' or '-'");
        }
    }
    if let Some(s) = a.fleet_lease {
        let range = crate::model::fleet::LEASE_RANGE_S;
        if !range.contains(&s) {
            let (lo, hi) = (range.start(), range.end());
            bail!("--fleet-lease {s}: give {lo} to {hi} seconds");
        }
    }
    if (a.fleet_name.is_some() || a.fleet_lease.is_some()) && !fleet {
        bail!("--fleet applies to a fleet run: give several destinations or --hosts FILE");
    }
    if a.fleet_full.is_some() && !fleet {
        bail!("--fleet-full applies to a fleet run: give several destinations or --hosts FILE");
    }
    if a.fleet_lease.is_some() && a.fleet_name.is_none() {
        bail!("--fleet-lease applies to a shared fleet: give --fleet NAME");
    }
    Ok(())
}

/// `--fleet-full N|all`.
fn fleet_full(given: Option<&str>) -> Result<crate::model::fleet::FleetFull> {
    use crate::model::fleet::FleetFull;
    match given {
        None => Ok(FleetFull::default()),
        Some("all") => Ok(FleetFull::All),
        Some(n) => match n.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(FleetFull::First(n)),
            _ => bail!("--fleet-full {n:?}: give a number of hosts (1 or more) or `all`"),
        },
    }
}

impl RunConfig {
    pub fn from_args(a: RunArgs) -> Result<RunConfig> {
        let fleet = a.destinations.len() > 1 || a.hosts.is_some();
        let first = a.destinations.first().map(String::as_str);
        let ssh_args = destination_ssh_args(first.or(fleet.then_some("")), &a.ssh)?;
        if a.jobs == Some(0) {
            bail!("--jobs must be at least 1");
        }
        if a.jobs.is_some() && !fleet {
            bail!("--jobs applies to a fleet run: give several destinations or --hosts FILE");
        }
        check_fleet_args(&a, fleet)?;
        // A fleet's views rank each host's suites as one client's.
        if fleet && a.clients.len() > 1 {
            bail!(
                "several --ssh clients are compared on one destination at a time; a fleet run \
                 takes one --ssh"
            );
        }
        Ok(RunConfig {
            options: run_options(&a)?,
            ssh_args,
            destination: first.map(str::to_string),
            destinations: if fleet {
                a.destinations.clone()
            } else {
                Vec::new()
            },
            hosts_file: a.hosts.clone(),
            jobs: a.jobs,
            fleet_name: a.fleet_name.clone(),
            fleet_lease_s: a.fleet_lease,
            fleet_full: fleet_full(a.fleet_full.as_deref())?,
            seed: a.seed,
            db: a.db.path,
            resume: a.resume,
            quiet: a.quiet,
            verbose: a.verbose,
            tables: a.tables,
            wide: a.wide,
            mock_transport: a.mock_transport,
            mock_pace: a.mock_pace.map(std::time::Duration::from_millis),
        })
    }
}

/// The sandbox placement a `--sandbox-cpus` / `--cpus` value asks for.
pub fn placement(arg: CpusArg) -> Placement {
    match arg {
        CpusArg::Split => Placement::Split,
        CpusArg::Shared => Placement::Shared,
    }
}

/// Parse a byte size: `1048576`, `512K`, `8M`, `1G` (binary units; `KiB`/`MB` spellings
/// accepted). At least 1 byte, at most 1 TiB.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => bail!("size {text:?}: unknown unit {unit:?}; use a number with K, M or G, e.g. 8M"),
    };
    let Ok(n) = num.parse::<u64>() else {
        bail!("size {text:?} is not a number with an optional K, M or G suffix, e.g. 8M");
    };
    let bytes = n.checked_mul(1 << shift).filter(|&b| b <= 1 << 40);
    match bytes {
        Some(0) => bail!("size {text:?} must be at least 1 byte"),
        Some(b) => Ok(b),
        None => bail!("size {text:?} is larger than 1T"),
    }
}

/// The delay lab's round trip: 1 ms to 10 s, in whole milliseconds.
pub fn parse_delay(text: &str) -> Result<u32> {
    let d = parse_duration(text)?;
    let ms = d.as_millis();
    if !(1..=10_000).contains(&ms) {
        bail!("--sandbox-delay {text:?} must be from 1ms to 10s");
    }
    Ok(ms as u32)
}

/// Parse a duration: `90` (seconds), `250ms`, `30s`, `10m`, `2h`.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let Ok(n) = num.parse::<f64>() else {
        bail!("duration {text:?} is not a number with an optional ms, s, m or h suffix, e.g. 10m");
    };
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        u => bail!("duration {text:?}: unknown unit {u:?}; use ms, s, m or h"),
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e7) {
        bail!("duration {text:?} must be positive");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse a precision: `2%` or `2` (percent), as a fraction (0.02).
pub fn parse_percent(text: &str) -> Result<f64> {
    let t = text.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => bail!("precision {text:?} must be a percentage between 0 and 100, e.g. 2%"),
    }
}

/// Parse a rate: `20mbit`, `512kbit`, `1gbit` (or a plain number of kbit/s).
pub fn parse_rate(text: &str) -> Result<u32> {
    let t = text.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("gbit") {
        (n, 1_000_000.0)
    } else if let Some(n) = t.strip_suffix("mbit") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix("kbit") {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v * mult >= 8.0 && v * mult <= 100e6 => Ok((v * mult) as u32),
        _ => bail!("rate {text:?} is not like 20mbit, 512kbit or 1gbit (8kbit to 100gbit)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8M").unwrap(), 8 << 20);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        for bad in ["", "0", "M", "8X", "-1", "1.5M", "2000G"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["", "0", "-1m", "10 parsecs", "m"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// The run configuration `argv` (a whole command line) makes, or why it makes none.
    fn run_config(argv: &[&str]) -> Result<RunConfig> {
        use crate::cli::{Cli, CommandArgs};
        use clap::Parser;
        let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        let CommandArgs::Run(a) = cli.command else {
            panic!("not run")
        };
        RunConfig::from_args(*a)
    }

    #[test]
    fn ssh_s_port_identity_and_jump_flags_become_their_options() {
        let args = |argv: &[&str]| run_config(argv).map(|c| c.ssh_args);
        let got = args(&["sshbench", "run", "nas", "-p", "2222", "-i", "/k/my key"]);
        let want = ["-o", "Port=2222", "-o", "IdentityFile=\"/k/my key\""];
        assert_eq!(got.unwrap(), want);
        // The shortcuts come before -o: ssh keeps the first value it is given, so -p wins
        // over -o Port, as in `ssh -p 2222 -o Port=22`.
        let got = args(&[
            "sshbench",
            "run",
            "nas",
            "-o",
            "Port=22",
            "-J",
            "me@hop:2200",
        ]);
        assert_eq!(
            got.unwrap(),
            ["-o", "ProxyJump=me@hop:2200", "-o", "Port=22"]
        );
        let err = |argv: &[&str]| args(argv).unwrap_err().to_string();
        assert!(err(&["sshbench", "run", "nas", "-p", "0"]).contains("-p"));
        assert!(err(&["sshbench", "run", "nas", "-i", "/k/a\"b"]).contains("quote"));
        assert!(err(&["sshbench", "run", "nas", "-J", "a b"]).contains("[user@]host"));
        let sandbox = err(&["sshbench", "run", "-p", "2222"]);
        assert!(
            sandbox.contains("the local sandbox has its own"),
            "{sandbox}"
        );
    }

    /// Too few --max-rounds names what it is below: the rounds given, or the race's
    /// first pass when none were (a user who gave no --rounds must not be told of one).
    #[test]
    fn max_rounds_below_the_first_rounds_says_which() {
        let error = |argv: &[&str]| match run_config(argv) {
            Ok(_) => panic!("{argv:?} accepted"),
            Err(e) => e.to_string(),
        };
        let raced = error(&["sshbench", "run", "--max-rounds", "2"]);
        assert!(
            raced.contains("below the race's first pass (3 rounds)"),
            "{raced}"
        );
        assert!(!raced.contains("--rounds ("), "{raced}");
        let fixed = error(&["sshbench", "run", "--rounds", "5", "--max-rounds", "4"]);
        assert_eq!(fixed, "--max-rounds (4) is below --rounds (5)");
        // Many rounds asked for without --max-rounds raise its default.
        let rounds = |argv: &[&str]| {
            let o = run_config(argv).unwrap().options;
            (o.rounds, o.max_rounds)
        };
        assert_eq!(rounds(&["sshbench", "run", "--rounds", "40"]), (40, 40));
        assert_eq!(rounds(&["sshbench", "run"]), (3, 20));
    }

    /// The placement is the sandbox's: the default splits, `shared` opts out, and a run
    /// against a real server records none.
    #[test]
    fn sandbox_placement_applies_to_the_sandbox_only() {
        use crate::cli::Cli;
        use clap::Parser;
        let placed = |argv: &[&str]| run_config(argv).unwrap().options.sandbox_cpus;
        assert_eq!(placed(&["sshbench", "run"]), Placement::Split);
        assert_eq!(
            placed(&["sshbench", "run", "--sandbox-cpus", "shared"]),
            Placement::Shared
        );
        assert_eq!(placed(&["sshbench", "run", "nas"]), Placement::Shared);
        assert!(
            Cli::try_parse_from(["sshbench", "run", "nas", "--sandbox-cpus", "split"]).is_err(),
            "--sandbox-cpus with a destination"
        );
    }

    /// `--streams` needs two or more and a transfer mode to take its best suite from.
    #[test]
    fn streams_need_two_and_a_transfer_mode() {
        let options = |argv: &[&str]| run_config(argv).map(|c| c.options);
        let four = options(&["sshbench", "run", "--streams", "4"]).unwrap();
        assert_eq!(four.streams, Some(4));
        assert_eq!(options(&["sshbench", "run"]).unwrap().streams, None);
        assert!(options(&["sshbench", "run", "--streams", "1"]).is_err());
        let e = options(&["sshbench", "run", "--streams", "2", "--mode", "connect"]).unwrap_err();
        assert!(e.to_string().contains("add send or receive"), "{e}");
    }

    /// By default send's measured part is longer than the other modes' and echo's typing
    /// shorter; a sample time given applies to every mode, and one below the floor is
    /// refused.
    #[test]
    fn send_and_echo_have_their_own_sample_times_unless_one_is_given() {
        let options = |argv: &[&str]| run_config(argv).map(|c| c.options);
        let default = options(&["sshbench", "run"]).unwrap();
        assert_eq!(default.sample_time_s(Mode::Send), 0.3);
        assert_eq!(default.sample_time_s(Mode::Echo), 0.1);
        for mode in [Mode::Receive, Mode::Connect] {
            assert_eq!(default.sample_time_s(mode), 0.2, "{mode}");
        }
        let given = options(&["sshbench", "run", "--sample-time", "250ms"]).unwrap();
        for mode in [Mode::Send, Mode::Receive, Mode::Echo] {
            assert_eq!(given.sample_time_s(mode), 0.25, "{mode}");
        }
        let low = options(&["sshbench", "run", "--sample-time", "5ms"]).unwrap_err();
        assert!(low.to_string().contains("at least 10ms"), "{low}");
    }

    #[test]
    fn percents() {
        assert_eq!(parse_percent("2%").unwrap(), 0.02);
        assert_eq!(parse_percent("5").unwrap(), 0.05);
        for bad in ["0", "100%", "x", "-2%"] {
            assert!(parse_percent(bad).is_err(), "{bad:?} accepted");
        }
    }
    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit").unwrap(), 20_000);
        assert_eq!(parse_rate("512kbit").unwrap(), 512);
        assert_eq!(parse_rate("1Gbit").unwrap(), 1_000_000);
        assert_eq!(parse_rate("1.5mbit").unwrap(), 1_500);
        for bad in ["", "fast", "0mbit", "1kbit", "-5mbit"] {
            assert!(parse_rate(bad).is_err(), "{bad:?}");
        }
    }
}
