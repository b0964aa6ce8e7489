//! Pairs that were not measured, as sums of measured parts. A connection costs its key
//! exchange's work plus its host key's signature plus a constant; a byte of a transfer
//! costs its cipher's time plus its MAC's plus a constant, and so does a keystroke's
//! round trip. So with each name of one kind measured beside one name of the other (the
//! reference) and each name of the other kind beside one of the first, any other pair is
//! t(a, ref b) + t(ref a, b) − t(ref a, ref b): in seconds for connect and echo, in
//! seconds per byte for send and receive (a rate's reciprocal). Its interval is the
//! three intervals added in quadrature (independent samples). bench/results/notebook.md
//! ("Connect: key exchanges and host keys measured apart", "Cipher × MAC measured
//! apart") checks the sums against the pairs measured.

use super::{SuiteStats, Summary};
use crate::model::{AlgoKind, Mode, Suite};

/// How a mode's suites factor: the two kinds that vary, and whether their figure adds
/// as it is or as its reciprocal.
struct Factors {
    a: AlgoKind,
    b: AlgoKind,
    reciprocal: bool,
}

fn factors(mode: Mode) -> Option<Factors> {
    let (a, b, reciprocal) = match mode {
        Mode::Connect => (AlgoKind::Kex, AlgoKind::HostKey, false),
        Mode::Send | Mode::Receive => (AlgoKind::Cipher, AlgoKind::Mac, true),
        Mode::Echo => (AlgoKind::Cipher, AlgoKind::Mac, false),
        _ => return None,
    };
    Some(Factors { a, b, reciprocal })
}

/// A summed pair and the three measured suites it is the sum of: `(a, ref b)`,
/// `(ref a, b)` and the reference pair.
pub struct Sum {
    pub stats: SuiteStats,
    pub parts: [Suite; 3],
}

/// The name of `kind` measured beside the most names of the other kind: the reference.
fn reference(measured: &[&SuiteStats], kind: AlgoKind) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for name in measured.iter().filter_map(|s| s.suite.get(kind)) {
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let best = counts.iter().map(|c| c.1).max()?;
    (best > 1).then(|| {
        counts
            .into_iter()
            .find(|c| c.1 == best)
            .map(|c| c.0.to_string())
    })?
}

/// A figure on the scale its parts add on, and back.
fn to_additive(s: &Summary, reciprocal: bool) -> Option<(f64, Option<f64>, f64)> {
    if !reciprocal {
        return Some((s.mean, s.ci95, s.sd));
    }
    (s.mean > 0.0).then(|| {
        let m2 = s.mean * s.mean;
        (1.0 / s.mean, s.ci95.map(|c| c / m2), s.sd / m2)
    })
}

fn summed(parts: [&Summary; 3], reciprocal: bool) -> Option<Summary> {
    let [a, b, r] = parts.map(|p| to_additive(p, reciprocal));
    let ((ma, ca, sa), (mb, cb, sb), (mr, cr, sr)) = (a?, b?, r?);
    let mean = ma + mb - mr;
    if reciprocal && mean <= 0.0 {
        return None;
    }
    let quadrature = |x: f64, y: f64, z: f64| (x * x + y * y + z * z).sqrt();
    let ci = match (ca, cb, cr) {
        (Some(x), Some(y), Some(z)) => Some(quadrature(x, y, z)),
        _ => None,
    };
    let sd = quadrature(sa, sb, sr);
    // Back to a rate: the reciprocal, its spread by the same first-order rule.
    let (mean, ci, sd) = if reciprocal {
        let back = 1.0 / mean;
        (back, ci.map(|c| c * back * back), sd * back * back)
    } else {
        (mean, ci, sd)
    };
    Some(Summary {
        n: parts.iter().map(|p| p.n).min().unwrap_or(0),
        mean,
        median: mean,
        min: mean,
        max: mean,
        sd,
        ci95: ci,
        outliers: 0,
    })
}

/// What two suites of one family share: everything but the two kinds that vary.
fn family(suite: &Suite, f: &Factors) -> Suite {
    let mut rest = suite.clone();
    rest.set(f.a, None);
    rest.set(f.b, None);
    rest
}

fn pair(rest: &Suite, f: &Factors, a: &str, b: &str) -> Suite {
    let mut s = rest.clone();
    s.set(f.a, Some(a.to_string()));
    s.set(f.b, Some(b.to_string()));
    s
}

