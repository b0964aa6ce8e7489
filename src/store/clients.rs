//! Runs of several clients (`--ssh`) as reports read them: one record per client, a
//! facet, each with that client's version, unforced lists and plan, under a destination
//! of its own (`localhost (ssh OpenSSH_10.0p2)`), and each sample given to its client's
//! facet. Every view then ranks one client's suites as it ranks any run's, and a
//! facet's suites read as any other's (`client` 0).

use super::{RunRecord, StoredSample};
use crate::destination;
use crate::model::{ClientKind, Note};

/// `run` as one record per client; a run of one client (or from before clients were
/// stored) as it is.
pub fn facets(run: RunRecord) -> Vec<RunRecord> {
    if run.clients.is_empty() {
        return vec![run];
    }
    let labels = labels(&run);
    (run.clients.iter().enumerate())
        .map(|(k, side)| {
            let k = k as u8;
            let map = items_of(&run, k);
            let mut f = run.clone();
            f.client = k;
            f.destination = destination::with_client(&run.destination, &labels[usize::from(k)]);
            f.client_version = side.version.clone();
            f.client_defaults = side.defaults.clone();
            f.plan = (run.plan.iter())
                .filter(|p| p.suite.client == k)
                .map(|p| {
                    let mut p = p.clone();
                    p.suite.client = 0;
                    p
                })
                .collect();
            f.stops = (run.stops.iter())
                .filter_map(|&(item, stop)| Some((renumber(&map, item, f.plan.len())?, stop)))
                .collect();
            let (kind, hpn) = (f.client_kind(), f.client_is_hpn());
            f.notes.retain(|n| concerns(n, kind, hpn));
            f
        })
        .collect()
}

/// Whether a note of the run concerns a client of this kind: those on dbclient or on
/// HPN-SSH are that client's alone (notes are stored per run, not per client).
fn concerns(note: &Note, kind: Option<ClientKind>, hpn: bool) -> bool {
    match note {
        Note::DbclientOffersAlone
        | Note::DbclientCheckedByServer
        | Note::DbclientCompressed { .. } => kind == Some(ClientKind::Dropbear),
        Note::HpnOwnConnections => hpn,
        _ => true,
    }
}

/// Each client's words in its facet's destination: its software (`OpenSSH_10.0p2`),
/// numbered where two clients run the same.
fn labels(run: &RunRecord) -> Vec<String> {
    let software: Vec<String> = (run.clients.iter())
        .map(|c| client_software(&c.version))
        .collect();
    (software.iter().enumerate())
        .map(|(k, s)| match software.iter().filter(|o| *o == s).count() {
            1 => s.to_string(),
            _ => format!("{s} #{}", k + 1),
        })
        .collect()
}

/// The first word of `ssh -V` (`OpenSSH_9.2p1` of `OpenSSH_9.2p1 Debian-2, OpenSSL
/// 3.0.17`), with the next where the first has no version (`Dropbear v2022.83`), or
/// `unknown` for anything that is not a short printable name.
pub fn client_software(version: &str) -> String {
    let mut words = version.split_whitespace().map(|w| w.trim_end_matches(','));
    let first = words.next().unwrap_or("");
    // `Dropbear v2022.83`: its version is a word of its own.
    let word = match words.next() {
        Some(v) if !first.contains(|c: char| c.is_ascii_digit()) => format!("{first} {v}"),
        _ => first.to_string(),
    };
    let ok = !word.is_empty()
        && word.len() <= 40
        && word.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    if ok { word } else { "unknown".into() }
}

