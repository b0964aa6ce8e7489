//! SQLite storage of runs and raw samples (bundled SQLite, one file).
//!
//! Every sample is committed as soon as it is measured (WAL journal), so a run stopped
//! by Ctrl-C, a crash or `kill -9` keeps every finished sample and can be resumed. The
//! schema version lives in `PRAGMA user_version`; [`MIGRATIONS`] upgrade older files and
//! a file from a newer sshbench is refused untouched. ARCHITECTURE.md documents the
//! tables for people who query them directly.

use crate::model::{
    AlgoLists, CpuTimes, CpuWindow, FailureKind, LabOptions, Mode, Negotiated, Outcome,
    PayloadKind, Placement, Rekey, Sample, Suite, Window,
};
use crate::plan::PlanItem;
use crate::sys::machine::Machine;
use crate::target;
use anyhow::{Context, Result, anyhow, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Schema version this build writes.
pub const SCHEMA_VERSION: i64 = 6;

/// `MIGRATIONS[i]` upgrades a database from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    started_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at      TEXT,
    status           TEXT NOT NULL,      -- running | complete | interrupted | failed | budget
    destination      TEXT NOT NULL,      -- as given, or 'local sandbox' (v6: with its setup)
    target_json      TEXT NOT NULL,      -- ssh options and destination argument
    resolved_host    TEXT,
    resolved_port    INTEGER,
    resolved_user    TEXT,
    client_version   TEXT NOT NULL,
    client_defaults_json TEXT,          -- ssh -G preference lists: what ssh uses unforced
    server_version   TEXT,
    machine_json     TEXT NOT NULL,      -- client CPU model, cores, AES/SHA, OS
    options_json     TEXT NOT NULL,      -- modes, size, rounds, stop rules, filters
    plan_json        TEXT NOT NULL,      -- the planned (mode, suite) items, in order
    seed             INTEGER NOT NULL,   -- shuffles every round's order
    sshbench_version TEXT NOT NULL
);
CREATE TABLE samples (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item            INTEGER NOT NULL,   -- index into the run's plan
    round           INTEGER NOT NULL,   -- 0 = warm-up (not counted)
    mode            TEXT NOT NULL,      -- connect | send | receive (| echo, v3)
    kex             TEXT,
    hostkey         TEXT,
    cipher          TEXT,
    mac             TEXT,               -- NULL for AEAD ciphers
    outcome         TEXT NOT NULL,      -- ok | refused | failed
    failure_kind    TEXT,               -- auth, network, timeout, byte-count, ...
    error           TEXT,               -- ssh's own message
    wall_s          REAL NOT NULL,      -- ssh spawn to exit
    transfer_s      REAL,               -- ready signal to last byte (send/receive)
    bytes           INTEGER NOT NULL,   -- moved and verified
    window_bytes    INTEGER,            -- steady-state part the throughput is taken from
    window_s        REAL,
    rtt_s           REAL,               -- send: one round trip through the session
    client_user_s   REAL,
    client_sys_s    REAL,
    negotiated_json TEXT,
    measured_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (run_id, item, round)
);
CREATE INDEX samples_by_suite ON samples (mode, cipher, mac, kex, hostkey);
"#,
    r#"
ALTER TABLE samples ADD COLUMN compression TEXT;            -- zlib@openssh.com, or NULL (off)
ALTER TABLE samples ADD COLUMN compression_factor REAL;     -- compressed / raw bytes (ssh -v)
ALTER TABLE samples ADD COLUMN client_window_cpu_s REAL;    -- client CPU over the window
ALTER TABLE samples ADD COLUMN server_cpu_s REAL;           -- server session CPU (sshd + command)
ALTER TABLE samples ADD COLUMN server_sshd_cpu_s REAL;      -- ... of which the sshd process
ALTER TABLE samples ADD COLUMN server_cpu_limit REAL;       -- cores allowed by a cgroup quota
ALTER TABLE samples ADD COLUMN server_throttled REAL;       -- share of quota periods throttled
ALTER TABLE samples ADD COLUMN server_cpu_interval_s REAL;  -- ... over this long
ALTER TABLE samples ADD COLUMN server_cpu_bytes INTEGER;    -- ... while this many bytes moved
ALTER TABLE samples ADD COLUMN phases_json TEXT;            -- connect: tcp, version, kex, auth, session
"#,
    r#"
ALTER TABLE samples ADD COLUMN echoes BLOB;                 -- echo: each round trip, f32 seconds (LE)
"#,
    r#"
