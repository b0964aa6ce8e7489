//! A fleet's destinations: those on the command line and those of a hosts file (one
//! per line, `[user@]host[:port]` or an ssh_config alias, `#` to the end of a line a
//! comment, blank lines ignored), each checked like a single destination.

use super::Target;
use anyhow::{Result, bail};
use std::collections::HashMap;

/// The destinations of a hosts file's text; `name` says where it came from in errors.
pub fn parse_hosts(text: &str, name: &str) -> Result<Vec<String>> {
    let mut hosts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        if line.split_whitespace().count() > 1 {
            bail!("{name}:{}: one destination per line, not {line:?}", n + 1);
        }
        if let Err(e) = Target::parse(line) {
            bail!("{name}:{}: {e:#}", n + 1);
        }
        hosts.push(line.to_string());
    }
    Ok(hosts)
}

/// The fleet's destinations in order: the command line's, then the hosts file's.
/// A destination named twice is refused (its samples would be measured twice, and
/// the results pooled as one host's).
pub fn fleet(given: &[String], file: &[String]) -> Result<Vec<String>> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let all: Vec<String> = given.iter().chain(file).cloned().collect();
    for (i, h) in all.iter().enumerate() {
        if let Some(first) = seen.insert(h.as_str(), i) {
            bail!(
                "{h} is listed twice (destinations {} and {}); each host is measured once",
                first + 1,
                i + 1
            );
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_files_have_comments_blank_lines_and_checked_destinations() {
        let text =
            "# the NAS and the routers\n\npi@nas.local:2222\n  router1   # Dropbear\n[::1]:22\n";
        let hosts = parse_hosts(text, "hosts").unwrap();
        assert_eq!(hosts, ["pi@nas.local:2222", "router1", "[::1]:22"]);
        let err = parse_hosts("nas\n-oProxyCommand=x\n", "hosts").unwrap_err();
        assert!(format!("{err:#}").starts_with("hosts:2: "), "{err:#}");
        let err = parse_hosts("nas other\n", "f").unwrap_err();
        assert!(
            format!("{err:#}").contains("f:1: one destination per line"),
            "{err:#}"
        );
    }

    #[test]
    fn a_fleet_names_each_host_once() {
        let hosts = fleet(&["a".into()], &["b".into(), "c".into()]).unwrap();
        assert_eq!(hosts, ["a", "b", "c"]);
        let err = fleet(&["a".into()], &["b".into(), "a".into()]).unwrap_err();
        assert!(
            err.to_string()
                .contains("a is listed twice (destinations 1 and 3)"),
            "{err}"
        );
    }
}
