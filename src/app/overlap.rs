//! Telling a run what else kept this machine busy while it measured: another sshbench
//! process (see [`Instances`]), with a warning when the run begins, or other processes'
//! CPU (see [`Busy`]); a note stored with the run.

use super::progress::Progress;
use sshbench::sys::instances::Instances;
use sshbench::sys::load::Busy;
use sshbench::sys::machine;
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
                runs(&at_start, "is", "are")
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
    pub fn note(&self) -> Option<String> {
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
    fn sshbench_note(&self) -> Option<String> {
        let mut pids = self.at_start.clone();
        let arrived = self.instances.map(Instances::arrivals).unwrap_or_default();
        pids.extend(
            arrived
                .into_iter()
                .filter(|p| !self.marks_before.contains(p)),
        );
        pids.sort_unstable();
        pids.dedup();
        (!pids.is_empty()).then(|| {
            format!(
                "{} measuring on this machine during this run: the runs shared its CPUs, so \
                 this run's figures are lower and noisier than one run alone would get",
                runs(&pids, "was", "were")
            )
        })
    }
}

/// The note where other processes kept `others` CPUs busy on average over `span`, of
/// `cpus`.
fn busy_note((others, span): (f64, Duration), cpus: usize, sandbox: bool) -> Option<String> {
    let from = BUSY_CPUS.max(0.05 * cpus as f64) * if sandbox { 1.0 } else { 2.0 };
    if others < from || span < BUSY_SPAN {
        return None;
    }
    let (whose, what) = if sandbox {
        (
            "this machine's",
            "its figures (the sandbox's client and server both run here)",
        )
    } else {
        ("this client's", "figures that the client's CPU limits")
    };
    let cpus = match cpus {
        1 => "1 CPU".to_string(),
        n => format!("{n} CPUs"),
    };
    Some(format!(
        "other processes kept {others:.1} of {whose} {cpus} busy on average during this run, \
         so {what} are lower and noisier than on an idle machine"
    ))
}

/// "another sshbench run (process 42) is", or "2 other sshbench runs (processes 42, 43)
/// are".
fn runs(pids: &[u32], one: &str, many: &str) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    match pids.len() {
        1 => format!("another sshbench run (process {}) {one}", list[0]),
        n => format!(
            "{n} other sshbench runs (processes {}) {many}",
            list.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_or_several_are_named_with_their_processes() {
        assert_eq!(
            runs(&[42], "is", "are"),
            "another sshbench run (process 42) is"
        );
        assert_eq!(
            runs(&[42, 43], "was", "were"),
            "2 other sshbench runs (processes 42, 43) were"
        );
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
        assert!(
            busy.starts_with("other processes kept 0.7 of this machine's 2 CPUs busy"),
            "{busy}"
        );
        // A large machine's daemons weigh less: 5% of its CPUs; a client's, half as much.
        assert_eq!(busy_note(minute(1.2), 32, true), None);
        assert!(busy_note(minute(1.7), 32, true).is_some());
        assert_eq!(busy_note(minute(0.25), 2, false), None);
        assert_eq!(busy_note(minute(3.0), 32, false), None);
        let client = busy_note(minute(4.0), 32, false).unwrap();
        assert!(
            client.contains("figures that the client's CPU limits"),
            "{client}"
        );
        // A run that stopped at once: ticks and unreaped children, not others' work.
        assert_eq!(busy_note((0.7, Duration::from_millis(100)), 2, true), None);
    }
}
