//! Connect pairs that were not measured, as sums. A connection costs its key
//! exchange's work plus its host key's signature plus a constant, so with each key
//! exchange measured beside one host key (the reference) and each host key beside one
//! key exchange, any other pair is t(kex, ref hk) + t(ref kex, hk) − t(ref kex, ref hk),
//! its interval the three intervals added in quadrature (independent samples).

use super::{SuiteStats, Summary};
use crate::model::{AlgoKind, Mode, Suite};

/// The name of `kind` measured beside the most names of the other kind: the reference.
fn reference(measured: &[&SuiteStats], kind: AlgoKind) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for s in measured {
        let name = s.suite.get(kind)?.to_string();
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let best = counts.iter().map(|c| c.1).max()?;
    (best > 1).then(|| counts.into_iter().find(|c| c.1 == best).map(|c| c.0))?
}

fn summed(a: &Summary, b: &Summary, r: &Summary) -> Summary {
    let mean = a.mean + b.mean - r.mean;
    let ci = |s: &Summary| s.ci95.map(|c| c * c);
    let ci95 = match (ci(a), ci(b), ci(r)) {
        (Some(x), Some(y), Some(z)) => Some((x + y + z).sqrt()),
        _ => None,
    };
    Summary {
        n: a.n.min(b.n).min(r.n),
        mean,
        median: mean,
        min: mean,
        max: mean,
        sd: (a.sd * a.sd + b.sd * b.sd + r.sd * r.sd).sqrt(),
        ci95,
        outliers: 0,
    }
}

/// The connect pairs `stats` did not measure, each as a sum (`SuiteStats::sum`), when
/// the measured pairs are the factorized design (every key exchange beside one host
/// key and every host key beside one key exchange); nothing otherwise.
pub fn sums(stats: &[SuiteStats]) -> Vec<SuiteStats> {
    let measured: Vec<&SuiteStats> = (stats.iter())
        .filter(|s| s.mode == Mode::Connect && s.figure.is_some() && !s.sum)
        .collect();
    let (Some(kref), Some(href)) = (
        reference(&measured, AlgoKind::Kex),
        reference(&measured, AlgoKind::HostKey),
    ) else {
        return Vec::new();
    };
    let find = |k: &str, h: &str| {
        (measured.iter())
            .find(|s| s.suite.kex.as_deref() == Some(k) && s.suite.hostkey.as_deref() == Some(h))
    };
    let Some(base) = find(&kref, &href).and_then(|s| s.figure) else {
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
    for (k, kf) in with(AlgoKind::Kex, AlgoKind::HostKey, &href) {
        for (h, hf) in with(AlgoKind::HostKey, AlgoKind::Kex, &kref) {
            if find(k, h).is_some() {
                continue;
            }
            let suite = Suite {
                kex: Some(k.to_string()),
                hostkey: Some(h.to_string()),
                ..Suite::default()
            };
            let mut s = SuiteStats::empty(Mode::Connect, suite);
            s.figure = Some(summed(&kf, &hf, &base));
            s.ok = s.figure.map_or(0, |f| f.n);
            s.sum = true;
            out.push(s);
        }
    }
    out
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

    #[test]
    fn unmeasured_pairs_are_the_sum_of_their_parts() {
        let stats = [
            pair("curve25519-sha256", "ssh-ed25519", &[0.100, 0.102, 0.098]),
            pair("sntrup", "ssh-ed25519", &[0.110, 0.112, 0.108]),
            pair("curve25519-sha256", "rsa-sha2-512", &[0.130, 0.131, 0.129]),
        ];
        let sums = sums(&stats);
        assert_eq!(sums.len(), 1);
        let s = &sums[0];
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
}
