//! Which measurements to take: suites built from the negotiable offer and the filters.
//!
//! Only measurements that can differ are planned: `connect` varies key exchange × host
//! key algorithm (host keys only where they can be verified), `send`/`receive`/`echo`
//! vary cipher × MAC with each AEAD cipher measured once (its MAC is implicit), and an
//! alias (`curve25519-sha256@libssh.org`) is not measured again beside its canonical
//! name. Both products are factorized: each name beside one reference of the other kind,
//! the other pairs being sums (`analysis::sums`); `pairs` measures every pair, and `full`
//! gives the classic scripts' whole product (key exchange × cipher × MAC for transfers
//! too, AEAD ciphers with every MAC).

pub mod filter;

use crate::model::{
    AlgoKind, AlgoLists, ClientKind, ExecVia, FilterSpec, Filters, KeystrokeTiming, Mode, Shape,
    Suite, Tool, WorkloadSpec,
};
use crate::offer::catalogue;
use crate::offer::client::ClientOffer;
use anyhow::{Result, bail};

/// One planned measurement.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlanItem {
    pub mode: Mode,
    pub suite: Suite,
}

/// The measurements, and what was left out and why.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub items: Vec<PlanItem>,
    /// What planning decided that the user hears before the run (`views::plan` words
    /// them): names the server refuses, aliases folded, the pairs left to sums.
    pub notes: Vec<PlanNote>,
}

/// One decision of planning worth telling.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanNote {
    /// Names of `kind` the client would use that the server does not offer.
    NotOffered { kind: AlgoKind, names: Vec<String> },
    /// Names that are aliases of others, measured once.
    Aliases { names: Vec<String> },
    /// A factorized design: the other pairs are sums of their parts.
    Factorized(Factorized),
    /// The workload modes of one shape, and the data each of their samples moves.
    Workload {
        modes: Vec<Mode>,
        shape: Shape,
        spec: WorkloadSpec,
    },
}

/// Each name of the first kind measured beside the second kind's reference, and each
/// of the second beside the first's; the reference pair `replicas` times a round.
#[derive(Clone, Debug, PartialEq)]
pub struct Factorized {
    pub modes: Vec<Mode>,
    pub first: Varied,
    pub second: Varied,
    pub replicas: usize,
    /// Pairs not measured: sums of their parts.
    pub sums: usize,
}

/// How many names of `kind` a factorized design varies, and its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Varied {
    pub kind: AlgoKind,
    pub count: usize,
    pub reference: String,
}

impl Varied {
    pub fn of(kind: AlgoKind, count: usize, reference: String) -> Varied {
        Varied {
            kind,
            count,
            reference,
        }
    }
}

/// Inputs of planning.
pub struct PlanInput<'a> {
    pub client: &'a ClientOffer,
    /// What the server offers, when known.
    pub server: Option<&'a AlgoLists>,
    pub filters: &'a Filters,
    pub modes: &'a [Mode],
    /// Vary host key algorithms in `connect` (only where every host key is pinned, as
    /// in the sandbox: elsewhere a host key of another type fails verification).
    pub vary_hostkeys: bool,
    /// The whole cartesian product, as classic benchmark scripts measure it.
    pub full: bool,
    /// Every pair measured (key exchange × host key, cipher × MAC), no sums.
    pub pairs: bool,
    /// Measure every transfer suite a second time with zlib compression.
    pub compression: bool,
    /// The workloads' tool option variants.
    pub workload: &'a WorkloadSpec,
}

/// The names of one kind to measure: filter(client) ∩ server, aliases folded.
fn select(input: &PlanInput, kind: AlgoKind, notes: &mut Vec<PlanNote>) -> Result<Vec<String>> {
    let client = input.client.lists.get(kind);
    let filter = input.filters.get(kind);
    let mut names: Vec<String> = match (filter, client) {
        (Some(spec), Some(known)) => filter::apply(spec, known, kind.label())?,
        (Some(FilterSpec::Only(names)), None) => names.clone(),
        (Some(_), None) | (None, None) => bail!(
            "this ssh client cannot list its {} algorithms (ssh -Q); name them exactly with a filter",
            kind.label()
        ),
        (None, Some(known)) => known.to_vec(),
    };
    if let Some(server) = input.server.and_then(|s| s.get(kind)) {
        // A client's own implementation of a name is offered as that name.
        let offered = |n: &String| server.iter().any(|s| s == catalogue::on_wire(kind, n));
        let refused: Vec<&String> = names.iter().filter(|n| !offered(n)).collect();
        if !refused.is_empty() && filter.is_some() {
            notes.push(PlanNote::NotOffered {
                kind,
                names: refused.iter().map(|n| n.to_string()).collect(),
            });
        }
        names.retain(offered);
    }
    let all = names.clone();
    names.retain(|n| {
        let canon = catalogue::canonical(kind, n);
        canon == n || !all.iter().any(|m| m == canon)
    });
    if names.len() < all.len() {
        let folded: Vec<&String> = all.iter().filter(|n| !names.contains(n)).collect();
        notes.push(PlanNote::Aliases {
            names: folded.iter().map(|n| n.to_string()).collect(),
        });
    }
    if names.is_empty() {
        bail!(
            "no {} algorithm is both supported by this client and offered by the server{}",
            kind.label(),
            if filter.is_some() {
                " among the names given"
            } else {
                ""
            }
        );
    }
    Ok(names)
}

