//! Reading stored samples in their report order (by run, then as stored), in one
//! pass over the rows.

use super::backend::{Backend, Value};
use super::samples::{Columns, FIGURE_COLUMNS, report_columns, sample};
use super::{Store, StoredSample};
use anyhow::Result;

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
