//! Owned, validated configuration built from the parsed command line. No clap types
//! travel past this module.

use crate::cli::{ModeArg, RunArgs};
use crate::suite::{AlgoKind, Mode};
use anyhow::{Result, bail};
use std::time::Duration;

/// Everything `sshbench run` needs to know.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `None`: the local sandbox.
    pub destination: Option<String>,
    pub modes: Vec<Mode>,
    pub size: u64,
    pub filters: Filters,
    pub timeout: Duration,
    pub quiet: bool,
    pub mock_transport: bool,
}

/// User restrictions on algorithm names, per kind.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub kex: Option<Vec<String>>,
    pub hostkeys: Option<Vec<String>>,
    pub ciphers: Option<Vec<String>>,
    pub macs: Option<Vec<String>>,
}

impl Filters {
    pub fn get(&self, kind: AlgoKind) -> Option<&[String]> {
        match kind {
            AlgoKind::Kex => self.kex.as_deref(),
            AlgoKind::HostKey => self.hostkeys.as_deref(),
            AlgoKind::Cipher => self.ciphers.as_deref(),
            AlgoKind::Mac => self.macs.as_deref(),
            AlgoKind::Compression => None,
        }
    }
}

impl RunConfig {
    pub fn from_args(a: RunArgs) -> Result<RunConfig> {
        let mut modes: Vec<Mode> = a
            .mode
            .iter()
            .map(|m| match m {
                ModeArg::Connect => Mode::Connect,
                ModeArg::Send => Mode::Send,
                ModeArg::Receive => Mode::Receive,
            })
            .collect();
        modes.sort();
        modes.dedup();
        if a.timeout == 0 {
            bail!("--timeout must be at least 1 second");
        }
        let clean = |v: Option<Vec<String>>, flag: &str| -> Result<Option<Vec<String>>> {
            let Some(v) = v else { return Ok(None) };
            let names: Vec<String> = v
                .into_iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if names.is_empty() {
                bail!("--{flag} needs at least one algorithm name");
            }
            Ok(Some(names))
        };
        Ok(RunConfig {
            destination: a.destination,
            modes,
            size: parse_size(&a.size)?,
            filters: Filters {
                kex: clean(a.kex, "kex")?,
                hostkeys: clean(a.hostkeys, "hostkeys")?,
                ciphers: clean(a.ciphers, "ciphers")?,
                macs: clean(a.macs, "macs")?,
            },
            timeout: Duration::from_secs(a.timeout),
            quiet: a.quiet,
            mock_transport: a.mock_transport,
        })
    }
}

/// Parse a byte size: `1048576`, `512K`, `8M`, `1G` (binary units; `KiB`/`MB` spellings
/// accepted). At least 1 byte, at most 1 TiB.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => bail!("size {text:?}: unknown unit {unit:?}; use a number with K, M or G, e.g. 8M"),
    };
    let Ok(n) = num.parse::<u64>() else {
        bail!("size {text:?} is not a number with an optional K, M or G suffix, e.g. 8M");
    };
    let bytes = n.checked_mul(1 << shift).filter(|&b| b <= 1 << 40);
    match bytes {
        Some(0) => bail!("size {text:?} must be at least 1 byte"),
        Some(b) => Ok(b),
        None => bail!("size {text:?} is larger than 1T"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8M").unwrap(), 8 << 20);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        for bad in ["", "0", "M", "8X", "-1", "1.5M", "2000G"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }
}
