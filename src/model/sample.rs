//! One measurement and its request: what was asked, how it ended, what it observed.

use crate::model::cpu::{self, CpuTimes};
use crate::model::problem::{Doing, Problem};
use crate::model::rekey::Rekey;
use crate::model::suite::{Mode, Negotiated, Suite};
use crate::model::typing::Typing;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What to measure.
#[derive(Clone, Debug)]
pub struct SampleRequest {
    pub suite: Suite,
    pub mode: Mode,
    /// Bytes to move for `send`/`receive`; keystrokes to echo for `echo` (one byte
    /// each); ignored by `connect`.
    pub bytes: u64,
    /// The first bytes of a transfer, during which the connection ramps up to speed;
    /// they are moved and verified but not part of the throughput window. For `echo`,
    /// the first keystrokes, echoed and verified but not timed.
    pub ramp: u64,
    /// Hard limit for the whole sample; the ssh process group is killed after it.
    pub timeout: Duration,
    /// `send` only: stop writing once this long has passed since the ramp was done,
    /// even if fewer than `bytes` were moved (a warm-up streams for a given time
    /// whatever the rate). The sample reports, and the server verifies, the bytes
    /// actually moved.
    pub until: Option<Duration>,
    /// Transfers: one of a batch of concurrent streams (`--streams`), which start their
    /// data together.
    pub together: Option<Together>,
    /// Echo: type every keystroke beside one into a session of this suite (the run's
    /// reference, over a connection of its own kept open), so that both meet the
    /// machine in the same state (bench/results/notebook.md, "Echo beside a reference").
    pub reference: Option<Suite>,
}

/// A batch of concurrent streams of one suite.
#[derive(Clone, Copy, Debug)]
pub struct Together {
    /// Hold the data back until this moment, whatever each stream's handshake took.
    pub at: std::time::Instant,
    /// How many streams the batch has.
    pub of: u32,
}

/// Why a sample did not produce data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The login does not run sshbench's commands: the session ended before the command
    /// began (a forced command, an sftp-only account, a restricted shell).
    Command,
    /// Interrupted by the user.
    Cancelled,
    /// Anything else.
    Other,
}

impl FailureKind {
    /// The inverse of [`FailureKind::as_str`]; `None` for text no version stored.
    pub fn parse(s: &str) -> Option<FailureKind> {
        [
            FailureKind::Auth,
            FailureKind::HostKey,
            FailureKind::Network,
            FailureKind::Timeout,
            FailureKind::ByteCount,
            FailureKind::Mismatch,
            FailureKind::Client,
            FailureKind::Remote,
            FailureKind::Command,
            FailureKind::Cancelled,
            FailureKind::Other,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
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
            FailureKind::Command => "command",
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
        problem: Problem,
    },
    /// What the mode needs is missing on one side (no SFTP subsystem on the server, no
    /// rsync on it or here): no suite of the mode can be measured, and that is not a
    /// failure either.
    Unavailable {
        problem: Problem,
    },
    Failed {
        kind: FailureKind,
        problem: Problem,
    },
}

impl Outcome {
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Success)
    }

    pub fn failed(kind: FailureKind, problem: Problem) -> Self {
        Outcome::Failed { kind, problem }
    }

    /// Something on this machine failed while sshbench was `doing` it: the OS's words.
    /// The server (or the client) refused the suite, in ssh's words.
    pub fn refused(said: String) -> Self {
        Outcome::Refused {
            problem: Problem::Said { said },
        }
    }

    pub fn local(doing: Doing, error: impl std::fmt::Display) -> Self {
        Outcome::failed(FailureKind::Client, Problem::local(doing, error))
    }

    /// A short label: `ok`, `refused` or the failure kind.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Success => "ok",
            Outcome::Refused { .. } => "refused",
            Outcome::Unavailable { .. } => "unavailable",
            Outcome::Failed { kind, .. } => kind.as_str(),
        }
    }

    /// Why a sample was refused or failed, or its mode cannot run.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Outcome::Refused { problem }
            | Outcome::Unavailable { problem }
            | Outcome::Failed { problem, .. } => Some(problem),
            Outcome::Success => None,
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
    /// Workloads: files verified at the receiving end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// The steady-state part of the transfer the throughput is computed from.
    pub window: Option<Window>,
    /// Send only: one round trip through the session, measured before the transfer.
    pub rtt: Option<Duration>,
    /// The ssh client's CPU over the steady window (where the OS tells: Linux).
    pub client_window_cpu: Option<CpuWindow>,
    /// The server session's CPU (its sshd process and the remote command) over the
    /// measured part, where the server tells.
    pub server_cpu: Option<CpuWindow>,
    /// Connect: where the time went. Exec over a ControlMaster: the master's own start.
    pub phases: Option<Phases>,
    /// With compression: compressed / raw bytes as ssh reports them.
    pub compression_factor: Option<f64>,
    /// Send and receive: how often a longer transfer would rekey and what each rekey
    /// costs (this connection's own key exchange); spread into [`Sample::throughput`].
    pub rekey: Option<Rekey>,
    /// Echo and typing: each timed keystroke's round trip in seconds, in order; exec:
    /// each command's time, spawn to exit (over a master: the master's start apart, in
    /// `phases`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub echoes: Vec<f64>,
    /// Echo beside a reference: the reference session's round trips, each typed right
    /// after the keystroke of the same index.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub echoes_ref: Vec<f64>,
    /// Typing only: each key's place and echo (its echoes are in `echoes` too), and the
    /// wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<Box<Typing>>,
    /// The ssh client process's CPU time.
    pub client_cpu: Option<CpuTimes>,
    /// What ssh reported as negotiated (from its `-v` output). Boxed: reports never
    /// read it, and inline it was a fifth of every sample held in memory.
    pub negotiated: Option<Box<Negotiated>>,
    /// One of several concurrent connections (`--streams`), measured together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<Stream>,
}

