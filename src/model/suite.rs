//! The vocabulary shared by every stage: algorithm kinds, measurement modes and suites.

use super::exec::ExecVia;
use super::options::PayloadKind;
use super::problem::{Difference, Part};
use super::typing::KeystrokeTiming;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kinds of algorithm an SSH connection negotiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlgoKind {
    Kex,
    HostKey,
    Cipher,
    Mac,
    Compression,
}

impl AlgoKind {
    pub const ALL: [AlgoKind; 5] = [
        AlgoKind::Kex,
        AlgoKind::HostKey,
        AlgoKind::Cipher,
        AlgoKind::Mac,
        AlgoKind::Compression,
    ];

    /// The `ssh_config`/`sshd_config` keyword that sets this kind.
    pub fn config_keyword(self) -> &'static str {
        match self {
            AlgoKind::Kex => "KexAlgorithms",
            AlgoKind::HostKey => "HostKeyAlgorithms",
            AlgoKind::Cipher => "Ciphers",
            AlgoKind::Mac => "MACs",
            AlgoKind::Compression => "Compression",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            AlgoKind::Kex => "key exchange",
            AlgoKind::HostKey => "host key",
            AlgoKind::Cipher => "cipher",
            AlgoKind::Mac => "MAC",
            AlgoKind::Compression => "compression",
        }
    }
}

/// What one sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Wall time of a trivial remote command, spawn to exit.
    Connect,
    /// Bytes from the client to the server, handshake excluded.
    Send,
    /// Bytes from the server to the client, handshake excluded.
    Receive,
    /// Interactive latency: round trips of single keystrokes through an established
    /// session (what typing, tmux and X11 feel).
    Echo,
    /// Typing in a terminal (`ssh -tt`): bursts of keys and pauses as a person types,
    /// each key's echo timed, with the client's ObscureKeystrokeTiming variants.
    Typing,
    /// Short commands, each on a fresh connection or each over one ControlMaster
    /// connection (`Suite::exec` says which): seconds per command.
    Exec,
    /// X11 forwarded (untrusted) to a private display here: a round-trip-bound X client
    /// run several times, then a bulk one; with compression and the keystroke clock as
    /// variants.
    X11,
    /// The real tools over an established connection: one large file, or a tree of
    /// many small files, uploaded (put) or downloaded (get) with `sftp`, `rsync` or the
    /// classic `scp` protocol (`scp -O`).
    SftpPutFile,
    SftpPutTree,
    SftpGetFile,
    SftpGetTree,
    RsyncPutFile,
    RsyncPutTree,
    RsyncGetFile,
    RsyncGetTree,
    ScpPutFile,
    ScpPutTree,
    ScpGetFile,
    ScpGetTree,
}

/// The program a workload mode runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Sftp,
    Rsync,
    /// `scp` with its classic protocol (`scp -O`: the server runs `scp -t` or `-f`).
    Scp,
}

impl Tool {
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Sftp => "sftp",
            Tool::Rsync => "rsync",
            Tool::Scp => "scp",
        }
    }

    /// The tool as reports name it: scp's classic protocol is `scp -O`.
    pub fn label(self) -> &'static str {
        match self {
            Tool::Scp => "scp -O",
            t => t.as_str(),
        }
    }
}

/// The data a workload moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// One large file.
    File,
    /// A tree of many small files.
    Tree,
}

/// What a workload mode does: which tool, which way, which data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Workload {
    pub tool: Tool,
    /// Upload (client to server); `false` downloads.
    pub put: bool,
    pub shape: Shape,
}

impl Mode {
    /// Every mode, the classic four first.
    pub const ALL: [Mode; 19] = [
        Mode::Connect,
        Mode::Send,
        Mode::Receive,
        Mode::Echo,
        Mode::Typing,
        Mode::Exec,
        Mode::X11,
        Mode::SftpPutFile,
        Mode::SftpPutTree,
        Mode::SftpGetFile,
        Mode::SftpGetTree,
        Mode::RsyncPutFile,
        Mode::RsyncPutTree,
        Mode::RsyncGetFile,
        Mode::RsyncGetTree,
        Mode::ScpPutFile,
        Mode::ScpPutTree,
        Mode::ScpGetFile,
        Mode::ScpGetTree,
    ];

