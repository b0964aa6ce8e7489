//! The real transport: one OpenSSH `ssh` process per sample, suite forced by `-o` options.
//!
//! Threads per sample: one reaps the process with `wait4` (exact exit time, client CPU),
//! one reads stderr (ssh's `-v` lines, timestamped, bounded), one reads stdout (the
//! remote ready line, then the data or the byte count), one feeds stdin (unless ssh
//! reads a send's bytes from a file itself). The calling
//! thread only waits, enforces the timeout and watches for cancellation; a sample that
//! overruns is killed with its whole process group.

mod exec;
mod fill;
mod group;
mod into_file;
mod judge;
mod notes;
mod options;
mod proxy;
mod reference;
mod server_log;
mod streams;
mod typing;
mod x11;

use judge::{Observed, judge, wait_exit};
use streams::{WriteStep, echo_session, feed_stdin, read_stderr, read_stdout};

use super::master::Master;
use super::payload::{Payload, Zeros, ZerosSlot};
use super::workload::Workloads;
use super::{GroupProgress, Transport, rekey, remote, sshlog};
use crate::destination::Target;
use crate::model::{
    Doing, FailureKind, Mode, Negotiated, Note, Outcome, Problem, Sample, SampleRequest,
    WorkloadSpec,
};
use crate::sys::cancel::Cancel;
use crate::sys::proc::{self, Exit};
use crate::sys::scratch::Scratch;
use crate::sys::sink::Sink;
use fill::{Seen, collect, fill};
use group::Shared;
pub(crate) use judge::negotiation;

use notes::Notes;
pub use options::session_options;
use reference::{Pipes, Reference};
use server_log::LogMark;
pub use server_log::ServerLog;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self};
use std::time::{Duration, Instant};

/// Lines of ssh stderr kept per sample, and their maximum length.
const MAX_STDERR_LINES: usize = 4000;
const MAX_LINE: usize = 1024;
/// Output a login shell may print before the ready line (motd-like noise).
const MAX_PRE_READY: usize = 64 * 1024;
/// How often the waiting thread checks for cancellation.
const POLL: Duration = Duration::from_millis(20);

/// How a client takes where to connect and the suite to force, and how it is driven.
#[derive(Clone, Debug, Default)]
pub enum Dialect {
    /// OpenSSH's options, and the destination as ssh_config resolves it.
    #[default]
    OpenSsh,
    /// HPN-SSH: OpenSSH's options, every sample on a connection of its own (it grows a
    /// window only there, see `group`).
    Hpn,
    /// dbclient's own flags: it reads no ssh_config.
    Dropbear(DropbearLogin),
}

/// Where dbclient connects and how it logs in, as `ssh -G` resolved the destination (or
/// the sandbox made them).
#[derive(Clone, Debug)]
pub struct DropbearLogin {
    pub host: String,
    pub port: u16,
    pub user: String,
    /// A key in Dropbear's format (`-i`); `None`: its own default (`~/.ssh/id_dropbear`).
    pub identity: Option<PathBuf>,
    /// `HOME` for dbclient, whose `.ssh/known_hosts` it checks the host key against
    /// (the sandbox's private one); `None`: the user's own.
    pub home: Option<PathBuf>,
    /// The server's log, where it says what each connection negotiated (the sandbox's);
    /// `None`: nothing can tell, and a sample is trusted to have used what was offered.
    pub server_log: Option<ServerLog>,
}

/// Spawns an OpenSSH client, or Dropbear's dbclient (see [`Dialect`]).
pub struct OpenSsh {
    ssh: PathBuf,
    dialect: Dialect,
    target: Target,
    payload: Payload,
    workloads: Workloads,
    /// Where the control masters of shared connections keep their sockets.
    scratch: Option<Scratch>,
    /// The run's echo reference, open while echo samples ask for it.
    reference: Option<Reference>,
    /// What sends over a shared connection read (made on first use).
    zeros: ZerosSlot,
    /// What was done otherwise than asked, or learnt of the server, for the user.
    notes: Notes,
    /// The server ends a connection after its first session: no sample shares one.
    one_session: bool,
    /// The login allows sftp alone: a connect sample's session is an sftp one.
    sftp_connect: bool,
    /// The private X display the x11 samples forward (started on first use).
    display: Option<x11::XDisplay>,
    /// The server can give a session a terminal (typing and x11 ask for one); not so for
    /// a sandbox run by an ordinary user where terminals need root to hand over.
    terminals: bool,
}

