//! The embedded backend: one SQLite file (bundled SQLite), WAL journal, the schema
//! version in `PRAGMA user_version`.

use super::backend::{Backend, Columns, Row, Value};
use super::schema::SCHEMA_VERSION;
use anyhow::{Context, Result, bail};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use std::path::{Path, PathBuf};
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
        let mut stmt = self.conn.prepare_cached(sql)?;
        let columns = Columns::new(stmt.column_names());
        let n = stmt.column_count();
        let mut rows = stmt.query(params_from_iter(bind(params)))?;
        let mut values = vec![Value::Null; n];
        while let Some(r) = rows.next()? {
            for (i, slot) in values.iter_mut().enumerate() {
                read_into(slot, r.get_ref(i)?);
            }
            each(&Row::new(&columns, &values))?;
        }
        Ok(())
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
