//! X11 forwarding (`x11` mode): a private Xvfb display on the client, `ssh -X` with
//! untrusted forwarding, and on the server X clients run through it: a round-trip-bound
//! one ([`ROUND_TRIPS`] runs of `xdpyinfo`) and a bulk one (`xwd` of the whole display).

use serde::{Deserialize, Serialize};

/// Runs of the round-trip-bound X client per sample.
pub const ROUND_TRIPS: u64 = 5;
/// The private display's screen: its `xwd -root` is the bulk drawing (about 3 MB).
pub const SCREEN: &str = "1024x768x24";

/// What a server lacks for X11 forwarding, as its side of the session reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum X11Missing {
    /// No `DISPLAY` in the session: sshd forwards no X11 (`X11Forwarding no`) or could
    /// not set up its cookie (no `xauth`).
    Forwarding,
    /// No `xdpyinfo` (Debian: x11-utils).
    Xdpyinfo,
    /// No `xwd` (Debian: x11-apps).
    Xwd,
}

impl X11Missing {
    pub const ALL: [X11Missing; 3] = [
        X11Missing::Forwarding,
        X11Missing::Xdpyinfo,
        X11Missing::Xwd,
    ];

    /// The word the server's side prints after `SSHBENCH-NOX`.
    pub fn as_str(self) -> &'static str {
        match self {
            X11Missing::Forwarding => "display",
            X11Missing::Xdpyinfo => "xdpyinfo",
            X11Missing::Xwd => "xwd",
        }
    }

    /// The inverse of [`X11Missing::as_str`]: anything else a server says is not one.
    pub fn parse(s: &str) -> Option<X11Missing> {
        X11Missing::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_server_lacks_reads_back_from_its_word_only() {
        for m in X11Missing::ALL {
            assert_eq!(X11Missing::parse(m.as_str()), Some(m));
        }
        assert_eq!(X11Missing::parse("xauth; rm -rf"), None);
    }
}
