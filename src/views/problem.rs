//! Why a sample failed, or its mode cannot run, in words: each `model::Problem` said
//! once, here. What ssh, a server or a tool said is quoted as it came.

use crate::model::{Difference, Doing, Failure, Outcome, Part, Problem, ProcessEnd, X11Missing};
use crate::runner::MAX_CONSECUTIVE_FAILURES;

/// The outcome's reason in words; `None` for a success.
pub fn of_outcome(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Success => None,
        Outcome::Refused { problem }
        | Outcome::Unavailable { problem }
        | Outcome::Failed { problem, .. } => Some(say(problem)),
    }
}

/// A run stopped by failures in a row: how many, and the last one.
pub fn too_many(f: &Failure) -> String {
    format!(
        "{MAX_CONSECUTIVE_FAILURES} samples in a row failed; the last: {}",
        say(&f.problem)
    )
}

/// The problem in a sentence (no capital, no full stop: it is put after a label).
pub fn say(p: &Problem) -> String {
    match p {
        Problem::NoisyStart { .. }
        | Problem::Unexpected { .. }
        | Problem::AfterEcho { .. }
        | Problem::NoReady { .. }
        | Problem::KeysEnded { .. }
        | Problem::KeyGarbled { .. }
        | Problem::EchoCount { .. }
        | Problem::Pipe { .. }
        | Problem::CountNotNumber { .. }
        | Problem::NoCount
        | Problem::ByteCount { .. }
        | Problem::Reference { .. }
        | Problem::SessionEnded
        | Problem::NotReadyInTime => stream(p),
        Problem::Moved { .. }
        | Problem::Downloaded { .. }
        | Problem::CopyDiffers { .. }
        | Problem::ToolTimedOut { .. }
        | Problem::ToolFailed { .. }
        | Problem::NoRemoteDir { .. }
        | Problem::Counting { .. }
        | Problem::OneSession
        | Problem::ToolHere { .. }
        | Problem::ToolThere { .. }
        | Problem::NoSftp
        | Problem::NoRoom { .. }
        | Problem::NoisyShell { .. } => workload(p),
        Problem::NoXvfb | Problem::NoX11There { .. } | Problem::NoTerminal => x11(p),
        Problem::Said { .. }
        | Problem::TooManyAuthTries { .. }
        | Problem::KeyChanged { .. }
        | Problem::UnverifiedHostKey { .. }
        | Problem::NoSh { .. }
        | Problem::NeverRan { .. }
        | Problem::NoCommands
        | Problem::NotReported
        | Problem::Mismatch { .. } => login(p),
        Problem::Interrupted
        | Problem::NoResult { .. }
        | Problem::Ended { .. }
        | Problem::SharedConnectionEnded
        | Problem::ConnectionNotUp
        | Problem::MasterExited
        | Problem::NoConcurrent
        | Problem::Local { .. }
        | Problem::Legacy { .. }
        | Problem::Implausible { .. } => session(p),
    }
}

/// A problem of the login: ssh's or the server's words, the keys, the commands.
fn login(p: &Problem) -> String {
    match p {
        Problem::Said { said }
        | Problem::TooManyAuthTries { said }
        | Problem::KeyChanged {
            said, types: None, ..
        } => said.clone(),
        Problem::KeyChanged {
            said,
            types: Some(t),
            ..
        } => format!(
            "{}; the server sent its {} key, known_hosts holds its {} key",
            said.trim_end_matches('.'),
            t.sent,
            t.held
        ),
        Problem::UnverifiedHostKey { algorithm } => format!(
            "ssh could not check the server's {algorithm} key: your known_hosts holds none of \
             that type for it, or a different one"
        ),
        Problem::NoSh { status, said } => format!(
            "the server's shell has no sh for sshbench's commands (status {status}: \
             \"{said}\"): this login does not run them"
        ),
        Problem::NeverRan { status, printed } => {
            let said = match printed {
                Some(said) => format!("printed \"{said}\""),
                None => "printed nothing".to_string(),
            };
            format!(
                "the server ended the session (status {status}) before sshbench's command \
                 began and {said}: this login does not run commands"
            )
        }
        Problem::NoCommands => "this login does not run commands".into(),
        Problem::NotReported => {
            "ssh did not report the negotiated algorithms (no 'debug1: kex:' lines)".into()
        }
        Problem::Mismatch { differences } => differences
            .iter()
            .map(difference)
            .collect::<Vec<_>>()
            .join("; "),
        _ => unreachable!("say() sends only these here"),
    }
}

