//! One sample with its retries: transient failures are tried again, failures every
//! further sample would repeat stop the run.

use super::{Abort, Event, Runner};
use crate::model::{Failure, FailureKind, Mode, Outcome, Problem, Sample, SampleRequest};

/// Attempts for a transient failure before it is recorded.
pub const ATTEMPTS: u32 = 3;

/// Consecutive failed samples that stop the run.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 10;

fn is_transient(kind: FailureKind) -> bool {
    matches!(
        kind,
        FailureKind::Network
            | FailureKind::Timeout
            | FailureKind::Remote
            | FailureKind::Command
            | FailureKind::ByteCount
            | FailureKind::Other
    )
}

/// What has gone through so far, which tells a server's refusal from a passing failure.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Succeeded {
    /// Any sample.
    pub any: bool,
    /// A sample of a mode that runs sshbench's commands (connect's `exit 0`, or its sftp
    /// session, does not tell).
    pub commands: bool,
}

/// What the samples so far say of failing: whether anything (and a mode that runs
/// sshbench's commands) ever succeeded, and how many samples failed in a row.
#[derive(Default)]
pub(super) struct Streak {
    pub succeeded: Succeeded,
    failed_in_a_row: u32,
}

impl Streak {
    /// A sample of `mode` succeeded (a stored one taken in again on resume, too).
    pub fn succeeded_in(&mut self, mode: Mode) {
        self.succeeded.any = true;
        self.succeeded.commands |= mode.needs_commands();
    }

    /// A new sample ended as `outcome`: [`MAX_CONSECUTIVE_FAILURES`] failures in a row
    /// stop the run.
    pub fn after(&mut self, outcome: &Outcome) -> Result<(), Abort> {
        match outcome {
            Outcome::Failed { kind, problem } => {
                self.failed_in_a_row += 1;
                if self.failed_in_a_row >= MAX_CONSECUTIVE_FAILURES {
                    return Err(Abort::TooManyFailures(Failure {
                        kind: *kind,
                        problem: problem.clone(),
                    }));
                }
            }
            _ => self.failed_in_a_row = 0,
        }
        Ok(())
    }
}

/// After attempt number `attempt` of a sample: whether to try again, or the failure
/// that stops the run (a network failure only before anything succeeded; a login that
/// runs no commands before any of sshbench's commands did, at once while nothing else
/// went through either, else once it failed every attempt).
pub(super) fn verdict(
    sample: &Sample,
    attempt: u32,
    succeeded: Succeeded,
) -> (bool, Option<Failure>) {
    let Outcome::Failed { kind, problem } = &sample.outcome else {
        return (false, None);
    };
    let fatal = match kind {
        FailureKind::Auth | FailureKind::HostKey => true,
        // Before anything succeeded, every further sample would meet the same server.
        FailureKind::Network => !succeeded.any,
        FailureKind::Command => !succeeded.commands && (!succeeded.any || attempt >= ATTEMPTS),
        _ => false,
    };
    if fatal {
        let failure = Failure {
            kind: *kind,
            problem: problem.clone(),
        };
        (false, Some(failure))
    } else {
        (is_transient(*kind) && attempt < ATTEMPTS, None)
    }
}

