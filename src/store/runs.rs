//! The runs table: a run's record as stored and decoded once (its status, destination,
//! options, plan, stops and notes typed), its creation, status and what it learns of
//! itself later (the server's window, the path's TCP rate, stops, notes).

use super::backend::{Row, Value};
use super::{Store, decode_json, decode_label, decode_status};
use crate::destination::Target;
use crate::model::{AlgoLists, Note, RunOptions, RunStatus, Stop};
use crate::plan::PlanItem;
use crate::sys::machine::Machine;
use anyhow::{Context, Result, bail};

/// A run's samples: measured (counted in every report) and warm-ups (never counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleCounts {
    pub measured: u64,
    pub warmups: u64,
}

/// One of the clients a run measured (`--ssh`): its version and what it uses unforced
/// for the destination (`ssh -G`), which is not what another client would.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientSide {
    pub version: String,
    pub defaults: AlgoLists,
}

/// A run as stored.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub destination: String,
    /// Where it went, with the ssh options it was given.
    pub target: Target,
    pub client_version: String,
    pub server_version: Option<String>,
    /// Whether the server offered strict KEX, the Terrapin (CVE-2023-48795)
    /// countermeasure; `None` when its offer was not read (or before schema v4).
    pub server_strict_kex: Option<bool>,
    /// Bytes the server's session channel window opened with; `None` when not read
    /// (or before schema v8).
    pub server_window: Option<u64>,
    /// The sandbox: bytes per second one raw TCP stream moved along its path at the
    /// run's start; `None` for real servers (or before schema v11).
    pub tcp_rate: Option<f64>,
    /// The server's CPU as its login said; `None` when not told (or before schema v28).
    pub server_cpu: Option<crate::model::fleet::ServerCpu>,
    pub machine: Machine,
    pub options: RunOptions,
    pub plan: Vec<PlanItem>,
    pub seed: u64,
    pub samples: i64,
    /// When its newest sample was stored; `None` without samples.
    pub last_sample_at: Option<String>,
    /// The client's unforced preference lists for the destination (`ssh -G`).
    pub client_defaults: AlgoLists,
    /// A run of several clients: each one, in the order of their samples' `client`
    /// (the first is also `client_version` and `client_defaults`); empty for one client.
    pub clients: Vec<ClientSide>,
    /// Which of a run's clients this record speaks for (see `store::clients`); 0 for a
    /// run of one.
    pub client: u8,
    /// A raced run: why each plan item stopped (empty for a fixed design, or before
    /// schema v13).
    pub stops: Vec<(usize, Stop)>,
    /// How the run measured where it departed from the usual (a login without
    /// commands timed over sftp, a connection per sample), each noted once.
    pub notes: Vec<Note>,
    /// Its destination, ssh options and options carry this user's seal: this user's
    /// sshbench stored them on this machine, unchanged since (see `sys::seal`).
    pub sealed: bool,
}

/// What a run's seal covers: what `--resume` would run again.
fn sealed_parts<'a>(target: &'a str, options: &'a str) -> [&'a str; 3] {
    ["run", target, options]
}

impl RunRecord {
    /// Which kind of client took its samples, by the version it stored.
    pub fn client_kind(&self) -> Option<crate::model::ClientKind> {
        crate::offer::client::parse_version(&self.client_version).kind()
    }

    /// Whether its client was HPN-SSH, by the version it stored.
    pub fn client_is_hpn(&self) -> bool {
        crate::offer::client::parse_version(&self.client_version).is_hpn()
    }

    /// ssh reached the destination through a ProxyJump or ProxyCommand (false for runs
    /// from before it was recorded).
    pub fn via_proxy(&self) -> bool {
        self.target.via_proxy
    }
}

/// What a new run records.
pub struct NewRun<'a> {
    pub destination: &'a str,
    pub target: &'a Target,
    pub resolved: Option<(&'a str, u16, &'a str)>,
    pub client_version: &'a str,
    pub server_version: Option<&'a str>,
    pub server_strict_kex: Option<bool>,
    pub machine: &'a Machine,
    pub options: &'a RunOptions,
    pub plan: &'a [PlanItem],
    pub seed: u64,
    pub client_defaults: &'a AlgoLists,
}

/// The client's unforced lists: recommendations write their names into `ssh_config`, so
/// one that is not an algorithm's name is an error; lists no version could read, none.
fn client_defaults(json: Option<String>) -> Result<AlgoLists> {
    let lists: AlgoLists = json
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default();
    if let Some(bad) = lists
        .names()
        .find(|n| !crate::model::text::algorithm_name(n))
    {
        bail!("a value sshbench never writes in runs.client_defaults_json: {bad:?}");
    }
    Ok(lists)
}

