//! The workload arguments checked: the file size, the tree's `COUNTxSIZE`, and the tool
//! option variants, which may only change how the tool moves data (never what arrives,
//! or where).

use super::args::WorkloadArgs;
use super::config::parse_size;
use crate::model::{KeystrokeTiming, Mode, WorkloadSpec};
use anyhow::{Result, bail};

/// `2000x16K` as (files, bytes per file).
fn parse_tree(text: &str) -> Result<(u32, u64)> {
    let Some((count, size)) = text.trim().split_once(['x', 'X', '×']) else {
        bail!("--tree {text:?} is not COUNTxSIZE, e.g. 2000x16K");
    };
    let files: u32 = match count.trim().parse() {
        Ok(n) if (1..=100_000).contains(&n) => n,
        _ => bail!("--tree {text:?}: the count must be a number from 1 to 100000"),
    };
    Ok((files, parse_size(size)?))
}

/// Check one option variant against what the tool may be given: each flag from the
/// list, with a plain number where it takes one.
fn check_options(tool: &str, text: &str, flags: &[(&str, bool)]) -> Result<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        bail!("--{tool}-options is empty; give e.g. {:?}", flags[0].0);
    }
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (*w, None),
        };
        let Some(&(_, takes)) = flags.iter().find(|(f, _)| *f == flag) else {
            let known: Vec<&str> = flags.iter().map(|(f, _)| *f).collect();
            bail!(
                "--{tool}-options {text:?}: {w:?} is not one sshbench measures ({})",
                known.join(", ")
            );
        };
        if takes {
            let value = inline.or_else(|| it.next().copied());
            if !value.is_some_and(|v| v.parse::<u64>().is_ok_and(|n| n > 0)) {
                bail!("--{tool}-options {text:?}: {flag} takes a positive number");
            }
        } else if inline.is_some() {
            bail!("--{tool}-options {text:?}: {flag} takes no value");
        }
    }
    Ok(words.join(" "))
}

/// The tool options `--sftp-options` takes, and whether each takes a number.
const SFTP: [(&str, bool); 2] = [("-R", true), ("-B", true)];
/// The tool options `--rsync-options` takes.
const RSYNC: [(&str, bool); 4] = [
    ("--whole-file", false),
    ("--no-whole-file", false),
    ("--inplace", false),
    ("--block-size", true),
];

/// Check a stored run's workload options as the command line checks them: a database
/// row is not the user's word, and these reach sftp, rsync and the server's shell.
pub fn check_stored(spec: &WorkloadSpec) -> Result<()> {
    for o in &spec.sftp_options {
        check_options("sftp", o, &SFTP)?;
    }
    for o in &spec.rsync_options {
        check_options("rsync", o, &RSYNC)?;
    }
    if let Some(dir) = &spec.remote_dir {
        remote_dir(dir)?;
    }
    Ok(())
}

pub fn spec(a: &WorkloadArgs) -> Result<WorkloadSpec> {
    let (tree_files, tree_file_bytes) = parse_tree(&a.tree)?;
    let (sftp, rsync) = (SFTP, RSYNC);
    Ok(WorkloadSpec {
        file_bytes: parse_size(&a.file_size)?,
        tree_files,
        tree_file_bytes,
        sftp_options: a
            .sftp_options
            .iter()
            .map(|o| check_options("sftp", o, &sftp))
            .collect::<Result<_>>()?,
        rsync_options: a
            .rsync_options
            .iter()
            .map(|o| check_options("rsync", o, &rsync))
            .collect::<Result<_>>()?,
        remote_dir: a.remote_dir.as_deref().map(remote_dir).transpose()?,
        keystrokes: keystroke_variants(&a.keystroke_timing)?,
    })
}

/// `--keystroke-timing`: each variant once, in the order given.
fn keystroke_variants(given: &[String]) -> Result<Vec<KeystrokeTiming>> {
    let mut out = Vec::new();
    for g in given {
        let Some(k) = KeystrokeTiming::parse(g.trim()) else {
            bail!(
                "--keystroke-timing {g:?}: use yes, no or interval:N (N from 1 to 1000 ms), \
                 comma-separated"
            );
        };
        if !out.contains(&k) {
            out.push(k);
        }
    }
    Ok(out)
}

