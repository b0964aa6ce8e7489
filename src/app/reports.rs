//! The report commands over stored results: `show`, `summary`, `recommend`, `compare`
//! and `report`.

use super::{emit, fleet_reports as fleet, open_existing};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use sshbench::cli::FormatArg;
use sshbench::cli::reports as args;
use sshbench::cli::{
    CompareArgs, RecommendArgs, ReportArgs, SelectionArgs, ShowArgs, SummaryArgs, Usage,
};
use sshbench::model::Mode;
use sshbench::offer::catalogue::Grade;
use sshbench::store::{RunRecord, Selection, Store, StoredSample, clients};
use sshbench::views::clients as clients_view;
use sshbench::views::export::{self, Document, Format, Style};
use sshbench::views::fleet as fleet_view;
use sshbench::views::recommend::{self, Goal, Order};
use sshbench::views::scope::Scope;
use sshbench::views::show::{self, ShowOptions, SortKey};
use sshbench::views::{charts, compare as compare_view, html, summary as summary_view};

pub(super) const MEASURE_FIRST: &str = "measure with `sshbench run` first";

/// The stored results a report covers: its runs and their samples.
struct Loaded {
    runs: Vec<RunRecord>,
    samples: Vec<StoredSample>,
}

impl Loaded {
    fn scope(&self) -> Scope<'_> {
        Scope::build(&self.runs, &self.samples)
    }

    /// Its results one destination at a time: a run of several clients (`--ssh`) gives
    /// one per client.
    fn groups(self) -> Vec<Loaded> {
        (clients::groups(self.runs, self.samples).into_iter())
            .map(|(runs, samples)| Loaded { runs, samples })
            .collect()
    }
}

/// A view of each group of results, one after the other; after several (the clients
/// of a run of several) which client is fastest, where `fastest` asks for it. One group
/// is emitted as it always was.
fn emit_each<V: Serialize>(
    groups: &[Loaded],
    view: impl Fn(&Scope) -> (Document, V),
    fastest: bool,
    format: FormatArg,
    wide: bool,
) -> Result<u8> {
    if let [one] = groups {
        let (doc, v) = view(&one.scope());
        return emit(&doc, &v, format, wide);
    }
    let scopes: Vec<Scope> = groups.iter().map(Loaded::scope).collect();
    let (mut doc, mut each) = (Document::default(), Vec::new());
    for s in &scopes {
        let (d, v) = view(s);
        doc.blocks.extend(d.blocks);
        each.push(v);
    }
    let clients = fastest.then(|| clients_view::view(&scopes));
    if let Some(c) = &clients {
        doc.blocks.extend(clients_view::render(c).blocks);
    }
    #[derive(Serialize)]
    struct Each<V> {
        each: Vec<V>,
        #[serde(skip_serializing_if = "Option::is_none")]
        clients: Option<clients_view::ClientsView>,
    }
    emit(&doc, &Each { each, clients }, format, wide)
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
    let sel = args::selection(selection).map_err(Usage)?;
    load(&open_existing(&selection.db.path, MEASURE_FIRST)?, &sel)
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
    if let Some(hosts) = fleet::load(&a.view.selection, None)? {
        let view = fleet_view::table::build(&hosts);
        let doc = fleet_view::table::render(&view, opts.top);
        return emit(&doc, &view, a.view.format, a.view.wide);
    }
    let groups = load_selected(&a.view.selection)?.groups();
    let view = |s: &Scope| show::show(s, &opts);
    emit_each(&groups, view, true, a.view.format, a.view.wide)
}

/// `sshbench summary`.
pub fn summary(a: SummaryArgs) -> Result<u8> {
    if let Some(hosts) = fleet::load(&a.view.selection, None)? {
        let view = fleet_view::table::build(&hosts);
        let doc = fleet_view::table::render(&view, Some(a.top.max(1)));
        return emit(&doc, &view, a.view.format, a.view.wide);
    }
    let groups = load_selected(&a.view.selection)?.groups();
    let tops = summary_view::TopLists {
        n: a.top.max(1),
        all_grades: a.all_grades,
    };
    let view = |s: &Scope| summary_view::summary(s, tops);
    emit_each(&groups, view, true, a.view.format, a.view.wide)
}

