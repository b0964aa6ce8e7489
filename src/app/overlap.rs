//! Telling a run that another sshbench process measured on this machine beside it (see
//! [`Instances`]): a warning when it begins, and a note stored with the run.

use super::progress::Progress;
use sshbench::sys::instances::Instances;

/// What a run knew of other measuring processes when it began.
pub(super) struct Overlap<'a> {
    instances: Option<&'a Instances>,
    at_start: Vec<u32>,
    /// Marks left before this run began (for an earlier run of this process).
    marks_before: Vec<u32>,
}

impl<'a> Overlap<'a> {
    /// Look for other measuring processes as a run begins, and warn of them.
    pub fn begin(instances: Option<&'a Instances>, progress: &Progress) -> Self {
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
        }
    }

    /// The run's note, where another process measured at any time during it: running as
    /// it began, or begun since.
    pub fn note(&self) -> Option<String> {
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
        };
        assert_eq!(none.note(), None);
    }
}
