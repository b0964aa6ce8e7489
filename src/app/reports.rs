//! The report commands over stored results: `show`, `summary`, `recommend`, `compare`
//! and `report`.

use super::{db_path, emit};
use anyhow::{Context, Result, anyhow, bail};
use sshbench::analysis;
use sshbench::cli::{
    AllowArg, CompareArgs, GoalArg, ModeArg, RecommendArgs, ReportArgs, ShowArgs, SortArg,
    SummaryArgs, Which,
};
use sshbench::model::Mode;
use sshbench::offer::catalogue::Grade;
use sshbench::store::{self, Store};
use sshbench::views::export::{self, Format, Style};
use sshbench::views::recommend::{self, Goal};
use sshbench::views::scope::Scope;
use sshbench::views::show::{self, ShowOptions, SortKey};
use sshbench::views::{charts, compare as compare_view, html, summary as summary_view};
use std::path::PathBuf;

fn open_existing(db: &Option<PathBuf>) -> Result<Store> {
    let path = db_path(db)?;
    if !path.exists() {
        bail!(
            "no results yet: {} does not exist; measure with `sshbench run` first",
            path.display()
        );
    }
    Store::open(&path)
}

fn check_since(since: &Option<String>) -> Result<()> {
    if let Some(s) = since {
        let ok = s.len() >= 10
            && s.as_bytes()[..10].iter().enumerate().all(|(i, c)| {
                if i == 4 || i == 7 {
                    *c == b'-'
                } else {
                    c.is_ascii_digit()
                }
            })
            && s[10..]
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, 'T' | ':' | '.' | 'Z'));
        if !ok {
            bail!("--since {s:?} is not a date like 2026-11-30 or 2026-11-30T14:00");
        }
    }
    Ok(())
}

/// The stored results a report covers, aggregated per suite.
fn load_scope(
    store: &Store,
    sel: &store::Selection,
) -> Result<(Vec<store::RunRecord>, Vec<analysis::SuiteStats>, String)> {
    let (runs, samples) = store.select(sel)?;
    if runs.is_empty() {
        let all = store.runs()?;
        let known: Vec<String> = all
            .iter()
            .map(|r| r.destination.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        bail!(
            "no stored runs match; destinations with results: {}",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        );
    }
    // Every selected run is of one destination (as stored), unless a single run was
    // asked for, which is of one too.
    let destination = runs
        .last()
        .map(|r| r.destination.clone())
        .unwrap_or_default();
    let stats = analysis::aggregate_reported(samples.iter().map(|s| (&s.sample, s.payload)));
    Ok((runs, stats, destination))
}

/// The stored results a report command covers: its selection, from its database.
fn load_which(which: &Which) -> Result<(Vec<store::RunRecord>, Vec<analysis::SuiteStats>, String)> {
    let sel = selection(which)?;
    let store = open_existing(&which.db)?;
    load_scope(&store, &sel)
}

fn selection(sel: &Which) -> Result<store::Selection> {
    check_since(&sel.since)?;
    Ok(store::Selection {
        destination: sel.destination.clone(),
        run: sel.run,
        since: sel.since.clone(),
    })
}

fn modes_of(m: &[ModeArg]) -> Vec<Mode> {
    m.iter().map(|m| Mode::from(*m)).collect()
}

/// `sshbench show`.
pub fn show(args: ShowArgs) -> Result<u8> {
    let top = match args.top.as_str() {
        "all" => None,
        n => Some(
            n.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| anyhow!("--top {n:?}: give a positive number or `all`"))?,
        ),
    };
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (doc, json) = show::show(
        &scope,
        &ShowOptions {
            chart: args.chart.then(|| args.ascii || !utf8_locale()),
            modes: modes_of(&args.mode),
            top,
            worst: args.worst,
            sort: match args.sort {
                SortArg::Fastest => SortKey::Speed,
                SortArg::Cpu => SortKey::Cpu,
                SortArg::Name => SortKey::Name,
            },
        },
    );
    emit(&doc, &json, args.sel.format)
}

/// `sshbench summary`.
pub fn summary(args: SummaryArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (doc, json) = summary_view::summary(&scope, args.top.max(1));
    emit(&doc, &json, args.sel.format)
}

/// `sshbench recommend`.
pub fn recommend(args: RecommendArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.sel.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let goal = match args.goal {
        GoalArg::Send => Goal::Send,
        GoalArg::Receive => Goal::Receive,
        GoalArg::Connect => Goal::Connect,
        GoalArg::Balanced => Goal::Balanced,
        GoalArg::Interactive => Goal::Interactive,
    };
    let max = match args.allow {
        None => Grade::Acceptable,
        Some(AllowArg::Legacy) => Grade::Legacy,
        Some(AllowArg::Broken) => Grade::Broken,
    };
    let (doc, json) = recommend::recommend(&scope, goal, max);
    emit(&doc, &json, args.sel.format)
}

/// `run:ID` or a destination.
fn compare_side(s: &str) -> Result<store::Selection> {
    Ok(match s.strip_prefix("run:") {
        Some(id) => store::Selection {
            run: Some(
                id.parse()
                    .map_err(|_| anyhow!("{s:?}: run:ID needs a number"))?,
            ),
            ..Default::default()
        },
        None => store::Selection {
            destination: Some(s.to_string()),
            ..Default::default()
        },
    })
}

/// `sshbench compare`.
pub fn compare(args: CompareArgs) -> Result<u8> {
    let store = open_existing(&args.db)?;
    let (ra, sa, da) = load_scope(&store, &compare_side(&args.a)?)?;
    let (rb, sb, db) = load_scope(&store, &compare_side(&args.b)?)?;
    let label = |s: &str, d: String| {
        if s.starts_with("run:") {
            format!("{s} ({d})")
        } else {
            d
        }
    };
    let a = Scope {
        destination: label(&args.a, da),
        runs: &ra,
        stats: sa,
    };
    let b = Scope {
        destination: label(&args.b, db),
        runs: &rb,
        stats: sb,
    };
    let (doc, json) = compare_view::compare(&a, &b);
    emit(&doc, &json, args.format)
}

/// Whether the locale says UTF-8 (for Unicode bars).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| v.to_ascii_uppercase().replace('-', "").contains("UTF8"))
}

/// `sshbench report`.
pub fn report(args: ReportArgs) -> Result<u8> {
    let (runs, stats, destination) = load_which(&args.which)?;
    let scope = Scope {
        destination,
        runs: &runs,
        stats,
    };
    let (rec_doc, _) = recommend::recommend(&scope, Goal::Balanced, Grade::Acceptable);
    let recommendation = export::render(&rec_doc, &(), Format::Table, Style::default());
    let warnings = summary_view::warnings(&scope);
    let (_, all) = show::show(
        &scope,
        &ShowOptions {
            chart: None,
            modes: Mode::ALL.to_vec(),
            top: None,
            worst: false,
            sort: SortKey::Speed,
        },
    );
    let charts = html::charts(&all)?;
    let page = html::render(&scope, &all, &recommendation, &warnings, &charts)?;
    std::fs::write(&args.output, &page)
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "wrote {} ({} KiB)",
        args.output.display(),
        page.len() / 1024
    );
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in &charts {
            let path = dir.join(format!("{}.png", c.name));
            charts::save_png(&c.svg, &path)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(0)
}
