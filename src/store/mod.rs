//! Storage of runs and raw samples, in a SQLite file (the embedded default) or a shared
//! PostgreSQL database, behind one small trait ([`backend::Backend`]).
//!
//! Every sample is committed as soon as it is measured, so a run stopped by Ctrl-C, a
//! crash or `kill -9` keeps every finished sample and can be resumed. One list of
//! migrations (`schema::MIGRATIONS`) upgrades either backend, and a database from a newer
//! sshbench is refused untouched. ARCHITECTURE.md documents the tables for people who
//! query them directly.

mod backend;
pub mod clients;
mod copy;
mod fleets;
mod leases;
mod pg;
mod pg_pass;
mod pg_tls;
mod runs;
mod samples;
mod schema;
mod sqlite;

pub use copy::{Copied, copy};
pub use fleets::{FleetHost, FleetRecord, NewFleet};
pub use leases::{Claim, FleetClock, HostClaim, WorkerRecord};
pub use pg::{is_url, redact};
pub use runs::{ClientSide, NewRun, RunRecord, SampleCounts};

pub use schema::SCHEMA_VERSION;
use schema::{MIGRATIONS, RELABEL_SANDBOX_AT, relabel_sandbox_runs};

use crate::destination;
use crate::model::{PayloadKind, Sample};
use crate::sys::seal::Sealer;
use anyhow::{Context, Result, anyhow, bail};
use backend::{Backend, Row, Value};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The default database: `$XDG_DATA_HOME/sshbench/sshbench.sqlite` (or the platform's
/// equivalent).
pub fn default_path() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "sshbench")
        .ok_or_else(|| anyhow!("no home directory to keep the database in; use --db PATH"))?;
    Ok(dirs.data_dir().join("sshbench.sqlite"))
}

/// Check that a database can be used, without creating or changing anything (a
/// PostgreSQL URL is checked when it is connected to).
pub fn check(db: &str) -> Result<()> {
    if pg::is_url(db) {
        return Ok(());
    }
    sqlite::check(Path::new(db))
}

/// A stored status, decoded once: a value this version does not know is an error that
/// names its column and the value (shown escaped: rows are not trusted).
fn decode_status<T>(row: &Row, column: &str, parse: fn(&str) -> Option<T>) -> Result<T> {
    let name = column.rsplit('.').next().unwrap_or(column);
    let v: String = row.get(name)?;
    parse(&v).ok_or_else(|| anyhow!("unknown value {v:?} in {column}"))
}

/// A stored label (a destination, a host) that reports print and write into ssh_config
/// blocks: one printable line, else an error naming the column (a destination with a line
/// break would write lines of its own into a `Host` block).
fn decode_label(row: &Row, column: &str) -> Result<String> {
    let name = column.rsplit('.').next().unwrap_or(column);
    let v: String = row.get(name)?;
    match crate::model::text::plain_line(&v) {
        true => Ok(v),
        false => bail!("a value sshbench never writes in {column}: {v:?}"),
    }
}

/// A stored JSON record, decoded once into its type; an error names the column.
fn decode_json<T: serde::de::DeserializeOwned>(row: &Row, column: &str) -> Result<T> {
    let name = column.rsplit('.').next().unwrap_or(column);
    let v: String = row.get(name)?;
    serde_json::from_str(&v).with_context(|| format!("reading {column}"))
}

/// Which stored results a report covers.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Runs of this destination: as stored (the argument given to `run`), or as
    /// [`destination::stored_destination`] names the local sandbox (`sandbox`).
    pub destination: Option<String>,
    /// Only this run.
    pub run: Option<i64>,
    /// Only this client of runs of several (`--ssh`; 0 is the first).
    pub client: Option<u8>,
    /// Runs started at or after this UTC time (`2026-11-30` or `2026-11-30T10:00`).
    pub since: Option<String>,
}

