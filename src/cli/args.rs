//! Command-line definitions (clap derive) and nothing else; [`super::config`] turns them
//! into owned configuration before anything runs.

use super::reports::GoalArg;
use crate::model::Mode;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Find the fastest safe SSH settings for this client and a server.
///
/// sshbench measures the real `ssh` client against a real server: connect time per key
/// exchange and host key algorithm, and send/receive throughput per cipher and MAC with
/// the handshake excluded and the stalls of the rekeys a long transfer meets included.
/// With no destination it benchmarks this machine against a
/// throwaway local sshd on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "sshbench", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: CommandArgs,
}

const RUN_EXAMPLES: &str = "Examples:
  sshbench run                       # this machine, against a private local sshd
  sshbench run pi@nas.local          # a real server (key-based login must already work)
  sshbench run nas --mode send --size 8M --ciphers aes128-ctr,aes128-gcm@openssh.com
  sshbench run nas --ciphers=-3des-cbc --precision 2% --budget 30m
  sshbench run --resume              # finish the newest interrupted run (or fleet run)
  sshbench run --hosts fleet.txt --jobs 2 --mode connect,send

Exit status: 0 when every host was measured; 1 on an error that stopped the run; 2 on
a usage error; 3 when a fleet run finished but a host failed (down, login refused, no
common algorithms); 128 + N when stopped by signal N (130 for Ctrl-C).";

#[derive(Debug, Subcommand)]
pub enum CommandArgs {
    /// Measure every negotiable suite in interleaved rounds, race the contenders, store
    /// every sample, and print the answer.
    ///
    /// Suites are forced with `ssh -o Ciphers=... -o MACs=...` etc.; compression is off
    /// (unless --compression), your own connection sharing is never used (a suite's
    /// transfers share a connection sshbench opens for them: --connections), and what
    /// ssh actually negotiated is checked for every sample. Uncounted warm-up samples
    /// come first: one per cipher (its first suite's send, which sizes the first counted
    /// transfers of every MAC and mode of that cipher) and one for all connect suites.
    /// Then a first pass of one sample per suite, mode and round, and a race among the
    /// suites still tied with their mode's best (--rounds). It ends with, per mode, the
    /// best suite, what ties with it, the verdict and an ssh_config block (--tables: every
    /// suite's tables).
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// List every algorithm the client or the server knows, what is negotiable, and its
    /// security grade with a reason.
    ///
    /// The server's offer is read from its KEXINIT without logging in (or, behind a
    /// ProxyJump/ProxyCommand, from `ssh -vv` through your own path).
    #[command(after_help = ALGOS_EXAMPLES)]
    Algos(AlgosArgs),
    /// List stored runs, or delete one.
    Runs(RunsArgs),
    /// Show stored results: the classic table (Destination, Mode, MAC, Cipher, KEX,
    /// Time) with throughput, 95% interval, samples, CPU, grade and ties with the best.
    #[command(after_help = SHOW_EXAMPLES)]
    Show(ShowArgs),
    /// Summarize stored results: top suites, the fastest cipher, MAC, key exchange and
    /// host key (each algorithm's effect over its suites), top suites per cipher, the
    /// spread, and warnings.
    Summary(SummaryArgs),
    /// Print an ssh_config block (and sshd_config lines) with the measured algorithms,
    /// the best grade first and the fastest first within a grade, among acceptable
    /// grades only.
    Recommend(RecommendArgs),
    /// Write a self-contained HTML report with charts (no network fetches), and
    /// optionally the charts as PNG files.
    Report(ReportArgs),
    /// Compare two destinations (or two runs) suite by suite: ratio and significance.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Work on stored results as a whole: `db copy` moves runs between databases.
    Db(DbArgs),
    /// Fleets shared by workers: `fleet status [NAME]` says where one stands.
    Fleet(FleetArgs),
    /// Start the local sandbox sshd and keep it running until Ctrl-C (or SIGTERM).
    ///
    /// Prints the path of its private ssh_config on the first line of stdout, so that
    /// scripts can use it: `ssh -F <that file> sshbench-sandbox`.
    Sandbox(SandboxArgs),
    /// Print a shell completion script: `sshbench completions bash > ~/.local/share/bash-completion/completions/sshbench`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `sshbench man | man -l -`.
    Man,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

const SHOW_EXAMPLES: &str = "Examples:
  sshbench show                      # the newest destination, top 10 per mode
  sshbench show pi@nas --mode send --top all
  sshbench show --worst --top 5      # the slowest
  sshbench show --run 3 --format csv > run3.csv";

const COMPARE_EXAMPLES: &str = "Examples:
  sshbench compare pi@nas pi@nas2    # two servers, all their runs
  sshbench compare run:3 run:7       # two runs (e.g. before and after a change)";

/// Output formats of the report commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Table,
    Markdown,
    Csv,
    Json,
}

