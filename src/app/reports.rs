//! The report commands over stored results: `show`, `summary`, `recommend`, `compare`
//! and `report`.

use super::{emit, open_existing};
use anyhow::{Context, Result, bail};
use sshbench::cli::reports as args;
use sshbench::cli::{CompareArgs, RecommendArgs, ReportArgs, SelectionArgs, ShowArgs, SummaryArgs};
use sshbench::model::Mode;
use sshbench::offer::catalogue::Grade;
use sshbench::store::{RunRecord, Selection, Store, StoredSample};
use sshbench::views::export::{self, Format, Style};
use sshbench::views::fleet as fleet_view;
use sshbench::views::recommend::{self, Goal, Order};
use sshbench::views::scope::Scope;
use sshbench::views::show::{self, ShowOptions, SortKey};
use sshbench::views::{charts, compare as compare_view, html, summary as summary_view};

const MEASURE_FIRST: &str = "measure with `sshbench run` first";

/// The stored results a report covers: its runs and their samples.
struct Loaded {
    runs: Vec<RunRecord>,
    samples: Vec<StoredSample>,
}

impl Loaded {
    fn scope(&self) -> Scope<'_> {
        Scope::build(&self.runs, &self.samples)
    }
}

fn load(store: &Store, sel: &Selection) -> Result<Loaded> {
    let (runs, samples) = store.select(sel)?;
    if runs.is_empty() {
        let known: std::collections::BTreeSet<String> =
            store.runs()?.into_iter().map(|r| r.destination).collect();
        let known: Vec<String> = known.into_iter().collect();
        bail!(
            "no stored runs match; destinations with results: {}",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        );
    }
    Ok(Loaded { runs, samples })
}

/// The stored results a report command covers: its selection, from its database.
fn load_selected(selection: &SelectionArgs) -> Result<Loaded> {
    let sel = args::selection(selection)?;
    load(&open_existing(&selection.db, MEASURE_FIRST)?, &sel)
}

/// A fleet view's hosts: each destination's runs and samples.
struct Fleet {
    hosts: Vec<Loaded>,
}

impl Fleet {
    fn scopes(&self) -> Vec<Scope<'_>> {
        self.hosts.iter().map(Loaded::scope).collect()
    }
}

/// The hosts a fleet view (`--fleet`, `--hosts`) covers; `None` for a one-host view.
fn load_fleet(selection: &SelectionArgs) -> Result<Option<Fleet>> {
    let text = match &selection.hosts {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("reading the hosts file {}", p.display()))?,
        ),
        None => None,
    };
    let Some((hosts, since)) = args::fleet(selection, text.as_deref())? else {
        return Ok(None);
    };
    let store = open_existing(&selection.db, MEASURE_FIRST)?;
    let (runs, samples) = store.select_many(&|d| hosts.covers(d), since.as_deref())?;
    let mut names: Vec<String> = runs.iter().map(|r| r.destination.clone()).collect();
    names.sort();
    names.dedup();
    if let args::Hosts::Listed(listed) = &hosts {
        let missing: Vec<&String> = listed.iter().filter(|h| !names.contains(h)).collect();
        if !missing.is_empty() {
            let m: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            eprintln!("note: no stored results for {}", m.join(", "));
        }
        names = listed
            .iter()
            .filter(|h| names.contains(h))
            .cloned()
            .collect();
    }
    if names.is_empty() {
        bail!("no stored runs of these hosts; `sshbench runs` lists what is stored");
    }
    let at: std::collections::HashMap<i64, usize> = (runs.iter())
        .map(|r| {
            (
                r.id,
                names.iter().position(|n| *n == r.destination).unwrap_or(0),
            )
        })
        .collect();
    let mut hosts: Vec<Loaded> = names
        .iter()
        .map(|_| Loaded {
            runs: Vec::new(),
            samples: Vec::new(),
        })
        .collect();
    for r in runs {
        hosts[at[&r.id]].runs.push(r);
    }
    for s in samples {
        hosts[at[&s.run_id]].samples.push(s);
    }
    // A host that was never measured (its login refused, say) has nothing to compare.
    let (hosts, empty): (Vec<Loaded>, Vec<Loaded>) =
        hosts.into_iter().partition(|h| !h.samples.is_empty());
    if !empty.is_empty() {
        let names: Vec<&str> = empty
            .iter()
            .filter_map(|h| h.runs.first())
            .map(|r| r.destination.as_str())
            .collect();
        eprintln!("note: no counted samples of {}", names.join(", "));
    }
    if hosts.is_empty() {
        bail!("no counted samples of these hosts yet");
    }
    Ok(Some(Fleet { hosts }))
}

