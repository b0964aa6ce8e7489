//! The options that define a run and are stored with it: modes, sizes, stop rules,
//! algorithm filters, payload, the sandbox's lab and CPU placement.

use crate::model::suite::{AlgoKind, Mode, Shape};
use crate::model::typing::KeystrokeTiming;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Most clients one run measures (`--ssh`): each multiplies the run's length, and a
/// sample names its client in a byte.
pub const MAX_CLIENTS: usize = 8;

/// The options that define a run's measurements; stored with the run so that
/// `--resume` finishes it the same way. A run's come from the command line
/// (`cli::config`); `Default` is the empty record that stored fixtures start from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub modes: Vec<Mode>,
    /// Fixed bytes per transfer sample; `None` calibrates per suite.
    pub size: Option<u64>,
    /// Calibration target: how long one transfer's measured part should last.
    pub sample_time_s: f64,
    /// Send's own target where it differs (runs stored before it existed read `None`:
    /// the same as every mode's).
    #[serde(default)]
    pub send_sample_time_s: Option<f64>,
    /// Echo's own typing time where it differs (runs stored before it existed read
    /// `None`: the same as every mode's but send's).
    #[serde(default)]
    pub echo_sample_time_s: Option<f64>,
    /// Counted rounds (every suite once per round).
    pub rounds: u32,
    /// Keep adding rounds until every suite's 95% CI is within this fraction.
    pub precision: Option<f64>,
    pub max_rounds: u32,
    /// Race: after the first `rounds`, only the suites still not distinguishable from
    /// their mode's best get more rounds (runs stored before racing read `false`).
    #[serde(default)]
    pub race: bool,
    /// Stop after this much time.
    pub budget_s: Option<f64>,
    pub timeout_s: u64,
    pub full: bool,
    /// Measure every pair (key exchange × host key, cipher × MAC) instead of each name
    /// beside one reference and the other pairs as sums (runs stored before read `false`).
    #[serde(default)]
    pub pairs: bool,
    /// How the samples of a suite reach the server (runs stored before this existed
    /// opened a connection per sample).
    #[serde(default)]
    pub connections: Connections,
    pub filters: Filters,
    /// Also measure every transfer suite with zlib compression.
    #[serde(default)]
    pub compression: bool,
    #[serde(default)]
    pub payload: PayloadKind,
    /// The sandbox's slow-machine lab, if any.
    #[serde(default)]
    pub lab: LabOptions,
    /// How the sandbox's client and server share the CPUs (runs stored before this
    /// existed read `shared`).
    #[serde(default)]
    pub sandbox_cpus: Placement,
    /// The OpenSSH server the sandbox runs (`--sshd`), when not the one found on this
    /// machine. Run again by `--resume` only from a run this user sealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_sshd: Option<std::path::PathBuf>,
    /// The OpenSSH-compatible clients measured (`--ssh`), each suite through each, in
    /// the same rounds; empty: the `ssh` on PATH alone. Run again by `--resume` only from
    /// a run this user sealed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<std::path::PathBuf>,
    /// What the workload modes move, and the tool options measured as variants.
    #[serde(default)]
    pub workload: WorkloadSpec,
    /// Also measure this many concurrent connections of the best send and receive
    /// suites (`--streams`).
    #[serde(default)]
    pub streams: Option<u32>,
}

impl RunOptions {
    /// The calibration targets the run measures to.
    pub fn sample_times(&self) -> SampleTimes {
        let own = |t: Option<f64>| Duration::from_secs_f64(t.unwrap_or(self.sample_time_s));
        SampleTimes {
            general: own(None),
            send: own(self.send_sample_time_s),
            echo: own(self.echo_sample_time_s),
        }
    }

    /// The calibration target of `mode`'s transfers, in seconds.
    pub fn sample_time_s(&self, mode: Mode) -> f64 {
        self.sample_times().of(mode).as_secs_f64()
    }
}

/// How long a calibrated transfer's measured part lasts, and an echo session's typing:
/// send's may be longer, its noise lying within each sample (bench/results/notebook.md, "Where a send
/// sample's noise comes from"); echo's shorter, its noise lying between samples ("Echo's
/// typing time").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleTimes {
    pub general: Duration,
    pub send: Duration,
    pub echo: Duration,
}

impl SampleTimes {
    /// One time for every mode.
    pub fn all(t: Duration) -> SampleTimes {
        SampleTimes {
            general: t,
            send: t,
            echo: t,
        }
    }