/// The scratch directories' prefix (swept when a killed run left one).
const SCRATCH_PREFIX: &str = "sshbench-conn.";

/// A spawned ssh as [`OpenSsh::watch`] follows it: when it started, the process whose
/// CPU is the client's (ssh, or the master it runs over), the echo reference session
/// lent to it, and the file a receive writes into.
struct Watched {
    start: Instant,
    cpu_pid: u32,
    reference: Option<Pipes>,
    sink: Option<Sink>,
}

/// What a sample moved: all it was asked to, or, for a time-bounded send, what the
/// writer wrote before its time was up (the server's count must agree).
fn moved(req: &SampleRequest, written: u64) -> u64 {
    match (req.mode, req.until) {
        (Mode::Send, Some(_)) => written,
        _ => req.bytes,
    }
}

impl OpenSsh {
    pub fn new(ssh: PathBuf, target: Target, payload: Payload) -> Self {
        OpenSsh {
            workloads: Workloads::new(WorkloadSpec::default(), payload.clone()),
            ssh,
            dialect: Dialect::OpenSsh,
            target,
            payload,
            scratch: None,
            reference: None,
            zeros: ZerosSlot::default(),
            notes: Notes::default(),
            one_session: false,
            sftp_connect: false,
            display: None,
            terminals: true,
        }
    }

    /// Drive HPN-SSH or dbclient instead of OpenSSH's ssh.
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    fn dropbear(&self) -> Option<&DropbearLogin> {
        match &self.dialect {
            Dialect::Dropbear(login) => Some(login),
            Dialect::OpenSsh | Dialect::Hpn => None,
        }
    }

    /// Whether the server can give a session a terminal (see [`crate::sys::pty`]).
    pub fn with_terminals(mut self, terminals: bool) -> Self {
        self.terminals = terminals;
        self
    }

    /// What the workload modes move (the default: [`WorkloadSpec::default`]).
    pub fn with_workloads(mut self, spec: WorkloadSpec) -> Self {
        self.workloads = Workloads::new(spec, self.payload.clone());
        self
    }

    /// The full argument list for one sample (without the program name).
    pub fn args(&self, req: &SampleRequest) -> Vec<String> {
        if let Some(login) = self.dropbear() {
            return dropbear_args(req, login);
        }
        let mut args = session_options(req);
        args.extend(self.target.ssh_options.iter().cloned());
        self.command(req, args, false)
    }

    /// The argument list of a sample that is a session of `master`'s connection (a send
    /// `from_file` or fed).
    fn attached_args(&self, req: &SampleRequest, master: &Master, from_file: bool) -> Vec<String> {
        let mut args = master.attach_options();
        args.extend(["-T", "-a", "-x"].map(String::from));
        self.command(req, args, from_file)
    }

    /// `options`, then the destination and the remote command of `req`'s mode.
    fn command(&self, req: &SampleRequest, mut args: Vec<String>, from_file: bool) -> Vec<String> {
        let sftp = req.mode == Mode::Connect && self.sftp_connect;
        if sftp {
            args.push("-s".into());
        }
        args.push("--".into());
        args.push(self.target.destination.clone());
        args.push(remote_command(req, from_file, sftp));
        args
    }
}

/// What the server runs for a sample of `req`'s mode: an sftp session for a login that
/// runs no commands (`sftp`), a send that ssh reads from a file (`from_file`).
fn remote_command(req: &SampleRequest, from_file: bool, sftp: bool) -> String {
    match req.mode {
        Mode::Connect if sftp => "sftp".into(),
        Mode::Connect => remote::connect_command(),
        Mode::Send if from_file => remote::send_file_command(req.ramp),
        Mode::Send => remote::send_command(req.ramp),
        Mode::Receive => {
            let streams = req.together.map_or(1, |t| t.of);
            remote::receive_command(req.bytes, remote::memory_copies(streams))
        }
        Mode::Echo => remote::echo_command(),
        Mode::Typing => remote::typing_command(crate::model::typing::TYPED_KEYS),
        m => unreachable!("{m} runs through measure::workload, not one ssh"),
    }
}

