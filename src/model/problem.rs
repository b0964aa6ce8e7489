//! Why a sample did not succeed, as a typed record: what happened, with its figures and,
//! where the reason is theirs, the words of ssh, the server, a tool or the OS verbatim.
//! `views::problem` words each one; the store keeps them as JSON (`samples.problem_json`).

use super::options::DataSize;
use super::sample::FailureKind;
use super::suite::Tool;
use super::x11::X11Missing;
use serde::{Deserialize, Serialize};

/// Why a sample failed, or why its mode cannot run at all (`Outcome::Unavailable`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum Problem {
    /// ssh's (or the server's, or a tool's) own line: the reason is in their words.
    Said { said: String },
    /// The server's host key is not the one `known_hosts` holds: ssh's sentence, the host
    /// it names, and the key types where the key sent is of another type.
    KeyChanged {
        said: String,
        host: Option<String>,
        types: Option<KeyTypes>,
    },
    /// The server gave up before ssh offered the key it accepts (its `MaxAuthTries`).
    TooManyAuthTries { said: String },
    /// A forced host key algorithm whose key ssh could not check against known_hosts.
    UnverifiedHostKey { algorithm: String },
    /// Interrupted by the user.
    Interrupted,
    /// No result before the deadline; ssh (or the tool) was killed. `last`: ssh's last
    /// words before.
    NoResult { after_s: u64, last: Option<String> },
    /// ssh ended without success, for no reason it named in a way sshbench knows: its
    /// last words, or else the remote side's protocol error.
    Ended {
        end: ProcessEnd,
        said: Option<String>,
        remote: Option<Box<Problem>>,
    },
    /// The login's shell has no `sh` to run sshbench's commands (a Windows server).
    NoSh { status: i32, said: String },
    /// The session ended before sshbench's command began: the login runs something else.
    NeverRan {
        status: i32,
        printed: Option<String>,
    },
    /// The login does not run commands (a mode given up without a reason of its own).
    NoCommands,
    /// Algorithms were forced and ssh did not log what it negotiated.
    NotReported,
    /// ssh negotiated something other than what was forced.
    Mismatch { differences: Vec<Difference> },
    /// The remote side printed more than it may before its ready line.
    NoisyStart { limit: u64 },
    /// The remote side printed `got` where sshbench's protocol has `want`.
    Unexpected { want: String, got: String },
    /// The remote side printed bytes after the last echo.
    AfterEcho { bytes: u64 },
    /// The remote side never printed its ready line.
    NoReady { want: String },
    /// The session ended after `at` of `total` keystrokes.
    KeysEnded { at: u64, total: u64 },
    /// Keystroke `at` came back as another byte.
    KeyGarbled { at: u64, sent: u8, got: u8 },
    /// Fewer keystrokes came back than were typed.
    EchoCount { expected: u64, timed: u64 },
    /// Writing to ssh (or reading from it) failed: the OS's words.
    Pipe { error: String },
    /// The server's byte count is not a number.
    CountNotNumber { said: String },
    /// The server reported no byte count.
    NoCount,
    /// The far end counted other bytes than were moved.
    ByteCount { expected: u64, counted: u64 },
    /// A workload moved other files or bytes than were sent.
    Moved {
        files: u64,
        bytes: u64,
        sent_files: u64,
        sent_bytes: u64,
    },
    /// Other files were downloaded than the source holds.
    Downloaded { files: u64, expected: u64 },
    /// A downloaded file is not the source's.
    CopyDiffers { path: String },
    /// The echo reference session failed (`label`: its suite, where it is not this
    /// sample's).
    Reference {
        label: Option<String>,
        why: Box<Problem>,
    },
    /// The reference session ended before it was ready.
    SessionEnded,
    /// The reference session was not ready in time.
    NotReadyInTime,
    /// The shared connection (a group's ControlMaster) ended.
    SharedConnectionEnded,
    /// The master connection did not come up in time.
    ConnectionNotUp,
    /// ssh exited before its master connection was up, saying nothing.
    MasterExited,
    /// This transport cannot open concurrent connections (`--streams`).
    NoConcurrent,
    /// Something on this machine failed: what sshbench was doing and the OS's words.
    Local { doing: Doing, error: String },
    /// A workload's tool ran out of time.
    ToolTimedOut { tool: Tool },
    /// A workload's tool failed: its last line.
    ToolFailed { tool: Tool, said: String },
    /// No private directory on the server; `sftp_said` when sftp was tried too.
    NoRemoteDir {
        said: String,
        sftp_said: Option<String>,
    },
    /// Counting what arrived on the server failed.
    Counting { said: String },
    /// The server ends a connection after its first session (tinysshd): no workload.
    OneSession,
    /// A workload's tool is not installed on this client.
    ToolHere { tool: Tool },
    /// A workload's tool is not installed on the server.
    ToolThere { tool: Tool },
    /// The server has no SFTP subsystem.
    NoSftp,
    /// No X server for a private display here (Xvfb).
    NoXvfb,
    /// The sandbox's sshd, run by an ordinary user, can give no session a terminal here.
    NoTerminal,
    /// The server cannot run the X11 mode's clients through a forwarded display.
    NoX11There { missing: X11Missing },
    /// The server's directory has too little room for a sample.
    NoRoom {
        parent: String,
        free: u64,
        need: u64,
        data: DataSize,
    },
    /// The login shell prints before every command, which breaks scp -O, rsync and an
    /// sftp-server it starts.
    NoisyShell { said: String },
    /// A stored row held an implausible figure in `column` (a hostile or broken
    /// database): the sample is not counted.
    Implausible { column: String },
    /// Prose stored by a version before problems were typed, shown as it was.
    Legacy { text: String },
}

