//! The binary's commands: each wires the library's stages into one pipeline, with
//! progress on stderr and results on stdout.

mod commands;
mod progress;
mod reports;
mod run;
mod server;
mod streams;

pub use commands::{algos, completions, man, runs, sandbox};
pub use reports::{compare, recommend, report, show, summary};
pub use run::run;

use anyhow::{Result, anyhow};
use serde::Serialize;
use sshbench::cli::FormatArg;
use sshbench::sandbox as sandbox_stage;
use sshbench::store;
use sshbench::views::export::{self, Document, Format, Style};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

fn find_ssh() -> Result<PathBuf> {
    sandbox_stage::find_on_path("ssh").ok_or_else(|| {
        anyhow!("no ssh client on PATH; install OpenSSH (Debian: apt-get install openssh-client)")
    })
}

fn db_path(given: &Option<PathBuf>) -> Result<PathBuf> {
    given.clone().map_or_else(store::default_path, Ok)
}

fn style() -> Style {
    let tty = std::io::stdout().is_terminal();
    Style {
        width: if tty {
            comfy_table::Table::new().width()
        } else {
            None
        },
        color: tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
    }
}

fn emit(doc: &Document, json: &impl Serialize, format: FormatArg) -> Result<u8> {
    let text = export::render(doc, json, format_of(format), style());
    // A closed pipe (e.g. `| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}
