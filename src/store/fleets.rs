//! Fleet runs: the hosts one `sshbench run` measures, each host's state and its run,
//! so that `--resume` finishes a whole fleet after Ctrl-C or `kill -9`.

use super::backend::Value;
use super::{Store, decode_json, decode_label, decode_status};
use crate::model::fleet::{DEFAULT_LEASE_S, FleetFull, HostKind, HostWay, LEASE_RANGE_S};
use crate::model::{HostProblem, HostStatus, RunOptions, RunStatus, WorkerClient};
use anyhow::{Result, anyhow};
use serde::Serialize;

/// One host of a fleet run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetHost {
    pub position: usize,
    pub destination: String,
    pub status: HostStatus,
    /// Why it did not complete.
    pub problem: Option<HostProblem>,
    pub run_id: Option<i64>,
    /// How it was measured, once its plan was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub way: Option<HostWay>,
}

/// A fleet run as stored.
#[derive(Clone, Debug, Serialize)]
pub struct FleetRecord {
    pub id: i64,
    pub started_at: String,
    pub status: RunStatus,
    pub options: RunOptions,
    /// The ssh options given on the command line for every host.
    pub ssh: Vec<String>,
    pub jobs: usize,
    pub hosts: Vec<FleetHost>,
    /// Its options, ssh options and hosts carry this user's seal (see `sys::seal`).
    pub sealed: bool,
    /// `--fleet NAME`: workers join it by name.
    pub name: Option<String>,
    /// How long a worker's claim on a host lasts unrenewed (seconds, in range).
    pub lease_s: u32,
    /// The client its figures come from, which every worker must match (`None`: stored
    /// before workers shared fleets).
    pub client: Option<WorkerClient>,
    /// Hosts of a kind measured in full before the others measure its contenders.
    pub full: FleetFull,
}

/// A fleet to store.
pub struct NewFleet<'a> {
    pub hosts: &'a [String],
    pub options: &'a RunOptions,
    /// ssh's own options for every host.
    pub ssh: &'a [String],
    pub jobs: usize,
    pub name: Option<&'a str>,
    pub lease_s: u32,
    pub client: &'a WorkerClient,
    pub full: FleetFull,
}

/// What a fleet's seal covers: what `--resume` would run again.
fn sealed_parts<'a>(options: &'a str, ssh: &'a str, hosts: &'a str) -> [&'a str; 4] {
    ["fleet", options, ssh, hosts]
}

/// A host's problem: its typed record, or the prose an older version stored.
fn host_problem(r: &super::backend::Row) -> Result<Option<HostProblem>> {
    if let Some(json) = r.text("problem_json")? {
        return HostProblem::decode(json)
            .map(Some)
            .ok_or_else(|| anyhow!("unknown value {json:?} in fleet_hosts.problem_json"));
    }
    let text: Option<String> = r.get("error")?;
    Ok(text.map(|text| HostProblem::Legacy { text }))
}

/// A fleet's stored name: one that `--fleet` takes, else an error naming the column.
fn fleet_name(r: &super::backend::Row) -> Result<Option<String>> {
    match r.text("name")? {
        Some(n) if crate::model::fleet::valid_fleet_name(n) => Ok(Some(n.to_string())),
        Some(n) => Err(anyhow!(
            "a value sshbench never writes in fleets.name: {n:?}"
        )),
        None => Ok(None),
    }
}

/// A fleet's row, its hosts not yet read and its seal not yet checked.
fn fleet_row(r: &super::backend::Row) -> Result<FleetRecord> {
    let (lo, hi) = (*LEASE_RANGE_S.start() as i64, *LEASE_RANGE_S.end() as i64);
    Ok(FleetRecord {
        id: r.get("id")?,
        started_at: r.get("started_at")?,
        status: decode_status(r, "fleets.status", RunStatus::parse)?,
        options: decode_json(r, "fleets.options_json")?,
        ssh: decode_json(r, "fleets.ssh_json")?,
        jobs: r.get::<i64>("jobs")?.max(1) as usize,
        hosts: Vec::new(),
        sealed: false,
        name: fleet_name(r)?,
        lease_s: (r.get::<Option<i64>>("lease_s")?)
            .map_or(DEFAULT_LEASE_S, |s| s.clamp(lo, hi) as u32),
        client: match r.text("client_json")? {
            Some(_) => Some(decode_json(r, "fleets.client_json")?),
            None => None,
        },
        full: match r.get::<Option<i64>>("full_hosts")? {
            Some(n) => FleetFull::First(n.clamp(1, 1_000_000) as u32),
            None => FleetFull::All,
        },
    })
}

