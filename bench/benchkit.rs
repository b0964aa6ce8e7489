//! Helpers for `bench/run.sh`, the benchmark of sshbench itself (`cargo build --release
//! --example benchkit`). Each subcommand does one small job and prints tab-separated
//! lines:
//!
//! - `reference`: the accuracy reference, one long transfer through plain `ssh` timed
//!   from the moment the remote side is ready; written independently of sshbench's
//!   transport (no shared code but `sys::sink`, the file in memory a receive's ssh
//!   writes into), so the two can be compared.
//! - `suites`, `info`: per-suite figures and the versions of one stored run.
//! - `rank`: Spearman rank correlation and median relative difference of two such lists.
//! - `pool`: the accuracy rows' ratios taken together (geometric mean, 95% interval).
//! - `payload`: the payload generator's rate, into memory and through a pipe.
//! - `watch`: run a command and report its own CPU time and peak memory (Linux `/proc`).
//! - `connect-sums`: how well the connect pairs a factorized run sums agree with the
//!   same pairs measured, from one `--full` connect run.
//! - `client-cpus`: the CPUs `sshbench` keeps its clients on against a split sandbox
//!   (`taskset -c` list; empty when nothing is split), for the script's own clients.
//!
//! Only for benchmarking on the local sandbox; not part of the tool.

use sshbench::analysis;
use sshbench::measure::payload::Payload;
use sshbench::model::Mode;
use sshbench::store::{Selection, Store};
use sshbench::sys::sink::Sink;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("reference") => reference(&args[1..]),
        Some("suites") => suites(&args[1..]),
        Some("info") => info(&args[1..]),
        Some("rank") => rank(&args[1..]),
        Some("pool") => pool(&args[1..]),
        Some("payload") => payload(),
        Some("watch") => return watch(&args[1..]),
        Some("connect-sums") => connect_sums(&args[1..]),
        Some("ties") => ties(&args[1..]),
        Some("client-cpus") => {
            let split = sshbench::sys::affinity::plan(sshbench::model::Placement::Split);
            println!(
                "{}",
                split.map_or_else(String::new, |s| sshbench::sys::affinity::format_list(
                    &s.client
                ))
            );
            Ok(())
        }
        _ => Err(
            "usage: benchkit reference|suites|info|rank|pool|payload|watch|connect-sums|client-cpus ..."
                .to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchkit: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The samples of `--run ID` in `--db DB`.
fn run_samples(o: &HashMap<String, String>) -> Result<Vec<sshbench::store::StoredSample>, String> {
    Ok(run_selection(o)?.1)
}

/// The run `--run ID` of `--db DB` and its samples.
fn run_selection(o: &HashMap<String, String>) -> Result<Selected, String> {
    let store = Store::open(Path::new(need(o, "db")?)).map_err(|e| format!("{e:#}"))?;
    store
        .select(&Selection {
            run: Some(number(o, "run")?),
            ..Selection::default()
        })
        .map_err(|e| format!("{e:#}"))
}

type Selected = (
    Vec<sshbench::store::RunRecord>,
    Vec<sshbench::store::StoredSample>,
);

/// `--name value` pairs.
fn options(args: &[String]) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let key = k
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {k}"))?;
        let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
        out.insert(key.to_string(), v.clone());
    }
    Ok(out)
}

fn need<'a>(o: &'a HashMap<String, String>, key: &str) -> Result<&'a str, String> {
    o.get(key)
        .map(String::as_str)
        .ok_or_else(|| format!("--{key} is required"))
}

fn number<T: std::str::FromStr>(o: &HashMap<String, String>, key: &str) -> Result<T, String> {
    need(o, key)?
        .parse()
        .map_err(|_| format!("--{key}: not a number"))
}

