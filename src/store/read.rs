//! Reading stored samples in their report order (by run, then as stored). A large
//! selection is read in two halves side by side, the second over a connection of its
//! own: stepping SQLite and decoding rows into samples is most of `show`'s time
//! (BENCHMARKS.md, "`show` over 100,000 samples").

use super::backend::{Backend, Value};
use super::samples::{Columns, FIGURE_COLUMNS, report_columns, sample};
use super::{Store, StoredSample};
use anyhow::{Result, anyhow};

/// Selections of at least this many rows are read in two halves.
const SPLIT_AT: usize = 20_000;

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
        out.push(StoredSample {
            run_id: r.get("run_id")?,
            item: r.get::<i64>("item")? as usize,
            round: r.get("round")?,
            payload: Default::default(),
            sample: sample(r)?,
        });
        Ok(())
    })?;
    Ok(out)
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
        let Some((run, id)) = mid else {
            return Ok(None);
        };
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
        let (half, rest) = (count / 2, count - count / 2);
        std::thread::scope(|s| {
            let reader = s.spawn(|| read(&mut *other, &second, &params, rest));
            let mut out = read(&mut **self.db.borrow_mut(), &first, &params, count)?;
            let tail = reader
                .join()
                .map_err(|_| anyhow!("a reader of the samples panicked"))??;
            debug_assert!(out.len() >= half.saturating_sub(1));
            out.extend(tail);
            Ok(Some(out))
        })
    }
}

/// Whether a second reader has a core of its own.
fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Outcome, Sample, Suite};
    use crate::plan::PlanItem;

    #[test]
    fn halves_read_what_one_reader_reads_in_the_same_order() {
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
        // Two runs written at once: their ids interleave.
        for round in 0..150u32 {
            for &run in &runs {
                let mut s = Sample::new(Suite::default(), Mode::Connect, Outcome::Success);
                s.wall = std::time::Duration::from_micros(u64::from(round) * 7 + run as u64);
                store.add_sample(run, 0, round, &s).unwrap();
            }
        }
        let key = |v: &[StoredSample]| -> Vec<(i64, u32, u128)> {
            v.iter()
                .map(|s| (s.run_id, s.round, s.sample.wall.as_micros()))
                .collect()
        };
        let one = store
            .samples_split_at(&runs, (true, Columns::Report), usize::MAX)
            .unwrap();
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
}
