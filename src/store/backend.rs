//! The one small interface a database backend implements (SQLite, PostgreSQL): plain
//! SQL with `?N` parameters, values of five kinds, and rows read by column name. The
//! store above it never knows which backend it talks to.

use anyhow::{Result, bail};
use std::collections::HashMap;

/// One SQL value, whichever backend stores it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    /// Make this `Text(t)`, reusing its buffer when it holds text already: a reader
    /// fills one row's values after another, with no allocation per value.
    pub fn set_text(&mut self, t: &str) {
        match self {
            Value::Text(s) => {
                s.clear();
                s.push_str(t);
            }
            _ => *self = Value::Text(t.to_string()),
        }
    }

    /// Make this `Blob(b)`, reusing its buffer as [`Value::set_text`] does.
    pub fn set_blob(&mut self, b: &[u8]) {
        match self {
            Value::Blob(v) => {
                v.clear();
                v.extend_from_slice(b);
            }
            _ => *self = Value::Blob(b.to_vec()),
        }
    }
}

/// A database that stores runs and samples. SQL is written once, in the dialect both
/// understand (`?N` parameters, `ON CONFLICT ... DO UPDATE`); a backend rewrites what it
/// must (PostgreSQL's `$N`, its column types in the schema scripts).
pub trait Backend: Send {
    /// Run a script of statements without parameters (the schema's migrations).
    fn batch(&mut self, sql: &str) -> Result<()>;
    /// Start a transaction that writers elsewhere wait for (ended by `COMMIT` or
    /// `ROLLBACK` through [`Backend::batch`]).
    fn begin(&mut self) -> Result<()>;
    /// Run one statement that does the same when done twice (an update, an upsert, a
    /// delete, an insert a key guards): a backend may repeat it on a connection made
    /// again after the first was lost. The rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    /// Run one `INSERT` (of one or more rows) and give the (last) new row's `id`; never
    /// repeated.
    fn insert(&mut self, sql: &str, params: &[Value]) -> Result<i64>;
    /// Run one query, handing each row to `each` in order (SQLite steps through the rows
    /// on a thread of its own while `each` runs; PostgreSQL's arrive together).
    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&Row) -> Result<()>,
    ) -> Result<()>;
    /// The schema version the database has (0 when empty).
    fn version(&mut self) -> Result<i64>;
    /// Record the schema version (inside the migration's transaction).
    fn set_version(&mut self, version: i64) -> Result<()>;
    /// The SQL expression of "now" as UTC ISO 8601 text, like every stored time.
    fn now(&self) -> &'static str;
    /// The SQL expression of "now" in seconds since 1970 (a real number): leases compare
    /// times on the database's clock, which every worker shares.
    fn epoch(&self) -> &'static str;
    /// Begin a transaction that will write rows others may be claiming: SQLite takes its
    /// write lock at once (`BEGIN IMMEDIATE`); PostgreSQL locks rows as it goes (no
    /// whole-database lock, unlike [`Backend::begin`]).
    fn begin_write(&mut self) -> Result<()>;
    /// What locks the rows a claim selects and passes over those another worker holds:
    /// PostgreSQL's `FOR UPDATE SKIP LOCKED`; nothing in SQLite, whose write lock is whole.
    fn skip_locked(&self) -> &'static str;
    /// A schema script in this backend's column types.
    fn schema(&self, sql: &str) -> String;
    /// "ok" when the database is healthy, else what is wrong.
    fn integrity(&mut self) -> Result<String>;
    /// Where this is, for messages (a file's path, a URL without its password).
    fn describe(&self) -> String;
    /// How often a lost connection was made again (a server's restart).
    fn reconnects(&self) -> u32 {
        0
    }
}

/// The column names of one query's rows, looked up once per query (with ~60 columns
/// and 100,000 rows, looking a name up on each read was most of a report's time): the
/// k-th name a reader asks for is remembered with its column, so a reader that asks in
/// the same order every row (the same literals) needs no lookup at all.
pub struct Columns {
    names: Vec<String>,
    map: HashMap<String, usize>,
    order: std::cell::RefCell<Vec<(usize, usize, usize)>>,
}

impl Columns {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Columns {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_string()).collect();
        Columns {
            map: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect(),
            names,
            order: Default::default(),
        }
    }

    /// The names, in the query's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The column of the `k`-th name a reader asks for; a name the query lacks is
    /// remembered as lacking too (it reads as NULL, see [`Row::get`]).
    fn index(&self, k: usize, name: &str) -> Option<usize> {
        const ABSENT: usize = usize::MAX;
        let key = (name.as_ptr() as usize, name.len());
        let mut order = self.order.borrow_mut();
        if let Some(&(p, l, i)) = order.get(k) {
            if (p, l) == key {
                return (i != ABSENT).then_some(i);
            }
        }
        let found = self.map.get(name).copied();
        let i = found.unwrap_or(ABSENT);
        if k < order.len() {
            order[k] = (key.0, key.1, i);
        } else if k == order.len() {
            order.push((key.0, key.1, i));
        }
        found
    }
}

