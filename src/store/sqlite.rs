//! The embedded backend: one SQLite file (bundled SQLite), WAL journal, the schema
//! version in `PRAGMA user_version`.

use super::backend::{Backend, Columns, Row, Value};
use super::schema::SCHEMA_VERSION;
use anyhow::{Context, Result, bail};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// The schema version of the existing SQLite file `path`, read without changing it:
/// refused unless it is a regular file and either sshbench's database (any version) or an
/// empty one (version 0 and no tables), never someone else's that would gain sshbench's
/// tables and a WAL journal.
pub(super) fn existing_version(path: &Path) -> Result<i64> {
    let shown = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("reading {shown}"))?;
    if !meta.is_file() {
        bail!("--db {shown} is not a regular file; give a database file's path or a new one");
    }
    let conn = read_only(path)?;
    let read = || -> rusqlite::Result<(i64, i64)> {
        let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        Ok((version, tables))
    };
    let (version, tables) = read().with_context(|| format!("{shown} is not a SQLite database"))?;
    if version == 0 && tables > 0 {
        bail!(
            "{shown} is a database of something else (it has tables, none of them \
             sshbench's); sshbench keeps its results in its own: give another --db"
        );
    }
    if version > SCHEMA_VERSION {
        bail!(
            "the database {shown} has schema version {version}, newer than this sshbench \
             understands ({SCHEMA_VERSION}); upgrade sshbench or use another --db"
        );
    }
    Ok(version)
}

/// A read-only connection to `path`. A WAL database whose shared-memory file is gone
/// needs it made, which a directory this user may not write forbids: such a file is read
/// as immutable (no one can be writing it where no one may make that file either).
fn read_only(path: &Path) -> Result<Connection> {
    let shown = path.display();
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("opening the database {shown}"))?;
    let readable = conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0));
    match readable {
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_READONLY_DIRECTORY
                || e.code == rusqlite::ErrorCode::CannotOpen =>
        {
            let encoded = percent_encoding::utf8_percent_encode(
                &path.display().to_string(),
                percent_encoding::NON_ALPHANUMERIC,
            )
            .to_string()
            .replace("%2F", "/");
            let uri = format!("file:{encoded}?immutable=1");
            Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .with_context(|| format!("opening the database {shown}"))
        }
        _ => Ok(conn),
    }
}

/// Check that `path` can be used, without creating or changing anything.
pub fn check(path: &Path) -> Result<()> {
    if path.exists() || path.is_symlink() {
        existing_version(path)?;
        if nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
            bail!("the database {} is not writable", path.display());
        }
        return Ok(());
    }
    // The nearest existing ancestor must let us create the rest.
    let mut dir = path.parent().unwrap_or(Path::new("."));
    if dir.as_os_str().is_empty() {
        dir = Path::new(".");
    }
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        bail!(
            "cannot create the database {}: {} is not a directory",
            path.display(),
            existing.display()
        );
    }
    let wx = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(existing, wx).is_err() {
        bail!(
            "cannot create the database {}: {} is not writable",
            path.display(),
            existing.display()
        );
    }
    Ok(())
}

pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
}

