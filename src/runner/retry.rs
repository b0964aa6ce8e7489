//! One sample with its retries: transient failures are tried again, failures every
//! further sample would repeat stop the run.

use super::{Abort, Event, Runner};
use crate::model::{FailureKind, Mode, Outcome, Sample, SampleRequest};

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

/// After attempt number `attempt` of a sample: whether to try again, or the failure
/// that stops the run (a network failure only before anything succeeded).
pub(super) fn verdict(
    sample: &Sample,
    attempt: u32,
    any_success: bool,
) -> (bool, Option<(FailureKind, String)>) {
    let Outcome::Failed { kind, message } = &sample.outcome else {
        return (false, None);
    };
    let fatal = match kind {
        FailureKind::Auth | FailureKind::HostKey => true,
        // Before anything succeeded, every further sample would meet the same server.
        FailureKind::Network | FailureKind::Command => !any_success,
        _ => false,
    };
    if fatal {
        (false, Some((*kind, message.clone())))
    } else {
        (is_transient(*kind) && attempt < ATTEMPTS, None)
    }
}

impl Runner<'_> {
    /// A login that runs no commands still serves sftp: when the plan has sftp
    /// workloads, a `command` failure gives up every mode that needs commands (this
    /// sample, stored as unavailable, says why) and the run goes on without them.
    pub(super) fn without_commands(
        &mut self,
        kind: FailureKind,
        sample: &Sample,
    ) -> Result<Option<Sample>, Abort> {
        if kind != FailureKind::Command {
            return Ok(None);
        }
        let others = (self.items.iter().zip(&self.state))
            .any(|(p, st)| !st.refused && !p.mode.needs_commands());
        if !(self.no_commands || others) {
            return Ok(None);
        }
        let message = (sample.outcome.message()).unwrap_or("this login does not run commands");
        if !self.no_commands {
            self.give_up_commands(message)?;
        }
        let mut given_up = sample.clone();
        given_up.outcome = Outcome::Unavailable {
            message: message.to_string(),
        };
        Ok(Some(given_up))
    }

    /// A resumed run that went on without commands goes on so: one of the modes that
    /// need them was unavailable and none of them succeeded, while sftp did.
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
        self.no_commands = true;
        for (p, st) in self.items.iter().zip(self.state.iter_mut()) {
            st.refused |= p.mode.needs_commands();
        }
    }

    /// Stop every mode that needs commands. Each such mode's first item stores why as
    /// its first counted sample, which is what reports read.
    fn give_up_commands(&mut self, message: &str) -> Result<(), Abort> {
        self.refuse_commands();
        let mut modes: Vec<Mode> = Vec::new();
        for i in 0..self.items.len() {
            let mode = self.items[i].mode;
            if !mode.needs_commands() {
                continue;
            }
            if modes.contains(&mode) {
                continue;
            }
            modes.push(mode);
            if self.done.insert((self.slot(i), 1)) {
                let why = Outcome::Unavailable {
                    message: message.to_string(),
                };
                let s = Sample::new(self.items[i].suite.clone(), mode, why);
                self.sink
                    .record(self.slot(i), 1, &s)
                    .map_err(Abort::Store)?;
            }
        }
        (self.progress)(Event::GivenUp {
            modes: &modes,
            message,
        });
        let live = (self.items.iter().zip(&self.state))
            .filter(|(p, st)| !st.refused && !p.mode.needs_commands())
            .count();
        // The sample that met the login is stored as well.
        self.total = self.done_count + 1 + live * self.settings.rounds as usize;
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
                done: self.done_count,
                total: self.total,
                request,
            });
            let sample = self.transport.measure(request, self.cancel);
            if self.cancel.is_cancelled() {
                return Err(Abort::Cancelled);
            }
            let (retry, fatal) = verdict(&sample, attempt, self.any_success);
            (self.progress)(Event::Finished {
                round,
                done: self.done_count + 1,
                total: self.total,
                sample: &sample,
                retrying: retry,
            });
            if let Some((kind, message)) = fatal {
                if let Some(given_up) = self.without_commands(kind, &sample)? {
                    return Ok(given_up);
                }
                // Recorded, so the database says why the run stopped.
                let _ = self.sink.record(self.slot(item), round, &sample);
                return Err(Abort::Fatal { kind, message });
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

    /// The mock on a login that allows sftp alone: everything else ends before it began.
    struct SftpOnly;
    impl Transport for SftpOnly {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = Mock::default().measure(req, cancel);
            if req.mode.needs_commands() {
                s.outcome =
                    Outcome::failed(FailureKind::Command, "this login does not run commands");
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
        resumed_sftp_only_run(modes, &[])
    }

    /// [`sftp_only_run`] that resumes from `previous`.
    fn resumed_sftp_only_run(
        modes: &[Mode],
        previous: &[(usize, u32, Sample)],
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
            &mut SftpOnly,
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
                    message: "this login does not run commands".into(),
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
                Err(Abort::Fatal {
                    kind: FailureKind::Command,
                    ..
                })
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
        let (end, resumed) = resumed_sftp_only_run(&MODES, previous);
        assert_eq!(end.unwrap(), End::Complete);
        assert!(
            (resumed.0.iter()).all(|(_, _, s)| !s.mode.needs_commands()),
            "{:?}",
            resumed.0
        );
        assert_eq!(resumed.0.len(), 4 * 3 - 1);
    }

    fn failed(kind: FailureKind) -> Sample {
        Sample::new(Suite::default(), Mode::Send, Outcome::failed(kind, "x"))
    }

    #[test]
    fn a_login_that_runs_no_commands_stops_the_run_until_something_succeeded() {
        let s = failed(FailureKind::Command);
        assert_eq!(
            verdict(&s, 1, false),
            (false, Some((FailureKind::Command, "x".into())))
        );
        // Once samples have gone through, one such ending is tried again.
        assert_eq!(verdict(&s, 1, true), (true, None));
        assert_eq!(verdict(&s, ATTEMPTS, true), (false, None));
    }
}
