//! What a transport did otherwise than asked, or learnt of the server, told once in the
//! run's notes (see `Transport::notes`), as typed findings that `views::notes` words.

use crate::model::Note;
use std::collections::BTreeSet;

#[derive(Default)]
pub(super) struct Notes {
    /// Noted as they came.
    pub said: Vec<Note>,
    /// Host key algorithms whose key ssh could not check against the user's known_hosts
    /// (see [`super::judge::unverified_host_key`]).
    pub unverified: BTreeSet<String>,
    /// What the login shell printed before a command's own output.
    pub shell_says: Option<String>,
}

impl Notes {
    /// Everything to note, noted once: the notes are empty after.
    pub fn take(&mut self) -> Vec<Note> {
        let mut notes = std::mem::take(&mut self.said);
        let unverified = std::mem::take(&mut self.unverified);
        if !unverified.is_empty() {
            notes.push(Note::UnverifiedHostKeys {
                algorithms: unverified.into_iter().collect(),
            });
        }
        notes.extend(self.shell_says.take().map(|said| Note::NoisyShell { said }));
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_note_is_taken_once() {
        let mut n = Notes::default();
        assert!(n.take().is_empty());
        n.said.push(Note::ConnectBySftp);
        n.unverified.insert("ssh-rsa".into());
        n.unverified.insert("ssh-dss".into());
        n.shell_says = Some("hi".into());
        let all = n.take();
        assert_eq!(
            all,
            [
                Note::ConnectBySftp,
                Note::UnverifiedHostKeys {
                    algorithms: vec!["ssh-dss".into(), "ssh-rsa".into()]
                },
                Note::NoisyShell { said: "hi".into() },
            ]
        );
        assert!(n.take().is_empty());
    }
}
