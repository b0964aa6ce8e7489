//! Packs: a complete run's counted samples kept beside its rows as a few blobs, so that
//! a report reads a large run in a handful of reads instead of stepping the database
//! through every row (stepping SQLite and converting ~45 columns a row was most of
//! `show`'s time over 100,000 samples: BENCHMARKS.md, "Packed runs").
//!
//! The rows stay the record. A run's packs are written when it completes, from its rows,
//! and a report uses them only while they still describe those rows: the same packing
//! format, the run still complete with the same finish time, and as many rows. A resumed
//! run is running (its packs unused) until it completes again and is packed anew.

use super::backend::{Backend, Columns, Row, Value};
use super::read::{SPLIT_AT, stored};
use super::samples::report_columns;
use super::{RunRecord, Store, StoredSample};
use crate::model::RunStatus;
use crate::sys::machine::two_cores;
use anyhow::{Result, anyhow, bail};
use std::mem::MaybeUninit;

/// The columns a reader asks for, or all.
pub(super) type Only = Option<&'static [&'static str]>;

/// The packing's version: a pack of another is not read (its run's rows are).
const FORMAT: i64 = 1;

/// Samples per pack: a blob of a few MB, and packs enough to read in two halves.
const PACK: usize = 8192;

const NULL: u8 = 0;
const INT: u8 = 1;
const REAL: u8 = 2;
const TEXT: u8 = 3;
const BLOB: u8 = 4;

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_len(out, b.len());
    out.extend_from_slice(b);
}

/// One row's values, appended to a pack.
fn put_row(out: &mut Vec<u8>, values: &[Value]) {
    for v in values {
        match v {
            Value::Null => out.push(NULL),
            Value::Int(i) => {
                out.push(INT);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::Real(x) => {
                out.push(REAL);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Text(s) => {
                out.push(TEXT);
                put_bytes(out, s.as_bytes());
            }
            Value::Blob(b) => {
                out.push(BLOB);
                put_bytes(out, b);
            }
        }
    }
}

/// A pack being filled: its column names first, then its rows (their count at the end).
struct Packer {
    names: Vec<String>,
    rows: usize,
    body: Vec<u8>,
}

impl Packer {
    fn add(&mut self, values: &[Value]) {
        put_row(&mut self.body, values);
        self.rows += 1;
    }

    fn finish(self) -> (usize, Vec<u8>) {
        let mut out = Vec::with_capacity(self.body.len() + 64 * self.names.len());
        put_len(&mut out, self.names.len());
        for n in &self.names {
            put_bytes(&mut out, n.as_bytes());
        }
        put_len(&mut out, self.rows);
        out.extend_from_slice(&self.body);
        (self.rows, out)
    }
}

/// Reads a pack; every read is bounded by the blob (a damaged one is an error).
struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.data.len() {
            bail!("a pack ends early");
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
    }

    fn len(&mut self) -> Result<usize> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn eight(&mut self) -> Result<[u8; 8]> {
        Ok(self.take(8)?.try_into().expect("eight bytes"))
    }

    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    fn text(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?)
            .map_err(|_| anyhow!("a pack holds text that is not UTF-8"))
    }

    /// Past the next value.
    fn skip(&mut self) -> Result<()> {
        match self.take(1)?[0] {
            NULL => {}
            INT | REAL => {
                self.take(8)?;
            }
            TEXT | BLOB => {
                self.bytes()?;
            }
            tag => bail!("a pack holds a value of unknown kind {tag}"),
        }
        Ok(())
    }

    /// The next value into `slot`, reusing its text or blob buffer.
    fn value(&mut self, slot: &mut Value) -> Result<()> {
        match self.take(1)?[0] {
            NULL => *slot = Value::Null,
            INT => *slot = Value::Int(i64::from_le_bytes(self.eight()?)),
            REAL => *slot = Value::Real(f64::from_le_bytes(self.eight()?)),
            TEXT => slot.set_text(self.text()?),
            BLOB => slot.set_blob(self.bytes()?),
            tag => bail!("a pack holds a value of unknown kind {tag}"),
        }
        Ok(())
    }
}

