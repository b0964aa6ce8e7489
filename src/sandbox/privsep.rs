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
    fn run_dir() -> PathBuf {
        ["/run", "/var/run"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir)
    }

    fn marker(what: &str) -> PathBuf {
        Self::run_dir().join(format!("sshbench-created-{what}"))
    }

    fn open_lock(name: &str) -> Result<File> {
        let path = Self::run_dir().join(name);
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
        fs::write(Self::marker("dir"), dir.display().to_string())?;
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
        fs::write(Self::marker("user"), name)?;
        Ok(())
    }

    /// Whether no sshd process is alive, allowing our own sessions, killed just before,
    /// a moment to go.
    fn no_sshd_left() -> bool {
        let created = Self::marker("dir").exists() || Self::marker("user").exists();
        if !created {
            return false;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            if crate::sys::proc::processes_named("sshd").is_empty() {
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
            if let Ok(dir) = fs::read_to_string(Self::marker("dir")) {
                let _ = fs::remove_dir(dir.trim());
                let _ = fs::remove_file(Self::marker("dir"));
            }
            if let Ok(name) = fs::read_to_string(Self::marker("user")) {
                let _ = Command::new("userdel").arg(name.trim()).status();
                let _ = fs::remove_file(Self::marker("user"));
            }
        }
        // Dropping the files releases both locks.
    }
}

fn flock(f: &File, op: libc::c_int) -> Result<()> {
    crate::sys::scratch::flock(f, op).context("locking the sshd privilege-separation lock file")
}
