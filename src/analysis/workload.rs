//! What limits a workload: its rate next to the raw stream's of the same suite on the
//! same path, and, when it falls short, whether per-file round trips, the SFTP request
//! window or the tool's own work is the reason, with the numbers (`views::workload`
//! words it).

use super::SuiteStats;
use crate::model::{Mode, Shape, Tool, Workload};
use serde::Serialize;

/// A workload within this share of the raw stream is limited by what limits the stream.
pub const NEAR_RAW: f64 = 0.8;
/// OpenSSH's sftp client: requests in flight and bytes per request, by default.
pub const SFTP_REQUESTS: f64 = 64.0;
pub const SFTP_BUFFER: f64 = 32768.0;

/// Why a workload moves at the rate it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Close to the raw stream: the cipher (or whatever limits the stream) sets it.
    Stream,
    /// Many small files: each costs round trips and work of its own.
    PerFile,
    /// sftp's requests in flight divided by the round trip.
    RequestWindow,
    /// The tool's own processing (sftp's protocol, rsync's checksums and pipeline).
    Tool,
    /// No raw stream of this suite was measured to compare with.
    Unknown,
}

/// A workload suite's comparison with its raw stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub limit: Limit,
    /// The raw stream's mean rate (bytes/s) for the same cipher, MAC and compression.
    pub raw: Option<f64>,
    /// Workload rate / raw rate.
    pub share: Option<f64>,
    /// [`Limit::PerFile`]: what each file took.
    pub per_file: Option<PerFile>,
    /// [`Limit::RequestWindow`]: the most sftp's requests in flight allow (bytes/s).
    pub cap: Option<f64>,
}

/// Many small files: how many, each one's time, and the path's round trip (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerFile {
    pub files: f64,
    pub seconds: f64,
    pub rtt: Option<f64>,
}

/// sftp's request window over a round trip: the most one sftp transfer can move.
fn request_window_cap(tool_options: Option<&str>, rtt: f64) -> f64 {
    let value = |flag: &str, default: f64| {
        let words: Vec<&str> = tool_options.unwrap_or("").split_whitespace().collect();
        words
            .windows(2)
            .find(|w| w[0] == flag)
            .and_then(|w| w[1].parse::<f64>().ok())
            .unwrap_or(default)
    };
    value("-R", SFTP_REQUESTS) * value("-B", SFTP_BUFFER) / rtt
}

/// Why a workload at `share` of its raw stream moves at `rate`.
fn reason(w: &SuiteStats, work: Workload, rate: f64, share: f64, rtt: Option<f64>) -> Verdict {
    let verdict = |limit| Verdict {
        limit,
        raw: Some(rate / share),
        share: Some(share),
        per_file: None,
        cap: None,
    };
    if share >= NEAR_RAW {
        verdict(Limit::Stream)
    } else if work.shape == Shape::Tree {
        let files = w.files.unwrap_or(0).max(1) as f64;
        Verdict {
            per_file: Some(PerFile {
                files,
                seconds: w.bytes as f64 / rate / files,
                rtt,
            }),
            ..verdict(Limit::PerFile)
        }
    } else if let Some(cap) = rtt
        .filter(|_| work.tool == Tool::Sftp)
        .map(|r| request_window_cap(w.suite.tool.as_deref(), r))
        .filter(|cap| rate >= cap * 0.75)
    {
        Verdict {
            cap: Some(cap),
            ..verdict(Limit::RequestWindow)
        }
    } else {
        verdict(Limit::Tool)
    }
}

/// The verdict for `w` (a workload suite) given the raw stream `raw` of the same suite
/// and the path's round trip (seconds), when known.
pub fn verdict(w: &SuiteStats, raw: Option<&SuiteStats>, rtt: Option<f64>) -> Option<Verdict> {
    let work = w.mode.workload()?;
    let rate = w.figure?.mean;
    let raw_rate = raw.and_then(|r| r.figure).map(|f| f.mean);
    let Some(raw_rate) = raw_rate.filter(|r| *r > 0.0) else {
        return Some(Verdict {
            limit: Limit::Unknown,
            raw: None,
            share: None,
            per_file: None,
            cap: None,
        });
    };
    let mut v = reason(w, work, rate, rate / raw_rate, rtt);
    v.raw = Some(raw_rate);
    Some(v)
}