/// A problem of the connection or of this machine.
fn session(p: &Problem) -> String {
    match p {
        Problem::Interrupted => "interrupted".into(),
        Problem::NoResult { after_s, last } => format!(
            "no result within {after_s} s; ssh killed{}",
            last.as_ref()
                .map(|m| format!(" (last message: {m})"))
                .unwrap_or_default()
        ),
        Problem::Ended { end, said, remote } => {
            let how = match end {
                ProcessEnd::Ssh => "ssh failed".to_string(),
                ProcessEnd::Status { code } => format!("remote command exited with status {code}"),
                ProcessEnd::Signal { signal } => format!("ssh killed by signal {signal}"),
                ProcessEnd::Abnormal => "ssh ended abnormally".to_string(),
            };
            match (said, remote) {
                (Some(m), _) => format!("{how}: {m}"),
                (None, Some(r)) => format!("{how}: {}", say(r)),
                (None, None) => how,
            }
        }
        Problem::SharedConnectionEnded => "the shared connection ended".into(),
        Problem::ConnectionNotUp => "connection not up in time".into(),
        Problem::MasterExited => "ssh exited before the connection was up".into(),
        Problem::NoConcurrent => "this transport cannot open concurrent connections".into(),
        // The tool's path leads its error.
        Problem::Local {
            doing: Doing::RunningTool,
            error,
        } => format!("cannot run {error}"),
        Problem::Local { doing, error } => format!("{}: {error}", doing_words(*doing)),
        Problem::Legacy { text } => text.clone(),
        Problem::Implausible { column } => {
            format!("the database holds an implausible {column} for this sample")
        }

        _ => unreachable!("say() sends only these here"),
    }
}

/// A problem of sshbench's own streams: the remote side's protocol, the echo, the count.
fn stream(p: &Problem) -> String {
    match p {
        Problem::NoisyStart { limit } => {
            format!("more than {limit} bytes of output before SSHBENCH-READY")
        }
        Problem::Unexpected { want, got } => {
            format!("expected {want} from the server, got {got:?}")
        }
        Problem::AfterEcho { bytes } => format!("{bytes} unexpected bytes after the last echo"),
        Problem::NoReady { want } => format!("the remote side never printed {want}"),
        Problem::KeysEnded { at, total } => {
            format!("the session ended after {at} of {total} keystrokes")
        }
        Problem::KeyGarbled { at, sent, got } => format!(
            "keystroke {at}: sent {:?}, got {:?} back",
            *sent as char, *got as char
        ),
        Problem::EchoCount { expected, timed } => {
            format!("{expected} keystrokes expected back, {timed} timed")
        }
        Problem::Pipe { error } => format!("writing to ssh: {error}"),
        Problem::CountNotNumber { said } => {
            format!("the server's byte count is not a number: {said:?}")
        }
        Problem::NoCount => "the server reported no byte count".into(),
        Problem::ByteCount { expected, counted } => {
            format!("{expected} bytes expected, {counted} counted at the far end")
        }
        Problem::Reference { label, why } => match label {
            Some(label) => format!("the echo reference ({label}): {}", say(why)),
            None => format!("the echo reference: {}", say(why)),
        },
        Problem::SessionEnded => "the session ended before it was ready".into(),
        Problem::NotReadyInTime => "the session was not ready in time".into(),
        _ => unreachable!("say() sends only these here"),
    }
}

/// A problem of a workload: its tool, its data, what the server lacks.
fn workload(p: &Problem) -> String {
    match p {
        Problem::Moved {
            files,
            bytes,
            sent_files,
            sent_bytes,
        } => format!("{files} files of {bytes} bytes arrived, {sent_files} of {sent_bytes} sent"),
        Problem::Downloaded { files, expected } => {
            format!("{files} files downloaded, {expected} expected")
        }
        Problem::CopyDiffers { path } => format!("{path} differs from the source"),
        Problem::ToolTimedOut { tool } => format!("{} ran out of time", tool.as_str()),
        Problem::ToolFailed { tool, said } => format!("{}: {said}", tool.as_str()),
        Problem::NoRemoteDir { said, sftp_said } => {
            let sftp = sftp_said
                .as_ref()
                .map(|s| {
                    format!(
                        "; nor with sftp: {s} (`--remote-dir` names a directory this login may \
                         write in)"
                    )
                })
                .unwrap_or_default();
            format!("could not make a private directory on the server: {said}{sftp}")
        }
        Problem::Counting { said } => format!("counting what arrived: {said}"),
        Problem::OneSession => "the server ends a connection after its first session (as \
                                tinysshd does), and a workload runs several over one"
            .into(),
        Problem::ToolHere { tool } => format!("{} is not installed on this client", tool.as_str()),
        Problem::ToolThere { tool } => format!("{} is not installed on this server", tool.as_str()),
        Problem::NoSftp => "the server has no SFTP subsystem".into(),
        Problem::NoRoom {
            parent,
            free,
            need,
            data,
        } => format!(
            "the server's {parent} has {} free, and a sample of {} needs {}: `--remote-dir` a \
             directory with more room, or a smaller `--file-size`/`--tree`",
            bytes_text(*free),
            super::workload::data(data),
            bytes_text(*need),
        ),
        Problem::NoisyShell { said } => format!(
            "the server's login shell prints \"{said}\" before every command, and that breaks \
             scp -O, rsync and an sftp-server the shell starts (for you too): have its start-up \
             files print only in interactive sessions"
        ),
        _ => unreachable!("say() sends only these here"),
    }
}