/// The sums of one family: its measured pairs (both kinds named) in one mode.
fn family_sums(mode: Mode, f: &Factors, rest: &Suite, measured: &[&SuiteStats]) -> Vec<Sum> {
    let (Some(aref), Some(bref)) = (reference(measured, f.a), reference(measured, f.b)) else {
        return Vec::new();
    };
    let find = |a: &str, b: &str| {
        (measured.iter()).find(|s| s.suite.get(f.a) == Some(a) && s.suite.get(f.b) == Some(b))
    };
    let Some(base) = find(&aref, &bref).and_then(|s| s.figure) else {
        return Vec::new();
    };
    // Each name of `kind` measured beside the reference of the other kind.
    let with = |kind: AlgoKind, other: AlgoKind, name: &str| -> Vec<(&str, Summary)> {
        (measured.iter())
            .filter(|s| s.suite.get(other) == Some(name))
            .filter_map(|s| Some((s.suite.get(kind)?, s.figure?)))
            .collect()
    };
    let mut out = Vec::new();
    for (a, af) in with(f.a, f.b, &bref) {
        for (b, bf) in with(f.b, f.a, &aref) {
            if find(a, b).is_some() {
                continue;
            }
            let Some(figure) = summed([&af, &bf, &base], f.reciprocal) else {
                continue;
            };
            let mut s = SuiteStats::empty(mode, pair(rest, f, a, b));
            s.figure = Some(figure);
            s.ok = figure.n;
            s.sum = true;
            let parts =
                [(a, &*bref), (&*aref, b), (&*aref, &*bref)].map(|(x, y)| pair(rest, f, x, y));
            out.push(Sum { stats: s, parts });
        }
    }
    out
}

/// Every pair `stats` did not measure, with its parts, where the measured pairs of a
/// mode are the factorized design (every name of one kind beside one reference of the
/// other, and the other way round); nothing for a whole product.
pub fn sums_with_parts(stats: &[SuiteStats]) -> Vec<Sum> {
    let mut families: Vec<(Mode, Suite)> = Vec::new();
    for s in stats.iter().filter(|s| !s.sum && s.figure.is_some()) {
        let Some(f) = factors(s.mode) else { continue };
        if s.suite.get(f.a).is_none() || s.suite.get(f.b).is_none() {
            continue;
        }
        let key = (s.mode, family(&s.suite, &f));
        if !families.contains(&key) {
            families.push(key);
        }
    }
    let mut out = Vec::new();
    for (mode, rest) in families {
        let f = factors(mode).expect("a family's mode factors");
        let measured: Vec<&SuiteStats> = (stats.iter())
            .filter(|s| s.mode == mode && !s.sum && s.figure.is_some())
            .filter(|s| s.suite.get(f.a).is_some() && s.suite.get(f.b).is_some())
            .filter(|s| family(&s.suite, &f) == rest)
            .collect();
        out.extend(family_sums(mode, &f, &rest, &measured));
    }
    out
}