ALTER TABLE runs ADD COLUMN server_strict_kex INTEGER;      -- 1/0: the server offered strict KEX (Terrapin), NULL: unknown
"#,
    r#"
ALTER TABLE samples ADD COLUMN rekey_bytes INTEGER;         -- send/receive: encrypted bytes between rekeys
ALTER TABLE samples ADD COLUMN rekey_s REAL;                -- ... and one rekey's stall (the connection's kex)
"#,
    // v6: each setup of the local sandbox is a destination of its own
    // (`target::sandbox_label`); `relabel_sandbox_runs` moves the runs stored before.
    "",
];

/// The version whose upgrade also relabels the sandbox runs stored before it.
const RELABEL_SANDBOX_AT: usize = 6;

/// Give every run stored as `local sandbox` the label of the setup it ran in (its
/// options say: shared CPUs, a lab), so that reports stop pooling them with runs of the
/// default setup. Runs from before the placement existed ran with shared CPUs.
fn relabel_sandbox_runs(tx: &rusqlite::Transaction) -> Result<()> {
    #[derive(Default, Deserialize)]
    struct Setup {
        #[serde(default)]
        lab: LabOptions,
        #[serde(default)]
        sandbox_cpus: Placement,
    }
    let runs: Vec<(i64, String)> = tx
        .prepare("SELECT id, options_json FROM runs WHERE destination = ?1")?
        .query_map([target::SANDBOX], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, options) in runs {
        let setup: Setup = serde_json::from_str(&options).unwrap_or_default();
        let label = target::sandbox_label(setup.sandbox_cpus, &setup.lab);
        if label != target::SANDBOX {
            tx.execute(
                "UPDATE runs SET destination = ?1 WHERE id = ?2",
                params![label, id],
            )?;
        }
    }
    Ok(())
}

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

/// The default database: `$XDG_DATA_HOME/sshbench/sshbench.sqlite` (or the platform's
/// equivalent).
pub fn default_path() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "sshbench")
        .ok_or_else(|| anyhow!("no home directory to keep the database in; use --db PATH"))?;
    Ok(dirs.data_dir().join("sshbench.sqlite"))
}

/// Check that `path` can be used, without creating or changing anything.
pub fn check(path: &Path) -> Result<()> {
    if path.exists() {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .with_context(|| format!("opening the database {}", path.display()))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .with_context(|| format!("{} is not an sshbench database", path.display()))?;
        if version > SCHEMA_VERSION {
            bail!(
                "the database {} has schema version {version}, newer than this sshbench \
                 understands ({SCHEMA_VERSION}); upgrade sshbench or use another --db",
                path.display()
            );
        }
        if nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
            bail!("the database {} is not writable", path.display());
        }
        return Ok(());
    }
    // The nearest existing ancestor must let us create the rest.
    let mut dir = path.parent().unwrap_or(Path::new("."));
    if dir.as_os_str().is_empty() {
        dir = Path::new(".");
    }
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        bail!(
            "cannot create the database {}: {} is not a directory",
            path.display(),
            existing.display()
        );
    }
    if nix::unistd::access(
        existing,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        bail!(
            "cannot create the database {}: {} is not writable",
            path.display(),
            existing.display()
        );
    }
    Ok(())
}

/// The data a run's transfers carried (`--payload`), as its options record it (random,
/// the default, for runs from before the option).
fn payload_of(options_json: &str) -> PayloadKind {
    #[derive(Deserialize)]
    struct Options {
        #[serde(default)]
        payload: PayloadKind,
    }
    serde_json::from_str::<Options>(options_json).map_or(PayloadKind::Random, |o| o.payload)
}

/// A compressed transfer's figure depends on the data (text shrinks several times,
/// random data not at all), so one measured on other data than the default random is a
/// suite of its own in reports: its compression reads `zlib@openssh.com, text data`.
/// Reports over runs with different `--payload`s then never pool the two. Uncompressed
/// suites are left as they are: the data does not change what a cipher costs.
fn mark_payload(sample: &mut Sample, payload: PayloadKind) {
    let data = match payload {
        PayloadKind::Random => return,
        PayloadKind::Text => "text",
        PayloadKind::Zeros => "zeros",
    };
    if sample.mode.is_transfer()
        && let Some(c) = &mut sample.suite.compression
    {
        *c = format!("{c}, {data} data");
    }
}

