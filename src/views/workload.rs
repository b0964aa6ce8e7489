//! The workload rows of `show`: their own columns (the rate next to the raw stream's,
//! the share, the limit) and the note under each workload table that says why.

use super::scope::{Scope, figure_text};
use super::show::{ModeSection, OwnColumns, SuiteRow};
use crate::analysis::workload::{Limit, PerFile, Verdict, suite_spread};
use crate::model::options::bytes_text;
use crate::model::{DataSize, Mode, Shape, Suite, Tool};
use serde::Serialize;

/// `1 file of 32.0 MiB` or `2000 files of 16 KiB in 20 directories`.
pub fn data(d: &DataSize) -> String {
    let size = bytes_text(d.file_bytes);
    match d.shape {
        Shape::File => format!("1 file of {size}"),
        Shape::Tree => format!(
            "{} files of {size} in {} director{}",
            d.files,
            d.dirs,
            if d.dirs == 1 { "y" } else { "ies" }
        ),
    }
}

/// What limits a workload, as a table cell.
pub fn limit_label(l: Limit) -> &'static str {
    match l {
        Limit::Stream => "stream",
        Limit::PerFile => "per-file",
        Limit::RequestWindow => "sftp window",
        Limit::Tool => "tool",
        Limit::Unknown => "?",
    }
}

/// A workload row's comparison with its raw stream, with its sentence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadLine {
    pub limit: Limit,
    /// The raw stream's mean rate (bytes/s) for the same cipher, MAC and compression.
    pub raw: Option<f64>,
    /// Workload rate / raw rate.
    pub share: Option<f64>,
    pub sentence: String,
}

/// A share as people read it: `64%`, and `0.4%` below one percent.
pub fn percent(share: f64) -> String {
    if share < 0.01 {
        format!("{:.1}%", share * 100.0)
    } else {
        format!("{:.0}%", share * 100.0)
    }
}

/// `v`, the verdict on `mode` with `suite`, in words.
pub fn line(mode: Mode, suite: &Suite, v: &Verdict) -> WorkloadLine {
    let cipher = suite.cipher.as_deref().unwrap_or("the default cipher");
    let sentence = match v.share {
        None => format!(
            "{mode} with {cipher}: no {} of this suite to compare with",
            mode.raw_stream().map_or("raw stream", Mode::as_str)
        ),
        Some(share) => format!(
            "{mode} reaches {} of the raw stream with {cipher}: {}.",
            percent(share),
            why(mode, v)
        ),
    };
    WorkloadLine {
        limit: v.limit,
        raw: v.raw,
        share: v.share,
        sentence,
    }
}

/// What limits it, with the numbers.
fn why(mode: Mode, v: &Verdict) -> String {
    match (v.limit, v.per_file, v.cap) {
        (
            Limit::PerFile,
            Some(PerFile {
                files,
                seconds,
                rtt,
            }),
            _,
        ) => {
            let trips = rtt.map_or(String::new(), |r| {
                format!(", {:.0} round trips of {:.2} ms", seconds / r, r * 1e3)
            });
            format!(
                "{files:.0} files at {:.2} ms each{trips}: the tool's per-file work and round trips, not the cipher, limit it",
                seconds * 1e3
            )
        }
        (Limit::RequestWindow, _, Some(cap)) => format!(
            "the SFTP request window caps it at {:.1} MB/s at this round trip: more requests in flight (-R) or larger ones (-B) would help, not the cipher",
            cap / 1e6
        ),
        (Limit::Stream, ..) => {
            "what limits the stream (the cipher, a CPU or the link) limits it too".into()
        }
        _ => {
            let what = match mode.workload().map(|w| w.tool) {
                Some(Tool::Sftp) => "sftp's own request handling",
                Some(Tool::Rsync) => "rsync's own checksums and pipeline",
                Some(Tool::Scp) => "scp's own copying, a file at a time",
                None => "the tool",
            };
            format!("{what}, not the cipher, limits it")
        }
    }
}