/// A run's clients: each one's lists checked as [`client_defaults`] checks the first's,
/// and no more of them than a run may measure.
fn clients(json: Option<String>) -> Result<Vec<ClientSide>> {
    let Some(json) = json else {
        return Ok(Vec::new());
    };
    let sides: Vec<ClientSide> =
        serde_json::from_str(&json).context("reading runs.clients_json")?;
    if sides.len() > crate::model::MAX_CLIENTS {
        bail!(
            "runs.clients_json lists {} clients, more than sshbench measures",
            sides.len()
        );
    }
    for side in &sides {
        client_defaults(Some(serde_json::to_string(&side.defaults)?))
            .context("in runs.clients_json")?;
    }
    Ok(sides)
}

impl Store {
    /// Record the clients of a run that measures several.
    pub fn set_clients(&self, run_id: i64, clients: &[ClientSide]) -> Result<()> {
        let sql = "UPDATE runs SET clients_json = ?2 WHERE id = ?1";
        self.execute(
            sql,
            &[run_id.into(), serde_json::to_string(clients)?.into()],
        )?;
        Ok(())
    }

    pub fn create_run(&self, r: &NewRun) -> Result<i64> {
        let (target, options) = (
            serde_json::to_string(r.target)?,
            serde_json::to_string(r.options)?,
        );
        let seal = self.seal(&sealed_parts(&target, &options));
        let values: Vec<Value> = vec![
            r.destination.into(),
            target.into(),
            r.resolved.map(|x| x.0).into(),
            r.resolved.map(|x| i64::from(x.1)).into(),
            r.resolved.map(|x| x.2).into(),
            r.client_version.into(),
            r.server_version.into(),
            serde_json::to_string(r.machine)?.into(),
            options.into(),
            serde_json::to_string(r.plan)?.into(),
            (r.seed as i64).into(),
            env!("CARGO_PKG_VERSION").into(),
            serde_json::to_string(r.client_defaults)?.into(),
            r.server_strict_kex.into(),
            seal.into(),
        ];
        self.db.borrow_mut().insert(
            "INSERT INTO runs (status, destination, target_json, resolved_host, resolved_port,
                resolved_user, client_version, server_version, machine_json, options_json,
                plan_json, seed, sshbench_version, client_defaults_json, server_strict_kex, seal)
             VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            &values,
        )
    }

    /// A run's or fleet's `finished_at` for `status`: now, unless it is running again.
    pub(super) fn finished_at(&self, status: RunStatus) -> &'static str {
        match status {
            RunStatus::Running => "NULL",
            _ => self.db.borrow().now(),
        }
    }

    /// A run's status.
    pub fn set_status(&self, run_id: i64, status: RunStatus) -> Result<()> {
        let finished = self.finished_at(status);
        let sql = format!("UPDATE runs SET status = ?2, finished_at = {finished} WHERE id = ?1");
        self.execute(&sql, &[run_id.into(), status.as_str().into()])?;
        Ok(())
    }

    fn run_from_row(&self, row: &Row) -> Result<RunRecord> {
        let sealed = {
            let target = row.text("target_json")?.unwrap_or_default();
            let options = row.text("options_json")?.unwrap_or_default();
            self.verifies(&sealed_parts(target, options), row.text("seal")?)
        };
        let plan: String = row.get("plan_json")?;
        let machine: String = row.get("machine_json")?;
        let defaults: Option<String> = row.get("client_defaults_json")?;
        Ok(RunRecord {
            id: row.get("id")?,
            started_at: row.get("started_at")?,
            finished_at: row.get("finished_at")?,
            status: decode_status(row, "runs.status", RunStatus::parse)?,
            destination: decode_label(row, "runs.destination")?,
            target: decode_json(row, "runs.target_json")?,
            client_version: row.get("client_version")?,
            server_version: row.get("server_version")?,
            server_strict_kex: row.get("server_strict_kex")?,
            server_window: row
                .get::<Option<i64>>("server_window")?
                .map(|w| w.max(0) as u64),
            tcp_rate: row.get("path_tcp_rate")?,
            server_cpu: match row.text("server_cpu_json")? {
                Some(_) => Some(decode_json(row, "runs.server_cpu_json")?),
                None => None,
            },
            machine: serde_json::from_str(&machine).unwrap_or_default(),
            options: decode_json(row, "runs.options_json")?,
            plan: serde_json::from_str(&plan).context("reading runs.plan_json")?,
            seed: row.get::<i64>("seed")? as u64,
            samples: row.get("n_samples")?,
            last_sample_at: row.get("last_sample_at")?,
            client_defaults: client_defaults(defaults)?,
            clients: clients(row.get("clients_json")?)?,
            client: 0,
            stops: match row.get::<Option<String>>("stops_json")? {
                Some(j) => serde_json::from_str(&j).context("reading a run's stops")?,
                None => Vec::new(),
            },
            notes: match row.get::<Option<String>>("notes_json")? {
                Some(j) => Note::decode_all(&j).context("reading runs.notes_json")?,
                None => Vec::new(),
            },
            sealed,
        })
    }

    /// Each run's samples, measured and warm-ups, by run id (runs without any left
    /// out).
    pub fn sample_counts(&self) -> Result<Vec<(i64, SampleCounts)>> {
        let mut out = Vec::new();
        let sql = "SELECT run_id, count(*) AS n, \
                   sum(CASE WHEN round = 0 THEN 1 ELSE 0 END) AS warmups \
                   FROM samples GROUP BY run_id ORDER BY run_id";
        self.query(sql, &[], &mut |r| {
            let (n, warmups) = (r.get::<i64>("n")?, r.get::<i64>("warmups")?);
            let count = |v: i64| u64::try_from(v).unwrap_or(0);
            out.push((
                r.get("run_id")?,
                SampleCounts {
                    measured: count(n - warmups),
                    warmups: count(warmups),
                },
            ));
            Ok(())
        })?;
        Ok(out)
    }

    /// The runs `filter` (an SQL condition on `r`) selects, oldest first.
    fn runs_where(&self, filter: &str, params: &[Value]) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT r.*, (SELECT count(*) FROM samples s WHERE s.run_id = r.id) AS n_samples,
             (SELECT max(s.measured_at) FROM samples s WHERE s.run_id = r.id) AS last_sample_at
             FROM runs r WHERE {filter} ORDER BY r.id"
        );
        let mut runs = Vec::new();
        self.query(&sql, params, &mut |row| {
            runs.push(self.run_from_row(row)?);
            Ok(())
        })?;
        Ok(runs)
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>> {
        self.runs_where("1 = 1", &[])
    }

    pub fn run(&self, id: i64) -> Result<Option<RunRecord>> {
        Ok(self.runs_where("r.id = ?1", &[id.into()])?.pop())
    }

    /// The newest run that did not finish (interrupted, killed while running, stopped
    /// by failures such as a dropped network, or by its time budget) among those this
    /// user's sshbench stored (sealed): a shared database's other rows are never picked.
    pub fn latest_unfinished(&self) -> Result<Option<i64>> {
        let mut id = None;
        self.query(
            "SELECT id, target_json, options_json, seal FROM runs
             WHERE status IN ('running', 'interrupted', 'failed', 'budget') ORDER BY id DESC",
            &[],
            &mut |row| {
                let target = row.text("target_json")?.unwrap_or_default();
                let options = row.text("options_json")?.unwrap_or_default();
                let sealed = self.verifies(&sealed_parts(target, options), row.text("seal")?);
                if id.is_none() && sealed {
                    id = Some(row.get("id")?);
                }
                Ok(())
            },
        )?;
        Ok(id)
    }

    /// Delete a run and its samples; false when there is no such run.
    pub fn delete_run(&self, id: i64) -> Result<bool> {
        // Samples first: a PostgreSQL store created by a copy may predate the cascade.
        self.execute("DELETE FROM samples WHERE run_id = ?1", &[id.into()])?;
        Ok(self.execute("DELETE FROM runs WHERE id = ?1", &[id.into()])? > 0)
    }

    /// Record the server's session channel window, as read at the run's start.
    pub fn set_server_window(&self, run_id: i64, window: u64) -> Result<()> {
        let sql = "UPDATE runs SET server_window = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), window.into()])?;
        Ok(())
    }

    /// Record the server's CPU, as its login said.
    pub fn set_server_cpu(&self, run_id: i64, cpu: &crate::model::fleet::ServerCpu) -> Result<()> {
        let sql = "UPDATE runs SET server_cpu_json = ?2 WHERE id = ?1";
        let json = serde_json::to_string(cpu)?;
        self.execute(sql, &[run_id.into(), json.into()])?;
        Ok(())
    }

    /// Record the raw TCP rate of the sandbox's path, as measured at the run's start.
    pub fn set_tcp_rate(&self, run_id: i64, rate: f64) -> Result<()> {
        let sql = "UPDATE runs SET path_tcp_rate = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), rate.into()])?;
        Ok(())
    }

    /// Record why the items of a raced run stopped, each once (a later stop of an item
    /// replaces its earlier one).
    pub fn set_stops(&self, run_id: i64, stops: &[(usize, Stop)]) -> Result<()> {
        let sql = "UPDATE runs SET stops_json = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), serde_json::to_string(stops)?.into()])?;
        Ok(())
    }

    /// Add `notes` to a run's, those it has already once (a resumed run says them again).
    pub fn add_notes(&self, run_id: i64, notes: &[Note]) -> Result<()> {
        if notes.is_empty() {
            return Ok(());
        }
        let Some(run) = self.run(run_id)? else {
            bail!("no run {run_id}");
        };
        let mut all = run.notes;
        let before = all.len();
        for n in notes {
            if !all.contains(n) {
                all.push(n.clone());
            }
        }
        if all.len() > before {
            let sql = "UPDATE runs SET notes_json = ?2 WHERE id = ?1";
            self.execute(sql, &[run_id.into(), Note::encode_all(&all)?.into()])?;
        }
        Ok(())
    }
}
