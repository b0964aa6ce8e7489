//! sshbench: finds the fastest safe SSH settings for a given client and server.
//!
//! Stages, lowest first (`.layers`); each imports only the ones below it:
//! [`model`] (plain data) and [`sys`] (processes, signals, the machine), then
//! [`analysis`] (statistics), [`destination`] (where), [`offer`] (what is negotiable, and
//! how safe), [`plan`] (what to measure), [`measure`] (one sample) and [`sandbox`] (the
//! local sshd), [`runner`] (rounds of samples) and [`store`] (SQLite), [`views`]
//! (tables, JSON, HTML), and [`cli`]. The binary (`src/main.rs`, `src/app/`) wires them.

pub mod analysis;
pub mod cli;
pub mod destination;
pub mod measure;
pub mod model;
pub mod offer;
pub mod plan;
pub mod runner;
pub mod sandbox;
pub mod store;
pub mod sys;
pub mod views;
