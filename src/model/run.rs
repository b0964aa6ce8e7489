//! Where a stored run, a fleet or a fleet's host stands: the values of the store's
//! `status` columns, decoded once where they are read.

use serde::{Deserialize, Serialize};

/// A run's status (and a whole fleet's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Measuring now, or killed while it was (nothing marked it otherwise).
    Running,
    Complete,
    /// Stopped by Ctrl-C or a signal.
    Interrupted,
    /// Stopped by an error (the server gone, ten failures in a row).
    Failed,
    /// Stopped by its `--budget`.
    Budget,
}

/// A fleet's host: not begun, or where its run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostStatus {
    Pending,
    Running,
    Complete,
    Interrupted,
    Failed,
    Budget,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Failed,
        RunStatus::Budget,
    ];

    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Budget => "budget",
        }
    }

    /// A stored value, `None` for one this version does not know.
    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

impl HostStatus {
    pub const ALL: [HostStatus; 6] = [
        HostStatus::Pending,
        HostStatus::Running,
        HostStatus::Complete,
        HostStatus::Interrupted,
        HostStatus::Failed,
        HostStatus::Budget,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HostStatus::Pending => "pending",
            HostStatus::Running => "running",
            HostStatus::Complete => "complete",
            HostStatus::Interrupted => "interrupted",
            HostStatus::Failed => "failed",
            HostStatus::Budget => "budget",
        }
    }

    pub fn parse(s: &str) -> Option<HostStatus> {
        HostStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stored_value_reads_back_and_an_unknown_one_does_not() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        for s in HostStatus::ALL {
            assert_eq!(HostStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::parse("Complete"), None);
        assert_eq!(HostStatus::parse("done"), None);
    }
}