/// Which stored results a report covers.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// The destination as given to `run` (`sandbox` for the local sandbox); default:
    /// the newest run's. Results of all its runs are combined. A sandbox run in another
    /// setup is a destination of its own, named as `sshbench runs` lists it, e.g.
    /// `"sandbox (shared CPUs)"` or `"sandbox (sshd limited to 0.25 cores)"`.
    pub destination: Option<String>,

    /// Only this run (see `sshbench runs`).
    #[arg(long, value_name = "ID")]
    pub run: Option<i64>,

    /// Only runs started on or after this UTC date or time (2026-11-30, 2026-11-30T14:00).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Fleet view: every stored destination matching GLOB (`web*`, `*.lan`; default:
    /// every destination but the local sandbox), each host taken against its own best.
    #[arg(long, value_name = "GLOB", num_args = 0..=1, default_missing_value = "*", conflicts_with_all = ["destination", "run"])]
    pub fleet: Option<String>,

    /// Fleet view of the destinations of FILE (as `run --hosts` takes it).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["destination", "run"])]
    pub hosts: Option<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,
}

/// Where results are kept: the same flag for every command that reads or writes them.
#[derive(Debug, Args)]
pub struct DbArg {
    /// The results database: a SQLite file, or a shared PostgreSQL database as
    /// postgres://user@host/dbname [default: ~/.local/share/sshbench/sshbench.sqlite].
    /// PostgreSQL is reached over TLS where it offers it, and
    /// `?sslmode=verify-full&sslrootcert=CA.pem` also checks that it is the server named;
    /// a URL without a password takes it from PGPASSWORD or ~/.pgpass, as libpq does.
    #[arg(
        long = "db",
        value_name = "PATH|URL",
        env = "SSHBENCH_DB",
        hide_env_values = true
    )]
    pub path: Option<String>,
}

/// Which stored results, and in what format.
#[derive(Debug, Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Output format (JSON carries raw figures, units and run ids).
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,

    /// Terminal tables with every column and full algorithm names, lines as long as
    /// they come (piped output always has them).
    #[arg(long)]
    pub wide: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Best figure first.
    Fastest,
    /// Least client CPU first.
    Cpu,
    /// By algorithm names.
    Name,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub view: ViewArgs,

    /// Modes to show, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "connect,send,receive,echo,typing,exec,x11"
    )]
    pub mode: Vec<ModeArg>,

    /// Rows per mode: a number or `all`.
    #[arg(long, default_value = "10", value_name = "N|all")]
    pub top: String,

    /// Row order.
    #[arg(long, value_enum, default_value = "fastest")]
    pub sort: SortArg,

    /// Reverse the order: the slowest first.
    #[arg(long)]
    pub worst: bool,

    /// Horizontal bars with interval marks instead of tables.
    #[arg(long)]
    pub chart: bool,

    /// Draw --chart with ASCII only (default: Unicode blocks when the locale is UTF-8).
    #[arg(long, requires = "chart")]
    pub ascii: bool,

    /// The plain ranking by figure, every grade and sums mixed (default: the suites of
    /// a recommended or acceptable grade measured as such first).
    #[arg(long)]
    pub all_grades: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Where to write the page.
    #[arg(
        short,
        long,
        default_value = "sshbench-report.html",
        value_name = "FILE"
    )]
    pub output: PathBuf,

    /// Also write each chart as a PNG into this directory.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    #[command(flatten)]
    pub view: ViewArgs,

    /// Suites in each top list.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,

    /// Top lists of every suite, legacy, broken and sums included (default: only suites
    /// of a recommended or acceptable grade measured as such).
    #[arg(long)]
    pub all_grades: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AllowArg {
    /// Also list legacy algorithms (SHA-1 MACs and key exchange, CBC ciphers, ssh-rsa).
    Legacy,
    /// Also list broken ones (3des-cbc, arcfour, hmac-md5, ...). Never on an untrusted network.
    Broken,
}