/// The unmeasured pairs as summed rows (`SuiteStats::sum`).
pub fn sums(stats: &[SuiteStats]) -> Vec<SuiteStats> {
    sums_with_parts(stats)
        .into_iter()
        .map(|s| s.stats)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;

    fn pair(k: &str, h: &str, secs: &[f64]) -> SuiteStats {
        let suite = Suite {
            kex: Some(k.into()),
            hostkey: Some(h.into()),
            ..Suite::default()
        };
        let mut s = SuiteStats::empty(Mode::Connect, suite);
        s.figure = summarize(secs);
        s.ok = secs.len();
        s
    }

    fn session(mode: Mode, c: &str, m: Option<&str>, figures: &[f64]) -> SuiteStats {
        let suite = Suite {
            cipher: Some(c.into()),
            mac: m.map(str::to_string),
            ..Suite::default()
        };
        let mut s = SuiteStats::empty(mode, suite);
        s.figure = summarize(figures);
        s.ok = figures.len();
        s
    }

    #[test]
    fn unmeasured_pairs_are_the_sum_of_their_parts() {
        let stats = [
            pair("curve25519-sha256", "ssh-ed25519", &[0.100, 0.102, 0.098]),
            pair("sntrup", "ssh-ed25519", &[0.110, 0.112, 0.108]),
            pair("curve25519-sha256", "rsa-sha2-512", &[0.130, 0.131, 0.129]),
        ];
        let sums = sums_with_parts(&stats);
        assert_eq!(sums.len(), 1);
        let s = &sums[0].stats;
        assert!(s.sum);
        assert_eq!(s.suite.label(), "sntrup + rsa-sha2-512");
        let f = s.figure.unwrap();
        // 0.110 + 0.130 − 0.100.
        assert!((f.mean - 0.140).abs() < 1e-9, "{f:?}");
        // Three intervals in quadrature: wider than any one of them.
        let widest = (stats.iter())
            .map(|s| s.figure.unwrap().ci95.unwrap())
            .fold(0.0, f64::max);
        assert!(f.ci95.unwrap() > widest, "{f:?}");
        assert_eq!(f.n, 3);
        let parts: Vec<String> = sums[0].parts.iter().map(Suite::label).collect();
        assert_eq!(
            parts,
            [
                "sntrup + ssh-ed25519",
                "curve25519-sha256 + rsa-sha2-512",
                "curve25519-sha256 + ssh-ed25519"
            ]
        );
    }

    #[test]
    fn the_whole_product_or_one_host_key_needs_no_sums() {
        let full = [
            pair("a", "x", &[0.1, 0.1]),
            pair("a", "y", &[0.2, 0.2]),
            pair("b", "x", &[0.3, 0.3]),
            pair("b", "y", &[0.4, 0.4]),
        ];
        assert!(sums(&full).is_empty());
        let one = [pair("a", "x", &[0.1]), pair("b", "x", &[0.2])];
        assert!(sums(&one).is_empty());
    }

    #[test]
    fn transfer_rates_add_as_seconds_per_byte() {
        // ctr + sha2: 1 ns/B (1 GB/s); cbc + sha2: 2 ns/B; ctr + sha1: 1.5 ns/B. So cbc
        // + sha1 takes 2 + 1.5 − 1 = 2.5 ns/B: 400 MB/s, not 1e9 × (0.5 + 0.667 − 1).
        let stats = [
            session(Mode::Send, "ctr", Some("sha2"), &[1.0e9, 1.01e9, 0.99e9]),
            session(Mode::Send, "cbc", Some("sha2"), &[0.5e9, 0.505e9, 0.495e9]),
            session(Mode::Send, "ctr", Some("sha1"), &[2e9 / 3.0; 3]),
            // AEAD ciphers have no MAC: never a part.
            session(Mode::Send, "gcm", None, &[2e9, 2e9, 2e9]),
        ];
        let sums = sums(&stats);
        assert_eq!(sums.len(), 1);
        let f = sums[0].figure.unwrap();
        assert_eq!(sums[0].suite.label(), "cbc + sha1");
        assert!((f.mean / 4e8 - 1.0).abs() < 1e-9, "{f:?}");
        // The interval, on the rate's scale, is wider than each part's relative one.
        assert!(f.relative_ci().unwrap() > 0.01, "{f:?}");
        // Echo round trips add as they are.
        let echo = [
            session(Mode::Echo, "ctr", Some("sha2"), &[100e-6; 2]),
            session(Mode::Echo, "cbc", Some("sha2"), &[110e-6; 2]),
            session(Mode::Echo, "ctr", Some("sha1"), &[105e-6; 2]),
        ];
        let e = super::sums(&echo)[0].figure.unwrap();
        assert!((e.mean - 115e-6).abs() < 1e-12, "{e:?}");
    }

    #[test]
    fn compressed_suites_are_a_family_of_their_own() {
        let zlib = |mut s: SuiteStats| {
            s.suite.compression = Some("zlib@openssh.com".into());
            s
        };
        let stats = [
            session(Mode::Receive, "ctr", Some("sha2"), &[1e9; 2]),
            session(Mode::Receive, "cbc", Some("sha2"), &[5e8; 2]),
            zlib(session(Mode::Receive, "ctr", Some("sha2"), &[1e8; 2])),
            zlib(session(Mode::Receive, "ctr", Some("sha1"), &[9e7; 2])),
            zlib(session(Mode::Receive, "cbc", Some("sha2"), &[8e7; 2])),
        ];
        let sums = sums(&stats);
        assert_eq!(sums.len(), 1, "only the compressed family is factorized");
        assert_eq!(
            sums[0].suite.compression.as_deref(),
            Some("zlib@openssh.com")
        );
        assert_eq!(sums[0].suite.label(), "cbc + sha1 + zlib@openssh.com");
    }
}
