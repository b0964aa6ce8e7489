//! Algorithm filters with `ssh_config` syntax: `a,b` (only these), `+a,b` (append),
//! `-pat` (remove), `^a,b` (move to the front), `*`/`?` wildcards, and `@FILE` lists
//! (one name per line, `#` comments), like the `kex.lst`/`ciphers.lst` files of classic
//! benchmark scripts.
//!
//! The base list a filter applies to is every name the client supports: sshbench
//! measures everything by default, so `-` and `^` are the useful prefixes.

use crate::model::{AlgoKind, AlgoLists, FilterSpec, Filters};
use anyhow::{Result, bail};
use std::path::Path;

/// Parse a filter argument; `@FILE` is read here (the only I/O in this module).
pub fn parse(text: &str) -> Result<FilterSpec> {
    let text = text.trim();
    let body = match text.strip_prefix('@') {
        Some(path) => read_list_file(Path::new(path))?,
        None => text.to_string(),
    };
    let (op, rest): (fn(Vec<String>) -> FilterSpec, &str) = match body.chars().next() {
        Some('+') => (FilterSpec::Append, &body[1..]),
        Some('-') => (FilterSpec::Remove, &body[1..]),
        Some('^') => (FilterSpec::Front, &body[1..]),
        _ => (FilterSpec::Only, &body[..]),
    };
    let names: Vec<String> = rest
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        bail!("the filter {text:?} names no algorithm");
    }
    if let Some(bad) = names
        .iter()
        .find(|n| n.chars().any(|c| c.is_whitespace() || c.is_control()))
    {
        bail!("{bad:?} is not an algorithm name");
    }
    Ok(op(names))
}

/// A list file: one name per line (or comma-separated), `#` starts a comment.
fn read_list_file(path: &Path) -> Result<String> {
    // A list of every algorithm there is fits in a few KiB.
    let text = crate::sys::files::read_limited(path, 1 << 20, "the algorithm list")?;
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    if names.is_empty() {
        bail!("the algorithm list {} is empty", path.display());
    }
    Ok(names.join(","))
}

/// One client's filters in a run of several (`--ssh`): the patterns that match
/// something it has; another client's names (a newer ssh's key exchange) are not its
/// to measure. `None` names a pattern no client has, for the caller's error.
pub fn known_to<'a>(
    filters: &'a Filters,
    lists: &AlgoLists,
    every: &[&AlgoLists],
) -> std::result::Result<Filters, (AlgoKind, &'a str)> {
    let mut out = filters.clone();
    for kind in [
        AlgoKind::Kex,
        AlgoKind::HostKey,
        AlgoKind::Cipher,
        AlgoKind::Mac,
    ] {
        let Some(spec) = filters.get(kind) else {
            continue;
        };
        let has = |l: &AlgoLists, p: &str| {
            l.get(kind)
                .unwrap_or_default()
                .iter()
                .any(|n| matches(p, n))
        };
        if let Some(p) = spec
            .patterns()
            .iter()
            .find(|p| !every.iter().any(|l| has(l, p)))
        {
            return Err((kind, p.as_str()));
        }
        let mut own = spec.clone();
        own.patterns_mut().retain(|p| has(lists, p));
        if let Some(slot) = out.get_mut(kind) {
            *slot = Some(own);
        }
    }
    Ok(out)
}

/// `ssh_config` pattern matching: `*` any run, `?` one character.
pub fn matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

fn expand<'a>(patterns: &[String], base: &'a [String], what: &str) -> Result<Vec<&'a String>> {
    let mut out: Vec<&String> = Vec::new();
    for p in patterns {
        let hits: Vec<&String> = base.iter().filter(|n| matches(p, n)).collect();
        if hits.is_empty() {
            bail!(
                "unknown {what} {p:?}: this ssh client supports {}",
                base.join(", ")
            );
        }
        for h in hits {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    Ok(out)
}

/// The `run` option that filters names of `kind`.
pub fn option(kind: AlgoKind) -> &'static str {
    match kind {
        AlgoKind::Kex => "--kex",
        AlgoKind::HostKey => "--hostkeys",
        AlgoKind::Cipher => "--ciphers",
        AlgoKind::Mac => "--macs",
        AlgoKind::Compression => "--compression",
    }
}

