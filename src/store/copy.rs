//! Copying stored runs from one store to another, whichever their backends (a laptop's
//! SQLite file into the team's PostgreSQL, or back): every column as stored, each run
//! with its samples in one transaction, so an interrupted copy leaves whole runs only.

use super::Store;
use super::backend::Value;
use anyhow::{Result, bail};
use std::collections::HashSet;

/// What a copy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    pub runs: usize,
    pub samples: usize,
    /// Runs the target holds already (the same start, destination and seed).
    pub skipped: usize,
}

/// A run's identity across stores, where its `id` differs.
type RunKey = (String, String, i64);

impl Store {
    /// Every row of a query: its column names and values.
    fn rows(&self, sql: &str, params: &[Value]) -> Result<(Vec<String>, Vec<Vec<Value>>)> {
        let (mut names, mut rows) = (Vec::new(), Vec::new());
        self.query(sql, params, &mut |r| {
            if names.is_empty() {
                names = r.columns.names().to_vec();
            }
            rows.push(r.values.to_vec());
            Ok(())
        })?;
        Ok((names, rows))
    }

    fn run_keys(&self) -> Result<HashSet<RunKey>> {
        let mut keys = HashSet::new();
        self.query(
            "SELECT started_at, destination, seed FROM runs",
            &[],
            &mut |r| {
                keys.insert((r.get("started_at")?, r.get("destination")?, r.get("seed")?));
                Ok(())
            },
        )?;
        Ok(keys)
    }

    /// Insert rows under their names, all columns but `id` (the target numbers its own
    /// rows), many rows per statement; `set` overrides one column. Gives the last new
    /// row's id.
    fn insert_rows(
        &self,
        table: &str,
        names: &[String],
        rows: &[Vec<Value>],
        set: Option<(&str, Value)>,
    ) -> Result<i64> {
        let keep: Vec<usize> = (0..names.len()).filter(|&i| names[i] != "id").collect();
        let cols: Vec<&str> = keep.iter().map(|&i| names[i].as_str()).collect();
        let mut last = 0;
        // A few thousand parameters a statement: well within both backends' limits.
        for chunk in rows.chunks((4000 / keep.len().max(1)).max(1)) {
            let mut values = Vec::with_capacity(chunk.len() * keep.len());
            let mut tuples = Vec::with_capacity(chunk.len());
            for row in chunk {
                let first = values.len();
                for &i in &keep {
                    values.push(match &set {
                        Some((c, x)) if *c == names[i] => x.clone(),
                        _ => row.get(i).cloned().unwrap_or(Value::Null),
                    });
                }
                let marks: Vec<String> = (first + 1..=values.len())
                    .map(|k| format!("?{k}"))
                    .collect();
                tuples.push(format!("({})", marks.join(", ")));
            }
            let sql = format!(
                "INSERT INTO {table} ({}) VALUES {}",
                cols.join(", "),
                tuples.join(", ")
            );
            last = self.db.borrow_mut().insert(&sql, &values)?;
        }
        Ok(last)
    }

    /// Copy one run and its samples into `to` inside one transaction: the samples'
    /// count.
    fn copy_run(&self, to: &Store, names: &[String], run: &[Value], id: i64) -> Result<usize> {
        let (sample_names, samples) = self.rows(
            "SELECT * FROM samples WHERE run_id = ?1 ORDER BY id",
            &[id.into()],
        )?;
        to.begin_bulk()?;
        let copied = (|| {
            let new_id = to.insert_rows("runs", names, &[run.to_vec()], None)?;
            let set = Some(("run_id", new_id.into()));
            to.insert_rows("samples", &sample_names, &samples, set)?;
            Ok(new_id)
        })();
        match copied {
            Ok(_) => {
                to.end_bulk()?;
                Ok(samples.len())
            }
            Err(e) => {
                let _ = to.db.borrow_mut().batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

/// Copy the runs `only` names (all when empty) from `from` into `to`, skipping runs the
/// target holds already; `each` hears of every run as it is copied (its id in `from`,
/// its samples).
pub fn copy(
    from: &Store,
    to: &Store,
    only: &[i64],
    each: &mut dyn FnMut(i64, usize),
) -> Result<Copied> {
    let (names, runs) = from.rows("SELECT * FROM runs ORDER BY id", &[])?;
    let id_of = |row: &[Value]| -> i64 {
        let i = names.iter().position(|n| n == "id").unwrap_or(0);
        match row.get(i) {
            Some(Value::Int(id)) => *id,
            _ => -1,
        }
    };
    if let Some(missing) = only
        .iter()
        .find(|id| !runs.iter().any(|r| id_of(r) == **id))
    {
        bail!("no run {missing} in {}", from.describe());
    }
    let key_of = |row: &[Value]| -> Option<RunKey> {
        let get = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .and_then(|i| row.get(i))
        };
        match (get("started_at")?, get("destination")?, get("seed")?) {
            (Value::Text(t), Value::Text(d), Value::Int(s)) => Some((t.clone(), d.clone(), *s)),
            _ => None,
        }
    };
    let mut have = to.run_keys()?;
    let mut done = Copied::default();
    for run in runs
        .iter()
        .filter(|r| only.is_empty() || only.contains(&id_of(r)))
    {
        let key = key_of(run);
        if key.as_ref().is_some_and(|k| have.contains(k)) {
            done.skipped += 1;
            continue;
        }
        let id = id_of(run);
        let n = from.copy_run(to, &names, run, id)?;
        done.runs += 1;
        done.samples += n;
        have.extend(key);
        each(id, n);
    }
    if done.runs > 0 {
        // Fresh statistics after a bulk load, so the first reports plan their reads well.
        to.db.borrow_mut().batch("ANALYZE")?;
    }
    Ok(done)
}
