//! The workload's private directory on the server: made, counted and removed by short
//! commands, or, on a login that runs none (an sftp-only account: `ForceCommand
//! internal-sftp`, a NAS's backup user), by sftp batches in sftp's start directory.

use super::super::master::Master;
use super::super::remote;
use super::tools::{self, Sftp};
use crate::model::{FailureKind, Outcome, Problem, Shape, Tool, WorkloadSpec};
use crate::sys::cancel::Cancel;
use crate::sys::run::Finished;
use std::time::Duration;

/// Time allowed for the server's small commands (setup, count, clean-up).
const SMALL: Duration = Duration::from_secs(30);

/// The server's private directory, removed when dropped (also after a failure or an
/// interruption: the clean-up ignores the cancellation).
pub struct RemoteDir<'a> {
    master: &'a Master,
    pub path: String,
    has_rsync: bool,
    has_scp: bool,
    /// Made by sftp (the login runs no commands): counted and removed by sftp too.
    sftp: Option<Sftp<'a>>,
    /// The tree's directories (an sftp clean-up names each).
    tree_dirs: u32,
    /// What the login shell printed before the setup's answer (see
    /// [`tools::shell_output`]).
    shell_says: Option<String>,
    /// Bytes free on the directory's disk, where `df` said.
    free: Option<u64>,
}

impl<'a> RemoteDir<'a> {
    /// The server has `tool`'s server side (sftp's subsystem is found out by its run).
    pub fn has(&self, tool: Tool) -> bool {
        match tool {
            Tool::Sftp => true,
            Tool::Rsync => self.has_rsync,
            Tool::Scp => self.has_scp,
        }
    }

    /// Made by a command; when that never ran in a session that did start (no ssh
    /// error, not the script's own failure), by `sftp` if given: a login may allow sftp
    /// alone (or have no POSIX shell).
    pub fn create(
        master: &'a Master,
        sftp: Option<Sftp<'a>>,
        spec: &WorkloadSpec,
        cancel: &Cancel,
    ) -> Result<RemoteDir<'a>, Outcome> {
        let within = spec.remote_dir.as_deref();
        let f = master.run(&tools::setup_command(within), SMALL, cancel);
        let made = |path, sftp| RemoteDir {
            master,
            path,
            has_rsync: f.stdout.lines().any(|l| l.trim() == tools::RSYNC),
            has_scp: f.stdout.lines().any(|l| l.trim() == tools::SCP),
            sftp,
            tree_dirs: spec.tree_dirs(),
            shell_says: tools::shell_output(&f.stdout),
            free: tools::parse_space(&f.stdout),
        };
        if let Some(path) = tools::parse_dir(&f.stdout).filter(|_| f.success()) {
            return Ok(made(path, None));
        }
        let why = |sftp_said: Option<String>| {
            let said = f.last_line();
            Outcome::failed(
                FailureKind::Remote,
                Problem::NoRemoteDir { said, sftp_said },
            )
        };
        let never_ran = f.killed_by_deadline.is_none()
            && !matches!(f.exit.code, Some(255 | tools::SETUP_FAILED));
        let Some(sftp) = sftp.filter(|_| never_ran) else {
            return Err(why(None));
        };
        let name = tools::sftp_dir(within);
        let g = sftp.run(&tools::sftp_setup_batch(&name), None, SMALL, cancel)?;
        if !g.success() {
            return Err(why(Some(g.last_line())));
        }
        Ok(made(name, Some(sftp)))
    }

    /// Why `tool` cannot run here though it is installed: the login shell prints before
    /// every command, and scp's classic protocol and rsync take that for their peer's
    /// first words (as the user's own do). sftp is tried: its subsystem may start
    /// without the shell (`internal-sftp`).
    pub fn unusable(&self, tool: Tool) -> Option<Outcome> {
        let said = self.shell_says.as_deref().filter(|_| tool != Tool::Sftp)?;
        Some(noisy_shell(said))
    }

    /// Why a sample of `shape` cannot be held in the directory, if its disk has too little
    /// room: each sample writes the file or the tree there (a download's source too).
    pub fn too_small(&self, spec: &WorkloadSpec, shape: Shape) -> Option<Outcome> {
        let need = spec.on_disk(shape) + (1 << 20);
        let free = self.free.filter(|&free| free < need)?;
        let parent = self.path.rsplit_once('/').map_or("", |(p, _)| p);
        let parent = if parent.is_empty() { "/" } else { parent };
        Some(Outcome::Unavailable {
            problem: Problem::NoRoom {
                parent: parent.to_string(),
                free,
                need,
                data: spec.data(shape),
            },
        })
    }

    /// `failure` said plainly where it is an sftp-server's, started by a login shell
    /// that printed first (sftp's own words: "Received message too long").
    pub fn explain(&self, tool: Tool, failure: Outcome) -> Outcome {
        let garbled = |m: &str| {
            m.contains("Received message too long") || m.contains("remote shell produces no output")
        };
        let said = failure.problem().and_then(Problem::said);
        match (&self.shell_says, said) {
            (Some(shell), Some(said)) if tool == Tool::Sftp && garbled(said) => noisy_shell(shell),
            _ => failure,
        }
    }

    pub fn join(&self, rel: &str) -> String {
        format!("{}/{rel}", self.path)
    }

    /// Remove the directory over `master` (this one's, or a fresh connection's).
    pub fn remove_over(&self, master: &Master) {
        let quiet = Cancel::new();
        match self.sftp {
            Some(s) => {
                let batch = tools::sftp_cleanup_batch(&self.path, self.tree_dirs);
                let _ = Sftp { master, ..s }.run(&batch, None, SMALL, &quiet);
            }
            None => {
                let _ = master.run(&tools::cleanup_command(&self.path), SMALL, &quiet);
            }
        }
    }

    /// `(files, bytes)` of the regular files under `path` (a file or the tree).
    pub fn count(&self, path: &str, shape: Shape, cancel: &Cancel) -> Result<(u64, u64), Outcome> {
        let failed = |f: &Finished| {
            let said = f.last_line();
            Outcome::failed(FailureKind::Remote, Problem::Counting { said })
        };
        let Some(sftp) = self.sftp else {
            let f = self.master.run(&tools::count_command(path), SMALL, cancel);
            return tools::parse_count(&f.stdout)
                .filter(|_| f.success())
                .ok_or_else(|| failed(&f));
        };
        let (mut files, mut bytes) = (0u64, 0u64);
        for batch in tools::sftp_count_batches(path, shape, self.tree_dirs) {
            let f = sftp.run(&batch, None, SMALL, cancel)?;
            if !f.success() {
                return Err(failed(&f));
            }
            let (n, b) = tools::parse_ls(&f.stdout);
            (files, bytes) = (files.saturating_add(n), bytes.saturating_add(b));
        }
        Ok((files, bytes))
    }

    /// The server's CPU counters, where the login runs commands (not made by sftp).
    pub fn cpu_probe(&self, cancel: &Cancel) -> Option<remote::CpuProbe> {
        if self.sftp.is_some() {
            return None;
        }
        let f = (self.master).run(&remote::cpu_probe_command(remote::CPU0), SMALL, cancel);
        f.stdout
            .lines()
            .find_map(|l| remote::parse_cpu_probe(l, remote::CPU0))
    }
}

impl Drop for RemoteDir<'_> {
    fn drop(&mut self) {
        self.remove_over(self.master);
    }
}

/// A login shell that prints before every command: one message for every tool, so that a
/// run's answer says it once.
fn noisy_shell(said: &str) -> Outcome {
    Outcome::Unavailable {
        problem: Problem::NoisyShell { said: said.into() },
    }
}