/// [`verdict`] for `w` among `stats`: its raw stream is the same suite's (the tool's
/// options aside) in the mode it is compared with.
pub fn verdict_among(stats: &[SuiteStats], w: &SuiteStats) -> Option<Verdict> {
    let raw_mode = w.mode.raw_stream()?;
    let raw = stats.iter().find(|s| {
        s.mode == raw_mode
            && s.suite.tool.is_none()
            && (
                &s.suite.cipher,
                &s.suite.mac,
                &s.suite.compression,
                &s.suite.data,
                &s.suite.kex,
            ) == (
                &w.suite.cipher,
                &w.suite.mac,
                &w.suite.compression,
                &w.suite.data,
                &w.suite.kex,
            )
    });
    verdict(w, raw, super::suites::path_rtt(stats))
}

/// How much the choice of suite changes a workload mode's rate: 1 − slowest / fastest
/// over the suites measured (`None` with fewer than two).
pub fn suite_spread(stats: &[SuiteStats], mode: Mode) -> Option<f64> {
    let rates: Vec<f64> = stats
        .iter()
        .filter(|s| s.mode == mode)
        .filter_map(|s| s.figure.map(|f| f.mean))
        .collect();
    let max = rates.iter().copied().fold(f64::NAN, f64::max);
    let min = rates.iter().copied().fold(f64::NAN, f64::min);
    (rates.len() >= 2 && max > 0.0).then(|| 1.0 - min / max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;
    use crate::model::Suite;

    fn stats(mode: Mode, rate: f64, files: Option<u64>, bytes: u64) -> SuiteStats {
        let suite = Suite {
            cipher: Some("aes128-ctr".into()),
            ..Suite::default()
        };
        let mut s = SuiteStats::empty(mode, suite);
        s.figure = summarize(&[rate, rate]);
        s.files = files;
        s.bytes = bytes;
        s
    }

    #[test]
    fn near_the_raw_stream_the_stream_limits() {
        let w = stats(Mode::SftpPutFile, 450e6, Some(1), 32 << 20);
        let raw = stats(Mode::Send, 500e6, None, 0);
        let v = verdict(&w, Some(&raw), Some(1e-4)).unwrap();
        assert_eq!(v.limit, Limit::Stream);
        assert_eq!((v.share, v.raw), (Some(0.9), Some(500e6)));
    }

    #[test]
    fn small_files_are_limited_per_file_and_the_numbers_are_given() {
        // 2000 files, 32 MB at 8 MB/s: 4 s, 2 ms per file, 20 round trips of 0.1 ms.
        let w = stats(Mode::SftpPutTree, 8e6, Some(2000), 32_000_000);
        let raw = stats(Mode::Send, 500e6, None, 0);
        let v = verdict(&w, Some(&raw), Some(1e-4)).unwrap();
        assert_eq!(v.limit, Limit::PerFile);
        let f = v.per_file.unwrap();
        assert_eq!((f.files, f.rtt), (2000.0, Some(1e-4)));
        assert!((f.seconds - 0.002).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn a_far_link_caps_sftp_at_its_request_window() {
        // 64 × 32 KiB over 50 ms: 41.9 MB/s; the raw stream moved 100 MB/s.
        let w = stats(Mode::SftpGetFile, 40e6, Some(1), 32 << 20);
        let raw = stats(Mode::Receive, 100e6, None, 0);
        let v = verdict(&w, Some(&raw), Some(0.05)).unwrap();
        assert_eq!(v.limit, Limit::RequestWindow);
        assert!(
            (v.cap.unwrap() - 64.0 * 32768.0 / 0.05).abs() < 1.0,
            "{v:?}"
        );
        // Far below the cap, it is the tool itself; with no raw stream, unknown.
        let slow = stats(Mode::SftpGetFile, 10e6, Some(1), 32 << 20);
        assert_eq!(
            verdict(&slow, Some(&raw), Some(0.05)).unwrap().limit,
            Limit::Tool
        );
        assert_eq!(verdict(&w, None, Some(0.05)).unwrap().limit, Limit::Unknown);
    }

    #[test]
    fn the_cap_follows_the_options_measured() {
        assert_eq!(request_window_cap(None, 1.0), 64.0 * 32768.0);
        assert_eq!(
            request_window_cap(Some("-R 256 -B 65536"), 2.0),
            256.0 * 65536.0 / 2.0
        );
    }
}