    /// The target of `mode`.
    pub fn of(&self, mode: Mode) -> Duration {
        match mode {
            Mode::Send => self.send,
            Mode::Echo => self.echo,
            _ => self.general,
        }
    }
}

/// How samples get their connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connections {
    /// A fresh connection for every sample.
    #[default]
    PerSample,
    /// One connection per suite and round: its send, receive and echo samples are
    /// sessions over it (an OpenSSH control master); connect samples are fresh
    /// connections whatever this says.
    PerSuite,
}

/// The data of the workload modes and the tools' option variants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// The one large file.
    pub file_bytes: u64,
    /// The tree: this many files of `tree_file_bytes` each, spread over
    /// [`WorkloadSpec::tree_dirs`] directories.
    pub tree_files: u32,
    pub tree_file_bytes: u64,
    /// Each an sftp option variant measured beside the defaults (`-R 256`).
    #[serde(default)]
    pub sftp_options: Vec<String>,
    /// Each an rsync option variant measured beside the defaults (`--whole-file`).
    #[serde(default)]
    pub rsync_options: Vec<String>,
    /// The server's directory each sample makes its own in (absolute, or relative to the
    /// login's home); `None`: `$TMPDIR` or `/tmp`, or sftp's start directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_dir: Option<String>,
    /// Typing: the ObscureKeystrokeTiming variants measured where the client has the
    /// option; empty: [`KeystrokeTiming::DEFAULTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keystrokes: Vec<KeystrokeTiming>,
}

impl WorkloadSpec {
    /// The ObscureKeystrokeTiming variants a typing run measures.
    pub fn keystroke_variants(&self) -> &[KeystrokeTiming] {
        if self.keystrokes.is_empty() {
            &KeystrokeTiming::DEFAULTS
        } else {
            &self.keystrokes
        }
    }
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            file_bytes: 32 << 20,
            tree_files: 2000,
            tree_file_bytes: 16 << 10,
            sftp_options: Vec::new(),
            rsync_options: Vec::new(),
            remote_dir: None,
            keystrokes: Vec::new(),
        }
    }
}

impl WorkloadSpec {
    /// Directories the tree's files are spread over: about 100 files each.
    pub fn tree_dirs(&self) -> u32 {
        self.tree_files.div_ceil(100).max(1)
    }

    /// Bytes and files one sample of `shape` moves.
    pub fn size(&self, shape: Shape) -> (u64, u64) {
        match shape {
            Shape::File => (self.file_bytes, 1),
            Shape::Tree => (
                self.tree_files as u64 * self.tree_file_bytes,
                self.tree_files as u64,
            ),
        }
    }

    /// What one sample of `shape` holds on a disk: its files rounded up to 4 KiB blocks,
    /// and a block per directory.
    pub fn on_disk(&self, shape: Shape) -> u64 {
        let blocks = |b: u64| b.div_ceil(4096) * 4096;
        match shape {
            Shape::File => blocks(self.file_bytes),
            Shape::Tree => {
                self.tree_files as u64 * blocks(self.tree_file_bytes)
                    + (self.tree_dirs() as u64 + 1) * 4096
            }
        }
    }

    /// What one sample of `shape` moves, as a view words it.
    pub fn data(&self, shape: Shape) -> DataSize {
        match shape {
            Shape::File => DataSize {
                shape,
                files: 1,
                file_bytes: self.file_bytes,
                dirs: 0,
            },
            Shape::Tree => DataSize {
                shape,
                files: self.tree_files as u64,
                file_bytes: self.tree_file_bytes,
                dirs: self.tree_dirs() as u64,
            },
        }
    }
}

/// The data one workload sample moves: a file, or files of a size in directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataSize {
    pub shape: Shape,
    pub files: u64,
    pub file_bytes: u64,
    pub dirs: u64,
}

/// User restrictions on algorithm names, per kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Filters {
    pub kex: Option<FilterSpec>,
    pub hostkeys: Option<FilterSpec>,
    pub ciphers: Option<FilterSpec>,
    pub macs: Option<FilterSpec>,
}

