//! The shared backend: a PostgreSQL database (`postgres://user@host/db`) that several
//! sshbench processes, on several client machines, write into at once. The schema is
//! SQLite's, its column types mapped; the version lives in `sshbench_schema`, and a
//! migration holds an advisory lock so two processes never migrate at once. TLS as libpq
//! does it (`sslmode`, `sslrootcert`: see [`pg_tls`](super::pg_tls)), and so is a
//! password the URL leaves out found ([`pg_pass`](super::pg_pass)). A connection the
//! server ends (a restart, a failover) is made again and the statement repeated, where
//! repeating it is safe.

use super::backend::{Backend, Columns, Row, Value};
use crate::sys::secrets;
use anyhow::{Context, Result, bail};
use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Config, Statement};
use postgres_native_tls::MakeTlsConnector;
use std::collections::HashMap;
use std::error::Error;
use std::time::Duration;

/// Whether `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// The URL as it may be shown: without its password, whether in the user part
/// (`user:PASSWORD@host`) or a parameter (`?password=...`, `sslpassword=`, as libpq
/// takes them), which is left out whole.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let shown = match rest.rsplit_once('@') {
        Some((auth, host)) => {
            let user = auth.split_once(':').map_or(auth, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => format!("{scheme}://{rest}"),
    };
    let kept: Vec<&str> = (query.unwrap_or_default().split('&'))
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let key = p.split_once('=').map_or(*p, |(k, _)| k);
            !key.to_ascii_lowercase().contains("password")
        })
        .collect();
    match kept.is_empty() {
        true => shown,
        false => format!("{shown}?{}", kept.join("&")),
    }
}

/// Connect, the whole start (TCP, TLS, authentication) within the config's
/// `connect_timeout`, as libpq bounds it: the driver bounds only the TCP connection, and
/// a server that takes it and never answers would hold sshbench forever.
fn connect_within(config: Config, tls: MakeTlsConnector) -> Result<Client> {
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(Duration::MAX);
    let (tx, rx) = std::sync::mpsc::channel();
    // Left behind on a timeout: the process is about to end with the error anyway.
    std::thread::spawn(move || {
        let _ = tx.send(config.connect(tls));
    });
    match rx.recv_timeout(limit) {
        Ok(client) => Ok(client?),
        Err(_) => bail!(
            "no answer within {} s (connect_timeout): is a PostgreSQL server listening there?",
            limit.as_secs_f64()
        ),
    }
}

/// Where the URL is silent: a server that vanishes mid-run (its host down, the network
/// cut) is given up on within about a minute, where TCP alone would wait 15 minutes
/// (data unacknowledged) or 2 hours and more (a reply awaited). A live server's kernel
/// answers both checks however long a query takes.
fn bound_dead_peers(config: &mut Config, url: &str) {
    match config.get_tcp_user_timeout().copied() {
        None => {
            config.tcp_user_timeout(Duration::from_secs(60));
        }
        // libpq counts it in milliseconds; the driver took the number as seconds.
        Some(given) => {
            config.tcp_user_timeout(Duration::from_millis(given.as_secs()));
        }
    }
    // The driver has a default here (2 hours), so only the URL can say it was chosen.
    if !url.contains("keepalives_idle=") {
        config.keepalives_idle(Duration::from_secs(30));
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(Duration::from_secs(10));
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(3);
    }
}

/// How long a lost connection is tried again before its error stands: a server restarts
/// in seconds, and a run waits for it rather than stop.
const RECONNECT_FOR: Duration = Duration::from_secs(30);

/// Whether `e` says the connection is gone rather than that the statement failed: the
/// driver found it closed or cut (reset, a pipe broken, no more to read), or the server
/// said it is shutting down or starting (SQLSTATE 57P01-57P03) or named a connection
/// exception (class 08). Not a timeout: a server silent for a minute
/// ([`bound_dead_peers`]) has been waited for long enough.
fn connection_lost(e: &postgres::Error) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    let cut = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .is_some_and(|io| {
            matches!(
                io.kind(),
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
            )
        });
    cut || e.is_closed()
        || e.code().is_some_and(|c| {
            [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(c)
                || c.code().starts_with("08")
        })
}

