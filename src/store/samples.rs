//! The samples table: each column named once per direction, written from a sample as
//! (name, value) pairs and read back by name, never by position.

use super::{Store, StoredSample};
use crate::model::{
    CpuTimes, CpuWindow, FailureKind, Mode, Negotiated, Outcome, Rekey, Sample, Stream, Suite,
    Window,
};
use anyhow::Result;
use rusqlite::types::{FromSql, ToSql, Type};
use rusqlite::{Row, params_from_iter};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Echo round trips as stored: little-endian f32 seconds (4 bytes each; f32 keeps
/// 7 significant digits, far below timer noise).
fn encode_echoes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect()
}

fn decode_echoes(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
        .collect()
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A column's name and the value a sample stores in it.
type Value = (&'static str, Box<dyn ToSql>);

/// The columns that say which sample this is and how it ended.
fn key_values(run_id: i64, item: usize, round: u32, s: &Sample) -> Vec<Value> {
    let (outcome, kind) = match &s.outcome {
        Outcome::Success => ("ok", None),
        Outcome::Refused { .. } => ("refused", None),
        Outcome::Unavailable { .. } => ("unavailable", None),
        Outcome::Failed { kind, .. } => ("failed", Some(kind.as_str())),
    };
    vec![
        ("run_id", Box::new(run_id)),
        ("item", Box::new(item as i64)),
        ("round", Box::new(round)),
        ("mode", Box::new(s.mode.as_str())),
        ("kex", Box::new(s.suite.kex.clone())),
        ("hostkey", Box::new(s.suite.hostkey.clone())),
        ("cipher", Box::new(s.suite.cipher.clone())),
        ("mac", Box::new(s.suite.mac.clone())),
        ("outcome", Box::new(outcome)),
        ("failure_kind", Box::new(kind)),
        ("error", Box::new(s.outcome.message().map(str::to_string))),
    ]
}

/// The columns of what the sample measured.
fn figure_values(s: &Sample) -> Result<Vec<Value>> {
    let negotiated = s
        .negotiated
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    Ok(vec![
        ("wall_s", Box::new(secs(s.wall))),
        ("transfer_s", Box::new(s.transfer.map(secs))),
        ("bytes", Box::new(s.bytes as i64)),
        (
            "client_user_s",
            Box::new(s.client_cpu.map(|c| secs(c.user))),
        ),
        (
            "client_sys_s",
            Box::new(s.client_cpu.map(|c| secs(c.system))),
        ),
        ("negotiated_json", Box::new(negotiated)),
        ("window_bytes", Box::new(s.window.map(|w| w.bytes as i64))),
        ("window_s", Box::new(s.window.map(|w| secs(w.time)))),
        ("rtt_s", Box::new(s.rtt.map(secs))),
        ("compression", Box::new(s.suite.compression.clone())),
        ("tool_options", Box::new(s.suite.tool.clone())),
        ("files", Box::new(s.files.map(|n| n as i64))),
        ("compression_factor", Box::new(s.compression_factor)),
    ])
}

/// The columns of CPU, phases, echoes and rekeying.
fn detail_values(s: &Sample) -> Result<Vec<Value>> {
    let server = s.server_cpu;
    let phases = s.phases.as_ref().map(serde_json::to_string).transpose()?;
    let echoes = (!s.echoes.is_empty()).then(|| encode_echoes(&s.echoes));
    let rekey_bytes = s.rekey.map(|r| r.every.min(i64::MAX as u64) as i64);
    Ok(vec![
        (
            "client_window_cpu_s",
            Box::new(s.client_window_cpu.map(|c| c.seconds)),
        ),
        ("server_cpu_s", Box::new(server.map(|c| c.seconds))),
        (
            "server_cpu_interval_s",
            Box::new(server.map(|c| secs(c.interval))),
        ),
        ("server_cpu_bytes", Box::new(server.map(|c| c.bytes as i64))),
        ("phases_json", Box::new(phases)),
        ("server_sshd_cpu_s", Box::new(server.map(|c| c.peak))),
        ("server_cpu_limit", Box::new(server.and_then(|c| c.limit))),
        (
            "server_throttled",
            Box::new(server.and_then(|c| c.throttled)),
        ),
        ("echoes", Box::new(echoes)),
        (
            "client_waited_s",
            Box::new(s.client_window_cpu.and_then(|c| c.waited)),
        ),
        ("server_waited_s", Box::new(server.and_then(|c| c.waited))),
        (
            "client_feeder_cpu_s",
            Box::new(s.client_window_cpu.and_then(|c| c.feeder)),
        ),
        (
            "client_cores",
            Box::new(s.client_window_cpu.and_then(|c| c.cores)),
        ),
        ("server_cores", Box::new(server.and_then(|c| c.cores))),
        ("rekey_bytes", Box::new(rekey_bytes)),
        ("rekey_s", Box::new(s.rekey.map(|r| r.seconds))),
        ("streams", Box::new(s.stream.map(|t| t.of))),
        ("stream_start_s", Box::new(s.stream.map(|t| t.start))),
        ("stream_end_s", Box::new(s.stream.map(|t| t.end))),
    ])
}

/// One sample's values, by column name.
fn values(run_id: i64, item: usize, round: u32, s: &Sample) -> Result<Vec<Value>> {
    let mut v = key_values(run_id, item, round, s);
    v.extend(figure_values(s)?);
    v.extend(detail_values(s)?);
    Ok(v)
}

/// The columns of one query, found by name: a map built once, and the order in which
/// rows are read, learned from the first (`Row::get` by name scans every column's name
/// on each call, which over ~60 columns and 100,000 rows was most of a report's time).
struct Columns {
    map: HashMap<String, usize>,
    /// The k-th name read from a row (its address and length) and its column.
    order: std::cell::RefCell<Vec<(usize, usize, usize)>>,
}

impl Columns {
    fn of(stmt: &rusqlite::Statement) -> Columns {
        let names = stmt.column_names().into_iter().enumerate();
        Columns {
            map: names.map(|(i, n)| (n.to_string(), i)).collect(),
            order: Default::default(),
        }
    }

    /// The column of the `k`-th name read from a row: where the same name (the same
    /// literal) was read k-th before, no lookup at all.
    fn index(&self, k: usize, name: &str) -> Option<usize> {
        let key = (name.as_ptr() as usize, name.len());
        let mut order = self.order.borrow_mut();
        if let Some(&(p, l, i)) = order.get(k) {
            if (p, l) == key {
                return Some(i);
            }
        }
        let i = *self.map.get(name)?;
        if k < order.len() {
            order[k] = (key.0, key.1, i);
        } else if k == order.len() {
            order.push((key.0, key.1, i));
        }
        Some(i)
    }
}

/// A row read by column name (see [`Columns`]).
struct Named<'a> {
    row: &'a Row<'a>,
    columns: &'a Columns,
    read: std::cell::Cell<usize>,
}

impl Named<'_> {
    fn get<I: AsRef<str>, T: FromSql>(&self, name: I) -> rusqlite::Result<T> {
        let name = name.as_ref();
        let k = self.read.replace(self.read.get() + 1);
        match self.columns.index(k, name) {
            Some(i) => self.row.get(i),
            None => Err(rusqlite::Error::InvalidColumnName(name.to_string())),
        }
    }
}