/// What the typing and x11 modes lack, here or on the server.
fn x11(p: &Problem) -> String {
    match p {
        Problem::NoTerminal => "not available: the sandbox's sshd runs as you, not root, and \
             this system gives new terminals to their opener's group, so it can hand a session \
             none (sshd would chown it to the tty group); run as root, or against a real server"
            .into(),
        Problem::NoXvfb => {
            "not available: no Xvfb on this client for a private display (Debian: apt-get install \
             xvfb)"
                .into()
        }
        Problem::NoX11There { missing } => match missing {
            X11Missing::Forwarding => "not available: the server forwards no X11 (X11Forwarding \
                 no in its sshd_config, or no xauth to set up the display)"
                .into(),
            X11Missing::Xdpyinfo => {
                "not available: no xdpyinfo on the server (Debian: x11-utils)".into()
            }
            X11Missing::Xwd => "not available: no xwd on the server (Debian: x11-apps)".into(),
        },
        _ => unreachable!("only X11's problems come here"),
    }
}

fn difference(d: &Difference) -> String {
    let part = match d.part {
        Part::Kex => "key exchange",
        Part::HostKey => "host key",
        Part::CipherCs => "cipher client->server",
        Part::CipherSc => "cipher server->client",
        Part::MacCs => "MAC client->server",
        Part::MacSc => "MAC server->client",
        Part::CompressionCs => "compression client->server",
        Part::CompressionSc => "compression server->client",
    };
    format!(
        "{part}: requested {}, negotiated {}",
        d.requested,
        d.negotiated.as_deref().unwrap_or("(not reported)")
    )
}

fn doing_words(d: Doing) -> &'static str {
    match d {
        Doing::TempDir => "temp dir",
        Doing::ScratchDir => "a scratch directory",
        Doing::BatchFile => "batch file",
        Doing::QuotingPath => "a temp path sftp cannot quote",
        Doing::LocalData => "writing the local data",
        Doing::ReadingCopy => "reading the downloaded copy",
        Doing::RunningSsh => "cannot run ssh",
        Doing::RunningTool => "cannot run",
        Doing::OutputFile => "a file for ssh's output",
    }
}

fn bytes_text(b: u64) -> String {
    crate::model::options::bytes_text(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DataSize, FailureKind, KeyTypes, Shape};

    #[test]
    fn each_problem_reads_as_it_did_when_it_was_prose() {
        let cases = [
            (
                Problem::ByteCount {
                    expected: 5,
                    counted: 4,
                },
                "5 bytes expected, 4 counted at the far end",
            ),
            (
                Problem::NoResult {
                    after_s: 120,
                    last: None,
                },
                "no result within 120 s; ssh killed",
            ),
            (
                Problem::Ended {
                    end: ProcessEnd::Status { code: 3 },
                    said: Some("oops".into()),
                    remote: None,
                },
                "remote command exited with status 3: oops",
            ),
            (
                Problem::KeyChanged {
                    said: "Host key for h has changed and you have requested strict checking."
                        .into(),
                    host: Some("h".into()),
                    types: Some(KeyTypes {
                        sent: "ED25519".into(),
                        held: "RSA".into(),
                    }),
                },
                "Host key for h has changed and you have requested strict checking; the \
                 server sent its ED25519 key, known_hosts holds its RSA key",
            ),
            (
                Problem::Mismatch {
                    differences: vec![Difference {
                        part: Part::CipherSc,
                        requested: "aes128-ctr".into(),
                        negotiated: None,
                    }],
                },
                "cipher server->client: requested aes128-ctr, negotiated (not reported)",
            ),
            (
                Problem::NoRoom {
                    parent: "/tmp".into(),
                    free: 1 << 20,
                    need: 33 << 20,
                    data: DataSize {
                        shape: Shape::File,
                        files: 1,
                        file_bytes: 32 << 20,
                        dirs: 0,
                    },
                },
                "the server's /tmp has 1.0 MiB free, and a sample of 1 file of 32.0 MiB needs \
                 33.0 MiB: `--remote-dir` a directory with more room, or a smaller \
                 `--file-size`/`--tree`",
            ),
            (
                Problem::Legacy {
                    text: "as it was".into(),
                },
                "as it was",
            ),
        ];
        for (p, want) in cases {
            assert_eq!(say(&p), want);
        }
        let failed = Outcome::failed(FailureKind::Cancelled, Problem::Interrupted);
        assert_eq!(of_outcome(&failed).as_deref(), Some("interrupted"));
        assert_eq!(of_outcome(&Outcome::Success), None);
    }
}