impl Sqlite {
    /// Open an existing database of schema `version` (from [`existing_version`]) to read
    /// it only: nothing is created, migrated or switched to WAL. It must be of this
    /// sshbench's schema.
    pub fn open_to_read(path: &Path, version: i64) -> Result<Sqlite> {
        let shown = path.display();
        if version < SCHEMA_VERSION {
            bail!(
                "the database {shown} was written by an older sshbench (schema {version}, this \
                 one reads {SCHEMA_VERSION}); `sshbench db upgrade --db {shown}` brings it up \
                 to date (so does any `sshbench run` with it)"
            );
        }
        let conn = read_only(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Open (creating the file and its directory if needed).
    pub fn open(path: &Path) -> Result<Sqlite> {
        check(path)?;
        if !path.exists() {
            create_private(path)?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("opening the database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
        })
    }
}

/// Create the database file readable by its owner only, and the directories missing on
/// its way 0700: it names the destinations, users and ports measured. SQLite gives its
/// WAL and shared-memory files the database's mode; existing files and folders keep theirs.
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match made {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            Err(e).with_context(|| format!("creating the database {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn bind(params: &[Value]) -> impl Iterator<Item = rusqlite::types::Value> + '_ {
    use rusqlite::types::Value as V;
    params.iter().map(|p| match p {
        Value::Null => V::Null,
        Value::Int(i) => V::Integer(*i),
        Value::Real(x) => V::Real(*x),
        Value::Text(s) => V::Text(s.clone()),
        Value::Blob(b) => V::Blob(b.clone()),
    })
}

/// Read `v` into `slot`, reusing the slot's text or blob buffer from the row before
/// (most columns keep their kind from row to row: no allocation per value).
fn read_into(slot: &mut Value, v: ValueRef) {
    match v {
        ValueRef::Null => *slot = Value::Null,
        ValueRef::Integer(i) => *slot = Value::Int(i),
        ValueRef::Real(x) => *slot = Value::Real(x),
        ValueRef::Text(t) => slot.set_text(&String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => slot.set_blob(b),
    }
}

/// What the thread stepping through a query's rows hands over: the column names first,
/// then rows in batches (values row by row, and how many rows), or its error.
enum Batch {
    Names(Vec<String>),
    Rows(Vec<Value>, usize),
    Failed(anyhow::Error),
}

/// Rows per batch: enough that handing a batch over costs nothing per row, few enough
/// that the first rows are decoded while SQLite reads the rest.
const BATCH_ROWS: usize = 256;

/// Step through the rows of `sql` on this thread, while the caller's thread decodes the
/// batches already read: over 100,000 samples SQLite's stepping and sshbench's decoding
/// each take about half of a report's time, and two cores do them at once. Batches come
/// back through `spent` to be filled again, so their text buffers are reused.
fn step(
    conn: &Connection,
    sql: &str,
    params: &[Value],
    rows: &mpsc::SyncSender<Batch>,
    spent: &mpsc::Receiver<Vec<Value>>,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(sql)?;
    let names: Vec<String> = stmt.column_names().iter().map(|n| n.to_string()).collect();
    let n = names.len();
    if rows.send(Batch::Names(names)).is_err() {
        return Ok(());
    }
    let mut read = stmt.query(params_from_iter(bind(params)))?;
    let (mut values, mut count) = (Vec::new(), 0);
    while let Some(r) = read.next()? {
        if values.len() < (count + 1) * n {
            values.resize((count + 1) * n, Value::Null);
        }
        for (i, slot) in values[count * n..(count + 1) * n].iter_mut().enumerate() {
            read_into(slot, r.get_ref(i)?);
        }
        count += 1;
        if count == BATCH_ROWS {
            if rows.send(Batch::Rows(values, count)).is_err() {
                return Ok(());
            }
            (values, count) = (spent.try_recv().unwrap_or_default(), 0);
        }
    }
    if count > 0 {
        rows.send(Batch::Rows(values, count)).ok();
    }
    Ok(())
}

/// The reader thread sends its names first and stops after an error; anything else is
/// a bug in [`step`].
fn unreachable_reader() -> Result<()> {
    bail!("the SQLite reader thread stopped without saying why")
}

impl Backend for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<()> {
        Ok(self.conn.execute_batch(sql)?)
    }

    fn begin(&mut self) -> Result<()> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        Ok(stmt.execute(params_from_iter(bind(params)))? as u64)
    }

    fn insert(&mut self, sql: &str, params: &[Value]) -> Result<i64> {
        self.execute(sql, params)?;
        Ok(self.conn.last_insert_rowid())
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&Row) -> Result<()>,
    ) -> Result<()> {
        // A `&mut` moves to the reader thread: a connection is `Send`, not `Sync`.
        let conn = &mut self.conn;
        std::thread::scope(|scope| {
            let (rows, from_reader) = mpsc::sync_channel(2);
            let (to_reader, spent) = mpsc::channel();
            scope.spawn(move || {
                if let Err(e) = step(conn, sql, params, &rows, &spent) {
                    rows.send(Batch::Failed(e)).ok();
                }
            });
            let names = match from_reader.recv() {
                Ok(Batch::Names(names)) => names,
                Ok(Batch::Failed(e)) => return Err(e),
                _ => return unreachable_reader(),
            };
            let columns = Columns::new(&names);
            let n = names.len();
            // Dropping `from_reader` on an error stops the reader at its next batch.
            for batch in from_reader {
                match batch {
                    Batch::Rows(values, count) => {
                        for row in values.chunks_exact(n.max(1)).take(count) {
                            each(&Row::new(&columns, row))?;
                        }
                        to_reader.send(values).ok();
                    }
                    Batch::Failed(e) => return Err(e),
                    Batch::Names(_) => return unreachable_reader(),
                }
            }
            Ok(())
        })
    }

    fn version(&mut self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn set_version(&mut self, version: i64) -> Result<()> {
        Ok(self.conn.pragma_update(None, "user_version", version)?)
    }

    fn now(&self) -> &'static str {
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    }

    fn epoch(&self) -> &'static str {
        "((julianday('now') - 2440587.5) * 86400.0)"
    }

    fn begin_write(&mut self) -> Result<()> {
        self.begin()
    }

    fn skip_locked(&self) -> &'static str {
        ""
    }

