//! Workload modes: the real `sftp` (batch mode), `rsync -e ssh` and `scp -O` moving one
//! large file or a tree of small files, up or down, over one connection whose suite is
//! forced and verified like every other sample's.
//!
//! Per sample: a control master connects (the handshake, not timed); the server makes a
//! private directory and says whether it has rsync and scp (on a login that runs no commands,
//! sftp makes it); a download first puts its source
//! there (not timed); an empty run of the tool gives its start-up cost (channel,
//! subsystem, rsync's own handshake), which is taken off the timed run; what arrived is
//! counted at the far end; the directory is removed whatever happened.

mod data;
mod dir;
mod tools;

use super::master::Master;
use super::openssh;
use super::payload::Payload;
use super::remote;
use crate::destination::Target;
use crate::model::{
    CpuWindow, Doing, FailureKind, Outcome, Problem, Sample, SampleRequest, Shape, Tool, Window,
    Workload, WorkloadSpec,
};
use crate::sys::cancel::Cancel;
use crate::sys::proc;
use crate::sys::run::{self, Finished};
use data::LocalData;
use dir::RemoteDir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tools::{Leg, Sftp};

/// Runs the workload modes; holds the local data across samples.
pub struct Workloads {
    spec: WorkloadSpec,
    payload: Payload,
    data: Option<LocalData>,
    /// The server ends a connection after its first session: no workload can run there.
    one_session: bool,
    /// The client's scp takes `-O` (found out at its first use).
    scp_classic_flag: Option<bool>,
}

/// Why no workload runs on a server that ends a connection after its first session.
fn one_session_only() -> Outcome {
    Outcome::Unavailable {
        problem: Problem::OneSession,
    }
}

/// The first executable `name` on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// OpenSSH's own tool in the directory of `ssh` (never rsync, which is not OpenSSH's):
/// named as the client is (`hpnssh` has `hpnscp` beside it), else by its own name.
fn beside(ssh: &Path, tool: Tool) -> Option<PathBuf> {
    if !matches!(tool, Tool::Scp | Tool::Sftp) {
        return None;
    }
    let (dir, own) = (ssh.parent()?, ssh.file_name()?.to_str()?);
    let own = own.replacen("ssh", tool.as_str(), 1);
    [own.as_str(), tool.as_str()]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// The name of the data of `shape` under a directory.
fn name(shape: Shape) -> &'static str {
    match shape {
        Shape::File => "file",
        Shape::Tree => "tree",
    }
}

/// A tool that did not finish cleanly, as an outcome.
fn tool_failure(tool: Tool, f: &Finished) -> Outcome {
    match f.killed_by_deadline {
        Some(true) => Outcome::failed(FailureKind::Timeout, Problem::ToolTimedOut { tool }),
        Some(false) => Outcome::failed(FailureKind::Cancelled, Problem::Interrupted),
        None => Outcome::failed(
            FailureKind::Remote,
            Problem::ToolFailed {
                tool,
                said: f.last_line(),
            },
        ),
    }
}

impl Workloads {
    pub fn new(spec: WorkloadSpec, payload: Payload) -> Self {
        Workloads {
            spec,
            payload,
            data: None,
            one_session: false,
            scp_classic_flag: None,
        }
    }

    /// Measure one workload sample of `req` (whose mode is a workload).
    pub fn measure(
        &mut self,
        ssh: &Path,
        target: &Target,
        req: &SampleRequest,
        cancel: &Cancel,
    ) -> Sample {
        let start = Instant::now();
        let w = req.mode.workload().expect("a workload mode");
        let mut sample = Sample::new(req.suite.clone(), req.mode, Outcome::Success);
        sample.outcome = match self.measure_in(ssh, target, req, w, cancel, &mut sample) {
            Ok(()) => Outcome::Success,
            Err(o) => o,
        };
        sample.wall = start.elapsed();
        sample
    }

    /// The client's tool (for scp, whether it takes `-O`), and the local data (written once
    /// per run). OpenSSH's scp and sftp are the ones beside the run's `ssh` (another
    /// OpenSSH unpacked beside the system's: its own), else the first on PATH.
    fn prepare(&mut self, tool: Tool, ssh: &Path, cancel: &Cancel) -> Result<PathBuf, Outcome> {
        let path =
            beside(ssh, tool)
                .or_else(|| on_path(tool.as_str()))
                .ok_or(Outcome::Unavailable {
                    problem: Problem::ToolHere { tool },
                })?;
        if tool == Tool::Scp && self.scp_classic_flag.is_none() {
            self.scp_classic_flag = Some(tools::scp_takes_classic_flag(&path, cancel));
        }
        if self.data.is_none() {
            let data = LocalData::create(&self.spec, &self.payload)
                .map_err(|e| Outcome::local(Doing::LocalData, e))?;
            self.data = Some(data);
        }
        Ok(path)
    }