impl Runner<'_> {
    /// A login that runs no commands still serves sftp: when the plan has modes that go
    /// without them (connect over sftp, the sftp workloads), a `command` failure gives up
    /// every mode that needs commands (this sample, stored as unavailable, says why) and
    /// the run goes on without them. Connect failing so (its sftp session too) is given
    /// up alone; with nothing left to measure the failure stops the run.
    pub(super) fn without_commands(
        &mut self,
        kind: FailureKind,
        sample: &Sample,
    ) -> Result<Option<Sample>, Abort> {
        if kind != FailureKind::Command {
            return Ok(None);
        }
        let failing = sample.mode;
        let others = (self.items.iter().zip(&self.state))
            .any(|(p, st)| !st.refused && !p.mode.needs_commands() && p.mode != failing);
        let known = self.gone.contains(&failing);
        if !(known || others) {
            return Ok(None);
        }
        let problem = (sample.outcome.problem().cloned()).unwrap_or(Problem::NoCommands);
        if !known {
            // The modes that need commands go at the first such failure.
            let first = !self.gone.iter().any(|m| m.needs_commands());
            self.give_up(|m| (first && m.needs_commands()) || m == failing, &problem)?;
        }
        let mut given_up = sample.clone();
        given_up.outcome = Outcome::Unavailable { problem };
        Ok(Some(given_up))
    }

    /// A resumed run that went on without commands goes on so: one of the modes that
    /// need them was unavailable and none of them succeeded, while a mode that goes
    /// without them (sftp, connect) did.
    pub(super) fn resume_without_commands(&mut self, previous: &[(usize, u32, Sample)]) {
        let of = |needs: bool, outcome: fn(&Outcome) -> bool| {
            (previous.iter()).any(|(slot, _, s)| {
                *slot < self.planned
                    && self.items[*slot].mode.needs_commands() == needs
                    && outcome(&s.outcome)
            })
        };
        let unavailable = |o: &Outcome| matches!(o, Outcome::Unavailable { .. });
        if of(true, unavailable) && !of(true, Outcome::is_success) && of(false, Outcome::is_success)
        {
            self.refuse_commands();
        }
    }

    /// Refuse every item that needs commands from now on.
    fn refuse_commands(&mut self) {
        for (p, st) in self.items.iter().zip(self.state.iter_mut()) {
            st.refused |= p.mode.needs_commands();
            if p.mode.needs_commands() && !self.gone.contains(&p.mode) {
                self.gone.push(p.mode);
            }
        }
    }

    /// Stop every mode `gone` names. Each such mode's first item stores why as its first
    /// counted sample, which is what reports read.
    fn give_up(&mut self, gone: impl Fn(Mode) -> bool, problem: &Problem) -> Result<(), Abort> {
        let mut modes: Vec<Mode> = Vec::new();
        for i in 0..self.items.len() {
            let mode = self.items[i].mode;
            if !gone(mode) {
                continue;
            }
            self.state[i].refused = true;
            if modes.contains(&mode) {
                continue;
            }
            modes.push(mode);
            self.gone.push(mode);
            if self.done.insert((self.slot(i), 1)) {
                let why = Outcome::Unavailable {
                    problem: problem.clone(),
                };
                let s = Sample::new(self.items[i].suite.clone(), mode, why);
                self.sink
                    .record(self.slot(i), 1, &s)
                    .map_err(Abort::Store)?;
            }
        }
        let live: Vec<Mode> = (self.items.iter().zip(&self.state))
            .filter(|(_, st)| !st.refused)
            .map(|(p, _)| p.mode)
            .collect();
        let mut rest: Vec<Mode> = Vec::new();
        for &m in &live {
            if !rest.contains(&m) {
                rest.push(m);
            }
        }
        (self.progress)(Event::GivenUp {
            modes: &modes,
            rest: &rest,
            problem,
        });
        // The sample that met the login is stored as well.
        self.tally
            .left(1 + live.len() * self.settings.rounds as usize);
        Ok(())
    }

    /// One sample with retries for transient failures.
    pub(super) fn attempt(
        &mut self,
        item: usize,
        round: u32,
        request: &SampleRequest,
    ) -> Result<Sample, Abort> {
        let mut attempt = 1;
        loop {
            (self.progress)(Event::Starting {
                round,
                done: self.tally.done,
                total: self.tally.total,
                request,
            });
            let sample = self.transport.measure(request, self.cancel);
            if self.cancel.is_cancelled() {
                return Err(Abort::Cancelled);
            }
            let (retry, fatal) = verdict(&sample, attempt, self.streak.succeeded);
            (self.progress)(Event::Finished {
                round,
                done: self.tally.done + 1,
                total: self.tally.total,
                sample: &sample,
                retrying: retry,
            });
            if let Some(failure) = fatal {
                if let Some(given_up) = self.without_commands(failure.kind, &sample)? {
                    return Ok(given_up);
                }
                // Recorded, so the database says why the run stopped.
                let _ = self.sink.record(self.slot(item), round, &sample);
                return Err(Abort::Fatal(failure));
            }
            if !retry {
                return Ok(sample);
            }
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{VecSink, plan, settings};
    use super::super::{End, run};
    use super::*;
    use crate::measure::Transport;
    use crate::measure::mock::Mock;
    use crate::model::{Connections, Suite};
    use crate::sys::cancel::Cancel;

    /// The mock on a login that allows sftp alone: everything else ends before it began;
    /// connect goes through its sftp session, unless `.0` (a login without sftp for it).
    struct SftpOnly(bool);
    impl Transport for SftpOnly {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = Mock::default().measure(req, cancel);
            if req.mode.needs_commands() || (self.0 && req.mode == Mode::Connect) {
                s.outcome = Outcome::failed(FailureKind::Command, Problem::NoCommands);
            }
            s
        }
    }

    /// Raw streams first, as the plan puts them, then the sftp workloads.
    const MODES: [Mode; 4] = [
        Mode::Send,
        Mode::Receive,
        Mode::SftpPutFile,
        Mode::SftpGetFile,
    ];

    /// Two ciphers in `modes`, raw streams first as the plan puts them.
    fn sftp_only_run(modes: &[Mode]) -> (Result<End, Abort>, VecSink) {
        resumed_sftp_only_run(modes, &[], &mut SftpOnly(false))
    }

    /// [`sftp_only_run`] that resumes from `previous`.
    fn resumed_sftp_only_run(
        modes: &[Mode],
        previous: &[(usize, u32, Sample)],
        transport: &mut SftpOnly,
    ) -> (Result<End, Abort>, VecSink) {
        let mut p = plan(&[]);
        for &mode in modes {
            for mut item in plan(&["a", "b"]).items {
                item.mode = mode;
                p.items.push(item);
            }
        }
        let mut sink = VecSink::default();
        let mut set = settings(2);
        set.connections = Connections::PerSuite;
        let end = run(
            &p,
            &set,
            transport,
            &Cancel::new(),
            &mut sink,
            previous,
            &mut |_| {},
        );
        (end, sink)
    }

    #[test]
    fn a_login_that_runs_no_commands_still_measures_its_sftp_workloads() {
        let (end, sink) = sftp_only_run(&MODES);
        assert_eq!(end.unwrap(), End::Complete);
        // The warm-up that met the login, then each mode's first item in round 1 (what
        // reports read) say why the raw streams were given up; nothing else was tried.
        let given_up: Vec<(usize, u32)> = (sink.0.iter())
            .filter(|(_, _, s)| s.mode.needs_commands())
            .map(|(i, r, s)| {
                let why = Outcome::Unavailable {
                    problem: Problem::NoCommands,
                };
                assert_eq!(s.outcome, why);
                (*i, *r)
            })
            .collect();
        assert_eq!(given_up, [(0, 1), (2, 1), (0, 0)], "{:?}", sink.0);
        // Each sftp item: its own warm-up (its lead gave up) and two counted rounds.
        let sftp: Vec<&Sample> = (sink.0.iter())
            .map(|(_, _, s)| s)
            .filter(|s| !s.mode.needs_commands())
            .collect();
        assert_eq!(sftp.len(), 4 * 3, "{:?}", sink.0);
        assert!(sftp.iter().all(|s| s.outcome.is_success()));
        // Without sftp to go on with, the same failure stops the run.
        let (end, sink) = sftp_only_run(&MODES[..2]);
        assert!(
            matches!(
                end,
                Err(Abort::Fatal(Failure {
                    kind: FailureKind::Command,
                    ..
                }))
            ),
            "{end:?}"
        );
        assert_eq!(sink.0.len(), 1);
    }

    #[test]
    fn a_resumed_run_goes_on_without_commands_as_it_did() {
        let (_, sink) = sftp_only_run(&MODES);
        // Interrupted after its first sftp sample.
        let first = (sink.0.iter()).position(|(_, _, s)| s.outcome.is_success());
        let previous = &sink.0[..=first.unwrap()];
        let (end, resumed) = resumed_sftp_only_run(&MODES, previous, &mut SftpOnly(false));
        assert_eq!(end.unwrap(), End::Complete);
        assert!(
            (resumed.0.iter()).all(|(_, _, s)| !s.mode.needs_commands()),
            "{:?}",
            resumed.0
        );
        assert_eq!(resumed.0.len(), 4 * 3 - 1);
    }

    /// Connect goes on over sftp beside the workloads; where its sftp session fails too,
    /// connect is given up alone, and with nothing else to go on the run stops.
    #[test]
    fn connect_goes_without_commands_unless_its_sftp_session_fails_too() {
        let modes = [Mode::Connect, Mode::Send, Mode::SftpPutFile];
        let outcomes = |sink: &VecSink, mode: Mode| -> Vec<(usize, u32, bool)> {
            (sink.0.iter())
                .filter(|(_, _, s)| s.mode == mode)
                .map(|(i, r, s)| (*i, *r, s.outcome.is_success()))
                .collect()
        };
        let (end, sink) = sftp_only_run(&modes);
        assert_eq!(end.unwrap(), End::Complete);
        // One warm-up for all connect suites, then two rounds of each.
        let connect = outcomes(&sink, Mode::Connect);
        assert_eq!(connect.len(), 1 + 2 * 2, "{:?}", sink.0);
        assert!(connect.iter().all(|c| c.2), "{connect:?}");
        // Send alone is given up: its first item's round 1 and the warm-up that met it.
        let send = outcomes(&sink, Mode::Send);
        assert_eq!(send.len(), 2, "{send:?}");
        assert_eq!(send[0], (2, 1, false));
        assert!(matches!(send[1], (2 | 3, 0, false)), "{send:?}");
        // A login whose connect fails over sftp too: connect's warm-up, then its round 1.
        let no_sftp = |modes: &[Mode]| resumed_sftp_only_run(modes, &[], &mut SftpOnly(true));
        let (end, sink) = no_sftp(&modes);
        assert_eq!(end.unwrap(), End::Complete);
        assert_eq!(
            outcomes(&sink, Mode::Connect),
            [(0, 1, false), (0, 0, false)]
        );
        assert_eq!(outcomes(&sink, Mode::SftpPutFile).len(), 2 * 3);
        // Send gave way to connect, whose failure then ends the run.
        let (end, sink) = no_sftp(&modes[..2]);
        assert!(matches!(end, Err(Abort::Fatal { .. })), "{end:?}");
        assert_eq!(sink.0.len(), 3, "{:?}", sink.0);
        assert_eq!(outcomes(&sink, Mode::Connect), [(0, 0, false)]);
    }

    fn failed(kind: FailureKind) -> Sample {
        Sample::new(
            Suite::default(),
            Mode::Send,
            Outcome::failed(kind, Problem::quote("x")),
        )
    }

    #[test]
    fn a_login_that_runs_no_commands_stops_the_run_until_something_succeeded() {
        let s = failed(FailureKind::Command);
        let failure = Failure {
            kind: FailureKind::Command,
            problem: Problem::quote("x"),
        };
        let fatal = (false, Some(failure));
        assert_eq!(verdict(&s, 1, Succeeded::default()), fatal);
        // Once sshbench's commands have run, one such ending is tried again.
        let ran = Succeeded {
            any: true,
            commands: true,
        };
        assert_eq!(verdict(&s, 1, ran), (true, None));
        assert_eq!(verdict(&s, ATTEMPTS, ran), (false, None));
        // Connect alone went through (over sftp, say): every attempt is made first.
        let connected = Succeeded {
            any: true,
            commands: false,
        };
        assert_eq!(verdict(&s, 1, connected), (true, None));
        assert_eq!(verdict(&s, ATTEMPTS, connected), fatal);
    }
}