/// Whether the locale says UTF-8 (for Unicode bars).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| v.to_ascii_uppercase().replace('-', "").contains("UTF8"))
}

/// `sshbench show`.
pub fn show(a: ShowArgs) -> Result<u8> {
    let opts = args::show_options(&a, utf8_locale())?;
    if let Some(fleet) = load_fleet(&a.view.selection)? {
        let view = fleet_view::table::build(&fleet.scopes());
        let doc = fleet_view::table::render(&view, opts.top);
        return emit(&doc, &view, a.view.format);
    }
    let loaded = load_selected(&a.view.selection)?;
    let (doc, view) = show::show(&loaded.scope(), &opts);
    emit(&doc, &view, a.view.format)
}

/// `sshbench summary`.
pub fn summary(a: SummaryArgs) -> Result<u8> {
    if let Some(fleet) = load_fleet(&a.view.selection)? {
        let view = fleet_view::table::build(&fleet.scopes());
        let doc = fleet_view::table::render(&view, Some(a.top.max(1)));
        return emit(&doc, &view, a.view.format);
    }
    let loaded = load_selected(&a.view.selection)?;
    let (doc, view) = summary_view::summary(&loaded.scope(), a.top.max(1));
    emit(&doc, &view, a.view.format)
}

/// `sshbench recommend`.
pub fn recommend(a: RecommendArgs) -> Result<u8> {
    let (goal, allowed, order) = (
        args::goal(a.goal),
        args::allowed(a.allow),
        args::order(a.order),
    );
    if let Some(fleet) = load_fleet(&a.view.selection)? {
        let (doc, view) =
            fleet_view::recommend::recommend(&fleet.scopes(), None, goal, allowed, order);
        return emit(&doc, &view, a.view.format);
    }
    let loaded = load_selected(&a.view.selection)?;
    let (doc, view) = recommend::recommend(
        &loaded.scope(),
        args::goal(a.goal),
        args::allowed(a.allow),
        args::order(a.order),
    );
    emit(&doc, &view, a.view.format)
}

/// `sshbench compare`.
pub fn compare(a: CompareArgs) -> Result<u8> {
    let (sel_a, sel_b) = (args::compare_side(&a.a)?, args::compare_side(&a.b)?);
    let store = open_existing(&a.db, MEASURE_FIRST)?;
    let (la, lb) = (load(&store, &sel_a)?, load(&store, &sel_b)?);
    let (mut sa, mut sb) = (la.scope(), lb.scope());
    // A run is named with its destination.
    for (given, s) in [(&a.a, &mut sa), (&a.b, &mut sb)] {
        if given.starts_with("run:") {
            s.destination = format!("{given} ({})", s.destination);
        }
    }
    let (doc, view) = compare_view::compare(&sa, &sb);
    emit(&doc, &view, a.format)
}

/// `sshbench report`: the page, and with `--png` its charts as pictures.
pub fn report(a: ReportArgs) -> Result<u8> {
    if let Some(fleet) = load_fleet(&a.selection)? {
        let scopes = fleet.scopes();
        let view = fleet_view::table::build(&scopes);
        let (rec, _) = fleet_view::recommend::recommend(
            &scopes,
            None,
            Goal::Balanced,
            Grade::Acceptable,
            Order::Grade,
        );
        let text = export::render(&rec, &(), Format::Table, Style::default());
        let page = fleet_view::heat::render(&view, &scopes, &text)?;
        std::fs::write(&a.output, &page)
            .with_context(|| format!("writing {}", a.output.display()))?;
        eprintln!("wrote {} ({} KiB)", a.output.display(), page.len() / 1024);
        return Ok(0);
    }
    let loaded = load_selected(&a.selection)?;
    let scope = loaded.scope();
    let (rec_doc, _) =
        recommend::recommend(&scope, Goal::Balanced, Grade::Acceptable, Order::Grade);
    let recommendation = export::render(&rec_doc, &(), Format::Table, Style::default());
    let every_suite = ShowOptions {
        chart: None,
        modes: Mode::ALL.to_vec(),
        top: None,
        worst: false,
        sort: SortKey::Speed,
    };
    let (_, all) = show::show(&scope, &every_suite);
    let charts = html::charts(&all)?;
    let warnings = summary_view::warnings(&scope);
    let page = html::render(&scope, &all, &recommendation, &warnings, &charts)?;
    std::fs::write(&a.output, &page).with_context(|| format!("writing {}", a.output.display()))?;
    eprintln!("wrote {} ({} KiB)", a.output.display(), page.len() / 1024);
    if let Some(dir) = &a.png {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in &charts {
            let path = dir.join(format!("{}.png", c.name));
            charts::save_png(&c.svg, &path)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(0)
}