/// The pair the others are measured against: the key exchange and host key most ssh
/// clients pick first, where they are in the list.
const REFERENCE_KEX: &str = "curve25519-sha256";
const REFERENCE_HOSTKEY: &str = "ssh-ed25519";

/// Samples of the reference pair per round in a factorized design: its figure enters
/// every sum, so its noise would be every sum's bias; measured this many times as often
/// as each other pair (about the square root of the names compared with it, Dunnett's
/// allocation for comparisons with one control, for a dozen or two).
pub const REFERENCE_REPLICAS: usize = 3;

/// `items` with its reference pair `at` measured [`REFERENCE_REPLICAS`] times a round:
/// the replicas are items of their own (each its own slot and connection), pooled in
/// every report.
fn replicate<T: Clone>(mut items: Vec<T>, at: usize) -> Vec<T> {
    let reference = items[at].clone();
    items.extend(std::iter::repeat_n(reference, REFERENCE_REPLICAS - 1));
    items
}

fn reference(names: &[String], preferred: &str) -> String {
    names
        .iter()
        .find(|n| *n == preferred)
        .unwrap_or(&names[0])
        .clone()
}

/// Connect items: key exchanges, and host key algorithms where every one is known to
/// verify (the sandbox, or when asked for). A connection costs its key exchange's work
/// plus its host key's plus a constant, so by default each key exchange is measured with
/// one host key and each host key with one key exchange, and the other pairs are sums
/// (`analysis::sums`); `full` measures every pair.
fn connect_items(input: &PlanInput, notes: &mut Vec<PlanNote>) -> Result<Vec<PlanItem>> {
    // A client that chooses no key exchange or host key (dbclient) connects once per
    // cipher: its connections differ by nothing else it can choose.
    if input.client.kind == ClientKind::Dropbear {
        let ciphers = select(input, AlgoKind::Cipher, notes)?;
        let item = |c: &String| PlanItem {
            mode: Mode::Connect,
            suite: Suite {
                cipher: Some(c.clone()),
                ..Suite::default()
            },
        };
        return Ok(ciphers.iter().map(item).collect());
    }
    let kexes = select(input, AlgoKind::Kex, notes)?;
    let vary = input.vary_hostkeys || input.filters.get(AlgoKind::HostKey).is_some();
    let hostkeys = if vary {
        select(input, AlgoKind::HostKey, notes)?
    } else {
        Vec::new()
    };
    let item = |kex: &String, hk: Option<&String>| PlanItem {
        mode: Mode::Connect,
        suite: Suite {
            kex: Some(kex.clone()),
            hostkey: hk.cloned(),
            ..Suite::default()
        },
    };
    if hostkeys.is_empty() {
        return Ok(kexes.iter().map(|k| item(k, None)).collect());
    }
    if input.full || input.pairs || kexes.len() == 1 || hostkeys.len() == 1 {
        let pairs = kexes
            .iter()
            .flat_map(|k| hostkeys.iter().map(move |h| (k, h)));
        return Ok(pairs.map(|(k, h)| item(k, Some(h))).collect());
    }
    let (kref, href) = (
        reference(&kexes, REFERENCE_KEX),
        reference(&hostkeys, REFERENCE_HOSTKEY),
    );
    let mut items: Vec<PlanItem> = kexes.iter().map(|k| item(k, Some(&href))).collect();
    items.extend(
        hostkeys
            .iter()
            .filter(|h| **h != href)
            .map(|h| item(&kref, Some(h))),
    );
    notes.push(PlanNote::Factorized(Factorized {
        modes: vec![Mode::Connect],
        first: Varied::of(AlgoKind::Kex, kexes.len(), kref.clone()),
        second: Varied::of(AlgoKind::HostKey, hostkeys.len(), href.clone()),
        replicas: REFERENCE_REPLICAS,
        sums: kexes.len() * hostkeys.len() - items.len(),
    }));
    let at = (items.iter())
        .position(|i| i.suite.kex.as_ref() == Some(&kref))
        .expect("the reference key exchange is measured");
    Ok(replicate(items, at))
}

