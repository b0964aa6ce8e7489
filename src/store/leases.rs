//! Workers sharing a fleet: each registers, claims the next host no live worker holds,
//! renews its lease on that host while it measures, and gives the host back (done,
//! failed, interrupted). A claim is one write transaction: PostgreSQL locks the host's
//! row and passes over rows other workers are claiming (`FOR UPDATE SKIP LOCKED`);
//! SQLite takes its write lock. Every time is the database's clock (seconds since 1970),
//! so workers on machines whose clocks disagree still agree on when a lease ran out.

use super::fleets::FleetHost;
use super::{Store, decode_json, decode_label, decode_status};
use crate::model::{HostStatus, WorkerClient, WorkerPlace};
use anyhow::{Result, anyhow};
use serde::Serialize;

/// A host a worker claimed.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub host: FleetHost,
    /// The worker whose lease on it ran out (it died, or lost the database), if any.
    pub taken_from: Option<i64>,
}

/// A worker of a fleet as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkerRecord {
    pub id: i64,
    pub machine: String,
    pub boot: Option<String>,
    pub pid: u32,
    pub client: WorkerClient,
    pub jobs: usize,
    pub started_s: f64,
    /// Its last claim or renewal.
    pub seen_s: f64,
    /// When it finished or stopped; `None`: measuring, or gone without a word.
    pub ended_s: Option<f64>,
    /// A worker on its machine found its process gone.
    pub gone: bool,
}

/// A host's claim as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostClaim {
    pub position: usize,
    pub worker: Option<i64>,
    pub lease_until: Option<f64>,
    /// Times a worker claimed it: more than one, it was resumed or taken over.
    pub claims: u32,
    pub claimed_s: Option<f64>,
    pub finished_s: Option<f64>,
}

/// A fleet's workers and claims, and the database's clock when they were read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetClock {
    pub now_s: f64,
    pub workers: Vec<WorkerRecord>,
    pub hosts: Vec<HostClaim>,
}

/// A stored time: a finite number, else an error naming the column.
fn time(r: &super::backend::Row, column: &str) -> Result<Option<f64>> {
    match r.get::<Option<f64>>(column)? {
        Some(t) if !t.is_finite() => Err(anyhow!("a time sshbench never writes in {column}")),
        t => Ok(t),
    }
}

