//! Short commands (`exec` mode): [`COMMANDS_PER_SAMPLE`] commands, `exit 0` and one that
//! prints [`COMMAND_OUTPUT`] bytes in turn, each timed spawn to exit, either each with a
//! connection of its own or each as a session of one control master that this sample
//! opens (its socket in a private directory) and closes before it returns.

use super::OpenSsh;
use crate::measure::master::Master;
use crate::measure::{remote, sshlog};
use crate::model::exec::{COMMAND_OUTPUT, COMMANDS_PER_SAMPLE, prints};
use crate::model::{Doing, ExecVia, FailureKind, Mode, Outcome, Problem, Sample, SampleRequest};
use crate::sys::cancel::Cancel;
use crate::sys::run::{self, Finished};
use std::process::Command;
use std::time::{Duration, Instant};

/// The `i`-th command of a sample.
fn command(i: u64) -> String {
    if prints(i) {
        remote::sh(&format!("head -c {COMMAND_OUTPUT} /dev/zero"))
    } else {
        remote::connect_command()
    }
}

/// A finished command's outcome: ssh's own failure, the command's, or output that is not
/// what it prints.
fn judged(f: &Finished, i: u64) -> Result<Duration, Outcome> {
    match f.killed_by_deadline {
        Some(true) => return Err(Outcome::failed(FailureKind::Timeout, Problem::Interrupted)),
        Some(false) => {
            return Err(Outcome::failed(
                FailureKind::Cancelled,
                Problem::Interrupted,
            ));
        }
        None => {}
    }
    if f.exit.code != Some(0) {
        let lines: Vec<String> = f.stderr.lines().map(str::to_string).collect();
        return Err(sshlog::classify(&lines).unwrap_or_else(|| {
            let said = remote::printable(&f.last_line());
            Outcome::failed(FailureKind::Remote, Problem::Said { said })
        }));
    }
    let want = if prints(i) { COMMAND_OUTPUT } else { 0 };
    if f.stdout.len() as u64 != want {
        let (want, got) = (format!("{want} bytes"), format!("{} bytes", f.stdout.len()));
        return Err(Outcome::failed(
            FailureKind::ByteCount,
            Problem::Unexpected { want, got },
        ));
    }
    Ok(f.wall)
}

impl OpenSsh {
    /// One exec sample: its commands' times in `echoes`, over a master its start in
    /// `phases`.
    pub(super) fn exec(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        let start = Instant::now();
        let mut sample = Sample::new(req.suite.clone(), Mode::Exec, Outcome::Success);
        let deadline = start + req.timeout;
        let ran = match req.suite.exec {
            Some(ExecVia::Master) => self.over_master(req, deadline, cancel, &mut sample),
            Some(ExecVia::Fresh) | None => {
                self.each_fresh(req, deadline, cancel, &mut sample.echoes)
            }
        };
        if let Err(outcome) = ran {
            sample.outcome = outcome;
        }
        sample.bytes = sample.echoes.len() as u64;
        sample.wall = start.elapsed();
        sample
    }

    /// Each command with a connection of its own, as `ssh host command` runs it.
    fn each_fresh(
        &self,
        req: &SampleRequest,
        deadline: Instant,
        cancel: &Cancel,
        times: &mut Vec<f64>,
    ) -> Result<(), Outcome> {
        for i in 0..COMMANDS_PER_SAMPLE {
            let mut cmd = Command::new(&self.ssh);
            cmd.args(super::options::session_options(req))
                .args(&self.target.ssh_options)
                .args(["--", &self.target.destination, &command(i)]);
            let left = deadline.saturating_duration_since(Instant::now());
            let f =
                run::run(cmd, left, cancel).map_err(|e| Outcome::local(Doing::RunningSsh, e))?;
            times.push(judged(&f, i)?.as_secs_f64());
        }
        Ok(())
    }

    /// Start a master, run each command as a session of it, close it: dropping it ends
    /// the connection and removes its socket's directory.
    fn over_master(
        &mut self,
        req: &SampleRequest,
        deadline: Instant,
        cancel: &Cancel,
        sample: &mut Sample,
    ) -> Result<(), Outcome> {
        let scratch = self.scratch()?.to_path_buf();
        let master = Master::start(&self.ssh, &self.target, req, &scratch, cancel)?;
        let (lines, times, up) = master.log();
        sample.phases = sshlog::phases(&lines, &times, up);
        sample.negotiated = master.negotiated().map(Box::new);
        for i in 0..COMMANDS_PER_SAMPLE {
            let left = deadline.saturating_duration_since(Instant::now());
            let f = master.run(&command(i), left, cancel);
            sample.echoes.push(judged(&f, i)?.as_secs_f64());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_alternate_between_none_and_some_output() {
        assert_eq!(command(0), "exit 0");
        assert!(
            command(1).contains("head -c 4096 /dev/zero"),
            "{}",
            command(1)
        );
    }
}
