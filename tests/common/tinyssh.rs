//! A real tinysshd on loopback for the tests, stopped on drop. tinysshd serves one
//! connection on its standard input and output (inetd style), so a listener thread here
//! starts one per connection, as root in a private mount namespace whose home (`/root`)
//! is a temp dir of the test: the test's key logs in, and nothing of the machine changes.
//! It is a server with one cipher (chacha20-poly1305), one host key type (ed25519), and
//! one session per connection.

use super::login;
use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Tinyssh {
    pub port: u16,
    dir: tempfile::TempDir,
    stop: Arc<AtomicBool>,
    listener: Option<JoinHandle<()>>,
    servers: Arc<Mutex<Vec<Child>>>,
}

/// Mount the home over `/root` and its `tmp` over `/tmp` (what the sessions leave there
/// can be seen), then run the server.
const NAMESPACE: &str =
    r#"mount --bind "$1" /root && mount --bind "$1/tmp" /tmp && shift && exec "$@""#;

fn serve(stream: std::net::TcpStream, dir: &std::path::Path) -> std::io::Result<Child> {
    stream.set_nonblocking(false)?;
    let input = OwnedFd::from(stream.try_clone()?);
    // The keys' folder by its working directory: the mounts hide the temp dir's paths.
    login::in_namespace(NAMESPACE, &dir.join("home"))
        .current_dir(dir.join("keys"))
        .args(["tinysshd", "."])
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(OwnedFd::from(stream)))
        .stderr(Stdio::null())
        .spawn()
}

pub fn start() -> Tinyssh {
    let dir = tempfile::tempdir().unwrap();
    login::run(
        Command::new("tinysshd-makekey").arg(dir.path().join("keys")),
        "tinysshd-makekey (apt-get install tinysshd)",
    );
    login::prepare(dir.path(), "tinysshd");
    std::fs::create_dir(dir.path().join("home/tmp")).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let servers: Arc<Mutex<Vec<Child>>> = Arc::default();
    let (home, halt, children) = (dir.path().to_path_buf(), stop.clone(), servers.clone());
    let thread = std::thread::spawn(move || {
        while !halt.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    let child = serve(stream, &home).expect("tinysshd (apt-get install tinysshd)");
                    let mut all = children.lock().unwrap();
                    all.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
                    all.push(child);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    Tinyssh {
        port,
        dir,
        stop,
        listener: Some(thread),
        servers,
    }
}

impl Drop for Tinyssh {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.listener.take() {
            let _ = t.join();
        }
        for mut c in self.servers.lock().unwrap().drain(..) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Tinyssh {
    /// What the sessions left in the server's `/tmp`.
    pub fn left_in_tmp(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path().join("home/tmp"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// An ssh_config whose host `tinyssh-test` logs in with the test's key and checks
    /// the server's host key strictly.
    pub fn ssh_config(&self) -> PathBuf {
        let dir = self.dir.path();
        let out = Command::new("tinysshd-printkey")
            .arg(dir.join("keys"))
            .output()
            .unwrap();
        let key = login::ed25519_key(&String::from_utf8_lossy(&out.stdout));
        login::ssh_config(dir, "tinyssh-test", self.port, &key)
    }
}
