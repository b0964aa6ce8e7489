//! One sample with its retries: transient failures are tried again, failures every
//! further sample would repeat stop the run.

use super::{Abort, Event, Runner};
use crate::model::{FailureKind, Outcome, Sample, SampleRequest};

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
    use super::*;
    use crate::model::{Mode, Suite};

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