/// The cipher and MAC the other names are measured beside in a factorized design: the
/// most common ones, where the lists have them.
const REFERENCE_CIPHER: &str = "aes128-ctr";
const REFERENCE_MACS: [&str; 2] = ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-256"];

/// The cipher × MAC pairs of one key exchange (`None` unless `--full`): every pair, each
/// AEAD cipher once; or, factorized (the default, with two or more ciphers that take a
/// MAC and two or more MACs), each cipher beside one reference MAC and each MAC beside
/// one reference cipher, the other pairs being sums of their parts (`analysis::sums`).
fn pairs_of(
    input: &PlanInput,
    ciphers: &[String],
    macs: &[String],
    kex: &Option<String>,
    modes: &[Mode],
) -> (Vec<Suite>, Option<PlanNote>) {
    let suite = |c: &String, m: Option<&String>| Suite {
        kex: kex.clone(),
        cipher: Some(c.clone()),
        mac: m.cloned(),
        ..Suite::default()
    };
    let plain: Vec<String> = (ciphers.iter())
        .filter(|c| input.full || !input.client.is_aead(c))
        .cloned()
        .collect();
    let every = |c: &String| -> Vec<Option<&String>> {
        if input.client.is_aead(c) && !input.full {
            vec![None]
        } else {
            macs.iter().map(Some).collect()
        }
    };
    if input.full || input.pairs || plain.len() < 2 || macs.len() < 2 {
        let all = ciphers
            .iter()
            .flat_map(|c| every(c).into_iter().map(move |m| suite(c, m)));
        return (all.collect(), None);
    }
    let cref = reference(&plain, REFERENCE_CIPHER);
    let mref = (REFERENCE_MACS.iter())
        .find_map(|p| macs.iter().find(|m| m == p))
        .unwrap_or(&macs[0])
        .clone();
    let mut out: Vec<Suite> = (ciphers.iter())
        .map(|c| suite(c, (!input.client.is_aead(c)).then_some(&mref)))
        .collect();
    out.extend(
        macs.iter()
            .filter(|m| **m != mref)
            .map(|m| suite(&cref, Some(m))),
    );
    let at = (out.iter())
        .position(|s| s.cipher.as_ref() == Some(&cref))
        .expect("the reference cipher is measured");
    let out = replicate(out, at);
    let note = PlanNote::Factorized(Factorized {
        modes: modes.to_vec(),
        first: Varied::of(AlgoKind::Cipher, plain.len(), cref),
        second: Varied::of(AlgoKind::Mac, macs.len(), mref),
        replicas: REFERENCE_REPLICAS,
        sums: plain.len() * macs.len() - plain.len() - macs.len() + 1,
    });
    (out, Some(note))
}

/// The session suites: cipher × MAC (see [`pairs_of`]; with `--full`, with every MAC
/// and every key exchange, as the classic scripts' whole product), and with
/// `--compression` each again with zlib.
fn session_suites(
    input: &PlanInput,
    modes: &[Mode],
    notes: &mut Vec<PlanNote>,
) -> Result<Vec<Suite>> {
    let ciphers = select(input, AlgoKind::Cipher, notes)?;
    let needs_mac = input.full || ciphers.iter().any(|c| !input.client.is_aead(c));
    let macs = if needs_mac {
        select(input, AlgoKind::Mac, notes)?
    } else {
        Vec::new()
    };
    let kexes: Vec<Option<String>> = if input.full {
        select(input, AlgoKind::Kex, notes)?
            .into_iter()
            .map(Some)
            .collect()
    } else {
        vec![None]
    };
    let mut suites = Vec::new();
    for kex in &kexes {
        let (pairs, note) = pairs_of(input, &ciphers, &macs, kex, modes);
        suites.extend(pairs);
        notes.extend(note);
    }
    if input.compression {
        let zlib: Vec<Suite> = suites
            .iter()
            .map(|s| Suite {
                compression: Some("zlib@openssh.com".into()),
                ..s.clone()
            })
            .collect();
        suites.extend(zlib);
    }
    Ok(suites)
}

