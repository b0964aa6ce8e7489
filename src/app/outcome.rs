//! How a run ends for its user: the exit code or error, and the answer on stdout.

use super::emit;
use super::progress::Progress;
use anyhow::{Result, bail};
use sshbench::cli::FormatArg;
use sshbench::cli::config::RunConfig;
use sshbench::destination::Resolved;
use sshbench::model::{Failure, FailureKind, Mode, Note, Problem, RunStatus};
use sshbench::runner::{Abort, End};
use sshbench::store::{self, Store};
use sshbench::sys::cancel::Cancel;
use sshbench::views::clients as clients_view;
use sshbench::views::scope::{Scope, wrap};
use sshbench::views::show::{self, ShowOptions, SortKey};
use sshbench::views::{headline, problem};
use std::time::Duration;

/// The run's end as the user sees it: `Ok(Some(code))` to exit now, `Ok(None)` to print
/// the results.
pub fn conclude(
    result: Result<End, Abort>,
    run_id: i64,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<Option<u8>> {
    match result {
        Ok(End::Complete) => Ok(None),
        Ok(End::Budget) => {
            progress.say("time budget reached; finish with `sshbench run --resume`");
            Ok(None)
        }
        Err(Abort::Cancelled) => {
            say_err!(
                "sshbench: interrupted; run {run_id} keeps every finished sample (`sshbench run --resume` finishes it)"
            );
            Ok(Some(cancel.exit_code().unwrap_or(130) as u8))
        }
        Err(Abort::Fatal(f)) => bail!("{}", fatal_error(&f)),
        Err(Abort::Store(e)) => bail!(
            "storing a sample: {e:#}\nhint: the samples stored before it are kept; `sshbench \
             run --resume` (with the same --db) goes on from them once the database answers \
             again"
        ),
        Err(Abort::TooManyFailures(f)) if f.kind == FailureKind::Timeout => bail!(
            "{}\nhint: a slow server or link may need more time per sample: `--timeout` (in \
             seconds); `sshbench run --resume` goes on from the samples stored",
            problem::too_many(&f)
        ),
        Err(Abort::TooManyFailures(f)) => bail!("{}", problem::too_many(&f)),
    }
}

/// A failure that stops a run at once, and what to do about it.
pub fn fatal_error(f: &Failure) -> String {
    format!("{}\nhint: {}", problem::say(&f.problem), fatal_hint(f))
}

/// What to do about a failure that stops a run at once.
fn fatal_hint(f: &Failure) -> String {
    let hint = match (f.kind, &f.problem) {
        // ssh offered more keys than the server's MaxAuthTries (an agent holding several,
        // several IdentityFile lines) before the one it takes.
        (_, Problem::TooManyAuthTries { .. }) => {
            "the server gave up before ssh offered the key it accepts: name that key alone \
             (`-o IdentitiesOnly=yes -o IdentityFile=KEY`, or both in ssh_config)"
        }
        (FailureKind::Network, _) => UNREACHABLE_HINT,
        (FailureKind::Command, _) => {
            "sshbench runs short POSIX commands through the login shell: use an account or key \
             without a forced command (`ForceCommand`, `command=` in authorized_keys); `ssh DEST \
             'echo ok'` should print ok. On a login that allows sftp alone, `--mode \
             connect,sftp-put,sftp-get` measures what sftp moves"
        }
        (_, Problem::KeyChanged { host, types, .. }) => {
            return changed_key_hint(host.as_deref(), types.is_some());
        }
        (FailureKind::HostKey, _) => {
            "connect once with plain `ssh DEST` to verify and record the server's host key"
        }
        _ => {
            "sshbench needs key-based login that works without prompts: a key with a \
             passphrase must be in ssh-agent (`ssh-add`); `ssh -o BatchMode=yes DEST true` \
             should succeed"
        }
    };
    hint.to_string()
}

/// A changed host key: what to check, and the known_hosts entry to remove once checked
/// (ssh's sentence names it: `Host key for [HOST]:PORT has changed ...`).
fn changed_key_hint(host: Option<&str>, other_type: bool) -> String {
    if other_type {
        return "ssh asked for another type of key than the one your known_hosts holds for \
                this server: a HostKeyAlgorithms list (in ssh_config or `-o`) that puts that \
                type first does this, where without a list (or with a `+`/`-` one) ssh \
                prefers the type it knows; else the server no longer offers that type (its \
                keys replaced): check the new key's fingerprint with its admin"
            .to_string();
    }
    let host = host.unwrap_or("HOST");
    format!(
        "the server's host key is not the one your known_hosts holds for it: if its keys were \
         replaced (a reinstall), check the new key's fingerprint with its admin, remove the old \
         one (`ssh-keygen -R '{host}'`) and connect once with plain `ssh DEST`; if not, do not \
         connect: someone may be in between"
    )
}

/// The note for a run of `modes` with echo, from a client whose terminal sessions send
/// keystrokes on a clock (OpenSSH 9.5+'s `ObscureKeystrokeTiming`, on by default, as
/// `ssh -G` resolved it): echo is timed without a terminal, so its figures leave that
/// wait out, and it outweighs any cipher's microseconds.
pub fn keystroke_clock_note(resolved: Option<&Resolved>, modes: &[Mode]) -> Option<Note> {
    let interval_ms = resolved?.keystroke_interval_ms()?;
    modes
        .contains(&Mode::Echo)
        .then_some(Note::KeystrokeClock { interval_ms })
}

/// A login shell slower to start than this is worth a note: its start-up files cost
/// every connection, scp, rsync and sftp session that much.
const SLOW_SHELL: Duration = Duration::from_millis(50);

/// The note for a server whose login shell ran `ran` before a command did.
pub fn shell_start_note(ran: Option<Duration>) -> Option<Note> {
    let ms = ran.filter(|&r| r >= SLOW_SHELL)?.as_millis();
    Some(Note::SlowShellStart {
        ms: u64::try_from(ms).unwrap_or(u64::MAX),
    })
}

/// What to check when the server cannot be reached.
pub const UNREACHABLE_HINT: &str =
    "check the host name and port, and that `ssh DEST true` connects";

pub fn status_of(result: &Result<End, Abort>) -> RunStatus {
    match result {
        Ok(End::Complete) => RunStatus::Complete,
        Ok(End::Budget) => RunStatus::Budget,
        Err(Abort::Cancelled) => RunStatus::Interrupted,
        Err(_) => RunStatus::Failed,
    }
}

/// The run's table on stdout.
pub fn print_results(store: &Store, run_id: i64, cfg: &RunConfig) -> Result<u8> {
    let (runs, samples) = store.select(&store::Selection {
        run: Some(run_id),
        ..Default::default()
    })?;
    if samples.is_empty() {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stdout().lock(),
            "No counted samples yet (only warm-ups); finish with `sshbench run --resume`."
        );
        return Ok(0);
    }
    // A run of several clients answers for each, then says which is fastest.
    let groups = store::clients::groups(runs, samples);
    let scopes: Vec<Scope> = (groups.iter())
        .map(|(runs, samples)| Scope::build(runs, samples))
        .collect();
    for scope in &scopes {
        if cfg.tables {
            let opts = ShowOptions {
                chart: None,
                modes: Mode::ALL.to_vec(),
                top: None,
                worst: false,
                sort: SortKey::Speed,
                all_grades: false,
            };
            let (doc, view) = show::show(scope, &opts);
            emit(&doc, &view, FormatArg::Table, cfg.wide)?;
        } else {
            let (doc, view) = headline::headline(scope, super::answer_width(cfg.wide));
            emit(&doc, &view, FormatArg::Table, cfg.wide)?;
        }
    }
    if scopes.len() > 1 {
        let v = clients_view::view(&scopes);
        emit(&clients_view::render(&v), &v, FormatArg::Table, cfg.wide)?;
    }
    if !cfg.quiet {
        let more = format!(
            "more: sshbench show (every suite) / summary / recommend (results of every run of {} are combined)",
            (scopes.iter().map(|s| s.destination.as_str()))
                .collect::<Vec<_>>()
                .join(" and of ")
        );
        say_err!("{}", wrap(&more, "  "));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(abort: Abort) -> String {
        let progress = Progress::new(true, false, 3);
        let err = conclude(Err(abort), 1, &Cancel::new(), &progress).unwrap_err();
        format!("{err:#}")
    }

    #[test]
    fn samples_that_keep_timing_out_point_at_the_timeout() {
        let failure = |kind, problem| Failure { kind, problem };
        let timeouts = error_of(Abort::TooManyFailures(failure(
            FailureKind::Timeout,
            Problem::NoResult {
                after_s: 120,
                last: None,
            },
        )));
        assert!(
            timeouts.contains("hint: a slow server or link"),
            "{timeouts}"
        );
        let count = Problem::ByteCount {
            expected: 5,
            counted: 4,
        };
        let other = error_of(Abort::TooManyFailures(failure(
            FailureKind::ByteCount,
            count,
        )));
        assert!(!other.contains("hint"), "{other}");
        assert_eq!(
            other,
            "10 samples in a row failed; the last: 5 bytes expected, 4 counted at the far end"
        );
    }

    #[test]
    fn a_login_that_runs_no_commands_says_what_to_use_instead() {
        let err = error_of(Abort::Fatal(Failure {
            kind: FailureKind::Command,
            problem: Problem::NeverRan {
                status: 1,
                printed: None,
            },
        }));
        assert!(err.contains("without a forced command"), "{err}");
        assert!(err.contains("`--mode connect,sftp-put,sftp-get`"), "{err}");
    }

    #[test]
    fn a_login_shell_slow_to_start_is_noted_from_fifty_milliseconds() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(
            shell_start_note(ms(180)),
            Some(Note::SlowShellStart { ms: 180 })
        );
        assert_eq!(shell_start_note(ms(40)), None);
        assert_eq!(shell_start_note(None), None);
    }

    #[test]
    fn echo_from_a_client_with_a_keystroke_clock_says_what_a_terminal_adds() {
        let of = |ssh_g: &str, modes: &[Mode]| {
            keystroke_clock_note(Some(&sshbench::destination::parse_ssh_g(ssh_g)), modes)
        };
        let echo = [Mode::Send, Mode::Echo];
        let clock = |interval_ms| Some(Note::KeystrokeClock { interval_ms });
        assert_eq!(of("obscurekeystroketiming yes\n", &echo), clock(20));
        assert_eq!(of("obscurekeystroketiming 45\n", &echo), clock(45));
        // Off, a client before 9.5 (nothing printed), or no echo measured: nothing to say.
        assert_eq!(of("obscurekeystroketiming no\n", &echo), None);
        assert_eq!(of("user root\n", &echo), None);
        assert_eq!(of("obscurekeystroketiming yes\n", &[Mode::Send]), None);
        assert_eq!(keystroke_clock_note(None, &echo), None);
    }
}
