//! Parallel streams (`--streams N`): after the rounds, batches of N concurrent
//! connections of the best send and the best receive suite, let go at one moment. Each
//! stream is stored as a sample of its own, with when its data began and ended, so that
//! a batch's rate is all its bytes over the span of them all (`analysis::streams`).

use super::sizing::{MAX_BYTES, calibrate, window_for};
use super::{Abort, Event, Sink};
use crate::analysis;
use crate::measure::Transport;
use crate::model::{
    Failure, FailureKind, Mode, Problem, Sample, SampleRequest, SampleTimes, Stream, Suite,
    Together,
};
use crate::sys::cancel::Cancel;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The most streams of a batch (`--streams`), and the slots after the plan's that the
/// streams of both directions may take.
pub const MAX: u32 = 32;
pub const SLOTS: usize = 2 * MAX as usize;

/// Batches per suite: enough for an interval on the total.
pub const BATCHES: u32 = 3;
/// The streams of a batch hold their data back until this long (and ten round trips)
/// after they were spawned, so that all of them start moving at once: N handshakes at
/// once take a few tenths of a second on a small machine.
pub const HANDSHAKES: Duration = Duration::from_secs(1);

/// What the streams measure: a suite, its one-stream rate and the path's round trip.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub mode: Mode,
    pub suite: Suite,
    /// One stream's mean rate (bytes/s) in the rounds.
    pub rate: f64,
    pub rtt: f64,
}

/// The fastest uncompressed suite of send and of receive in `samples` (one run's).
pub fn picks<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Vec<Pick> {
    let stats = analysis::aggregate(samples.into_iter().filter(|s| s.stream.is_none()));
    let rtt = analysis::path_rtt(&stats).unwrap_or(0.0);
    [Mode::Send, Mode::Receive]
        .into_iter()
        .filter_map(|mode| {
            let best = (stats.iter())
                .filter(|s| s.mode == mode && s.suite.compression.is_none())
                .filter_map(|s| Some((s, s.figure?.mean)))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            Some(Pick {
                mode,
                suite: best.0.suite.clone(),
                rate: best.1,
                rtt,
            })
        })
        .collect()
}

/// The stored slot of stream `i` of pick `k`: after the plan's `items`, so a resumed
/// run's rounds never mistake it for theirs.
pub fn slot(items: usize, n: u32, k: usize, i: u32) -> usize {
    items + k * n as usize + i as usize
}

/// One stream's request: sized like a counted sample at one stream's rate; a send
/// streams for the window's time at most, so the streams of a batch end together.
fn request(pick: &Pick, sample_time: Duration, timeout: Duration) -> SampleRequest {
    let window = window_for(sample_time, pick.rtt);
    let (bytes, ramp) = calibrate(Some(pick.rate), window, pick.mode);
    let send = pick.mode == Mode::Send;
    SampleRequest {
        suite: pick.suite.clone(),
        mode: pick.mode,
        bytes: if send {
            bytes.saturating_mul(2).min(MAX_BYTES)
        } else {
            bytes
        },
        ramp,
        timeout,
        until: send.then_some(window),
        together: None,
        reference: None,
    }
}

/// The settings a batch needs.
pub struct Batches<'a> {
    pub n: u32,
    /// The plan's items: stream slots come after them.
    pub items: usize,
    /// The measured part's target length, as for the run's counted samples.
    pub sample_time: SampleTimes,
    pub timeout: Duration,
    /// Slots an interrupted run already stored.
    pub done: &'a HashSet<(usize, u32)>,
}

/// Measure [`BATCHES`] batches of each pick not stored yet, every stream to `sink`.
pub fn run(
    b: &Batches,
    picks: &[Pick],
    transport: &dyn Transport,
    cancel: &Cancel,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Event),
) -> Result<(), Abort> {
    let total = picks.len() * BATCHES as usize;
    for round in 1..=BATCHES {
        for (k, pick) in picks.iter().enumerate() {
            let slots: Vec<usize> = (0..b.n).map(|i| slot(b.items, b.n, k, i)).collect();
            if slots.iter().all(|s| b.done.contains(&(*s, round))) {
                continue;
            }
            let req = request(pick, b.sample_time.of(pick.mode), b.timeout);
            let at = StepAt {
                round,
                done: (round as usize - 1) * picks.len() + k,
                total,
            };
            let take = || {
                let samples = batch(&req, pick.rtt, b.n, transport, cancel)?;
                // A batch cut short is not stored: its streams did not run together.
                if cancel.is_cancelled() {
                    return Err(Abort::Cancelled);
                }
                for (slot, s) in slots.iter().zip(&samples) {
                    sink.record(*slot, round, s).map_err(Abort::Store)?;
                }
                Ok(as_one(&samples))
            };
            step(progress, at, &req, take)?;
        }
    }
    Ok(())
}

/// Where a step of a phase after the rounds stands, for progress.
#[derive(Clone, Copy)]
pub(super) struct StepAt {
    pub round: u32,
    /// Steps done before this one.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
}

/// One step of a phase after the rounds, at `at`: `take` measures and stores it, and
/// what it returns is what progress shows.
pub(super) fn step(
    progress: &mut dyn FnMut(Event),
    at: StepAt,
    request: &SampleRequest,
    take: impl FnOnce() -> Result<Sample, Abort>,
) -> Result<(), Abort> {
    let StepAt { round, done, total } = at;
    progress(Event::Starting {
        round,
        done,
        total,
        request,
    });
    let sample = take()?;
    progress(Event::Finished {
        round,
        done: done + 1,
        total,
        sample: &sample,
        retrying: false,
    });
    Ok(())
}

