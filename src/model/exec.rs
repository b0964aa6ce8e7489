//! Short commands (`exec` mode), as Ansible, scripts and git over ssh run them: each on a
//! fresh connection, or each a session of one ControlMaster connection that sshbench
//! opens (a private socket) and closes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Commands one exec sample runs: half `exit 0`, half a command with output.
pub const COMMANDS_PER_SAMPLE: u64 = 10;
/// Bytes each command with output prints.
pub const COMMAND_OUTPUT: u64 = 4096;

/// How an exec suite's commands reach the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecVia {
    /// A connection of its own for every command: handshake, authentication, session.
    Fresh,
    /// A session of one control master connection, opened before the first command.
    Master,
}

impl ExecVia {
    pub const ALL: [ExecVia; 2] = [ExecVia::Fresh, ExecVia::Master];

    pub fn as_str(self) -> &'static str {
        match self {
            ExecVia::Fresh => "fresh",
            ExecVia::Master => "master",
        }
    }

    /// The inverse of [`ExecVia::as_str`].
    pub fn parse(s: &str) -> Option<ExecVia> {
        ExecVia::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

impl fmt::Display for ExecVia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the `i`-th command of a sample prints [`COMMAND_OUTPUT`] bytes (else it is
/// `exit 0`): they alternate, so both kinds meet the same moments of the machine.
pub fn prints(i: u64) -> bool {
    i % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ways_read_back_as_written_and_commands_alternate() {
        for v in ExecVia::ALL {
            assert_eq!(ExecVia::parse(v.as_str()), Some(v));
        }
        assert_eq!(ExecVia::parse("Master"), None);
        let printing = (0..COMMANDS_PER_SAMPLE).filter(|&i| prints(i)).count() as u64;
        assert_eq!(printing, COMMANDS_PER_SAMPLE / 2);
    }
}
