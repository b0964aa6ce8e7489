//! The command line: clap definitions ([`args`]) and the owned, validated
//! configuration built from them ([`config`]).

pub mod args;
pub mod config;

/// A command line that asks for something impossible (a bad value, options that do not
/// go together), found after parsing: the binary exits 2 for it, as for what clap
/// refuses.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct Usage(pub anyhow::Error);
pub mod reports;
pub mod workload;

pub use args::{
    AlgosArgs, AlgosFormat, AllowArg, Cli, CommandArgs, CompareArgs, CompletionsArgs,
    ConnectionsArg, CpusArg, DbArg, DbArgs, DbCommand, FleetArgs, FleetCommand, FormatArg, ModeArg,
    OrderArg, PayloadArg, RecommendArgs, ReportArgs, RunArgs, RunsArgs, SandboxArgs, SelectionArgs,
    ShowArgs, SortArg, SshArgs, SummaryArgs, ViewArgs, WorkloadArgs,
};
