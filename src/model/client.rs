//! Which kind of ssh client a program is: what options it takes to force a suite and
//! what it can say about a connection.

use serde::{Deserialize, Serialize};

/// An ssh client sshbench can drive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientKind {
    /// OpenSSH's `ssh` and those that take its options (HPN-SSH's `hpnssh`): suites
    /// forced with `-o`, what was negotiated read from `-v`.
    #[default]
    OpenSsh,
    /// Dropbear's `dbclient`: ciphers and MACs forced with `-c` and `-m` (it then offers
    /// those alone), no choice of key exchange or host key, no `-v`, no ssh_config; its
    /// receive window is `-W` (24 KiB by default).
    Dropbear,
}

/// dbclient's receive window when `-W` is not given.
pub const DBCLIENT_WINDOW: u64 = 24_576;
