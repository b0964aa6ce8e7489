//! The sandbox's fresh host keys and client key, made with ssh-keygen.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A generated host key and the key type it serves.
pub(super) struct HostKey {
    pub path: PathBuf,
    /// `ed25519`, `ecdsa256`, `ecdsa384`, `ecdsa521`, `rsa`, `dsa`.
    pub kind: &'static str,
}

/// The key type a host key algorithm needs, `None` for ones the sandbox cannot serve
/// (certificates, security keys).
pub(super) fn host_key_type(alg: &str) -> Option<&'static str> {
    Some(match alg {
        "ssh-ed25519" => "ed25519",
        "ecdsa-sha2-nistp256" => "ecdsa256",
        "ecdsa-sha2-nistp384" => "ecdsa384",
        "ecdsa-sha2-nistp521" => "ecdsa521",
        "rsa-sha2-256" | "rsa-sha2-512" | "ssh-rsa" => "rsa",
        "ssh-dss" => "dsa",
        _ => return None,
    })
}

/// Generate the host keys in parallel (RSA dominates: a few hundred ms).
pub(super) fn generate_keys(keygen: &Path, dir: &Path, with_dsa: bool) -> Result<Vec<HostKey>> {
    let mut specs: Vec<(&'static str, &'static str, Option<u32>)> = vec![
        ("ed25519", "ed25519", None),
        ("ecdsa256", "ecdsa", Some(256)),
        ("ecdsa384", "ecdsa", Some(384)),
        ("ecdsa521", "ecdsa", Some(521)),
        ("rsa", "rsa", Some(3072)),
    ];
    if with_dsa {
        specs.push(("dsa", "dsa", Some(1024)));
    }
    let results: Vec<(HostKey, Result<()>)> = std::thread::scope(|s| {
        let handles: Vec<_> = specs
            .iter()
            .map(|&(kind, t, bits)| {
                let path = dir.join(format!("host_{kind}"));
                s.spawn(move || {
                    let r = keygen_one(keygen, &path, t, bits);
                    (HostKey { path, kind }, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("keygen thread"))
            .collect()
    });
    let mut keys = Vec::new();
    for (key, r) in results {
        match r {
            Ok(()) => keys.push(key),
            // DSA is gone from new OpenSSH releases; its absence only narrows the sweep.
            Err(_) if key.kind == "dsa" => {}
            Err(e) => return Err(e),
        }
    }
    Ok(keys)
}

pub(super) fn keygen_one(keygen: &Path, path: &Path, t: &str, bits: Option<u32>) -> Result<()> {
    let mut cmd = Command::new(keygen);
    cmd.args(["-q", "-t", t, "-N", "", "-C", "sshbench-sandbox", "-f"])
        .arg(path)
        .stdin(Stdio::null());
    if let Some(b) = bits {
        cmd.arg("-b").arg(b.to_string());
    }
    let out = cmd
        .output()
        .with_context(|| format!("running {}", keygen.display()))?;
    if !out.status.success() {
        bail!(
            "ssh-keygen -t {t} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