/// `--remote-dir`: a path the server's shell and sftp take as it is, without quoting.
fn remote_dir(dir: &str) -> Result<String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._/-".contains(c);
    if dir.is_empty() || !dir.chars().all(plain) {
        bail!(
            "--remote-dir {dir:?}: use letters, digits and . _ - / only (a relative path \
             starts at the login's home); for a directory named otherwise, a link to it on the \
             server does, e.g. `ln -s \"/volume1/My Backups\" ~/backups` and `--remote-dir \
             backups`"
        );
    }
    if dir.starts_with('-') || dir.contains("..") {
        bail!("--remote-dir {dir:?}: may not start with - or contain ..");
    }
    let d = dir.trim_end_matches('/');
    Ok(if d.is_empty() { "/".into() } else { d.into() })
}

/// The modes to measure: the ones asked for, and the raw stream each workload is
/// compared with.
pub fn with_raw_streams(mut modes: Vec<Mode>) -> Vec<Mode> {
    let raw: Vec<Mode> = modes.iter().filter_map(|m| m.raw_stream()).collect();
    modes.extend(raw);
    modes.sort();
    modes.dedup();
    modes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(tree: &str, sftp: &[&str], rsync: &[&str]) -> WorkloadArgs {
        WorkloadArgs {
            file_size: "1M".into(),
            tree: tree.into(),
            sftp_options: sftp.iter().map(|s| s.to_string()).collect(),
            rsync_options: rsync.iter().map(|s| s.to_string()).collect(),
            remote_dir: None,
            keystroke_timing: vec!["yes".into(), "no".into()],
        }
    }

    #[test]
    fn a_remote_dir_is_a_plain_path() {
        let with = |dir: &str| {
            let mut a = args("10x1K", &[], &[]);
            a.remote_dir = Some(dir.into());
            spec(&a).map(|s| s.remote_dir.unwrap())
        };
        assert_eq!(with("/mnt/backup/").unwrap(), "/mnt/backup");
        assert_eq!(with("upload").unwrap(), "upload");
        assert_eq!(with("/").unwrap(), "/");
        for bad in [
            "", "a b", "$HOME", "~/x", "a'b", "-x", "../x", "a/../b", "a\nb", "é",
        ] {
            assert!(with(bad).is_err(), "{bad:?}");
        }
        assert_eq!(spec(&args("10x1K", &[], &[])).unwrap().remote_dir, None);
        // A NAS share named with spaces is reached through a link.
        let spaced = with("/volume1/My Backups").unwrap_err().to_string();
        assert!(spaced.contains("a link to it on the server"), "{spaced}");
    }

    #[test]
    fn tree_and_options_parse() {
        let s = spec(&args(
            "2000x16K",
            &["-R  256", "-B 65536 -R 16"],
            &["--whole-file", "--block-size=4096"],
        ))
        .unwrap();
        assert_eq!(
            (s.file_bytes, s.tree_files, s.tree_file_bytes),
            (1 << 20, 2000, 16384)
        );
        assert_eq!(s.sftp_options, ["-R 256", "-B 65536 -R 16"]);
        assert_eq!(s.rsync_options, ["--whole-file", "--block-size=4096"]);
    }

    #[test]
    fn options_that_change_what_arrives_are_refused() {
        for (sftp, rsync) in [
            (vec!["-R"], vec![]),
            (vec!["-R x"], vec![]),
            (vec!["-o ProxyCommand=x"], vec![]),
            (vec![], vec!["--delete"]),
            (vec![], vec!["--whole-file=1"]),
            (vec![], vec!["-e sh"]),
            (vec![""], vec![]),
        ] {
            assert!(
                spec(&args("10x1K", &sftp, &rsync)).is_err(),
                "{sftp:?} {rsync:?}"
            );
        }
        for tree in ["10", "0x1K", "10x", "ax1K"] {
            assert!(spec(&args(tree, &[], &[])).is_err(), "{tree}");
        }
    }

    #[test]
    fn workloads_bring_their_raw_stream() {
        let m = with_raw_streams(vec![Mode::SftpPutTree, Mode::RsyncGetFile]);
        assert_eq!(
            m,
            [
                Mode::Send,
                Mode::Receive,
                Mode::SftpPutTree,
                Mode::RsyncGetFile
            ]
        );
        assert_eq!(with_raw_streams(vec![Mode::Echo]), [Mode::Echo]);
    }
}
