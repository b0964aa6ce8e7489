//! Progress on stderr while a run measures: a bar on a terminal, one line per sample
//! otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use sshbench::analysis;
use sshbench::model::{Mode, Sample};
use sshbench::runner::{Event, streams};
use sshbench::views::scope::{display_value, unit, wrap_at};
use sshbench::views::{problem, safe};
use std::io::IsTerminal;

/// Progress on stderr: a bar on a terminal, one line per sample otherwise.
pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    verbose: bool,
    rounds: u32,
    /// A fleet run's host: its lines are prefixed with it, and its samples are only
    /// listed with `--verbose` (hosts run side by side; the fleet's own line counts them).
    host: Option<String>,
}

impl Progress {
    pub fn new(quiet: bool, verbose: bool, rounds: u32) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:25}] {pos}/{len} ETA {eta} {wide_msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        });
        Progress {
            bar,
            quiet,
            verbose,
            rounds,
            host: None,
        }
    }

    /// The progress of one host of a fleet run: plain lines, prefixed with the host.
    pub fn for_host(host: &str, quiet: bool, verbose: bool, rounds: u32) -> Self {
        Progress {
            bar: None,
            quiet,
            verbose,
            rounds,
            host: Some(host.to_string()),
        }
    }

    /// A fleet run's host (whose answer is the fleet's table, not its own).
    pub fn in_fleet(&self) -> bool {
        self.host.is_some()
    }

    pub fn say(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match (&self.bar, &self.host) {
            (Some(b), _) => b.println(fit(&safe::text(msg), terminal_width())),
            (None, Some(h)) => say_err!("[{h}] {msg}"),
            (None, None) => say_err!("{msg}"),
        }
    }

    pub fn event(&self, e: Event) {
        if self.quiet {
            return;
        }
        match e {
            Event::Starting {
                round,
                done,
                total,
                request,
            } => {
                if let Some(b) = &self.bar {
                    b.set_length(total as u64);
                    b.set_position(done as u64);
                    let streams = request.together.map(|_| None);
                    b.set_message(format!(
                        "{} {} {}",
                        self.round_label(round, streams),
                        request.mode,
                        suite_words(&request.suite)
                    ));
                }
            }
            Event::Finished {
                round,
                done,
                total,
                sample,
                retrying,
            } => {
                let line = format!(
                    "[{done}/{total}] {} {}{}",
                    self.round_label(round, sample.stream.map(|t| Some(t.of))),
                    describe(sample, self.verbose),
                    if retrying { " (retrying)" } else { "" }
                );
                match (&self.bar, &self.host) {
                    (Some(b), _) => {
                        b.set_position(done as u64);
                        b.set_prefix(describe(sample, false));
                        if self.verbose || retrying {
                            b.println(line);
                        }
                    }
                    (None, Some(h)) if self.verbose => say_err!("[{h}] {line}"),
                    (None, Some(_)) => {}
                    (None, None) => say_err!("{line}"),
                }
            }
            Event::Checks { items } => self.say(&checks_line(items)),
            Event::GivenUp {
                modes,
                rest,
                problem,
            } => self.say(&given_up_line(modes, rest, &problem::say(problem))),
        }
    }

    /// `warm-up`, `round 2/3`, `race round 4` (a race past its first pass), or for a
    /// batch of parallel streams (`Some(count)`, the count if known) `batch 2/3 of 4
    /// streams`.
    fn round_label(&self, round: u32, streams: Option<Option<u32>>) -> String {
        match streams {
            Some(n) => {
                let of = n.map_or(String::new(), |n| format!(" of {n} streams"));
                format!("batch {round}/{}{of}", streams::BATCHES)
            }
            None if round == 0 => "warm-up".into(),
            None if round > self.rounds => format!("race round {round}"),
            None => format!("round {round}/{}", self.rounds),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn describe(s: &Sample, verbose: bool) -> String {
    // A session's own round trip, whatever it is ranked by.
    let value = match s.mode {
        Mode::Echo => analysis::echo_median(s),
        _ => analysis::figure(s),
    };
    let figure = match (s.outcome.is_success(), value) {
        (true, Some(v)) => format!("{:.1} {}", display_value(s.mode, v), unit(s.mode)),
        (true, None) => format!("ok in {:.1} ms", s.wall.as_secs_f64() * 1e3),
        (false, _) if verbose => format!(
            "{}: {}",
            s.outcome.label(),
            problem::of_outcome(&s.outcome).unwrap_or_default()
        ),
        (false, _) => s.outcome.label().to_string(),
    };
    format!("{} {} {}", s.mode, suite_words(&s.suite), figure)
}

/// A suite as progress names it: with its client's number (`ssh 2`) in a run of
/// several clients, whose suites are otherwise alike.
fn suite_words(s: &sshbench::model::Suite) -> String {
    match s.client {
        0 => s.label(),
        k => format!("{} (ssh {})", s.label(), k + 1),
    }
}

/// `note: <why>; so send, receive cannot be measured: the run goes on with connect,
/// sftp-put-file`.
fn given_up_line(modes: &[Mode], rest: &[Mode], message: &str) -> String {
    let names = |modes: &[Mode]| (modes.iter().map(|m| m.as_str())).collect::<Vec<_>>();
    format!(
        "note: {message}; so {} cannot be measured: the run goes on with {}",
        names(modes).join(", "),
        names(rest).join(", ")
    )
}

/// The pairs the sums put first, measured as pairs: `measured as pairs: send aes256-ctr +
/// umac-64-etm@openssh.com, ...`.
fn checks_line(items: &[sshbench::plan::PlanItem]) -> String {
    let each: Vec<String> = (items.iter())
        .map(|i| format!("{} {}", i.mode, suite_words(&i.suite)))
        .collect();
    format!("sums measured as pairs: {}", each.join(", "))
}

/// A line for a terminal `width` columns wide: wrapped between words, continuations
/// indented, so that a long note or list does not break inside a name (logs, where
/// stderr is no terminal, keep each message on one line).
fn fit(msg: &str, width: usize) -> String {
    wrap_at(msg, "  ", width.max(40))
}

/// The terminal's columns on stderr; 100 where it does not say.
fn terminal_width() -> usize {
    console::Term::stderr()
        .size_checked()
        .map_or(100, |(_, cols)| usize::from(cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_fits_the_terminal_without_splitting_a_name() {
        let names = ["curve25519-sha256@libssh.org"; 6].join(", ");
        let msg = format!("sums measured as pairs: {names}");
        let fitted = fit(&msg, 60);
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines.len() > 2, "{fitted}");
        assert!(lines.iter().all(|l| l.chars().count() <= 60), "{fitted}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")), "{fitted}");
        assert_eq!(fitted.replace("\n  ", " "), msg);
        // A narrow terminal still gets 40 columns; a short message is left alone.
        assert!(fit(&msg, 10).lines().any(|l| l.chars().count() > 10));
        assert_eq!(fit("client: OpenSSH_9.2p1", 100), "client: OpenSSH_9.2p1");
    }
}