/// `reference --config F --host H --cipher C [--mac M] --mode send|receive --bytes N
/// --seconds S`: move N bytes, or what fits in S seconds, through `ssh -F F -c C [-m M]
/// H` (a receive cut short is counted as far as it got; a complete one must be exactly
/// N bytes). A send's ssh reads its stdin from a sparse file of N zeros, as sshbench's
/// sends over a shared connection do: nothing of the reference's own runs beside it
/// (its progress is ssh's offset in that file, looked at every few milliseconds; at S
/// seconds the file is cut short there); a receive's writes into a file in memory
/// where there is one (`sys::sink`), its progress looked at every 50 ms. Prints `bytes
/// seconds  steady_seconds  steady_bytes`: the time from the remote ready line to the
/// end, and the time and bytes of the last three quarters (the connection's ramp-up
/// excluded, as sshbench does).
fn reference(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let mode = need(&o, "mode")?;
    let bytes: u64 = number(&o, "bytes")?;
    let limit = Duration::from_secs_f64(number(&o, "seconds")?);
    let script = match mode {
        // `wc -c` counts what arrived; its line ends the transfer.
        "send" => "echo READY; exec wc -c".to_string(),
        // A 64 MiB random file, repeated: no CPU-bound generator on the server's side,
        // and `cat` straight into sshd (no `head -c` in between, which copies 8 KiB at
        // a time and costs the server's core a share of a fast receive).
        "receive" => {
            const FILE: u64 = 64 << 20;
            if bytes % FILE != 0 {
                return Err(format!("--bytes for receive: a multiple of {FILE}"));
            }
            format!(
                "f=$(mktemp) || exit 1; trap \"rm -f $f\" 0; trap \"exit 1\" 1 2 13 15; head -c {FILE} /dev/urandom > $f; \
                 echo READY; i=0; while [ $i -lt {} ]; do cat $f || exit 1; i=$((i + 1)); done",
                bytes / FILE
            )
        }
        m => return Err(format!("--mode {m}: send or receive")),
    };
    let mut cmd = Command::new("ssh");
    cmd.args(["-F", need(&o, "config")?, "-o", "BatchMode=yes", "-T"])
        .args(["-c", need(&o, "cipher")?]);
    if let Some(mac) = o.get("mac").filter(|m| !m.is_empty() && *m != "-") {
        cmd.args(["-m", mac]);
    }
    // A receive's ssh writes into a file in memory, as sshbench's fast receives do.
    let sink = (mode == "receive").then(Sink::new).flatten();
    let stdout = match &sink {
        Some(s) => Stdio::from(s.for_child().map_err(|e| e.to_string())?),
        None => Stdio::piped(),
    };
    cmd.arg(need(&o, "host")?)
        .arg(format!("sh -c '{script}'"))
        .stdout(stdout);
    // ssh reads through one open file description, and this process looks at its offset
    // through another handle of the same one.
    let read_by_ssh = if mode == "send" {
        let shm = Path::new("/dev/shm");
        let zeros = tempfile::Builder::new()
            .prefix("benchkit-zeros.")
            .tempfile_in(if shm.is_dir() {
                shm.into()
            } else {
                std::env::temp_dir()
            })
            .map_err(|e| e.to_string())?;
        zeros.as_file().set_len(bytes).map_err(|e| e.to_string())?;
        let f = std::fs::File::open(zeros.path()).map_err(|e| e.to_string())?;
        let watch = f.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::from(f));
        Some((zeros, watch))
    } else {
        cmd.stdin(Stdio::null());
        None
    };
    let mut child = cmd.spawn().map_err(|e| format!("ssh: {e}"))?;
    if let Some(sink) = sink {
        return receive_into_file(sink, child, (bytes, limit));
    }
    let stdout = child.stdout.take().expect("piped");
    // A 1 MiB pipe (Linux), so the reference times ssh rather than this reader: through
    // the default 64 KiB, ssh waits whenever the reader, on the same core, waits for its
    // turn (AES-GCM receive, 4 s each, alternating: 590-620 MB/s against 810-870).
    #[cfg(target_os = "linux")]
    if mode == "receive" {
        let _ = nix::fcntl::fcntl(&stdout, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    }
    let mut out = BufReader::with_capacity(1 << 20, stdout);
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    if line.trim() != "READY" {
        return Err(format!("expected READY, got {line:?}"));
    }
    let ready = Instant::now();
    // (when, bytes so far) after every chunk: the quarter mark is found afterwards,
    // when a time-limited send knows how much it sent.
    let mut progress: Vec<(Instant, u64)> = Vec::new();
    let mut cut = false;
    let (moved, end) = if let Some((zeros, watch)) = &read_by_ssh {
        let cut_at = |n: u64| zeros.as_file().set_len(n);
        send_from_file(
            watch,
            (bytes, limit, ready),
            &mut out,
            &mut progress,
            cut_at,
        )?
    } else {
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0u64;
        loop {
            if ready.elapsed() >= limit {
                // Time is up: what arrived so far is the reference; the rest is cut off.
                cut = true;
                break;
            }
            let n = out.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            got += n as u64;
            progress.push((Instant::now(), got));
        }
        let end = Instant::now();
        if !cut && got != bytes {
            return Err(format!("expected {bytes} bytes, got {got}"));
        }
        (got, end)
    };
    let (quarter_at, at) = *progress
        .iter()
        .find(|(_, b)| *b >= moved / 4)
        .ok_or("nothing moved")?;
    if cut {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !cut && !status.success() {
        return Err(format!("ssh exited with {status}"));
    }
    print_reference(moved, (ready, quarter_at, end), at);
    Ok(())
}

/// The reference's line: bytes, seconds from ready to end, and the last three
/// quarters' seconds and bytes (`at`: the bytes at the quarter's instant).
fn print_reference(moved: u64, (ready, quarter_at, end): (Instant, Instant, Instant), at: u64) {
    let total = (end - ready).as_secs_f64();
    let steady = (end - quarter_at).as_secs_f64();
    println!("{moved}\t{total:.6}\t{steady:.6}\t{}", moved - at);
}

/// A receive that ssh writes into `sink`: the ready line from its head, then the bytes so
/// far every 50 ms until all `bytes` are there, or `limit` after the ready line (ssh is
/// then killed and what arrived counts).
fn receive_into_file(
    mut sink: Sink,
    mut child: std::process::Child,
    (bytes, limit): (u64, Duration),
) -> Result<(), String> {
    // Few looks while it streams: each wakes this process on the client's CPU.
    let look = Duration::from_millis(50);
    let given_up = Instant::now() + Duration::from_secs(60);
    let start = loop {
        std::thread::sleep(Duration::from_millis(1));
        let head = sink.head(64);
        if let Some(i) = head.iter().position(|&b| b == b'\n') {
            if &head[..i] != b"READY" {
                return Err(format!(
                    "expected READY, got {:?}",
                    String::from_utf8_lossy(&head)
                ));
            }
            break i as u64 + 1;
        }
        if Instant::now() > given_up || child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return Err("no READY line".into());
        }
    };
    let ready = Instant::now();
    let mut progress: Vec<(Instant, u64)> = Vec::new();
    let cut = loop {
        std::thread::sleep(look);
        let got = sink.written_and_wrap() - start;
        progress.push((Instant::now(), got));
        if got >= bytes {
            break false;
        }
        if ready.elapsed() >= limit || child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break true;
        }
    };
    let &(end, _) = progress.last().expect("one look");
    if cut {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let total = sink.written_and_wrap() - start;
    if !cut && (!status.success() || total != bytes) {
        return Err(format!(
            "ssh exited with {status}, {total} of {bytes} bytes"
        ));
    }
    let moved = progress.last().map_or(0, |p| p.1);
    let (quarter_at, at) = *progress
        .iter()
        .find(|(_, b)| *b >= moved / 4)
        .ok_or("nothing moved")?;
    print_reference(moved, (ready, quarter_at, end), at);
    Ok(())
}

