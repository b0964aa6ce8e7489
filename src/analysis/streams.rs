//! Parallel streams (`--streams N`): a batch's total rate, and what it says against one
//! stream's: parallel transfers help a connection that waits on its channel window or
//! on one core, and not one that fills the link.

use super::summarize;
use crate::model::{Mode, Sample, Suite};
use serde::Serialize;

/// A total at least this many times one stream's says parallel transfers pay.
pub const HELPS: f64 = 1.25;

/// N streams of one suite against one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamsFigure {
    pub mode: Mode,
    pub suite: Suite,
    pub streams: u32,
    /// The batches' total rates (bytes/s): their mean, its 95% interval, their count.
    pub mean: f64,
    pub ci95: Option<f64>,
    pub batches: usize,
    /// One stream's mean rate in the same selection, when it was measured alone.
    pub single: Option<f64>,
}

impl StreamsFigure {
    /// The total over one stream's rate.
    pub fn gain(&self) -> Option<f64> {
        self.single.filter(|s| *s > 0.0).map(|s| self.mean / s)
    }
}

/// A batch's total: every byte its streams moved over the span from the first one's
/// first byte to the last one's last, what N transfers at once take. It includes each
/// connection's ramp, so it is a little low against one stream's steady rate, never
/// high; `None` unless every stream of the batch succeeded.
pub fn batch_rate(batch: &[&Sample]) -> Option<f64> {
    let mut bytes = 0u64;
    let (mut first, mut last) = (f64::INFINITY, 0.0f64);
    for s in batch {
        let st = s.stream?;
        if !s.outcome.is_success() {
            return None;
        }
        bytes += s.bytes;
        first = first.min(st.start);
        last = last.max(st.end);
    }
    let whole = batch.len() as u32 == batch.first()?.stream?.of;
    (whole && last > first).then(|| bytes as f64 / (last - first))
}

/// The stream figures of a selection: `streams` are its stream samples, each with its
/// batch's key (run and round, say). `single` gives one stream's rate of a suite.
pub fn figures<K: PartialEq>(
    streams: &[(K, &Sample)],
    single: impl Fn(Mode, &Suite) -> Option<f64>,
) -> Vec<StreamsFigure> {
    let mut batches: Vec<(&K, Vec<&Sample>)> = Vec::new();
    for (key, s) in streams.iter().filter(|(_, s)| s.stream.is_some()) {
        match batches.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(s),
            None => batches.push((key, vec![s])),
        }
    }
    let mut groups: Vec<(Mode, &Suite, u32, Vec<f64>)> = Vec::new();
    for (_, members) in &batches {
        let (Some(rate), first) = (batch_rate(members), members[0]) else {
            continue;
        };
        let of = first.stream.map_or(0, |st| st.of);
        let same = |g: &&mut (Mode, &Suite, u32, Vec<f64>)| {
            g.0 == first.mode && g.1 == &first.suite && g.2 == of
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.3.push(rate),
            None => groups.push((first.mode, &first.suite, of, vec![rate])),
        }
    }
    groups
        .into_iter()
        .filter_map(|(mode, suite, streams, rates)| {
            let total = summarize(&rates)?;
            Some(StreamsFigure {
                mode,
                suite: suite.clone(),
                streams,
                mean: total.mean,
                ci95: total.ci95,
                batches: total.n,
                single: single(mode, suite),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Stream};

    fn stream(of: u32, end: f64, mb: u64) -> Sample {
        let mut s = Sample::new(Suite::default(), Mode::Send, Outcome::Success);
        s.bytes = mb << 20;
        s.stream = Some(Stream {
            of,
            start: 0.5,
            end: end + 0.5,
        });
        s
    }

    #[test]
    fn a_batch_moved_all_its_bytes_in_the_time_its_last_stream_took() {
        let a = stream(2, 1.0, 40);
        let b = stream(2, 2.0, 40);
        let rate = batch_rate(&[&a, &b]).unwrap();
        assert!((rate - (40u64 << 20) as f64).abs() < 1.0, "{rate}");
        // A stream missing or failed: the batch says nothing.
        assert_eq!(batch_rate(&[&a]), None);
        let mut failed = b.clone();
        failed.outcome = Outcome::Failed {
            kind: crate::model::FailureKind::Network,
            problem: crate::model::Problem::quote("gone"),
        };
        assert_eq!(batch_rate(&[&a, &failed]), None);
    }

    #[test]
    fn batches_of_a_suite_make_one_figure_against_one_stream() {
        let (a, b) = (stream(2, 1.0, 40), stream(2, 1.0, 40));
        let (c, d) = (stream(2, 1.0, 20), stream(2, 1.0, 20));
        let batches = [(1, &a), (1, &b), (2, &c), (2, &d)];
        let f = figures(&batches, |_, _| Some(30.0 * (1u64 << 20) as f64));
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].streams, f[0].batches), (2, 2));
        assert!((f[0].gain().unwrap() - 2.0).abs() < 1e-9);
        assert!(f[0].gain().unwrap() >= HELPS);
        let full = figures(&batches, |_, _| Some(60.0 * (1u64 << 20) as f64));
        assert!(full[0].gain().unwrap() < HELPS);
    }
}