/// Whether `spec` lets `name` be measured (the filters that add or reorder keep all).
pub fn keeps(spec: &FilterSpec, name: &str) -> bool {
    match spec {
        FilterSpec::Only(p) => p.iter().any(|pat| matches(pat, name)),
        FilterSpec::Remove(p) => !p.iter().any(|pat| matches(pat, name)),
        FilterSpec::Append(_) | FilterSpec::Front(_) => true,
    }
}

/// Apply a filter to the client's list of one kind (`what` names the kind in errors).
pub fn apply(spec: &FilterSpec, base: &[String], what: &str) -> Result<Vec<String>> {
    let out: Vec<String> = match spec {
        FilterSpec::Only(p) => expand(p, base, what)?.into_iter().cloned().collect(),
        FilterSpec::Append(p) => {
            expand(p, base, what)?;
            base.to_vec()
        }
        FilterSpec::Remove(p) => {
            expand(p, base, what)?;
            base.iter().filter(|n| keeps(spec, n)).cloned().collect()
        }
        FilterSpec::Front(p) => {
            let front = expand(p, base, what)?;
            let mut v: Vec<String> = front.iter().map(|s| s.to_string()).collect();
            v.extend(base.iter().filter(|n| !front.contains(n)).cloned());
            v
        }
    };
    if out.is_empty() {
        bail!("the {what} filter leaves nothing to measure");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn a_filter_keeps_what_it_names_or_does_not_remove() {
        let only = parse("aes128-*,chacha20-poly1305@openssh.com").unwrap();
        assert!(keeps(&only, "aes128-ctr") && keeps(&only, "chacha20-poly1305@openssh.com"));
        assert!(!keeps(&only, "aes256-ctr"));
        let remove = parse("-*-cbc").unwrap();
        assert!(keeps(&remove, "aes128-ctr") && !keeps(&remove, "aes128-cbc"));
        for adds in ["+3des-cbc", "^aes256-ctr"] {
            assert!(keeps(&parse(adds).unwrap(), "aes128-ctr"), "{adds}");
        }
    }

    #[test]
    fn wildcards() {
        assert!(matches("aes*-ctr", "aes128-ctr"));
        assert!(matches("*-etm@openssh.com", "hmac-sha1-etm@openssh.com"));
        assert!(matches("aes1?8-gcm*", "aes128-gcm@openssh.com"));
        assert!(!matches("aes*-ctr", "aes128-cbc"));
        assert!(matches("*", ""));
    }

    #[test]
    fn prefixes() {
        let base = v("a1,a2,b1,c1");
        assert_eq!(
            apply(&parse("b1,a*").unwrap(), &base, "cipher").unwrap(),
            v("b1,a1,a2")
        );
        assert_eq!(
            apply(&parse("-a*").unwrap(), &base, "cipher").unwrap(),
            v("b1,c1")
        );
        assert_eq!(
            apply(&parse("^c1").unwrap(), &base, "cipher").unwrap(),
            v("c1,a1,a2,b1")
        );
        assert_eq!(
            apply(&parse("+b1").unwrap(), &base, "cipher").unwrap(),
            base
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let base = v("a1,a2");
        let e = apply(&parse("zz").unwrap(), &base, "cipher")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown cipher \"zz\"") && e.contains("a1, a2"),
            "{e}"
        );
        let e = apply(&parse("-a*").unwrap(), &base, "MAC")
            .unwrap_err()
            .to_string();
        assert!(e.contains("leaves nothing"), "{e}");
        assert!(parse(" , ").is_err());
        assert!(parse("a b").is_err());
        assert!(
            parse("@/nonexistent/list")
                .unwrap_err()
                .to_string()
                .contains("/nonexistent/list")
        );
    }

    #[test]
    fn list_files_like_the_classic_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ciphers.lst");
        std::fs::write(
            &f,
            "# fast ones\naes128-ctr\n\naes128-gcm@openssh.com  # AEAD\n",
        )
        .unwrap();
        assert_eq!(
            parse(&format!("@{}", f.display())).unwrap(),
            FilterSpec::Only(v("aes128-ctr,aes128-gcm@openssh.com"))
        );
        std::fs::write(&f, "# nothing\n").unwrap();
        assert!(parse(&format!("@{}", f.display())).is_err());
    }
}