fn duration(v: Option<f64>) -> Option<Duration> {
    v.map(|t| Duration::from_secs_f64(t.max(0.0)))
}

fn outcome(r: &Named) -> rusqlite::Result<Outcome> {
    let message = r.get::<_, Option<String>>("error")?.unwrap_or_default();
    let kind: Option<String> = r.get("failure_kind")?;
    Ok(match r.get::<_, String>("outcome")?.as_str() {
        "ok" => Outcome::Success,
        "refused" => Outcome::Refused { message },
        "unavailable" => Outcome::Unavailable { message },
        _ => Outcome::Failed {
            kind: kind
                .as_deref()
                .map_or(FailureKind::Other, FailureKind::parse),
            message,
        },
    })
}

fn window(r: &Named) -> rusqlite::Result<Option<Window>> {
    Ok(
        match (r.get::<_, Option<i64>>("window_bytes")?, r.get("window_s")?) {
            (Some(b), Some(t)) => Some(Window {
                bytes: b.max(0) as u64,
                time: Duration::from_secs_f64(f64::max(t, 0.0)),
            }),
            _ => None,
        },
    )
}

/// The client's CPU over the window (stored as one figure: its busiest process is ssh).
fn client_window_cpu(r: &Named, w: Option<Window>) -> rusqlite::Result<Option<CpuWindow>> {
    let c: Option<f64> = r.get("client_window_cpu_s")?;
    let waited: Option<f64> = r.get("client_waited_s")?;
    let feeder: Option<f64> = r.get("client_feeder_cpu_s")?;
    let cores: Option<f64> = r.get("client_cores")?;
    Ok(c.zip(w).map(|(c, w)| CpuWindow {
        waited,
        feeder,
        cores,
        ..CpuWindow::of(c, w.time, w.bytes)
    }))
}