/// Hand each row of `pack` to `each`, read by name as a query's rows are; with `only`,
/// the other columns read as absent, as a query that did not select them.
fn unpack(pack: &[u8], only: Only, each: &mut dyn FnMut(&Row) -> Result<()>) -> Result<()> {
    let mut r = Reader { data: pack };
    let n = r.len()?;
    let names = (0..n).map(|_| r.text()).collect::<Result<Vec<&str>>>()?;
    // A column not asked for gets a name no reader asks for.
    let hidden: Vec<bool> = (names.iter())
        .map(|n| only.is_some_and(|o| !o.contains(n)))
        .collect();
    let columns = Columns::new((names.iter().zip(&hidden)).map(|(n, &h)| if h { "" } else { n }));
    let rows = r.len()?;
    let mut values = vec![Value::Null; n];
    for _ in 0..rows {
        for (slot, &h) in values.iter_mut().zip(&hidden) {
            match h {
                true => r.skip()?,
                false => r.value(slot)?,
            }
        }
        each(&Row::new(&columns, &values))?;
    }
    if !r.data.is_empty() {
        bail!("a pack holds more than its rows");
    }
    Ok(())
}

/// The samples of the packs `parts` (run, part) written into `slots` in order, each
/// pack read and unpacked in turn; exactly as many as the slots.
fn unpack_into(
    db: &mut dyn Backend,
    (parts, only): (&[(i64, i64)], Only),
    slots: &mut [MaybeUninit<StoredSample>],
) -> Result<()> {
    let mut n = 0;
    for &(run, part) in parts {
        let sql = "SELECT data FROM sample_packs WHERE run_id = ?1 AND part = ?2";
        db.query(sql, &[run.into(), part.into()], &mut |r| {
            let pack = r.blob("data")?.ok_or_else(|| anyhow!("an empty pack"))?;
            unpack(pack, only, &mut |r| {
                let slot = (slots.get_mut(n)).ok_or_else(|| anyhow!("packs hold more samples"))?;
                slot.write(stored(r)?);
                n += 1;
                Ok(())
            })
        })?;
    }
    if n != slots.len() {
        bail!("packs hold {n} samples where they said {}", slots.len());
    }
    Ok(())
}

/// One stored pack's description.
struct Part {
    run_id: i64,
    part: i64,
    parts: i64,
    format: i64,
    samples: usize,
    rows: i64,
    finished_at: Option<String>,
}

impl Store {
    /// Pack a complete run's counted samples, replacing its packs; nothing for a run
    /// that is not complete.
    fn pack_run(&self, run: &RunRecord) -> Result<()> {
        self.pack_run_by(run, PACK)
    }