/// Key of the advisory lock migrations (and bulk loads) take ("sshbench" in ASCII).
const MIGRATION_LOCK: i64 = 0x7373_6862_656e_6368;

pub struct Postgres {
    client: Client,
    url: String,
    /// What the first connection settled on (TLS, or none where `prefer` fell back),
    /// for another.
    config: Config,
    connector: MakeTlsConnector,
    statements: HashMap<String, Statement>,
    /// Inside `begin` .. `COMMIT`/`ROLLBACK`: a lost connection took the transaction's
    /// statements with it, so none is repeated alone.
    in_transaction: bool,
    /// Connections made again after one was lost.
    reconnects: u32,
}

impl Postgres {
    pub fn connect(url: &str) -> Result<Postgres> {
        let shown = redact(url);
        let reading = || format!("reading the database URL {shown}");
        let connecting = || format!("connecting to the database {shown}");
        let (plain, tls) = super::pg_tls::split(url, secrets::var).with_context(reading)?;
        let mut config: Config = plain.parse().with_context(reading)?;
        let password = super::pg_pass::fill(&mut config, secrets::var);
        config.ssl_mode(tls.ssl_mode());
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        bound_dead_peers(&mut config, &plain);
        let connector = tls.connector().with_context(connecting)?;
        let client = match connect_within(config.clone(), connector.clone()) {
            // libpq's `prefer`: a server whose TLS does not work out is asked again
            // without (an old server's protocol versions, say), as before TLS was tried.
            Err(e) if tls.falls_back(&e) => {
                config.ssl_mode(postgres::config::SslMode::Disable);
                connect_within(config.clone(), connector.clone())
            }
            result => result,
        }
        .map_err(super::pg_tls::explain)
        .map_err(|e| match password.hint() {
            Some(hint) => e.context(hint),
            None => e,
        })
        .with_context(connecting)?;
        Ok(Postgres {
            client,
            url: shown,
            config,
            connector,
            statements: HashMap::new(),
            in_transaction: false,
            reconnects: 0,
        })
    }

    /// Run `f`; where it failed because the connection was lost outside a transaction,
    /// connect again and run it once more, as often as the connection is lost again,
    /// for up to [`RECONNECT_FOR`] in all: a server process killed makes the server end
    /// every other one, and that can take a connection just made too. Only for
    /// statements that do the same done twice: reads, updates, upserts, deletes.
    fn again<T>(&mut self, f: impl Fn(&mut Postgres) -> Result<T, postgres::Error>) -> Result<T> {
        let deadline = std::time::Instant::now() + RECONNECT_FOR;
        loop {
            match f(self) {
                Err(e)
                    if !self.in_transaction
                        && connection_lost(&e)
                        && std::time::Instant::now() < deadline =>
                {
                    self.reconnect(&e, deadline)?
                }
                result => return Ok(result?),
            }
        }
    }

    fn reconnect(&mut self, lost: &postgres::Error, deadline: std::time::Instant) -> Result<()> {
        let last = loop {
            match connect_within(self.config.clone(), self.connector.clone()) {
                Ok(client) => {
                    self.client = client;
                    self.statements.clear();
                    self.reconnects += 1;
                    return Ok(());
                }
                Err(e) if std::time::Instant::now() >= deadline => break e,
                Err(_) => std::thread::sleep(Duration::from_secs(1)),
            }
        };
        Err(last.context(format!(
            "the connection to the database {} was lost ({lost}), and connecting again for {} \
             s failed",
            self.url,
            RECONNECT_FOR.as_secs()
        )))
    }

    /// The statement for `sql` (`?N` rewritten as `$N`), prepared once per connection.
    fn prepare(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let stmt = self.client.prepare(&sql.replace('?', "$"))?;
        self.statements.insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }
}

/// A value bound to a parameter of whatever type PostgreSQL inferred for it.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match (self.0, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), &Type::TEXT) => i.to_string().to_sql(ty, out),
            (Value::Int(i), _) => i.to_sql(ty, out),
            (Value::Real(x), &Type::FLOAT4) => (*x as f32).to_sql(ty, out),
            (Value::Real(x), _) => x.to_sql(ty, out),
            (Value::Text(s), _) => s.as_str().to_sql(ty, out),
            (Value::Blob(b), _) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn params(values: &[Value]) -> Vec<Param<'_>> {
    values.iter().map(Param).collect()
}