/// The destinations a selection takes.
enum Wanted {
    /// This one: a record's own destination, or the one its run was stored under (all
    /// of a run's clients).
    Named(String),
    Any,
    Among(Vec<String>),
}

impl Wanted {
    /// Whether it takes a record `f` of a run stored under `base`.
    fn takes(&self, base: &str, f: &RunRecord) -> bool {
        match self {
            Wanted::Named(d) => &f.destination == d || base == d,
            Wanted::Any => true,
            Wanted::Among(ds) => ds.contains(&f.destination),
        }
    }
}

/// One stored sample with its place in the run.
#[derive(Clone, Debug)]
pub struct StoredSample {
    pub run_id: i64,
    pub item: usize,
    pub round: u32,
    /// The data its run's transfers carried (`--payload`); set by [`Store::select`].
    pub payload: PayloadKind,
    /// The client that took it, in a run of several: its record's `client` (the
    /// sample's suite then reads as any other, `client` 0, see `store::clients`).
    pub client: u8,
    pub sample: Sample,
}

/// The runs and samples, in whichever backend holds them.
pub struct Store {
    db: RefCell<Box<dyn Backend>>,
    /// This user's key: seals what new runs and fleets store that `--resume` would run
    /// again, and tells which stored ones this user's sshbench wrote.
    sealer: Option<Sealer>,
}

impl Store {
    /// Open a SQLite file (creating it and its directory if needed) and migrate.
    pub fn open(path: &Path) -> Result<Store> {
        Store::over(Box::new(sqlite::Sqlite::open(path)?))
    }

    /// Open `db`: a `postgres://` (or `postgresql://`) URL, else a SQLite file's path.
    pub fn connect(db: &str) -> Result<Store> {
        if pg::is_url(db) {
            Store::over(Box::new(pg::Postgres::connect(db)?))
        } else {
            Store::open(Path::new(db))
        }
    }

    /// Open `db` to read it only (reports): a SQLite file read-only, never created,
    /// migrated or changed; a PostgreSQL database as it is, which must be of this
    /// sshbench's schema.
    pub fn connect_to_read(db: &str) -> Result<Store> {
        // An empty database (a new file, a new PostgreSQL database) has nothing to
        // change: sshbench's tables are made in it, as a run would, and it reads empty.
        let backend: Box<dyn Backend> = match pg::is_url(db) {
            true => Box::new(pg::Postgres::connect(db)?),
            false => match sqlite::existing_version(Path::new(db))? {
                0 => return Store::connect(db),
                v => Box::new(sqlite::Sqlite::open_to_read(Path::new(db), v)?),
            },
        };
        let store = Store {
            db: RefCell::new(backend),
            sealer: None,
        };
        if pg::is_url(db) {
            let tables = store.tables()?;
            if tables.is_empty() {
                drop(store);
                return Store::connect(db);
            }
            if !tables.iter().any(|t| t == "sshbench_schema") {
                bail!(
                    "{} is a database of something else (it has tables, none of them \
                     sshbench's); sshbench keeps its results in its own: give another --db",
                    store.describe()
                );
            }
        }
        let version = store.db.borrow_mut().version()?;
        if version != SCHEMA_VERSION {
            bail!(
                "the database {} has schema version {version}, this sshbench reads \
                 {SCHEMA_VERSION}: `sshbench db upgrade --db URL` brings an older one up to date",
                store.describe()
            );
        }
        Ok(store)
    }

    /// The tables of a PostgreSQL database's schema, read without changing anything.
    fn tables(&self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let sql = "SELECT table_name::text AS name FROM information_schema.tables \
                   WHERE table_schema = current_schema()";
        self.query(sql, &[], &mut |r| {
            names.push(r.get("name")?);
            Ok(())
        })?;
        Ok(names)
    }

    fn over(backend: Box<dyn Backend>) -> Result<Store> {
        let store = Store {
            db: RefCell::new(backend),
            sealer: None,
        };
        let shown = store.describe();
        store
            .migrate()
            .with_context(|| format!("preparing the database {shown}"))?;
        Ok(store)
    }

