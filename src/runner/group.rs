//! The connections of a round: with `--connections suite`, the send, receive and echo
//! samples of one suite in one round are sessions over one connection (its handshake
//! paid once), in the round's shuffled order; every other sample has its own. A sample
//! of a group that fails for a passing reason is retried in a new connection with the
//! others that did.

use super::retry::verdict;
use super::{ATTEMPTS, Abort, Event, Runner};
use crate::model::{Connections, Mode, Sample, SampleRequest, Suite};

/// What a shared connection is for: a suite, and which replica of it (the reference
/// pair is planned several times a round, each replica with a connection of its own).
type Connection<'a> = (&'a Suite, usize);

/// Modes whose samples may share a suite's connection: those of one established session.
/// Connect measures the connection itself; a workload opens its own.
fn shares(mode: Mode) -> bool {
    matches!(mode, Mode::Send | Mode::Receive | Mode::Echo)
}

impl Runner<'_> {
    /// The connections of one round, items in `order`: groups of one suite's session
    /// samples where they share a connection, else one item each. Warm-ups never share
    /// (each may be repeated larger).
    pub(super) fn connection_groups(&self, order: &[usize], round: u32) -> Vec<Vec<usize>> {
        let shared = self.settings.connections == Connections::PerSuite && round > 0;
        let mut groups: Vec<(Option<Connection>, Vec<usize>)> = Vec::new();
        for &i in order {
            let item = &self.items[i];
            // A replica of the reference pair has a connection of its own.
            let replica = (self.items[..i].iter())
                .filter(|e| e.mode == item.mode && e.suite == item.suite)
                .count();
            let key = (shared && shares(item.mode)).then_some((&item.suite, replica));
            match groups.iter_mut().find(|g| key.is_some() && g.0 == key) {
                Some(g) => g.1.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        // Echo first: after a transfer over the same connection, keystrokes came back
        // slower more often (bench/results/notebook.md, "One connection per suite and round");
        // the transfers keep the round's order.
        (groups.into_iter())
            .map(|(_, mut g)| {
                g.sort_by_key(|&i| self.items[i].mode != Mode::Echo);
                g
            })
            .collect()
    }

    /// One group's samples, in its order, each retried on its own terms (a sample alone
    /// is measured as before: sized warm-ups may repeat; but a send alone in a shared
    /// round goes to the transport as a group, which gives it a connection whose
    /// sessions it may use, as a send beside other modes has).
    pub(super) fn measure_group(
        &mut self,
        group: &[usize],
        round: u32,
    ) -> Result<Vec<(usize, Sample)>, Abort> {
        let shared = self.settings.connections == Connections::PerSuite && round > 0;
        if let [item] = group
            && !(shared && self.items[*item].mode == Mode::Send)
        {
            return Ok(vec![(*item, self.measure(*item, round)?)]);
        }
        let requests: Vec<SampleRequest> = group
            .iter()
            .map(|&i| self.sizer().request(i, round))
            .collect();
        let mut results: Vec<Option<Sample>> = vec![None; group.len()];
        let mut todo: Vec<usize> = (0..group.len()).collect();
        for attempt in 1..=ATTEMPTS {
            let reqs: Vec<SampleRequest> = todo.iter().map(|&k| requests[k].clone()).collect();
            let samples = self.attempt_group(round, &reqs, attempt)?;
            let mut again = Vec::new();
            for (k, sample) in todo.into_iter().zip(samples) {
                match verdict(&sample, attempt, self.streak.succeeded) {
                    (_, Some(failure)) => {
                        if let Some(given_up) = self.without_commands(failure.kind, &sample)? {
                            results[k] = Some(given_up);
                            continue;
                        }
                        // Recorded, so the database says why the run stopped.
                        let _ = self.sink.record(self.slot(group[k]), round, &sample);
                        return Err(Abort::Fatal(failure));
                    }
                    (true, None) => again.push(k),
                    (false, None) => results[k] = Some(sample),
                }
            }
            if again.is_empty() {
                break;
            }
            todo = again;
        }
        Ok(group
            .iter()
            .zip(results)
            .map(|(i, s)| (*i, s.expect("the last attempt keeps every sample")))
            .collect())
    }

    /// One connection's samples, with a progress event as each starts and ends.
    fn attempt_group(
        &mut self,
        round: u32,
        reqs: &[SampleRequest],
        attempt: u32,
    ) -> Result<Vec<Sample>, Abort> {
        let (done, total, succeeded) = (self.tally.done, self.tally.total, self.streak.succeeded);
        let progress = &mut *self.progress;
        let samples = self
            .transport
            .measure_group(reqs, self.cancel, &mut |i, s| {
                let event = match s {
                    None => Event::Starting {
                        round,
                        done: done + i,
                        total,
                        request: &reqs[i],
                    },
                    Some(sample) => Event::Finished {
                        round,
                        done: done + i + 1,
                        total,
                        sample,
                        retrying: verdict(sample, attempt, succeeded).0,
                    },
                };
                progress(event);
            });
        if self.cancel.is_cancelled() {
            return Err(Abort::Cancelled);
        }
        assert_eq!(
            samples.len(),
            reqs.len(),
            "a transport measures every request"
        );
        Ok(samples)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{VecSink, at_rate, plan, settings};
    use super::super::{Event, run};
    use crate::measure::{GroupProgress, Transport};
    use crate::model::{Connections, FailureKind, Mode, Outcome, Problem, Sample, SampleRequest};
    use crate::plan::{Plan, PlanItem};
    use crate::sys::cancel::Cancel;

    /// Every connection a run opens: the (mode, cipher) of each of its samples. Samples
    /// run at 1 GB/s; the first `fail` samples of receive `a` in round 1 time out.
    #[derive(Default)]
    struct Recording {
        connections: Vec<Vec<(Mode, String)>>,
        fail: usize,
        /// How many of the connections were asked for as a group.
        grouped: usize,
    }

    impl Transport for Recording {
        fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let name = req.suite.cipher.clone().unwrap_or_default();
            self.connections.push(vec![(req.mode, name)]);
            self.sample(req, cancel)
        }

        fn measure_group(
            &mut self,
            reqs: &[SampleRequest],
            cancel: &Cancel,
            progress: &mut GroupProgress,
        ) -> Vec<Sample> {
            let one = |r: &SampleRequest| (r.mode, r.suite.cipher.clone().unwrap_or_default());
            self.connections.push(reqs.iter().map(one).collect());
            self.grouped += 1;
            crate::measure::each(reqs, progress, |r| self.sample(r, cancel))
        }
    }

    impl Recording {
        fn sample(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
            let mut s = at_rate(req, cancel, 1e9);
            let counted = req.bytes > req.ramp && req.until.is_none();
            if req.mode == Mode::Receive && counted && self.fail > 0 {
                self.fail -= 1;
                s.outcome =
                    Outcome::failed(FailureKind::Timeout, Problem::quote("no result (test)"));
            }
            s
        }
    }

    /// Ciphers `a` and `b` in send, receive and echo, and one connect item.
    fn sessions() -> Plan {
        let mut p = plan(&["a", "b"]);
        for mode in [Mode::Receive, Mode::Echo] {
            let more: Vec<PlanItem> = (p.items.iter().take(2))
                .map(|i| PlanItem { mode, ..i.clone() })
                .collect();
            p.items.extend(more);
        }
        p.items.push(PlanItem {
            mode: Mode::Connect,
            suite: Default::default(),
        });
        p
    }

    fn run_with(connections: Connections, t: &mut Recording) -> (VecSink, Vec<bool>) {
        let mut s = settings(2);
        s.connections = connections;
        let mut sink = VecSink::default();
        let mut retrying = Vec::new();
        run(
            &sessions(),
            &s,
            t,
            &Cancel::new(),
            &mut sink,
            &[],
            &mut |e| {
                if let Event::Finished { retrying: r, .. } = e {
                    retrying.push(r);
                }
            },
        )
        .unwrap();
        (sink, retrying)
    }

    #[test]
    fn a_suites_session_samples_share_one_connection_per_round() {
        let mut t = Recording::default();
        let (sink, _) = run_with(Connections::PerSuite, &mut t);
        // Warm-ups: one per cipher and one for connect, each alone.
        let (warm, counted) = t.connections.split_at(3);
        assert!(warm.iter().all(|c| c.len() == 1), "{warm:?}");
        // Two rounds: per round one connection per cipher carrying its three modes,
        // and connect alone.
        assert_eq!(counted.len(), 6, "{counted:?}");
        let mut orders = Vec::new();
        for c in counted.iter().filter(|c| c.len() > 1) {
            assert_eq!(c[0].0, Mode::Echo, "echo meets its connection first: {c:?}");
        }
        for c in counted {
            if c[0].0 == Mode::Connect {
                assert_eq!(c.len(), 1);
                continue;
            }
            assert_eq!(c.len(), 3, "{c:?}");
            assert!(
                c.iter().all(|s| s.1 == c[0].1),
                "one suite per connection: {c:?}"
            );
            let mut modes: Vec<Mode> = c.iter().map(|s| s.0).collect();
            orders.push(modes.clone());
            modes.sort();
            assert_eq!(modes, [Mode::Send, Mode::Receive, Mode::Echo]);
        }
        orders.dedup();
        assert!(
            orders.len() > 1,
            "the modes' order is the round's shuffle: {orders:?}"
        );
        assert_eq!(sink.0.iter().filter(|s| s.1 > 0).count(), 14);
        // The same run with a connection per sample opens one for each.
        let mut apart = Recording::default();
        run_with(Connections::PerSample, &mut apart);
        assert!(apart.connections.iter().all(|c| c.len() == 1));
        assert_eq!(apart.connections.len(), 3 + 14);
    }

    #[test]
    fn a_sample_that_failed_in_its_connection_is_tried_again_alone() {
        let mut t = Recording {
            fail: 1,
            ..Recording::default()
        };
        let (sink, retrying) = run_with(Connections::PerSuite, &mut t);
        let again: Vec<&Vec<(Mode, String)>> = (t.connections.iter())
            .filter(|c| c.len() == 1 && c[0].0 == Mode::Receive)
            .collect();
        assert_eq!(again.len(), 1, "{:?}", t.connections);
        assert_eq!(retrying.iter().filter(|r| **r).count(), 1);
        // Only the retry's outcome is stored: every slot once, all successes.
        let counted: Vec<&(usize, u32, Sample)> = sink.0.iter().filter(|s| s.1 > 0).collect();
        assert_eq!(counted.len(), 14);
        assert!(counted.iter().all(|s| s.2.outcome.is_success()));
    }

    #[test]
    fn a_send_alone_in_a_shared_round_is_asked_for_as_a_group() {
        // Sends only (ciphers a and b), or receives only, two rounds after the warm-ups.
        let grouped = |mode: Mode, connections: Connections| {
            let mut p = plan(&["a", "b"]);
            p.items.iter_mut().for_each(|i| i.mode = mode);
            let mut s = settings(2);
            s.connections = connections;
            let mut t = Recording::default();
            let (cancel, mut sink) = (Cancel::new(), VecSink::default());
            run(&p, &s, &mut t, &cancel, &mut sink, &[], &mut |_| {}).unwrap();
            assert!(t.connections.iter().all(|c| c.len() == 1));
            t.grouped
        };
        assert_eq!(grouped(Mode::Send, Connections::PerSuite), 4);
        assert_eq!(grouped(Mode::Send, Connections::PerSample), 0);
        assert_eq!(grouped(Mode::Receive, Connections::PerSuite), 0);
    }

    #[test]
    fn each_replica_of_a_suite_has_a_connection_of_its_own() {
        // Suite `a` planned twice in send and receive (a replicated reference pair).
        let mut p = plan(&["a", "a"]);
        let more: Vec<PlanItem> = (p.items.iter())
            .map(|i| PlanItem {
                mode: Mode::Receive,
                ..i.clone()
            })
            .collect();
        p.items.extend(more);
        let mut s = settings(1);
        s.connections = Connections::PerSuite;
        let mut t = Recording::default();
        run(
            &p,
            &s,
            &mut t,
            &Cancel::new(),
            &mut VecSink::default(),
            &[],
            &mut |_| {},
        )
        .unwrap();
        let counted: Vec<usize> = t.connections.iter().skip(1).map(Vec::len).collect();
        assert_eq!(counted, [2, 2], "{:?}", t.connections);
    }
}