/// A failure that decides more than its sample (a run's end, a login check): its class
/// and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    pub problem: Problem,
}

/// Why a fleet's host did not complete (a host whose budget ran out says so by its
/// status).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum HostProblem {
    /// A failure that stopped its run.
    Fatal(Failure),
    /// Too many samples in a row failed: the last one's failure.
    TooManyFailures(Failure),
    /// Storing its samples failed, or its run could not start: sshbench's own error, as
    /// its command line words it.
    Error { text: String },
    /// Prose stored by a version before problems were typed.
    Legacy { text: String },
}

impl HostProblem {
    pub fn decode(json: &str) -> Option<HostProblem> {
        serde_json::from_str(json).ok()
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a host problem serialises")
    }
}

/// The key the server sent and the one `known_hosts` holds, by type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyTypes {
    pub sent: String,
    pub held: String,
}

/// How a process ended without success.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum ProcessEnd {
    /// ssh's own error status, 255.
    Ssh,
    /// The remote command's exit status.
    Status {
        code: i32,
    },
    Signal {
        signal: i32,
    },
    Abnormal,
}

/// One forced part of a suite that ssh negotiated otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub part: Part,
    pub requested: String,
    pub negotiated: Option<String>,
}

/// A part of a suite, per direction where it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    Kex,
    HostKey,
    CipherCs,
    CipherSc,
    MacCs,
    MacSc,
    CompressionCs,
    CompressionSc,
}

/// What sshbench was doing on this machine when the OS said no.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Doing {
    TempDir,
    ScratchDir,
    BatchFile,
    /// A temporary path sftp's batch syntax cannot quote.
    QuotingPath,
    LocalData,
    ReadingCopy,
    RunningSsh,
    RunningTool,
    /// A file for ssh's output.
    OutputFile,
}

impl Problem {
    /// What ssh, the server or a tool said, as the problem.
    pub fn quote(said: impl Into<String>) -> Problem {
        Problem::Said { said: said.into() }
    }

    /// ssh's, the server's or a tool's words: a failure's own text, where it is theirs.
    pub fn said(&self) -> Option<&str> {
        match self {
            Problem::Said { said }
            | Problem::KeyChanged { said, .. }
            | Problem::TooManyAuthTries { said }
            | Problem::NoSh { said, .. }
            | Problem::CountNotNumber { said }
            | Problem::ToolFailed { said, .. }
            | Problem::NoRemoteDir { said, .. }
            | Problem::Counting { said }
            | Problem::NoisyShell { said } => Some(said),
            Problem::Ended { said, .. } => said.as_deref(),
            Problem::Reference { why, .. } => why.said(),
            _ => None,
        }
    }

    /// Something on this machine failed while sshbench was `doing` it: the OS's words.
    pub fn local(doing: Doing, error: impl std::fmt::Display) -> Problem {
        let error = error.to_string();
        Problem::Local { doing, error }
    }

    /// Decode a stored problem; `None` when the JSON is not one this version knows.
    pub fn decode(json: &str) -> Option<Problem> {
        serde_json::from_str(json).ok()
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a problem serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_round_trips_through_its_json() {
        for p in [
            Problem::Interrupted,
            Problem::ByteCount {
                expected: 5,
                counted: 4,
            },
            Problem::Reference {
                label: Some("aes128-ctr".into()),
                why: Box::new(Problem::NotReadyInTime),
            },
            Problem::Mismatch {
                differences: vec![Difference {
                    part: Part::CipherCs,
                    requested: "aes128-ctr".into(),
                    negotiated: None,
                }],
            },
            Problem::ToolThere { tool: Tool::Rsync },
        ] {
            assert_eq!(Problem::decode(&p.encode()), Some(p));
        }
        let host = HostProblem::Fatal(Failure {
            kind: FailureKind::HostKey,
            problem: Problem::Interrupted,
        });
        assert_eq!(HostProblem::decode(&host.encode()), Some(host));
        assert_eq!(Problem::decode(r#"{"problem":"from-the-future"}"#), None);
    }
}