    /// [`Store::pack_run`], `per_pack` samples a pack.
    fn pack_run_by(&self, run: &RunRecord, per_pack: usize) -> Result<()> {
        if run.status != RunStatus::Complete {
            return Ok(());
        }
        let sql = format!(
            "SELECT {} FROM samples WHERE run_id = ?1 AND round > 0 ORDER BY id",
            report_columns()
        );
        let mut done: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut open: Option<Packer> = None;
        self.query(&sql, &[run.id.into()], &mut |r| {
            let p = open.get_or_insert_with(|| Packer {
                names: r.columns.names().to_vec(),
                rows: 0,
                body: Vec::new(),
            });
            p.add(r.values);
            if p.rows == per_pack {
                done.extend(open.take().map(Packer::finish));
            }
            Ok(())
        })?;
        done.extend(open.map(Packer::finish));
        // No transaction of its own (a run may complete inside a caller's): a pack
        // row says how many packs its run has, so packs half written are never read.
        self.execute(
            "DELETE FROM sample_packs WHERE run_id = ?1",
            &[run.id.into()],
        )?;
        let parts = done.len();
        for (part, (samples, data)) in done.into_iter().enumerate() {
            self.execute(
                "INSERT INTO sample_packs
                 (run_id, part, parts, format, samples, run_rows, finished_at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                &[
                    run.id.into(),
                    part.into(),
                    parts.into(),
                    FORMAT.into(),
                    samples.into(),
                    run.samples.into(),
                    run.finished_at.clone().into(),
                    data.into(),
                ],
            )?;
        }
        Ok(())
    }

    /// Pack run `id` if it is complete (an aid only: a run left unpacked is read from
    /// its rows).
    pub(super) fn pack(&self, id: i64) {
        if let Ok(Some(run)) = self.run(id) {
            let _ = self.pack_run(&run);
        }
    }

    /// Pack every complete run, each as far as it goes (an aid only: a run left
    /// unpacked is read from its rows).
    pub(super) fn pack_complete_runs(&self) {
        for run in self.runs().unwrap_or_default() {
            let _ = self.pack_run(&run);
        }
    }

    /// The packs (run, part, samples) of those of `runs` whose packs describe their
    /// rows, in order.
    fn packed_parts(&self, runs: &[RunRecord]) -> Result<Vec<(i64, i64, usize)>> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=runs.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT run_id, part, parts, format, samples, run_rows, finished_at FROM sample_packs
             WHERE run_id IN ({}) ORDER BY run_id, part",
            marks.join(", ")
        );
        let params: Vec<Value> = runs.iter().map(|r| r.id.into()).collect();
        let mut parts: Vec<Part> = Vec::new();
        self.query(&sql, &params, &mut |r| {
            parts.push(Part {
                run_id: r.get("run_id")?,
                part: r.get("part")?,
                parts: r.get("parts")?,
                format: r.get("format")?,
                samples: r.get::<i64>("samples")?.max(0) as usize,
                rows: r.get("run_rows")?,
                finished_at: r.get("finished_at")?,
            });
            Ok(())
        })?;
        let mut out = Vec::new();
        for run in runs.iter().filter(|r| r.status == RunStatus::Complete) {
            let mine: Vec<&Part> = parts.iter().filter(|p| p.run_id == run.id).collect();
            let whole = !mine.is_empty()
                && mine.iter().enumerate().all(|(k, p)| {
                    p.part == k as i64
                        && p.parts == mine.len() as i64
                        && p.format == FORMAT
                        && p.rows == run.samples
                        && p.finished_at == run.finished_at
                });
            if whole {
                out.extend(mine.iter().map(|p| (p.run_id, p.part, p.samples)));
            }
        }
        out.sort_unstable_by_key(|p| (p.0, p.1));
        Ok(out)
    }

    /// The counted samples of the runs of `runs` that are packed, in run order, and the
    /// ids of those that are not (read from their rows). A damaged pack reads as none.
    pub(super) fn unpacked(&self, runs: &[RunRecord], only: Only) -> (Vec<StoredSample>, Vec<i64>) {
        let parts = self.packed_parts(runs).unwrap_or_default();
        let read = (!parts.is_empty())
            .then(|| self.read_packs(&parts, only))
            .and_then(Result::ok);
        let packed = |id: i64| read.is_some() && parts.iter().any(|p| p.0 == id);
        let rest = runs
            .iter()
            .map(|r| r.id)
            .filter(|&id| !packed(id))
            .collect();
        (read.unwrap_or_default(), rest)
    }

    /// The samples of the packs `parts`: the first ones read and unpacked here, the
    /// others at the same time over another connection, each straight into its place in
    /// one vector.
    fn read_packs(&self, parts: &[(i64, i64, usize)], only: Only) -> Result<Vec<StoredSample>> {
        let total: usize = parts.iter().map(|p| p.2).sum();
        // Split where the first packs hold about half the samples.
        let (mut split, mut half) = (0, 0);
        while split < parts.len() && 2 * (half + parts[split].2) <= total {
            half += parts[split].2;
            split += 1;
        }
        let keys: Vec<(i64, i64)> = parts.iter().map(|p| (p.0, p.1)).collect();
        let mut out: Vec<StoredSample> = Vec::with_capacity(total);
        let slots = &mut out.spare_capacity_mut()[..total];
        // Another connection only for a large selection: opening one costs more than
        // unpacking a few thousand samples (a connection to PostgreSQL, a fleet's hosts).
        let other = (total >= SPLIT_AT && two_cores() && split < parts.len())
            .then(|| self.db.borrow().reopen());
        match other {
            Some(Ok(mut other)) => {
                let (head, tail) = slots.split_at_mut(half);
                let (first, second) = std::thread::scope(|s| {
                    let reader = s.spawn(|| unpack_into(&mut *other, (&keys[split..], only), tail));
                    let first =
                        unpack_into(&mut **self.db.borrow_mut(), (&keys[..split], only), head);
                    (first, reader.join())
                });
                first?;
                second.map_err(|_| anyhow!("a pack reader panicked"))??;
            }
            _ => unpack_into(&mut **self.db.borrow_mut(), (&keys, only), slots)?,
        }
        // SAFETY: every call succeeded, so all `total` slots were written (each call
        // checks that it filled its slots exactly); after an error the written ones
        // are leaked, never read.
        unsafe { out.set_len(total) };
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuTimes, CpuWindow, FailureKind, Mode, Outcome, Phases, Sample, Suite};
    use crate::model::{Stream, Window};
    use crate::plan::PlanItem;
    use crate::sys::machine::Machine;
    use std::time::Duration;

    /// Samples of every shape: failures, echo sessions, connects with phases, streams,
    /// absent and present figures, in a few suites.
    fn varied(k: u32) -> Sample {
        let mode = [Mode::Connect, Mode::Send, Mode::Receive, Mode::Echo][k as usize % 4];
        let outcome = match k % 7 {
            5 => Outcome::failed(FailureKind::Timeout, format!("gave up {k}")),
            6 => Outcome::Refused {
                message: "no matching cipher".into(),
            },
            _ => Outcome::Success,
        };
        let suite = Suite {
            cipher: (k % 3 > 0).then(|| format!("cipher{}", k % 5)),
            mac: (k % 2 == 0).then(|| "hmac-sha2-256-etm@openssh.com".into()),
            kex: (mode == Mode::Connect).then(|| "curve25519-sha256".into()),
            ..Suite::default()
        };
        let t = Duration::from_micros(100_000 + u64::from(k) * 37);
        let mut s = Sample::new(suite, mode, outcome);
        s.wall = t * 2;
        s.bytes = u64::from(k) << 20;
        if mode.is_transfer() {
            s.window = Some(Window {
                bytes: u64::from(k) << 19,
                time: t,
            });
            s.client_window_cpu = Some(CpuWindow::of(0.01 * f64::from(k), t, 1 << 19));
        }
        s.client_cpu = (k % 2 == 1).then_some(CpuTimes {
            user: t / 3,
            system: t / 5,
        });
        if mode == Mode::Connect {
            s.phases = Some(Phases {
                tcp: 0.001,
                version: 0.02,
                kex: 0.015 * f64::from(k % 4),
                auth: 0.06,
                session: 0.05,
            });
        }
        if mode == Mode::Echo {
            s.echoes = (0..k % 9).map(|i| 1e-4 * f64::from(i + 1)).collect();
            s.echoes_ref = s.echoes.iter().map(|x| x * 1.5).collect();
        }
        s.stream = (k % 11 == 3).then_some(Stream {
            of: 4,
            start: 0.25,
            end: 1.5,
        });
        s
    }

    /// A new run in `store`: its id.
    fn new_run(store: &Store) -> i64 {
        let machine = Machine::default();
        let plan = [PlanItem {
            mode: Mode::Send,
            suite: Suite::default(),
        }];
        let run = crate::store::tests::new_run(&machine, &plan);
        store.create_run(&run).unwrap()
    }

    /// A store with one complete run of `n` counted samples (and warm-ups), packed
    /// `per_pack` to a pack, and its record.
    fn packed(n: u32, per_pack: usize) -> (tempfile::TempDir, Store, RunRecord) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("p.sqlite")).unwrap();
        let id = new_run(&store);
        for k in 0..n {
            store
                .add_sample(id, k as usize % 5, k / 5, &varied(k))
                .unwrap();
        }
        store.set_status(id, RunStatus::Running).unwrap();
        store
            .execute("UPDATE runs SET status = 'complete'", &[])
            .unwrap();
        let run = store.run(id).unwrap().unwrap();
        store.pack_run_by(&run, per_pack).unwrap();
        (dir, store, run)
    }

    fn shown(v: &[StoredSample]) -> Vec<String> {
        v.iter()
            .map(|s| {
                let json = serde_json::to_string(&s.sample).unwrap();
                format!("{} {} {} {json}", s.run_id, s.item, s.round)
            })
            .collect()
    }

    #[test]
    fn packs_hold_what_the_rows_hold_in_order() {
        let (_dir, store, run) = packed(100, 7);
        let parts = store.packed_parts(std::slice::from_ref(&run)).unwrap();
        assert_eq!(parts.len(), 14, "95 counted samples, 7 to a pack");
        let (from_packs, rest) = store.unpacked(std::slice::from_ref(&run), None);
        assert!(rest.is_empty());
        let rows = store
            .samples_of(&[run.id], true, super::super::samples::Columns::Report)
            .unwrap();
        assert_eq!(rows.len(), 95);
        assert_eq!(shown(&from_packs), shown(&rows));
        // A fleet's views read only the figures' columns, from packs as from rows.
        let figures = super::super::samples::Columns::Figures;
        let rows = store.samples_of(&[run.id], true, figures).unwrap();
        let from_packs = store.counted_figures(std::slice::from_ref(&run)).unwrap();
        assert!(rows.iter().all(|s| s.sample.client_window_cpu.is_none()));
        assert_eq!(shown(&from_packs), shown(&rows));
    }

    /// Packs that no longer describe their run's rows are not read: a sample added
    /// since, a run running again, another finish time, another format, damage.
    #[test]
    fn stale_or_damaged_packs_are_not_read() {
        let (_dir, store, run) = packed(40, 8);
        let read = |store: &Store| {
            let run = store.run(run.id).unwrap().unwrap();
            store.unpacked(std::slice::from_ref(&run), None)
        };
        assert_eq!(read(&store).0.len(), 35);
        let changes = [
            "UPDATE sample_packs SET run_rows = run_rows + 1",
            "UPDATE runs SET status = 'running'",
            "UPDATE runs SET finished_at = '2030-01-01T00:00:00Z'",
            "UPDATE sample_packs SET format = 99 WHERE part = 2",
            "DELETE FROM sample_packs WHERE part = 1",
            "DELETE FROM sample_packs WHERE part = 4",
            "UPDATE sample_packs SET data = substr(data, 1, 200) WHERE part = 3",
            "UPDATE sample_packs SET samples = 9 WHERE part = 0",
        ];
        for change in changes {
            let (_dir, store, run) = packed(40, 8);
            store.execute(change, &[]).unwrap();
            let (samples, rest) = read(&store);
            assert!(samples.is_empty() && rest == [run.id], "{change}");
        }
    }

    /// A report over a packed run and a run read from its rows gets both, by run.
    #[test]
    fn packed_and_unpacked_runs_read_together_in_run_order() {
        let (_dir, store, run) = packed(30, 8);
        let other = new_run(&store);
        store.add_sample(other, 0, 1, &varied(1)).unwrap();
        let runs = store.runs().unwrap();
        let both = store.counted(&runs).unwrap();
        let ids: Vec<i64> = both.iter().map(|s| s.run_id).collect();
        assert_eq!(ids.len(), 26);
        assert!(ids[..25].iter().all(|&i| i == run.id) && ids[25] == other);
        // Completing the other run packs it too; deleting a run deletes its packs.
        store.set_status(other, RunStatus::Complete).unwrap();
        let runs = store.runs().unwrap();
        assert!(store.unpacked(&runs, None).1.is_empty());
        assert_eq!(shown(&store.counted(&runs).unwrap()), shown(&both));
        assert!(store.delete_run(run.id).unwrap());
        let mut left = 0;
        let sql = "SELECT count(*) AS n FROM sample_packs WHERE run_id = ?1";
        store
            .query(sql, &[run.id.into()], &mut |r| {
                left = r.get::<i64>("n")?;
                Ok(())
            })
            .unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn a_truncated_or_garbled_pack_is_an_error_not_a_panic() {
        let mut p = Packer {
            names: vec!["a".into(), "b".into()],
            rows: 0,
            body: Vec::new(),
        };
        p.add(&[Value::Int(7), Value::Text("x".into())]);
        p.add(&[Value::Real(0.5), Value::Blob(vec![1, 2, 3])]);
        let (_, data) = p.finish();
        let mut rows = 0;
        unpack(&data, None, &mut |_| {
            rows += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(rows, 2);
        for cut in 0..data.len() {
            assert!(
                unpack(&data[..cut], None, &mut |_| Ok(())).is_err(),
                "cut at {cut}"
            );
        }
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..2000 {
            let mut bad = data.clone();
            let i = rng.usize(..bad.len());
            bad[i] = rng.u8(..);
            let _ = unpack(&bad, None, &mut |_| Ok(()));
        }
    }
}
