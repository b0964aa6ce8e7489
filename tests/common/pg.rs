//! A throwaway PostgreSQL cluster: `initdb` in a temp dir, the server on a free
//! loopback port and a socket in that dir, run as an unprivileged user (`nobody` when
//! the tests run as root), stopped and removed on drop.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The directory of Debian's PostgreSQL binaries (the newest version), else `PATH`'s.
fn bindir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort_by_key(|p| {
        let v = p.parent().and_then(|v| v.file_name()).unwrap_or_default();
        v.to_string_lossy().parse::<u32>().unwrap_or(0)
    });
    found.pop().unwrap_or_else(|| {
        let initdb = sshbench::sandbox::find_on_path("initdb").expect(
            "PostgreSQL's initdb is needed for these tests (Debian: apt-get install postgresql)",
        );
        initdb.parent().unwrap().to_path_buf()
    })
}

pub struct Cluster {
    server: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// The unprivileged user the cluster runs as: none needed unless we are root.
fn unprivileged() -> Option<(u32, u32)> {
    nix::unistd::geteuid().is_root().then(|| {
        let u = nix::unistd::User::from_name("nobody")
            .unwrap()
            .expect("user nobody");
        (u.uid.as_raw(), u.gid.as_raw())
    })
}

fn as_owner(mut c: Command, owner: Option<(u32, u32)>) -> Command {
    if let Some((uid, gid)) = owner {
        c.uid(uid).gid(gid).env("HOME", "/");
    }
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let owner = unprivileged();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if let Some((uid, gid)) = owner {
            // The temp dir stays root's (0755 so the server can reach its data), the data
            // dir is the server user's own.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            nix::unistd::chown(&data, Some(uid.into()), Some(gid.into())).unwrap();
        }
        let bin = bindir();
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args([
                "-A",
                "trust",
                "-U",
                "sshbench",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data)
            .stdout(Stdio::null());
        let out = as_owner(initdb, owner).output().unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let mut postgres = Command::new(bin.join("postgres"));
        postgres
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
            .arg(&data)
            .args(["-c", "fsync=off", "-c", "max_connections=50"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = as_owner(postgres, owner).spawn().unwrap();
        let mut cluster = Cluster {
            server,
            port,
            _dir: dir,
        };
        cluster.wait_ready();
        cluster
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = self.server.try_wait().unwrap() {
                panic!("postgres exited at start: {status}");
            }
            if postgres::Client::connect(&self.url("postgres"), postgres::NoTls).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("postgres did not accept connections within 30 s");
    }

    /// The URL of database `name` in this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://sshbench@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database: its URL.
    pub fn database(&self, name: &str) -> String {
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }

    /// Run statements in database `name` outside a transaction (`VACUUM` and the like).
    pub fn batch(&self, name: &str, sql: &str) {
        let mut c = postgres::Client::connect(&self.url(name), postgres::NoTls).unwrap();
        c.batch_execute(sql).unwrap();
    }

    /// Run SQL in database `name` (for tests that look beneath the store).
    pub fn sql(&self, name: &str, sql: &str) -> Vec<postgres::Row> {
        let mut c = postgres::Client::connect(&self.url(name), postgres::NoTls).unwrap();
        c.query(sql, &[]).unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGINT: the server's fast shutdown (ends sessions, removes its socket).
        let pid = nix::unistd::Pid::from_raw(self.server.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let _ = self.server.wait();
    }
}
