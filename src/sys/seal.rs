//! Seals over what a stored run or fleet will make sshbench run again on `--resume` (its
//! destination, ssh options and options): an HMAC-SHA256 under a key only this user can
//! read, kept in the user's private data directory. A row this user's sshbench wrote on
//! this machine carries a seal that verifies; one another user or machine wrote, or one
//! changed since (a shared database is anyone's to write), does not.

use anyhow::{Context, Result, anyhow, bail};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// This user's sealing key.
pub struct Sealer {
    key: [u8; 32],
}

/// The key file in the user's data directory (beside the default database).
pub fn key_path() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "sshbench")
        .ok_or_else(|| anyhow!("no home directory to keep the sealing key in"))?;
    Ok(dirs.data_dir().join("seal.key"))
}

impl Sealer {
    /// This user's key, made on first use.
    pub fn of_user() -> Result<Sealer> {
        Sealer::at(&key_path()?)
    }

    /// The key in `path`: made there (mode 0600, its directory 0700) when there is none;
    /// refused unless this user owns it and no one else may read or write it.
    pub fn at(path: &Path) -> Result<Sealer> {
        let shown = path.display();
        if !path.exists() {
            make(path).with_context(|| format!("making the sealing key {shown}"))?;
        }
        let meta = std::fs::symlink_metadata(path).with_context(|| format!("reading {shown}"))?;
        if !meta.file_type().is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
            bail!("the sealing key {shown} is not a file of this user's");
        }
        if meta.mode() & 0o077 != 0 {
            bail!("the sealing key {shown} may be read or written by others (chmod 600 it)");
        }
        let mut key = [0u8; 32];
        std::fs::File::open(path)
            .and_then(|f| f.take(33).read_exact(&mut key))
            .with_context(|| format!("reading the sealing key {shown}"))?;
        Ok(Sealer { key })
    }

    fn mac(&self, parts: &[&str]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key size");
        for p in parts {
            // Each part's length first: no two lists of parts feed the same bytes.
            mac.update(&(p.len() as u64).to_le_bytes());
            mac.update(p.as_bytes());
        }
        mac
    }

    /// The seal over `parts`, in hex.
    pub fn seal(&self, parts: &[&str]) -> String {
        let tag = self.mac(parts).finalize().into_bytes();
        tag.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether `seal` is this user's over `parts` (compared in constant time).
    pub fn verifies(&self, parts: &[&str], seal: &str) -> bool {
        let bytes: Option<Vec<u8>> = (0..seal.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(seal.get(i..i + 2)?, 16).ok())
            .collect();
        bytes.is_some_and(|b| self.mac(parts).verify_slice(&b).is_ok())
    }
}

/// A new random key in `path`, written where no one else may read it.
fn make(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| anyhow!("no random bytes: {e}"))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(&key)?;
    f.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_verifies_only_for_its_parts_and_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let mine = Sealer::at(&dir.path().join("a/seal.key")).unwrap();
        let again = Sealer::at(&dir.path().join("a/seal.key")).unwrap();
        let theirs = Sealer::at(&dir.path().join("b/seal.key")).unwrap();
        let seal = mine.seal(&["run", "{\"destination\":\"nas\"}", "{}"]);
        assert!(again.verifies(&["run", "{\"destination\":\"nas\"}", "{}"], &seal));
        assert!(!theirs.verifies(&["run", "{\"destination\":\"nas\"}", "{}"], &seal));
        assert!(!mine.verifies(&["run", "{\"destination\":\"evil\"}", "{}"], &seal));
        // The same bytes split otherwise are other parts.
        assert!(!mine.verifies(&["run{\"destination\":\"nas\"}", "", "{}"], &seal));
        assert!(!mine.verifies(&["run", "{\"destination\":\"nas\"}", "{}"], "zz"));
        // A key others may read is refused.
        let key = dir.path().join("a/seal.key");
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
        assert!(Sealer::at(&key).is_err());
    }
}
