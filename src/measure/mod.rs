//! Taking one sample: the [`Transport`] trait, its request and result types.
//!
//! A transport measures one suite in one mode and returns a [`Sample`]; it never prints
//! and never retries. The real implementation is [`openssh::OpenSsh`]; [`mock::Mock`]
//! returns fixed, deterministic figures for CLI tests of everything around it.

pub mod by_client;
pub mod master;
pub mod mock;
pub mod openssh;
pub mod payload;
pub mod rekey;
pub mod remote;
pub mod sshlog;
pub mod window;
pub mod workload;

use crate::model::{Note, Sample, SampleRequest};
use crate::sys::cancel::Cancel;

/// What a transport says while it measures a group: sample `i` starts (`None`) or has
/// ended (`Some`).
pub type GroupProgress<'a> = dyn FnMut(usize, Option<&Sample>) + 'a;

/// Take `reqs` one after the other with `take`, telling `progress` as each starts and
/// ends.
pub fn each(
    reqs: &[SampleRequest],
    progress: &mut GroupProgress,
    mut take: impl FnMut(&SampleRequest) -> Sample,
) -> Vec<Sample> {
    (reqs.iter().enumerate())
        .map(|(i, r)| {
            progress(i, None);
            let sample = take(r);
            progress(i, Some(&sample));
            sample
        })
        .collect()
}

/// Something that can take one sample.
pub trait Transport {
    /// Measure one sample. Must return within `req.timeout` (plus teardown) and soon
    /// after `cancel` fires; a cancelled sample has outcome `Failed { Cancelled }`.
    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample;

    /// Measure samples of one suite, one after the other, over one connection where
    /// the transport can (`--connections suite`): one sample per request, in order. A
    /// connection that cannot be opened, or a refusal, is every sample's outcome. By
    /// default each sample has a connection of its own.
    fn measure_group(
        &mut self,
        reqs: &[SampleRequest],
        cancel: &Cancel,
        progress: &mut GroupProgress,
    ) -> Vec<Sample> {
        each(reqs, progress, |r| self.measure(r, cancel))
    }

    /// Another transport to the same server, for a sample taken at the same time as this
    /// one's (`--streams`); `None` where that is not possible.
    fn fork(&self) -> Option<Box<dyn Transport + Send>> {
        None
    }

    /// What the transport had to do otherwise than its design since it was last asked
    /// (e.g. feed sends through a pipe where no file of zeros could be made), for the
    /// caller to store and tell the user.
    fn notes(&mut self) -> Vec<Note> {
        Vec::new()
    }
}
