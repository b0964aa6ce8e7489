//! How a run reaches its server, chosen once when `run` starts: over ssh for real, or
//! the mock transport (`--mock-transport`, for the CLI's snapshot tests), which
//! measures nothing and reads no offer. The rest of the run asks the chosen [`Reach`]
//! and never learns which one it has.

use super::progress::Progress;
use super::server::{Offered, Server, read_offer};
use anyhow::Result;
use sshbench::destination::{Resolved, Target};
use sshbench::measure::Transport;
use sshbench::measure::mock::Mock;
use sshbench::measure::openssh::{Dialect, OpenSsh};
use sshbench::measure::payload::Payload;
use sshbench::measure::window::{self, Login};
use sshbench::model::{Failure, Mode, Outcome, RunOptions, SampleRequest, Suite};
use sshbench::sys::cancel::Cancel;
use std::path::Path;
use std::time::Duration;

pub(super) trait Reach: Sync {
    /// A real destination's offer (the sandbox's is its own configuration).
    fn offer(
        &self,
        ssh: &Path,
        t: &Target,
        r: &Resolved,
        timeout: Duration,
        progress: &Progress,
    ) -> Result<Offered>;

    /// The login made before a run is stored: the server's window and shell start-up,
    /// or the failure that would stop every sample (its class and ssh's words).
    fn login(&self, ssh: &Path, srv: &Server, cancel: &Cancel) -> Result<Login, Failure>;

    /// dbclient's first connection, before a run is stored: one that cannot log in (a
    /// host key it does not know, a key the server refuses) would fail every sample.
    fn dbclient_login(
        &self,
        ssh: &Path,
        dialect: Dialect,
        srv: &Server,
        cancel: &Cancel,
    ) -> Result<(), Outcome>;

    /// The transport that takes the run's samples through one client.
    fn transport(
        &self,
        options: &RunOptions,
        ssh: &Path,
        dialect: Dialect,
        srv: &Server,
        payload: Payload,
    ) -> Box<dyn Transport>;

    /// Whether other processes on this machine could disturb what it measures (so
    /// whether to register beside other runs and watch the machine's load).
    fn disturbable(&self) -> bool;
}

/// The reach `--mock-transport` chose (with `--mock-pace`: each sample that long).
pub(super) fn chosen(mock: bool, pace: Option<Duration>) -> Box<dyn Reach> {
    match mock {
        true => Box::new(MockReach {
            pace: pace.unwrap_or_default(),
        }),
        false => Box::new(OverSsh),
    }
}

/// ssh for real.
struct OverSsh;

impl Reach for OverSsh {
    fn offer(
        &self,
        ssh: &Path,
        t: &Target,
        r: &Resolved,
        timeout: Duration,
        progress: &Progress,
    ) -> Result<Offered> {
        read_offer(ssh, t, r, timeout, progress)
    }

    fn login(&self, ssh: &Path, srv: &Server, cancel: &Cancel) -> Result<Login, Failure> {
        window::server_window(ssh, &srv.target, Duration::from_secs(30), cancel)
    }

    fn dbclient_login(
        &self,
        ssh: &Path,
        dialect: Dialect,
        srv: &Server,
        cancel: &Cancel,
    ) -> Result<(), Outcome> {
        let payload = Payload::random(16, 1);
        let mut t =
            OpenSsh::new(ssh.to_path_buf(), srv.target.clone(), payload).with_dialect(dialect);
        let req = SampleRequest {
            suite: Suite::default(),
            mode: Mode::Connect,
            bytes: 0,
            ramp: 0,
            timeout: Duration::from_secs(10),
            until: None,
            together: None,
            reference: None,
        };
        let sample = t.measure(&req, cancel);
        match sample.outcome {
            Outcome::Success => Ok(()),
            other => Err(other),
        }
    }

    fn transport(
        &self,
        options: &RunOptions,
        ssh: &Path,
        dialect: Dialect,
        srv: &Server,
        payload: Payload,
    ) -> Box<dyn Transport> {
        let workloads = options.workload.clone();
        Box::new(
            OpenSsh::new(ssh.to_path_buf(), srv.target.clone(), payload)
                .with_dialect(dialect)
                .with_workloads(workloads)
                .with_terminals(srv.gives_terminals()),
        )
    }

    fn disturbable(&self) -> bool {
        true
    }
}

/// The deterministic mock: no offer, no login, samples made up from the suite.
struct MockReach {
    pace: Duration,
}

impl Reach for MockReach {
    fn offer(
        &self,
        _: &Path,
        _: &Target,
        _: &Resolved,
        _: Duration,
        _: &Progress,
    ) -> Result<Offered> {
        Ok(Offered::default())
    }

    fn login(&self, _: &Path, _: &Server, _: &Cancel) -> Result<Login, Failure> {
        Ok(Login::default())
    }

    fn dbclient_login(&self, _: &Path, _: Dialect, _: &Server, _: &Cancel) -> Result<(), Outcome> {
        Ok(())
    }

    fn transport(
        &self,
        _: &RunOptions,
        _: &Path,
        _: Dialect,
        _: &Server,
        _: Payload,
    ) -> Box<dyn Transport> {
        Box::new(Mock {
            pace: self.pace,
            ..Mock::default()
        })
    }

    fn disturbable(&self) -> bool {
        false
    }
}