#[derive(Debug, Args)]
pub struct RecommendArgs {
    #[command(flatten)]
    pub view: ViewArgs,

    /// What to optimize.
    #[arg(long = "for", value_enum, default_value = "balanced")]
    pub goal: GoalArg,

    /// Widen the grades that may be listed.
    #[arg(long, value_enum)]
    pub allow: Option<AllowArg>,

    /// How each list is ordered: `grade` puts the best grade first (a post-quantum key
    /// exchange before a faster classical one) and the fastest first within a grade;
    /// `speed` puts the fastest first across the allowed grades.
    #[arg(long, value_enum, default_value = "grade")]
    pub order: OrderArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    Grade,
    Speed,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A destination as given to `run` (`sandbox` for the local sandbox; another setup
    /// of it as `sshbench runs` lists it, e.g. `"sandbox (shared CPUs)"`) or `run:ID`.
    pub a: String,
    /// The other side, in the same form.
    pub b: String,

    #[command(flatten)]
    pub db: DbArg,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,

    /// Terminal tables with every column and full algorithm names, lines as long as
    /// they come (piped output always has them).
    #[arg(long)]
    pub wide: bool,
}

const ALGOS_EXAMPLES: &str = "Examples:
  sshbench algos                     # this client against the local sandbox sshd
  sshbench algos router.lan:2222     # what a Dropbear router accepts
  sshbench algos nas --format json";

/// Output formats of `algos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AlgosFormat {
    Table,
    Json,
}

/// ssh's own options for a destination, passed to every ssh sshbench runs for it.
#[derive(Debug, Default, Args)]
pub struct SshArgs {
    /// Read this ssh config file instead of ~/.ssh/config (as `ssh -F`).
    #[arg(short = 'F', value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// An ssh option for this run, `Option=value` (as `ssh -o`; repeatable), e.g.
    /// `-o Port=2222`, `-o ProxyJump=bastion`, `-o IdentityFile=~/.ssh/nas`. Options
    /// that sshbench sets per sample (Ciphers, MACs, KexAlgorithms, HostKeyAlgorithms,
    /// Compression, ControlMaster, BatchMode) are refused with the sshbench option to
    /// use instead, and host key checking cannot be turned off.
    #[arg(short = 'o', value_name = "OPTION=VALUE")]
    pub options: Vec<String>,

    /// Port to connect to (as `ssh -p`, passed as `-o Port=PORT`); a destination's own
    /// `host:port` wins over it.
    #[arg(short = 'p', value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub port: Option<u16>,

    /// An identity (private key) file (as `ssh -i`, passed as `-o IdentityFile=FILE`;
    /// repeatable).
    #[arg(short = 'i', value_name = "FILE")]
    pub identity: Vec<std::path::PathBuf>,

    /// Connect through this jump host (as `ssh -J`, passed as `-o ProxyJump=...`).
    #[arg(short = 'J', value_name = "DESTINATION")]
    pub jump: Option<String>,
}

#[derive(Debug, Args)]
pub struct AlgosArgs {
    /// [user@]host[:port] or an ssh_config alias; omit to probe the local sandbox sshd.
    pub destination: Option<String>,

    #[command(flatten)]
    pub ssh: SshArgs,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: AlgosFormat,

    /// Terminal tables with every column and full algorithm names, lines as long as
    /// they come (piped output always has them).
    #[arg(long)]
    pub wide: bool,

    /// Seconds allowed for connecting and for reading the server's offer (1 to 86400).
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// The OpenSSH-compatible client whose lists to show (default: `ssh` on PATH): a
    /// program on PATH or a path.
    #[arg(long = "ssh", value_name = "PROGRAM", value_hint = clap::ValueHint::ExecutablePath)]
    pub client: Option<PathBuf>,

    /// Without a destination: the OpenSSH server for the sandbox (default: the `sshd` found on PATH or in the
    /// usual places), e.g. a newer OpenSSH unpacked beside the system's; its helpers
    /// (`sshd-session`, `sshd-auth`) are taken from beside it.
    #[arg(long, value_name = "PROGRAM", value_hint = clap::ValueHint::ExecutablePath)]
    pub sshd: Option<PathBuf>,
}

/// Payload kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PayloadArg {
    Random,
    Text,
    Zeros,
}