    /// What a default `run` measures.
    pub const CLASSIC: [Mode; 4] = [Mode::Connect, Mode::Send, Mode::Receive, Mode::Echo];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Connect => "connect",
            Mode::Send => "send",
            Mode::Receive => "receive",
            Mode::Echo => "echo",
            Mode::Typing => "typing",
            Mode::Exec => "exec",
            Mode::X11 => "x11",
            Mode::SftpPutFile => "sftp-put-file",
            Mode::SftpPutTree => "sftp-put-tree",
            Mode::SftpGetFile => "sftp-get-file",
            Mode::SftpGetTree => "sftp-get-tree",
            Mode::RsyncPutFile => "rsync-put-file",
            Mode::RsyncPutTree => "rsync-put-tree",
            Mode::RsyncGetFile => "rsync-get-file",
            Mode::RsyncGetTree => "rsync-get-tree",
            Mode::ScpPutFile => "scp-put-file",
            Mode::ScpPutTree => "scp-put-tree",
            Mode::ScpGetFile => "scp-get-file",
            Mode::ScpGetTree => "scp-get-tree",
        }
    }

    /// The inverse of [`Mode::as_str`].
    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// The tool, direction and data of a workload mode; `None` for the classic four.
    pub fn workload(self) -> Option<Workload> {
        let (tool, put, shape) = match self {
            Mode::Connect
            | Mode::Send
            | Mode::Receive
            | Mode::Echo
            | Mode::Typing
            | Mode::Exec
            | Mode::X11 => {
                return None;
            }
            Mode::SftpPutFile => (Tool::Sftp, true, Shape::File),
            Mode::SftpPutTree => (Tool::Sftp, true, Shape::Tree),
            Mode::SftpGetFile => (Tool::Sftp, false, Shape::File),
            Mode::SftpGetTree => (Tool::Sftp, false, Shape::Tree),
            Mode::RsyncPutFile => (Tool::Rsync, true, Shape::File),
            Mode::RsyncPutTree => (Tool::Rsync, true, Shape::Tree),
            Mode::RsyncGetFile => (Tool::Rsync, false, Shape::File),
            Mode::RsyncGetTree => (Tool::Rsync, false, Shape::Tree),
            Mode::ScpPutFile => (Tool::Scp, true, Shape::File),
            Mode::ScpPutTree => (Tool::Scp, true, Shape::Tree),
            Mode::ScpGetFile => (Tool::Scp, false, Shape::File),
            Mode::ScpGetTree => (Tool::Scp, false, Shape::Tree),
        };
        Some(Workload { tool, put, shape })
    }

    /// A workload's tool and direction, as `--mode` and `recommend --for` name both its
    /// shapes: `rsync-put`.
    pub fn tool_way(self) -> Option<&'static str> {
        self.workload()?;
        self.as_str().rsplit_once('-').map(|(tool_way, _)| tool_way)
    }

    /// The raw stream a workload is compared with: `send` for uploads, `receive` for
    /// downloads.
    pub fn raw_stream(self) -> Option<Mode> {
        self.workload()
            .map(|w| if w.put { Mode::Send } else { Mode::Receive })
    }

    /// Needs the server to run commands for it (its own stream protocol, rsync's or scp's
    /// server side); on a login that allows sftp alone the sftp workloads go without them, and
    /// connect times an sftp session instead of `exit 0`.
    pub fn needs_commands(self) -> bool {
        self != Mode::Connect && self.workload().is_none_or(|w| w.tool != Tool::Sftp)
    }

    /// Moves bulk data through sshbench's own stream protocol (send, receive).
    pub fn is_transfer(self) -> bool {
        matches!(self, Mode::Send | Mode::Receive)
    }

    /// Figures are throughput (bytes per second): the raw streams and the workloads.
    pub fn is_throughput(self) -> bool {
        self.is_transfer() || self.workload().is_some()
    }

    /// Figures are the times of one operation a sample repeats (seconds), pooled into
    /// percentiles too: a keystroke's echo, with or without a terminal, a command, or an
    /// X client's run.
    pub fn times_operations(self) -> bool {
        matches!(self, Mode::Echo | Mode::Typing | Mode::Exec | Mode::X11)
    }

    /// Runs through an established session, so the cipher, MAC and compression are what
    /// varies (connect varies the key exchange and host key instead, typing the client's
    /// keystroke clock, exec how commands reach the server).
    pub fn varies_cipher(self) -> bool {
        !matches!(self, Mode::Connect | Mode::Typing | Mode::Exec | Mode::X11)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The algorithms forced for one measurement. `None` leaves the choice to ssh's default
/// negotiation; a cipher that is an AEAD has `mac: None` because its MAC is implicit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Suite {
    pub kex: Option<String>,
    pub hostkey: Option<String>,
    pub cipher: Option<String>,
    pub mac: Option<String>,
    /// `zlib@openssh.com` to measure with compression; `None` = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
    /// Workloads only: the tool's own options measured as a variant (`-R 256` for
    /// sftp, `--whole-file` for rsync); `None` = the tool's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Reports only: the data a compressed transfer carried where it was not random,
    /// which makes it a suite of its own (`analysis::grouping`). Never stored with a
    /// sample: a run records its payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<PayloadKind>,
    /// Which of the run's clients (`--ssh`, in the order given) measured it: the same
    /// names through another client are another suite to race and rank. 0 is the first
    /// (or only) client, which runs from before clients were a dimension read.
    #[serde(default, skip_serializing_if = "is_first")]
    pub client: u8,
    /// Typing only: the ObscureKeystrokeTiming forced; `None` = the client's own (a
    /// client without the option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keystrokes: Option<KeystrokeTiming>,
    /// Exec only: a fresh connection per command, or one ControlMaster connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecVia>,
}

