//! The binary's commands: each wires the library's stages into one pipeline, with
//! progress on stderr and results on stdout.

/// `eprintln!` that cannot panic: a closed stderr (its reader gone, as in `2>&1 | head`)
/// must not end a run whose samples are still being measured and stored.
/// What it prints goes through the sanitiser: it may quote a server or a stored row.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", sshbench::views::safe::text(&text));
    }};
}

mod commands;
mod fleet;
mod fleet_kinds;
mod fleet_reports;
mod fleet_worker;
mod outcome;
mod overlap;
mod progress;
mod reach;
mod reports;
mod resume;
mod run;
mod server;
mod streams;

pub use commands::{algos, completions, db, man, runs, sandbox};
pub use fleet_reports::fleet;
pub use reports::{compare, recommend, report, show, summary};
pub use run::run;

use anyhow::{Result, anyhow, bail};
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

/// The database `--db` (or `SSHBENCH_DB`) names, else the default file.
fn db_location(given: &Option<String>) -> Result<String> {
    match given {
        Some(db) if db.is_empty() => {
            bail!("--db is empty; give a file's path or a postgres:// URL")
        }
        Some(db) => Ok(db.clone()),
        None => Ok(store::default_path()?.display().to_string()),
    }
}

/// The store of a command that starts or resumes runs, with this user's sealing key:
/// new runs and fleets are sealed, and only sealed ones are resumed (`sys::seal`).
/// Without a key (no home directory to keep it in) runs go on unsealed, and say so.
fn sealed_store(db: &str) -> Result<store::Store> {
    let store = store::Store::connect(db)?;
    match sshbench::sys::seal::Sealer::of_user() {
        Ok(sealer) => Ok(store.sealed_with(sealer)),
        Err(e) => {
            say_err!("note: {e:#}; runs stored now cannot be resumed");
            Ok(store)
        }
    }
}

/// The store `db` names, which must hold results already (`what` says what to do
/// otherwise): a SQLite file is never created by a command that only reads.
fn open_existing(db: &Option<String>, what: &str) -> Result<store::Store> {
    let db = db_location(db)?;
    if !store::is_url(&db) && !std::path::Path::new(&db).exists() {
        bail!("no results yet: {db} does not exist; {what}");
    }
    store::Store::connect_to_read(&db)
}

/// Hosts files beyond any fleet (a stray binary file given by mistake).
const MAX_HOSTS_FILE: u64 = 16 << 20;

/// The text of a hosts file (`--hosts`), refusing one far too big to be one.
fn hosts_file_text(path: &std::path::Path) -> Result<String> {
    sshbench::sys::files::read_limited(path, MAX_HOSTS_FILE, "the hosts file")
}

/// How terminal tables are drawn: fitted to a terminal's width unless `wide`; whole
/// (every column, every name in full) when piped or `wide`.
fn style(wide: bool) -> Style {
    let tty = std::io::stdout().is_terminal();
    Style {
        width: if tty && !wide {
            comfy_table::Table::new().width()
        } else {
            None
        },
        color: tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// The width the run's answer is written for: the terminal's, at most the views' own
/// ([`sshbench::views::scope::WIDTH`]); that when piped or `wide`.
fn answer_width(wide: bool) -> usize {
    let most = sshbench::views::scope::WIDTH;
    style(wide).width.map_or(most, |w| usize::from(w).min(most))
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
    }
}

fn emit(doc: &Document, json: &impl Serialize, format: FormatArg, wide: bool) -> Result<u8> {
    let text = export::render(doc, json, format_of(format), style(wide));
    // A closed pipe (e.g. `| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}