/// Where a sample stands in a batch of concurrent streams of one suite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stream {
    /// How many streams ran at once.
    pub of: u32,
    /// Seconds from the moment the batch's streams were let go (together) to this
    /// stream's first byte of data (a download's starts once its upload of the block to
    /// send is in), and to its last: a batch's rate is all its bytes over the span.
    pub start: f64,
    pub end: f64,
}

/// CPU seconds spent over an interval in which `bytes` moved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CpuWindow {
    /// All the side's processes together (the CPU cost per GB).
    pub seconds: f64,
    /// The busiest single process (ssh, or the server's sshd): SSH's encryption runs
    /// in one thread, so this one saturating a core is what makes a side the bottleneck.
    pub peak: f64,
    #[serde(serialize_with = "cpu::serialize_secs")]
    pub interval: Duration,
    pub bytes: u64,
    /// The cores this side may use, when a quota caps it below the machine.
    pub limit: Option<f64>,
    /// Under a quota: the fraction of its scheduling periods in which it was throttled.
    pub throttled: Option<f64>,
    /// Seconds the busiest process was ready to run but waited for a CPU (Linux's
    /// run-queue delay, `/proc/PID/schedstat`), where known: a process that shares its
    /// cores with others is saturated though its own CPU time is not a whole core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited: Option<f64>,
    /// The CPUs the side's processes may run on (their affinity set, at most the online
    /// CPUs), where the OS tells: when they are few, the processes together can fill
    /// them though none of them fills a core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    /// Client side: seconds of sshbench's own thread that fed ssh's stdin or drained its
    /// stdout over the window. Not ssh's cost (not in `seconds`), but it runs on the same
    /// cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feeder: Option<f64>,
}

impl CpuWindow {
    /// `seconds` of one process over `interval` while `bytes` moved; nothing else known.
    pub fn of(seconds: f64, interval: Duration, bytes: u64) -> CpuWindow {
        CpuWindow {
            seconds,
            peak: seconds,
            interval,
            bytes,
            limit: None,
            throttled: None,
            waited: None,
            cores: None,
            feeder: None,
        }
    }

    /// How saturated the side is (1.0 = fully): under a quota that the kernel had to
    /// enforce, the fraction of throttled scheduling periods scaled so that half of them
    /// counts as saturated (CPU time itself is too coarse, in clock ticks, over a few
    /// hundred milliseconds); otherwise the busiest process's share of one core, its
    /// time waiting for a CPU counted in (see [`CpuWindow::demand`]), or how full the
    /// cores the side may use were, whichever is more.
    pub fn busy(&self) -> Option<f64> {
        let t = self.interval.as_secs_f64();
        if t <= 0.0 {
            return None;
        }
        if let (Some(cap), Some(th)) = (self.limit.filter(|l| *l < 1.0), self.throttled) {
            return Some((th * 2.0).max(self.seconds / t / cap).min(1.0));
        }
        let set = self.set_cores().map_or(0.0, |n| self.set_demand() / t / n);
        Some((self.demand() / t).max(set))
    }

