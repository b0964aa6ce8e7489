//! The report commands' arguments, validated into what the store and the views take:
//! selections (`--since` checked), `show`'s options (`--top` checked), goals and grades.

use super::args::{AllowArg, ModeArg, OrderArg, SelectionArgs, ShowArgs, SortArg};
use crate::model::Mode;
use crate::offer::catalogue::Grade;
use crate::store::Selection;
use crate::views::recommend::{Goal, Order};
use crate::views::show::{ShowOptions, SortKey};
use anyhow::{Result, anyhow, bail};
use clap::ValueEnum;

/// `--since`: a UTC date or date and time, compared as text with the stored times.
pub fn parse_since(s: &str) -> Result<String> {
    let date = s.len() >= 10
        && s.as_bytes()[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    let time = s.get(10..).is_some_and(|t| {
        t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, 'T' | ':' | '.' | 'Z'))
    });
    if !(date && time) {
        bail!("--since {s:?} is not a date like 2026-11-30 or 2026-11-30T14:00");
    }
    Ok(s.to_string())
}

/// The stored results a report command asks for.
pub fn selection(w: &SelectionArgs) -> Result<Selection> {
    Ok(Selection {
        destination: w.destination.clone(),
        run: w.run,
        client: None,
        since: w.since.as_deref().map(parse_since).transpose()?,
    })
}

/// Which destinations a fleet view covers.
#[derive(Clone, Debug)]
pub enum Hosts {
    /// Stored destinations matching a glob; `None`: every one but the local sandbox's.
    Matching(Option<glob::Pattern>),
    /// These destinations, as a hosts file lists them.
    Listed(Vec<String>),
}

/// A fleet view's selection: its hosts (the file's text, when `--hosts` names one, is
/// read by the caller and parsed here) and `--since`.
pub fn fleet(
    w: &SelectionArgs,
    hosts_file: Option<&str>,
) -> Result<Option<(Hosts, Option<String>)>> {
    let since = w.since.as_deref().map(parse_since).transpose()?;
    let hosts = match (hosts_file, w.fleet.as_deref()) {
        (Some(text), _) => {
            let name = w
                .hosts
                .as_ref()
                .map_or("hosts".into(), |p| p.display().to_string());
            Hosts::Listed(crate::destination::parse_hosts(text, &name)?)
        }
        (None, Some("*")) => Hosts::Matching(None),
        (None, Some(g)) => Hosts::Matching(Some(
            glob::Pattern::new(g).map_err(|e| anyhow!("--fleet {g:?} is not a glob: {e}"))?,
        )),
        (None, None) => return Ok(None),
    };
    Ok(Some((hosts, since)))
}

impl Hosts {
    /// Whether a stored destination is one of these hosts.
    pub fn covers(&self, destination: &str) -> bool {
        match self {
            Hosts::Matching(None) => !crate::destination::is_sandbox_label(destination),
            Hosts::Matching(Some(p)) => p.matches(destination),
            Hosts::Listed(l) => l.iter().any(|h| h == destination),
        }
    }
}

/// One side of `compare`: `run:ID` or a destination.
pub fn compare_side(s: &str) -> Result<Selection> {
    let Some(run) = s.strip_prefix("run:") else {
        return Ok(Selection {
            destination: Some(s.to_string()),
            ..Default::default()
        });
    };
    // `run:ID/N`: client N (from 1, in the order `--ssh` named them) of a run of several.
    let (id, client) = match run.split_once('/') {
        Some((id, n)) => (id, Some(n)),
        None => (run, None),
    };
    let client = match client {
        None => None,
        Some(n) => Some(
            (n.parse::<u8>().ok())
                .filter(|n| (1..=crate::model::MAX_CLIENTS as u8).contains(n))
                .ok_or_else(|| anyhow!("{s:?}: run:ID/N needs a client's number from 1"))?
                - 1,
        ),
    };
    Ok(Selection {
        run: Some(
            id.parse()
                .map_err(|_| anyhow!("{s:?}: run:ID needs a number"))?,
        ),
        client,
        ..Default::default()
    })
}

