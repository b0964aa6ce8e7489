//! The run's echo reference: one connection of the reference suite with one `exec cat`
//! session over it, kept open from sample to sample. Each echo sample borrows its pipes
//! and types every keystroke into it right after its own (see `analysis::echo`); the
//! pipes come back when the sample went well, and a reference that broke is opened again
//! for the next sample.

use super::super::master::Master;
use super::super::remote;
use super::streams::wait_ready;
use crate::destination::Target;
use crate::model::{Doing, FailureKind, Mode, Outcome, Problem, SampleRequest, Suite};
use crate::sys::cancel::Cancel;
use crate::sys::proc::{self, Exit};
use std::io::BufReader;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The reference session's pipes, lent to one echo sample at a time.
pub(super) type Pipes = (ChildStdin, BufReader<ChildStdout>);

pub(super) struct Reference {
    suite: Suite,
    pipes: Option<Pipes>,
    child: Child,
    exited: mpsc::Receiver<Exit>,
    // Dropped last: the session goes before its connection.
    _master: Master,
}

/// Why an echo sample has no reference: a failure of the sample (tried again), never a
/// refusal of its own suite.
fn failure(suite: &Suite, why: Problem) -> Outcome {
    let why = Problem::Reference {
        label: Some(suite.label()),
        why: Box::new(why),
    };
    Outcome::failed(FailureKind::Remote, why)
}

/// An ssh attached to `master` that runs `exec cat` on the server, its stdin and stdout
/// piped.
fn attach_cat(ssh: &Path, master: &Master) -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new(ssh);
    cmd.args(master.attach_options())
        .args(["-T", "-a", "-x", "--", master.destination()])
        .arg(remote::echo_command())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    proc::die_with_parent(&mut cmd);
    cmd.spawn()
}

impl Reference {
    /// Connect with `suite` forced and start `exec cat` over the connection; ready once
    /// the remote side said so, within `timeout`.
    pub(super) fn open(
        ssh: &Path,
        target: &Target,
        suite: &Suite,
        scratch: &Path,
        timeout: Duration,
        cancel: &Cancel,
    ) -> Result<Reference, Outcome> {
        let req = SampleRequest {
            suite: suite.clone(),
            mode: Mode::Echo,
            bytes: 0,
            ramp: 0,
            timeout,
            until: None,
            together: None,
            reference: None,
        };
        let master = Master::start(ssh, target, &req, scratch, cancel)
            .map_err(|o| failure(suite, o.problem().cloned().unwrap_or(Problem::MasterExited)))?;
        let mut child = attach_cat(ssh, &master)
            .map_err(|e| failure(suite, Problem::local(Doing::RunningSsh, e)))?;
        let exited = proc::reap_in_background(child.id());
        let stdin = child.stdin.take().expect("stdin piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut reference = Reference {
            suite: suite.clone(),
            pipes: None,
            child,
            exited,
            _master: master,
        };
        // The ready line, read in a thread so that a silent server cannot hold us.
        let (tx, rx) = mpsc::channel();
        proc::spawn_named("sb-ref-ready", move || {
            let ok = wait_ready(&mut stdout, &mut Default::default());
            let _ = tx.send(ok.then_some(stdout));
        });
        let started = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Some(stdout)) => {
                    reference.pipes = Some((stdin, stdout));
                    return Ok(reference);
                }
                Ok(None) => return Err(failure(suite, Problem::SessionEnded)),
                Err(_) if cancel.is_cancelled() => {
                    return Err(failure(suite, Problem::Interrupted));
                }
                Err(_) if started.elapsed() >= timeout => {
                    return Err(failure(suite, Problem::NotReadyInTime));
                }
                Err(_) => {}
            }
        }
    }

    /// Whether this is a working reference of `suite`.
    pub(super) fn serves(&self, suite: &Suite) -> bool {
        self.suite == *suite && self.pipes.is_some() && self.exited_yet().is_none()
    }

    fn exited_yet(&self) -> Option<Exit> {
        self.exited.try_recv().ok()
    }

    pub(super) fn lend(&mut self) -> Option<Pipes> {
        self.pipes.take()
    }

    pub(super) fn give_back(&mut self, pipes: Pipes) {
        self.pipes = Some(pipes);
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        // EOF ends the remote `cat`, and with it the session.
        self.pipes = None;
        if self.exited.recv_timeout(Duration::from_secs(2)).is_err() {
            proc::kill_group(self.child.id(), libc::SIGKILL);
            let _ = self.exited.recv_timeout(Duration::from_secs(2));
        }
    }
}