/// A run as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    pub destination: String,
    pub target_json: String,
    pub client_version: String,
    pub server_version: Option<String>,
    /// Whether the server offered strict KEX, the Terrapin (CVE-2023-48795)
    /// countermeasure; `None` when its offer was not read (or before schema v4).
    pub server_strict_kex: Option<bool>,
    pub machine: Machine,
    pub options_json: String,
    pub plan: Vec<PlanItem>,
    pub seed: u64,
    pub samples: i64,
    /// The client's unforced preference lists for the destination (`ssh -G`).
    pub client_defaults: AlgoLists,
}

/// What a new run records.
pub struct NewRun<'a> {
    pub destination: &'a str,
    pub target_json: String,
    pub resolved: Option<(&'a str, u16, &'a str)>,
    pub client_version: &'a str,
    pub server_version: Option<&'a str>,
    pub server_strict_kex: Option<bool>,
    pub machine: &'a Machine,
    pub options_json: String,
    pub plan: &'a [PlanItem],
    pub seed: u64,
    pub client_defaults: &'a AlgoLists,
}

/// Which stored results a report covers.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Runs of this destination: as stored (the argument given to `run`), or as
    /// [`target::stored_destination`] names the local sandbox (`sandbox`).
    pub destination: Option<String>,
    /// Only this run.
    pub run: Option<i64>,
    /// Runs started at or after this UTC time (`2026-11-30` or `2026-11-30T10:00`).
    pub since: Option<String>,
}

/// One stored sample with its place in the run.
#[derive(Clone, Debug)]
pub struct StoredSample {
    pub run_id: i64,
    pub item: usize,
    pub round: u32,
    pub sample: Sample,
}

pub struct Store {
    conn: Connection,
}