/// `--top`: a positive number, or `all` (`None`).
pub fn parse_top(s: &str) -> Result<Option<usize>> {
    match s {
        "all" => Ok(None),
        n => n
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| anyhow!("--top {n:?}: give a positive number or `all`")),
    }
}

pub fn modes(m: &[ModeArg]) -> Vec<Mode> {
    m.iter().flat_map(|m| m.modes().iter().copied()).collect()
}

/// `show`'s options; `utf8` says whether the terminal can draw Unicode bars.
pub fn show_options(a: &ShowArgs, utf8: bool) -> Result<ShowOptions> {
    Ok(ShowOptions {
        chart: a.chart.then_some(a.ascii || !utf8),
        modes: modes(&a.mode),
        top: parse_top(&a.top)?,
        worst: a.worst,
        sort: match a.sort {
            SortArg::Fastest => SortKey::Speed,
            SortArg::Cpu => SortKey::Cpu,
            SortArg::Name => SortKey::Name,
        },
        all_grades: a.all_grades,
    })
}

/// `recommend --for`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GoalArg {
    Send,
    Receive,
    Connect,
    /// Send and receive alike.
    Balanced,
    /// Lowest keystroke echo latency (needs `--mode echo` data): typing, tmux, X11; with
    /// `--mode typing` data, what the keystroke clock costs.
    Interactive,
    /// Many short commands (Ansible, scripts, git): the ControlMaster lines, with
    /// `--mode exec` data.
    Commands,
    /// Fastest sftp uploads (needs `--mode sftp-put` data; its two shapes alike).
    SftpPut,
    /// Fastest sftp downloads (`--mode sftp-get`).
    SftpGet,
    /// Fastest rsync uploads, e.g. backups to a NAS (`--mode rsync-put`).
    RsyncPut,
    /// Fastest rsync downloads (`--mode rsync-get`).
    RsyncGet,
    /// Fastest `scp -O` uploads (`--mode scp-put`).
    ScpPut,
    /// Fastest `scp -O` downloads (`--mode scp-get`).
    ScpGet,
}

pub fn goal(g: GoalArg) -> Goal {
    match g {
        GoalArg::Send => Goal::Send,
        GoalArg::Receive => Goal::Receive,
        GoalArg::Connect => Goal::Connect,
        GoalArg::Balanced => Goal::Balanced,
        GoalArg::Interactive => Goal::Interactive,
        GoalArg::Commands => Goal::Commands,
        GoalArg::SftpPut => Goal::SftpPut,
        GoalArg::SftpGet => Goal::SftpGet,
        GoalArg::RsyncPut => Goal::RsyncPut,
        GoalArg::RsyncGet => Goal::RsyncGet,
        GoalArg::ScpPut => Goal::ScpPut,
        GoalArg::ScpGet => Goal::ScpGet,
    }
}

pub fn order(o: OrderArg) -> Order {
    match o {
        OrderArg::Grade => Order::Grade,
        OrderArg::Speed => Order::Speed,
    }
}

/// The worst grade `recommend` may list.
pub fn allowed(a: Option<AllowArg>) -> Grade {
    match a {
        None => Grade::Acceptable,
        Some(AllowArg::Legacy) => Grade::Legacy,
        Some(AllowArg::Broken) => Grade::Broken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_and_times_only() {
        for ok in ["2026-11-30", "2026-11-30T14:00", "2026-11-30T14:00:05.5Z"] {
            assert_eq!(parse_since(ok).unwrap(), ok);
        }
        for bad in [
            "yesterday",
            "2026-1-30",
            "30-11-2026",
            "2026-11-30 14:00",
            "",
        ] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn top_is_positive_or_all() {
        assert_eq!(parse_top("all").unwrap(), None);
        assert_eq!(parse_top("3").unwrap(), Some(3));
        assert!(parse_top("0").is_err());
        assert!(parse_top("-1").is_err());
        assert!(parse_top("ten").is_err());
    }

    #[test]
    fn compare_sides_are_runs_or_destinations() {
        assert_eq!(compare_side("run:7").unwrap().run, Some(7));
        assert!(compare_side("run:x").is_err());
        assert_eq!(
            compare_side("pi@nas").unwrap().destination.as_deref(),
            Some("pi@nas")
        );
    }
}