/// dbclient's arguments for one sample: no terminal, where to log in, the forced
/// cipher and MAC (it then offers those alone), the host and the remote command.
fn dropbear_args(req: &SampleRequest, login: &DropbearLogin) -> Vec<String> {
    let mut args: Vec<String> = vec!["-T".into(), "-p".into(), login.port.to_string()];
    args.extend(["-l".into(), login.user.clone()]);
    if let Some(key) = &login.identity {
        args.extend(["-i".into(), key.display().to_string()]);
    }
    if let Some(c) = &req.suite.cipher {
        args.extend(["-c".into(), c.clone()]);
    }
    if let Some(m) = &req.suite.mac {
        args.extend(["-m".into(), m.clone()]);
    }
    args.push(login.host.clone());
    args.push(remote_command(req, false, false));
    args
}

impl OpenSsh {
    /// Start ssh for one sample in its own process group: a timeout kills ssh and any
    /// ProxyCommand together, and the terminal's Ctrl-C reaches sshbench, which decides.
    fn spawn(
        &self,
        req: &SampleRequest,
        over: Option<&Shared>,
        file: Option<std::fs::File>,
        sink: Option<&Sink>,
    ) -> Result<Child, Outcome> {
        let from_file = file.is_some();
        let stdout = match sink.map(Sink::for_child) {
            Some(Ok(f)) => Stdio::from(f),
            Some(Err(e)) => return Err(Outcome::local(Doing::OutputFile, e)),
            None => Stdio::piped(),
        };
        let stdin = match file {
            Some(f) => Stdio::from(f),
            None if req.mode == Mode::Connect => Stdio::null(),
            None => Stdio::piped(),
        };
        let args = match over {
            Some(o) => self.attached_args(req, o.master, from_file),
            None => self.args(req),
        };
        let mut cmd = Command::new(&self.ssh);
        // The sample's thread waits for it: ssh goes if sshbench is killed meanwhile.
        proc::die_with_parent(&mut cmd);
        match self.dropbear() {
            Some(login) => {
                proc::without_terminal(&mut cmd);
                if let Some(home) = &login.home {
                    cmd.env("HOME", home);
                }
            }
            None => {
                cmd.process_group(0);
            }
        }
        cmd.args(args)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Outcome::local(Doing::RunningTool, format!("{}: {e}", self.ssh.display())))
    }
}

/// A send reads its bytes from a file only when its window holds at least this many:
/// a file cannot pause at the ramp, so the server's mark comes back behind whatever its
/// sshd has still to decrypt (up to a channel window, 2 MiB), and the window is short by
/// that lag, a share of it that grows as the window shrinks (bench/results/notebook.md, "A slow
/// server's send windows"). Smaller sends (a slow server, a slow cipher) are fed, pausing
/// at the mark, and at their rates the feeder costs little.
const FILE_SEND_MIN_WINDOW: u64 = 32 << 20;

/// What a sample negotiated: its master's, what ssh said, or what the server logged of
/// its connection after `mark`.
fn negotiated(
    over: Option<&Shared>,
    lines: &[String],
    mark: Option<&LogMark>,
) -> Option<Negotiated> {
    match over {
        Some(o) => o.negotiated.clone(),
        None => sshlog::negotiated(lines),
    }
    .or_else(|| mark?.negotiated())
}

/// A send of a size (not a time-bounded warm-up), with bytes past its ramp: over a
/// shared connection, ssh reads it from a file.
fn sized_send(r: &SampleRequest) -> bool {
    r.mode == Mode::Send && r.until.is_none() && r.bytes > r.ramp
}

