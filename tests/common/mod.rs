//! Helpers shared by the integration tests: a real sandbox sshd and a transport to it.
#![allow(dead_code)]

use sshbench::measure::openssh::OpenSsh;
use sshbench::measure::payload::Payload;
use sshbench::model::AlgoLists;
use sshbench::offer::{self, client};
use sshbench::sandbox::{self, Sandbox, SandboxOptions};
use sshbench::target::Target;
use std::path::PathBuf;

pub fn ssh() -> PathBuf {
    sandbox::find_on_path("ssh").expect("the OpenSSH client must be installed to run these tests")
}

pub fn client() -> client::ClientOffer {
    client::query(&ssh()).expect("ssh -V / ssh -Q")
}

/// A sandbox with everything the client knows switched on, or restricted to `restrict`.
pub fn sandbox(restrict: AlgoLists) -> Sandbox {
    Sandbox::start(&SandboxOptions {
        candidates: offer::candidates(&client()),
        restrict,
        ..SandboxOptions::default()
    })
    .expect("the sandbox sshd starts (is openssh-server installed?)")
}

pub fn transport(sb: &Sandbox) -> OpenSsh {
    OpenSsh::new(
        ssh(),
        Target::sandbox(sb.ssh_config(), sandbox::ALIAS),
        Payload::random(1 << 20, 42),
    )
}

/// Processes whose environment carries `tag` (Linux: /proc/PID/environ).
pub fn processes_tagged(tag: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if env.split(|b| *b == 0).any(|kv| kv == tag.as_bytes()) {
                out.push(pid);
            }
        }
    }
    out
}

pub fn alive(pid: u32) -> bool {
    // Zombies count as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}