fn is_first(client: &u8) -> bool {
    *client == 0
}

impl Suite {
    /// The forced algorithm of one kind, if any.
    pub fn get(&self, kind: AlgoKind) -> Option<&str> {
        match kind {
            AlgoKind::Kex => self.kex.as_deref(),
            AlgoKind::HostKey => self.hostkey.as_deref(),
            AlgoKind::Cipher => self.cipher.as_deref(),
            AlgoKind::Mac => self.mac.as_deref(),
            AlgoKind::Compression => self.compression.as_deref(),
        }
    }

    /// Force `kind` to `name` (`None`: not forced).
    pub fn set(&mut self, kind: AlgoKind, name: Option<String>) {
        let slot = match kind {
            AlgoKind::Kex => &mut self.kex,
            AlgoKind::HostKey => &mut self.hostkey,
            AlgoKind::Cipher => &mut self.cipher,
            AlgoKind::Mac => &mut self.mac,
            AlgoKind::Compression => &mut self.compression,
        };
        *slot = name;
    }

    /// The compression, with the data it carried where that was not random
    /// (`zlib@openssh.com, text data`).
    pub fn compression_label(&self) -> Option<String> {
        let c = self.compression.as_deref()?;
        Some(match self.data {
            Some(d) => format!("{c}, {} data", d.as_str()),
            None => c.to_string(),
        })
    }

    /// A compact human label: the forced parts joined by " + ".
    pub fn label(&self) -> String {
        let compression = self.compression_label();
        let keystrokes = (self.keystrokes).map(|k| format!("ObscureKeystrokeTiming {k}"));
        let exec = self.exec.map(|v| format!("commands: {v}"));
        let parts: Vec<&str> = [
            &self.kex,
            &self.hostkey,
            &self.cipher,
            &self.mac,
            &compression,
            &self.tool,
            &keystrokes,
            &exec,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
        if parts.is_empty() {
            "(defaults)".to_string()
        } else {
            parts.join(" + ")
        }
    }
}

/// The suite as ssh reports it actually negotiated it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negotiated {
    pub kex: Option<String>,
    pub hostkey: Option<String>,
    /// Client to server cipher.
    pub cipher_cs: Option<String>,
    /// Server to client cipher.
    pub cipher_sc: Option<String>,
    /// Client to server MAC; `None` when ssh reports `<implicit>` (AEAD).
    pub mac_cs: Option<String>,
    pub mac_sc: Option<String>,
    pub compression_cs: Option<String>,
    pub compression_sc: Option<String>,
}