impl OpenSsh {
    /// One sample: spawn ssh (over its own connection, or as a session of `over`'s),
    /// feed and read it, wait for it, judge it.
    fn take(&mut self, req: &SampleRequest, cancel: &Cancel, over: Option<&Shared>) -> Sample {
        let mark = self.dropbear().and_then(|l| l.server_log.as_ref()?.mark());
        let (file, ping) = self.send_source(req, cancel, over);
        let start = Instant::now();
        let mut sample = Sample::new(req.suite.clone(), req.mode, Outcome::Success);
        let lent = match self.reference_for(req, cancel) {
            Ok(pipes) => pipes,
            Err(outcome) => {
                sample.outcome = outcome;
                return sample;
            }
        };
        let sink = into_file::sink_for(req);
        let mut child = match self.spawn(req, over, file, sink.as_ref()) {
            Ok(c) => c,
            Err(e) => {
                sample.outcome = e;
                return sample;
            }
        };
        let watched = Watched {
            start,
            // The client's CPU is the process that moves the data: the master, if shared.
            cpu_pid: over.map_or(child.id(), |o| o.master.pid()),
            reference: lent,
            sink,
        };
        let (exit, killed, mut seen) = self.watch(&mut child, req, cancel, watched);
        if let (Some(r), Some(pipes)) = (self.reference.as_mut(), seen.out.reference.take()) {
            r.give_back(pipes);
        }
        let moved = moved(req, seen.written.written);
        sample.wall = exit.at - start;
        // An attached ssh only hands its pipes over to the master.
        sample.client_cpu = over.is_none().then_some(exit.cpu);
        sample.negotiated = negotiated(over, &seen.lines, mark.as_ref()).map(Box::new);
        self.note_dbclient(sample.negotiated.as_deref());
        let observed = Observed {
            exit: &exit,
            killed,
            lines: &seen.lines,
            out: &seen.out,
            write_error: seen.written.error.as_deref(),
            negotiated: sample.negotiated.as_deref(),
            // dbclient says nothing of what it negotiated, but offers only the names
            // `-c` and `-m` give it: a connection it made used them, when the server's
            // log cannot say.
            offered_alone: self.dropbear().is_some() && sample.negotiated.is_none(),
        };
        sample.outcome = judge(req, moved, &observed);
        if let (Some(r), Some(e)) = (seen.out.ready_at, seen.out.end_at) {
            sample.transfer = Some(e - r);
        }
        if sample.outcome.is_success() {
            if self.notes.shell_says.is_none() {
                self.notes.shell_says = seen.out.said.take();
            }
            fill(&mut sample, req, moved, &mut seen, over);
            sample.rtt = sample.rtt.or(ping);
        }
        sample
    }

    /// dbclient's samples carry notes of their own: what it chooses, whether what it
    /// negotiated was read from the server's log or only offered, and the compression
    /// the log showed it using, which it has no switch to refuse.
    fn note_dbclient(&mut self, seen: Option<&Negotiated>) {
        if self.dropbear().is_none() {
            return;
        }
        let mut notes = vec![match seen {
            Some(_) => Note::DbclientCheckedByServer,
            None => Note::DbclientOffersAlone,
        }];
        let compressed = seen.and_then(|n| n.compression_cs.as_deref());
        if let Some(c) = compressed.filter(|c| *c != "none") {
            notes.push(Note::DbclientCompressed {
                compression: c.to_string(),
            });
        }
        for note in notes {
            if !self.notes.said.contains(&note) {
                self.notes.said.push(note);
            }
        }
    }

    /// What a send reads: a sized send over a shared connection reads its bytes from
    /// [`Zeros`] (sshbench never touches them) and takes its round trip, which it cannot
    /// measure itself, from a ping session just before; anything else is fed by
    /// sshbench, and pings in its own session.
    fn send_source(
        &mut self,
        req: &SampleRequest,
        cancel: &Cancel,
        over: Option<&Shared>,
    ) -> (Option<std::fs::File>, Option<Duration>) {
        let window = req.bytes.saturating_sub(req.ramp);
        if !sized_send(req) || over.is_none() || window < FILE_SEND_MIN_WINDOW {
            return (None, None);
        }
        let Some(file) = self.zeros.take(req.bytes, Zeros::new, &mut self.notes.said) else {
            return (None, None);
        };
        let ping = SampleRequest {
            bytes: 0,
            ramp: 0,
            together: None,
            ..req.clone()
        };
        (Some(file), self.take(&ping, cancel, over).rtt)
    }

