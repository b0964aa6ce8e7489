//! What a test server needs to let the test's own key log in as root without touching
//! the machine: a client key, a home (mounted over `/root` in a private mount namespace
//! by the server's helper) that authorizes it, and an ssh_config that uses the key and
//! checks the server's host key strictly.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Run a setup command quietly; `what` names it (and the packages) if it fails.
pub fn run(cmd: &mut Command, what: &str) {
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(st.success(), "{what} failed");
}

/// `dir/client_key` and `dir/home/.ssh/authorized_keys` that lets it in; `server`
/// names the server in the message when the tests do not run as root.
pub fn prepare(dir: &Path, server: &str) {
    assert!(
        nix::unistd::geteuid().is_root(),
        "a {server} server to log in to runs in a mount namespace: run the tests as root (CI does)"
    );
    let ssh = dir.join("home").join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    keygen(&dir.join("client_key"), "");
    std::fs::copy(dir.join("client_key.pub"), ssh.join("authorized_keys")).unwrap();
}

/// A new ed25519 key pair at `path` (and `path.pub`), locked with `passphrase` unless
/// it is empty.
pub fn keygen(path: &Path, passphrase: &str) {
    run(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", passphrase, "-f"])
            .arg(path),
        "ssh-keygen (apt-get install openssh-client)",
    );
}

/// An ssh_config in `dir` whose host `alias` is 127.0.0.1:`port`, logs in as root with
/// `dir/client_key` and accepts only `host_key` (`type base64`) for it.
pub fn ssh_config(dir: &Path, alias: &str, port: u16, host_key: &str) -> PathBuf {
    ssh_config_at(dir, alias, "127.0.0.1", port, host_key)
}

/// [`ssh_config`] for a server at `host` (an address).
pub fn ssh_config_at(dir: &Path, alias: &str, host: &str, port: u16, host_key: &str) -> PathBuf {
    let kh = dir.join("known_hosts");
    std::fs::write(&kh, format!("[{host}]:{port} {host_key}\n")).unwrap();
    let cfg = dir.join("ssh_config");
    std::fs::write(
        &cfg,
        format!(
            "Host {alias}\n  HostName {host}\n  Port {port}\n  User root\n  \
             IdentityFile \"{}\"\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
             UserKnownHostsFile \"{}\"\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking yes\n  BatchMode yes\n",
            dir.join("client_key").display(),
            kh.display()
        ),
    )
    .unwrap();
    cfg
}

/// The `type base64` of the first `ssh-ed25519` key line in `text`.
pub fn ed25519_key(text: &str) -> String {
    let line = (text.lines().find(|l| l.starts_with("ssh-ed25519 ")))
        .unwrap_or_else(|| panic!("no ssh-ed25519 key in {text:?}"));
    line.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `unshare` running `script` (with `sh`'s `$1`… the home, then `args`) in a private
/// mount namespace: the script mounts the home over `/root` and execs the server.
pub fn in_namespace(script: &str, home: &Path) -> Command {
    let mut c = Command::new("unshare");
    c.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
    ]);
    c.arg(home);
    c
}