/// A workload's tool option variants (`--sftp-options`, `--rsync-options`), each with
/// every suite, beside the tool's defaults.
fn tool_variants(input: &PlanInput, mode: Mode, suites: &[Suite]) -> Vec<PlanItem> {
    let options = match mode.workload().map(|w| w.tool) {
        Some(Tool::Sftp) => &input.workload.sftp_options,
        Some(Tool::Rsync) => &input.workload.rsync_options,
        Some(Tool::Scp) | None => return Vec::new(),
    };
    options
        .iter()
        .flat_map(|o| {
            suites.iter().map(move |s| PlanItem {
                mode,
                suite: Suite {
                    tool: Some(o.clone()),
                    ..s.clone()
                },
            })
        })
        .collect()
}

/// Typing: the client's own suite once per ObscureKeystrokeTiming variant where it has
/// the option, else once: a key's wait for the clock outweighs any cipher's
/// microseconds. dbclient has no terminal sshbench drives: none.
fn typing_items(input: &PlanInput) -> Vec<PlanItem> {
    let item = |keystrokes| PlanItem {
        mode: Mode::Typing,
        suite: Suite {
            keystrokes,
            ..Suite::default()
        },
    };
    match input.client.kind {
        ClientKind::Dropbear => Vec::new(),
        ClientKind::OpenSsh if input.client.version.obscures_keystrokes() => {
            let variants = input.workload.keystroke_variants();
            variants.iter().map(|&k| item(Some(k))).collect()
        }
        ClientKind::OpenSsh => vec![item(None)],
    }
}

/// X11: the client's own suite with compression off and on, each with the keystroke clock
/// on and off where the client has one (it holds an X program's traffic back after the
/// key that started it). dbclient forwards no X11 sshbench drives: none.
fn x11_items(input: &PlanInput) -> Vec<PlanItem> {
    if input.client.kind == ClientKind::Dropbear {
        return Vec::new();
    }
    let clocks: Vec<Option<KeystrokeTiming>> = if input.client.version.obscures_keystrokes() {
        KeystrokeTiming::DEFAULTS.map(Some).to_vec()
    } else {
        vec![None]
    };
    let mut items = Vec::new();
    for compression in [None, Some("zlib@openssh.com".to_string())] {
        for &keystrokes in &clocks {
            items.push(PlanItem {
                mode: Mode::X11,
                suite: Suite {
                    compression: compression.clone(),
                    keystrokes,
                    ..Suite::default()
                },
            });
        }
    }
    items
}

/// Short commands: on a fresh connection once per key exchange (each command pays a
/// handshake of its own), and over one ControlMaster with the client's own (whose
/// handshake is paid once). dbclient shares no connection: there is nothing to compare.
fn exec_items(input: &PlanInput, notes: &mut Vec<PlanNote>) -> Result<Vec<PlanItem>> {
    if input.client.kind != ClientKind::OpenSsh {
        return Ok(Vec::new());
    }
    let item = |exec, kex| PlanItem {
        mode: Mode::Exec,
        suite: Suite {
            exec: Some(exec),
            kex,
            ..Suite::default()
        },
    };
    let kexes = select(input, AlgoKind::Kex, notes)?;
    let mut items: Vec<PlanItem> = (kexes.into_iter())
        .map(|k| item(ExecVia::Fresh, Some(k)))
        .collect();
    items.push(item(ExecVia::Master, None));
    Ok(items)
}

/// The modes that vary how the client is used rather than what it negotiates: typing,
/// X11 and short commands. A note planning already made (connect's key exchanges) is
/// not made twice.
fn interactive_items(input: &PlanInput, notes: &mut Vec<PlanNote>) -> Result<Vec<PlanItem>> {
    let mut items = Vec::new();
    if input.modes.contains(&Mode::Typing) {
        items.extend(typing_items(input));
    }
    if input.modes.contains(&Mode::X11) {
        items.extend(x11_items(input));
    }
    if input.modes.contains(&Mode::Exec) {
        let mut own = Vec::new();
        items.extend(exec_items(input, &mut own)?);
        own.retain(|n| !notes.contains(n));
        notes.extend(own);
    }
    Ok(items)
}