    /// Run a spawned ssh to its end: the threads that talk to it, the deadline and
    /// cancellation; how it exited, whether sshbench killed it, and what was seen.
    fn watch(
        &self,
        child: &mut Child,
        req: &SampleRequest,
        cancel: &Cancel,
        watched: Watched,
    ) -> (Exit, Option<FailureKind>, Seen) {
        let Watched {
            start,
            cpu_pid,
            reference,
            sink,
        } = watched;
        let pid = child.id();
        let exited = proc::reap_in_background(pid);
        let stderr = read_stderr(child, start);
        let proxied = self.target.via_proxy;
        // Dropped once ssh is gone: the follower of a receive into a file then ends.
        let (gone, done) = mpsc::channel::<()>();
        let (stdout, writer) = if req.mode == Mode::Echo {
            (echo_session(child, req, reference), None)
        } else if req.mode == Mode::Typing {
            (typing::typing_session(child), None)
        } else {
            let (go_tx, go_rx) = mpsc::channel::<WriteStep>();
            let stdout = match sink {
                // A receive's feeder uploads the block and takes no steps.
                Some(sink) => into_file::follow(sink, req, cpu_pid, proxied, done),
                None => {
                    let from_file = child.stdin.is_none();
                    read_stdout(child, req, go_tx, cpu_pid, from_file, proxied)
                }
            };
            (stdout, feed_stdin(child, req, &self.payload, go_rx))
        };
        let (exit, killed) = wait_exit(&exited, pid, start + req.timeout, cancel);
        drop(gone);
        // Every process of the group is gone or going; its pipes close, the readers end.
        proc::kill_group(pid, libc::SIGKILL);
        (exit, killed, collect(start, stderr, stdout, writer))
    }

    /// The reference's pipes for an echo sample typed beside one, the reference opened
    /// (again) when it is not open, is another suite's, or broke.
    fn reference_for(
        &mut self,
        req: &SampleRequest,
        cancel: &Cancel,
    ) -> Result<Option<Pipes>, Outcome> {
        let echo = req.mode == Mode::Echo && self.dropbear().is_none();
        let Some(suite) = req.reference.as_ref().filter(|_| echo) else {
            return Ok(None);
        };
        if !self.reference.as_ref().is_some_and(|r| r.serves(suite)) {
            self.reference = None;
            let dir = self.scratch()?.to_path_buf();
            let (ssh, target) = (self.ssh.as_path(), &self.target);
            let reference = Reference::open(ssh, target, suite, &dir, req.timeout, cancel)?;
            self.reference = Some(reference);
        }
        Ok(self.reference.as_mut().and_then(Reference::lend))
    }

    /// The scratch directory of the masters' sockets, made on first use.
    fn scratch(&mut self) -> Result<&std::path::Path, Outcome> {
        if self.scratch.is_none() {
            let made = Scratch::create(SCRATCH_PREFIX)
                .map_err(|e| Outcome::local(Doing::ScratchDir, e))?;
            self.scratch = Some(made);
        }
        Ok(self.scratch.as_ref().expect("just made").path())
    }

    /// A login that allows sftp alone ends connect's `exit 0` before it begins: its
    /// connections are timed until an sftp session has opened and closed instead (what
    /// its users' connections do), from this sample on. `None` when sftp fails too.
    fn connect_by_sftp(&mut self, req: &SampleRequest, cancel: &Cancel) -> Option<Sample> {
        self.sftp_connect = true;
        let sample = self.take(req, cancel, None);
        if !sample.outcome.is_success() {
            self.sftp_connect = false;
            return None;
        }
        self.notes.said.push(Note::ConnectBySftp);
        Some(sample)
    }
}

