//! sshbench: finds the fastest safe SSH settings for a given client and server.
//!
//! The crate is a library with a thin binary (`src/main.rs`). Data flows one way:
//! CLI args → [`config`] → [`target`] → [`offer`] → [`plan`] → [`runner`] (through a
//! [`measure::Transport`]) → [`views`]. Side effects (processes, sockets, files, the
//! terminal) live at the edges: [`sandbox`], [`measure::openssh`], [`offer::client`] and
//! the binary. The measuring core never prints.

pub mod affinity;
pub mod analysis;
pub mod cancel;
pub mod cli;
pub mod config;
pub mod filter;
pub mod lab;
pub mod machine;
pub mod measure;
pub mod offer;
pub mod plan;
pub mod proc;
pub mod remote;
pub mod runner;
pub mod sandbox;
pub mod store;
pub mod suite;
pub mod target;
pub mod views;