impl Filters {
    pub fn get(&self, kind: AlgoKind) -> Option<&FilterSpec> {
        match kind {
            AlgoKind::Kex => self.kex.as_ref(),
            AlgoKind::HostKey => self.hostkeys.as_ref(),
            AlgoKind::Cipher => self.ciphers.as_ref(),
            AlgoKind::Mac => self.macs.as_ref(),
            AlgoKind::Compression => None,
        }
    }

    /// The filter of `kind`, to set; compression has none.
    pub fn get_mut(&mut self, kind: AlgoKind) -> Option<&mut Option<FilterSpec>> {
        match kind {
            AlgoKind::Kex => Some(&mut self.kex),
            AlgoKind::HostKey => Some(&mut self.hostkeys),
            AlgoKind::Cipher => Some(&mut self.ciphers),
            AlgoKind::Mac => Some(&mut self.macs),
            AlgoKind::Compression => None,
        }
    }
}

impl FilterSpec {
    /// The names or patterns it holds.
    pub fn patterns(&self) -> &Vec<String> {
        match self {
            FilterSpec::Only(v)
            | FilterSpec::Append(v)
            | FilterSpec::Remove(v)
            | FilterSpec::Front(v) => v,
        }
    }

    pub fn patterns_mut(&mut self) -> &mut Vec<String> {
        match self {
            FilterSpec::Only(v)
            | FilterSpec::Append(v)
            | FilterSpec::Remove(v)
            | FilterSpec::Front(v) => v,
        }
    }
}

/// A parsed filter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", content = "names", rename_all = "lowercase")]
pub enum FilterSpec {
    Only(Vec<String>),
    Append(Vec<String>),
    Remove(Vec<String>),
    Front(Vec<String>),
}

/// What the lab imposes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabOptions {
    /// Cores the sandbox sshd (and its sessions) may use, e.g. 0.25.
    pub cpu: Option<f64>,
    /// Link rate in kbit/s, each direction.
    pub rate_kbit: Option<u32>,
    /// Round trip added by the delay relay, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u32>,
}

impl LabOptions {
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.rate_kbit.is_none() && self.delay_ms.is_none()
    }

    /// Each constraint in words: `sshd limited to 0.25 cores`, `link shaped to 16000
    /// kbit/s` (none for no lab).
    pub fn describe(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(c) = self.cpu {
            parts.push(format!("sshd limited to {c} cores"));
        }
        if let Some(k) = self.rate_kbit {
            parts.push(format!("link shaped to {k} kbit/s"));
        }
        if let Some(d) = self.delay_ms {
            parts.push(format!("{d} ms round trip added"));
        }
        parts
    }
}

/// How the sandbox's client and server share the CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// The scheduler places both ends anywhere (runs stored before placement existed).
    #[default]
    Shared,
    /// Client on the lower half of the CPUs, server on the upper half.
    Split,
}

/// What the payload looks like, for compression's sake.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PayloadKind {
    /// Incompressible (the default): compression can only cost.
    #[default]
    Random,
    /// English-like text: compresses several times.
    Text,
    /// Zeros, like `/dev/zero` in classic scripts: compresses to almost nothing.
    Zeros,
}

impl PayloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadKind::Random => "random",
            PayloadKind::Text => "text",
            PayloadKind::Zeros => "zeros",
        }
    }
}

/// `32.0 MiB` or `16 KiB`.
pub fn bytes_text(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", b.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run stored before send had a sample time of its own resumes with one time for
    /// every mode.
    #[test]
    fn runs_stored_before_send_had_its_own_sample_time_use_one_for_all() {
        let old = r#"{"modes":["send","receive"],"size":null,"sample_time_s":0.25,"rounds":3,
            "precision":null,"max_rounds":20,"budget_s":null,"timeout_s":120,"full":false,
            "filters":{"kex":null,"hostkeys":null,"ciphers":null,"macs":null}}"#;
        let o: RunOptions = serde_json::from_str(old).unwrap();
        assert_eq!(
            [o.sample_time_s(Mode::Send), o.sample_time_s(Mode::Receive)],
            [0.25; 2]
        );
        assert_eq!(o.sample_time_s(Mode::Echo), 0.25);
        let new = RunOptions {
            send_sample_time_s: Some(0.3),
            echo_sample_time_s: Some(0.1),
            ..o
        };
        assert_eq!(new.sample_time_s(Mode::Send), 0.3);
        assert_eq!(new.sample_time_s(Mode::Echo), 0.1);
        assert_eq!(new.sample_time_s(Mode::Receive), 0.25);
    }
}