/// The batch as one sample for progress: all its bytes at the batch's total rate.
fn as_one(samples: &[Sample]) -> Sample {
    let mut t = samples[0].clone();
    let refs: Vec<&Sample> = samples.iter().collect();
    if let Some(rate) = analysis::streams::batch_rate(&refs) {
        let bytes: u64 = samples.iter().map(|s| s.bytes).sum();
        let time = Duration::from_secs_f64(bytes as f64 / rate);
        t.window = Some(crate::model::Window { bytes, time });
        t.bytes = bytes;
    }
    t
}

/// N samples of `req` at once, their data held back to one moment ([`HANDSHAKES`]),
/// each marked with when its data began and ended after that moment.
fn batch(
    req: &SampleRequest,
    rtt: f64,
    n: u32,
    transport: &dyn Transport,
    cancel: &Cancel,
) -> Result<Vec<Sample>, Abort> {
    let forks: Option<Vec<_>> = (0..n).map(|_| transport.fork()).collect();
    let Some(forks) = forks else {
        return Err(Abort::Fatal(Failure {
            kind: FailureKind::Other,
            problem: Problem::NoConcurrent,
        }));
    };
    let go = Instant::now() + HANDSHAKES + Duration::from_secs_f64(rtt * 10.0);
    let req = &SampleRequest {
        together: Some(Together { at: go, of: n }),
        reference: None,
        ..req.clone()
    };
    let taken: Vec<(Instant, Sample)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (forks.into_iter())
            .map(|mut t| {
                scope.spawn(move || {
                    let start = Instant::now();
                    (start, t.measure(req, cancel))
                })
            })
            .collect();
        (handles.into_iter())
            .map(|h| h.join().expect("a stream's thread panicked"))
            .collect()
    });
    // A stream's last byte is where its ssh exits, give or take the teardown
    // (milliseconds, alike for every stream); its data began at the later of its ready
    // signal (the start of its transfer) and the moment all were let go.
    let marked = taken.into_iter().map(|(spawned, mut s)| {
        let end = (spawned + s.wall)
            .saturating_duration_since(go)
            .as_secs_f64();
        let transfer = s.transfer.unwrap_or(s.wall).as_secs_f64();
        let start = (end - transfer).max(0.0);
        s.stream = Some(Stream { of: n, start, end });
        s
    });
    Ok(marked.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::mock::Mock;
    use crate::model::Outcome;

    struct Stored(Vec<(usize, u32, Sample)>);
    impl Sink for Stored {
        fn record(&mut self, item: usize, round: u32, s: &Sample) -> anyhow::Result<()> {
            self.0.push((item, round, s.clone()));
            Ok(())
        }
        fn stopped(&mut self, _: usize, _: crate::model::Stop) -> anyhow::Result<()> {
            unreachable!("parallel streams are not raced")
        }
    }

    fn pick(mode: Mode) -> Pick {
        Pick {
            mode,
            suite: Suite {
                cipher: Some("aes128-ctr".into()),
                ..Suite::default()
            },
            rate: 100e6,
            rtt: 0.0,
        }
    }

    #[test]
    fn each_batch_stores_its_streams_after_the_plan_and_resume_skips_stored_ones() {
        let done: HashSet<(usize, u32)> = (0..3).map(|i| (slot(5, 3, 0, i), 1)).collect();
        let b = Batches {
            n: 3,
            items: 5,
            sample_time: SampleTimes::all(Duration::from_millis(10)),
            timeout: Duration::from_secs(5),
            done: &done,
        };
        let mut sink = Stored(Vec::new());
        let picks = [pick(Mode::Send), pick(Mode::Receive)];
        run(
            &b,
            &picks,
            &Mock::default(),
            &Cancel::new(),
            &mut sink,
            &mut |_| {},
        )
        .unwrap();
        let slots: Vec<(usize, u32)> = sink.0.iter().map(|(i, r, _)| (*i, *r)).collect();
        let mut want = Vec::new();
        for round in 1..=BATCHES {
            for k in 0..2 {
                if k == 0 && round == 1 {
                    continue;
                }
                want.extend((0..3).map(|i| (5 + k * 3 + i as usize, round)));
            }
        }
        assert_eq!(slots, want);
        for (_, _, s) in &sink.0 {
            assert_eq!(s.stream.map(|t| t.of), Some(3));
            assert_eq!(s.outcome, Outcome::Success);
        }
    }

    #[test]
    fn the_best_uncompressed_suite_of_each_direction_is_picked() {
        let at = |cipher: &str, mode: Mode, ms: u64, zlib: bool| {
            let mut s = Sample::new(
                Suite {
                    cipher: Some(cipher.into()),
                    compression: zlib.then(|| "zlib@openssh.com".to_string()),
                    ..Suite::default()
                },
                mode,
                Outcome::Success,
            );
            s.bytes = 1 << 20;
            s.window = Some(crate::model::Window {
                bytes: 1 << 20,
                time: Duration::from_millis(ms),
            });
            s
        };
        let samples = [
            at("aes128-ctr", Mode::Send, 10, false),
            at("chacha20-poly1305@openssh.com", Mode::Send, 20, false),
            at("3des-cbc", Mode::Send, 1, true),
            at("chacha20-poly1305@openssh.com", Mode::Receive, 5, false),
        ];
        let p = picks(&samples);
        let names: Vec<(Mode, &str)> = (p.iter())
            .map(|p| (p.mode, p.suite.cipher.as_deref().unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                (Mode::Send, "aes128-ctr"),
                (Mode::Receive, "chacha20-poly1305@openssh.com")
            ]
        );
    }
}