impl Store {
    /// Open (creating the file and its directory if needed) and migrate.
    pub fn open(path: &Path) -> Result<Store> {
        check(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("opening the database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = Store { conn };
        store
            .migrate()
            .with_context(|| format!("preparing the database {}", path.display()))?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            bail!("schema version {version} is newer than this sshbench ({SCHEMA_VERSION})");
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            if v + 1 == RELABEL_SANDBOX_AT {
                relabel_sandbox_runs(&tx)?;
            }
            tx.pragma_update(None, "user_version", (v + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
    }

    pub fn create_run(&self, r: &NewRun) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs (status, destination, target_json, resolved_host, resolved_port,
                resolved_user, client_version, server_version, machine_json, options_json,
                plan_json, seed, sshbench_version, client_defaults_json, server_strict_kex)
             VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                r.destination,
                r.target_json,
                r.resolved.map(|x| x.0),
                r.resolved.map(|x| x.1),
                r.resolved.map(|x| x.2),
                r.client_version,
                r.server_version,
                serde_json::to_string(r.machine)?,
                r.options_json,
                serde_json::to_string(r.plan)?,
                r.seed as i64,
                env!("CARGO_PKG_VERSION"),
                serde_json::to_string(r.client_defaults)?,
                r.server_strict_kex,
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Group many inserts into one transaction (bulk loading, e.g. fixtures and
    /// benchmarks); normal runs commit each sample on its own.
    pub fn begin_bulk(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN")?;
        Ok(())
    }

    pub fn end_bulk(&self) -> Result<()> {
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Commit one sample (its own transaction).
    pub fn add_sample(&self, run_id: i64, item: usize, round: u32, s: &Sample) -> Result<()> {
        let (outcome, kind) = match &s.outcome {
            Outcome::Success => ("ok", None),
            Outcome::Refused { .. } => ("refused", None),
            Outcome::Failed { kind, .. } => ("failed", Some(kind.as_str())),
        };
        self.conn.execute(
            // A resumed run measures failed slots again and replaces them.
            "INSERT OR REPLACE INTO samples (run_id, item, round, mode, kex, hostkey, cipher, mac, outcome,
                failure_kind, error, wall_s, transfer_s, bytes, client_user_s, client_sys_s,
                negotiated_json, window_bytes, window_s, rtt_s, compression, compression_factor,
                client_window_cpu_s, server_cpu_s, server_cpu_interval_s, server_cpu_bytes,
                phases_json, server_sshd_cpu_s, server_cpu_limit, server_throttled, echoes,
                rekey_bytes, rekey_s)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                     ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31,
                     ?32, ?33)",
            params![
                run_id,
                item as i64,
                round,
                s.mode.as_str(),
                s.suite.kex,
                s.suite.hostkey,
                s.suite.cipher,
                s.suite.mac,
                outcome,
                kind,
                s.outcome.message(),
                s.wall.as_secs_f64(),
                s.transfer.map(|d| d.as_secs_f64()),
                s.bytes as i64,
                s.client_cpu.map(|c| c.user.as_secs_f64()),
                s.client_cpu.map(|c| c.system.as_secs_f64()),
                s.negotiated
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
                s.window.map(|w| w.bytes as i64),
                s.window.map(|w| w.time.as_secs_f64()),
                s.rtt.map(|d| d.as_secs_f64()),
                s.suite.compression,
                s.compression_factor,
                s.client_window_cpu.map(|c| c.seconds),
                s.server_cpu.map(|c| c.seconds),
                s.server_cpu.map(|c| c.interval.as_secs_f64()),
                s.server_cpu.map(|c| c.bytes as i64),
                s.phases.as_ref().map(serde_json::to_string).transpose()?,
                s.server_cpu.map(|c| c.peak),
                s.server_cpu.and_then(|c| c.limit),
                s.server_cpu.and_then(|c| c.throttled),
                (!s.echoes.is_empty()).then(|| encode_echoes(&s.echoes)),
                s.rekey.map(|r| r.every.min(i64::MAX as u64) as i64),
                s.rekey.map(|r| r.seconds),
            ],
        )?;
        Ok(())
    }

    pub fn set_status(&self, run_id: i64, status: &str) -> Result<()> {
        let finished = status != "running";
        self.conn.execute(
            "UPDATE runs SET status = ?2,
                finished_at = CASE WHEN ?3 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ELSE NULL END
             WHERE id = ?1",
            params![run_id, status, finished],
        )?;
        Ok(())
    }

    fn run_from_row(row: &rusqlite::Row) -> rusqlite::Result<(RunRecord, String, String)> {
        Ok((
            RunRecord {
                id: row.get(0)?,
                started_at: row.get(1)?,
                finished_at: row.get(2)?,
                status: row.get(3)?,
                destination: row.get(4)?,
                target_json: row.get(5)?,
                client_version: row.get(6)?,
                server_version: row.get(7)?,
                server_strict_kex: row.get(14)?,
                machine: Machine::default(),
                options_json: row.get(9)?,
                plan: Vec::new(),
                seed: row.get::<_, i64>(11)? as u64,
                samples: row.get(12)?,
                client_defaults: row
                    .get::<_, Option<String>>(13)?
                    .and_then(|j| serde_json::from_str(&j).ok())
                    .unwrap_or_default(),
            },
            row.get(8)?,
            row.get(10)?,
        ))
    }

    const RUN_COLUMNS: &'static str = "r.id, r.started_at, r.finished_at, r.status, r.destination,
        r.target_json, r.client_version, r.server_version, r.machine_json, r.options_json,
        r.plan_json, r.seed, (SELECT count(*) FROM samples s WHERE s.run_id = r.id),
        r.client_defaults_json, r.server_strict_kex";

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {} FROM runs r ORDER BY r.id",
            Self::RUN_COLUMNS
        ))?;
        let rows = stmt.query_map([], Self::run_from_row)?;
        rows.map(|r| {
            let (mut run, machine, plan) = r?;
            run.machine = serde_json::from_str(&machine).unwrap_or_default();
            run.plan = serde_json::from_str(&plan).context("reading a run's plan")?;
            Ok(run)
        })
        .collect()
    }

    pub fn run(&self, id: i64) -> Result<Option<RunRecord>> {
        Ok(self.runs()?.into_iter().find(|r| r.id == id))
    }

    /// The newest run that did not finish (interrupted, killed while running, stopped
    /// by failures such as a dropped network, or by its time budget).
    pub fn latest_unfinished(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE status IN ('running', 'interrupted', 'failed', 'budget')
                 ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Delete a run and its samples; false when there is no such run.
    pub fn delete_run(&self, id: i64) -> Result<bool> {
        Ok(self.conn.execute("DELETE FROM runs WHERE id = ?1", [id])? > 0)
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
        let mut sql = "SELECT run_id, item, round, mode, kex, hostkey, cipher, mac, outcome,
                failure_kind, error, wall_s, transfer_s, bytes, client_user_s, client_sys_s,
                negotiated_json, window_bytes, window_s, rtt_s, compression, compression_factor,
                client_window_cpu_s, server_cpu_s, server_cpu_interval_s, server_cpu_bytes,
                phases_json, server_sshd_cpu_s, server_cpu_limit, server_throttled, echoes,
                rekey_bytes, rekey_s
                FROM samples"
            .to_string();
        if !runs.is_empty() {
            let ids: Vec<String> = runs.iter().map(i64::to_string).collect();
            sql.push_str(&format!(" WHERE run_id IN ({})", ids.join(",")));
        }
        sql.push_str(" ORDER BY id");
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([], |r| {
            let mode: String = r.get(3)?;
            let outcome: String = r.get(8)?;
            let kind: Option<String> = r.get(9)?;
            let error: Option<String> = r.get(10)?;
            let user: Option<f64> = r.get(14)?;
            let sys: Option<f64> = r.get(15)?;
            let negotiated: Option<String> = r.get(16)?;
            let message = error.unwrap_or_default();
            Ok(StoredSample {
                run_id: r.get(0)?,
                item: r.get::<_, i64>(1)? as usize,
                round: r.get(2)?,
                sample: Sample {
                    suite: Suite {
                        kex: r.get(4)?,
                        hostkey: r.get(5)?,
                        cipher: r.get(6)?,
                        mac: r.get(7)?,
                        compression: r.get(20)?,
                    },
                    mode: Mode::parse(&mode).ok_or_else(|| {
                        rusqlite::Error::FromSqlConversionFailure(
                            3,
                            rusqlite::types::Type::Text,
                            format!("unknown mode {mode:?}").into(),
                        )
                    })?,
                    outcome: match outcome.as_str() {
                        "ok" => Outcome::Success,
                        "refused" => Outcome::Refused { message },
                        _ => Outcome::Failed {
                            kind: kind
                                .as_deref()
                                .map_or(FailureKind::Other, FailureKind::parse),
                            message,
                        },
                    },
                    wall: Duration::from_secs_f64(r.get::<_, f64>(11)?.max(0.0)),
                    transfer: r
                        .get::<_, Option<f64>>(12)?
                        .map(|t| Duration::from_secs_f64(t.max(0.0))),
                    bytes: r.get::<_, i64>(13)?.max(0) as u64,
                    window: match (r.get::<_, Option<i64>>(17)?, r.get::<_, Option<f64>>(18)?) {
                        (Some(b), Some(t)) => Some(Window {
                            bytes: b.max(0) as u64,
                            time: Duration::from_secs_f64(t.max(0.0)),
                        }),
                        _ => None,
                    },
                    rtt: r
                        .get::<_, Option<f64>>(19)?
                        .map(|t| Duration::from_secs_f64(t.max(0.0))),
                    compression_factor: r.get(21)?,
                    client_window_cpu: match (
                        r.get::<_, Option<f64>>(22)?,
                        r.get::<_, Option<i64>>(17)?,
                        r.get::<_, Option<f64>>(18)?,
                    ) {
                        (Some(c), Some(b), Some(t)) => Some(CpuWindow {
                            seconds: c,
                            peak: c,
                            limit: None,
                            throttled: None,
                            interval: Duration::from_secs_f64(t.max(0.0)),
                            bytes: b.max(0) as u64,
                        }),
                        _ => None,
                    },
                    server_cpu: match (
                        r.get::<_, Option<f64>>(23)?,
                        r.get::<_, Option<f64>>(24)?,
                        r.get::<_, Option<i64>>(25)?,
                    ) {
                        (Some(c), Some(t), Some(b)) => Some(CpuWindow {
                            seconds: c,
                            peak: r.get::<_, Option<f64>>(27)?.unwrap_or(c),
                            limit: r.get(28)?,
                            throttled: r.get(29)?,
                            interval: Duration::from_secs_f64(t.max(0.0)),
                            bytes: b.max(0) as u64,
                        }),
                        _ => None,
                    },
                    phases: r
                        .get::<_, Option<String>>(26)?
                        .and_then(|j| serde_json::from_str(&j).ok()),
                    rekey: match (r.get::<_, Option<i64>>(31)?, r.get::<_, Option<f64>>(32)?) {
                        (Some(every), Some(seconds)) => Some(Rekey {
                            every: every.max(0) as u64,
                            seconds: seconds.max(0.0),
                        }),
                        _ => None,
                    },
                    echoes: r
                        .get::<_, Option<Vec<u8>>>(30)?
                        .map(|b| decode_echoes(&b))
                        .unwrap_or_default(),
                    client_cpu: match (user, sys) {
                        (Some(u), Some(s)) => Some(CpuTimes {
                            user: Duration::from_secs_f64(u.max(0.0)),
                            system: Duration::from_secs_f64(s.max(0.0)),
                        }),
                        _ => None,
                    },
                    negotiated: negotiated
                        .and_then(|j| serde_json::from_str::<Negotiated>(&j).ok()),
                },
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The runs and counted samples (round > 0) a report is about. With neither a
    /// destination nor a run, the newest run's destination.
    pub fn select(&self, sel: &Selection) -> Result<(Vec<RunRecord>, Vec<StoredSample>)> {
        let all = self.runs()?;
        let destination = match (&sel.destination, sel.run) {
            // A destination stored under that very name (say, a host alias `sandbox`)
            // comes first; else `sandbox` and the like name the local sandbox.
            (Some(d), _) if all.iter().any(|r| &r.destination == d) => Some(d.clone()),
            (Some(d), _) => Some(target::stored_destination(d)),
            (None, Some(_)) => None,
            (None, None) => all.last().map(|r| r.destination.clone()),
        };
        let runs: Vec<RunRecord> = all
            .into_iter()
            .filter(|r| sel.run.is_none_or(|id| r.id == id))
            .filter(|r| destination.as_ref().is_none_or(|d| &r.destination == d))
            .filter(|r| {
                sel.since
                    .as_ref()
                    .is_none_or(|s| r.started_at.as_str() >= s.as_str())
            })
            .collect();
        if runs.is_empty() {
            return Ok((runs, Vec::new()));
        }
        let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        let payloads: HashMap<i64, PayloadKind> = runs
            .iter()
            .map(|r| (r.id, payload_of(&r.options_json)))
            .collect();
        let samples = self
            .samples(&ids)?
            .into_iter()
            .filter(|s| s.round > 0)
            .map(|mut s| {
                mark_payload(&mut s.sample, payloads[&s.run_id]);
                s
            })
            .collect();
        Ok((runs, samples))
    }

    /// `PRAGMA integrity_check` result ("ok" when healthy).
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cipher: &str, outcome: Outcome) -> Sample {
        Sample {
            suite: Suite {
                cipher: Some(cipher.into()),
                ..Suite::default()
            },
            mode: Mode::Send,
            outcome,
            wall: Duration::from_millis(300),
            transfer: Some(Duration::from_millis(100)),
            bytes: 1 << 20,
            window: Some(Window {
                bytes: 1 << 19,
                time: Duration::from_millis(40),
            }),
            rtt: Some(Duration::from_micros(150)),
            client_window_cpu: None,
            server_cpu: None,
            phases: None,
            compression_factor: None,
            rekey: Some(Rekey {
                every: 1 << 30,
                seconds: 0.085,
            }),
            echoes: Vec::new(),
            client_cpu: Some(CpuTimes {
                user: Duration::from_millis(50),
                system: Duration::from_millis(20),
            }),
            negotiated: Some(Negotiated {
                cipher_cs: Some(cipher.into()),
                ..Negotiated::default()
            }),
        }
    }

    fn new_run<'a>(machine: &'a Machine, plan: &'a [PlanItem]) -> NewRun<'a> {
        NewRun {
            destination: "local sandbox",
            target_json: "{}".into(),
            resolved: Some(("127.0.0.1", 2222, "root")),
            client_version: "OpenSSH_9.2p1",
            server_version: Some("SSH-2.0-OpenSSH_9.2p1"),
            server_strict_kex: Some(false),
            machine,
            options_json: "{}".into(),
            plan,
            seed: 42,
            client_defaults: &DEFAULTS,
        }
    }

    static DEFAULTS: AlgoLists = AlgoLists::new_const();

    #[test]
    fn round_trips_runs_and_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/db.sqlite");
        let store = Store::open(&path).unwrap();
        let machine = Machine::default();
        let plan = vec![PlanItem {
            mode: Mode::Send,
            suite: Suite::default(),
        }];
        let id = store.create_run(&new_run(&machine, &plan)).unwrap();
        store
            .add_sample(id, 0, 0, &sample("aes128-ctr", Outcome::Success))
            .unwrap();
        let failed = Outcome::failed(FailureKind::ByteCount, "5 bytes expected, 4 counted");
        store
            .add_sample(id, 0, 1, &sample("aes128-ctr", failed.clone()))
            .unwrap();
        // Re-measuring a slot (a resumed run redoing a failure) replaces it.
        store
            .add_sample(id, 0, 1, &sample("aes128-ctr", failed.clone()))
            .unwrap();
        assert_eq!(store.samples(&[id]).unwrap().len(), 2);
        let back = store.samples(&[id]).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].sample.transfer, Some(Duration::from_millis(100)));
        assert_eq!(
            back[0].sample.window,
            Some(Window {
                bytes: 1 << 19,
                time: Duration::from_millis(40)
            })
        );
        assert_eq!(back[0].sample.rtt, Some(Duration::from_micros(150)));
        assert_eq!(
            back[0].sample.rekey,
            Some(Rekey {
                every: 1 << 30,
                seconds: 0.085
            })
        );
        assert_eq!(
            back[0]
                .sample
                .negotiated
                .as_ref()
                .unwrap()
                .cipher_cs
                .as_deref(),
            Some("aes128-ctr")
        );
        assert_eq!(back[1].sample.outcome, failed);
        assert!(back[0].sample.echoes.is_empty());
        assert_eq!(
            store.done_slots(id).unwrap(),
            HashSet::from([(0, 0), (0, 1)])
        );
        // Echo: every round trip comes back (as f32: 7 significant digits).
        let mut echo = sample("aes128-ctr", Outcome::Success);
        echo.mode = Mode::Echo;
        echo.echoes = vec![0.000_123_4, 0.000_098_7, 1.5];
        store.add_sample(id, 0, 2, &echo).unwrap();
        let back = store.samples(&[id]).unwrap();
        assert_eq!(back[2].sample.mode, Mode::Echo);
        assert_eq!(back[2].sample.echoes.len(), 3);
        for (a, b) in back[2].sample.echoes.iter().zip(&echo.echoes) {
            assert!((a - b).abs() / b < 1e-6, "{a} vs {b}");
        }
        store
            .conn
            .execute("DELETE FROM samples WHERE round = 2", [])
            .unwrap();
        assert_eq!(store.latest_unfinished().unwrap(), Some(id));
        store.set_status(id, "complete").unwrap();
        assert_eq!(store.latest_unfinished().unwrap(), None);
        let runs = store.runs().unwrap();
        assert_eq!(
            (runs[0].samples, runs[0].plan.len(), runs[0].seed),
            (2, 1, 42)
        );
        assert_eq!(runs[0].server_strict_kex, Some(false));
        assert!(runs[0].finished_at.is_some());
        assert!(store.delete_run(id).unwrap());
        assert!(store.samples(&[id]).unwrap().is_empty(), "samples cascade");
        assert!(!store.delete_run(id).unwrap());
        assert_eq!(store.integrity_check().unwrap(), "ok");
    }

    #[test]
    fn migrates_a_version_1_database_keeping_its_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
            c.execute(
                "INSERT INTO runs (status, destination, target_json, client_version, machine_json,
                    options_json, plan_json, seed, sshbench_version)
                 VALUES ('complete', 'old', '{}', 'OpenSSH_8.4', '{}', '{}', '[]', 1, '0.0.1')",
                [],
            )
            .unwrap();
            c.execute(
                "INSERT INTO samples (run_id, item, round, mode, cipher, outcome, wall_s, bytes)
                 VALUES (1, 0, 1, 'send', 'aes128-ctr', 'ok', 0.5, 1000)",
                [],
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let v: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let back = store.samples(&[]).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].sample.suite.cipher.as_deref(), Some("aes128-ctr"));
        assert_eq!(
            (
                back[0].sample.server_cpu,
                back[0].sample.suite.compression.clone()
            ),
            (None, None)
        );
        let old = &store.runs().unwrap()[0];
        assert_eq!(old.destination, "old");
        // Runs from before schema v4 did not record the server's strict KEX.
        assert_eq!(old.server_strict_kex, None);
    }

