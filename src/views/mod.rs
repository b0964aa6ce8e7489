//! Everything printed: each view builds one typed view model from a [`scope::Scope`],
//! and every format of it (table, Markdown, CSV, JSON, HTML) is rendered from that.

pub mod algos;
pub mod bars;
pub mod charts;
pub mod clients;
pub mod compare;
pub mod exec;
pub mod export;
pub mod fit;
pub mod fleet;
pub mod headline;
pub mod html;
pub mod notes;
pub mod plan;
pub mod problem;
pub mod recommend;
pub mod rekey;
pub mod runs;
pub mod safe;
pub mod scope;
pub mod show;
pub mod summary;
pub mod typing;
pub mod unforced;
pub mod verdicts;
pub mod workload;
pub mod x11;