/// How samples get their connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConnectionsArg {
    /// One connection per suite and round; its send, receive and echo samples are
    /// sessions over it (an OpenSSH control master)
    Suite,
    /// A fresh connection for every sample
    Sample,
}

/// How the local sandbox's client and server share the CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CpusArg {
    /// sshd on the upper half of the CPUs, the client on the lower half (Linux, 2+ CPUs)
    Split,
    /// Let the scheduler place both anywhere
    Shared,
}

/// Measurement modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Time to connect and run a trivial command (per key exchange × host key); on a
    /// login that allows sftp alone, to open and close an sftp session.
    Connect,
    /// Sustained throughput client → server, rekeys included (per cipher × MAC).
    Send,
    /// Sustained throughput server → client, rekeys included (per cipher × MAC).
    Receive,
    /// Interactive latency: round trip of single keystrokes through an open session,
    /// p50/p90/p99 (per cipher × MAC).
    Echo,
    /// Typing in a terminal (ssh -tt): bursts of keys and pauses as a person types,
    /// each key's echo by its place, with ObscureKeystrokeTiming on and off where the
    /// client has it (OpenSSH 9.5+), and what it costs on the wire.
    Typing,
    /// Short commands (exit 0, and one with output), each on a fresh connection and each
    /// over one ControlMaster connection sshbench opens and closes: time per command.
    Exec,
    /// X11 forwarded (untrusted) to a private Xvfb display here: xdpyinfo run five times
    /// and one xwd of the display, with compression and the keystroke clock on and off.
    X11,
    /// Upload with the real sftp client (what scp does since OpenSSH 9.0): one large
    /// file and a tree of small files (sftp-put-file, sftp-put-tree for one of them).
    SftpPut,
    /// Download with sftp, both shapes.
    SftpGet,
    /// Upload with rsync -e ssh (rsync on both ends), both shapes.
    RsyncPut,
    /// Download with rsync -e ssh, both shapes.
    RsyncGet,
    /// Upload with scp's classic protocol (`scp -O`: what a server without SFTP, such
    /// as Dropbear, is reached with), both shapes.
    ScpPut,
    /// Download with `scp -O`, both shapes.
    ScpGet,
    #[value(hide = true)]
    SftpPutFile,
    #[value(hide = true)]
    SftpPutTree,
    #[value(hide = true)]
    SftpGetFile,
    #[value(hide = true)]
    SftpGetTree,
    #[value(hide = true)]
    RsyncPutFile,
    #[value(hide = true)]
    RsyncPutTree,
    #[value(hide = true)]
    RsyncGetFile,
    #[value(hide = true)]
    RsyncGetTree,
    #[value(hide = true)]
    ScpPutFile,
    #[value(hide = true)]
    ScpPutTree,
    #[value(hide = true)]
    ScpGetFile,
    #[value(hide = true)]
    ScpGetTree,
}

impl ModeArg {
    /// The modes this argument names: a workload without a shape is both.
    pub fn modes(self) -> &'static [Mode] {
        match self {
            ModeArg::Connect => &[Mode::Connect],
            ModeArg::Send => &[Mode::Send],
            ModeArg::Receive => &[Mode::Receive],
            ModeArg::Echo => &[Mode::Echo],
            ModeArg::Typing => &[Mode::Typing],
            ModeArg::Exec => &[Mode::Exec],
            ModeArg::X11 => &[Mode::X11],
            ModeArg::SftpPut => &[Mode::SftpPutFile, Mode::SftpPutTree],
            ModeArg::SftpGet => &[Mode::SftpGetFile, Mode::SftpGetTree],
            ModeArg::RsyncPut => &[Mode::RsyncPutFile, Mode::RsyncPutTree],
            ModeArg::RsyncGet => &[Mode::RsyncGetFile, Mode::RsyncGetTree],
            ModeArg::ScpPut => &[Mode::ScpPutFile, Mode::ScpPutTree],
            ModeArg::ScpGet => &[Mode::ScpGetFile, Mode::ScpGetTree],
            ModeArg::SftpPutFile => &[Mode::SftpPutFile],
            ModeArg::SftpPutTree => &[Mode::SftpPutTree],
            ModeArg::SftpGetFile => &[Mode::SftpGetFile],
            ModeArg::SftpGetTree => &[Mode::SftpGetTree],
            ModeArg::RsyncPutFile => &[Mode::RsyncPutFile],
            ModeArg::RsyncPutTree => &[Mode::RsyncPutTree],
            ModeArg::RsyncGetFile => &[Mode::RsyncGetFile],
            ModeArg::RsyncGetTree => &[Mode::RsyncGetTree],
            ModeArg::ScpPutFile => &[Mode::ScpPutFile],
            ModeArg::ScpPutTree => &[Mode::ScpPutTree],
            ModeArg::ScpGetFile => &[Mode::ScpGetFile],
            ModeArg::ScpGetTree => &[Mode::ScpGetTree],
        }
    }
}

