//! Telling a run what else kept this machine busy while it measured: another sshbench
//! process (see [`Instances`]), with a warning when the run begins, or other processes'
//! CPU (see [`Busy`]); a note stored with the run.

use super::progress::Progress;
use sshbench::model::Note;
use sshbench::sys::instances::Instances;
use sshbench::sys::load::Busy;
use sshbench::sys::machine;
use sshbench::views::notes::sshbench_runs;
use std::time::Duration;

/// Other processes below this many CPUs on average (or 5% of the machine's, if more)
/// leave a sandbox run's figures as they are: an idle machine reads within about 0.05. A
/// real server's run, where only the client's side shares this machine, is told from
/// twice as much on (a desktop's own bustle is no news).
const BUSY_CPUS: f64 = 0.15;

/// Over a shorter run (one that stopped at its first sample), the machine's clock ticks
/// and the children not yet reaped outweigh what others did: no note.
const BUSY_SPAN: Duration = Duration::from_secs(2);

/// What a run knew of other measuring processes when it began.
pub(super) struct Overlap<'a> {
    instances: Option<&'a Instances>,
    at_start: Vec<u32>,
    /// Marks left before this run began (for an earlier run of this process).
    marks_before: Vec<u32>,
    /// The machine's CPU as the run began, and whether the sandbox runs here too; `None`
    /// in a fleet (its hosts' runs share this process) or where unknown.
    busy: Option<(Busy, bool)>,
}

impl<'a> Overlap<'a> {
    /// Look for other measuring processes as a run begins, and warn of them; with `load`
    /// (whether the sandbox runs here too), watch the machine's CPU.
    pub fn begin(
        instances: Option<&'a Instances>,
        load: Option<bool>,
        progress: &Progress,
    ) -> Self {
        let at_start = instances.map(Instances::others_now).unwrap_or_default();
        if !at_start.is_empty() {
            progress.say(&format!(
                "warning: {} measuring on this machine: the runs share its CPUs, so each one's \
                 figures come out lower and noisier (Ctrl-C stops this one; `sshbench run \
                 --resume` goes on with it later)",
                sshbench_runs(&at_start, "is", "are")
            ));
        }
        Overlap {
            instances,
            marks_before: instances.map(Instances::arrivals).unwrap_or_default(),
            at_start,
            busy: load
                .filter(|_| !progress.in_fleet())
                .and_then(|sandbox| Some((Busy::now()?, sandbox))),
        }
    }

    /// The run's note on what else kept the machine busy, once its own processes are
    /// reaped (the sandbox's sshd too): another sshbench, else other processes.
    pub fn note(&self) -> Option<Note> {
        self.sshbench_note().or_else(|| {
            let (busy, sandbox) = self.busy.as_ref()?;
            busy_note(
                (busy.others_since()?, busy.elapsed()),
                machine::online_cpus().unwrap_or(1),
                *sandbox,
            )
        })
    }

    /// Where another sshbench process measured at any time during the run: running as it
    /// began, or begun since.
    fn sshbench_note(&self) -> Option<Note> {
        let mut pids = self.at_start.clone();
        let arrived = self.instances.map(Instances::arrivals).unwrap_or_default();
        pids.extend(
            arrived
                .into_iter()
                .filter(|p| !self.marks_before.contains(p)),
        );
        pids.sort_unstable();
        pids.dedup();
        (!pids.is_empty()).then_some(Note::OtherSshbench { pids })
    }
}

/// The note where other processes kept `others` CPUs busy on average over `span`, of
/// `cpus`.
fn busy_note((others, span): (f64, Duration), cpus: usize, sandbox: bool) -> Option<Note> {
    let from = BUSY_CPUS.max(0.05 * cpus as f64) * if sandbox { 1.0 } else { 2.0 };
    (others >= from && span >= BUSY_SPAN).then_some(Note::BusyMachine {
        others,
        cpus,
        sandbox,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_other_process_is_no_note() {
        let none = Overlap {
            instances: None,
            at_start: Vec::new(),
            marks_before: Vec::new(),
            busy: None,
        };
        assert_eq!(none.note(), None);
    }

    #[test]
    fn other_processes_are_noted_past_a_share_of_the_cpus() {
        let minute = |others| (others, Duration::from_secs(60));
        assert_eq!(busy_note(minute(0.12), 2, true), None);
        assert_eq!(busy_note(minute(-0.05), 2, true), None);
        let busy = busy_note(minute(0.7), 2, true).unwrap();
        let noted = Note::BusyMachine {
            others: 0.7,
            cpus: 2,
            sandbox: true,
        };
        assert_eq!(busy, noted);
        // A large machine's daemons weigh less: 5% of its CPUs; a client's, half as much.
        assert_eq!(busy_note(minute(1.2), 32, true), None);
        assert!(busy_note(minute(1.7), 32, true).is_some());
        assert_eq!(busy_note(minute(0.25), 2, false), None);
        assert_eq!(busy_note(minute(3.0), 32, false), None);
        assert!(busy_note(minute(4.0), 32, false).is_some());
        // A run that stopped at once: ticks and unreaped children, not others' work.
        assert_eq!(busy_note((0.7, Duration::from_millis(100)), 2, true), None);
    }
}
