//! Taking one sample: the [`Transport`] trait, its request and result types.
//!
//! A transport measures one suite in one mode and returns a [`Sample`]; it never prints
//! and never retries. The real implementation is [`openssh::OpenSsh`]; [`mock::Mock`]
//! returns fixed, deterministic figures for CLI tests of everything around it.

pub mod mock;
pub mod openssh;
pub mod payload;
pub mod rekey;
pub mod remote;
pub mod sshlog;
pub mod window;
pub mod workload;

use crate::model::{Sample, SampleRequest};
use crate::sys::cancel::Cancel;

/// Something that can take one sample.
pub trait Transport {
    /// Measure one sample. Must return within `req.timeout` (plus teardown) and soon
    /// after `cancel` fires; a cancelled sample has outcome `Failed { Cancelled }`.
    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample;

    /// Another transport to the same server, for a sample taken at the same time as this
    /// one's (`--streams`); `None` where that is not possible.
    fn fork(&self) -> Option<Box<dyn Transport + Send>> {
        None
    }
}
