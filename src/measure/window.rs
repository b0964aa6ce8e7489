//! The channel windows in force: how many bytes each side lets the other send ahead
//! before it must wait for a window adjust. For uploads that is the server's window,
//! which `ssh -vv` logs when the session channel opens; for downloads the client's,
//! OpenSSH's fixed session window.

use super::{remote, sshlog};
use crate::destination::{NO_HOST_KEY_UPDATES, Target};
use crate::model::{Failure, FailureKind, Outcome};
use crate::sys::cancel::Cancel;
use crate::sys::run;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// OpenSSH's session channel window (`CHAN_SES_WINDOW_DEFAULT` in channels.h: 64 packets
/// of 32 KiB), what an OpenSSH client lets a server send ahead.
pub const OPENSSH_WINDOW: u64 = 2 << 20;

/// The window a server gives the session channel, from ssh's `debug2: channel 0: open
/// confirm rwindow N rmax M` and the adjusts that follow before any data flows (OpenSSH
/// opens with 0 and adjusts to 2 MiB once the command runs; Dropbear opens with its
/// whole window). Through a jump host the jump's forwarding channel is logged first, so
/// the last opening is the destination's.
pub fn parse_open_confirm(lines: &[&str]) -> Option<u64> {
    let field = |l: &str, key: &str| -> Option<(String, u64)> {
        let rest = l.trim().strip_prefix("debug2: channel ")?;
        let (channel, after) = rest.split_once(key)?;
        Some((
            channel.to_string(),
            after.split_whitespace().next()?.parse().ok()?,
        ))
    };
    let open = lines
        .iter()
        .rposition(|l| field(l, ": open confirm rwindow ").is_some())?;
    let (channel, initial) = field(lines[open], ": open confirm rwindow ")?;
    let adjusts: u64 = lines[open + 1..]
        .iter()
        .filter_map(|l| field(l, ": rcvd adjust "))
        .filter(|(c, _)| *c == channel)
        .map(|(_, n)| n)
        .sum();
    Some(initial + adjusts).filter(|w| *w > 0)
}

/// What one login told before a run: the server's session window, and how long its
/// login shell ran before the command (each `None` where unknown).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Login {
    pub window: Option<u64>,
    pub shell_start: Option<Duration>,
    /// The server's CPU, as its login said.
    pub server_cpu: Option<crate::model::fleet::ServerCpu>,
}

/// Connect once with `-vv` (the user's options, host key checking as configured) and
/// read the server's session window and its login shell's start-up time: unknown when
/// ssh or the server does not say, or the login fails for a reason a sample may not
/// meet (it did not finish in `timeout`, or the command failed); the error when the
/// login is refused (the key, the host key) or the server cannot be reached or spoken
/// with (refused, reset, no SSH banner), as every sample's would be.
pub fn server_window(
    ssh: &Path,
    target: &Target,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Login, Failure> {
    let mut cmd = Command::new(ssh);
    cmd.args(["-vv", "-T", "-a", "-x"]);
    for o in [
        "BatchMode=yes",
        "ControlMaster=no",
        "ControlPath=none",
        "RequestTTY=no",
        "RemoteCommand=none",
        NO_HOST_KEY_UPDATES,
    ] {
        cmd.args(["-o", o]);
    }
    // ssh gives up on a silent server before `timeout` does, so its own reason is told.
    let connect = (timeout.as_secs() * 2 / 3).clamp(1, 30);
    cmd.arg("-o").arg(format!("ConnectTimeout={connect}"));
    cmd.args(&target.ssh_options)
        .args(["--", &target.destination, &remote::shell_start_command()]);
    let Ok(f) = run::run(cmd, timeout, cancel) else {
        return Ok(Login::default());
    };
    let lines: Vec<String> = f.stderr.lines().map(str::to_string).collect();
    // Only ssh's own failure (status 255) is classed by its words: a session's stderr is
    // the server's text.
    if f.exit.code == Some(255)
        && let Some(Outcome::Failed { kind, problem }) = sshlog::classify(&lines)
        && matches!(
            kind,
            FailureKind::Auth | FailureKind::HostKey | FailureKind::Network
        )
    {
        return Err(Failure { kind, problem });
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Ok(Login {
        window: parse_open_confirm(&lines),
        shell_start: remote::parse_shell_start(&f.stdout),
        server_cpu: remote::parse_host(&f.stdout),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_channel_s_window_is_read() {
        let dropbear = [
            "debug2: channel 0: send open",
            "debug1: Entering interactive session.",
            "debug2: channel 0: open confirm rwindow 24576 rmax 32759",
        ];
        assert_eq!(parse_open_confirm(&dropbear), Some(24576));
        // Through a jump host: the destination's channel is the last one opened.
        let jump = [
            "debug2: channel 0: open confirm rwindow 2097152 rmax 32768",
            "debug2: channel 0: open confirm rwindow 24576 rmax 32759",
        ];
        assert_eq!(parse_open_confirm(&jump), Some(24576));
        // OpenSSH: nothing at the opening, the whole window once the command runs.
        let openssh = [
            "debug2: channel 0: open confirm rwindow 0 rmax 32768",
            "debug2: channel 0: rcvd adjust 2097152",
            "debug2: channel 1: rcvd adjust 99",
        ];
        assert_eq!(parse_open_confirm(&openssh), Some(2 << 20));
        assert_eq!(parse_open_confirm(&["debug1: Authenticated"]), None);
        assert_eq!(
            parse_open_confirm(&["debug2: channel 0: open confirm rwindow x"]),
            None
        );
    }
}
