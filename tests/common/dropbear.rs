//! A real Dropbear server on loopback for the tests, stopped on drop. With `login`, it
//! runs as root in a private mount namespace whose home (`/root`) is a temp dir of the
//! test, so a key the test made logs in and nothing of the machine changes; `sftp:
//! false` hides the sftp-server binary there too.

use super::login;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Default)]
pub struct DropbearOptions {
    /// Let the test's key log in as root (needs root: a mount namespace).
    pub login: bool,
    /// Leave the SFTP server where Dropbear finds it (with `login`).
    pub sftp: bool,
    /// Confine the server and its sessions to this CPU (`taskset`).
    pub cpu: Option<usize>,
    /// The receive window it advertises (`-W`; Dropbear's default is 24 KiB).
    pub window: Option<u32>,
    /// Listen on `::1` instead of 127.0.0.1.
    pub ipv6: bool,
}

impl DropbearOptions {
    fn host(&self) -> &'static str {
        if self.ipv6 { "::1" } else { "127.0.0.1" }
    }
}

pub struct Dropbear {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
    host: &'static str,
}

impl Drop for Dropbear {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The namespace's script: home replaced, sftp-server hidden unless wanted.
const NAMESPACE: &str = r#"mount --bind "$1" /root && { [ "$2" = yes ] || mount --bind /dev/null "$(readlink -f /usr/lib/sftp-server)"; } && shift 2 && exec "$@""#;

fn spawn(dir: &Path, port: u16, opts: DropbearOptions) -> Child {
    let mut dropbear = vec![
        "dropbear".to_string(),
        "-F".into(),
        "-E".into(),
        "-s".into(),
        "-r".into(),
        dir.join("host_key").display().to_string(),
        "-p".into(),
        match opts.ipv6 {
            true => format!("[::1]:{port}"),
            false => format!("127.0.0.1:{port}"),
        },
        "-P".into(),
        dir.join("pid").display().to_string(),
    ];
    if let Some(w) = opts.window {
        dropbear.extend(["-W".to_string(), w.to_string()]);
    }
    if let Some(cpu) = opts.cpu {
        dropbear.splice(0..0, ["taskset".to_string(), "-c".into(), cpu.to_string()]);
    }
    let mut cmd = if opts.login {
        let mut c = login::in_namespace(NAMESPACE, &dir.join("home"));
        c.arg(if opts.sftp { "yes" } else { "no" });
        c
    } else {
        let mut c = Command::new(dropbear.remove(0));
        c.args(dropbear.drain(..));
        c
    };
    cmd.args(dropbear)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dropbear is needed (apt-get install dropbear-bin)")
}

fn prepare(dir: &Path, login: bool) {
    login::run(
        Command::new("dropbearkey")
            .args(["-t", "ed25519", "-f"])
            .arg(dir.join("host_key")),
        "dropbearkey (apt-get install dropbear-bin)",
    );
    if login {
        super::login::prepare(dir, "Dropbear");
    }
}

pub fn start(opts: DropbearOptions) -> Dropbear {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path(), opts.login);
    for _ in 0..5 {
        let port = TcpListener::bind((opts.host(), 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = spawn(dir.path(), port, opts);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect((opts.host(), port)).is_ok() {
                let host = opts.host();
                return Dropbear {
                    child,
                    port,
                    dir,
                    host,
                };
            }
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("dropbear did not start");
}

impl Dropbear {
    /// An ssh_config whose host `dropbear-test` (or, listening on `::1`, `::1` itself)
    /// logs in with the test's key and checks Dropbear's host key strictly.
    pub fn ssh_config(&self) -> PathBuf {
        let dir = self.dir.path();
        let out = Command::new("dropbearkey")
            .args(["-y", "-f"])
            .arg(dir.join("host_key"))
            .output()
            .unwrap();
        let key = login::ed25519_key(&String::from_utf8_lossy(&out.stdout));
        let alias = if self.host == "::1" {
            "::1"
        } else {
            "dropbear-test"
        };
        login::ssh_config_at(dir, alias, self.host, self.port, &key)
    }
}
