//! What ssh picks unforced, as far as the data tell: the first names of the client's
//! preference lists (`ssh -G`) that were measured, unless the run's own filters left
//! out a name ssh would try first (`--ciphers aes128-ctr` leaves out chacha20-poly1305):
//! then ssh's pick was not measured, and no gain over it can be claimed.

use super::recommend;
use super::scope::Scope;
use crate::analysis::SuiteStats;
use crate::model::{AlgoKind, Mode};
use crate::plan::filter;

/// What the data tell of ssh's unforced pick in one mode.
#[derive(Debug)]
pub enum Unforced<'s> {
    /// It was measured: this suite.
    Measured(&'s SuiteStats),
    /// A name the client prefers, which the run's option (`--ciphers`) left out.
    LeftOut { name: String, option: &'static str },
}

/// ssh's unforced pick in `mode`, judged by the scope's last run (its client's lists and
/// its filters); `None` where nothing of its lists was measured.
pub fn unforced<'s>(scope: &'s Scope, mode: Mode) -> Option<Unforced<'s>> {
    let kinds = match mode {
        Mode::Connect => [AlgoKind::Kex, AlgoKind::HostKey],
        _ => [AlgoKind::Cipher, AlgoKind::Mac],
    };
    let run = scope.runs.last()?;
    let pick =
        |k: AlgoKind| recommend::client_choice(&scope.stats, k, &[mode], &run.client_defaults);
    let (a, b) = (pick(kinds[0])?, pick(kinds[1]));
    let found = scope.stats.iter().find(|s| {
        let other = s.suite.get(kinds[1]);
        s.mode == mode
            && s.figure.is_some()
            && !s.sum
            && s.suite.compression.is_none()
            && s.suite.get(kinds[0]) == Some(a.0.as_str())
            && (other.is_none() || other == b.as_ref().map(|c| c.0.as_str()))
    });
    let filters = &run.options.filters;
    let left_out = |kind: AlgoKind, skipped: &[String]| {
        let spec = filters.get(kind)?;
        let name = skipped.iter().find(|n| !filter::keeps(spec, n))?;
        Some(Unforced::LeftOut {
            name: name.clone(),
            option: filter::option(kind),
        })
    };
    // The second list matters only where the pick uses it (an AEAD cipher has no MAC).
    let second = found.is_none_or(|s| s.suite.get(kinds[1]).is_some());
    (left_out(kinds[0], &a.1))
        .or_else(|| second.then(|| left_out(kinds[1], &b.as_ref()?.1)).flatten())
        .or(found.map(Unforced::Measured))
}
