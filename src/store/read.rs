//! Reading stored samples in their report order (by run, then as stored). A large
//! selection is read in two halves side by side, the second over a connection of its
//! own: stepping SQLite and decoding rows into samples is most of `show`'s time
//! (BENCHMARKS.md, "`show` over 100,000 samples").

use super::backend::{Backend, Value};
use super::samples::{Columns, FIGURE_COLUMNS, report_columns, sample};
use super::{Store, StoredSample};
use crate::sys::machine::two_cores;
use anyhow::{Result, anyhow};
use std::mem::MaybeUninit;

/// Selections of at least this many rows are read in two halves.
pub(super) const SPLIT_AT: usize = 20_000;

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

/// Rows read into free slots: how many filled the first slots, and the rows beyond them.
struct Filled {
    n: usize,
    beyond: Vec<StoredSample>,
}

/// The rows of `sql` written in order into `slots`, and those that did not fit after
/// them. On an error the rows already written stay in their slots, never dropped.
fn fill(
    db: &mut dyn Backend,
    sql: &str,
    params: &[Value],
    slots: &mut [MaybeUninit<StoredSample>],
) -> Result<Filled> {
    let mut filled = Filled {
        n: 0,
        beyond: Vec::new(),
    };
    db.query(sql, params, &mut |r| {
        let s = stored(r)?;
        match slots.get_mut(filled.n) {
            Some(slot) => {
                slot.write(s);
                filled.n += 1;
            }
            None => filled.beyond.push(s),
        }
        Ok(())
    })?;
    Ok(filled)
}

/// Makes the two filled runs of slots `out`'s elements, in order: the first `a` slots
/// and the `b` from `half` on, moved down to follow the first when fewer than `half`.
///
/// # Safety
/// `out` is empty, slots `0..a` and `half..half + b` of its buffer hold initialized
/// samples, `a <= half`, and `half + b <= out.capacity()`.
unsafe fn close_gap(out: &mut Vec<StoredSample>, half: usize, a: usize, b: usize) {
    debug_assert!(out.is_empty() && a <= half && half + b <= out.capacity());
    let base = out.as_mut_ptr();
    // SAFETY: both ranges lie in the buffer (the caller's promise); `copy` allows them
    // to overlap, and the moved-from slots past `a + b` are never read again.
    unsafe {
        if a < half {
            std::ptr::copy(base.add(half), base.add(a), b);
        }
        out.set_len(a + b);
    }
}