/// Read column `i` of a row into `slot` by its PostgreSQL type, reusing the slot's
/// text or blob buffer from the row before (no allocation per value).
fn read_into(slot: &mut Value, row: &postgres::Row, i: usize) -> Result<()> {
    let ty = row.columns()[i].type_();
    let new: Value = match *ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.into(),
        Type::INT4 => row.try_get::<_, Option<i32>>(i)?.map(i64::from).into(),
        Type::INT2 => row.try_get::<_, Option<i16>>(i)?.map(i64::from).into(),
        Type::BOOL => row.try_get::<_, Option<bool>>(i)?.into(),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.into(),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(i)?.map(f64::from).into(),
        Type::BYTEA => match (row.try_get::<_, Option<&[u8]>>(i)?, &mut *slot) {
            (Some(b), Value::Blob(buf)) => {
                buf.clear();
                buf.extend_from_slice(b);
                return Ok(());
            }
            (b, _) => b.map(<[u8]>::to_vec).into(),
        },
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            match (row.try_get::<_, Option<&str>>(i)?, &mut *slot) {
                (Some(t), Value::Text(buf)) => {
                    buf.clear();
                    buf.push_str(t);
                    return Ok(());
                }
                (t, _) => t.into(),
            }
        }
        ref t => bail!("a column of type {t} in the database"),
    };
    *slot = new;
    Ok(())
}

impl Backend for Postgres {
    fn batch(&mut self, sql: &str) -> Result<()> {
        let ends = matches!(sql.trim(), "COMMIT" | "ROLLBACK");
        let done = self.client.batch_execute(sql);
        if ends {
            self.in_transaction = false;
        }
        Ok(done?)
    }