/// For each item of the run's plan, its index in client `k`'s facet.
fn items_of(run: &RunRecord, k: u8) -> Vec<Option<usize>> {
    let mut next = 0;
    (run.plan.iter())
        .map(|p| {
            (p.suite.client == k).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// An item's index in a facet: a planned item's place among its client's, an item past
/// the plan (a summed pair measured as such) as far past the facet's plan.
fn renumber(map: &[Option<usize>], item: usize, planned: usize) -> Option<usize> {
    match map.get(item) {
        Some(at) => *at,
        None => Some(item - map.len() + planned),
    }
}

/// A facet's numbering of its run's items, and its own plan's length.
type Renumbering = (Vec<Option<usize>>, usize);

/// Give each sample of `runs` (as stored) to its client's facet among `chosen`,
/// numbered as the facet numbers its items; samples of a facet not chosen are dropped.
pub fn assign(
    runs: &[RunRecord],
    chosen: &[RunRecord],
    samples: Vec<StoredSample>,
) -> Vec<StoredSample> {
    let several: Vec<&RunRecord> = runs.iter().filter(|r| !r.clients.is_empty()).collect();
    if several.is_empty() {
        return samples;
    }
    // Per run of several clients and client: where its items go, and its plan's length.
    let mut maps: std::collections::HashMap<(i64, u8), Renumbering> =
        std::collections::HashMap::new();
    for f in chosen {
        if let Some(run) = several.iter().find(|r| r.id == f.id) {
            maps.insert((f.id, f.client), (items_of(run, f.client), f.plan.len()));
        }
    }
    let of_several = |id: i64| several.iter().any(|r| r.id == id);
    (samples.into_iter())
        .filter_map(|mut s| {
            if !of_several(s.run_id) {
                return Some(s);
            }
            let client = s.sample.suite.client;
            let (map, planned) = maps.get(&(s.run_id, client))?;
            s.item = renumber(map, s.item, *planned)?;
            s.client = client;
            s.sample.suite.client = 0;
            Some(s)
        })
        .collect()
}

/// Selected results one destination at a time, in the order first met: a run of
/// several clients gives a group per client, each with its samples.
pub fn groups(
    runs: Vec<RunRecord>,
    samples: Vec<StoredSample>,
) -> Vec<(Vec<RunRecord>, Vec<StoredSample>)> {
    let mut out: Vec<(Vec<RunRecord>, Vec<StoredSample>)> = Vec::new();
    for r in runs {
        match out
            .iter_mut()
            .find(|(g, _)| g[0].destination == r.destination)
        {
            Some((g, _)) => g.push(r),
            None => out.push((vec![r], Vec::new())),
        }
    }
    if out.len() == 1 {
        out[0].1 = samples;
        return out;
    }
    for s in samples {
        let of = |g: &[RunRecord]| g.iter().any(|r| r.id == s.run_id && r.client == s.client);
        if let Some((_, own)) = out.iter_mut().find(|(g, _)| of(g)) {
            own.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{ClientSide, Selection, Store};
    use crate::model::{Mode, Note, Outcome, Sample, Stop, StopReason, Suite};
    use crate::plan::PlanItem;
    use crate::sys::machine::Machine;

    fn item(cipher: &str, client: u8) -> PlanItem {
        PlanItem {
            mode: Mode::Send,
            suite: Suite {
                cipher: Some(cipher.into()),
                client,
                ..Suite::default()
            },
        }
    }

    fn side(version: &str) -> ClientSide {
        ClientSide {
            version: version.into(),
            ..ClientSide::default()
        }
    }

    /// A stored run of two clients, its items interleaved in the plan.
    fn two_clients(versions: [&str; 2]) -> (tempfile::TempDir, Store, i64) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let machine = Machine::default();
        let plan = [item("a", 0), item("a", 1), item("b", 1), item("b", 0)];
        let id = (store.create_run(&super::super::tests::new_run(&machine, &plan))).unwrap();
        store.set_clients(id, &versions.map(side)).unwrap();
        let stop = Stop {
            reason: StopReason::Dropped,
            round: 3,
        };
        store.set_stops(id, &[(2, stop), (3, stop)]).unwrap();
        for (at, p) in plan.iter().enumerate() {
            let s = Sample::new(p.suite.clone(), Mode::Send, Outcome::Success);
            store.add_sample(id, at, 1, &s).unwrap();
        }
        (dir, store, id)
    }

    /// Each facet has its client's version, items and stops under its own destination,
    /// and its own samples, read as any run's (client 0).
    #[test]
    fn a_run_of_two_clients_reads_as_one_record_each() {
        let (_dir, store, _) = two_clients(["OpenSSH_9.2p1 Debian-2, OpenSSL 3", "OpenSSH_10.0p2"]);
        let (runs, samples) = store.select(&Selection::default()).unwrap();
        let names: Vec<&str> = runs.iter().map(|f| f.destination.as_str()).collect();
        assert_eq!(
            names,
            [
                "local sandbox (ssh OpenSSH_9.2p1)",
                "local sandbox (ssh OpenSSH_10.0p2)"
            ]
        );
        assert_eq!(runs[1].client_version, "OpenSSH_10.0p2");
        assert_eq!((runs[0].plan.len(), runs[1].plan.len()), (2, 2));
        assert!(
            runs.iter()
                .flat_map(|f| &f.plan)
                .all(|p| p.suite.client == 0)
        );
        // Item 2 is client 1's second, item 3 client 0's second.
        let stops = |f: usize| runs[f].stops.iter().map(|s| s.0).collect::<Vec<_>>();
        assert_eq!((stops(0), stops(1)), (vec![1], vec![1]));
        let seen: Vec<(u8, usize, u8, Option<&str>)> = (samples.iter())
            .map(|s| {
                (
                    s.client,
                    s.item,
                    s.sample.suite.client,
                    s.sample.suite.cipher.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (0, 0, 0, Some("a")),
                (1, 0, 0, Some("a")),
                (1, 1, 0, Some("b")),
                (0, 1, 0, Some("b"))
            ]
        );
        let groups = super::groups(runs, samples);
        assert_eq!(groups.len(), 2);
        assert!(groups[1].1.iter().all(|s| s.client == 1));
        assert_eq!((groups[0].1.len(), groups[1].1.len()), (2, 2));
        // One client by its destination, or by its number in the run.
        let named = Selection {
            destination: Some("local sandbox (ssh OpenSSH_10.0p2)".into()),
            ..Selection::default()
        };
        let (runs, samples) = store.select(&named).unwrap();
        assert_eq!((runs.len(), samples.len()), (1, 2));
        let numbered = Selection {
            run: Some(runs[0].id),
            client: Some(1),
            ..Selection::default()
        };
        let (again, _) = store.select(&numbered).unwrap();
        assert_eq!(again[0].destination, runs[0].destination);
    }

    /// A note on dbclient or on HPN-SSH is shown with that client's facet alone.
    #[test]
    fn a_note_on_one_kind_of_client_stays_with_it() {
        let (_dir, store, id) = two_clients(["OpenSSH_10.2p1_hpn18.8.0", "Dropbear v2022.83"]);
        let notes = [
            Note::OneSessionPerConnection,
            Note::HpnOwnConnections,
            Note::DbclientCompressed {
                compression: "zlib@openssh.com".into(),
            },
        ];
        store.add_notes(id, &notes).unwrap();
        let (runs, _) = store.select(&Selection::default()).unwrap();
        assert_eq!(runs[0].notes, notes[..2]);
        assert_eq!(runs[1].notes, [notes[0].clone(), notes[2].clone()]);
    }

    #[test]
    fn two_clients_of_one_software_are_numbered() {
        let (_dir, store, _) = two_clients(["OpenSSH_9.2p1", "OpenSSH_9.2p1"]);
        let (runs, _) = store.select(&Selection::default()).unwrap();
        let names: Vec<&str> = runs.iter().map(|f| f.destination.as_str()).collect();
        assert!(names[0].ends_with("(ssh OpenSSH_9.2p1 #1)"), "{names:?}");
        assert!(names[1].ends_with("(ssh OpenSSH_9.2p1 #2)"), "{names:?}");
    }
}
