//! A fleet shared by workers: a worker's client (what must match for a fleet's figures
//! to be comparable), where a worker runs, and how long its claim on a host lasts.

use super::{AlgoLists, Mode, Suite};
use serde::{Deserialize, Serialize};

/// How long a claim on a host lasts without renewal, by default: a worker renews it every
/// third of that, so a worker gone loses its host after at most this long.
pub const DEFAULT_LEASE_S: u32 = 60;
/// The shortest and longest lease `--fleet-lease` takes: below 5 s a busy database could
/// miss a renewal; above an hour a dead worker's host waits too long.
pub const LEASE_RANGE_S: std::ops::RangeInclusive<u32> = 5..=3600;

/// The client a worker measures with: the same on every worker of a fleet, or its
/// figures would mix machines (a faster CPU wins every suite it measures).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerClient {
    pub cpu_model: Option<String>,
    pub cores: Option<usize>,
    /// Each client's version, as `ssh -V` (or dbclient) said, in `--ssh` order.
    pub ssh: Vec<String>,
}

/// What differs between a worker's client and its fleet's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientPart {
    CpuModel,
    Cores,
    Ssh,
}

impl WorkerClient {
    /// The parts in which `self` differs from `fleet` (empty: comparable).
    pub fn differences(&self, fleet: &WorkerClient) -> Vec<ClientPart> {
        let mut d = Vec::new();
        if self.cpu_model != fleet.cpu_model {
            d.push(ClientPart::CpuModel);
        }
        if self.cores != fleet.cores {
            d.push(ClientPart::Cores);
        }
        if self.ssh != fleet.ssh {
            d.push(ClientPart::Ssh);
        }
        d
    }
}

/// The server's CPU, as its login reported it (each part `None` where not told).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCpu {
    pub model: Option<String>,
    /// Online CPUs.
    pub cpus: Option<u32>,
    /// AES instructions (x86 `aes`, ARM `aes`).
    pub aes: Option<bool>,
    /// SHA instructions (x86 `sha_ni`, ARM `sha2`).
    pub sha: Option<bool>,
}

/// How many hosts of each kind get the whole design (`--fleet-full N|all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FleetFull {
    /// The first N hosts of a kind; later ones measure the kind's contenders.
    First(u32),
    /// Every host (no grouping).
    All,
}

impl Default for FleetFull {
    fn default() -> Self {
        FleetFull::First(3)
    }
}

/// What decides how a host ranks suites: hosts of one kind rank them alike. The
/// client is the fleet's (every worker's is the same).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostKind {
    /// The server's banner (software and version).
    pub server_version: Option<String>,
    /// What its KEXINIT offered (`None`: not read, e.g. the mock).
    pub offer: Option<AlgoLists>,
    pub strict_kex: Option<bool>,
    pub cpu: Option<ServerCpu>,
}

/// How a fleet's host was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "way")]
pub enum HostWay {
    /// The whole design: among the first of its kind (`first`), or every host is.
    Full { first: bool },
    /// Its kind's contenders only: `items` of the design's `of`.
    Contenders { items: usize, of: usize },
    /// Contenders first; its figures disagreed with its kind's, so the whole design.
    FellBack { why: Disagreement },
}

/// Why a host measured by contenders disagreed with the hosts of its kind measured in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Disagreement {
    /// In `mode`, `best` (not tied with the best on any full host) beat the kind's
    /// best suite `kind_best` here, beyond both 95% intervals.
    OtherBest {
        mode: Mode,
        best: Box<Suite>,
        kind_best: Box<Suite>,
    },
    /// In `mode`, its best figure is `ratio` × the full hosts' (their median best),
    /// beyond [`LEVEL_TOLERANCE`] and outside every full host's 95% interval.
    OtherLevel { mode: Mode, ratio: f64 },
}

/// How far a host's best figure may lie from its kind's before it counts as another
/// kind of machine (a CPU quota, a busier server, a longer path): 25%.
pub const LEVEL_TOLERANCE: f64 = 0.25;

/// Where a worker runs: a machine (its name, and its boot, so that a process id means
/// one process) and a process on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerPlace {
    pub machine: String,
    /// Linux's boot id; `None` elsewhere (the name alone tells the machine).
    pub boot: Option<String>,
    pub pid: u32,
}

/// A fleet's name (`--fleet NAME`), checked once where it is given: 1-64 letters,
/// digits, `.`, `_` or `-`, so it prints as it is and reads as one word.
pub fn valid_fleet_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_differ_by_part() {
        let a = WorkerClient {
            cpu_model: Some("Cortex-A72".into()),
            cores: Some(4),
            ssh: vec!["OpenSSH_9.2p1".into()],
        };
        assert!(a.differences(&a).is_empty());
        let b = WorkerClient {
            cores: Some(8),
            ssh: vec!["OpenSSH_10.0p2".into()],
            ..a.clone()
        };
        assert_eq!(b.differences(&a), [ClientPart::Cores, ClientPart::Ssh]);
    }

    #[test]
    fn fleet_names_are_one_plain_word() {
        for good in ["web", "pis-2026.12", "A_b"] {
            assert!(valid_fleet_name(good), "{good}");
        }
        for bad in ["", "a b", "x\ny", "é", &"n".repeat(65), "a;b"] {
            assert!(!valid_fleet_name(bad), "{bad:?}");
        }
    }
}
