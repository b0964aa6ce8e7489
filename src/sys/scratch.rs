//! Private scratch directories in the temp dir that survive nothing: each is 0700, holds
//! a lock for as long as its owner lives, and is removed on drop; one whose lock is free
//! was left by a killed sshbench (`kill -9`) and is removed by the next one made with
//! the same prefix. Files their owner keeps locked are swept the same way.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;

/// A locked private directory, removed when dropped.
pub struct Scratch {
    // Dropped first: the lock goes with the directory.
    _lock: File,
    dir: TempDir,
}

/// `flock(2)`, retried on EINTR.
pub fn flock(f: &File, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: valid fd owned by `f`.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

impl Scratch {
    /// Remove stale directories of `prefix`, then make a new one, locked.
    pub fn create(prefix: &str) -> std::io::Result<Scratch> {
        remove_stale(&std::env::temp_dir(), prefix);
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700))?;
        // Locked under another name first: a `lock` that exists unlocked for a moment
        // would look abandoned to another sshbench starting at the same time.
        let pending = dir.path().join("lock.new");
        let lock = File::create(&pending)?;
        flock(&lock, libc::LOCK_EX | libc::LOCK_NB)?;
        fs::rename(&pending, dir.path().join("lock"))?;
        Ok(Scratch { _lock: lock, dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// This user's entries of `prefix` in `dir` (directories, or files), with their age.
fn mine(dir: &Path, prefix: &str, dirs: bool) -> Vec<(std::path::PathBuf, Option<Duration>)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = nix::unistd::geteuid().as_raw();
    let ours = |name: &std::ffi::OsStr, meta: &fs::Metadata| {
        name.to_string_lossy().starts_with(prefix)
            && (if dirs { meta.is_dir() } else { meta.is_file() })
            && std::os::unix::fs::MetadataExt::uid(meta) == me
    };
    (entries.flatten())
        .filter_map(|e| {
            let meta = fs::symlink_metadata(e.path()).ok()?;
            let age = meta.modified().ok().and_then(|m| m.elapsed().ok());
            ours(&e.file_name(), &meta).then(|| (e.path(), age))
        })
        .collect()
}

/// Over a minute old (an entry being made right now is not locked yet).
fn old(age: Option<Duration>) -> bool {
    age.is_some_and(|age| age > Duration::from_secs(60))
}

/// Remove this user's directories of `prefix` in `tmp` that no live process holds. One
/// without a lock file is only removed once it is a minute old, so one being created
/// right now is safe.
pub fn remove_stale(tmp: &Path, prefix: &str) {
    for (path, age) in mine(tmp, prefix, true) {
        let stale = match File::open(path.join("lock")) {
            Ok(f) => flock(&f, LOCK_FREE).is_ok(),
            Err(_) => old(age),
        };
        if stale {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// Remove this user's files of `prefix` in `dir` that no live process holds locked
/// (their owner locks them for its life; a killed one's lock went with it) and that
/// are over a minute old.
pub fn remove_stale_files(dir: &Path, prefix: &str) {
    for (path, age) in mine(dir, prefix, false) {
        let free = || File::open(&path).is_ok_and(|f| flock(&f, LOCK_FREE).is_ok());
        if old(age) && free() {
            let _ = fs::remove_file(&path);
        }
    }
}

/// An exclusive lock taken only if nobody holds one.
const LOCK_FREE: libc::c_int = libc::LOCK_EX | libc::LOCK_NB;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_file_stays_and_an_abandoned_one_goes_once_a_minute_old() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, age: u64| {
            let f = File::create(dir.path().join(name)).unwrap();
            let then = std::time::SystemTime::now() - Duration::from_secs(age);
            f.set_modified(then).unwrap();
            f
        };
        let held = make("zeros.held", 120);
        flock(&held, LOCK_FREE).unwrap();
        drop(make("zeros.abandoned", 120));
        drop(make("zeros.young", 0));
        drop(make("other.abandoned", 120));
        remove_stale_files(dir.path(), "zeros.");
        let left: std::collections::BTreeSet<String> = (fs::read_dir(dir.path()).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let want = ["other.abandoned", "zeros.held", "zeros.young"];
        assert_eq!(left, want.map(String::from).into(), "{left:?}");
    }

    #[test]
    fn a_held_directory_stays_and_an_abandoned_one_goes() {
        let prefix = format!("sshbench-scratch-test-{}-", std::process::id());
        let held = Scratch::create(&prefix).unwrap();
        // Left by a killed process: its lock file exists but nobody holds it.
        let abandoned = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir()
            .unwrap()
            .keep();
        File::create(abandoned.join("lock")).unwrap();
        let second = Scratch::create(&prefix).unwrap();
        assert!(held.path().exists(), "a live one is kept");
        assert!(!abandoned.exists(), "an abandoned one is removed");
        let path = second.path().to_path_buf();
        drop(second);
        assert!(!path.exists(), "dropped means removed");
    }

    #[test]
    fn a_directory_being_made_is_kept_and_a_made_one_holds_its_lock() {
        let prefix = format!("sshbench-scratch-making-{}-", std::process::id());
        // Another sshbench between making its directory and locking it: no `lock` yet.
        let making = tempfile::Builder::new().prefix(&prefix).tempdir().unwrap();
        File::create(making.path().join("lock.new")).unwrap();
        let made = Scratch::create(&prefix).unwrap();
        assert!(
            making.path().exists(),
            "a young directory without a lock stays"
        );
        let lock = File::open(made.path().join("lock")).unwrap();
        assert!(flock(&lock, libc::LOCK_EX | libc::LOCK_NB).is_err(), "held");
        assert!(!made.path().join("lock.new").exists());
    }
}
