//! What a run learnt about how it measured, where that departed from the usual: typed
//! findings with their figures, stored with the run (`runs.notes_json`) and worded by
//! `views::notes`. Runs stored before notes were typed kept sentences; those read back
//! as [`Note::Legacy`].

use serde::{Deserialize, Serialize};

/// Why no sparse file of zeros fed a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZerosStep {
    Made,
    Opened,
}

/// One note on a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// The server ends a connection after its first session (as tinysshd does): every
    /// sample had a connection of its own.
    OneSessionPerConnection,
    /// The login runs no commands: connections were timed to an sftp session instead of
    /// `exit 0`.
    ConnectBySftp,
    /// Host key algorithms whose key ssh could not check against the user's
    /// known_hosts, so connect did not measure them.
    UnverifiedHostKeys { algorithms: Vec<String> },
    /// The login shell prints `said` before every command.
    NoisyShell { said: String },
    /// No sparse file of zeros could be made or opened (`error`): sends were fed.
    ZerosUnavailable { step: ZerosStep, error: String },
    /// The client sends terminal keystrokes on a clock of this many ms
    /// (ObscureKeystrokeTiming), which echo without a terminal does not see.
    KeystrokeClock { interval_ms: u32 },
    /// The server's login shell takes this long to start before each command.
    SlowShellStart { ms: u64 },
    /// Other sshbench processes (their pids) measured on this machine during the run.
    OtherSshbench { pids: Vec<u32> },
    /// Other processes kept `others` of the machine's `cpus` CPUs busy on average;
    /// `sandbox`: both ends ran here.
    BusyMachine {
        others: f64,
        cpus: usize,
        sandbox: bool,
    },
    /// The client was Dropbear's dbclient: it chooses no key exchange or host key (its
    /// connections differ by cipher alone) and says nothing of what it negotiated (it
    /// offered only the forced cipher and MAC, so a connection it made used them).
    DbclientOffersAlone,
    /// As [`Note::DbclientOffersAlone`], but what each sample negotiated was read from
    /// the server's log (the sandbox's sshd) and checked as ssh's own report is.
    DbclientCheckedByServer,
    /// The server's log showed dbclient compressing (`compression`): its builds with
    /// zlib offer it first and have no switch to refuse it, so its send and receive
    /// figures carry zlib's work, where OpenSSH's ran with compression off.
    DbclientCompressed { compression: String },
    /// The client is HPN-SSH, which grows a channel's window only on a connection of
    /// its own: its transfers each had one.
    HpnOwnConnections,
    /// A sentence stored by a version before notes were typed, shown as it was.
    #[serde(skip)]
    Legacy(String),
}

/// A note as stored: a typed record, or an older version's sentence.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Typed(Note),
    Sentence(String),
}

impl Note {
    /// The notes stored in `json`: typed records, or an older version's sentences.
    pub fn decode_all(json: &str) -> serde_json::Result<Vec<Note>> {
        let stored: Vec<Stored> = serde_json::from_str(json)?;
        Ok(stored
            .into_iter()
            .map(|s| match s {
                Stored::Typed(n) => n,
                Stored::Sentence(s) => Note::Legacy(s),
            })
            .collect())
    }

    /// `notes` as stored; an older version's sentences stay sentences.
    pub fn encode_all(notes: &[Note]) -> serde_json::Result<String> {
        let items: Vec<String> = notes
            .iter()
            .map(|n| match n {
                Note::Legacy(s) => serde_json::to_string(s),
                n => serde_json::to_string(n),
            })
            .collect::<serde_json::Result<_>>()?;
        Ok(format!("[{}]", items.join(",")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_notes_and_old_sentences_read_back_as_stored() {
        let notes = vec![
            Note::OneSessionPerConnection,
            Note::UnverifiedHostKeys {
                algorithms: vec!["ssh-rsa".into()],
            },
            Note::KeystrokeClock { interval_ms: 20 },
            Note::Legacy("an older version's sentence".into()),
        ];
        let json = Note::encode_all(&notes).unwrap();
        assert!(
            json.contains(r#"{"kind":"keystroke_clock","interval_ms":20}"#),
            "{json}"
        );
        assert!(json.contains(r#""an older version's sentence""#), "{json}");
        assert_eq!(Note::decode_all(&json).unwrap(), notes);
        // A kind this version does not know is an error, not a sentence.
        assert!(Note::decode_all(r#"[{"kind":"from_the_future"}]"#).is_err());
    }
}