    fn measure_in(
        &mut self,
        ssh: &Path,
        target: &Target,
        req: &SampleRequest,
        w: Workload,
        cancel: &Cancel,
        sample: &mut Sample,
    ) -> Result<(), Outcome> {
        if self.one_session {
            return Err(one_session_only());
        }
        let tool = self.prepare(w.tool, ssh, cancel)?;
        let data = self.data.as_ref().expect("made above");
        let master = Master::start(ssh, target, req, data.scratch(), cancel)?;
        sample.negotiated = master.negotiated().map(Box::new);
        openssh::negotiation(req, sample.negotiated.as_deref())?;
        let sftp = (w.tool == Tool::Sftp).then_some(Sftp {
            tool: &tool,
            ssh,
            master: &master,
            scratch: data.scratch(),
        });
        let dir = RemoteDir::create(&master, sftp, &self.spec, cancel)?;
        if !dir.has(w.tool) {
            return Err(Outcome::Unavailable {
                problem: Problem::ToolThere { tool: w.tool },
            });
        }
        if let Some(why) = dir
            .unusable(w.tool)
            .or_else(|| dir.too_small(&self.spec, w.shape))
        {
            return Err(why);
        }
        let run = Session {
            ssh,
            tool: &tool,
            classic_flag: self.scp_classic_flag == Some(true),
            master: &master,
            dir: &dir,
            data,
            w,
            req,
            cancel,
        };
        run.measure(&self.spec, sample).map_err(|e| {
            // Said plainly (and once found, without connecting again): the tool's own
            // words ("Connection closed") do not tell why.
            let one = || Master::one_session_only(ssh, target, req, data.scratch(), cancel);
            self.one_session = master.ended() && one();
            if self.one_session {
                // The directory's own connection is gone: its first session made it.
                if let Ok(fresh) = Master::start(ssh, target, req, data.scratch(), cancel) {
                    dir.remove_over(&fresh);
                }
                one_session_only()
            } else {
                dir.explain(w.tool, e)
            }
        })
    }
}

/// The CPU readings around the timed run: the master's (Linux) and the server's.
struct Cpu {
    master: Option<(Duration, Duration)>,
    server: Option<(remote::CpuProbe, remote::CpuProbe)>,
}

/// A verified sample's figures: the window is the timed run less the start-up.
/// What a workload's run moved.
#[derive(Clone, Copy)]
struct Moved {
    files: u64,
    bytes: u64,
}

fn fill(sample: &mut Sample, timed: &Finished, baseline: Duration, moved: Moved, cpu: Cpu) {
    let Moved { files, bytes } = moved;
    sample.bytes = bytes;
    sample.files = Some(files);
    sample.transfer = Some(timed.wall);
    let time = timed.wall.saturating_sub(baseline);
    // A run that is mostly start-up is not trusted to say the rate without it.
    sample.window = (time * 4 >= timed.wall).then_some(Window { bytes, time });
    let interval = sample.window.map_or(timed.wall, |w| w.time);
    sample.client_cpu = Some(timed.exit.cpu);
    let master_cpu = cpu.master.map(|(a, b)| b.saturating_sub(a).as_secs_f64());
    sample.client_window_cpu = master_cpu.map(|m| {
        let tool = timed.exit.cpu.total().as_secs_f64();
        CpuWindow {
            peak: m.max(tool),
            ..CpuWindow::of(m + tool, interval, bytes)
        }
    });
    sample.server_cpu = cpu
        .server
        .and_then(|(a, b)| remote::cpu_between(&a, &b, interval, bytes));
}

/// One sample's connection, directory and tool.
struct Session<'a> {
    ssh: &'a Path,
    tool: &'a Path,
    /// scp is run with `-O` (its classic protocol).
    classic_flag: bool,
    master: &'a Master,
    dir: &'a RemoteDir<'a>,
    data: &'a LocalData,
    w: Workload,
    req: &'a SampleRequest,
    cancel: &'a Cancel,
}

