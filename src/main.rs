//! The `sshbench` binary: parse arguments, run the command, print errors, exit.

use clap::Parser;
use sshbench::cli::{Cli, CommandArgs};
use std::io::Write;
use std::process::ExitCode;

mod app;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // No child may inherit the database's password: out of the environment before any
    // thread starts (the command line has read SSHBENCH_DB).
    sshbench::sys::secrets::take();
    let result = match cli.command {
        CommandArgs::Run(args) => app::run(*args),
        CommandArgs::Algos(args) => app::algos(args),
        CommandArgs::Runs(args) => app::runs(args),
        CommandArgs::Db(args) => app::db(args),
        CommandArgs::Fleet(args) => app::fleet(args),
        CommandArgs::Sandbox(args) => app::sandbox(args),
        CommandArgs::Show(args) => app::show(args),
        CommandArgs::Summary(args) => app::summary(args),
        CommandArgs::Recommend(args) => app::recommend(args),
        CommandArgs::Compare(args) => app::compare(args),
        CommandArgs::Report(args) => app::report(args),
        CommandArgs::Completions(args) => app::completions(args),
        CommandArgs::Man => app::man(),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed stderr must not turn an error into a panic.
            // It may quote a server or a stored row: through the sanitiser.
            let text = format!("{e:#}");
            let text = sshbench::views::safe::text(&text);
            let _ = writeln!(std::io::stderr().lock(), "sshbench: error: {text}");
            // A bad command line exits 2, as clap's own refusals do.
            match e.downcast_ref::<sshbench::cli::Usage>() {
                Some(_) => ExitCode::from(2),
                None => ExitCode::from(1),
            }
        }
    }
}