/// A send of `bytes` that ssh reads from the file behind `watch` (its offset is ssh's):
/// progress from that offset; at `limit` after `ready` the file is cut there (`cut_at`),
/// so ssh soon reads its end. The server's count must be what ssh read: (bytes, end).
fn send_from_file(
    watch: &std::fs::File,
    (bytes, limit, ready): (u64, Duration, Instant),
    out: &mut impl BufRead,
    progress: &mut Vec<(Instant, u64)>,
    cut_at: impl Fn(u64) -> std::io::Result<()>,
) -> Result<(u64, Instant), String> {
    use std::io::Seek;
    let offset = || {
        let mut w = watch;
        w.stream_position().map_err(|e| e.to_string())
    };
    loop {
        std::thread::sleep(Duration::from_millis(5));
        let pos = offset()?;
        progress.push((Instant::now(), pos));
        if pos >= bytes {
            break;
        }
        if ready.elapsed() >= limit {
            cut_at(pos).map_err(|e| e.to_string())?;
            break;
        }
    }
    let mut count = String::new();
    out.read_line(&mut count).map_err(|e| e.to_string())?;
    let end = Instant::now();
    let counted: u64 = count
        .trim()
        .parse()
        .map_err(|_| format!("bad count {count:?}"))?;
    let sent = offset()?;
    if counted != sent {
        return Err(format!("ssh read {sent}, the server counted {counted}"));
    }
    Ok((sent, end))
}

