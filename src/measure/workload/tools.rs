//! The workloads' command lines: the server-side scripts (a private directory, the
//! count of what arrived, the clean-up) and the `sftp` and `rsync` invocations over the
//! master connection.

use super::super::remote;
use crate::model::{Shape, Tool};
use std::path::Path;

/// Line prefixes of the server scripts' answers.
pub const DIR: &str = "SSHBENCH-DIR";
pub const RSYNC: &str = "SSHBENCH-RSYNC";
pub const COUNT: &str = "SSHBENCH-COUNT";

/// Make a private directory on the server (`mktemp -d`: mode 0700) with `put` and `src`
/// in it, print its path, and say whether the server has rsync.
pub fn setup_command() -> String {
    remote::sh(&format!(
        "d=$(mktemp -d \"${{TMPDIR:-/tmp}}/sshbench.XXXXXX\") || exit 97; \
         mkdir \"$d/put\" \"$d/src\" || exit 97; echo {DIR} $d; \
         if command -v rsync >/dev/null 2>&1; then echo {RSYNC}; fi"
    ))
}

/// The server's directory from the setup's answer, only if it looks like one `mktemp`
/// makes: an absolute path of plain characters ending in `sshbench.XXXXXX` (it goes
/// into later commands, and an `rm -rf`).
pub fn parse_dir(stdout: &str) -> Option<String> {
    let dir = stdout
        .lines()
        .find_map(|l| l.strip_prefix(DIR))?
        .trim()
        .to_string();
    let plain = dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    let name = dir.rsplit('/').next()?;
    let ok = plain
        && dir.starts_with('/')
        && !dir.contains("..")
        && name
            .strip_prefix("sshbench.")
            .is_some_and(|r| !r.is_empty());
    ok.then_some(dir)
}

/// Count the regular files under `path` (a file or a tree) and their bytes.
pub fn count_command(path: &str) -> String {
    remote::sh(&format!(
        "n=$(find {path} -type f | wc -l) && b=$(find {path} -type f -exec cat {{}} + | wc -c) && echo {COUNT} $n $b"
    ))
}

/// `(files, bytes)` from the count's answer.
pub fn parse_count(stdout: &str) -> Option<(u64, u64)> {
    let rest = stdout.lines().find_map(|l| l.strip_prefix(COUNT))?;
    let mut it = rest.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// Remove the private directory (and only one that is ours).
pub fn cleanup_command(dir: &str) -> String {
    remote::sh(&format!("case {dir} in */sshbench.*) rm -rf {dir};; esac"))
}

/// One leg of a workload: from where to where.
pub struct Leg<'a> {
    pub tool: Tool,
    pub shape: Shape,
    pub put: bool,
    pub local: &'a Path,
    pub remote: &'a str,
}

fn quoted(p: &Path) -> Result<String, String> {
    let s = p.display().to_string();
    if s.contains(['"', '\n', '\r']) {
        return Err(format!("{s:?}: a temp path sftp cannot quote"));
    }
    Ok(format!("\"{s}\""))
}

/// An sftp batch file's one command for `leg`.
pub fn sftp_batch(leg: &Leg) -> Result<String, String> {
    let local = quoted(leg.local)?;
    let r = if leg.shape == Shape::Tree { " -r" } else { "" };
    Ok(match leg.put {
        true => format!("put{r} {local} \"{}\"\n", leg.remote),
        false => format!("get{r} \"{}\" {local}\n", leg.remote),
    })
}

/// The `-e` command rsync runs: `ssh` with the options that attach to the master,
/// each quoted if it has a space (rsync splits the command at spaces, honouring quotes).
pub fn rsync_shell(ssh: &Path, attach: &[String]) -> String {
    std::iter::once(ssh.display().to_string())
        .chain(attach.iter().cloned())
        .map(|a| {
            if !a.contains(' ') {
                a
            } else if a.contains('"') {
                format!("'{a}'")
            } else {
                format!("\"{a}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// rsync's source and destination for `leg`: a tree as `dir/` (its contents).
pub fn rsync_paths(leg: &Leg, destination: &str) -> [String; 2] {
    let slash = if leg.shape == Shape::Tree { "/" } else { "" };
    let local = format!("{}{slash}", leg.local.display());
    let remote = format!("{destination}:{}{slash}", leg.remote);
    if leg.put {
        [local, remote]
    } else {
        [remote, local]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_mktemp_path_is_taken() {
        let ok = "motd\nSSHBENCH-DIR /tmp/sshbench.Ab12Cd\nSSHBENCH-RSYNC\n";
        assert_eq!(parse_dir(ok).as_deref(), Some("/tmp/sshbench.Ab12Cd"));
        for bad in [
            "SSHBENCH-DIR /tmp/x",
            "SSHBENCH-DIR /",
            "SSHBENCH-DIR tmp/sshbench.a",
            "SSHBENCH-DIR /tmp/sshbench.",
            "SSHBENCH-DIR /tmp/$(reboot)/sshbench.a",
            "SSHBENCH-DIR /tmp/a b/sshbench.a",
            "SSHBENCH-DIR /tmp/../sshbench.a",
            "nothing",
        ] {
            assert_eq!(parse_dir(bad), None, "{bad}");
        }
    }

    #[test]
    fn counts_parse_and_scripts_are_shell_safe() {
        assert_eq!(
            parse_count("SSHBENCH-COUNT  2000 32768000\n"),
            Some((2000, 32768000))
        );
        assert_eq!(parse_count("SSHBENCH-COUNT 1\n"), None);
        // `remote::sh` refuses anything a login shell would mangle.
        for cmd in [
            setup_command(),
            count_command("/tmp/sshbench.a/put"),
            cleanup_command("/tmp/sshbench.a"),
        ] {
            assert!(cmd.starts_with("sh -c '"), "{cmd}");
        }
    }

    #[test]
    fn command_lines_name_both_ends() {
        let local = Path::new("/l/tree");
        let leg = Leg {
            tool: Tool::Rsync,
            shape: Shape::Tree,
            put: true,
            local,
            remote: "/tmp/sshbench.a/put/tree",
        };
        assert_eq!(
            rsync_paths(&leg, "nas"),
            ["/l/tree/", "nas:/tmp/sshbench.a/put/tree/"]
        );
        let get = Leg {
            put: false,
            shape: Shape::File,
            ..leg
        };
        assert_eq!(
            rsync_paths(&get, "nas"),
            ["nas:/tmp/sshbench.a/put/tree", "/l/tree"]
        );
        assert_eq!(
            sftp_batch(&get).unwrap(),
            "get \"/tmp/sshbench.a/put/tree\" \"/l/tree\"\n"
        );
        let shell = rsync_shell(Path::new("/usr/bin/ssh"), &["-o".into(), "User=a b".into()]);
        assert_eq!(shell, "/usr/bin/ssh -o \"User=a b\"");
    }
}
