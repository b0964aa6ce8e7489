//! The command line: clap definitions ([`args`]) and the owned, validated
//! configuration built from them ([`config`]).

pub mod args;
pub mod config;
pub mod reports;
pub mod workload;

pub use args::{
    AlgosArgs, AlgosFormat, AllowArg, Cli, CommandArgs, CompareArgs, CompletionsArgs,
    ConnectionsArg, CpusArg, DbArg, DbArgs, DbCommand, FormatArg, ModeArg, OrderArg, PayloadArg,
    RecommendArgs, ReportArgs, RunArgs, RunsArgs, SandboxArgs, SelectionArgs, ShowArgs, SortArg,
    SshArgs, SummaryArgs, ViewArgs, WorkloadArgs,
};