/// `suites --db DB --run ID --mode MODE`: one line per suite of that run and mode as
/// `show` has them (summed pairs included, `n` = 0 for them):
/// `cipher+mac  mean  ci95  n  bound  client_cpu_s_per_gb  server_cpu_s_per_gb`
/// (`+zlib` appended with compression; `-` for what is unknown).
fn suites(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let mode = Mode::parse(need(&o, "mode")?).ok_or("--mode: connect|send|receive|echo")?;
    let (runs, samples) = run_selection(&o)?;
    let stats = sshbench::views::scope::Scope::build(&runs, &samples).stats;
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}"));
    for s in stats.iter().filter(|s| s.mode == mode) {
        let Some(f) = s.figure else { continue };
        let key = match mode {
            Mode::Connect => format!(
                "{}+{}",
                s.suite.kex.as_deref().unwrap_or("-"),
                s.suite.hostkey.as_deref().unwrap_or("-")
            ),
            _ => format!(
                "{}+{}{}",
                s.suite.cipher.as_deref().unwrap_or("-"),
                s.suite.mac.as_deref().unwrap_or("-"),
                if s.suite.compression.is_some() {
                    "+zlib"
                } else {
                    ""
                }
            ),
        };
        println!(
            "{key}\t{:.6}\t{}\t{}\t{}\t{}\t{}",
            f.mean,
            opt(f.ci95),
            if s.sum { 0 } else { f.n },
            s.bound().map_or("-", |b| match b {
                analysis::Bound::Client => "client",
                analysis::Bound::Server => "server",
                analysis::Bound::Both => "both",
                analysis::Bound::Network => "network",
                analysis::Bound::Window => "window",
                analysis::Bound::Link => "link",
                analysis::Bound::Rekeying => "rekeying",
                analysis::Bound::Unknown => "unknown",
            }),
            opt(s.client_cpu.map(|c| c.median)),
            opt(s.server_cpu.map(|c| c.median)),
        );
    }
    Ok(())
}

/// `ties --db DB --run ID`: per mode of the run, as `show` ranks it: `mode  suites
/// tied  tied_10  median_ci  dropped  separated  budget  equal  rounds`: the suites marked `≈ best`
/// (the best not counted), those of them whose mean is 10% or more behind the best's,
/// the median relative 95% interval of the measured suites, and the race's stops.
fn ties(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let (runs, samples) = run_selection(&o)?;
    let scope = sshbench::views::scope::Scope::build(&runs, &samples);
    for mode in scope.modes() {
        let ranked = analysis::rank(&scope.stats, mode);
        let Some(best) = ranked.iter().find(|r| r.best).and_then(|r| r.stats.figure) else {
            continue;
        };
        let behind = |m: f64| {
            let gap = (m - best.mean) / best.mean;
            if analysis::higher_is_better(mode) {
                -gap
            } else {
                gap
            }
        };
        let tied: Vec<f64> = (ranked.iter())
            .filter(|r| r.tie_with_best && !r.best)
            .filter_map(|r| r.stats.figure.map(|f| behind(f.mean)))
            .collect();
        let mut cis: Vec<f64> = (ranked.iter())
            .filter(|r| !r.stats.sum)
            .filter_map(|r| r.stats.figure.and_then(|f| f.relative_ci()))
            .collect();
        let stops = |reason: &str| {
            (scope.stops.iter())
                .filter(|(m, _, s)| *m == mode && s.reason.as_str() == reason)
                .count()
        };
        println!(
            "{mode}\t{}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}\t{}",
            ranked.len(),
            tied.len(),
            tied.iter().filter(|&&g| g >= 0.10).count(),
            analysis::median(&mut cis).unwrap_or(f64::NAN),
            stops("dropped"),
            stops("separated"),
            stops("budget"),
            stops("equal"),
            stops("rounds"),
        );
    }
    Ok(())
}

/// `info --db DB --run ID`: the run's client and server versions, one line.
fn info(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let store = Store::open(Path::new(need(&o, "db")?)).map_err(|e| format!("{e:#}"))?;
    let run = store
        .run(number(&o, "run")?)
        .map_err(|e| format!("{e:#}"))?
        .ok_or("no such run")?;
    println!(
        "Client: {}; server: {} (the sandbox sshd on 127.0.0.1)",
        run.client_version,
        run.server_version.as_deref().unwrap_or("unknown")
    );
    Ok(())
}

/// Ranks 1..n of `v`, ties sharing their average rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        for k in &idx[i..=j] {
            r[*k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rho: Pearson's correlation of the ranks.
fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

fn read_figures(path: &str) -> Result<HashMap<String, f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let key = f.next()?;
            let v: f64 = f.next()?.parse().ok()?;
            (v.is_finite() && v > 0.0).then(|| (key.to_string(), v))
        })
        .collect())
}

