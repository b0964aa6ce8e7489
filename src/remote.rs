//! The commands sshbench runs on the server, written to work under any login shell.
//!
//! sshd hands the command string to the user's login shell (`$SHELL -c "..."`), which may
//! be sh, bash, zsh, csh/tcsh or fish. Every command is therefore either a single word
//! every shell understands (`exit 0`) or `sh -c '<script>'`, where the script contains no
//! single quote, backslash, `!` (csh history expansion happens even inside single quotes)
//! or newline. Everything else is POSIX sh plus `head -c` and `mktemp`, which every
//! Linux, BSD, macOS and busybox system has.

/// The line the remote side prints when the session is ready and the clock may start.
pub const READY: &str = "SSHBENCH-READY";

/// Size of the payload block the client uploads before a receive sample.
pub const RECEIVE_BLOCK: usize = 1 << 20;

/// Characters that would break the quoting in one of the supported login shells.
const FORBIDDEN: [char; 5] = ['\'', '\\', '!', '\n', '\r'];

/// Wrap a POSIX sh script so that any login shell passes it to `sh` unchanged.
pub fn sh(script: &str) -> String {
    assert!(
        !script.contains(FORBIDDEN),
        "remote script contains a character that is unsafe in some login shell: {script}"
    );
    format!("sh -c '{script}'")
}

/// `connect`: the most trivial command, a builtin in every shell.
pub fn connect_command() -> String {
    "exit 0".to_string()
}

/// The line the remote side echoes for the client's `ping` line (one round trip).
pub const PONG: &str = "SSHBENCH-PONG";
/// The line the remote side prints once the ramp-up bytes have arrived.
pub const MARK: &str = "SSHBENCH-MARK";

/// `send`: announce readiness; answer one `ping` line (the client measures the round
/// trip); swallow the first `ramp` bytes and say so; then count every further byte
/// until EOF. The client pauses after the ramp bytes until it sees the mark, so even a
/// `head` that reads through stdio buffers cannot take more than `ramp` bytes.
pub fn send_command(ramp: u64) -> String {
    sh(&format!(
        "echo {READY}; read x; echo {PONG}; head -c {ramp} > /dev/null && echo {MARK}; wc -c"
    ))
}

/// `receive`: store the uploaded block (read until EOF) in a private temp file, make a
/// 4-block file of it so the loop spawns few `cat`s, announce readiness, then stream
/// exactly `bytes` bytes. Temp files are removed on exit and on signals.
pub fn receive_command(bytes: u64) -> String {
    sh(&format!(
        "f=$(mktemp \"${{TMPDIR:-/tmp}}/sshbench.XXXXXX\") || exit 97; g=\"$f.4\"; \
         trap \"rm -f $f $g\" 0; trap \"exit 1\" 1 2 13 15; \
         cat > \"$f\" || exit 97; cat \"$f\" \"$f\" \"$f\" \"$f\" > \"$g\" || exit 97; \
         echo {READY}; while cat \"$g\"; do :; done | head -c {bytes}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_safe_for_every_shell() {
        for cmd in [connect_command(), send_command(5), receive_command(123)] {
            let inner = cmd.trim_start_matches("sh -c '").trim_end_matches('\'');
            assert!(!inner.contains(FORBIDDEN), "{cmd}");
        }
    }

    #[test]
    #[should_panic(expected = "unsafe in some login shell")]
    fn sh_rejects_history_expansion() {
        sh("echo hi!");
    }

    #[test]
    fn receive_streams_the_requested_size() {
        assert!(receive_command(8_388_608).contains("head -c 8388608"));
    }
}