/// What the workload modes move and which tool options they compare.
#[derive(Debug, Args)]
#[command(next_help_heading = "Workloads (--mode sftp-put, rsync-get, ...)")]
pub struct WorkloadArgs {
    /// The one large file's size.
    #[arg(long, default_value = "32M", value_name = "SIZE")]
    pub file_size: String,

    /// The tree of small files: COUNTxSIZE, spread over directories of 100.
    #[arg(long, default_value = "2000x16K", value_name = "COUNTxSIZE")]
    pub tree: String,

    /// Also measure sftp with these options, beside its defaults (repeatable): `-R N`
    /// requests in flight (default 64), `-B BYTES` per request (default 32768).
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub sftp_options: Vec<String>,

    /// Also measure rsync with these options, beside its defaults (repeatable):
    /// --whole-file, --no-whole-file, --inplace, --block-size=N.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub rsync_options: Vec<String>,

    /// The server's directory the workloads write in (absolute, or relative to the
    /// login's home): each sample makes a private directory there and removes it.
    /// Default: $TMPDIR or /tmp, which may be memory (tmpfs); give the disk your backups
    /// go to, to measure what they meet. On a login that allows sftp alone: sftp's start
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub remote_dir: Option<String>,

    /// The ObscureKeystrokeTiming variants `--mode typing` measures, comma-separated:
    /// yes (the client's 20 ms clock), no, interval:N (N ms).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "yes,no"
    )]
    pub keystroke_timing: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// [user@]host[:port] or an ssh_config alias; omit to use the local sandbox sshd.
    ///
    /// Your ssh configuration (identities, ProxyJump, known_hosts) applies as usual;
    /// key-based authentication must already work, as with `ssh -o BatchMode=yes`.
    /// Several destinations (or --hosts) make a fleet run: each host is a run of its
    /// own, with the same options; a host that is down, refuses the login or shares no
    /// algorithm with the client is reported and skipped, and the others go on.
    #[arg(value_name = "DESTINATION")]
    pub destinations: Vec<String>,

    /// Fleet: also measure the destinations listed in FILE, one per line
    /// ([user@]host[:port] or an ssh_config alias; `#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,

    /// Fleet: measure this many hosts at once [default: half this machine's CPUs, at
    /// least 1]. Each host's samples stay one at a time; the client's CPUs are shared
    /// out so that no two hosts' ssh processes (and the threads feeding them) ever share
    /// a core, since a transfer timed on a shared core reads the neighbour's load. At
    /// most one host per CPU.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Fleet: share it under NAME in the database, between worker processes on this or
    /// other client machines (PostgreSQL; SQLite on one machine). The first creates it;
    /// each joins with the same hosts, options and client, claims the next host no one
    /// measures, holds a lease on it while it measures, and takes over a host whose
    /// worker died (resuming its stored run). `sshbench fleet status NAME` shows it.
    #[arg(long = "fleet", value_name = "NAME")]
    pub fleet_name: Option<String>,

    /// Fleet: how many hosts of each kind (the same server software, offer and CPU) are
    /// measured with the whole design, N or `all` [default: 3]. Every later host of the
    /// kind measures only the suites that can still win there (those tied with the best
    /// on a full host, ssh's unforced pick, the best of each cipher and key exchange
    /// family), and is measured in full when its figures disagree with its kind's.
    #[arg(long, value_name = "N|all")]
    pub fleet_full: Option<String>,

    /// Fleet: how long a worker's claim on a host lasts without renewal, in seconds,
    /// 5-3600 [default: 60]: a dead worker's host is taken over after this long. Set
    /// when the fleet is created; its workers use the fleet's.
    #[arg(long, value_name = "SECONDS")]
    pub fleet_lease: Option<u32>,

    #[command(flatten)]
    pub ssh: SshArgs,

    /// Modes to measure, comma-separated. The workloads (sftp-put, sftp-get, rsync-put,
    /// rsync-get, scp-put, scp-get; add -file or -tree for one shape) run the real tools
    /// and bring the raw stream they are compared with (send for uploads, receive for
    /// downloads). On a login that allows sftp alone, only connect and the sftp workloads
    /// can be measured.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "connect,send,receive,echo"
    )]
    pub mode: Vec<ModeArg>,

    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// Measure every suite in exactly N counted rounds (each suite once per round, in a
    /// shuffled order) instead of racing. By default a run races: after a first pass of
    /// 3 rounds, only the suites whose 95% interval still overlaps their mode's best
    /// (marked `≈ best`) get more rounds, in shuffled rounds of their own, until each
    /// is told apart from the best, equal to it within 5% (the 95% interval of the
    /// difference lies within ±5% of the best's figure: too small to choose by),
    /// --max-rounds, or the race's budget (per mode, 0.8 of the time its first pass took,
    /// and what modes with nothing left to race did not spend); the rest stop early
    /// (`show` says why each stopped: dropped, separated, equal, budget, rounds, or
    /// failed when each of at least two samples failed).
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Instead of racing, add rounds until every suite's 95% confidence interval is
    /// within this percentage of its mean (e.g. 2%), up to --max-rounds.
    #[arg(long, value_name = "PCT")]
    pub precision: Option<String>,

    /// Most rounds a race or --precision may use [default: 20, or --rounds when more].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,

    /// Start no sample after this much time (e.g. 10m, 1h); finished samples are kept
    /// and `--resume` goes on. It replaces the race's own budget (per mode, see
    /// --rounds): the contenders race on until they part, --max-rounds, or this time.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,

    /// Fix the bytes per send/receive sample (K, M, G suffixes, binary units; classic
    /// shell benchmarks use 8M; the first quarter is the unmeasured ramp). By default each
    /// suite's size is calibrated so that its measured part lasts --sample-time, after a
    /// ramp of at least 8 MiB (for send, also at least 0.2 s: a connection's first tenths
    /// of a second upload slower than what follows).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// How long the measured part of a calibrated transfer should last (after its ramp),
    /// and an echo session's typing. Default: 300ms for send (its noise lies within each
    /// sample, so a longer window tells more per second than more rounds), 100ms for echo
    /// (its noise lies between sessions), 200ms for the other modes; given, it applies to
    /// every mode.
    #[arg(long, value_name = "DURATION")]
    pub sample_time: Option<String>,

    /// Key exchange algorithms: `a,b` only these, `-pat` remove, `^a` first, `+a`
    /// append, `*`/`?` wildcards, `@FILE` one name per line.
    #[arg(long, value_name = "LIST")]
    pub kex: Option<String>,

    /// Host key algorithms (same syntax as --kex). On a real server connect varies them only
    /// when this is given, and measures only those whose key your known_hosts can check
    /// (the others are left out with a note; nothing new is accepted).
    #[arg(long, value_name = "LIST")]
    pub hostkeys: Option<String>,

    /// Ciphers (same syntax as --kex), e.g. `-3des-cbc,*-cbc` or `@ciphers.lst`.
    #[arg(long, value_name = "LIST")]
    pub ciphers: Option<String>,

    /// MACs (same syntax as --kex); AEAD ciphers ignore MACs.
    #[arg(long, value_name = "LIST")]
    pub macs: Option<String>,

    /// Also measure every send/receive suite with zlib compression (zlib@openssh.com).
    #[arg(long)]
    pub compression: bool,

    /// After the rounds, measure N connections at once with the best send and receive
    /// suite (3 batches each): their total against one stream's rate says whether
    /// parallel transfers (several rsyncs, `parallel-ssh`) would help. They do when one
    /// connection waits on its channel window or one core; they do not on a full link.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=i64::from(crate::runner::streams::MAX)), conflicts_with = "resume")]
    pub streams: Option<u32>,

    /// What the transferred data looks like: random (incompressible), text, or zeros
    /// (like /dev/zero in classic scripts). Matters only with --compression; reports
    /// show a compressed suite measured on text or zeros apart from random data.
    /// (Without compression a send over a shared connection reads zeros from a sparse
    /// file, so that sshbench never touches the bytes: a cipher's work is the same.)
    #[arg(long, value_enum, default_value = "random")]
    pub payload: PayloadArg,

    /// Lab: limit the local sandbox sshd (and its sessions) to this many cores, e.g. 0.25,
    /// to play a slow server (Linux, root; a cgroup CPU quota). Stored as a destination
    /// of its own, `sandbox (sshd limited to 0.25 cores)`, as is every lab setup.
    #[arg(long, value_name = "CORES", conflicts_with_all = ["destinations", "hosts"])]
    pub sandbox_cpu: Option<f64>,

    /// Lab: put the local sandbox sshd in a network namespace behind a link of this rate,
    /// e.g. 20mbit, to play a slow network (Linux, root; tc tbf).
    #[arg(long, value_name = "RATE", conflicts_with_all = ["destinations", "hosts"])]
    pub sandbox_rate: Option<String>,

    /// Lab: add this much round trip between the client and the local sandbox sshd, e.g.
    /// 50ms, to play a far link (a userspace relay on 127.0.0.1 that holds each byte for
    /// half of it in each direction; no root needed). Combines with --sandbox-rate and
    /// --sandbox-cpu.
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["destinations", "hosts"])]
    pub sandbox_delay: Option<String>,

    /// Where the local sandbox's two ends run: `split` keeps sshd on the upper half of the
    /// CPUs and the ssh client on the lower half, so that they never take turns on one
    /// core (as two machines would not); `shared` lets the scheduler place them (stored as
    /// the destination `sandbox (shared CPUs)`). A split needs Linux and two or more CPUs
    /// this process may use; without them the run says so and is stored as shared.
    #[arg(
        long,
        value_enum,
        default_value = "split",
        value_name = "HOW",
        conflicts_with_all = ["destinations", "hosts"]
    )]
    pub sandbox_cpus: CpusArg,

    /// The OpenSSH server the sandbox runs (default: the `sshd` found on PATH or in the
    /// usual places), e.g. a newer OpenSSH unpacked beside the system's; its helpers
    /// (`sshd-session`, `sshd-auth`) are taken from beside it. Its runs are a destination
    /// of their own (`local sandbox (sshd OpenSSH_10.0p2)`).
    #[arg(
        long,
        value_name = "PROGRAM",
        value_hint = clap::ValueHint::ExecutablePath,
        conflicts_with_all = ["destinations", "hosts"]
    )]
    pub sshd: Option<PathBuf>,

    /// The OpenSSH-compatible client to measure with (default: `ssh` on PATH): a
    /// program on PATH (`hpnssh`) or a path. Repeat it, or give a comma-separated list,
    /// to measure every suite through each client in the same rounds and rank the
    /// clients (`--ssh ssh,/opt/openssh-10/bin/ssh`). The workloads' scp and sftp are
    /// those beside each client.
    #[arg(long = "ssh", value_name = "PROGRAM", value_delimiter = ',', value_hint = clap::ValueHint::ExecutablePath)]
    pub clients: Vec<PathBuf>,

    /// Measure the whole cartesian product (key exchange × cipher × MAC in every mode,
    /// AEAD ciphers with every MAC, every key exchange with every host key), as classic
    /// benchmark scripts do. Slow.
    #[arg(long)]
    pub full: bool,

    /// Measure every pair: each key exchange with each host key, each cipher with each
    /// MAC. Without it, connect measures each key exchange beside one host key and each
    /// host key beside one key exchange, send/receive/echo each cipher beside one MAC and
    /// each MAC beside one cipher, and the other pairs are sums of their parts (a
    /// connection costs its key exchange plus its host key, a byte its cipher plus its
    /// MAC); the pairs the sums put first are then measured as pairs.
    #[arg(long)]
    pub pairs: bool,

    /// How samples get their connections: `suite` opens one per suite and round, and
    /// its send, receive and echo samples run as sessions over it, each with its own
    /// ramp (the handshake is paid once, not per sample); `sample` opens a fresh
    /// connection for every sample. Connect samples are fresh connections either way. A
    /// server that ends a connection after its first session (tinysshd) is found out
    /// and gets `sample`, with a note.
    #[arg(long, value_enum, default_value = "suite", value_name = "HOW")]
    pub connections: ConnectionsArg,

    /// Seed for the shuffled order (recorded with the run); random by default.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Give up on one sample after this many seconds (1 to 86400).
    #[arg(long, default_value_t = 120, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    #[command(flatten)]
    pub db: DbArg,

    /// Finish an interrupted run (the newest unfinished one, or run ID) with its own plan
    /// and options; finished samples are not repeated.
    #[arg(long, value_name = "ID", num_args = 0..=1, conflicts_with_all = ["destinations", "hosts", "jobs", "fleet_name", "fleet_lease", "fleet_full", "mode", "size", "kex", "hostkeys", "ciphers", "macs", "full", "pairs", "connections", "rounds", "seed", "compression"])]
    pub resume: Option<Option<i64>>,

    /// End with every suite's tables (as `sshbench show` prints them) instead of the
    /// short answer: per mode the best suite, what ties with it, the verdict, the gain
    /// over ssh's unforced choice, and the ssh_config block.
    #[arg(long)]
    pub tables: bool,

    /// Terminal tables with every column and full algorithm names, lines as long as
    /// they come (piped output always has them).
    #[arg(long)]
    pub wide: bool,

    /// Print nothing but the results.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print every sample as it is measured, with ssh's messages for failures.
    #[arg(short, long)]
    pub verbose: bool,

    /// Deterministic fake measurements instead of ssh (for testing sshbench itself).
    #[arg(long, hide = true)]
    pub mock_transport: bool,

    /// With --mock-transport: each sample takes this many milliseconds (for testing
    /// workers that share a fleet while they measure).
    #[arg(long, hide = true, value_name = "MS", requires = "mock_transport")]
    pub mock_pace: Option<u64>,
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Limit sshd and its sessions to this many cores (Linux, root).
    #[arg(long, value_name = "CORES")]
    pub cpu: Option<f64>,

    /// Put sshd in a network namespace behind a link of this rate, e.g. 20mbit (Linux, root).
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,

    /// Add this much round trip through a userspace relay, e.g. 50ms.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Pin sshd to the upper half of the CPUs (`split`, the default, as `sshbench run`
    /// does; clients then belong on the lower half, e.g. with `taskset -c`), or not
    /// (`shared`). Linux with two or more CPUs; elsewhere it says so and shares them.
    #[arg(long, value_enum, default_value = "split", value_name = "HOW")]
    pub cpus: CpusArg,

    /// The OpenSSH server for the sandbox (default: the `sshd` found on PATH or in the
    /// usual places), e.g. a newer OpenSSH unpacked beside the system's; its helpers
    /// (`sshd-session`, `sshd-auth`) are taken from beside it.
    #[arg(long, value_name = "PROGRAM", value_hint = clap::ValueHint::ExecutablePath)]
    pub sshd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Delete run ID and its samples.
    #[arg(long, value_name = "ID")]
    pub delete: Option<i64>,

    /// Terminal tables with every column and full algorithm names, lines as long as
    /// they come (piped output always has them).
    #[arg(long)]
    pub wide: bool,
}