/// `rank A B`: files of `key<TAB>figure`; over the keys in both, prints
/// `n  spearman_rho  median_relative_difference` (|a − b| / mean of the two).
fn rank(args: &[String]) -> Result<(), String> {
    let [a, b] = args else {
        return Err("usage: benchkit rank A.tsv B.tsv".into());
    };
    let (a, b) = (read_figures(a)?, read_figures(b)?);
    let mut keys: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
    keys.sort();
    if keys.len() < 3 {
        return Err(format!("only {} suites in common", keys.len()));
    }
    let xa: Vec<f64> = keys.iter().map(|k| a[*k]).collect();
    let xb: Vec<f64> = keys.iter().map(|k| b[*k]).collect();
    let mut rel: Vec<f64> = xa
        .iter()
        .zip(&xb)
        .map(|(x, y)| (x - y).abs() / ((x + y) / 2.0))
        .collect();
    rel.sort_by(f64::total_cmp);
    let median = analysis::summarize(&rel).map_or(f64::NAN, |s| s.median);
    println!("{}\t{:.4}\t{:.4}", keys.len(), spearman(&xa, &xb), median);
    Ok(())
}

/// Ratios taken together: `(n, geometric mean, low, high, within)`, the 95% interval from
/// Student's t on the logarithms (so 0.9 and 1.1 weigh alike), `within` how many lie
/// within `tolerance` of 1 (e.g. 0.05). `None` for fewer than two finite, positive ratios.
fn pooled(ratios: &[f64], tolerance: f64) -> Option<(usize, f64, f64, f64, usize)> {
    let logs: Vec<f64> = ratios
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    let s = analysis::summarize(&logs)?;
    let ci = s.ci95?;
    let within = ratios
        .iter()
        .filter(|r| (*r - 1.0).abs() <= tolerance + 1e-9)
        .count();
    Some((
        s.n,
        s.mean.exp(),
        (s.mean - ci).exp(),
        (s.mean + ci).exp(),
        within,
    ))
}

/// `pool FILE`: one ratio per line (sshbench / reference); prints
/// `n  geometric_mean  low  high  within_5%`: whether the rows, taken together, show a
/// bias of sshbench's that the scatter of single rows would hide or fake.
fn pool(args: &[String]) -> Result<(), String> {
    let [path] = args else {
        return Err("usage: benchkit pool RATIOS".into());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let ratios = text
        .split_whitespace()
        .map(|w| {
            w.parse::<f64>()
                .map_err(|_| format!("{path}: not a ratio: {w:?}"))
        })
        .collect::<Result<Vec<f64>, String>>()?;
    let (n, mean, low, high, within) =
        pooled(&ratios, 0.05).ok_or_else(|| format!("{path}: fewer than two ratios"))?;
    println!("{n}\t{mean:.4}\t{low:.4}\t{high:.4}\t{within}");
    Ok(())
}

/// `connect-sums --db DB --run ID --kex K --hostkey H`: from a run that measured every
/// connect pair, keep what the factorized design measures (every key exchange with H,
/// every host key with K), sum the other pairs as `run` does, and set each sum against
/// the pair as measured. Prints `pair  sum  measured  ratio` lines, then `pooled n
/// geometric_mean low high within_5%`, and the Spearman ρ of the two orders.
fn connect_sums(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let (kref, href) = (need(&o, "kex")?, need(&o, "hostkey")?);
    let samples = run_samples(&o)?;
    let all = analysis::aggregate(samples.iter().map(|s| &s.sample));
    let all: Vec<_> = all
        .into_iter()
        .filter(|s| s.mode == Mode::Connect)
        .collect();
    let design: Vec<_> = (all.iter())
        .filter(|s| {
            s.suite.kex.as_deref() == Some(kref) || s.suite.hostkey.as_deref() == Some(href)
        })
        .cloned()
        .collect();
    let (mut sums, mut measured) = (Vec::new(), Vec::new());
    for s in analysis::sums::sums(&design) {
        let m = all
            .iter()
            .find(|m| m.suite == s.suite)
            .and_then(|m| m.figure);
        let (Some(f), Some(m)) = (s.figure, m) else {
            continue;
        };
        println!(
            "{}\t{:.6}\t{:.6}\t{:.4}",
            s.suite.label(),
            f.mean,
            m.mean,
            f.mean / m.mean
        );
        sums.push(f.mean);
        measured.push(m.mean);
    }
    let ratios: Vec<f64> = sums.iter().zip(&measured).map(|(a, b)| a / b).collect();
    let (n, mean, low, high, within) = pooled(&ratios, 0.05).ok_or("fewer than two sums")?;
    println!("pooled\t{n}\t{mean:.4}\t{low:.4}\t{high:.4}\t{within}");
    println!("spearman\t{:.3}", spearman(&sums, &measured));
    Ok(())
}

/// A writer that copies into a buffer, round and round (a sink that does the work).
struct Ring(Vec<u8>, usize);

impl Write for Ring {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len() - self.1);
        self.0[self.1..self.1 + n].copy_from_slice(&buf[..n]);
        self.1 = (self.1 + n) % self.0.len();
        std::hint::black_box(&self.0);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `payload`: GB/s of the payload generator (a 1 MiB random block, repeated) into
/// memory and through an OS pipe to a reader that discards, as into ssh's stdin.
fn payload() -> Result<(), String> {
    let block = Payload::random(1 << 20, 1);
    let total: u64 = 8 << 30;
    let t = Instant::now();
    block
        .write_repeated(&mut Ring(vec![0; 8 << 20], 0), total, 0)
        .map_err(|e| e.to_string())?;
    let memory = total as f64 / t.elapsed().as_secs_f64() / 1e9;
    let mut child = Command::new("cat")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().expect("piped");
    let total: u64 = 4 << 30;
    let t = Instant::now();
    block
        .write_repeated(&mut stdin, total, 0)
        .map_err(|e| e.to_string())?;
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    let pipe = total as f64 / t.elapsed().as_secs_f64() / 1e9;
    println!("{memory:.2}\t{pipe:.2}");
    Ok(())
}

/// CPU seconds (own, children excluded) and peak resident KiB of a live process.
fn own_usage(pid: u32) -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command name.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    Some((ticks as f64 / hz, hwm))
}