impl Store {
    /// Run `f` in one write transaction (see [`super::backend::Backend::begin_write`]).
    fn in_write<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.db.borrow_mut().begin_write()?;
        match f() {
            Ok(t) => self.db.borrow_mut().batch("COMMIT").map(|()| t),
            Err(e) => {
                let _ = self.db.borrow_mut().batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Store a worker joining `fleet`: its id.
    pub fn register_worker(
        &self,
        fleet: i64,
        place: &WorkerPlace,
        client: &WorkerClient,
        jobs: usize,
    ) -> Result<i64> {
        let now = self.db.borrow().epoch();
        let sql = format!(
            "INSERT INTO fleet_workers (fleet_id, machine, boot, pid, client_json, jobs,
             started_s, seen_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, {now}, {now})"
        );
        let client = serde_json::to_string(client)?;
        self.db.borrow_mut().insert(
            &sql,
            &[
                fleet.into(),
                place.machine.as_str().into(),
                place.boot.as_deref().into(),
                place.pid.into(),
                client.into(),
                jobs.into(),
            ],
        )
    }

    /// A worker finished or stopped: it claims nothing more.
    pub fn end_worker(&self, worker: i64) -> Result<()> {
        let now = self.db.borrow().epoch();
        let sql = format!("UPDATE fleet_workers SET ended_s = {now} WHERE id = ?1");
        self.execute(&sql, &[worker.into()])?;
        Ok(())
    }

    /// A worker found dead (its process gone from its machine): its leases end now, so
    /// its hosts are claimed at once instead of when their leases would have run out.
    pub fn mark_gone(&self, fleet: i64, worker: i64) -> Result<()> {
        let now = self.db.borrow().epoch();
        self.in_write(|| {
            let sql = format!(
                "UPDATE fleet_workers SET gone = 1, ended_s = {now} WHERE id = ?1 AND fleet_id = ?2"
            );
            self.execute(&sql, &[worker.into(), fleet.into()])?;
            let sql = format!(
                "UPDATE fleet_hosts SET lease_until = {now} - 1
                 WHERE fleet_id = ?1 AND worker_id = ?2 AND status = 'running'"
            );
            self.execute(&sql, &[fleet.into(), worker.into()])?;
            Ok(())
        })
    }

    /// Claim the next host of `fleet` for `worker` for `lease_s` seconds: the first that
    /// is waiting, was interrupted, or whose worker's lease ran out.
    pub fn claim_host(&self, fleet: i64, worker: i64, lease_s: u32) -> Result<Option<Claim>> {
        let (now, skip) = {
            let db = self.db.borrow();
            (db.epoch(), db.skip_locked())
        };
        let pick = format!(
            "SELECT position, destination, status, run_id, worker_id, way_json FROM fleet_hosts
             WHERE fleet_id = ?1 AND (status IN ('pending', 'interrupted')
                OR (status = 'running' AND (lease_until IS NULL OR lease_until < {now})))
             ORDER BY position LIMIT 1 {skip}"
        );
        let take = format!(
            "UPDATE fleet_hosts SET status = 'running', worker_id = ?3,
                 lease_until = {now} + ?4, claims = claims + 1, claimed_s = {now}
             WHERE fleet_id = ?1 AND position = ?2"
        );
        let seen = format!("UPDATE fleet_workers SET seen_s = {now} WHERE id = ?1");
        self.in_write(|| {
            let mut found = None;
            self.query(&pick, &[fleet.into()], &mut |r| {
                let previous: Option<i64> = r.get("worker_id")?;
                let status = decode_status(r, "fleet_hosts.status", HostStatus::parse)?;
                let host = FleetHost {
                    position: r.get::<i64>("position")?.max(0) as usize,
                    destination: decode_label(r, "fleet_hosts.destination")?,
                    status: HostStatus::Running,
                    problem: None,
                    run_id: r.get("run_id")?,
                    way: match r.text("way_json")? {
                        Some(_) => Some(decode_json(r, "fleet_hosts.way_json")?),
                        None => None,
                    },
                };
                let taken_from = previous.filter(|_| status == HostStatus::Running);
                found = Some(Claim { host, taken_from });
                Ok(())
            })?;
            self.execute(&seen, &[worker.into()])?;
            let Some(claim) = found else {
                return Ok(None);
            };
            let args = [
                fleet.into(),
                claim.host.position.into(),
                worker.into(),
                lease_s.into(),
            ];
            self.execute(&take, &args)?;
            Ok(Some(claim))
        })
    }

    /// Renew `worker`'s lease on host `position`: false when it holds it no more (its
    /// lease ran out and another worker took the host).
    pub fn renew_lease(
        &self,
        fleet: i64,
        position: usize,
        worker: i64,
        lease_s: u32,
    ) -> Result<bool> {
        let now = self.db.borrow().epoch();
        let sql = format!(
            "UPDATE fleet_hosts SET lease_until = {now} + ?4
             WHERE fleet_id = ?1 AND position = ?2 AND worker_id = ?3 AND status = 'running'"
        );
        let held = self.execute(
            &sql,
            &[fleet.into(), position.into(), worker.into(), lease_s.into()],
        )? == 1;
        let seen = format!("UPDATE fleet_workers SET seen_s = {now} WHERE id = ?1");
        self.execute(&seen, &[worker.into()])?;
        Ok(held)
    }

    /// Record the state of a host `worker` holds: its run as soon as it has one (still
    /// running), or how it ended, which gives it back. False when the worker holds it no
    /// more: nothing is written then.
    pub fn set_claimed_host(&self, fleet: i64, worker: i64, host: &FleetHost) -> Result<bool> {
        let now = self.db.borrow().epoch();
        let release = match host.status {
            HostStatus::Running => String::new(),
            _ => format!(", worker_id = NULL, lease_until = NULL, finished_s = {now}"),
        };
        let sql = format!(
            "UPDATE fleet_hosts SET status = ?4, error = NULL, problem_json = ?5, run_id = ?6
             {release} WHERE fleet_id = ?1 AND position = ?2 AND worker_id = ?3"
        );
        let problem = host.problem.as_ref().map(crate::model::HostProblem::encode);
        let args = [
            fleet.into(),
            host.position.into(),
            worker.into(),
            host.status.as_str().into(),
            problem.into(),
            host.run_id.into(),
        ];
        Ok(self.execute(&sql, &args)? == 1)
    }

    /// Put `fleet`'s failed, interrupted and budget-stopped hosts back in line (what
    /// `--resume` measures again; a host's stored run goes on where it stopped).
    pub fn reopen_hosts(&self, fleet: i64) -> Result<()> {
        self.execute(
            "UPDATE fleet_hosts SET status = 'pending', worker_id = NULL, lease_until = NULL
             WHERE fleet_id = ?1 AND status IN ('failed', 'interrupted', 'budget')",
            &[fleet.into()],
        )?;
        Ok(())
    }

    /// `fleet`'s workers and claims now.
    pub fn fleet_clock(&self, fleet: i64) -> Result<FleetClock> {
        let now = self.db.borrow().epoch();
        let mut clock = FleetClock {
            now_s: 0.0,
            workers: Vec::new(),
            hosts: Vec::new(),
        };
        self.query(&format!("SELECT {now} AS now"), &[], &mut |r| {
            clock.now_s = time(r, "now")?.unwrap_or_default();
            Ok(())
        })?;
        let sql = "SELECT * FROM fleet_workers WHERE fleet_id = ?1 ORDER BY id";
        self.query(sql, &[fleet.into()], &mut |r| {
            let pid = u32::try_from(r.get::<i64>("pid")?);
            clock.workers.push(WorkerRecord {
                id: r.get("id")?,
                machine: decode_label(r, "fleet_workers.machine")?,
                boot: r.get("boot")?,
                pid: pid.map_err(|_| anyhow!("a pid sshbench never writes in fleet_workers"))?,
                client: decode_json(r, "fleet_workers.client_json")?,
                jobs: r.get::<i64>("jobs")?.clamp(1, 4096) as usize,
                started_s: time(r, "started_s")?.unwrap_or_default(),
                seen_s: time(r, "seen_s")?.unwrap_or_default(),
                ended_s: time(r, "ended_s")?,
                gone: r.get::<i64>("gone")? != 0,
            });
            Ok(())
        })?;
        let sql = "SELECT position, worker_id, lease_until, claims, claimed_s, finished_s
                   FROM fleet_hosts WHERE fleet_id = ?1 ORDER BY position";
        self.query(sql, &[fleet.into()], &mut |r| {
            clock.hosts.push(HostClaim {
                position: r.get::<i64>("position")?.max(0) as usize,
                worker: r.get("worker_id")?,
                lease_until: time(r, "lease_until")?,
                claims: r.get::<i64>("claims")?.clamp(0, u32::MAX as i64) as u32,
                claimed_s: time(r, "claimed_s")?,
                finished_s: time(r, "finished_s")?,
            });
            Ok(())
        })?;
        Ok(clock)
    }

    /// The newest fleet's id.
    pub fn latest_fleet(&self) -> Result<Option<i64>> {
        let mut id = None;
        self.query("SELECT max(id) AS id FROM fleets", &[], &mut |r| {
            id = r.get("id")?;
            Ok(())
        })?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunOptions;
    use crate::store::NewFleet;
    use std::collections::HashMap;

    fn place(pid: u32) -> WorkerPlace {
        WorkerPlace {
            machine: "m".into(),
            boot: None,
            pid,
        }
    }

    fn fleet(path: &std::path::Path, hosts: usize, lease_s: u32) -> i64 {
        let hosts: Vec<String> = (0..hosts).map(|i| format!("h{i}")).collect();
        let store = Store::open(path).unwrap();
        let f = NewFleet {
            hosts: &hosts,
            options: &RunOptions::default(),
            ssh: &[],
            jobs: 1,
            name: Some("team"),
            lease_s,
            client: &WorkerClient::default(),
            full: crate::model::fleet::FleetFull::All,
        };
        let (id, created) = store.create_or_join(&f).unwrap();
        assert!(created);
        assert_eq!(store.create_or_join(&f).unwrap(), (id, false));
        id
    }

    #[test]
    fn workers_in_threads_claim_each_host_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sqlite");
        let id = fleet(&path, 40, 60);
        let claimed: Vec<Vec<usize>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|k| {
                    let path = &path;
                    s.spawn(move || {
                        let store = Store::open(path).unwrap();
                        let w = store
                            .register_worker(id, &place(k), &WorkerClient::default(), 1)
                            .unwrap();
                        let mut mine = Vec::new();
                        while let Some(c) = store.claim_host(id, w, 60).unwrap() {
                            assert_eq!(c.taken_from, None);
                            assert!(store.renew_lease(id, c.host.position, w, 60).unwrap());
                            let mut h = c.host;
                            h.status = HostStatus::Complete;
                            assert!(store.set_claimed_host(id, w, &h).unwrap());
                            mine.push(h.position);
                        }
                        store.end_worker(w).unwrap();
                        mine
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut all: Vec<usize> = claimed.concat();
        all.sort();
        assert_eq!(all, (0..40).collect::<Vec<_>>());
        let store = Store::open(&path).unwrap();
        let clock = store.fleet_clock(id).unwrap();
        assert!(
            clock
                .hosts
                .iter()
                .all(|h| h.claims == 1 && h.worker.is_none())
        );
        assert!(clock.workers.iter().all(|w| w.ended_s.is_some()));
    }

    #[test]
    fn a_lease_that_ran_out_goes_to_another_worker_and_the_first_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sqlite");
        let id = fleet(&path, 2, 5);
        let store = Store::open(&path).unwrap();
        let client = WorkerClient::default();
        let a = store.register_worker(id, &place(1), &client, 1).unwrap();
        let b = store.register_worker(id, &place(2), &client, 1).unwrap();
        let first = store.claim_host(id, a, 5).unwrap().unwrap();
        assert_eq!(first.host.position, 0);
        // b gets the other host, then nothing while a's lease holds.
        assert_eq!(
            store.claim_host(id, b, 5).unwrap().unwrap().host.position,
            1
        );
        assert_eq!(store.claim_host(id, b, 5).unwrap(), None);
        // a's lease runs out (as if 10 s passed without a renewal).
        let sql = "UPDATE fleet_hosts SET lease_until = lease_until - 10 WHERE position = 0";
        store.execute(sql, &[]).unwrap();
        let taken = store.claim_host(id, b, 5).unwrap().unwrap();
        assert_eq!((taken.host.position, taken.taken_from), (0, Some(a)));
        assert!(!store.renew_lease(id, 0, a, 5).unwrap());
        let mut late = first.host.clone();
        late.status = HostStatus::Failed;
        assert!(!store.set_claimed_host(id, a, &late).unwrap());
        let f = store.fleet(id).unwrap().unwrap();
        assert_eq!(f.hosts[0].status, HostStatus::Running);
        let clock = store.fleet_clock(id).unwrap();
        assert_eq!((clock.hosts[0].worker, clock.hosts[0].claims), (Some(b), 2));
    }

    #[test]
    fn a_gone_worker_loses_its_hosts_at_once_and_resume_reopens_the_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sqlite");
        let id = fleet(&path, 3, 3600);
        let store = Store::open(&path).unwrap();
        let client = WorkerClient::default();
        let a = store.register_worker(id, &place(1), &client, 1).unwrap();
        let b = store.register_worker(id, &place(2), &client, 1).unwrap();
        let held = store.claim_host(id, a, 3600).unwrap().unwrap();
        let mut failed = store.claim_host(id, b, 3600).unwrap().unwrap().host;
        failed.status = HostStatus::Failed;
        assert!(store.set_claimed_host(id, b, &failed).unwrap());
        store.claim_host(id, b, 3600).unwrap().unwrap();
        assert_eq!(store.claim_host(id, b, 3600).unwrap(), None);
        store.mark_gone(id, a).unwrap();
        let taken = store.claim_host(id, b, 3600).unwrap().unwrap();
        assert_eq!(
            (taken.host.position, taken.taken_from),
            (held.host.position, Some(a))
        );
        let clock = store.fleet_clock(id).unwrap();
        let gone: HashMap<i64, bool> = clock.workers.iter().map(|w| (w.id, w.gone)).collect();
        assert_eq!((gone[&a], gone[&b]), (true, false));
        // The failed host waits for `--resume`, which puts it back in line.
        assert_eq!(store.claim_host(id, b, 3600).unwrap(), None);
        store.reopen_hosts(id).unwrap();
        assert_eq!(
            store
                .claim_host(id, b, 3600)
                .unwrap()
                .unwrap()
                .host
                .position,
            1
        );
    }
}
