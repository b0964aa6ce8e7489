//! `sshbench runs`: the stored runs, one line each. A run still marked running says when
//! its newest sample was stored: one that was killed (`kill -9`, a crash, a machine
//! lost mid-run) keeps that status, and the time tells it from one under way.

use super::export::{Document, Grid};
use crate::model::RunStatus;
use crate::store::{RunRecord, SampleCounts};

/// The runs' table, `now` being the current time in seconds since the Unix epoch and
/// `counts` each run's samples by id.
pub fn table(runs: &[RunRecord], counts: &[(i64, SampleCounts)], now: i64) -> Document {
    let mut g = Grid::new(
        "",
        &[
            "ID",
            "Started (UTC)",
            "Status",
            "Destination",
            "Suites",
            "Samples",
            "Warm-ups",
            "Client",
        ],
    )
    .right(&[0, 4, 5, 6])
    .droppable(&[7, 6, 1]);
    for r in runs {
        let last = r.last_sample_at.as_deref().unwrap_or(&r.started_at);
        let n = (counts.iter().find(|(id, _)| *id == r.id)).map_or_else(Default::default, |c| c.1);
        g.row(vec![
            r.id.to_string(),
            r.started_at
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            status(r.status, last, now),
            r.destination.clone(),
            r.plan.len().to_string(),
            n.measured.to_string(),
            n.warmups.to_string(),
            r.client_version.split(',').next().unwrap_or("").to_string(),
        ]);
    }
    let mut doc = Document::default();
    doc.grid(g);
    doc.para(
        "Suites: the suites each run measured (a report adds pairs derived from them). \
         Samples: measured samples, the ones every report counts; warm-ups are not counted.",
        "",
    );
    doc
}

/// `running, last sample 3 min ago` for a run marked running; other statuses as stored.
fn status(status: RunStatus, last: &str, now: i64) -> String {
    match unix_seconds(last).filter(|_| status == RunStatus::Running) {
        Some(at) => format!("running, last sample {} ago", age(now - at)),
        None => status.as_str().to_string(),
    }
}

/// A span of seconds in its largest whole unit.
fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..120 => format!("{s} s"),
        120..7200 => format!("{} min", s / 60),
        7200..172_800 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

/// Seconds since the Unix epoch of a stored UTC time (`2026-12-04T07:01:42.123Z`).
fn unix_seconds(iso: &str) -> Option<i64> {
    let num = |range: std::ops::Range<usize>| iso.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, min, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), years starting in March.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + min * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(unix_seconds("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(
            unix_seconds("2026-12-04T07:01:42.123Z"),
            Some(1_796_367_702)
        );
        assert_eq!(unix_seconds("2024-02-29T23:59:59Z"), Some(1_709_251_199));
        for bad in ["", "2026-13-01T00:00:00Z", "yesterday", "2026-12-04"] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }

    /// A run under way and one killed long ago differ by the age of their newest sample;
    /// finished runs keep their stored status.
    #[test]
    fn a_running_run_says_when_it_last_stored_a_sample() {
        let at = unix_seconds("2026-12-04T07:00:00Z").unwrap();
        let last = "2026-12-04T07:00:00.5Z";
        for (later, said) in [
            (5, "5 s"),
            (600, "10 min"),
            (5 * 3600, "5 h"),
            (3 * 86_400, "3 days"),
        ] {
            let want = format!("running, last sample {said} ago");
            assert_eq!(status(RunStatus::Running, last, at + later), want);
        }
        assert_eq!(
            status(RunStatus::Complete, last, at + 3 * 86_400),
            "complete"
        );
        assert_eq!(status(RunStatus::Running, "garbled", at), "running");
    }
}
