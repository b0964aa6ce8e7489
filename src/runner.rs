//! Executes a plan one sample at a time through a [`Transport`], reporting progress
//! through a callback. It never prints and never runs samples in parallel (they would
//! disturb each other).

use crate::cancel::Cancel;
use crate::measure::{FailureKind, Outcome, Sample, SampleRequest, Transport};
use crate::plan::Plan;
use std::time::Duration;

/// Progress events for whoever displays them.
#[derive(Debug)]
pub enum Event<'a> {
    Starting {
        index: usize,
        total: usize,
        request: &'a SampleRequest,
    },
    Finished {
        index: usize,
        total: usize,
        sample: &'a Sample,
    },
}

/// Settings that apply to every sample of a run.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub size: u64,
    pub timeout: Duration,
}

/// Why a run ended early.
#[derive(Debug, thiserror::Error)]
pub enum Abort {
    #[error("interrupted")]
    Cancelled,
    /// A failure that every further sample would repeat (authentication, host key).
    #[error("{message}")]
    Fatal {
        message: String,
        samples: Vec<Sample>,
    },
}

/// Failures that no other suite can fix: stop instead of repeating them. A network
/// failure before anything succeeded means the server is unreachable.
fn is_fatal(outcome: &Outcome, any_success: bool) -> bool {
    match outcome {
        Outcome::Failed { kind, .. } => match kind {
            FailureKind::Auth | FailureKind::HostKey => true,
            FailureKind::Network => !any_success,
            _ => false,
        },
        _ => false,
    }
}

/// Run every item of the plan once. Returns the samples, or why the run stopped.
pub fn run(
    plan: &Plan,
    settings: &RunSettings,
    transport: &mut dyn Transport,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event),
) -> Result<Vec<Sample>, Abort> {
    let total = plan.items.len();
    let mut samples = Vec::with_capacity(total);
    let mut any_success = false;
    for (index, item) in plan.items.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(Abort::Cancelled);
        }
        let request = SampleRequest {
            suite: item.suite.clone(),
            mode: item.mode,
            bytes: if item.mode.is_transfer() {
                settings.size
            } else {
                0
            },
            timeout: settings.timeout,
        };
        progress(Event::Starting {
            index,
            total,
            request: &request,
        });
        let sample = transport.measure(&request, cancel);
        progress(Event::Finished {
            index,
            total,
            sample: &sample,
        });
        if cancel.is_cancelled() {
            return Err(Abort::Cancelled);
        }
        let fatal = is_fatal(&sample.outcome, any_success);
        any_success |= sample.outcome.is_success();
        samples.push(sample);
        if fatal {
            let message = samples
                .last()
                .and_then(|s| s.outcome.message())
                .unwrap_or("")
                .to_string();
            return Err(Abort::Fatal { message, samples });
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::mock::Mock;
    use crate::plan::PlanItem;
    use crate::suite::{Mode, Suite};

    fn plan(ciphers: &[&str]) -> Plan {
        Plan {
            items: ciphers
                .iter()
                .map(|c| PlanItem {
                    mode: Mode::Send,
                    suite: Suite {
                        cipher: Some(c.to_string()),
                        ..Suite::default()
                    },
                })
                .collect(),
            notes: vec![],
        }
    }

    fn settings() -> RunSettings {
        RunSettings {
            size: 1 << 20,
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn runs_every_item_in_order_with_events() {
        let mut events = Vec::new();
        let samples = run(
            &plan(&["a", "b"]),
            &settings(),
            &mut Mock::default(),
            &Cancel::new(),
            &mut |e| {
                events.push(match e {
                    Event::Starting { index, .. } => format!("start {index}"),
                    Event::Finished { index, sample, .. } => {
                        format!("done {index} {}", sample.outcome.label())
                    }
                })
            },
        )
        .unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(events, ["start 0", "done 0 ok", "start 1", "done 1 ok"]);
    }

    #[test]
    fn cancellation_stops_before_the_next_sample() {
        let cancel = Cancel::new();
        cancel.cancel(libc::SIGINT);
        let r = run(
            &plan(&["a"]),
            &settings(),
            &mut Mock::default(),
            &cancel,
            &mut |_| {},
        );
        assert!(matches!(r, Err(Abort::Cancelled)));
    }

    struct DeniedTransport;
    impl Transport for DeniedTransport {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = Mock::default().measure(req, cancel);
            s.outcome = Outcome::failed(FailureKind::Auth, "Permission denied (publickey).");
            s
        }
    }

    #[test]
    fn authentication_failure_aborts_at_once() {
        let r = run(
            &plan(&["a", "b", "c"]),
            &settings(),
            &mut DeniedTransport,
            &Cancel::new(),
            &mut |_| {},
        );
        match r {
            Err(Abort::Fatal { message, samples }) => {
                assert_eq!(samples.len(), 1);
                assert!(message.contains("Permission denied"));
            }
            other => panic!("{other:?}"),
        }
    }
}
