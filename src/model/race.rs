//! Why a raced suite got no more rounds: the record a run keeps of its racing.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A race's resolution: a suite whose difference from the best has a 95% interval within
/// ± this share of the best's figure stops as [`StopReason::Equal`]. Rounds spent
/// ordering smaller differences are taken from suites whose place is still open.
pub const EQUAL_WITHIN: f64 = 0.05;

/// Why an item stopped being measured in a raced run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// Clearly behind its mode's best after the first pass.
    Dropped,
    /// Told apart from the best (or, for the best, from every other suite) by more
    /// rounds.
    Separated,
    /// Still not distinguishable from the best when the budget ran out.
    Budget,
    /// Still not distinguishable from the best after the last round `--max-rounds`
    /// allows.
    Rounds,
    /// Not distinguishable from the best, but the interval of the difference lies
    /// within the race's resolution ([`EQUAL_WITHIN`]): more rounds could only order a
    /// difference too small to choose by. The best stops so too when all its
    /// rivals left are equal.
    Equal,
    /// Every one of its counted samples failed (at least [`FAILED_AFTER`]): with no
    /// figure it cannot contend, and more rounds would most likely fail again.
    Failed,
}

/// Counted samples, all failed, after which a raced item stops as
/// [`StopReason::Failed`]: one failure can be a passing fault, two in different rounds
/// are the suite's.
pub const FAILED_AFTER: usize = 2;

impl StopReason {
    pub const ALL: [StopReason; 6] = [
        StopReason::Dropped,
        StopReason::Separated,
        StopReason::Budget,
        StopReason::Rounds,
        StopReason::Equal,
        StopReason::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Dropped => "dropped",
            StopReason::Separated => "separated",
            StopReason::Budget => "budget",
            StopReason::Rounds => "rounds",
            StopReason::Equal => "equal",
            StopReason::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<StopReason> {
        StopReason::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One item's stop: why, and after how many counted samples' rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    pub reason: StopReason,
    /// The last counted round it was measured in.
    pub round: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_back_as_written() {
        for r in StopReason::ALL {
            assert_eq!(StopReason::parse(r.as_str()), Some(r));
        }
        assert_eq!(StopReason::parse("best"), None);
    }
}
