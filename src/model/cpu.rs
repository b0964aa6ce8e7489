//! CPU time figures (`sys::proc::cpu_of` reads them from `wait4(2)`'s resource usage).

use serde::Serialize;
use std::time::Duration;

/// User and system CPU time of one process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    #[serde(with = "secs")]
    pub user: Duration,
    #[serde(with = "secs")]
    pub system: Duration,
}

impl CpuTimes {
    pub fn total(&self) -> Duration {
        self.user + self.system
    }
}

/// Serialize a duration as fractional seconds.
pub fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Serialize durations as fractional seconds for JSON consumers.
mod secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
