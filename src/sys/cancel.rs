//! Cancellation: a flag set by SIGINT/SIGTERM/SIGHUP that every long-running loop polls.
//!
//! Signals never run project code: `signal-hook` only stores the signal number in an
//! atomic, and the runner, the transport and the sandbox check it between steps. This
//! keeps teardown (killing the in-flight ssh, stopping the sandbox sshd) in ordinary code.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The token the process's signals set, once [`Cancel::from_signals`] made it: the
/// signals are the process's, whichever stage waits on a child when they come.
static SIGNALLED: OnceLock<Cancel> = OnceLock::new();

/// A cheap, clonable cancellation token.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    signal: Arc<AtomicUsize>,
}

impl Cancel {
    /// A token that is only cancelled by [`Cancel::cancel`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A token that is cancelled when the process receives SIGINT, SIGTERM or SIGHUP.
    pub fn from_signals() -> std::io::Result<Self> {
        let token = Self::new();
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register_usize(sig, Arc::clone(&token.signal), sig as usize)?;
        }
        let _ = SIGNALLED.set(token.clone());
        Ok(token)
    }

    /// The token the process's signals cancel, where [`Cancel::from_signals`] made one;
    /// else one that never is (a signal then ends the process as it would anyway).
    pub fn of_process() -> Self {
        SIGNALLED.get().cloned().unwrap_or_default()
    }

    /// Cancel as if `signal` had been received.
    pub fn cancel(&self, signal: i32) {
        self.signal.store(signal as usize, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    /// The signal that cancelled this token, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// The conventional shell exit code for the cancelling signal (128 + signal).
    pub fn exit_code(&self) -> Option<i32> {
        self.signal().map(|s| 128 + s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_sets_signal_and_exit_code() {
        let c = Cancel::new();
        assert!(!c.is_cancelled());
        assert_eq!(c.exit_code(), None);
        let c2 = c.clone();
        c2.cancel(libc::SIGINT);
        assert!(c.is_cancelled());
        assert_eq!(c.exit_code(), Some(130));
    }
}