impl Negotiated {
    /// Every forced part of `want` that differs from what was negotiated.
    pub fn mismatches(&self, want: &Suite) -> Vec<Difference> {
        let mut out = Vec::new();
        let mut check = |part: Part, wanted: &Option<String>, got: &Option<String>| {
            if let Some(w) = wanted {
                if got.as_deref() != Some(w.as_str()) {
                    out.push(Difference {
                        part,
                        requested: w.clone(),
                        negotiated: got.clone(),
                    });
                }
            }
        };
        check(Part::Kex, &want.kex, &self.kex);
        check(Part::HostKey, &want.hostkey, &self.hostkey);
        check(Part::CipherCs, &want.cipher, &self.cipher_cs);
        check(Part::CipherSc, &want.cipher, &self.cipher_sc);
        // An AEAD cipher's MAC is implicit, so only a forced MAC is checked.
        check(Part::MacCs, &want.mac, &self.mac_cs);
        check(Part::MacSc, &want.mac, &self.mac_sc);
        check(Part::CompressionCs, &want.compression, &self.compression_cs);
        check(Part::CompressionSc, &want.compression, &self.compression_sc);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_suite_on_other_data_says_which() {
        let zlib = Suite {
            cipher: Some("aes128-ctr".into()),
            compression: Some("zlib@openssh.com".into()),
            ..Suite::default()
        };
        assert_eq!(zlib.label(), "aes128-ctr + zlib@openssh.com");
        let text = Suite {
            data: Some(PayloadKind::Text),
            ..zlib.clone()
        };
        assert_eq!(text.label(), "aes128-ctr + zlib@openssh.com, text data");
        assert_ne!(text, zlib, "a suite of its own");
        assert_eq!(
            serde_json::to_value(&text).unwrap()["data"],
            serde_json::json!("text")
        );
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn label_joins_forced_parts() {
        let suite = Suite {
            cipher: s("aes128-ctr"),
            mac: s("hmac-sha1"),
            ..Suite::default()
        };
        assert_eq!(suite.label(), "aes128-ctr + hmac-sha1");
        assert_eq!(Suite::default().label(), "(defaults)");
    }

    #[test]
    fn mismatch_reports_each_direction() {
        let want = Suite {
            cipher: s("aes128-ctr"),
            mac: s("hmac-sha1"),
            ..Suite::default()
        };
        let got = Negotiated {
            cipher_cs: s("aes128-ctr"),
            cipher_sc: s("aes256-ctr"),
            mac_cs: s("hmac-sha1"),
            mac_sc: s("hmac-sha1"),
            ..Negotiated::default()
        };
        assert_eq!(
            got.mismatches(&want),
            vec![Difference {
                part: Part::CipherSc,
                requested: "aes128-ctr".into(),
                negotiated: s("aes256-ctr"),
            }]
        );
    }

    #[test]
    fn only_sftp_and_connect_go_without_commands() {
        let without: Vec<Mode> = (Mode::ALL.into_iter())
            .filter(|m| !m.needs_commands())
            .collect();
        assert_eq!(
            without,
            [
                Mode::Connect,
                Mode::SftpPutFile,
                Mode::SftpPutTree,
                Mode::SftpGetFile,
                Mode::SftpGetTree
            ]
        );
    }

    #[test]
    fn unforced_parts_are_not_checked() {
        let got = Negotiated::default();
        assert!(got.mismatches(&Suite::default()).is_empty());
    }
}