    fn schema(&self, sql: &str) -> String {
        sql.to_string()
    }

    fn integrity(&mut self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::backend::Backend;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_database_and_its_folders_are_private_an_existing_one_keeps_its_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("data/sshbench/r.sqlite");
        let mut db = Sqlite::open(&path).unwrap();
        db.batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
            .unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&path.with_extension("sqlite-wal")), 0o600);
        assert_eq!(mode(&tmp.path().join("data")), 0o700);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        drop(db);

        let shared = tmp.path().join("shared.sqlite");
        std::fs::write(&shared, b"").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
        Sqlite::open(&shared).unwrap();
        assert_eq!(mode(&shared), 0o640);
    }
}

#[cfg(test)]
mod query_tests {
    use super::*;
    use crate::store::backend::Backend;

    fn numbers(rows: i64) -> (tempfile::TempDir, Sqlite) {
        let tmp = tempfile::tempdir().unwrap();
        let mut db = Sqlite::open(&tmp.path().join("q.sqlite")).unwrap();
        db.batch(
            "CREATE TABLE t (x INTEGER, label TEXT, b BLOB, r REAL);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100000)
             INSERT INTO t SELECT x, 'row ' || x, x'0102', x / 2.0 FROM n;",
        )
        .unwrap();
        db.execute("DELETE FROM t WHERE x > ?1", &[Value::Int(rows)])
            .unwrap();
        (tmp, db)
    }

    /// Rows across many batches (and a last, partial one) arrive all, in order, with
    /// every kind of value; a batch's reused text buffers never leak an older row's text.
    #[test]
    fn every_row_arrives_in_order_across_batches() {
        for rows in [0, 1, BATCH_ROWS as i64, 3 * BATCH_ROWS as i64 + 7] {
            let (_tmp, mut db) = numbers(rows);
            let mut seen = Vec::new();
            db.query(
                "SELECT x, label, b, r, NULL AS absent FROM t ORDER BY x",
                &[],
                &mut |r| {
                    let x: i64 = r.get("x")?;
                    assert_eq!(r.text("label")?, Some(format!("row {x}").as_str()));
                    assert_eq!(r.blob("b")?, Some(&[1u8, 2][..]));
                    assert_eq!(r.get::<f64>("r")?, x as f64 / 2.0);
                    assert_eq!(r.get::<Option<i64>>("absent")?, None);
                    seen.push(x);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, (1..=rows).collect::<Vec<_>>(), "{rows} rows");
        }
    }

    /// The caller's error stops the query (the reader thread with it) and is what the
    /// query returns; so is SQLite's, for a bad statement.
    #[test]
    fn an_error_on_either_side_ends_the_query_with_it() {
        let (_tmp, mut db) = numbers(10 * BATCH_ROWS as i64);
        let mut calls = 0;
        let err = db
            .query("SELECT x FROM t", &[], &mut |_| {
                calls += 1;
                match calls {
                    3 => bail!("enough"),
                    _ => Ok(()),
                }
            })
            .unwrap_err();
        assert_eq!(err.to_string(), "enough");
        assert_eq!(calls, 3);
        let err = db.query("SELECT nope FROM t", &[], &mut |_| Ok(()));
        assert!(err.unwrap_err().to_string().contains("nope"));
        // The connection still answers afterwards.
        let mut n = 0;
        db.query("SELECT count(*) AS n FROM t", &[], &mut |r| {
            n = r.get("n")?;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 10 * BATCH_ROWS as i64);
    }
}
