//! The samples table: each column named once per direction, written from a sample as
//! (name, value) pairs and read back by name, never by position; a selection read in
//! its report order (by run, then as stored) in one pass.

use super::backend::{Backend, Row, Value};
use super::{Store, StoredSample};
use crate::model::{
    CpuTimes, CpuWindow, ExecVia, FailureKind, KeystrokeTiming, Mode, Negotiated, Outcome, Phases,
    Problem, Rekey, Sample, Stream, Suite, Typing, Window,
};
use anyhow::{Result, anyhow, bail};
use std::collections::HashSet;
use std::time::Duration;

/// Echo round trips as stored: little-endian f32 seconds (4 bytes each; f32 keeps
/// 7 significant digits, far below timer noise).
fn encode_echoes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect()
}

/// A blob holding an implausible round trip reads as no echoes at all.
fn decode_echoes(b: &[u8]) -> Vec<f64> {
    let v: Vec<f64> = b
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
        .collect();
    match v.iter().all(|&x| plausible(x)) {
        true => v,
        false => Vec::new(),
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A column's name and the value a sample stores in it.
type Named = (&'static str, Value);

/// The columns that say which sample this is and how it ended.
fn key_values(run_id: i64, item: usize, round: u32, s: &Sample) -> Vec<Named> {
    let (outcome, kind) = match &s.outcome {
        Outcome::Success => ("ok", None),
        Outcome::Refused { .. } => ("refused", None),
        Outcome::Unavailable { .. } => ("unavailable", None),
        Outcome::Failed { kind, .. } => ("failed", Some(kind.as_str())),
    };
    vec![
        ("run_id", Value::from(run_id)),
        ("item", Value::from(item as i64)),
        ("round", Value::from(round)),
        ("mode", Value::from(s.mode.as_str())),
        ("kex", Value::from(s.suite.kex.clone())),
        ("hostkey", Value::from(s.suite.hostkey.clone())),
        ("cipher", Value::from(s.suite.cipher.clone())),
        ("mac", Value::from(s.suite.mac.clone())),
        ("outcome", Value::from(outcome)),
        ("failure_kind", Value::from(kind)),
        // Only older versions wrote prose here; it is read back as a legacy problem.
        ("error", Value::Null),
        (
            "problem_json",
            Value::from(s.outcome.problem().map(Problem::encode)),
        ),
    ]
}

/// The columns of what the sample measured.
fn figure_values(s: &Sample) -> Result<Vec<Named>> {
    let negotiated = s
        .negotiated
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    Ok(vec![
        ("wall_s", Value::from(secs(s.wall))),
        ("transfer_s", Value::from(s.transfer.map(secs))),
        ("bytes", Value::from(s.bytes as i64)),
        (
            "client_user_s",
            Value::from(s.client_cpu.map(|c| secs(c.user))),
        ),
        (
            "client_sys_s",
            Value::from(s.client_cpu.map(|c| secs(c.system))),
        ),
        ("negotiated_json", Value::from(negotiated)),
        (
            "window_bytes",
            Value::from(s.window.map(|w| w.bytes as i64)),
        ),
        ("window_s", Value::from(s.window.map(|w| secs(w.time)))),
        ("rtt_s", Value::from(s.rtt.map(secs))),
        ("compression", Value::from(s.suite.compression.clone())),
        ("tool_options", Value::from(s.suite.tool.clone())),
        (
            "keystroke_timing",
            Value::from(s.suite.keystrokes.map(String::from)),
        ),
        ("exec_via", Value::from(s.suite.exec.map(|v| v.as_str()))),
        // NULL for a run's first client: what runs from before clients were stored read.
        (
            "client",
            Value::from((s.suite.client > 0).then_some(i64::from(s.suite.client))),
        ),
        ("files", Value::from(s.files.map(|n| n as i64))),
        ("compression_factor", Value::from(s.compression_factor)),
    ])
}

/// The columns of CPU, phases, echoes and rekeying.
fn detail_values(s: &Sample) -> Result<Vec<Named>> {
    let server = s.server_cpu;
    let phases = s.phases.as_ref().map(serde_json::to_string).transpose()?;
    let echoes = (!s.echoes.is_empty()).then(|| encode_echoes(&s.echoes));
    let echoes_ref = (!s.echoes_ref.is_empty()).then(|| encode_echoes(&s.echoes_ref));
    let typing = s.typing.as_ref().map(serde_json::to_string).transpose()?;
    let mut named = vec![
        (
            "client_window_cpu_s",
            Value::from(s.client_window_cpu.map(|c| c.seconds)),
        ),
        ("server_cpu_s", Value::from(server.map(|c| c.seconds))),
        (
            "server_cpu_interval_s",
            Value::from(server.map(|c| secs(c.interval))),
        ),
        (
            "server_cpu_bytes",
            Value::from(server.map(|c| c.bytes as i64)),
        ),
        ("phases_json", Value::from(phases)),
        ("server_sshd_cpu_s", Value::from(server.map(|c| c.peak))),
        (
            "server_cpu_limit",
            Value::from(server.and_then(|c| c.limit)),
        ),
        (
            "server_throttled",
            Value::from(server.and_then(|c| c.throttled)),
        ),
        ("echoes", Value::from(echoes)),
        ("echoes_ref", Value::from(echoes_ref)),
        ("typing_json", Value::from(typing)),
        (
            "client_waited_s",
            Value::from(s.client_window_cpu.and_then(|c| c.waited)),
        ),
        (
            "server_waited_s",
            Value::from(server.and_then(|c| c.waited)),
        ),
        (
            "client_feeder_cpu_s",
            Value::from(s.client_window_cpu.and_then(|c| c.feeder)),
        ),
        (
            "client_cores",
            Value::from(s.client_window_cpu.and_then(|c| c.cores)),
        ),
        (
            "client_peak_cpu_s",
            Value::from(client_peak(s.client_window_cpu)),
        ),
        ("server_cores", Value::from(server.and_then(|c| c.cores))),
    ];
    named.extend(rekey_and_stream_values(s));
    Ok(named)
}

/// The columns of rekeying and of parallel streams.
fn rekey_and_stream_values(s: &Sample) -> [Named; 6] {
    let rekey_bytes = s.rekey.map(|r| r.every.min(i64::MAX as u64) as i64);
    [
        ("rekey_bytes", Value::from(rekey_bytes)),
        ("rekey_s", Value::from(s.rekey.map(|r| r.seconds))),
        ("rekeys_in_window", Value::from(s.rekey.map(|r| r.within))),
        ("streams", Value::from(s.stream.map(|t| t.of))),
        ("stream_start_s", Value::from(s.stream.map(|t| t.start))),
        ("stream_end_s", Value::from(s.stream.map(|t| t.end))),
    ]
}

/// The columns a sample's figure needs (`analysis::figure`, and what keeps reports'
/// rows apart: the suite, compression, payload, parallel streams).
/// Which columns of a sample a query reads (the others read as absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Columns {
    All,
    /// All a report shows: every column but what ssh negotiated, which no report
    /// reads (its JSON was a tenth of `show`'s time over 100,000 samples).
    Report,
    /// Only what figures need: [`FIGURE_COLUMNS`].
    Figures,
}

/// The columns [`Columns::Report`] reads.
pub(super) fn report_columns() -> String {
    let probe = Sample::new(Default::default(), Mode::Connect, Outcome::Success);
    let named = values(0, 0, 0, &probe).expect("an empty sample's values");
    let names: Vec<&str> = (named.iter().map(|(n, _)| *n))
        .filter(|n| *n != "negotiated_json")
        .collect();
    names.join(", ")
}

pub(super) const FIGURE_COLUMNS: &[&str] = &[
    "run_id",
    "item",
    "round",
    "mode",
    "kex",
    "hostkey",
    "cipher",
    "mac",
    "compression",
    "tool_options",
    "keystroke_timing",
    "exec_via",
    "client",
    "outcome",
    "failure_kind",
    "wall_s",
    "transfer_s",
    "bytes",
    "files",
    "window_bytes",
    "window_s",
    "rekey_bytes",
    "rekey_s",
    "rekeys_in_window",
    "compression_factor",
    "echoes",
    "echoes_ref",
    "typing_json",
    // Connect's figure takes the report's common rest from each connection's phases.
    "phases_json",
    "streams",
    "stream_start_s",
    "stream_end_s",
];

/// One sample's values, by column name.
fn values(run_id: i64, item: usize, round: u32, s: &Sample) -> Result<Vec<Named>> {
    let mut v = key_values(run_id, item, round, s);
    v.extend(figure_values(s)?);
    v.extend(detail_values(s)?);
    Ok(v)
}

/// The largest figure a row may hold (seconds, cores, a ratio): about four months.
/// Rows are untrusted: a larger, negative or non-finite figure reads as unknown, so that
/// no report panics on it or ranks it.
const MAX_FIGURE: f64 = 1e7;

fn plausible(v: f64) -> bool {
    v.is_finite() && (0.0..=MAX_FIGURE).contains(&v)
}

/// A figure column, unknown where its value is implausible.
fn figure(r: &Row, col: &str) -> Result<Option<f64>> {
    Ok(r.get::<Option<f64>>(col)?.filter(|&v| plausible(v)))
}

fn duration(v: Option<f64>) -> Option<Duration> {
    v.filter(|&t| plausible(t)).map(Duration::from_secs_f64)
}

/// A count column: negative reads as unknown.
fn count(r: &Row, col: &str) -> Result<Option<u64>> {
    Ok(r.get::<Option<i64>>(col)?
        .and_then(|n| u64::try_from(n).ok()))
}

/// Why a sample did not succeed: its typed record, or the prose an older version stored
/// (ssh's own words where the server refused a suite).
fn problem(r: &Row, refused: bool) -> Result<Problem> {
    if let Some(json) = r.text("problem_json")? {
        return Problem::decode(json)
            .ok_or_else(|| anyhow!("unknown value {json:?} in samples.problem_json"));
    }
    let text = r.text("error")?.unwrap_or_default().to_string();
    Ok(match refused {
        true => Problem::Said { said: text },
        false => Problem::Legacy { text },
    })
}

fn outcome(r: &Row) -> Result<Outcome> {
    let kind = r.text("failure_kind")?;
    // A failure stored without its kind (no version wrote one so, but the column is
    // nullable) is `other`; a kind or outcome no version wrote is an error.
    let kind = match kind {
        None => FailureKind::Other,
        Some(k) => FailureKind::parse(k)
            .ok_or_else(|| anyhow!("unknown value {k:?} in samples.failure_kind"))?,
    };
    Ok(match r.text("outcome")?.unwrap_or_default() {
        "ok" => Outcome::Success,
        "refused" => Outcome::Refused {
            problem: problem(r, true)?,
        },
        "unavailable" => Outcome::Unavailable {
            problem: problem(r, false)?,
        },
        "failed" => Outcome::Failed {
            kind,
            problem: problem(r, false)?,
        },
        other => bail!("unknown value {other:?} in samples.outcome"),
    })
}

fn window(r: &Row) -> Result<Option<Window>> {
    Ok(
        match (count(r, "window_bytes")?, duration(r.get("window_s")?)) {
            (Some(bytes), Some(time)) => Some(Window { bytes, time }),
            _ => None,
        },
    )
}

/// The client's busiest process's CPU, stored only when it is not all of the side's (a
/// proxy's processes worked beside ssh).
fn client_peak(w: Option<CpuWindow>) -> Option<f64> {
    w.filter(|c| c.peak != c.seconds).map(|c| c.peak)
}

/// The client's CPU over the window: all its processes', and the busiest one's where
/// that is not ssh alone.
fn client_window_cpu(r: &Row, w: Option<Window>) -> Result<Option<CpuWindow>> {
    let c = figure(r, "client_window_cpu_s")?;
    let waited = figure(r, "client_waited_s")?;
    let feeder = figure(r, "client_feeder_cpu_s")?;
    let cores = figure(r, "client_cores")?;
    let peak = figure(r, "client_peak_cpu_s")?;
    Ok(c.zip(w).map(|(c, w)| CpuWindow {
        waited,
        feeder,
        cores,
        peak: peak.unwrap_or(c),
        ..CpuWindow::of(c, w.time, w.bytes)
    }))
}

fn server_cpu(r: &Row) -> Result<Option<CpuWindow>> {
    // Every column read whatever the others hold: a reader that asks for the same names
    // in the same order on every row finds each without a lookup (`backend::Columns`).
    let seconds = figure(r, "server_cpu_s")?;
    let interval = duration(r.get("server_cpu_interval_s")?);
    let bytes = count(r, "server_cpu_bytes")?;
    let peak = figure(r, "server_sshd_cpu_s")?;
    let (limit, throttled) = (
        figure(r, "server_cpu_limit")?,
        figure(r, "server_throttled")?,
    );
    let (waited, cores) = (figure(r, "server_waited_s")?, figure(r, "server_cores")?);
    let (Some(c), Some(interval), Some(bytes)) = (seconds, interval, bytes) else {
        return Ok(None);
    };
    Ok(Some(CpuWindow {
        seconds: c,
        peak: peak.unwrap_or(c),
        limit,
        throttled,
        waited,
        cores,
        feeder: None,
        interval,
        bytes,
    }))
}

fn mode(r: &Row) -> Result<Mode> {
    let mode = r.text("mode")?.unwrap_or_default();
    Mode::parse(mode).ok_or_else(|| anyhow!("unknown value {mode:?} in samples.mode"))
}

/// An algorithm's name as stored: recommendations write it into `ssh_config` lists, so
/// anything but a name's characters is an error naming the column.
fn algorithm(r: &Row, col: &str) -> Result<Option<String>> {
    let v: Option<String> = r.get(col)?;
    match v {
        Some(name) if !crate::model::text::algorithm_name(&name) => {
            bail!("a value sshbench never writes in samples.{col}: {name:?}")
        }
        v => Ok(v),
    }
}

/// Which of its run's clients took the sample; NULL is the first.
fn client(r: &Row) -> Result<u8> {
    let v: Option<i64> = r.get("client")?;
    match v {
        None => Ok(0),
        Some(n) if (1..crate::model::MAX_CLIENTS as i64).contains(&n) => Ok(n as u8),
        Some(n) => bail!("a value sshbench never writes in samples.client: {n}"),
    }
}

fn suite(r: &Row) -> Result<Suite> {
    Ok(Suite {
        kex: algorithm(r, "kex")?,
        hostkey: algorithm(r, "hostkey")?,
        cipher: algorithm(r, "cipher")?,
        mac: algorithm(r, "mac")?,
        compression: algorithm(r, "compression")?,
        tool: r.get("tool_options")?,
        // The run's payload, not the sample's: reports mark it (`analysis::grouping`).
        data: None,
        client: client(r)?,
        keystrokes: keystrokes(r)?,
        exec: exec_via(r)?,
    })
}

/// An exec suite's way to the server: only what sshbench writes reads back.
fn exec_via(r: &Row) -> Result<Option<ExecVia>> {
    let v: Option<String> = r.get("exec_via")?;
    v.map(|s| match ExecVia::parse(&s) {
        Some(v) => Ok(v),
        None => bail!("a value sshbench never writes in samples.exec_via: {s:?}"),
    })
    .transpose()
}

/// A typing suite's ObscureKeystrokeTiming: only what sshbench writes reads back.
fn keystrokes(r: &Row) -> Result<Option<KeystrokeTiming>> {
    let v: Option<String> = r.get("keystroke_timing")?;
    v.map(|s| match KeystrokeTiming::parse(&s) {
        Some(k) => Ok(k),
        None => bail!("a value sshbench never writes in samples.keystroke_timing: {s:?}"),
    })
    .transpose()
}

fn rekey(r: &Row) -> Result<Option<Rekey>> {
    Ok(match (count(r, "rekey_bytes")?, figure(r, "rekey_s")?) {
        (Some(every), Some(seconds)) => Some(Rekey {
            every,
            seconds,
            // Samples stored before it was counted: none (windows were not meant to hold any).
            within: (r.get::<Option<i64>>("rekeys_in_window")?)
                .map_or(0, |n| n.clamp(0, u32::MAX.into()) as u32),
        }),
        _ => None,
    })
}

fn stream(r: &Row) -> Result<Option<Stream>> {
    Ok(
        match (
            r.get::<Option<u32>>("streams")?,
            r.get("stream_start_s")?,
            r.get("stream_end_s")?,
        ) {
            (Some(of), Some(start), Some(end)) if plausible(start) && plausible(end) => {
                Some(Stream { of, start, end })
            }
            _ => None,
        },
    )
}

pub(super) fn sample(r: &Row) -> Result<Sample> {
    let w = window(r)?;
    // A sample without a plausible wall time cannot be counted: it reads as failed.
    let wall = duration(r.get("wall_s")?);
    let outcome = match wall {
        Some(_) => outcome(r)?,
        None => Outcome::failed(
            FailureKind::Other,
            Problem::Implausible {
                column: "wall_s".into(),
            },
        ),
    };
    let user = duration(r.get("client_user_s")?);
    let sys = duration(r.get("client_sys_s")?);
    let rekey = rekey(r)?;
    let json = |col: &str| -> Result<Option<String>> { r.get(col) };
    Ok(Sample {
        suite: suite(r)?,
        mode: mode(r)?,
        outcome,
        wall: wall.unwrap_or_default(),
        transfer: duration(r.get("transfer_s")?),
        bytes: count(r, "bytes")?.unwrap_or(0),
        files: count(r, "files")?,
        window: w,
        rtt: duration(r.get("rtt_s")?),
        compression_factor: figure(r, "compression_factor")?,
        client_window_cpu: client_window_cpu(r, w)?,
        server_cpu: server_cpu(r)?,
        phases: json("phases_json")?
            .and_then(|j| serde_json::from_str::<Phases>(&j).ok())
            .filter(|p| {
                [p.tcp, p.version, p.kex, p.auth, p.session]
                    .into_iter()
                    .all(plausible)
            }),
        rekey,
        echoes: r.blob("echoes")?.map(decode_echoes).unwrap_or_default(),
        echoes_ref: r.blob("echoes_ref")?.map(decode_echoes).unwrap_or_default(),
        // Out of bounds reads as no record: the sample keeps its echoes.
        typing: json("typing_json")?
            .and_then(|j| serde_json::from_str::<Typing>(&j).ok())
            .and_then(Typing::checked)
            .map(Box::new),
        client_cpu: user
            .zip(sys)
            .map(|(user, system)| CpuTimes { user, system }),
        negotiated: json("negotiated_json")?
            .and_then(|j| serde_json::from_str::<Negotiated>(&j).ok())
            .map(Box::new),
        stream: stream(r)?,
    })
}

/// A query's `WHERE` and its parameters.
struct Filter {
    sql: String,
    params: Vec<Value>,
}

fn filter(runs: &[i64], counted: bool) -> Filter {
    let mut sql = "WHERE 1 = 1".to_string();
    let params: Vec<Value> = runs.iter().map(|&id| id.into()).collect();
    if !runs.is_empty() {
        let marks: Vec<String> = (1..=runs.len()).map(|i| format!("?{i}")).collect();
        sql.push_str(&format!(" AND run_id IN ({})", marks.join(", ")));
    }
    if counted {
        sql.push_str(" AND round > 0");
    }
    Filter { sql, params }
}

/// One row as a sample.
pub(super) fn stored(r: &super::backend::Row) -> Result<StoredSample> {
    Ok(StoredSample {
        run_id: r.get("run_id")?,
        item: r.get::<i64>("item")? as usize,
        round: r.get("round")?,
        payload: Default::default(),
        client: 0,
        sample: sample(r)?,
    })
}

/// The rows of `sql` as samples, in order, into a vector sized for `count` (one grown by
/// doubling would copy every sample again and again).
fn read(
    db: &mut dyn Backend,
    sql: &str,
    params: &[Value],
    count: usize,
) -> Result<Vec<StoredSample>> {
    let mut out = Vec::with_capacity(count);
    db.query(sql, params, &mut |r| {
        out.push(stored(r)?);
        Ok(())
    })?;
    Ok(out)
}

impl Store {
    /// Commit one sample (its own transaction). A resumed run measures failed slots
    /// again and replaces them.
    pub fn add_sample(&self, run_id: i64, item: usize, round: u32, s: &Sample) -> Result<()> {
        let (names, values): (Vec<&str>, Vec<Value>) =
            values(run_id, item, round, s)?.into_iter().unzip();
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let updates: Vec<String> = names
            .iter()
            .map(|c| format!("{c} = excluded.{c}"))
            .collect();
        let sql = format!(
            "INSERT INTO samples ({}) VALUES ({})
             ON CONFLICT (run_id, item, round) DO UPDATE SET {}, measured_at = {}",
            names.join(", "),
            marks.join(", "),
            updates.join(", "),
            self.db.borrow().now(),
        );
        self.execute(&sql, &values)?;
        Ok(())
    }

    /// The (item, round) slots a run already holds.
    pub fn done_slots(&self, run_id: i64) -> Result<HashSet<(usize, u32)>> {
        let mut done = HashSet::new();
        let sql = "SELECT item, round FROM samples WHERE run_id = ?1";
        self.query(sql, &[run_id.into()], &mut |r| {
            done.insert((r.get::<i64>("item")? as usize, r.get("round")?));
            Ok(())
        })?;
        Ok(done)
    }

    /// Samples of the given runs (all runs when `runs` is empty).
    pub fn samples(&self, runs: &[i64]) -> Result<Vec<StoredSample>> {
        self.samples_of(runs, false, Columns::All)
    }

    /// Samples of the given runs (all when `runs` is empty), only the counted ones
    /// (round > 0) when `counted`, reading `columns` (the others read as absent: a
    /// fleet's views read only [`FIGURE_COLUMNS`]). By run first: runs written at once
    /// interleave their ids, and a copy renumbers them run by run; reports add in this
    /// order and must not depend on that.
    pub(super) fn samples_of(
        &self,
        runs: &[i64],
        counted: bool,
        columns: Columns,
    ) -> Result<Vec<StoredSample>> {
        let columns = match columns {
            Columns::Figures => FIGURE_COLUMNS.join(", "),
            Columns::Report => report_columns(),
            Columns::All => "*".to_string(),
        };
        let f = filter(runs, counted);
        let mut count = 0usize;
        let counting = format!("SELECT count(*) AS n FROM samples {}", f.sql);
        self.query(&counting, &f.params, &mut |r| {
            count = r.get::<i64>("n")?.max(0) as usize;
            Ok(())
        })?;
        let sql = format!(
            "SELECT {columns} FROM samples {} ORDER BY run_id, id",
            f.sql
        );
        read(&mut **self.db.borrow_mut(), &sql, &f.params, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Outcome, Sample, Suite};
    use crate::plan::PlanItem;

    /// Two runs of one suite written at once (their ids interleave) come back run by
    /// run, each in the order it was stored.
    #[test]
    fn samples_come_back_by_run_then_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let item = PlanItem {
            mode: Mode::Connect,
            suite: Suite::default(),
        };
        let machine = crate::sys::machine::Machine::default();
        let plan = [item];
        let new_run = || crate::store::tests::new_run(&machine, &plan);
        let runs: Vec<i64> = (0..2)
            .map(|_| store.create_run(&new_run()).unwrap())
            .collect();
        for round in 0..150u32 {
            for &run in &runs {
                let mut s = Sample::new(Suite::default(), Mode::Connect, Outcome::Success);
                s.wall = std::time::Duration::from_micros(u64::from(round) * 7 + run as u64);
                store.add_sample(run, 0, round, &s).unwrap();
            }
        }
        let got = store.samples_of(&runs, true, Columns::Report).unwrap();
        assert_eq!(got.len(), 2 * 149);
        assert!(
            got.windows(2)
                .all(|w| (w[0].run_id, w[0].round) < (w[1].run_id, w[1].round))
        );
    }
}