/// `watch OUT -- CMD ARGS...`: run CMD (stdin/stdout/stderr inherited), sampling its
/// own CPU time and peak memory every 50 ms; writes `wall_s  cpu_s  peak_kib` to OUT
/// and exits with CMD's status.
fn watch(args: &[String]) -> ExitCode {
    let (Some(out), Some("--")) = (args.first(), args.get(1).map(String::as_str)) else {
        eprintln!("usage: benchkit watch OUT -- CMD ARGS...");
        return ExitCode::FAILURE;
    };
    let start = Instant::now();
    let mut child = match Command::new(&args[2]).args(&args[3..]).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("benchkit: {}: {e}", args[2]);
            return ExitCode::FAILURE;
        }
    };
    let mut last = (0.0, 0);
    let status = loop {
        // A process that just exited has its final CPU times but no memory figures.
        if let Some((cpu, hwm)) = own_usage(child.id()) {
            last = (f64::max(last.0, cpu), last.1.max(hwm));
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                eprintln!("benchkit: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let line = format!(
        "{:.3}\t{:.3}\t{}\n",
        start.elapsed().as_secs_f64(),
        last.0,
        last.1
    );
    if let Err(e) = std::fs::write(out, line) {
        eprintln!("benchkit: {out}: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_orders() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 2.0]), [3.5, 1.0, 3.5, 2.0]);
        // One swap among four: 1 - 6·2/(4·15) = 0.8.
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn pooled_ratios() {
        // 0.9 and 1/0.9 cancel in the geometric mean; only 1.0 lies within 5%.
        let (n, mean, low, high, within) = pooled(&[0.9, 1.0, 1.0 / 0.9], 0.05).unwrap();
        assert_eq!((n, within), (3, 1));
        assert!((mean - 1.0).abs() < 1e-12);
        // Logs -0.105, 0, 0.105: sd 0.105, t(2) = 4.303, half-width 4.303 · 0.105 / √3.
        let half = 4.302_652_7 * 0.9f64.ln().abs() / 3f64.sqrt();
        assert!((low - (-half).exp()).abs() < 1e-6 && (high - half.exp()).abs() < 1e-6);
        // A consistent 8% high reading stays high, whatever the scatter of single rows.
        let (_, mean, low, _, within) = pooled(&[1.06, 1.10, 1.07, 1.09], 0.05).unwrap();
        assert!(mean > 1.07 && low > 1.05 && within == 0);
        assert_eq!(pooled(&[1.0], 0.05), None);
        assert_eq!(pooled(&[f64::NAN, -1.0], 0.05), None);
    }
}