impl Store {
    /// A new fleet run of its hosts, each pending, in one transaction.
    pub fn create_fleet(&self, f: &NewFleet) -> Result<i64> {
        let options_json = serde_json::to_string(f.options)?;
        let ssh_json = serde_json::to_string(f.ssh)?;
        let client_json = serde_json::to_string(f.client)?;
        let hosts = f.hosts.join("\n");
        let seal = self.seal(&sealed_parts(&options_json, &ssh_json, &hosts));
        self.begin_bulk()?;
        let created = (|| {
            let id = self.db.borrow_mut().insert(
                "INSERT INTO fleets (status, options_json, ssh_json, jobs, seal, name, lease_s,
                 client_json, full_hosts) VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                &[
                    options_json.as_str().into(),
                    ssh_json.as_str().into(),
                    f.jobs.into(),
                    seal.into(),
                    f.name.into(),
                    f.lease_s.into(),
                    client_json.as_str().into(),
                    match f.full {
                        FleetFull::First(n) => Value::from(n),
                        FleetFull::All => Value::Null,
                    },
                ],
            )?;
            for (i, h) in f.hosts.iter().enumerate() {
                self.execute(
                    "INSERT INTO fleet_hosts (fleet_id, position, destination, status)
                     VALUES (?1, ?2, ?3, 'pending')",
                    &[id.into(), i.into(), h.as_str().into()],
                )?;
            }
            Ok(id)
        })();
        match created {
            Ok(id) => self.end_bulk().map(|()| id),
            Err(e) => {
                let _ = self.db.borrow_mut().batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The fleet named `name`, stored now if there is none: its id, and whether this call
    /// stored it. Two workers starting at once both end up in the one fleet.
    pub fn create_or_join(&self, f: &NewFleet) -> Result<(i64, bool)> {
        let name = f
            .name
            .ok_or_else(|| anyhow!("joining a fleet needs its name"))?;
        if let Some(id) = self.fleet_named(name)? {
            return Ok((id, false));
        }
        match self.create_fleet(f) {
            Ok(id) => Ok((id, true)),
            // Another worker stored it first (the name is unique).
            Err(e) => match self.fleet_named(name)? {
                Some(id) => Ok((id, false)),
                None => Err(e),
            },
        }
    }

    /// The fleet called `name`.
    pub fn fleet_named(&self, name: &str) -> Result<Option<i64>> {
        let mut id = None;
        let sql = "SELECT id FROM fleets WHERE name = ?1";
        self.query(sql, &[name.into()], &mut |r| {
            id = Some(r.get("id")?);
            Ok(())
        })?;
        Ok(id)
    }

    /// Record a host's state (and its run, once it has one).
    pub fn set_fleet_host(&self, fleet: i64, host: &FleetHost) -> Result<()> {
        self.execute(
            "UPDATE fleet_hosts SET status = ?3, error = NULL, problem_json = ?4, run_id = ?5
             WHERE fleet_id = ?1 AND position = ?2",
            &[
                fleet.into(),
                host.position.into(),
                host.status.as_str().into(),
                host.problem.as_ref().map(HostProblem::encode).into(),
                host.run_id.into(),
            ],
        )?;
        Ok(())
    }

    pub fn set_fleet_status(&self, fleet: i64, status: RunStatus) -> Result<()> {
        let finished = self.finished_at(status);
        let sql = format!("UPDATE fleets SET status = ?2, finished_at = {finished} WHERE id = ?1");
        self.execute(&sql, &[fleet.into(), status.as_str().into()])?;
        Ok(())
    }

    pub fn fleet(&self, id: i64) -> Result<Option<FleetRecord>> {
        let mut fleet = None;
        let mut seal: Option<(String, String, Option<String>)> = None;
        self.query(
            "SELECT * FROM fleets WHERE id = ?1",
            &[id.into()],
            &mut |r| {
                let text = |c| Ok::<_, anyhow::Error>(r.text(c)?.unwrap_or_default().to_string());
                seal = Some((text("options_json")?, text("ssh_json")?, r.get("seal")?));
                fleet = Some(fleet_row(r)?);
                Ok(())
            },
        )?;
        let Some(mut fleet) = fleet else {
            return Ok(None);
        };
        let sql = "SELECT * FROM fleet_hosts WHERE fleet_id = ?1 ORDER BY position";
        self.query(sql, &[id.into()], &mut |r| {
            fleet.hosts.push(FleetHost {
                position: r.get::<i64>("position")?.max(0) as usize,
                destination: decode_label(r, "fleet_hosts.destination")?,
                status: decode_status(r, "fleet_hosts.status", HostStatus::parse)?,
                problem: host_problem(r)?,
                run_id: r.get("run_id")?,
                way: match r.text("way_json")? {
                    Some(_) => Some(decode_json(r, "fleet_hosts.way_json")?),
                    None => None,
                },
            });
            Ok(())
        })?;
        if let Some((options, ssh, seal)) = seal {
            let hosts: Vec<&str> = fleet.hosts.iter().map(|h| h.destination.as_str()).collect();
            let hosts = hosts.join("\n");
            let parts = sealed_parts(&options, &ssh, &hosts);
            fleet.sealed = self.verifies(&parts, seal.as_deref());
        }
        Ok(Some(fleet))
    }

    /// Record a host's kind and how it is measured (its worker's write: `false` when the
    /// worker holds it no more).
    pub fn set_host_way(
        &self,
        fleet: i64,
        worker: i64,
        position: usize,
        kind: &HostKind,
        way: &HostWay,
    ) -> Result<bool> {
        let (kind, way) = (serde_json::to_string(kind)?, serde_json::to_string(way)?);
        let n = self.execute(
            "UPDATE fleet_hosts SET kind_json = ?4, way_json = ?5
             WHERE fleet_id = ?1 AND position = ?2 AND worker_id = ?3",
            &[
                fleet.into(),
                position.into(),
                worker.into(),
                kind.into(),
                way.into(),
            ],
        )?;
        Ok(n == 1)
    }

    /// Each host's kind, where its plan was made: (position, kind).
    pub fn fleet_kinds(&self, fleet: i64) -> Result<Vec<(usize, HostKind)>> {
        let mut kinds = Vec::new();
        let sql = "SELECT position, kind_json FROM fleet_hosts
                   WHERE fleet_id = ?1 AND kind_json IS NOT NULL ORDER BY position";
        self.query(sql, &[fleet.into()], &mut |r| {
            let position = r.get::<i64>("position")?.max(0) as usize;
            kinds.push((position, decode_json(r, "fleet_hosts.kind_json")?));
            Ok(())
        })?;
        Ok(kinds)
    }

    /// How each of `runs` was measured in its fleet, where it was a fleet's host's run.
    pub fn ways_of_runs(&self, runs: &[i64]) -> Result<Vec<(i64, HostWay)>> {
        let mut ways = Vec::new();
        let sql = "SELECT run_id, way_json FROM fleet_hosts
                   WHERE run_id IS NOT NULL AND way_json IS NOT NULL";
        self.query(sql, &[], &mut |r| {
            let run: i64 = r.get("run_id")?;
            if runs.contains(&run) {
                ways.push((run, decode_json(r, "fleet_hosts.way_json")?));
            }
            Ok(())
        })?;
        Ok(ways)
    }

    /// The newest fleet run that did not finish every host, and when it started, among
    /// those this user's sshbench stored (sealed).
    pub fn latest_unfinished_fleet(&self) -> Result<Option<(i64, String)>> {
        let mut found: Vec<(i64, String)> = Vec::new();
        self.query(
            "SELECT id, started_at FROM fleets WHERE status <> 'complete' ORDER BY id DESC",
            &[],
            &mut |r| {
                found.push((r.get("id")?, r.get("started_at")?));
                Ok(())
            },
        )?;
        for (id, started) in found {
            if self.fleet(id)?.is_some_and(|f| f.sealed) {
                return Ok(Some((id, started)));
            }
        }
        Ok(None)
    }

    /// The fleet a run was measured in, if any.
    pub fn fleet_of(&self, run_id: i64) -> Result<Option<i64>> {
        let mut fleet = None;
        let sql = "SELECT fleet_id FROM fleet_hosts WHERE run_id = ?1";
        self.query(sql, &[Value::Int(run_id)], &mut |r| {
            fleet = Some(r.get("fleet_id")?);
            Ok(())
        })?;
        Ok(fleet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Failure, FailureKind, Problem};

    #[test]
    fn a_fleet_keeps_its_hosts_states_and_runs() {
        let dir = tempfile::tempdir().unwrap();
        let sealer = crate::sys::seal::Sealer::at(&dir.path().join("key")).unwrap();
        let store = Store::open(&dir.path().join("f.sqlite"))
            .unwrap()
            .sealed_with(sealer);
        let hosts = ["a".to_string(), "pi@b:2222".to_string()];
        let options = RunOptions::default();
        let client = WorkerClient::default();
        let new = NewFleet {
            hosts: &hosts,
            options: &options,
            ssh: &[],
            jobs: 2,
            name: None,
            lease_s: 60,
            client: &client,
            full: FleetFull::All,
        };
        let id = store.create_fleet(&new).unwrap();
        assert_eq!(store.latest_unfinished_fleet().unwrap().unwrap().0, id);
        let mut f = store.fleet(id).unwrap().unwrap();
        assert_eq!((f.jobs, f.hosts.len()), (2, 2));
        assert!(
            f.hosts
                .iter()
                .all(|h| h.status == HostStatus::Pending && h.run_id.is_none())
        );
        f.hosts[1].status = HostStatus::Failed;
        f.hosts[1].problem = Some(HostProblem::Fatal(Failure {
            kind: FailureKind::Auth,
            problem: Problem::Said {
                said: "Permission denied (publickey)".into(),
            },
        }));
        store.set_fleet_host(id, &f.hosts[1]).unwrap();
        let back = store.fleet(id).unwrap().unwrap();
        assert_eq!(back.hosts[1], f.hosts[1]);
        // What an older version wrote reads back as its prose.
        let sql = "UPDATE fleet_hosts SET problem_json = NULL, error = 'gone' WHERE position = 1";
        store.execute(sql, &[]).unwrap();
        let legacy = HostProblem::Legacy {
            text: "gone".into(),
        };
        let back = store.fleet(id).unwrap().unwrap();
        assert_eq!(back.hosts[1].problem, Some(legacy));
        assert_eq!(back.hosts[0].destination, "a");
        store.set_fleet_status(id, RunStatus::Complete).unwrap();
        assert_eq!(store.latest_unfinished_fleet().unwrap(), None);
        assert_eq!(store.fleet_of(1).unwrap(), None);
    }
}
