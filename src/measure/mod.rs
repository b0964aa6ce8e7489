//! Taking one sample: the [`Transport`] trait, its request and result types.
//!
//! A transport measures one suite in one mode and returns a [`Sample`]; it never prints
//! and never retries. The real implementation is [`openssh::OpenSsh`]; [`mock::Mock`]
//! returns fixed, deterministic figures for CLI tests of everything around it.

pub mod cpu;
pub mod mock;
pub mod openssh;
pub mod payload;
pub mod sshlog;

use crate::cancel::Cancel;
use crate::suite::{Mode, Negotiated, Suite};
use serde::Serialize;
use std::time::Duration;

pub use cpu::CpuTimes;

/// What to measure.
#[derive(Clone, Debug)]
pub struct SampleRequest {
    pub suite: Suite,
    pub mode: Mode,
    /// Bytes to move for `send`/`receive`; ignored by `connect`.
    pub bytes: u64,
    /// The first bytes of a transfer, during which the connection ramps up to speed;
    /// they are moved and verified but not part of the throughput window.
    pub ramp: u64,
    /// Hard limit for the whole sample; the ssh process group is killed after it.
    pub timeout: Duration,
}

/// Why a sample did not produce data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The server rejected our key (`Permission denied`).
    Auth,
    /// Host key unknown or changed.
    HostKey,
    /// Could not reach the server, or the connection dropped.
    Network,
    /// The sample exceeded its timeout and was killed.
    Timeout,
    /// Bytes counted at the far end differ from bytes sent.
    ByteCount,
    /// ssh negotiated something other than what was forced.
    Mismatch,
    /// The client rejected its own options (e.g. an algorithm it does not know).
    Client,
    /// The remote side did not follow the protocol (no ready line, bad count, exit code).
    Remote,
    /// Interrupted by the user.
    Cancelled,
    /// Anything else.
    Other,
}

impl FailureKind {
    /// The inverse of [`FailureKind::as_str`]; unknown text is `Other`.
    pub fn parse(s: &str) -> FailureKind {
        [
            FailureKind::Auth,
            FailureKind::HostKey,
            FailureKind::Network,
            FailureKind::Timeout,
            FailureKind::ByteCount,
            FailureKind::Mismatch,
            FailureKind::Client,
            FailureKind::Remote,
            FailureKind::Cancelled,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
        .unwrap_or(FailureKind::Other)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Auth => "auth",
            FailureKind::HostKey => "host-key",
            FailureKind::Network => "network",
            FailureKind::Timeout => "timeout",
            FailureKind::ByteCount => "byte-count",
            FailureKind::Mismatch => "mismatch",
            FailureKind::Client => "client",
            FailureKind::Remote => "remote",
            FailureKind::Cancelled => "cancelled",
            FailureKind::Other => "other",
        }
    }
}

/// The three ways a sample can end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    Success,
    /// The server does not accept this suite: not negotiable, not a failure.
    Refused {
        message: String,
    },
    Failed {
        kind: FailureKind,
        message: String,
    },
}

impl Outcome {
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Success)
    }

    pub fn failed(kind: FailureKind, message: impl Into<String>) -> Self {
        Outcome::Failed {
            kind,
            message: message.into(),
        }
    }

    /// A short label: `ok`, `refused` or the failure kind.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Success => "ok",
            Outcome::Refused { .. } => "refused",
            Outcome::Failed { kind, .. } => kind.as_str(),
        }
    }

    /// ssh's own error line, or our description of the failure.
    pub fn message(&self) -> Option<&str> {
        match self {
            Outcome::Success => None,
            Outcome::Refused { message } | Outcome::Failed { message, .. } => Some(message),
        }
    }
}

/// One measurement of one suite in one mode.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub suite: Suite,
    pub mode: Mode,
    pub outcome: Outcome,
    /// Spawn of ssh to its exit.
    pub wall: Duration,
    /// From the remote side's ready signal to the last byte verified; `None` for
    /// `connect` and for samples that never got that far.
    pub transfer: Option<Duration>,
    /// Bytes verified at the receiving end.
    pub bytes: u64,
    /// The steady-state part of the transfer the throughput is computed from.
    pub window: Option<Window>,
    /// Send only: one round trip through the session, measured before the transfer.
    pub rtt: Option<Duration>,
    /// The ssh client process's CPU time.
    pub client_cpu: Option<CpuTimes>,
    /// What ssh reported as negotiated (from its `-v` output).
    pub negotiated: Option<Negotiated>,
}

/// Bytes moved in a measured interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Window {
    pub bytes: u64,
    #[serde(serialize_with = "cpu::serialize_secs")]
    pub time: Duration,
}

impl Sample {
    /// Throughput in bytes per second: over the steady-state window when there is one,
    /// else over the whole transfer.
    pub fn throughput(&self) -> Option<f64> {
        if !self.outcome.is_success() {
            return None;
        }
        let (bytes, t) = match self.window {
            Some(w) => (w.bytes, w.time.as_secs_f64()),
            None => (self.bytes, self.transfer?.as_secs_f64()),
        };
        (t > 0.0).then(|| bytes as f64 / t)
    }
}

/// Something that can take one sample.
pub trait Transport {
    /// Measure one sample. Must return within `req.timeout` (plus teardown) and soon
    /// after `cancel` fires; a cancelled sample has outcome `Failed { Cancelled }`.
    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample;
}
