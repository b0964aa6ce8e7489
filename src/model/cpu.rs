//! CPU time figures and their source, `wait4(2)`'s resource usage of a child process.

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

    /// From a `rusage` filled in by `wait4`.
    pub fn from_rusage(ru: &libc::rusage) -> Self {
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        CpuTimes {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_rusage_times() {
        // SAFETY: rusage is plain old data; all-zero is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        ru.ru_utime.tv_sec = 1;
        ru.ru_utime.tv_usec = 500_000;
        ru.ru_stime.tv_usec = 250;
        let cpu = CpuTimes::from_rusage(&ru);
        assert_eq!(cpu.user, Duration::from_millis(1500));
        assert_eq!(cpu.system, Duration::from_micros(250));
        assert_eq!(cpu.total(), Duration::from_micros(1_500_250));
    }
}