    /// Version 6 gives each sandbox setup its own destination: runs stored before as
    /// `local sandbox` take the label of the setup their options record.
    #[test]
    fn migrating_to_version_6_relabels_sandbox_runs_by_their_setup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v5.sqlite");
        let runs = [
            ("local sandbox", r#"{"sandbox_cpus":"split"}"#),
            ("local sandbox", r#"{"lab":{"cpu":null,"rate_kbit":null}}"#),
            (
                "local sandbox",
                r#"{"lab":{"cpu":0.25,"rate_kbit":null},"sandbox_cpus":"split"}"#,
            ),
            ("local sandbox", "not json"),
            ("pi@nas", r#"{"sandbox_cpus":"shared"}"#),
        ];
        {
            let c = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..5] {
                c.execute_batch(sql).unwrap();
            }
            c.pragma_update(None, "user_version", 5).unwrap();
            for (dest, options) in runs {
                c.execute(
                    "INSERT INTO runs (status, destination, target_json, client_version,
                        machine_json, options_json, plan_json, seed, sshbench_version)
                     VALUES ('complete', ?1, '{}', 'OpenSSH_9.2', '{}', ?2, '[]', 1, '0.1.0')",
                    params![dest, options],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let got: Vec<String> = store
            .runs()
            .unwrap()
            .into_iter()
            .map(|r| r.destination)
            .collect();
        assert_eq!(
            got,
            [
                "local sandbox",
                // Before the placement existed, both ends shared the CPUs.
                "local sandbox (shared CPUs)",
                "local sandbox (sshd limited to 0.25 cores)",
                "local sandbox (shared CPUs)",
                "pi@nas",
            ]
        );
        // The default setup alone is `sandbox` to the reports.
        let (picked, _) = store
            .select(&Selection {
                destination: Some(target::stored_destination("sandbox")),
                ..Selection::default()
            })
            .unwrap();
        assert_eq!(picked.iter().map(|r| r.id).collect::<Vec<_>>(), [1]);
    }

    /// `sandbox` names the local sandbox in reports, unless a destination was stored
    /// under that very name (an ssh_config alias `sandbox`).
    #[test]
    fn a_destination_stored_as_sandbox_comes_before_the_local_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        let plan = [];
        let pick = |store: &Store, given: &str| -> Vec<i64> {
            let sel = Selection {
                destination: Some(given.into()),
                ..Selection::default()
            };
            store.select(&sel).unwrap().0.iter().map(|r| r.id).collect()
        };
        store.create_run(&new_run(&machine, &plan)).unwrap();
        assert_eq!(pick(&store, "sandbox"), [1]);
        assert_eq!(pick(&store, "local sandbox"), [1]);
        store
            .create_run(&NewRun {
                destination: "sandbox",
                ..new_run(&machine, &plan)
            })
            .unwrap();
        assert_eq!(pick(&store, "sandbox"), [2]);
        assert_eq!(pick(&store, "local sandbox"), [1]);
    }

    /// Compressed transfers measured on text (or zeros) are suites of their own in
    /// reports; on random data, and without compression, runs pool as before.
    #[test]
    fn reports_keep_compressed_figures_of_different_data_apart() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        let plan = vec![PlanItem {
            mode: Mode::Send,
            suite: Suite::default(),
        }];
        let zlib = |cipher: &str| {
            let mut s = sample(cipher, Outcome::Success);
            s.suite.compression = Some("zlib@openssh.com".into());
            s
        };
        for payload in ["random", "text", "zeros"] {
            let id = store
                .create_run(&NewRun {
                    options_json: format!(r#"{{"payload":"{payload}"}}"#),
                    ..new_run(&machine, &plan)
                })
                .unwrap();
            store.add_sample(id, 0, 1, &zlib("aes128-ctr")).unwrap();
            store
                .add_sample(id, 1, 1, &sample("aes128-ctr", Outcome::Success))
                .unwrap();
            let mut echo = zlib("aes128-ctr");
            echo.mode = Mode::Echo;
            store.add_sample(id, 2, 1, &echo).unwrap();
        }
        let (_, samples) = store.select(&Selection::default()).unwrap();
        let stats = crate::analysis::aggregate(samples.iter().map(|s| &s.sample));
        let mut groups: Vec<(Mode, Option<String>, usize)> = stats
            .iter()
            .map(|s| (s.mode, s.suite.compression.clone(), s.ok))
            .collect();
        groups.sort();
        let zlib = |data: &str| Some(format!("zlib@openssh.com{data}"));
        assert_eq!(
            groups,
            [
                (Mode::Send, None, 3),
                (Mode::Send, zlib(""), 1),
                (Mode::Send, zlib(", text data"), 1),
                (Mode::Send, zlib(", zeros data"), 1),
                // Keystrokes are the same whatever --payload says.
                (Mode::Echo, zlib(""), 3),
            ]
        );
    }

    #[test]
    fn refuses_a_newer_schema_without_touching_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("future.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", 99).unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(err.contains("schema version 99"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn check_reports_unwritable_places_without_creating() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "x").unwrap();
        assert!(check(&file.join("db.sqlite")).is_err(), "parent is a file");
        let target = dir.path().join("new/db.sqlite");
        check(&target).unwrap();
        assert!(!dir.path().join("new").exists(), "check created something");
    }
}