#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Hosts done, measuring, failed and waiting; the workers, alive or not, and their
    /// leases; hosts taken over from a worker that died; an estimate of the time left.
    Status {
        /// The fleet's name (`run --fleet NAME`) or id [default: the newest fleet].
        fleet: Option<String>,
        #[command(flatten)]
        db: DbArg,
        /// Output format: table or json.
        #[arg(long, value_enum, default_value = "table")]
        format: FormatArg,
    },
}

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

const DB_COPY_EXAMPLES: &str = "Examples:
  sshbench db copy ~/.local/share/sshbench/sshbench.sqlite postgres://me@db.lan/sshbench
  sshbench db copy postgres://me@db.lan/sshbench team.sqlite --run 12 --run 13";

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy stored runs with all their samples from one database to another (SQLite
    /// files and postgres:// URLs, either way). Each run is copied in one transaction;
    /// runs the target holds already (same start, destination and seed) are skipped, so
    /// a copy can be repeated or resumed. Run ids are the target's own.
    #[command(after_help = DB_COPY_EXAMPLES)]
    Copy {
        /// The database to copy from: a SQLite file's path or a postgres:// URL.
        from: String,
        /// The database to copy into (created and migrated if needed).
        to: String,
        /// Copy only this run (its id in FROM); repeat for more. Default: every run.
        #[arg(long = "run", value_name = "ID")]
        runs: Vec<i64>,
    },
    /// Bring a database an older sshbench wrote up to this version's schema. Reports
    /// read a database as it is and never change it; `run` upgrades its own too.
    Upgrade {
        #[command(flatten)]
        db: DbArg,
    },
}