/// A workload table's own columns, and which are figures.
pub const COLUMNS: OwnColumns = OwnColumns {
    headers: &[
        "Options",
        "MB/s",
        "±95%",
        "n",
        "Files",
        "Raw MB/s",
        "Of raw",
        "CPU (s/GB)",
        "Grade",
        "Tie",
        "Limit",
    ],
    right: &[1, 2, 3, 4, 5, 6, 7],
    names: &[],
    droppable: &[4, 5, 7, 10, 3, 2, 9],
};

/// Under a workload's table: why its best suite moves as it does, and how much the suite
/// choice changes the mode compared with what the tool's own limit costs.
pub fn workload_note(scope: &Scope, sec: &ModeSection) -> Option<String> {
    let best = sec.rows.iter().find(|r| r.mean.is_some())?;
    let v = best.workload.as_ref()?;
    let mut note = format!("  {}", v.sentence);
    if let (Some(spread), Some(share)) = (suite_spread(&scope.stats, sec.mode), v.share) {
        let faster = match 1.0 / share {
            x if x >= 2.0 => format!("{x:.0}× as fast"),
            x => format!("{:.0}% faster", (x - 1.0).max(0.0) * 100.0),
        };
        note.push_str(&format!(
            "\n  Choosing the suite changes {} by {:.0}%; the raw stream is {faster}.",
            sec.mode,
            spread * 100.0
        ));
    }
    Some(note)
}

/// A workload row's own cells: its rate, what it is of the raw stream's, and why.
pub fn workload_cells(r: &SuiteRow, mean: String, ci: String, cpu: String) -> Vec<String> {
    let v = r.workload.as_ref();
    vec![
        r.suite.tool.clone().unwrap_or_else(|| "defaults".into()),
        mean,
        ci,
        r.n.to_string(),
        r.files.map_or("-".into(), |f| f.to_string()),
        v.and_then(|v| v.raw)
            .map_or("-".into(), |x| figure_text(r.mode, x)),
        v.and_then(|v| v.share).map_or("-".into(), percent),
        cpu,
        r.grade.to_string(),
        r.tie().into(),
        v.map_or("-", |v| limit_label(v.limit)).into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(limit: Limit, share: Option<f64>) -> Verdict {
        Verdict {
            limit,
            raw: share.map(|_| 500e6),
            share,
            per_file: None,
            cap: None,
        }
    }

    #[test]
    fn each_limit_is_said_with_its_numbers() {
        let suite = Suite {
            cipher: Some("aes128-ctr".into()),
            ..Suite::default()
        };
        let near = line(
            Mode::SftpPutFile,
            &suite,
            &verdict(Limit::Stream, Some(0.9)),
        );
        assert!(
            near.sentence.starts_with("sftp-put-file reaches 90% of the raw stream with aes128-ctr: what limits the stream"),
            "{}",
            near.sentence
        );
        let tree = Verdict {
            per_file: Some(PerFile {
                files: 2000.0,
                seconds: 0.002,
                rtt: Some(1e-4),
            }),
            ..verdict(Limit::PerFile, Some(0.016))
        };
        let tree = line(Mode::SftpPutTree, &suite, &tree).sentence;
        assert!(
            tree.contains("2000 files at 2.00 ms each, 20 round trips of 0.10 ms"),
            "{tree}"
        );
        let capped = Verdict {
            cap: Some(41.9e6),
            ..verdict(Limit::RequestWindow, Some(0.4))
        };
        let capped = line(Mode::SftpGetFile, &suite, &capped).sentence;
        assert!(capped.contains("caps it at 41.9 MB/s"), "{capped}");
        let rsync = line(Mode::RsyncPutFile, &suite, &verdict(Limit::Tool, Some(0.5)));
        assert!(
            rsync.sentence.contains("rsync's own checksums"),
            "{}",
            rsync.sentence
        );
        let alone = line(Mode::SftpGetFile, &suite, &verdict(Limit::Unknown, None));
        assert_eq!(
            alone.sentence,
            "sftp-get-file with aes128-ctr: no receive of this suite to compare with"
        );
        assert_eq!(percent(0.004), "0.4%");
    }
}
