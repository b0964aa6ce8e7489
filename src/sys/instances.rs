//! Other sshbench runs of this user measuring on this machine at the same time. Each
//! process that measures holds a lock on a file named after it in a private directory;
//! one that starts while others hold theirs leaves each of them a mark, so that both
//! learn of the overlap, whichever began first. Two runs at once share the CPUs (and, on
//! the sandbox, the loopback), and each one's figures come out lower and noisier.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// This process's place among the measuring ones, given up when dropped.
pub struct Instances {
    dir: PathBuf,
    pid: u32,
    _lock: Flock<File>,
}

impl Instances {
    /// Register this process; `None` where no private directory is to be had (the
    /// overlap is then not told).
    pub fn register() -> Option<Instances> {
        let dir = registry_dir()?;
        let pid = std::process::id();
        // Marks left for an earlier process of this number are not this one's.
        remove_marks(&dir, pid);
        // Locked before it has its name: a file that appears is always held.
        let fresh = dir.join(format!("{pid}.new"));
        let lock = Flock::lock(File::create(&fresh).ok()?, FlockArg::LockExclusiveNonblock).ok()?;
        std::fs::rename(&fresh, dir.join(pid.to_string())).ok()?;
        Some(Instances {
            dir,
            pid,
            _lock: lock,
        })
    }

    /// The other processes measuring now, each left a mark that names this one; the
    /// files of processes that are gone are removed.
    pub fn others_now(&self) -> Vec<u32> {
        let mut live = Vec::new();
        for pid in self.entries().filter_map(|name| name.parse::<u32>().ok()) {
            if pid == self.pid {
                continue;
            }
            let path = self.dir.join(pid.to_string());
            let Ok(file) = File::open(&path) else {
                continue;
            };
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(_gone) => {
                    let _ = std::fs::remove_file(&path);
                    remove_marks(&self.dir, pid);
                }
                Err((_, Errno::EWOULDBLOCK)) => {
                    live.push(pid);
                    let _ = File::create(self.dir.join(mark(pid, self.pid)));
                }
                Err(_) => {}
            }
        }
        live.sort_unstable();
        live
    }

    /// The processes that began to measure while this one was registered (their marks).
    pub fn arrivals(&self) -> Vec<u32> {
        let prefix = marks_for(self.pid);
        let mut pids: Vec<u32> = (self.entries())
            .filter_map(|name| name.strip_prefix(&prefix)?.parse().ok())
            .collect();
        pids.sort_unstable();
        pids
    }

    fn entries(&self) -> impl Iterator<Item = String> {
        (std::fs::read_dir(&self.dir).into_iter().flatten().flatten())
            .filter_map(|e| e.file_name().into_string().ok())
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        remove_marks(&self.dir, self.pid);
        let _ = std::fs::remove_file(self.dir.join(self.pid.to_string()));
        // The last one out leaves nothing in the temp directory (a process registering
        // meanwhile goes without the check: its files cannot be made).
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The name of the mark `by` leaves for `for_pid`.
fn mark(for_pid: u32, by: u32) -> String {
    format!("{}{by}", marks_for(for_pid))
}

/// How the names of the marks left for `pid` begin.
fn marks_for(pid: u32) -> String {
    format!("{pid}.by.")
}

fn remove_marks(dir: &Path, pid: u32) {
    let prefix = marks_for(pid);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `$XDG_RUNTIME_DIR/sshbench` (if that is this user's), else `sshbench-runs-UID` in the
/// temp directory: made 0700, and taken only if it is a directory of this user's that
/// nobody else may write to.
fn registry_dir() -> Option<PathBuf> {
    let uid = nix::unistd::getuid().as_raw();
    // Another user's (`sudo -E` keeps the caller's XDG_RUNTIME_DIR) is not written in.
    let runtime = (directories::BaseDirs::new())
        .and_then(|b| b.runtime_dir().map(Path::to_owned))
        .filter(|r| std::fs::metadata(r).is_ok_and(|m| m.uid() == uid));
    let dir = match runtime {
        Some(runtime) => runtime.join("sshbench"),
        None => std::env::temp_dir().join(format!("sshbench-runs-{uid}")),
    };
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o022 == 0).then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(dir: &Path, pid: u32) -> Instances {
        let path = dir.join(pid.to_string());
        let lock = Flock::lock(File::create(path).unwrap(), FlockArg::LockExclusiveNonblock);
        Instances {
            dir: dir.to_owned(),
            pid,
            _lock: lock.map_err(|(_, e)| e).unwrap(),
        }
    }

    #[test]
    fn each_of_two_overlapping_processes_learns_of_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let first = at(dir.path(), 101);
        assert!(first.others_now().is_empty());
        let second = at(dir.path(), 102);
        assert_eq!(second.others_now(), [101]);
        assert_eq!(first.arrivals(), [102]);
        assert!(second.arrivals().is_empty());
        // A process that died without its clean-up holds no lock: it is not counted, and
        // its file and marks go.
        std::fs::write(dir.path().join("103"), "").unwrap();
        std::fs::write(dir.path().join(mark(103, 101)), "").unwrap();
        assert_eq!(second.others_now(), [101]);
        assert!(!dir.path().join("103").exists());
        assert!(!dir.path().join(mark(103, 101)).exists());
        drop(first);
        assert!(second.others_now().is_empty());
        let names: Vec<String> = second.entries().collect();
        assert_eq!(names, ["102"]);
    }

    #[test]
    fn the_registry_is_private() {
        let dir = registry_dir().expect("a private directory");
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.mode() & 0o077, 0, "{}", dir.display());
        let me = Instances::register().expect("registered");
        assert!(dir.join(std::process::id().to_string()).exists());
        drop(me);
        assert!(!dir.join(std::process::id().to_string()).exists());
        // Left empty, the directory goes too (unless another run is registered there).
        let others = std::fs::read_dir(&dir).map_or(0, |d| d.count());
        assert_eq!(dir.exists(), others > 0);
    }
}