    /// The busiest process's CPU time plus its time waiting for a CPU: how long it
    /// wanted one.
    pub fn demand(&self) -> f64 {
        self.peak + self.waited.unwrap_or(0.0).max(0.0)
    }

    /// What the side's processes (and the feeder beside them) used of their cores.
    pub fn set_demand(&self) -> f64 {
        self.seconds + self.feeder.unwrap_or(0.0).max(0.0)
    }

    /// How many cores the side's processes could use: their affinity set, capped by a
    /// quota; `None` when the set is not known.
    pub fn set_cores(&self) -> Option<f64> {
        let n = self.cores.filter(|n| *n > 0.0)?;
        Some(self.limit.map_or(n, |l| n.min(l)))
    }

    pub fn per_gb(&self) -> Option<f64> {
        (self.bytes > 0).then(|| self.seconds / self.bytes as f64 * 1e9)
    }
}

/// A connection's time split at ssh's own `-v` milestones; the parts add up to `wall`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Phases {
    /// Process start, name resolution and TCP connect (through a proxy or jump host:
    /// everything until the server's version string arrived).
    pub tcp: f64,
    /// Version strings exchanged (through a proxy: 0, counted in `tcp`).
    pub version: f64,
    /// Key exchange, host key verification included, to NEWKEYS.
    pub kex: f64,
    /// User authentication.
    pub auth: f64,
    /// Session set-up, the remote command, and exit.
    pub session: f64,
}

impl Phases {
    pub fn total(&self) -> f64 {
        self.tcp + self.version + self.kex + self.auth + self.session
    }
}

/// Bytes moved in a measured interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Window {
    pub bytes: u64,
    #[serde(serialize_with = "cpu::serialize_secs")]
    pub time: Duration,
}

impl Sample {
    /// A sample with every figure empty.
    pub fn new(suite: Suite, mode: Mode, outcome: Outcome) -> Sample {
        Sample {
            suite,
            mode,
            outcome,
            wall: Duration::ZERO,
            transfer: None,
            bytes: 0,
            files: None,
            window: None,
            rtt: None,
            client_cpu: None,
            client_window_cpu: None,
            server_cpu: None,
            phases: None,
            compression_factor: None,
            rekey: None,
            echoes: Vec::new(),
            echoes_ref: Vec::new(),
            typing: None,
            negotiated: None,
            stream: None,
        }
    }

    /// Throughput in bytes per second: over the steady-state window when there is one,
    /// else over the whole transfer; sustained, that is with the stalls of the rekeys a
    /// long transfer meets spread in, when [`Sample::rekey`] is known (samples stored
    /// before it was recorded give the rate between rekeys).
    pub fn throughput(&self) -> Option<f64> {
        if !self.outcome.is_success() || !self.mode.is_throughput() {
            return None;
        }
        let (bytes, t) = match self.window {
            Some(w) => (w.bytes, w.time.as_secs_f64()),
            None => (self.bytes, self.transfer?.as_secs_f64()),
        };
        let stall = self.rekey.map_or(0.0, |r| {
            r.stall(bytes, self.compression_factor.unwrap_or(1.0))
        });
        (t > 0.0).then(|| bytes as f64 / (t + stall))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_spreads_the_rekey_stalls_in() {
        let mut s = Sample::new(Suite::default(), Mode::Send, Outcome::Success);
        // 100 MB in 0.2 s between rekeys: 500 MB/s.
        s.window = Some(Window {
            bytes: 100_000_000,
            time: Duration::from_millis(200),
        });
        assert!((s.throughput().unwrap() - 5e8).abs() < 1.0);
        // A rekey every 1e9 bytes costing 0.1 s: 1e9 bytes take 2.1 s.
        s.rekey = Some(Rekey {
            every: 1_000_000_000,
            seconds: 0.1,
            within: 0,
        });
        let sustained = 1e9 / 2.1;
        assert!((s.throughput().unwrap() - sustained).abs() < 1.0);
        // Compressed to half, a rekey comes every 2e9 payload bytes: 4.1 s per 2e9.
        s.compression_factor = Some(0.5);
        assert!((s.throughput().unwrap() - 2e9 / 4.1).abs() < 1.0);
        // Connect samples have no throughput, with or without a rekey.
        s.mode = Mode::Connect;
        assert_eq!(s.throughput(), None);
    }
}
