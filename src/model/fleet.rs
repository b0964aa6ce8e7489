//! A fleet shared by workers: a worker's client (what must match for a fleet's figures
//! to be comparable), where a worker runs, and how long its claim on a host lasts.

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