impl Store {
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
        self.samples_split_at(runs, (counted, columns), SPLIT_AT)
    }

    /// [`Store::samples_of`], in halves from `split_at` rows on.
    fn samples_split_at(
        &self,
        runs: &[i64],
        (counted, columns): (bool, Columns),
        split_at: usize,
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
        let select = format!("SELECT {columns} FROM samples {}", f.sql);
        if count >= split_at && two_cores() {
            if let Some(halves) = self.halves(&select, &f, count)? {
                return Ok(halves);
            }
        }
        let sql = format!("{select} ORDER BY run_id, id");
        read(&mut **self.db.borrow_mut(), &sql, &f.params, count)
    }

    /// The rows of `select` in two halves, the second read by another connection at the
    /// same time; `None` when no other connection opens (then one reads all).
    fn halves(&self, select: &str, f: &Filter, count: usize) -> Result<Option<Vec<StoredSample>>> {
        let mut mid: Option<(i64, i64)> = None;
        let at = format!(
            "SELECT run_id, id FROM samples {} ORDER BY run_id, id LIMIT 1 OFFSET {}",
            f.sql,
            count / 2
        );
        self.query(&at, &f.params, &mut |r| {
            mid = Some((r.get("run_id")?, r.get("id")?));
            Ok(())
        })?;
        match mid {
            Some(mid) => self.read_halves(select, f, mid, (count / 2, count)),
            None => Ok(None),
        }
    }

    /// The rows of `select` before the row `(run, id)` read into the first `half` slots
    /// of a vector of `capacity`, those from it on into the slots after, by two
    /// connections at once; `None` when no other connection opens.
    fn read_halves(
        &self,
        select: &str,
        f: &Filter,
        (run, id): (i64, i64),
        (half, capacity): (usize, usize),
    ) -> Result<Option<Vec<StoredSample>>> {
        let Ok(mut other) = self.db.borrow().reopen() else {
            return Ok(None);
        };
        let (k, l) = (f.params.len() + 1, f.params.len() + 2);
        let mut params = f.params.clone();
        params.extend([Value::from(run), Value::from(id)]);
        let first = format!(
            "{select} AND (run_id < ?{k} OR (run_id = ?{k} AND id < ?{l})) ORDER BY run_id, id"
        );
        let second = format!(
            "{select} AND (run_id > ?{k} OR (run_id = ?{k} AND id >= ?{l})) ORDER BY run_id, id"
        );
        // Each half is written straight into its place in the one vector: reading the
        // second into a vector of its own and appending it was a sixth of `show`'s time.
        let mut out: Vec<StoredSample> = Vec::with_capacity(capacity.max(half));
        let (head, tail) = out.spare_capacity_mut().split_at_mut(half);
        let (first_half, second_half) = std::thread::scope(|s| {
            let reader = s.spawn(|| fill(&mut *other, &second, &params, tail));
            let first_half = fill(&mut **self.db.borrow_mut(), &first, &params, head);
            let second_half = reader
                .join()
                .map_err(|_| anyhow!("a reader of the samples panicked"));
            (first_half, second_half)
        });
        // Rows written or removed since they were counted make a half longer or shorter
        // than its slots: the extra rows follow in order, and a gap closes.
        let (a, b) = (first_half?, second_half??);
        // SAFETY: `fill` initialized the first `a.n` slots of `head` (the buffer's from 0,
        // `a.n <= half`) and `b.n` of `tail` (from `half`, within the capacity).
        unsafe { close_gap(&mut out, half, a.n, b.n) };
        out.splice(a.n..a.n, a.beyond);
        out.extend(b.beyond);
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Outcome, Sample, Suite};
    use crate::plan::PlanItem;

    /// Two runs of one suite written at once (their ids interleave), 150 rounds each.
    fn two_runs(store: &Store) -> Vec<i64> {
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
        runs
    }

    /// A store of [`two_runs`], and their counted samples as one reader reads them.
    fn fixture() -> (tempfile::TempDir, Store, Vec<i64>, Vec<StoredSample>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let runs = two_runs(&store);
        let one = store
            .samples_split_at(&runs, (true, Columns::Report), usize::MAX)
            .unwrap();
        (dir, store, runs, one)
    }

    fn key(v: &[StoredSample]) -> Vec<(i64, u32, u128)> {
        v.iter()
            .map(|s| (s.run_id, s.round, s.sample.wall.as_micros()))
            .collect()
    }

    #[test]
    fn halves_read_what_one_reader_reads_in_the_same_order() {
        let (_dir, store, runs, one) = fixture();
        let two = store
            .samples_split_at(&runs, (true, Columns::Report), 10)
            .unwrap();
        assert_eq!(one.len(), 2 * 149);
        assert_eq!(key(&one), key(&two));
        assert!(
            one.windows(2)
                .all(|w| (w[0].run_id, w[0].round) < (w[1].run_id, w[1].round))
        );
    }

    /// Rows added or removed between counting and reading leave a half more or fewer
    /// rows than its slots: the samples still come back whole and in order.
    #[test]
    fn halves_that_do_not_fit_their_slots_come_back_in_order() {
        let (_dir, store, runs, one) = fixture();
        let f = filter(&runs, true);
        let mut mid = None;
        let at = format!(
            "SELECT run_id, id FROM samples {} ORDER BY run_id, id",
            f.sql
        );
        let mut n = 0;
        store
            .query(&at, &f.params, &mut |r| {
                if n == 100 {
                    mid = Some((r.get("run_id")?, r.get("id")?));
                }
                n += 1;
                Ok(())
            })
            .unwrap();
        let select = format!("SELECT {} FROM samples {}", report_columns(), f.sql);
        // (slots for the first half, slots in all): exact, a gap after the first, the
        // first overflowing, the second overflowing, no slots at all.
        for slots in [
            (100, 298),
            (130, 298),
            (70, 298),
            (100, 150),
            (0, 0),
            (298, 298),
        ] {
            let got = store
                .read_halves(&select, &f, mid.unwrap(), slots)
                .unwrap()
                .unwrap();
            assert_eq!(key(&got), key(&one), "{slots:?}");
        }
    }
}