impl Session<'_> {
    fn measure(&self, spec: &WorkloadSpec, sample: &mut Sample) -> Result<(), Outcome> {
        let (shape, put) = (self.w.shape, self.w.put);
        let source = self.data.path(shape);
        let got = self
            .data
            .sample_dir("get.")
            .map_err(|e| Outcome::local(Doing::TempDir, e))?;
        let local_copy = got.path().join(name(shape));
        // First: it also finds out whether the server has the tool's server side.
        let baseline = self.baseline()?;
        if !put {
            self.stage_source(&source)?;
        }
        let cpu0 = self.dir.cpu_probe(self.cancel);
        let master0 = proc::cpu_time(self.master.pid());
        let remote = match put {
            true => self.dir.join(&format!("put/{}", name(shape))),
            false => self.dir.join(&format!("src/{}", name(shape))),
        };
        let local: &Path = if put { &source } else { &local_copy };
        let leg = Leg {
            tool: self.w.tool,
            shape,
            put,
            local,
            remote: &remote,
        };
        let timed = self.checked(&leg, self.req.suite.tool.as_deref())?;
        let master1 = proc::cpu_time(self.master.pid());
        let cpu1 = self.dir.cpu_probe(self.cancel);
        let (files, bytes) = match put {
            true => self.dir.count(&remote, shape, self.cancel)?,
            false => data::verify_copy(&source, &local_copy)?,
        };
        let want = spec.size(shape);
        if (bytes, files) != want {
            let why = Problem::Moved {
                files,
                bytes,
                sent_files: want.1,
                sent_bytes: want.0,
            };
            return Err(Outcome::failed(FailureKind::ByteCount, why));
        }
        let cpu = Cpu {
            master: master0.zip(master1),
            server: cpu0.zip(cpu1),
        };
        fill(sample, &timed, baseline, Moved { files, bytes }, cpu);
        Ok(())
    }

    /// A download's source, put on the server first (not timed).
    fn stage_source(&self, source: &Path) -> Result<(), Outcome> {
        let shape = self.w.shape;
        let remote = self.dir.join(&format!("src/{}", name(shape)));
        let up = Leg {
            tool: self.w.tool,
            shape,
            put: true,
            local: source,
            remote: &remote,
        };
        self.checked(&up, None)?;
        Ok(())
    }

    /// The empty run's time (the tool's start-up over this connection). An sftp that
    /// cannot start its subsystem means the server has none.
    fn baseline(&self) -> Result<Duration, Outcome> {
        let empty = self
            .data
            .sample_dir("empty.")
            .map_err(|e| Outcome::local(Doing::TempDir, e))?;
        let f = match self.w.tool {
            Tool::Sftp => self.sftp(&format!("cd \"{}\"\n", self.dir.path), None)?,
            Tool::Rsync | Tool::Scp => {
                let remote = self.dir.join("put/empty");
                let leg = Leg {
                    tool: self.w.tool,
                    shape: Shape::Tree,
                    put: true,
                    local: empty.path(),
                    remote: &remote,
                };
                self.copy(&leg, None)?
            }
        };
        // Through the master, a refused subsystem reads "Connection closed" at sftp's
        // start while the same connection runs commands: the server has no SFTP.
        let closed = f.stderr.contains("subsystem request failed")
            || (f.stderr.contains("Connection closed") && self.master.alive());
        if self.w.tool == Tool::Sftp && !f.success() && f.killed_by_deadline.is_none() && closed {
            return Err(Outcome::Unavailable {
                problem: Problem::NoSftp,
            });
        }
        if !f.success() {
            return Err(tool_failure(self.w.tool, &f));
        }
        Ok(f.wall)
    }

    /// Run one leg; a failure is the sample's outcome.
    fn checked(&self, leg: &Leg, options: Option<&str>) -> Result<Finished, Outcome> {
        let f = match leg.tool {
            Tool::Sftp => self.sftp(&tools::sftp_batch(leg)?, options)?,
            Tool::Rsync | Tool::Scp => self.copy(leg, options)?,
        };
        if f.success() {
            Ok(f)
        } else {
            Err(tool_failure(leg.tool, &f))
        }
    }

    fn sftp(&self, batch: &str, options: Option<&str>) -> Result<Finished, Outcome> {
        let sftp = Sftp {
            tool: self.tool,
            ssh: self.ssh,
            master: self.master,
            scratch: self.data.scratch(),
        };
        sftp.run(batch, options, self.req.timeout, self.cancel)
    }

    /// rsync or scp for `leg`.
    fn copy(&self, leg: &Leg, options: Option<&str>) -> Result<Finished, Outcome> {
        if leg.tool == Tool::Scp {
            let (tool, ssh) = (self.tool, self.ssh);
            return self.run(tools::scp_command(
                tool,
                self.classic_flag,
                ssh,
                self.master,
                leg,
            ));
        }
        let mut cmd = Command::new(self.tool);
        cmd.arg("-a")
            .args(options.unwrap_or_default().split_whitespace());
        cmd.arg("-e")
            .arg(tools::rsync_shell(self.ssh, &self.master.attach_options()));
        cmd.arg("--")
            .args(tools::rsync_paths(leg, &self.master.tool_destination()));
        self.run(cmd)
    }

    fn run(&self, cmd: Command) -> Result<Finished, Outcome> {
        run::run(cmd, self.req.timeout, self.cancel).map_err(|e| {
            Outcome::local(Doing::RunningTool, format!("{}: {e}", self.tool.display()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scp and sftp are taken from beside the run's ssh when it has them; rsync never.
    #[test]
    fn openssh_s_tools_come_from_beside_its_ssh() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["ssh", "sftp", "rsync"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ssh = dir.path().join("ssh");
        assert_eq!(beside(&ssh, Tool::Sftp), Some(dir.path().join("sftp")));
        assert_eq!(beside(&ssh, Tool::Scp), None, "no scp beside it");
        assert_eq!(beside(&ssh, Tool::Rsync), None);
        // HPN-SSH's tools carry its prefix, and are preferred to a plain one beside.
        for name in ["hpnssh", "hpnscp"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let hpn = dir.path().join("hpnssh");
        assert_eq!(beside(&hpn, Tool::Scp), Some(dir.path().join("hpnscp")));
        assert_eq!(beside(&hpn, Tool::Sftp), Some(dir.path().join("sftp")));
    }
}
