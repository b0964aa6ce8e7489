//! A run of several clients (`--ssh`): each sample goes to the transport of the client
//! its suite names, so that one schedule interleaves them all in the same rounds.

use super::{GroupProgress, Transport};
use crate::model::{Note, Sample, SampleRequest};
use crate::sys::cancel::Cancel;

/// One transport per client, in the run's order of clients.
pub struct ByClient<T: ?Sized> {
    each: Vec<Box<T>>,
}

impl<T: Transport + ?Sized> ByClient<T> {
    /// `each` holds a transport per client, the first client's first; never empty.
    pub fn new(each: Vec<Box<T>>) -> Self {
        assert!(!each.is_empty(), "a run has at least one client");
        ByClient { each }
    }

    /// The transport of a request's client. A plan's clients are checked against the
    /// run's when it is made or resumed, so every index is one of them.
    fn of(&mut self, req: &SampleRequest) -> &mut T {
        let at = usize::from(req.suite.client).min(self.each.len() - 1);
        &mut self.each[at]
    }
}

impl<T: Transport + ?Sized> Transport for ByClient<T> {
    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        self.of(req).measure(req, cancel)
    }

    /// A group is one suite's samples, so one client's.
    fn measure_group(
        &mut self,
        reqs: &[SampleRequest],
        cancel: &Cancel,
        progress: &mut GroupProgress,
    ) -> Vec<Sample> {
        match reqs.first() {
            Some(first) => self.of(first).measure_group(reqs, cancel, progress),
            None => Vec::new(),
        }
    }

    fn fork(&self) -> Option<Box<dyn Transport + Send>> {
        let each: Option<Vec<Box<dyn Transport + Send>>> =
            self.each.iter().map(|t| t.fork()).collect();
        Some(Box::new(ByClient::new(each?)))
    }

    fn notes(&mut self) -> Vec<Note> {
        let mut out: Vec<Note> = Vec::new();
        for note in self.each.iter_mut().flat_map(|t| t.notes()) {
            if !out.contains(&note) {
                out.push(note);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::mock::Mock;
    use crate::model::{Mode, Suite};
    use std::time::Duration;

    /// Counts the samples it is asked for.
    struct Counting(usize, Mock);

    impl Transport for Counting {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            self.0 += 1;
            self.1.measure(req, cancel)
        }
    }

    fn request(client: u8) -> SampleRequest {
        SampleRequest {
            suite: Suite {
                cipher: Some("aes128-ctr".into()),
                client,
                ..Suite::default()
            },
            mode: Mode::Connect,
            bytes: 0,
            ramp: 0,
            timeout: Duration::from_secs(5),
            until: None,
            together: None,
            reference: None,
        }
    }

    #[test]
    fn each_sample_goes_to_its_client_s_transport() {
        let mut t = ByClient::new(vec![
            Box::new(Counting(0, Mock::default())),
            Box::new(Counting(0, Mock::default())),
        ]);
        let cancel = Cancel::new();
        for client in [1, 0, 1, 1] {
            let s = t.measure(&request(client), &cancel);
            assert_eq!(s.suite.client, client, "the sample keeps its client");
        }
        assert_eq!((t.each[0].0, t.each[1].0), (1, 3));
    }
}
