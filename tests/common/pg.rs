//! A throwaway PostgreSQL cluster: `initdb` in a temp dir, the server on a free
//! loopback port and a socket in that dir, run as an unprivileged user (`nobody` when
//! the tests run as root), stopped and removed on drop. A TLS cluster takes TCP
//! connections only over TLS, with a password, under a certificate of a CA made for it.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
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
    /// How the server was started, to start it again.
    command: Vec<std::ffi::OsString>,
    owner: Option<(u32, u32)>,
    pub port: u16,
    /// The data directory, where the server's socket is: helpers connect through it.
    data: PathBuf,
    /// A TLS cluster's password of `sshbench` over TCP.
    password: Option<&'static str>,
    dir: tempfile::TempDir,
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

/// Run `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (Debian: a dependency of postgresql)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA (`ca.pem`), another that signs nothing (`other-ca.pem`), and the server's key
/// and certificate in `data` (for the name `localhost` only, not for 127.0.0.1).
fn make_certificates(dir: &Path, data: &Path, owner: Option<(u32, u32)>) {
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for (name, cn) in [("ca", "/CN=sshbench test CA"), ("other-ca", "/CN=other CA")] {
        let (k, c) = (format!("{name}.key"), format!("{name}.pem"));
        let mut args = vec![
            "req", "-x509", "-days", "2", "-subj", cn, "-keyout", &k, "-out", &c,
        ];
        args.extend(key);
        openssl(dir, &args);
    }
    let (server_key, server_crt) = (data.join("server.key"), data.join("server.crt"));
    let (server_key, server_crt) = (server_key.to_str().unwrap(), server_crt.to_str().unwrap());
    let mut args = vec!["req", "-subj", "/CN=localhost", "-keyout", server_key];
    args.extend(key);
    args.extend(["-out", "server.csr"]);
    openssl(dir, &args);
    std::fs::write(dir.join("ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext",
            "-out",
            server_crt,
        ],
    );
    if let Some((uid, gid)) = owner {
        for f in [server_key, server_crt] {
            nix::unistd::chown(f, Some(uid.into()), Some(gid.into())).unwrap();
        }
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(server_key, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// What a cluster does with TLS.
#[derive(Clone, Copy, PartialEq)]
enum Tls {
    Off,
    /// Over TCP only TLS, with a password; the socket stays open to the helpers.
    Only,
    /// TLS 1.0 and 1.1 only, which today's clients refuse; plain TCP as well.
    Outdated,
}

impl Cluster {
    pub fn start() -> Cluster {
        Cluster::launch(Tls::Off)
    }

    /// A cluster that takes TCP connections only over TLS and with a password (in
    /// [`Cluster::url`]); its certificate, for `localhost`, is signed by [`Cluster::ca`].
    pub fn start_tls() -> Cluster {
        Cluster::launch(Tls::Only)
    }

    /// A cluster that offers TLS but only in versions no client takes today (1.0, 1.1),
    /// and takes plain TCP too: an old server.
    pub fn start_outdated_tls() -> Cluster {
        Cluster::launch(Tls::Outdated)
    }

    /// The certificate of the CA that signed a TLS cluster's.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The certificate of a CA that signed nothing here.
    pub fn other_ca(&self) -> PathBuf {
        self.dir.path().join("other-ca.pem")
    }

    fn launch(tls: Tls) -> Cluster {
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
        if tls != Tls::Off {
            make_certificates(dir.path(), &data, owner);
        }
        if tls == Tls::Only {
            let hba = "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n";
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        }
        let versions: &[&str] = match tls {
            Tls::Outdated => &[
                "-c",
                "ssl_min_protocol_version=TLSv1",
                "-c",
                "ssl_max_protocol_version=TLSv1.1",
            ],
            _ => &[],
        };
        let port = free_port();
        let mut command = vec![bin.join("postgres").into_os_string(), "-D".into()];
        command.push(data.clone().into_os_string());
        for a in ["-h", "127.0.0.1", "-p", &port.to_string(), "-k"] {
            command.push(a.into());
        }
        command.push(data.clone().into_os_string());
        let settings = ["-c", "fsync=off", "-c", "max_connections=50", "-c"];
        command.extend(settings.iter().map(Into::into));
        command.push(if tls == Tls::Off { "ssl=off" } else { "ssl=on" }.into());
        command.extend(versions.iter().map(Into::into));
        let server = spawn_server(&command, owner);
        let mut cluster = Cluster {
            server,
            command,
            owner,
            port,
            data,
            password: (tls == Tls::Only).then_some("Secret-4-tls"),
            dir,
        };
        cluster.wait_ready();
        if let Some(pw) = cluster.password {
            cluster.batch("postgres", &format!("ALTER ROLE sshbench PASSWORD '{pw}'"));
        }
        cluster
    }

    /// Stop the server as an administrator's restart does (a fast shutdown, which ends
    /// every session), and start it again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        self.server = spawn_server(&self.command, self.owner);
        self.wait_ready();
    }

    fn stop(&mut self) {
        // SIGINT: the server's fast shutdown (ends sessions, removes its socket).
        let pid = nix::unistd::Pid::from_raw(self.server.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let _ = self.server.wait();
    }

    /// A helper's connection to database `name`, through the socket.
    pub fn admin(&self, name: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host_path(&self.data)
            .port(self.port)
            .user("sshbench")
            .dbname(name)
            .connect(postgres::NoTls)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = self.server.try_wait().unwrap() {
                panic!("postgres exited at start: {status}");
            }
            if self.admin("postgres").is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("postgres did not accept connections within 30 s");
    }

    /// The URL of database `name` in this cluster (over TCP, with a TLS cluster's
    /// password).
    pub fn url(&self, name: &str) -> String {
        let user = match self.password {
            Some(pw) => format!("sshbench:{pw}"),
            None => "sshbench".into(),
        };
        format!("postgres://{user}@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database: its URL.
    pub fn database(&self, name: &str) -> String {
        let mut c = self.admin("postgres").unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }

    /// Run statements in database `name` outside a transaction (`VACUUM` and the like).
    pub fn batch(&self, name: &str, sql: &str) {
        let mut c = self.admin(name).unwrap();
        c.batch_execute(sql).unwrap();
    }

    /// Run SQL in database `name` (for tests that look beneath the store).
    pub fn sql(&self, name: &str, sql: &str) -> Vec<postgres::Row> {
        let mut c = self.admin(name).unwrap();
        c.query(sql, &[]).unwrap()
    }
}

fn spawn_server(command: &[std::ffi::OsString], owner: Option<(u32, u32)>) -> Child {
    let mut postgres = Command::new(&command[0]);
    postgres
        .args(&command[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    as_owner(postgres, owner).spawn().unwrap()
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