/// `sshbench recommend`.
pub fn recommend(a: RecommendArgs) -> Result<u8> {
    let (goal, allowed, order) = (
        args::goal(a.goal),
        args::allowed(a.allow),
        args::order(a.order),
    );
    if let Some(hosts) = fleet::load(&a.view.selection, Some((goal, allowed, order)))? {
        let (doc, view) = fleet_view::recommend::recommend(&hosts, None, order);
        return emit(&doc, &view, a.view.format, a.view.wide);
    }
    let groups = load_selected(&a.view.selection)?.groups();
    let view = |s: &Scope| recommend::recommend(s, goal, allowed, order);
    emit_each(&groups, view, false, a.view.format, a.view.wide)
}

/// `sshbench compare`.
pub fn compare(a: CompareArgs) -> Result<u8> {
    let side = |s: &str| args::compare_side(s).map_err(Usage);
    let (sel_a, sel_b) = (side(&a.a)?, side(&a.b)?);
    let store = open_existing(&a.db.path, MEASURE_FIRST)?;
    let (la, lb) = (
        one_group(load(&store, &sel_a)?, &a.a)?,
        one_group(load(&store, &sel_b)?, &a.b)?,
    );
    let (mut sa, mut sb) = (la.scope(), lb.scope());
    // A run is named with its destination.
    for (given, s) in [(&a.a, &mut sa), (&a.b, &mut sb)] {
        if given.starts_with("run:") {
            s.destination = format!("{given} ({})", s.destination);
        }
    }
    let (doc, view) = compare_view::compare(&sa, &sb);
    emit(&doc, &view, a.format, a.wide)
}

/// A compared side's results, which must be of one destination: a run of several
/// clients is named one client at a time.
fn one_group(loaded: Loaded, given: &str) -> Result<Loaded> {
    let mut groups = loaded.groups();
    if groups.len() == 1 {
        return Ok(groups.remove(0));
    }
    let names: Vec<String> = (groups.iter())
        .map(|g| format!("{:?}", g.runs[0].destination))
        .collect();
    let numbered = if given.starts_with("run:") {
        format!(" or {given}/N for its Nth client")
    } else {
        String::new()
    };
    Err(Usage(anyhow::anyhow!(
        "{given:?} holds the results of {} clients; compare one of them: {}{numbered}",
        groups.len(),
        names.join(", ")
    ))
    .into())
}

/// `sshbench report`: the page, and with `--png` its charts as pictures.
pub fn report(a: ReportArgs) -> Result<u8> {
    let rec = (Goal::Balanced, Grade::Acceptable, Order::Grade);
    if let Some(hosts) = fleet::load(&a.selection, Some(rec))? {
        let view = fleet_view::table::build(&hosts);
        let (rec, _) = fleet_view::recommend::recommend(&hosts, None, Order::Grade);
        let text = export::render(&rec, &(), Format::Table, Style::default());
        let page = fleet_view::heat::render(&view, &hosts, &text)?;
        std::fs::write(&a.output, &page)
            .with_context(|| format!("writing {}", a.output.display()))?;
        say_err!("wrote {} ({} KiB)", a.output.display(), page.len() / 1024);
        return Ok(0);
    }
    let given = a
        .selection
        .destination
        .as_deref()
        .unwrap_or("the newest run");
    let loaded = one_group(load_selected(&a.selection)?, given)?;
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
        all_grades: true,
    };
    let (_, all) = show::show(&scope, &every_suite);
    let charts = html::charts(&all)?;
    // The summary's sentences and warnings, ranked once.
    let best = summary_view::TopLists {
        n: 1,
        all_grades: false,
    };
    let summary = summary_view::view(&scope, best);
    let why: Vec<String> = summary
        .sections
        .iter()
        .flat_map(summary_view::why)
        .collect();
    let said = html::Said {
        recommendation: &recommendation,
        why: &why,
        warnings: &summary.warnings,
    };
    let page = html::render(&scope, &all, &said, &charts)?;
    std::fs::write(&a.output, &page).with_context(|| format!("writing {}", a.output.display()))?;
    say_err!("wrote {} ({} KiB)", a.output.display(), page.len() / 1024);
    if let Some(dir) = &a.png {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in &charts {
            let path = dir.join(format!("{}.png", c.name));
            charts::save_png(&c.svg, &path)?;
            say_err!("wrote {}", path.display());
        }
    }
    Ok(0)
}
