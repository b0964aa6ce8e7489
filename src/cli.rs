//! Command-line definitions (clap derive) and nothing else; [`crate::config`] turns them
//! into owned configuration before anything runs.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Find the fastest safe SSH settings for this client and a server.
///
/// sshbench measures the real `ssh` client against a real server: connect time per key
/// exchange and host key algorithm, and send/receive throughput per cipher and MAC with
/// the handshake excluded. With no destination it benchmarks this machine against a
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
  sshbench run nas --mode send --size 8M --ciphers aes128-ctr,aes128-gcm@openssh.com";

#[derive(Debug, Subcommand)]
pub enum CommandArgs {
    /// Measure every negotiable suite once in each mode and print a table.
    ///
    /// Suites are forced with `ssh -o Ciphers=... -o MACs=...` etc.; multiplexing and
    /// compression are off, and what ssh actually negotiated is checked for every sample.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// List every algorithm the client or the server knows, what is negotiable, and its
    /// security grade with a reason.
    ///
    /// The server's offer is read from its KEXINIT without logging in (or, behind a
    /// ProxyJump/ProxyCommand, from `ssh -vv` through your own path).
    #[command(after_help = ALGOS_EXAMPLES)]
    Algos(AlgosArgs),
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

#[derive(Debug, Args)]
pub struct AlgosArgs {
    /// [user@]host[:port] or an ssh_config alias; omit to probe the local sandbox sshd.
    pub destination: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: AlgosFormat,

    /// Seconds allowed for connecting and for reading the server's offer.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub timeout: u64,
}

/// Measurement modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Time to connect and run a trivial command (per key exchange × host key).
    Connect,
    /// Throughput client → server (per cipher × MAC).
    Send,
    /// Throughput server → client (per cipher × MAC).
    Receive,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// [user@]host[:port] or an ssh_config alias; omit to use the local sandbox sshd.
    ///
    /// Your ssh configuration (identities, ProxyJump, known_hosts) applies as usual;
    /// key-based authentication must already work, as with `ssh -o BatchMode=yes`.
    pub destination: Option<String>,

    /// Modes to measure, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "connect,send,receive"
    )]
    pub mode: Vec<ModeArg>,

    /// Bytes per send/receive sample: a number with an optional K, M or G suffix
    /// (binary units). Classic shell benchmark loops use 8M.
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub size: String,

    /// Only these key exchange algorithms (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub kex: Option<Vec<String>>,

    /// Only these host key algorithms (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub hostkeys: Option<Vec<String>>,

    /// Only these ciphers (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub ciphers: Option<Vec<String>>,

    /// Only these MACs (comma-separated names; AEAD ciphers ignore MACs).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub macs: Option<Vec<String>>,

    /// Give up on one sample after this many seconds.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub timeout: u64,

    /// Print nothing but the results.
    #[arg(short, long)]
    pub quiet: bool,

    /// Deterministic fake measurements instead of ssh (for testing sshbench itself).
    #[arg(long, hide = true)]
    pub mock_transport: bool,
}
