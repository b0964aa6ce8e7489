//! How reports group samples into suites beyond (mode, suite): a compressed transfer
//! measured on other data than random is a row of its own.

use super::{SuiteStats, aggregate};
use crate::model::{Mode, PayloadKind, Sample, Suite};

/// A compressed transfer's figure depends on the data (text shrinks several times,
/// random data not at all), so one measured on other data than the default random is a
/// suite of its own in reports: its `data` says which.
/// Reports over runs with different `--payload`s then never pool the two. Uncompressed
/// suites are left as they are: the data does not change what a cipher costs.
pub fn mark_payload(sample: &mut Sample, payload: PayloadKind) {
    mark_suite(sample.mode, &mut sample.suite, payload);
}

/// [`mark_payload`] for a suite of `mode` (a planned one, say).
pub fn mark_suite(mode: Mode, suite: &mut Suite, payload: PayloadKind) {
    if payload != PayloadKind::Random && mode.is_transfer() && suite.compression.is_some() {
        suite.data = Some(payload);
    }
}

/// [`aggregate`] over samples as reports group them: each with the payload its run
/// carried (see [`mark_payload`]).
pub fn aggregate_reported<'a>(
    samples: impl IntoIterator<Item = (&'a Sample, PayloadKind)>,
) -> Vec<SuiteStats> {
    // Only the compressed transfers on other data than random change: copy just those,
    // and pass the rest by reference (a vector of whole samples would copy them all).
    let all: Vec<(&Sample, PayloadKind)> = samples.into_iter().collect();
    let marked = |(s, payload): &(&Sample, PayloadKind)| {
        *payload != PayloadKind::Random && s.mode.is_transfer() && s.suite.compression.is_some()
    };
    let copies: Vec<Sample> = (all.iter().filter(|x| marked(x)))
        .map(|(s, payload)| {
            let mut s = (*s).clone();
            mark_payload(&mut s, *payload);
            s
        })
        .collect();
    let mut copies = copies.iter();
    let reported: Vec<&Sample> = (all.iter())
        .map(|x| {
            if marked(x) {
                copies.next().expect("a copy each")
            } else {
                x.0
            }
        })
        .collect();
    aggregate(reported)
}