/// One row of a query, read by column name.
pub struct Row<'a> {
    pub columns: &'a Columns,
    pub values: &'a [Value],
    read: std::cell::Cell<usize>,
}

impl<'a> Row<'a> {
    pub fn new(columns: &'a Columns, values: &'a [Value]) -> Row<'a> {
        Row {
            columns,
            values,
            read: Default::default(),
        }
    }

    /// The value of the column `name`, converted to `T`. A column the query did not
    /// select reads as NULL (queries that need only some columns select only those), so
    /// only an optional `T` can come from it.
    pub fn get<T: FromValue>(&self, name: &str) -> Result<T> {
        let k = self.read.replace(self.read.get() + 1);
        let v = match self.columns.index(k, name).and_then(|i| self.values.get(i)) {
            Some(v) => v,
            None => match T::from_value(&Value::Null) {
                Some(t) => return Ok(t),
                None => bail!("the query has no column {name:?}"),
            },
        };
        T::from_value(v).ok_or_else(|| anyhow::anyhow!("column {name:?} holds {v:?}"))
    }
}

impl Row<'_> {
    /// The text of the column `name` without copying it (`None`: NULL or not selected).
    pub fn text(&self, name: &str) -> Result<Option<&str>> {
        let k = self.read.replace(self.read.get() + 1);
        match self.columns.index(k, name).and_then(|i| self.values.get(i)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Text(s)) => Ok(Some(s)),
            Some(v) => bail!("column {name:?} holds {v:?}"),
        }
    }

    /// The bytes of the column `name` without copying them (`None`: NULL or not
    /// selected).
    pub fn blob(&self, name: &str) -> Result<Option<&[u8]>> {
        let k = self.read.replace(self.read.get() + 1);
        match self.columns.index(k, name).and_then(|i| self.values.get(i)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Blob(b)) => Ok(Some(b)),
            Some(v) => bail!("column {name:?} holds {v:?}"),
        }
    }
}

/// A Rust value a stored value converts to (`None` when it does not).
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Option<i64> {
        match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Option<u32> {
        i64::from_value(v).and_then(|i| u32::try_from(i).ok())
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Option<bool> {
        i64::from_value(v).map(|i| i != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Option<f64> {
        match v {
            Value::Real(x) => Some(*x),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Option<String> {
        match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Option<Vec<u8>> {
        match v {
            Value::Blob(b) => Some(b.clone()),
            _ => None,
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Option<Option<T>> {
        match v {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Int(i.into())
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Value {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Value {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Int(b.into())
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Real(x)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::Blob(b)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_by_name_whatever_order_rows_are_read_in() {
        let cols = Columns::new(["a", "b", "c"]);
        let (a, b, c) = ("a".to_string(), "b".to_string(), "c".to_string());
        // The first row's order is learned; a later row read in another order, or with
        // names from elsewhere, still finds each column by its name.
        assert_eq!([cols.index(0, "a"), cols.index(1, "c")], [Some(0), Some(2)]);
        assert_eq!([cols.index(0, "a"), cols.index(1, "c")], [Some(0), Some(2)]);
        assert_eq!([cols.index(0, &c), cols.index(1, &a)], [Some(2), Some(0)]);
        assert_eq!([cols.index(0, &b), cols.index(2, "c")], [Some(1), Some(2)]);
        assert_eq!(cols.index(1, "nope"), None);
        // A lacking name is remembered as lacking, and a present one still found there.
        assert_eq!([cols.index(1, "nope"), cols.index(1, "a")], [None, Some(0)]);
    }

    #[test]
    fn rows_are_read_by_name_whatever_order_the_reader_asks_in() {
        let columns = Columns::new(["a", "b", "c"]);
        let values = [Value::Int(1), Value::Text("two".into()), Value::Null];
        for _ in 0..2 {
            let row = Row::new(&columns, &values);
            assert_eq!(row.get::<Option<i64>>("c").unwrap(), None);
            assert_eq!(row.get::<String>("b").unwrap(), "two");
            assert_eq!(row.get::<i64>("a").unwrap(), 1);
        }
        // A different name asked k-th is looked up, not taken from the remembered order.
        let row = Row::new(&columns, &values);
        assert_eq!(row.get::<i64>("a").unwrap(), 1);
        assert!(row.get::<i64>("nope").is_err());
        assert_eq!(
            row.get::<Option<i64>>("nope").unwrap(),
            None,
            "not selected: NULL"
        );
        assert!(row.get::<i64>("b").is_err(), "text is not an integer");
    }
}