impl Transport for OpenSsh {
    fn fork(&self) -> Option<Box<dyn Transport + Send>> {
        let (ssh, target) = (self.ssh.clone(), self.target.clone());
        let mut other = OpenSsh::new(ssh, target, self.payload.clone());
        other.dialect = self.dialect.clone();
        other.one_session = self.one_session;
        other.sftp_connect = self.sftp_connect;
        other.terminals = self.terminals;
        Some(Box::new(other))
    }

    fn notes(&mut self) -> Vec<Note> {
        self.notes.take()
    }

    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        if req.mode.workload().is_some() {
            return self.workloads.measure(&self.ssh, &self.target, req, cancel);
        }
        if req.mode == Mode::Exec {
            return self.exec(req, cancel);
        }
        if matches!(req.mode, Mode::Typing | Mode::X11) && !self.terminals {
            let problem = Problem::NoTerminal;
            return Sample::new(
                req.suite.clone(),
                req.mode,
                Outcome::Unavailable { problem },
            );
        }
        if req.mode == Mode::X11 {
            return self.x11(req, cancel);
        }
        let mut sample = self.take(req, cancel, None);
        if self.dropbear().is_some() {
            return sample;
        }
        if let Some((algorithm, why)) = judge::unverified_host_key(req, &sample.outcome) {
            sample.outcome = why;
            self.notes.unverified.insert(algorithm);
            return sample;
        }
        let refused = matches!(
            sample.outcome,
            Outcome::Failed {
                kind: FailureKind::Command,
                ..
            }
        );
        if req.mode == Mode::Connect && refused && !self.sftp_connect && !cancel.is_cancelled() {
            return self.connect_by_sftp(req, cancel).unwrap_or(sample);
        }
        sample
    }

    /// A suite's send, receive and echo samples as sessions over one control master
    /// with the suite forced (compressed suites, and anything else, one by one).
    fn measure_group(
        &mut self,
        reqs: &[SampleRequest],
        cancel: &Cancel,
        progress: &mut GroupProgress,
    ) -> Vec<Sample> {
        // dbclient has no connection sharing: a connection per sample.
        if self.dropbear().is_some() {
            return super::each(reqs, progress, |r| self.take(r, cancel, None));
        }
        self.group(reqs, cancel, progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Suite;

    fn transport() -> OpenSsh {
        OpenSsh::new(
            "ssh".into(),
            Target::parse("bob@example.org:2222").unwrap(),
            Payload::random(16, 1),
        )
    }

    fn request(suite: Suite, mode: Mode) -> SampleRequest {
        SampleRequest {
            suite,
            mode,
            bytes: 10,
            ramp: 5,
            timeout: Duration::from_secs(60),
            until: None,
            together: None,
            reference: None,
        }
    }

    #[test]
    fn args_force_suite_and_disable_extras() {
        let suite = Suite {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha1".into()),
            ..Suite::default()
        };
        let req = request(suite, Mode::Send);
        let args = transport().args(&req).join(" ");
        for want in [
            "-o BatchMode=yes",
            "-o ControlMaster=no",
            "-o ControlPath=none",
            "-o Compression=no",
            "-o Ciphers=aes128-ctr",
            "-o MACs=hmac-sha1",
            "-o ConnectTimeout=30",
            "-p 2222 -- bob@example.org sh -c",
        ] {
            assert!(args.contains(want), "{want:?} missing from {args}");
        }
        assert!(!args.contains("KexAlgorithms"));
        assert!(
            !args.contains("StrictHostKeyChecking"),
            "never weaken host key checks"
        );
    }

    #[test]
    fn a_batch_of_receives_shares_one_sessions_file_in_memory() {
        let mut req = request(Suite::default(), Mode::Receive);
        let command = |req: &SampleRequest| transport().args(req).pop().unwrap();
        assert_eq!(command(&req), remote::receive_command(10, 16));
        let at = std::time::Instant::now();
        req.together = Some(crate::model::Together { at, of: 4 });
        assert_eq!(command(&req), remote::receive_command(10, 4));
    }
}
