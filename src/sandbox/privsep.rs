//! Root only: the privilege-separation directory and user sshd needs, created when
//! missing and removed by the last sandbox alive.

use anyhow::{Context, Result, bail};
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Root only: sshd refuses to start without its privilege-separation directory and
/// user, which a fresh install may lack until the system service first runs. The
/// sandbox creates only what is missing, and whichever sandbox is the last one alive
/// removes what sshbench created (marker files in the root-only run directory say what
/// that was). Two lock files coordinate sandboxes of any number of processes:
/// `sshbench-privsep.lock` is held exclusively, briefly, while the configuration is
/// checked and fixed or things are removed; `sshbench-privsep.users` is held shared by
/// every live sandbox, so the one that can take it exclusively is the last.
pub(super) struct Privsep {
    change: File,
    users: File,
}

impl Privsep {
    /// The run directory, only where root owns it and no one else may write in it: the
    /// markers there decide what `userdel` and `rmdir` remove, so a directory anyone can
    /// write in (a temp directory) is never a fallback.
    fn run_dir() -> Result<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        ["/run", "/var/run"]
            .iter()
            .map(PathBuf::from)
            .find(|p| {
                fs::metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == 0 && m.mode() & 0o022 == 0)
            })
            .context("no /run or /var/run that only root may write in, for the sandbox's markers")
    }

    fn marker(what: &str) -> Result<PathBuf> {
        Ok(Self::run_dir()?.join(format!("sshbench-created-{what}")))
    }

    /// Add a line to a marker: a sandbox of another sshd (HPN-SSH's `hpnsshd`) may have
    /// needed a user of another name while the first still lives.
    fn write_marker(what: &str, line: &str) -> Result<()> {
        add_line_at(&Self::marker(what)?, line)
    }

    fn read_marker(what: &str) -> Option<String> {
        read_marker_at(&Self::marker(what).ok()?)
    }

    fn open_lock(name: &str) -> Result<File> {
        let path = Self::run_dir()?.join(name);
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))
    }

    /// Take the change lock while the configuration is checked and fixed.
    pub fn acquire() -> Result<Privsep> {
        let p = Privsep {
            change: Self::open_lock("sshbench-privsep.lock")?,
            users: Self::open_lock("sshbench-privsep.users")?,
        };
        flock(&p.change, libc::LOCK_EX)?;
        Ok(p)
    }

    /// Register as a user of what exists now, and let others change things again.
    pub fn share(&self) -> Result<()> {
        flock(&self.users, libc::LOCK_SH)?;
        flock(&self.change, libc::LOCK_UN)
    }

    pub fn create_dir(&mut self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
        Self::write_marker("dir", &dir.display().to_string())?;
        Ok(())
    }

    pub fn create_user(&mut self, name: &str) -> Result<()> {
        let status = Command::new("useradd")
            .args(["--system", "--no-create-home", "--home-dir", "/nonexistent"])
            .args([
                "--shell",
                "/usr/sbin/nologin",
                "--comment",
                "sshd privsep (sshbench)",
            ])
            .arg(name)
            .status()
            .context("running useradd to create the sshd privilege-separation user")?;
        if !status.success() {
            bail!("useradd {name} failed; create the sshd privilege-separation user by hand");
        }
        Self::write_marker("user", name)?;
        Ok(())
    }

    /// Whether no sshd process is alive, allowing our own sessions, killed just before,
    /// a moment to go.
    fn no_sshd_left() -> bool {
        let created = Self::read_marker("dir").is_some() || Self::read_marker("user").is_some();
        if !created {
            return false;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            let named = crate::sys::proc::processes_named;
            if named("sshd").is_empty() && named("hpnsshd").is_empty() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// If no other sandbox, and no other sshd at all, uses them, undo what sshbench
    /// created. An sshd started meanwhile (say, the system's) may need the directory,
    /// so while one runs everything stays, markers included, for a later sandbox to
    /// remove.
    pub fn release(self) {
        if flock(&self.change, libc::LOCK_EX).is_err() {
            return;
        }
        // Converting our shared lock succeeds only when no other sandbox holds one.
        let last = flock(&self.users, libc::LOCK_EX | libc::LOCK_NB).is_ok();
        if last && Self::no_sshd_left() {
            let remove = |what| Self::marker(what).map(fs::remove_file);
            if let Some(dirs) = Self::read_marker("dir") {
                for dir in dirs.lines().filter(|d| d.starts_with('/')) {
                    let _ = fs::remove_dir(dir);
                }
                let _ = remove("dir");
            }
            // Only a name useradd could have made: a marker is a file's word, not root's.
            let plain = |n: &str| {
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
            };
            if let Some(names) = Self::read_marker("user") {
                for name in names.lines().filter(|n| !n.is_empty() && plain(n)) {
                    let _ = Command::new("userdel").arg("--").arg(name).status();
                }
                let _ = remove("user");
            }
        }
        // Dropping the files releases both locks.
    }
}

/// Add `line` to the marker at `path` unless it is there.
fn add_line_at(path: &Path, line: &str) -> Result<()> {
    let mut lines = read_marker_at(path).unwrap_or_default();
    if !lines.lines().any(|l| l == line) {
        if !lines.is_empty() {
            lines.push('\n');
        }
        lines.push_str(line);
    }
    write_marker_at(path, &lines)
}

/// Write a marker, never through a link someone put in its place.
fn write_marker_at(path: &Path, text: &str) -> Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    Ok(())
}

/// A marker's text, read without following a link and at most a line long.
fn read_marker_at(path: &Path) -> Option<String> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, 4096), &mut text).ok()?;
    Some(text.trim().to_string())
}

fn flock(f: &File, op: libc::c_int) -> Result<()> {
    crate::sys::scratch::flock(f, op).context("locking the sshd privilege-separation lock file")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A marker is never written or read through a link someone put in its place (it
    /// decides what `userdel` and `rmdir` remove).
    #[test]
    fn markers_are_not_followed_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, "root").unwrap();
        let link = dir.path().join("sshbench-created-user");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_marker_at(&link, "victim").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "root");
        assert_eq!(read_marker_at(&link), None);
        let plain = dir.path().join("sshbench-created-dir");
        write_marker_at(&plain, "/run/sshd\n").unwrap();
        assert_eq!(read_marker_at(&plain).as_deref(), Some("/run/sshd"));
    }

    /// Two sshds' users (`sshd`, HPN-SSH's `hpnsshd`) are both remembered, once each.
    #[test]
    fn a_marker_keeps_every_name_once() {
        let dir = tempfile::tempdir().unwrap();
        let users = dir.path().join("sshbench-created-user");
        for name in ["sshd", "hpnsshd", "sshd"] {
            add_line_at(&users, name).unwrap();
        }
        assert_eq!(read_marker_at(&users).as_deref(), Some("sshd\nhpnsshd"));
    }
}