fn server_cpu(r: &Named) -> rusqlite::Result<Option<CpuWindow>> {
    let seconds: Option<f64> = r.get("server_cpu_s")?;
    let interval: Option<f64> = r.get("server_cpu_interval_s")?;
    let bytes: Option<i64> = r.get("server_cpu_bytes")?;
    let (Some(c), Some(t), Some(b)) = (seconds, interval, bytes) else {
        return Ok(None);
    };
    Ok(Some(CpuWindow {
        seconds: c,
        peak: r.get::<_, Option<f64>>("server_sshd_cpu_s")?.unwrap_or(c),
        limit: r.get("server_cpu_limit")?,
        throttled: r.get("server_throttled")?,
        waited: r.get("server_waited_s")?,
        cores: r.get("server_cores")?,
        feeder: None,
        interval: Duration::from_secs_f64(t.max(0.0)),
        bytes: b.max(0) as u64,
    }))
}

fn mode(r: &Named) -> rusqlite::Result<Mode> {
    let mode: String = r.get("mode")?;
    Mode::parse(&mode).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            Type::Text,
            format!("unknown mode {mode:?}").into(),
        )
    })
}

fn sample(r: &Named) -> rusqlite::Result<Sample> {
    let w = window(r)?;
    let user: Option<f64> = r.get("client_user_s")?;
    let sys: Option<f64> = r.get("client_sys_s")?;
    let rekey = match (r.get::<_, Option<i64>>("rekey_bytes")?, r.get("rekey_s")?) {
        (Some(every), Some(seconds)) => Some(Rekey {
            every: every.max(0) as u64,
            seconds: f64::max(seconds, 0.0),
        }),
        _ => None,
    };
    let json = |col: &str| -> rusqlite::Result<Option<String>> { r.get(col) };
    Ok(Sample {
        suite: Suite {
            kex: r.get("kex")?,
            hostkey: r.get("hostkey")?,
            cipher: r.get("cipher")?,
            mac: r.get("mac")?,
            compression: r.get("compression")?,
            tool: r.get("tool_options")?,
        },
        mode: mode(r)?,
        outcome: outcome(r)?,
        wall: duration(Some(r.get("wall_s")?)).unwrap_or_default(),
        transfer: duration(r.get("transfer_s")?),
        bytes: r.get::<_, i64>("bytes")?.max(0) as u64,
        files: r.get::<_, Option<i64>>("files")?.map(|n| n.max(0) as u64),
        window: w,
        rtt: duration(r.get("rtt_s")?),
        compression_factor: r.get("compression_factor")?,
        client_window_cpu: client_window_cpu(r, w)?,
        server_cpu: server_cpu(r)?,
        phases: json("phases_json")?.and_then(|j| serde_json::from_str(&j).ok()),
        rekey,
        echoes: r
            .get::<_, Option<Vec<u8>>>("echoes")?
            .map(|b| decode_echoes(&b))
            .unwrap_or_default(),
        client_cpu: user.zip(sys).map(|(u, s)| CpuTimes {
            user: Duration::from_secs_f64(u.max(0.0)),
            system: Duration::from_secs_f64(s.max(0.0)),
        }),
        negotiated: json("negotiated_json")?
            .and_then(|j| serde_json::from_str::<Negotiated>(&j).ok()),
        stream: match (
            r.get::<_, Option<u32>>("streams")?,
            r.get("stream_start_s")?,
            r.get("stream_end_s")?,
        ) {
            (Some(of), Some(start), Some(end)) => Some(Stream { of, start, end }),
            _ => None,
        },
    })
}