    /// Seal new runs and fleets with `sealer`, and check stored ones against it.
    pub fn sealed_with(mut self, sealer: Sealer) -> Store {
        self.sealer = Some(sealer);
        self
    }

    /// Whether `seal` is this user's over `parts`; false without a key or a seal.
    pub(super) fn verifies(&self, parts: &[&str], seal: Option<&str>) -> bool {
        match (&self.sealer, seal) {
            (Some(s), Some(seal)) => s.verifies(parts, seal),
            _ => false,
        }
    }

    /// This user's seal over `parts`, when the store has the key.
    pub(super) fn seal(&self, parts: &[&str]) -> Option<String> {
        self.sealer.as_ref().map(|s| s.seal(parts))
    }

    /// Where the store is (a file's path, a URL without its password).
    pub fn describe(&self) -> String {
        self.db.borrow().describe()
    }

    /// How often the database's connection was lost and made again.
    pub fn reconnects(&self) -> u32 {
        self.db.borrow().reconnects()
    }

    /// Each migration in a transaction of its own that no other process runs at the
    /// same time (SQLite's write lock, PostgreSQL's advisory lock).
    fn migrate(&self) -> Result<()> {
        let db = &mut **self.db.borrow_mut();
        loop {
            db.begin()?;
            let version = db.version()?;
            if version > SCHEMA_VERSION {
                db.batch("ROLLBACK")?;
                bail!("schema version {version} is newer than this sshbench ({SCHEMA_VERSION})");
            }
            if version == SCHEMA_VERSION {
                return db.batch("COMMIT");
            }
            let v = version as usize;
            let step = (|| {
                db.batch(&db.schema(MIGRATIONS[v]))?;
                if v + 1 == RELABEL_SANDBOX_AT {
                    relabel_sandbox_runs(db)?;
                }
                db.set_version(version + 1)
            })();
            match step {
                Ok(()) => db.batch("COMMIT")?,
                Err(e) => {
                    let _ = db.batch("ROLLBACK");
                    return Err(e.context(format!("migrating to schema version {}", v + 1)));
                }
            }
        }
    }

    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64> {
        self.db.borrow_mut().execute(sql, params)
    }

