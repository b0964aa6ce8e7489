//! What a transport did otherwise than asked, or learnt of the server, told once in the
//! run's notes (see `Transport::notes`).

use std::collections::BTreeSet;

#[derive(Default)]
pub(super) struct Notes {
    /// Said as they came.
    pub said: Vec<String>,
    /// Host key algorithms whose key ssh could not check against the user's known_hosts
    /// (see [`super::judge::unverified_host_key`]).
    pub unverified: BTreeSet<String>,
    /// What the login shell printed before a command's own output.
    pub shell_says: Option<String>,
}

impl Notes {
    /// Everything to say, said once: the notes are empty after.
    pub fn take(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.said);
        notes.extend(unverified_note(&std::mem::take(&mut self.unverified)));
        notes.extend(self.shell_says.take().map(|s| noisy_shell_note(&s)));
        notes
    }
}

/// The run's note on the host key algorithms [`super::judge::unverified_host_key`] left out.
fn unverified_note(algorithms: &BTreeSet<String>) -> Option<String> {
    let (keys, one, them) = match algorithms.len() {
        0 => return None,
        1 => (
            "key of that type",
            "none recorded, or a different one",
            "it",
        ),
        _ => (
            "keys of those types",
            "none recorded, or different ones",
            "them",
        ),
    };
    let names: Vec<&str> = algorithms.iter().map(String::as_str).collect();
    Some(format!(
        "connect: {} not measured: ssh could not check the server's {keys} against your \
         known_hosts ({one}); verify and record {them} to measure {them}",
        names.join(", ")
    ))
}

/// The run's note on a login shell that printed `said` before sshbench's commands: its
/// own streams skip that, the tools users run over the same login do not.
fn noisy_shell_note(said: &str) -> String {
    let (prints, advice) = crate::measure::remote::noisy_shell(said);
    format!(
        "{prints}: sshbench's own streams skip it, but scp -O, rsync and an sftp-server the \
         shell starts fail on such a server (for you too); {advice}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_note_is_said_once_and_named_plainly() {
        let mut left_out = BTreeSet::new();
        assert_eq!(unverified_note(&left_out), None);
        left_out.insert("ssh-rsa".to_string());
        let one = unverified_note(&left_out).unwrap();
        let head = "connect: ssh-rsa not measured: ssh could not check the server's key";
        assert!(one.starts_with(head), "{one}");
        assert!(one.ends_with("record it to measure it"), "{one}");
        let mut n = Notes::default();
        n.said.push("one".into());
        n.unverified.insert("ssh-rsa".into());
        n.shell_says = Some("hi".into());
        let all = n.take();
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(
            all[2].starts_with("the server's login shell prints \"hi\""),
            "{all:?}"
        );
        assert!(n.take().is_empty());
    }
}