impl Store {
    /// Commit one sample (its own transaction). A resumed run measures failed slots
    /// again and replaces them.
    pub fn add_sample(&self, run_id: i64, item: usize, round: u32, s: &Sample) -> Result<()> {
        let values = values(run_id, item, round, s)?;
        let names: Vec<&str> = values.iter().map(|(c, _)| *c).collect();
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT OR REPLACE INTO samples ({}) VALUES ({})",
            names.join(", "),
            marks.join(", ")
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        stmt.execute(params_from_iter(values.iter().map(|(_, v)| v.as_ref())))?;
        Ok(())
    }

    /// The (item, round) slots a run already holds.
    pub fn done_slots(&self, run_id: i64) -> Result<HashSet<(usize, u32)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT item, round FROM samples WHERE run_id = ?1")?;
        let rows = stmt.query_map([run_id], |r| {
            Ok((r.get::<_, i64>(0)? as usize, r.get::<_, u32>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Samples of the given runs (all runs when `runs` is empty).
    pub fn samples(&self, runs: &[i64]) -> Result<Vec<StoredSample>> {
        let mut sql = "SELECT * FROM samples".to_string();
        if !runs.is_empty() {
            let ids: Vec<String> = runs.iter().map(i64::to_string).collect();
            sql.push_str(&format!(" WHERE run_id IN ({})", ids.join(",")));
        }
        sql.push_str(" ORDER BY id");
        let mut stmt = self.conn.prepare(&sql)?;
        let columns = Columns::of(&stmt);
        let rows = stmt.query_map([], |row| {
            let r = &Named {
                row,
                columns: &columns,
                read: Default::default(),
            };
            Ok(StoredSample {
                run_id: r.get("run_id")?,
                item: r.get::<_, i64>("item")? as usize,
                round: r.get("round")?,
                payload: Default::default(),
                sample: sample(r)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_by_name_whatever_order_rows_are_read_in() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let stmt = conn.prepare("SELECT 1 AS a, 2 AS b, 3 AS c").unwrap();
        let cols = Columns::of(&stmt);
        let (a, b, c) = ("a".to_string(), "b".to_string(), "c".to_string());
        // The first row's order is learned; a later row read in another order, or with
        // names from elsewhere, still finds each column by its name.
        assert_eq!([cols.index(0, "a"), cols.index(1, "c")], [Some(0), Some(2)]);
        assert_eq!([cols.index(0, "a"), cols.index(1, "c")], [Some(0), Some(2)]);
        assert_eq!([cols.index(0, &c), cols.index(1, &a)], [Some(2), Some(0)]);
        assert_eq!([cols.index(0, &b), cols.index(2, "c")], [Some(1), Some(2)]);
        assert_eq!(cols.index(1, "nope"), None);
    }
}