/// Build the plan: connect suites first, then send, then receive.
pub fn build(input: &PlanInput) -> Result<Plan> {
    let mut plan = Plan::default();
    if input.modes.contains(&Mode::Connect) {
        plan.items = connect_items(input, &mut plan.notes)?;
    }
    let interactive = interactive_items(input, &mut plan.notes)?;
    plan.items.extend(interactive);
    // Send, receive and echo all vary what an established session uses.
    let session: Vec<Mode> = input
        .modes
        .iter()
        .copied()
        .filter(|m| m.varies_cipher())
        .collect();
    if !session.is_empty() {
        let suites = session_suites(input, &session, &mut plan.notes)?;
        // Workloads have no sums: their suites once each.
        let mut once: Vec<Suite> = Vec::new();
        for s in &suites {
            if !once.contains(s) {
                once.push(s.clone());
            }
        }
        for mode in session {
            let of_mode = if mode.workload().is_some() {
                &once
            } else {
                &suites
            };
            plan.items.extend(of_mode.iter().map(|s| PlanItem {
                mode,
                suite: s.clone(),
            }));
            plan.items.extend(tool_variants(input, mode, &once));
        }
        for shape in [Shape::File, Shape::Tree] {
            let modes: Vec<Mode> = (input.modes.iter().copied())
                .filter(|m| m.workload().is_some_and(|w| w.shape == shape))
                .collect();
            if !modes.is_empty() {
                plan.notes.push(PlanNote::Workload {
                    modes,
                    shape,
                    spec: input.workload.clone(),
                });
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KeystrokeTiming;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn client() -> ClientOffer {
        let mut c = ClientOffer::default();
        c.lists.set(
            AlgoKind::Kex,
            v(&[
                "curve25519-sha256",
                "curve25519-sha256@libssh.org",
                "ecdh-sha2-nistp256",
            ]),
        );
        c.lists
            .set(AlgoKind::HostKey, v(&["ssh-ed25519", "rsa-sha2-256"]));
        c.lists.set(
            AlgoKind::Cipher,
            v(&["aes128-ctr", "aes128-gcm@openssh.com", "3des-cbc"]),
        );
        c.lists
            .set(AlgoKind::Mac, v(&["hmac-sha1", "umac-64-etm@openssh.com"]));
        c.aead_ciphers = Some(v(&["aes128-gcm@openssh.com"]));
        c
    }

    fn input<'a>(
        c: &'a ClientOffer,
        s: Option<&'a AlgoLists>,
        f: &'a Filters,
        modes: &'a [Mode],
    ) -> PlanInput<'a> {
        PlanInput {
            client: c,
            server: s,
            filters: f,
            modes,
            vary_hostkeys: false,
            full: false,
            pairs: false,
            compression: false,
            workload: &NO_VARIANTS,
        }
    }

    static NO_VARIANTS: WorkloadSpec = WorkloadSpec {
        file_bytes: 1,
        tree_files: 1,
        tree_file_bytes: 1,
        sftp_options: Vec::new(),
        rsync_options: Vec::new(),
        remote_dir: None,
        keystrokes: Vec::new(),
    };

    #[test]
    fn typing_is_planned_once_per_keystroke_clock_where_the_client_has_one() {
        let f = Filters::default();
        let typing = |version: &str, kind: ClientKind, spec: &WorkloadSpec| {
            let mut c = client();
            (c.kind, c.version.product) = (kind, format!("{kind:?}"));
            c.version.version = version.into();
            let inp = PlanInput {
                workload: spec,
                ..input(&c, None, &f, &[Mode::Typing])
            };
            let plan = build(&inp).unwrap();
            assert!(plan.items.iter().all(|i| i.mode == Mode::Typing));
            let k: Vec<_> = plan.items.iter().map(|i| i.suite.keystrokes).collect();
            assert!(plan.items.iter().all(|i| i.suite.cipher.is_none()));
            k
        };
        let (yes, no) = (Some(KeystrokeTiming::Yes), Some(KeystrokeTiming::No));
        assert_eq!(
            typing("10.0p2", ClientKind::OpenSsh, &NO_VARIANTS),
            [yes, no]
        );
        assert_eq!(typing("9.2p1", ClientKind::OpenSsh, &NO_VARIANTS), [None]);
        assert!(typing("2022.83", ClientKind::Dropbear, &NO_VARIANTS).is_empty());
        let asked = WorkloadSpec {
            keystrokes: vec![KeystrokeTiming::Interval(40)],
            ..NO_VARIANTS.clone()
        };
        let interval = Some(KeystrokeTiming::Interval(40));
        assert_eq!(typing("9.5p1", ClientKind::OpenSsh, &asked), [interval]);
    }

    #[test]
    fn x11_is_planned_with_compression_and_the_clock_on_and_off() {
        let f = Filters::default();
        let mut c = client();
        c.version.product = "OpenSSH".into();
        let variants = |c: &ClientOffer| -> Vec<(bool, Option<KeystrokeTiming>)> {
            let plan = build(&input(c, None, &f, &[Mode::X11])).unwrap();
            assert!(plan.items.iter().all(|i| i.mode == Mode::X11));
            (plan.items.iter())
                .map(|i| (i.suite.compression.is_some(), i.suite.keystrokes))
                .collect()
        };
        c.version.version = "9.2p1".into();
        assert_eq!(variants(&c), [(false, None), (true, None)]);
        c.version.version = "10.0p2".into();
        let (yes, no) = (Some(KeystrokeTiming::Yes), Some(KeystrokeTiming::No));
        assert_eq!(
            variants(&c),
            [(false, yes), (false, no), (true, yes), (true, no)]
        );
        c.kind = ClientKind::Dropbear;
        assert!(variants(&c).is_empty());
    }

    #[test]
    fn exec_is_planned_fresh_per_key_exchange_and_over_a_master_for_openssh_only() {
        let f = Filters::default();
        let mut c = client();
        let plan = build(&input(&c, None, &f, &[Mode::Connect, Mode::Exec])).unwrap();
        let exec: Vec<_> = (plan.items.iter())
            .filter(|i| i.mode == Mode::Exec)
            .map(|i| (i.suite.exec.unwrap(), i.suite.kex.as_deref()))
            .collect();
        // The alias of curve25519 folded, as connect folds it, and said once.
        let fresh = ExecVia::Fresh;
        assert_eq!(
            exec,
            [
                (fresh, Some("curve25519-sha256")),
                (fresh, Some("ecdh-sha2-nistp256")),
                (ExecVia::Master, None)
            ]
        );
        let aliases = |n: &&PlanNote| matches!(n, PlanNote::Aliases { .. });
        assert_eq!(
            plan.notes.iter().filter(aliases).count(),
            1,
            "{:?}",
            plan.notes
        );
        assert!(plan.items.iter().all(|i| i.suite.cipher.is_none()));
        c.kind = ClientKind::Dropbear;
        assert!(
            build(&input(&c, None, &f, &[Mode::Exec]))
                .unwrap()
                .items
                .is_empty()
        );
    }

    #[test]
    fn tool_options_are_variants_of_their_own_tool_only() {
        let c = client();
        let f = Filters::default();
        let spec = WorkloadSpec {
            sftp_options: vec!["-R 256".into(), "-B 65536".into()],
            rsync_options: vec!["--whole-file".into()],
            ..WorkloadSpec::default()
        };
        let modes = [Mode::Send, Mode::SftpPutTree, Mode::RsyncGetFile];
        let plan = build(&PlanInput {
            workload: &spec,
            ..input(&c, None, &f, &modes)
        })
        .unwrap();
        let count = |m: Mode, tool: Option<&str>| {
            plan.items
                .iter()
                .filter(|i| i.mode == m && i.suite.tool.as_deref() == tool)
                .count()
        };
        // Factorized: aes128-ctr and 3des-cbc with one MAC, the other MAC with
        // aes128-ctr, and the AEAD cipher; the reference pair twice more where sums need it.
        assert_eq!(
            (count(Mode::Send, None), count(Mode::SftpPutTree, None)),
            (6, 4)
        );
        assert_eq!(
            (
                count(Mode::SftpPutTree, Some("-R 256")),
                count(Mode::SftpPutTree, Some("-B 65536"))
            ),
            (4, 4)
        );
        assert_eq!(
            (
                count(Mode::RsyncGetFile, Some("--whole-file")),
                count(Mode::RsyncGetFile, Some("-R 256"))
            ),
            (4, 0)
        );
        assert_eq!(
            plan.items
                .iter()
                .filter(|i| i.mode == Mode::Send && i.suite.tool.is_some())
                .count(),
            0
        );
        let workload = |modes: &[Mode], shape| PlanNote::Workload {
            modes: modes.to_vec(),
            shape,
            spec: spec.clone(),
        };
        let tree = workload(&[Mode::SftpPutTree], Shape::Tree);
        assert!(plan.notes.contains(&tree), "{:?}", plan.notes);
        let file = workload(&[Mode::RsyncGetFile], Shape::File);
        assert!(plan.notes.contains(&file), "{:?}", plan.notes);
    }

    #[test]
    fn aead_measured_once_and_aliases_folded() {
        let c = client();
        let f = Filters::default();
        let plan = build(&PlanInput {
            pairs: true,
            ..input(&c, None, &f, &Mode::ALL)
        })
        .unwrap();
        let count = |m: Mode| plan.items.iter().filter(|i| i.mode == m).count();
        assert_eq!(count(Mode::Connect), 2, "alias of curve25519 folded");
        // aes128-ctr × 2 MACs + 3des-cbc × 2 MACs + one AEAD.
        assert_eq!(count(Mode::Send), 5);
        assert_eq!(count(Mode::Receive), 5);
        assert_eq!(
            count(Mode::Echo),
            5,
            "echo varies what send and receive vary"
        );
        let gcm = plan
            .items
            .iter()
            .find(|i| i.suite.cipher.as_deref() == Some("aes128-gcm@openssh.com"))
            .unwrap();
        assert_eq!(gcm.suite.mac, None);
        let alias = PlanNote::Aliases {
            names: vec!["curve25519-sha256@libssh.org".into()],
        };
        assert!(plan.notes.contains(&alias), "{:?}", plan.notes);
    }

    #[test]
    fn server_offer_narrows_and_filter_refusals_are_noted() {
        let c = client();
        let mut server = AlgoLists::new();
        server.set(AlgoKind::Cipher, v(&["aes128-ctr"]));
        let f = Filters {
            ciphers: Some(FilterSpec::Only(v(&["aes128-ctr", "3des-cbc"]))),
            ..Filters::default()
        };
        let plan = build(&input(&c, Some(&server), &f, &[Mode::Send])).unwrap();
        assert_eq!(plan.items.len(), 2);
        let refused = PlanNote::NotOffered {
            kind: AlgoKind::Cipher,
            names: vec!["3des-cbc".into()],
        };
        assert!(plan.notes.contains(&refused), "{:?}", plan.notes);
    }

    #[test]
    fn unknown_filter_names_list_valid_ones() {
        let c = client();
        let f = Filters {
            ciphers: Some(FilterSpec::Only(v(&["rot13"]))),
            ..Filters::default()
        };
        let err = build(&input(&c, None, &f, &[Mode::Send]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("rot13") && err.contains("aes128-ctr"), "{err}");
    }

    /// HPN-SSH's multithreaded chacha20 is offered as OpenSSH's name: a server with that
    /// name takes it, and it is measured beside the serial one.
    #[test]
    fn a_client_s_own_implementation_is_planned_where_the_server_offers_its_name() {
        let mut c = client();
        let hpn = [
            "chacha20-poly1305-mt@hpnssh.org",
            "chacha20-poly1305@openssh.com",
        ];
        c.lists.set(AlgoKind::Cipher, v(&hpn));
        c.aead_ciphers = Some(v(&hpn));
        let mut server = AlgoLists::new();
        server.set(AlgoKind::Cipher, v(&["chacha20-poly1305@openssh.com"]));
        let f = Filters::default();
        let plan = build(&input(&c, Some(&server), &f, &[Mode::Receive])).unwrap();
        let ciphers: Vec<&str> = (plan.items.iter())
            .filter_map(|i| i.suite.cipher.as_deref())
            .collect();
        assert_eq!(ciphers, hpn);
        server.set(AlgoKind::Cipher, v(&["aes128-ctr"]));
        assert!(build(&input(&c, Some(&server), &f, &[Mode::Receive])).is_err());
    }

    #[test]
    fn empty_intersection_is_an_error() {
        let c = client();
        let mut server = AlgoLists::new();
        server.set(AlgoKind::Cipher, v(&["chacha20-poly1305@openssh.com"]));
        let f = Filters::default();
        assert!(build(&input(&c, Some(&server), &f, &[Mode::Receive])).is_err());
    }

    #[test]
    fn hostkeys_vary_only_when_asked() {
        let c = client();
        let f = Filters::default();
        let mut inp = input(&c, None, &f, &[Mode::Connect]);
        assert_eq!(build(&inp).unwrap().items.len(), 2);
        inp.vary_hostkeys = true;
        let labels = |inp: &PlanInput| -> Vec<String> {
            let plan = build(inp).unwrap();
            plan.items.iter().map(|i| i.suite.label()).collect()
        };
        // Each key exchange with ssh-ed25519, each host key with curve25519-sha256, and
        // the reference pair twice more.
        assert_eq!(
            labels(&inp),
            [
                "curve25519-sha256 + ssh-ed25519",
                "ecdh-sha2-nistp256 + ssh-ed25519",
                "curve25519-sha256 + rsa-sha2-256",
                "curve25519-sha256 + ssh-ed25519",
                "curve25519-sha256 + ssh-ed25519",
            ]
        );
        let plan = build(&inp).unwrap();
        let sums = |n: &PlanNote| matches!(n, PlanNote::Factorized(f) if f.sums == 1);
        assert!(plan.notes.iter().any(sums), "{:?}", plan.notes);
        // --full: the whole product.
        inp.full = true;
        assert_eq!(
            labels(&inp),
            [
                "curve25519-sha256 + ssh-ed25519",
                "curve25519-sha256 + rsa-sha2-256",
                "ecdh-sha2-nistp256 + ssh-ed25519",
                "ecdh-sha2-nistp256 + rsa-sha2-256"
            ]
        );
    }

    #[test]
    fn ciphers_and_macs_are_measured_apart_unless_every_pair_is_asked_for() {
        let mut c = client();
        c.lists.set(
            AlgoKind::Cipher,
            v(&[
                "aes256-ctr",
                "aes128-ctr",
                "aes128-gcm@openssh.com",
                "3des-cbc",
            ]),
        );
        c.lists.set(
            AlgoKind::Mac,
            v(&[
                "hmac-sha1",
                "hmac-sha2-256-etm@openssh.com",
                "umac-64-etm@openssh.com",
            ]),
        );
        let f = Filters::default();
        let inp = input(&c, None, &f, &[Mode::Send, Mode::Echo]);
        let plan = build(&inp).unwrap();
        let send: Vec<String> = (plan.items.iter())
            .filter(|i| i.mode == Mode::Send)
            .map(|i| i.suite.label())
            .collect();
        assert_eq!(
            send,
            [
                "aes256-ctr + hmac-sha2-256-etm@openssh.com",
                "aes128-ctr + hmac-sha2-256-etm@openssh.com",
                "aes128-gcm@openssh.com",
                "3des-cbc + hmac-sha2-256-etm@openssh.com",
                "aes128-ctr + hmac-sha1",
                "aes128-ctr + umac-64-etm@openssh.com",
                "aes128-ctr + hmac-sha2-256-etm@openssh.com",
                "aes128-ctr + hmac-sha2-256-etm@openssh.com",
            ]
        );
        let note = PlanNote::Factorized(Factorized {
            modes: vec![Mode::Send, Mode::Echo],
            first: Varied {
                kind: AlgoKind::Cipher,
                count: 3,
                reference: "aes128-ctr".into(),
            },
            second: Varied {
                kind: AlgoKind::Mac,
                count: 3,
                reference: "hmac-sha2-256-etm@openssh.com".into(),
            },
            replicas: 3,
            sums: 4,
        });
        assert!(plan.notes.contains(&note), "{:?}", plan.notes);
        let every = build(&PlanInput { pairs: true, ..inp }).unwrap();
        let count = |p: &Plan| p.items.iter().filter(|i| i.mode == Mode::Echo).count();
        assert_eq!((count(&plan), count(&every)), (8, 10));
        // One MAC (or one cipher that takes a MAC) is its own whole product.
        let one = Filters {
            macs: Some(FilterSpec::Only(v(&["hmac-sha1"]))),
            ..Filters::default()
        };
        let narrow = build(&input(&c, None, &one, &[Mode::Send])).unwrap();
        assert_eq!(narrow.items.len(), 4);
        let factorized = |n: &PlanNote| matches!(n, PlanNote::Factorized(_));
        assert!(!narrow.notes.iter().any(factorized), "{:?}", narrow.notes);
    }

    #[test]
    fn compression_doubles_session_suites_only() {
        let c = client();
        let f = Filters::default();
        let mut inp = input(&c, None, &f, &Mode::CLASSIC);
        inp.compression = true;
        let plan = build(&inp).unwrap();
        let zlib = plan
            .items
            .iter()
            .filter(|i| i.suite.compression.is_some())
            .count();
        // 4 suites, the reference pair twice more, in send, receive and echo.
        assert_eq!(zlib, 18, "6 send + 6 receive + 6 echo suites with zlib");
        assert!(
            plan.items
                .iter()
                .filter(|i| i.mode == Mode::Connect)
                .all(|i| i.suite.compression.is_none())
        );
    }

    #[test]
    fn full_is_the_classic_cartesian_product() {
        let c = client();
        let f = Filters::default();
        let mut inp = input(&c, None, &f, &[Mode::Send]);
        inp.full = true;
        // 2 kex (alias folded) × 3 ciphers × 2 MACs, AEAD included.
        assert_eq!(build(&inp).unwrap().items.len(), 12);
    }

    #[test]
    fn ssh_config_style_filters() {
        let c = client();
        let f = Filters {
            ciphers: Some(filter::parse("-3des*").unwrap()),
            macs: Some(filter::parse("*-etm@openssh.com").unwrap()),
            ..Filters::default()
        };
        let plan = build(&input(&c, None, &f, &[Mode::Send])).unwrap();
        let labels: Vec<String> = plan.items.iter().map(|i| i.suite.label()).collect();
        assert_eq!(
            labels,
            [
                "aes128-ctr + umac-64-etm@openssh.com",
                "aes128-gcm@openssh.com"
            ]
        );
    }
}
