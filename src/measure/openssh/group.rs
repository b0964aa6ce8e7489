//! A suite's samples over one connection (`--connections suite`): a control master with
//! the suite forced, the send, receive and echo samples as sessions over it; and the
//! servers that end a connection after its first session (tinysshd), whose samples then
//! get a connection each.

use super::{Dialect, OpenSsh, sized_send};
use crate::measure::master::Master;
use crate::measure::{GroupProgress, Transport, each};
use crate::model::{FailureKind, Mode, Negotiated, Note, Outcome, Problem, Sample, SampleRequest};
use crate::sys::cancel::Cancel;

/// A connection that samples run over as sessions (`--connections suite`): its master
/// and what it negotiated (the key exchange's time and the rekeying of every sample over
/// it come from the master's log).
pub(super) struct Shared<'a> {
    pub(super) master: &'a Master,
    pub(super) negotiated: Option<Negotiated>,
}

/// Only send, receive and echo without compression share a connection: ssh reports
/// compression once, for the whole connection, when it closes. A sized send alone takes
/// one too: its bytes come from a file, its round trip from a session beside it.
fn shareable(reqs: &[SampleRequest]) -> bool {
    (reqs.len() > 1 || reqs.iter().any(sized_send))
        && (reqs.iter()).all(|r| {
            matches!(r.mode, Mode::Send | Mode::Receive | Mode::Echo)
                && r.suite.compression.is_none()
                && r.suite == reqs[0].suite
        })
}

impl OpenSsh {
    /// A suite's send, receive and echo samples as sessions over one control master
    /// with the suite forced (compressed suites, and anything else, one by one).
    pub(super) fn group(
        &mut self,
        reqs: &[SampleRequest],
        cancel: &Cancel,
        progress: &mut GroupProgress,
    ) -> Vec<Sample> {
        // An HPN-SSH client grows a channel's window with its TCP receive buffer only on
        // a connection of its own, not for a session over a control master, where a
        // download reads as stock OpenSSH's (bench/results/notebook.md, "HPN-SSH as a
        // client").
        let own = matches!(self.dialect, Dialect::Hpn);
        let hpn = Note::HpnOwnConnections;
        if own && shareable(reqs) && !self.notes.said.contains(&hpn) {
            self.notes.said.push(hpn);
        }
        if self.one_session || own || !shareable(reqs) {
            return each(reqs, progress, |r| self.measure(r, cancel));
        }
        let master = match self
            .scratch()
            .map(|dir| dir.to_path_buf())
            .and_then(|dir| Master::start(&self.ssh, &self.target, &reqs[0], &dir, cancel))
        {
            Ok(m) => m,
            // A connection that could not be opened is every sample's outcome.
            Err(outcome) => {
                let failed =
                    |r: &SampleRequest| Sample::new(r.suite.clone(), r.mode, outcome.clone());
                return each(reqs, progress, failed);
            }
        };
        let shared = Shared {
            master: &master,
            negotiated: master.negotiated(),
        };
        let mut up = true;
        each(reqs, progress, |r| {
            if up && !self.one_session {
                let sample = self.take(r, cancel, Some(&shared));
                if sample.outcome.is_success() || !master.ended() {
                    return sample;
                }
                up = false;
                if !self.ends_after_one_session(r, cancel) {
                    return sample;
                }
            }
            if self.one_session {
                return self.measure(r, cancel);
            }
            let gone = Outcome::failed(FailureKind::Network, Problem::SharedConnectionEnded);
            Sample::new(r.suite.clone(), r.mode, gone)
        })
    }

    /// A shared connection ended under a failed sample: does the server end every
    /// connection after its first session? If so (told once), the run goes on with a
    /// connection per sample, as `--connections sample` would.
    fn ends_after_one_session(&mut self, req: &SampleRequest, cancel: &Cancel) -> bool {
        let Ok(dir) = self.scratch().map(|d| d.to_path_buf()) else {
            return false;
        };
        self.one_session = Master::one_session_only(&self.ssh, &self.target, req, &dir, cancel);
        if self.one_session {
            self.notes.said.push(Note::OneSessionPerConnection);
        }
        self.one_session
    }
}