    fn query(
        &self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&Row) -> Result<()>,
    ) -> Result<()> {
        self.db.borrow_mut().query(sql, params, each)
    }

    /// Group many inserts into one transaction (bulk loading, e.g. fixtures, copies and
    /// benchmarks); normal runs commit each sample on its own.
    pub fn begin_bulk(&self) -> Result<()> {
        self.db.borrow_mut().begin()
    }

    pub fn end_bulk(&self) -> Result<()> {
        self.db.borrow_mut().batch("COMMIT")
    }

    /// The runs and counted samples (round > 0) a report is about. With neither a
    /// destination nor a run, the newest run's destination.
    pub fn select(&self, sel: &Selection) -> Result<(Vec<RunRecord>, Vec<StoredSample>)> {
        let stored = match (&sel.destination, sel.run) {
            // One run by its id is all that is read: a fleet's host reads its kind's runs
            // so, and reading every run made its cost grow with the fleet's.
            (None, Some(id)) => self.run(id)?.into_iter().collect(),
            _ => self.runs()?,
        };
        // A run of several clients is a record per client (`clients`), each under a
        // destination of its own; the destination it was stored under names them all.
        let all: Vec<(String, RunRecord)> = (stored.iter())
            .flat_map(|r| {
                clients::facets(r.clone())
                    .into_iter()
                    .map(|f| (r.destination.clone(), f))
            })
            .collect();
        let wanted = match (&sel.destination, sel.run) {
            // A destination stored under that very name (say, a host alias `sandbox`)
            // comes first; else `sandbox` and the like name the local sandbox.
            (Some(d), _) if all.iter().any(|(b, f)| &f.destination == d || b == d) => {
                Wanted::Named(d.clone())
            }
            (Some(d), _) => Wanted::Named(destination::stored_destination(d)),
            (None, Some(_)) => Wanted::Any,
            // The newest run's destination, each of its clients'.
            (None, None) => Wanted::Among(
                (all.iter())
                    .filter(|(_, f)| stored.last().is_some_and(|r| r.id == f.id))
                    .map(|(_, f)| f.destination.clone())
                    .collect(),
            ),
        };
        let runs: Vec<RunRecord> = (all.iter())
            .filter(|(base, f)| wanted.takes(base, f))
            .map(|(_, f)| f)
            .filter(|r| sel.run.is_none_or(|id| r.id == id))
            .filter(|r| sel.client.is_none_or(|c| r.client == c))
            .filter(|r| {
                sel.since
                    .as_ref()
                    .is_none_or(|s| r.started_at.as_str() >= s.as_str())
            })
            .cloned()
            .collect();
        let samples = clients::assign(&stored, &runs, self.counted(&runs)?);
        Ok((runs, samples))
    }

    /// The runs of every destination `keep` accepts, started at or after `since` (a
    /// fleet view, which reads each host's samples with [`Store::counted`] in turn).
    pub fn runs_of(
        &self,
        keep: &dyn Fn(&str) -> bool,
        since: Option<&str>,
    ) -> Result<Vec<RunRecord>> {
        Ok((self.runs()?.into_iter())
            .filter(|r| keep(&r.destination))
            .filter(|r| since.is_none_or(|s| r.started_at.as_str() >= s))
            .collect())
    }

    /// The counted samples (round > 0) of `runs`, each with its run's payload, all a
    /// report needs (not what ssh negotiated).
    pub fn counted(&self, runs: &[RunRecord]) -> Result<Vec<StoredSample>> {
        self.counted_of(runs, samples::Columns::Report)
    }

    /// The counted samples of `runs` with only what their figures need (CPU, what ssh
    /// negotiated and said read as absent): a fleet's views.
    pub fn counted_figures(&self, runs: &[RunRecord]) -> Result<Vec<StoredSample>> {
        self.counted_of(runs, samples::Columns::Figures)
    }

    fn counted_of(
        &self,
        runs: &[RunRecord],
        columns: samples::Columns,
    ) -> Result<Vec<StoredSample>> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let mut ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        // A run of several clients comes once per client.
        ids.sort_unstable();
        ids.dedup();
        let read = self.samples_of(&ids, true, columns)?;
        let mut payloads: Vec<(i64, PayloadKind)> =
            runs.iter().map(|r| (r.id, r.options.payload)).collect();
        payloads.sort_by_key(|p| p.0);
        let payload = |id: i64| match payloads.binary_search_by_key(&id, |p| p.0) {
            Ok(i) => payloads[i].1,
            Err(_) => PayloadKind::default(),
        };
        let samples = read
            .into_iter()
            .map(|mut s| {
                s.payload = payload(s.run_id);
                s
            })
            .collect();
        Ok(samples)
    }

    /// "ok" when the database is healthy (SQLite's `PRAGMA integrity_check`; in
    /// PostgreSQL, no sample without its run).
    pub fn integrity_check(&self) -> Result<String> {
        self.db.borrow_mut().integrity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::destination::Target;
    use crate::model::{
        AlgoLists, CpuTimes, CpuWindow, FailureKind, Mode, Negotiated, Outcome, Phases, Problem,
        Rekey, RunOptions, RunStatus, Suite, Window,
    };
    use crate::plan::PlanItem;
    use crate::sys::machine::Machine;
    use crate::sys::seal::Sealer;
    use rusqlite::{Connection, params};
    use std::collections::HashSet;
    use std::time::Duration;

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
            files: None,
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
                every: 1 << 20,
                seconds: 0.085,
                within: 3,
            }),
            echoes: Vec::new(),
            echoes_ref: Vec::new(),
            typing: None,
            client_cpu: Some(CpuTimes {
                user: Duration::from_millis(50),
                system: Duration::from_millis(20),
            }),
            negotiated: Some(Box::new(Negotiated {
                cipher_cs: Some(cipher.into()),
                ..Negotiated::default()
            })),
            stream: None,
        }
    }

    /// Every field of a sample comes back as it went in (the stored forms: the
    /// client's window CPU as seconds over the sample's window, echoes as f32).
    #[test]
    fn every_sample_field_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        let plan = [PlanItem {
            mode: Mode::Send,
            suite: Suite::default(),
        }];
        let id = store.create_run(&new_run(&machine, &plan)).unwrap();
        let mut full = sample("aes128-ctr", Outcome::Success);
        full.suite.kex = Some("curve25519-sha256".into());
        full.suite.hostkey = Some("ssh-ed25519".into());
        full.suite.mac = Some("hmac-sha2-256".into());
        full.suite.compression = Some("zlib@openssh.com".into());
        full.stream = Some(crate::model::Stream {
            of: 4,
            start: 0.5,
            end: 1.25,
        });
        let w = full.window.unwrap();
        full.client_window_cpu = Some(CpuWindow {
            feeder: Some(0.01),
            cores: Some(1.0),
            ..CpuWindow::of(0.03, w.time, w.bytes)
        });
        full.server_cpu = Some(CpuWindow {
            seconds: 0.04,
            peak: 0.035,
            limit: Some(0.25),
            throttled: Some(0.5),
            waited: None,
            cores: Some(2.0),
            feeder: None,
            interval: Duration::from_millis(45),
            bytes: 1 << 19,
        });
        full.phases = Some(Phases {
            tcp: 0.01,
            version: 0.02,
            kex: 0.03,
            auth: 0.04,
            session: 0.05,
        });
        full.compression_factor = Some(0.5);
        full.echoes = vec![0.5, 0.25, 0.125];
        store.add_sample(id, 0, 1, &full).unwrap();
        let back = store.samples(&[id]).unwrap();
        let json = |s: &Sample| serde_json::to_value(s).unwrap();
        assert_eq!(json(&back[0].sample), json(&full));
        assert_eq!((back[0].run_id, back[0].item, back[0].round), (id, 0, 1));
    }

    pub(super) fn new_run<'a>(machine: &'a Machine, plan: &'a [PlanItem]) -> NewRun<'a> {
        NewRun {
            destination: "local sandbox",
            target: &TARGET,
            resolved: Some(("127.0.0.1", 2222, "root")),
            client_version: "OpenSSH_9.2p1",
            server_version: Some("SSH-2.0-OpenSSH_9.2p1"),
            server_strict_kex: Some(false),
            machine,
            options: &OPTIONS,
            plan,
            seed: 42,
            client_defaults: &DEFAULTS,
        }
    }

    static DEFAULTS: AlgoLists = AlgoLists::new_const();
    static TARGET: std::sync::LazyLock<Target> =
        std::sync::LazyLock::new(|| Target::parse("local").unwrap());
    static OPTIONS: std::sync::LazyLock<RunOptions> = std::sync::LazyLock::new(RunOptions::default);

    /// A stored run's destination and options as a real run writes them.
    fn records() -> (String, String) {
        let target = serde_json::to_string(&*TARGET).unwrap();
        (target, serde_json::to_string(&*OPTIONS).unwrap())
    }

    #[test]
    fn round_trips_runs_and_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/db.sqlite");
        let sealer = Sealer::at(&dir.path().join("seal.key")).unwrap();
        let store = Store::open(&path).unwrap().sealed_with(sealer);
        let machine = Machine::default();
        let plan = vec![PlanItem {
            mode: Mode::Send,
            suite: Suite::default(),
        }];
        let id = store.create_run(&new_run(&machine, &plan)).unwrap();
        store
            .add_sample(id, 0, 0, &sample("aes128-ctr", Outcome::Success))
            .unwrap();
        let failed = Outcome::failed(
            FailureKind::ByteCount,
            Problem::ByteCount {
                expected: 5,
                counted: 4,
            },
        );
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
                every: 1 << 20,
                seconds: 0.085,
                within: 3,
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
        echo.echoes_ref = vec![0.000_111_1, 0.000_222_2, 0.5];
        store.add_sample(id, 0, 2, &echo).unwrap();
        let back = store.samples(&[id]).unwrap();
        assert_eq!(back[2].sample.mode, Mode::Echo);
        assert_eq!(back[2].sample.echoes.len(), 3);
        assert_eq!(back[2].sample.echoes_ref.len(), 3);
        assert!((back[2].sample.echoes_ref[1] - 0.000_222_2).abs() < 1e-9);
        for (a, b) in back[2].sample.echoes.iter().zip(&echo.echoes) {
            assert!((a - b).abs() / b < 1e-6, "{a} vs {b}");
        }
        // Typing: its variant and its keys come back; a row out of bounds reads as none.
        let mut typing = sample("aes128-ctr", Outcome::Success);
        typing.mode = Mode::Typing;
        typing.suite.keystrokes = Some(crate::model::KeystrokeTiming::Interval(40));
        typing.suite.exec = Some(crate::model::ExecVia::Master);
        typing.typing = Some(Box::new(crate::model::Typing {
            keys: vec![crate::model::TypedKey {
                idle_s: None,
                position: 0,
                echo_s: 0.0125,
            }],
            wire: None,
        }));
        store.add_sample(id, 0, 3, &typing).unwrap();
        let back = store.samples(&[id]).unwrap();
        assert_eq!(back[3].sample.suite.keystrokes, typing.suite.keystrokes);
        assert_eq!(back[3].sample.suite.exec, typing.suite.exec);
        assert_eq!(back[3].sample.typing, typing.typing);
        let bad = r#"{"keys":[{"idle_s":null,"position":0,"echo_s":1e300}]}"#;
        store
            .execute(
                "UPDATE samples SET typing_json = ?1 WHERE round = 3",
                &[bad.into()],
            )
            .unwrap();
        assert_eq!(store.samples(&[id]).unwrap()[3].sample.typing, None);
        store
            .execute(
                "UPDATE samples SET keystroke_timing = 'interval:0' WHERE round = 3",
                &[],
            )
            .unwrap();
        let err = store.samples(&[id]).unwrap_err().to_string();
        assert!(err.contains("samples.keystroke_timing"), "{err}");
        store
            .execute(
                "UPDATE samples SET keystroke_timing = NULL, exec_via = 'x' WHERE round = 3",
                &[],
            )
            .unwrap();
        let err = store.samples(&[id]).unwrap_err().to_string();
        assert!(err.contains("samples.exec_via"), "{err}");
        store
            .execute("DELETE FROM samples WHERE round >= 2", &[])
            .unwrap();
        assert_eq!(store.latest_unfinished().unwrap(), Some(id));
        store.set_status(id, RunStatus::Complete).unwrap();
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
            let (target, options) = records();
            c.execute(
                "INSERT INTO runs (status, destination, target_json, client_version, machine_json,
                    options_json, plan_json, seed, sshbench_version)
                 VALUES ('complete', 'old', ?1, 'OpenSSH_8.4', '{}', ?2, '[]', 1, '0.0.1')",
                params![target, options],
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
        let v: i64 = store.db.borrow_mut().version().unwrap();
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
        // Read raw: these options are a fixture's fragments, which no run ever stored.
        let mut got: Vec<String> = Vec::new();
        store
            .query("SELECT destination FROM runs ORDER BY id", &[], &mut |r| {
                got.push(r.get("destination")?);
                Ok(())
            })
            .unwrap();
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
        // The default setup alone is `sandbox` to the reports (whose runs hold whole
        // records, as every real run's do).
        let (target, options) = records();
        let whole = "UPDATE runs SET target_json = ?1, options_json = ?2";
        (store.execute(whole, &[target.as_str().into(), options.as_str().into()])).unwrap();
        let (picked, _) = store
            .select(&Selection {
                destination: Some(destination::stored_destination("sandbox")),
                ..Selection::default()
            })
            .unwrap();
        assert_eq!(picked.iter().map(|r| r.id).collect::<Vec<_>>(), [1]);
    }

    /// `--resume` picks and trusts only what this user's sshbench stored: a run stored
    /// without this user's key (another user, a shared database's planted row), or one
    /// whose destination was changed since, is not sealed and never picked.
    #[test]
    fn only_runs_this_user_sealed_are_picked_to_resume() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite");
        let key = |name: &str| Sealer::at(&dir.path().join(name)).unwrap();
        let machine = Machine::default();
        let mine = Store::open(&db).unwrap().sealed_with(key("mine"));
        let id = mine.create_run(&new_run(&machine, &[])).unwrap();
        assert!(mine.run(id).unwrap().unwrap().sealed);
        assert_eq!(mine.latest_unfinished().unwrap(), Some(id));
        // Another user's run, newer: not theirs to resume here, and never picked.
        let theirs = Store::open(&db).unwrap().sealed_with(key("theirs"));
        let other = theirs.create_run(&new_run(&machine, &[])).unwrap();
        assert!(!mine.run(other).unwrap().unwrap().sealed);
        assert_eq!(mine.latest_unfinished().unwrap(), Some(id));
        // A row changed behind sshbench's back loses its seal.
        let planted = r#"{"label":"x","ssh_options":["-o","ProxyCommand=touch /tmp/p"],"destination":"x","is_sandbox":false}"#;
        let sql = "UPDATE runs SET target_json = ?1 WHERE id = ?2";
        mine.execute(sql, &[planted.into(), id.into()]).unwrap();
        assert!(!mine.run(id).unwrap().unwrap().sealed);
        assert_eq!(mine.latest_unfinished().unwrap(), None);
        // Without a key nothing is sealed.
        let keyless = Store::open(&db).unwrap();
        assert!(keyless.runs().unwrap().iter().all(|r| !r.sealed));
    }

    /// A stored value this version does not know is an error naming its column and the
    /// value (escaped), never a default: a status, or a record that does not decode.
    #[test]
    fn an_unknown_stored_value_is_an_error_naming_its_column() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        store.create_run(&new_run(&machine, &[])).unwrap();
        store
            .execute("UPDATE runs SET status = 'done\u{1b}[2J'", &[])
            .unwrap();
        let e = format!("{:#}", store.runs().unwrap_err());
        assert!(
            e.contains("runs.status") && e.contains(r#""done\u{1b}[2J""#),
            "{e}"
        );
        store.set_status(1, RunStatus::Complete).unwrap();
        assert_eq!(store.runs().unwrap()[0].status, RunStatus::Complete);
        store
            .execute("UPDATE runs SET options_json = '{\"rounds\": -1}'", &[])
            .unwrap();
        let e = format!("{:#}", store.runs().unwrap_err());
        assert!(e.contains("runs.options_json"), "{e}");
        // A sample's outcome, failure kind and mode likewise.
        let id = 1;
        store
            .add_sample(id, 0, 1, &sample("aes128-ctr", Outcome::Success))
            .unwrap();
        let read = |sql: &str| {
            store.execute(sql, &[]).unwrap();
            format!("{:#}", store.samples(&[id]).unwrap_err())
        };
        let e = read("UPDATE samples SET outcome = 'exploded'");
        assert!(e.contains(r#""exploded" in samples.outcome"#), "{e}");
        let e = read("UPDATE samples SET outcome = 'failed', failure_kind = 'zap'");
        assert!(e.contains(r#""zap" in samples.failure_kind"#), "{e}");
        let e = read("UPDATE samples SET failure_kind = 'auth', mode = 'teleport'");
        assert!(e.contains(r#""teleport" in samples.mode"#), "{e}");
        store
            .execute("UPDATE samples SET mode = 'send'", &[])
            .unwrap();
        let e = read("UPDATE samples SET problem_json = '{\"problem\":\"zap\"}'");
        assert!(e.contains("samples.problem_json"), "{e}");
        // Prose an older version stored reads back as it was: ssh's words for a refusal,
        // a legacy text for a failure.
        let legacy = "UPDATE samples SET problem_json = NULL, error = 'it broke'";
        store.execute(legacy, &[]).unwrap();
        let back = store.samples(&[id]).unwrap();
        let text = "it broke".to_string();
        let failed = Outcome::failed(FailureKind::Auth, Problem::Legacy { text });
        assert_eq!(back[0].sample.outcome, failed);
        store
            .execute("UPDATE samples SET outcome = 'refused'", &[])
            .unwrap();
        let back = store.samples(&[id]).unwrap();
        assert_eq!(back[0].sample.outcome, Outcome::refused("it broke".into()));
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

    /// A fleet's views read fewer columns than a report, but the same figures: connect's
    /// included, which take each report's common rest from the phases.
    #[test]
    fn a_fleet_view_reads_the_figures_a_report_reads() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        let plan = [PlanItem {
            mode: Mode::Connect,
            suite: Suite::default(),
        }];
        let id = store.create_run(&new_run(&machine, &plan)).unwrap();
        for round in 1..=6u32 {
            let mut s = sample("-", Outcome::Success);
            s.mode = Mode::Connect;
            s.suite = Suite {
                kex: Some(format!("kex{}", round % 2)),
                ..Suite::default()
            };
            let rest = 0.1 + 0.02 * f64::from(round);
            s.phases = Some(Phases {
                tcp: 0.0,
                version: 0.0,
                kex: 0.01,
                auth: rest,
                session: 0.0,
            });
            s.wall = Duration::from_secs_f64(rest + 0.01);
            store.add_sample(id, 0, round, &s).unwrap();
        }
        let runs = store.runs().unwrap();
        let figures = |samples: Vec<StoredSample>| {
            let stats = crate::analysis::aggregate(samples.iter().map(|s| &s.sample));
            let f: Vec<String> = stats
                .iter()
                .map(|s| format!("{:?} {:?}", s.suite.kex, s.figure.map(|f| f.mean)))
                .collect();
            f
        };
        let report = figures(store.counted(&runs).unwrap());
        assert_eq!(report.len(), 2);
        assert_eq!(figures(store.counted_figures(&runs).unwrap()), report);
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
        for payload in [PayloadKind::Random, PayloadKind::Text, PayloadKind::Zeros] {
            let options = RunOptions {
                payload,
                ..RunOptions::default()
            };
            let id = store
                .create_run(&NewRun {
                    options: &options,
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
        let stats =
            crate::analysis::aggregate_reported(samples.iter().map(|s| (&s.sample, s.payload)));
        let mut groups: Vec<(Mode, Option<String>, Option<PayloadKind>, usize)> = stats
            .iter()
            .map(|s| (s.mode, s.suite.compression.clone(), s.suite.data, s.ok))
            .collect();
        groups.sort();
        let zlib = Some("zlib@openssh.com".to_string());
        assert_eq!(
            groups,
            [
                (Mode::Send, None, None, 3),
                (Mode::Send, zlib.clone(), None, 1),
                (Mode::Send, zlib.clone(), Some(PayloadKind::Text), 1),
                (Mode::Send, zlib.clone(), Some(PayloadKind::Zeros), 1),
                // Keystrokes are the same whatever --payload says.
                (Mode::Echo, zlib, None, 3),
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
        assert!(
            sqlite::check(&file.join("db.sqlite")).is_err(),
            "parent is a file"
        );
        let target = dir.path().join("new/db.sqlite");
        sqlite::check(&target).unwrap();
        assert!(!dir.path().join("new").exists(), "check created something");
    }
}