    fn begin(&mut self) -> Result<()> {
        // Nothing is lost when the connection is found gone at the start.
        self.again(|pg| {
            pg.client.batch_execute("BEGIN")?;
            pg.client.execute(
                "SELECT pg_advisory_xact_lock($1)",
                &[&MIGRATION_LOCK as &(dyn ToSql + Sync)],
            )
        })?;
        self.in_transaction = true;
        Ok(())
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        // Every statement run here does the same done twice (updates, upserts, deletes;
        // an insert a key guards), so one the connection was lost under is repeated.
        self.again(|pg| {
            let stmt = pg.prepare(sql)?;
            let p = params(values);
            let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|p| p as _).collect();
            pg.client.execute(&stmt, &refs)
        })
    }

    fn insert(&mut self, sql: &str, values: &[Value]) -> Result<i64> {
        // Never repeated: a lost answer may hide a row that was made.
        let stmt = self.prepare(&format!("{sql} RETURNING id"))?;
        let p = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|p| p as _).collect();
        // A multi-row insert returns every new id: the last is the newest.
        let rows = self.client.query(&stmt, &refs)?;
        match rows.last() {
            Some(r) => Ok(r.try_get(0)?),
            None => bail!("the insert returned no id"),
        }
    }

    fn query(
        &mut self,
        sql: &str,
        values: &[Value],
        each: &mut dyn FnMut(&Row) -> Result<()>,
    ) -> Result<()> {
        // All rows at once: the driver's runtime is entered once per query, not once per
        // row (which was a fifth of a fleet view's time); callers read a bounded set.
        // None has reached `each` when the connection is lost, so the query is repeated.
        let (stmt, rows) = self.again(|pg| {
            let stmt = pg.prepare(sql)?;
            let p = params(values);
            let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|p| p as _).collect();
            let rows = pg.client.query(&stmt, &refs)?;
            Ok((stmt, rows))
        })?;
        let columns = Columns::new(stmt.columns().iter().map(|c| c.name()));
        let mut buf = vec![Value::Null; stmt.columns().len()];
        for row in rows {
            for (i, slot) in buf.iter_mut().enumerate() {
                read_into(slot, &row, i)?;
            }
            each(&Row::new(&columns, &buf))?;
        }
        Ok(())
    }

    fn version(&mut self) -> Result<i64> {
        self.client.batch_execute(
            "CREATE TABLE IF NOT EXISTS sshbench_schema (version BIGINT NOT NULL)",
        )?;
        let row = self
            .client
            .query_opt("SELECT max(version) FROM sshbench_schema", &[])?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).unwrap_or(0))
    }

    fn set_version(&mut self, version: i64) -> Result<()> {
        self.client.batch_execute("DELETE FROM sshbench_schema")?;
        self.client.execute(
            "INSERT INTO sshbench_schema (version) VALUES ($1)",
            &[&version as &(dyn ToSql + Sync)],
        )?;
        Ok(())
    }

    fn now(&self) -> &'static str {
        r#"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
    }

    fn epoch(&self) -> &'static str {
        "extract(epoch from clock_timestamp())::float8"
    }

    fn begin_write(&mut self) -> Result<()> {
        self.again(|pg| pg.client.batch_execute("BEGIN"))?;
        self.in_transaction = true;
        Ok(())
    }

    fn skip_locked(&self) -> &'static str {
        "FOR UPDATE SKIP LOCKED"
    }

    fn schema(&self, sql: &str) -> String {
        sql.replace(
            "INTEGER PRIMARY KEY",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        )
        .replace(" INTEGER", " BIGINT")
        .replace(" REAL", " DOUBLE PRECISION")
        .replace(" BLOB", " BYTEA")
        .replace(
            "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            &format!("({})", self.now()),
        )
    }

    fn integrity(&mut self) -> Result<String> {
        let orphans: i64 = self
            .client
            .query_one(
                "SELECT count(*) FROM samples s WHERE NOT EXISTS \
                 (SELECT 1 FROM runs r WHERE r.id = s.run_id)",
                &[],
            )?
            .get(0);
        Ok(if orphans == 0 {
            "ok".into()
        } else {
            format!("{orphans} samples of no run")
        })
    }

    fn describe(&self) -> String {
        self.url.clone()
    }

    fn reconnects(&self) -> u32 {
        self.reconnects
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact("postgres://bench:s3cr@t@db.example/sshbench"),
            "postgres://bench@db.example/sshbench"
        );
        assert_eq!(redact("postgres://bench@db/x"), "postgres://bench@db/x");
        assert_eq!(redact("postgresql://db/x"), "postgresql://db/x");
        assert_eq!(
            redact("postgres://bench@db/x?password=s3cret&sslmode=require"),
            "postgres://bench@db/x?sslmode=require"
        );
        assert_eq!(
            redact("postgres://db/x?sslmode=verify-full&SSLPassword=k3y"),
            "postgres://db/x?sslmode=verify-full"
        );
        assert_eq!(
            redact("postgres://u:p@db/x?password=q"),
            "postgres://u@db/x"
        );
        assert!(is_url("postgresql://db/x") && !is_url("/tmp/postgres.sqlite"));
    }

    #[test]
    fn a_vanished_server_is_given_up_on_in_a_minute_unless_the_url_says_otherwise() {
        let settled = |url: &str| {
            let mut c: Config = url.parse().unwrap();
            bound_dead_peers(&mut c, url);
            c
        };
        let c = settled("postgres://db/x");
        assert_eq!(c.get_tcp_user_timeout(), Some(&Duration::from_secs(60)));
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(30));
        assert_eq!(c.get_keepalives_interval(), Some(Duration::from_secs(10)));
        assert_eq!(c.get_keepalives_retries(), Some(3));
        assert!(c.get_keepalives());
        let url = "postgres://db/x?tcp_user_timeout=5000&keepalives_idle=7200\
                   &keepalives_interval=75&keepalives_retries=9";
        let c = settled(url);
        assert_eq!(c.get_tcp_user_timeout(), Some(&Duration::from_secs(5)));
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(7200));
        assert_eq!(c.get_keepalives_interval(), Some(Duration::from_secs(75)));
        assert_eq!(c.get_keepalives_retries(), Some(9));
    }
}
