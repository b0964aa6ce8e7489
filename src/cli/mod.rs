//! The command line: clap definitions ([`args`]) and the owned, validated
//! configuration built from them ([`config`]).

pub mod args;
pub mod config;
pub mod reports;
pub mod workload;

pub use args::*;
