//! What the server logged of a sample's connection. dbclient says nothing of what it
//! negotiated; the sandbox's sshd, logging at DEBUG1, says it for every connection, and
//! samples are taken one at a time, so the lines a sample's run added are its own.

use crate::measure::sshlog;
use crate::model::Negotiated;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// At most this much of the log is read per sample: a connection's DEBUG1 lines are a
/// few KiB, and the log is the server's to fill.
const MAX_READ: u64 = 1 << 20;

/// sshd's log file, read sample by sample from where each began.
#[derive(Clone, Debug)]
pub struct ServerLog {
    path: PathBuf,
}

impl ServerLog {
    pub fn new(path: PathBuf) -> Self {
        ServerLog { path }
    }

    /// Where the log ends now: the next sample's lines begin here.
    pub(super) fn mark(&self) -> Option<LogMark> {
        let len = std::fs::metadata(&self.path).ok()?.len();
        Some(LogMark {
            path: self.path.clone(),
            at: len,
        })
    }
}

/// A point in the server's log: where a sample's lines begin.
pub(super) struct LogMark {
    path: PathBuf,
    at: u64,
}

impl LogMark {
    /// What the server says was negotiated after this mark, if it says it.
    pub(super) fn negotiated(&self) -> Option<Negotiated> {
        sshlog::negotiated(&lines_since(&self.path, self.at)?)
    }
}

/// The log's lines after `mark`, as ssh's own would read: sshd ends those of its
/// unprivileged pre-authentication child with " [preauth]".
fn lines_since(path: &Path, mark: u64) -> Option<Vec<String>> {
    let mut f = File::open(path).ok()?;
    f.seek(SeekFrom::Start(mark)).ok()?;
    let mut bytes = Vec::new();
    f.take(MAX_READ).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = text.lines().map(|l| {
        let l = l.trim_end();
        l.strip_suffix("[preauth]")
            .unwrap_or(l)
            .trim_end()
            .to_string()
    });
    Some(lines.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_samples_lines_are_those_after_its_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sshd.log");
        let before = "debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha1 \
                      compression: none [preauth]\n";
        std::fs::write(&path, before).unwrap();
        let log = ServerLog::new(path.clone());
        let mark = log.mark().unwrap();
        assert_eq!(mark.negotiated(), None);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        write!(
            f,
            "debug1: kex: algorithm: curve25519-sha256 [preauth]\r\n\
             debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: \
             <implicit> compression: none [preauth]\r\n\
             debug1: kex: server->client cipher: aes256-ctr MAC: hmac-sha2-256 \
             compression: none [preauth]\r\n"
        )
        .unwrap();
        let n = mark.negotiated().unwrap();
        assert_eq!(n.kex.as_deref(), Some("curve25519-sha256"));
        assert_eq!(
            n.cipher_cs.as_deref(),
            Some("chacha20-poly1305@openssh.com")
        );
        assert_eq!(n.mac_cs, None);
        assert_eq!(n.mac_sc.as_deref(), Some("hmac-sha2-256"));
        assert_eq!(n.compression_sc.as_deref(), Some("none"));
    }

    #[test]
    fn a_missing_log_says_nothing() {
        let log = ServerLog::new(PathBuf::from("/nonexistent/sshbench/sshd.log"));
        assert!(log.mark().is_none());
        let gone = LogMark {
            path: PathBuf::from("/nonexistent/sshbench/sshd.log"),
            at: 0,
        };
        assert_eq!(gone.negotiated(), None);
    }
}
