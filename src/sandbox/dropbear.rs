//! What Dropbear's dbclient needs to reach the sandbox: it reads no ssh_config, takes
//! its key in its own format, and checks the host key in `$HOME/.ssh/known_hosts`,
//! named by host alone. Everything is made in the sandbox's private directory.

use super::Sandbox;
use anyhow::{Context, Result, bail};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// dbclient's home (for its known_hosts) and key for the sandbox.
#[derive(Clone, Debug)]
pub struct DropbearFiles {
    pub home: PathBuf,
    pub identity: PathBuf,
}

/// `dropbearconvert`: beside dbclient, on PATH, or where Debian keeps it.
fn converter(dbclient: &Path) -> Option<PathBuf> {
    let beside = dbclient.parent().map(|d| d.join("dropbearconvert"));
    [beside, super::find_on_path("dropbearconvert")]
        .into_iter()
        .flatten()
        .chain([PathBuf::from("/usr/lib/dropbear/dropbearconvert")])
        .find(|p| p.is_file())
}

/// The sandbox's known_hosts lines with the host as Dropbear names it: `127.0.0.1`,
/// never `[127.0.0.1]:port`.
pub(super) fn by_host_alone(known_hosts: &str) -> String {
    (known_hosts.lines())
        .filter_map(|l| {
            let (name, key) = l.split_once(' ')?;
            let host = name
                .strip_prefix('[')
                .and_then(|n| n.split_once("]:"))
                .map_or(name, |(h, _)| h);
            Some(format!("{host} {key}\n"))
        })
        .collect()
}

impl Sandbox {
    /// dbclient's files for this sandbox, made once (a second call finds them).
    pub fn dropbear_files(&self, dbclient: &Path) -> Result<DropbearFiles> {
        let home = self.dir().join("dropbear");
        let identity = home.join("id_dropbear");
        let files = DropbearFiles {
            home: home.clone(),
            identity: identity.clone(),
        };
        if identity.is_file() {
            return Ok(files);
        }
        let Some(convert) = converter(dbclient) else {
            bail!(
                "dbclient needs its key in Dropbear's format, and no dropbearconvert was found \
                 beside {} or on PATH (Debian: apt-get install dropbear-bin)",
                dbclient.display()
            );
        };
        fs::create_dir_all(home.join(".ssh")).context("making dbclient's home in the sandbox")?;
        let known = fs::read_to_string(self.dir().join("known_hosts"))?;
        fs::write(home.join(".ssh/known_hosts"), by_host_alone(&known))?;
        let out = Command::new(&convert)
            .args(["openssh", "dropbear"])
            .arg(&self.client_key)
            .arg(&identity)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {}", convert.display()))?;
        if !out.status.success() || !identity.is_file() {
            bail!(
                "{} could not convert the sandbox's key: {}",
                convert.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_hosts_name_the_host_alone() {
        let kh = "[127.0.0.1]:40123 ssh-ed25519 AAAAkey\n127.0.0.1 rsa-sha2-512 AAAArsa\n";
        assert_eq!(
            super::by_host_alone(kh),
            "127.0.0.1 ssh-ed25519 AAAAkey\n127.0.0.1 rsa-sha2-512 AAAArsa\n"
        );
    }
}
