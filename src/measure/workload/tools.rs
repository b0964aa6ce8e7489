//! The workloads' command lines: the server-side scripts (a private directory, the
//! count of what arrived, the clean-up), the same as sftp batches for a login that runs
//! no commands, and the `sftp`, `rsync` and `scp` invocations over the master connection.

use super::super::master::Master;
use super::super::remote;
use super::data::tree_dir;
use crate::model::{Doing, Outcome, Shape, Tool};
use crate::sys::cancel::Cancel;
use crate::sys::run::{self, Finished};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Line prefixes of the server scripts' answers.
pub const DIR: &str = "SSHBENCH-DIR";
pub const RSYNC: &str = "SSHBENCH-RSYNC";
pub const SCP: &str = "SSHBENCH-SCP";
pub const COUNT: &str = "SSHBENCH-COUNT";
pub const SPACE: &str = "SSHBENCH-SPACE";

/// The setup's status when it ran and could not make the directory.
pub const SETUP_FAILED: i32 = 97;

/// Make a private directory on the server (`mktemp -d`: mode 0700) in `within` (a plain
/// path, see `--remote-dir`), else in `$TMPDIR` or `/tmp`, with `put` and `src` in it,
/// print its absolute path, say whether the server has rsync and scp, and how much room
/// its disk has (POSIX `df -Pk`'s line).
pub fn setup_command(within: Option<&str>) -> String {
    let parent = match within {
        Some(dir) => format!("cd \"{dir}\" || exit {SETUP_FAILED}; p=$(pwd); "),
        None => "p=\"${TMPDIR:-/tmp}\"; ".into(),
    };
    remote::sh(&format!(
        "{parent}d=$(mktemp -d \"$p/sshbench.XXXXXX\") || exit {SETUP_FAILED}; \
         mkdir \"$d/put\" \"$d/src\" || exit {SETUP_FAILED}; echo {DIR} $d; \
         if command -v rsync >/dev/null 2>&1; then echo {RSYNC}; fi; \
         if command -v scp >/dev/null 2>&1; then echo {SCP}; fi; \
         echo {SPACE} $(df -Pk \"$d\" 2>/dev/null | tail -n 1)"
    ))
}

/// Bytes free for the setup's directory, from `df -Pk`'s line: the field before the
/// capacity (`97%`), in KiB; the file system's name and mount point may hold spaces.
pub fn parse_space(stdout: &str) -> Option<u64> {
    let line = stdout.lines().find_map(|l| l.strip_prefix(SPACE))?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    let capacity = fields.iter().position(|f| f.ends_with('%'))?;
    let kib: u64 = fields.get(capacity.checked_sub(1)?)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The server's directory from the setup's answer, only if it looks like one `mktemp`
/// makes: an absolute path of plain characters ending in `sshbench.XXXXXX` (it goes
/// into later commands, and an `rm -rf`).
pub fn parse_dir(stdout: &str) -> Option<String> {
    let at = stdout.find(DIR)? + DIR.len();
    let dir = stdout[at..].lines().next()?.trim().to_string();
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

/// What the login shell printed before the setup's answer (its start-up files run before
/// every command), as it may be shown; `None` when nothing. scp's classic protocol and
/// rsync's read it as their peer's first words and fail.
pub fn shell_output(stdout: &str) -> Option<String> {
    let before = &stdout[..stdout.find(DIR)?];
    let said = before.split_whitespace().collect::<Vec<_>>().join(" ");
    (!said.is_empty()).then(|| remote::printable(&said))
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

/// A fresh name for sftp's private directory, in its start directory (the shape
/// [`parse_dir`] takes, so the clean-up only ever removes what looks like ours).
fn sftp_dir_name() -> String {
    let tail: String = std::iter::repeat_with(fastrand::alphanumeric)
        .take(10)
        .collect();
    format!("sshbench.{tail}")
}

/// sftp's directory: a fresh name in `within` (see `--remote-dir`), else in sftp's
/// start directory.
pub fn sftp_dir(within: Option<&str>) -> String {
    match within {
        Some(dir) => format!("{}/{}", dir.trim_end_matches('/'), sftp_dir_name()),
        None => sftp_dir_name(),
    }
}

/// Make `name` with `put` and `src` in it, private where the server allows `chmod`.
pub fn sftp_setup_batch(name: &str) -> String {
    format!("mkdir {name}\n-chmod 700 {name}\nmkdir {name}/put\nmkdir {name}/src\n")
}

/// Directories listed per sftp run: about 100 files each, so that a listing stays well
/// within the output kept of a command ([`run::MAX_OUTPUT`]).
const DIRS_PER_LISTING: usize = 20;

/// Long listings of what arrived at `path`: the file, or the tree's files directory by
/// directory, a few directories per batch.
pub fn sftp_count_batches(path: &str, shape: Shape, tree_dirs: u32) -> Vec<String> {
    if shape == Shape::File {
        return vec![format!("ls -ln {path}\n")];
    }
    let dirs: Vec<String> = (0..tree_dirs).map(tree_dir).collect();
    (dirs.chunks(DIRS_PER_LISTING))
        .map(|chunk| {
            // A directory that is missing is a count short, not a failed listing.
            let each = chunk.iter().map(|d| format!("-ls -ln {d}/*\n"));
            format!("cd {path}\n{}", each.collect::<String>())
        })
        .collect()
}

/// `(files, bytes)` of the regular files in sftp's long listings (`-rw-r--r--  1 0  0
/// 16384 Dec  4 04:10 name`): size is the fifth field.
pub fn parse_ls(stdout: &str) -> (u64, u64) {
    // Saturating: a server's sizes that would wrap add up to a total that cannot match.
    (stdout.lines())
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<u64>().ok())
        .fold((0, 0), |(n, b), size| (n + 1, b.saturating_add(size)))
}

/// Remove sftp's directory `name` and everything a sample may have left in it; each
/// step may fail (nothing there) without stopping the rest.
pub fn sftp_cleanup_batch(name: &str, tree_dirs: u32) -> String {
    let mut out = String::new();
    for side in ["put", "src"] {
        let tree = format!("{name}/{side}/tree");
        out += &format!("-rm {name}/{side}/file\n");
        for d in (0..tree_dirs).map(tree_dir) {
            out += &format!("-rm {tree}/{d}/*\n-rmdir {tree}/{d}\n");
        }
        out += &format!("-rmdir {tree}\n-rmdir {name}/{side}\n");
    }
    out + &format!("-rmdir {name}\n")
}

/// `sftp` over a master connection, a batch file at a time.
#[derive(Clone, Copy)]
pub struct Sftp<'a> {
    /// The client's `sftp`.
    pub tool: &'a Path,
    pub ssh: &'a Path,
    pub master: &'a Master,
    /// Where the batch files go.
    pub scratch: &'a Path,
}

impl Sftp<'_> {
    /// Run `batch` (with the tool option variant `options`) to its end.
    pub fn run(
        &self,
        batch: &str,
        options: Option<&str>,
        timeout: Duration,
        cancel: &Cancel,
    ) -> Result<Finished, Outcome> {
        let failed = |e: std::io::Error| Outcome::local(Doing::BatchFile, e);
        let mut file = tempfile::Builder::new()
            .prefix("batch.")
            .tempfile_in(self.scratch)
            .map_err(failed)?;
        std::io::Write::write_all(&mut file, batch.as_bytes()).map_err(failed)?;
        let mut cmd = Command::new(self.tool);
        cmd.arg("-q")
            .arg("-b")
            .arg(file.path())
            .arg("-S")
            .arg(self.ssh);
        cmd.args(options.unwrap_or_default().split_whitespace());
        cmd.args(self.master.attach_options())
            .args(["--", &self.master.tool_destination()]);
        run::run(cmd, timeout, cancel).map_err(|e| {
            Outcome::local(Doing::RunningTool, format!("{}: {e}", self.tool.display()))
        })
    }
}

/// One leg of a workload: from where to where.
pub struct Leg<'a> {
    pub tool: Tool,
    pub shape: Shape,
    pub put: bool,
    pub local: &'a Path,
    pub remote: &'a str,
}

fn quoted(p: &Path) -> Result<String, Outcome> {
    let s = p.display().to_string();
    if s.contains(['"', '\n', '\r']) {
        return Err(Outcome::local(Doing::QuotingPath, format!("{s:?}")));
    }
    Ok(format!("\"{s}\""))
}

/// An sftp batch file's one command for `leg`.
pub fn sftp_batch(leg: &Leg) -> Result<String, Outcome> {
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

/// `scp` over the master for `leg`: the classic protocol (`-O`, where the client's scp
/// would otherwise speak SFTP; `classic_flag`), a tree recursively, into a destination
/// that does not exist yet (so it is made with the tree's contents).
pub fn scp_command(
    tool: &Path,
    classic_flag: bool,
    ssh: &Path,
    master: &Master,
    leg: &Leg,
) -> Command {
    let mut cmd = Command::new(tool);
    if classic_flag {
        cmd.arg("-O");
    }
    cmd.arg("-q");
    if leg.shape == Shape::Tree {
        cmd.arg("-r");
    }
    cmd.arg("-S").arg(ssh).args(master.attach_options());
    let local = leg.local.display().to_string();
    let remote = format!("{}:{}", master.tool_destination(), leg.remote);
    let ends = if leg.put {
        [local, remote]
    } else {
        [remote, local]
    };
    cmd.arg("--").args(ends);
    cmd
}

/// Whether the client's `scp` takes `-O` (OpenSSH 9.0 on, where SFTP became its
/// default); an older one knows the classic protocol alone and refuses the option.
pub fn scp_takes_classic_flag(scp: &Path, cancel: &Cancel) -> bool {
    let mut cmd = Command::new(scp);
    cmd.arg("-O");
    // Without operands scp prints its usage; only an old one names the option refused.
    run::run(cmd, Duration::from_secs(10), cancel)
        .is_ok_and(|f| !f.stderr.contains("option -- O") && !f.stderr.contains("option -- 'O'"))
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
    fn the_room_on_the_server_s_disk_is_read_from_df() {
        let out = "SSHBENCH-DIR /tmp/sshbench.a\n\
                   SSHBENCH-SPACE tmpfs 8192 7680 512 94% /tmp\n";
        assert_eq!(parse_space(out), Some(512 * 1024));
        let spaced = "SSHBENCH-SPACE //nas/My Share 100 20 80 20% /mnt/My Backups\n";
        assert_eq!(parse_space(spaced), Some(80 * 1024));
        for unknown in ["SSHBENCH-SPACE\n", "SSHBENCH-SPACE x 1 2 many 3 /\n", ""] {
            assert_eq!(parse_space(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn what_the_login_shell_printed_first_is_kept_printable() {
        let clean = "SSHBENCH-DIR /tmp/sshbench.Ab12Cd\nSSHBENCH-RSYNC\n";
        assert_eq!(shell_output(clean), None);
        assert_eq!(shell_output("\n \nSSHBENCH-DIR /tmp/sshbench.a\n"), None);
        let noisy = "Welcome to\n\u{1b}[1mthe NAS\nSSHBENCH-DIR /tmp/sshbench.Ab12Cd\n";
        assert_eq!(
            shell_output(noisy).as_deref(),
            Some("Welcome to ?[1mthe NAS")
        );
        // Printed without a newline: the answer still parses, after what was said.
        let glued = "Welcome!SSHBENCH-DIR /tmp/sshbench.Ab12Cd\nSSHBENCH-SCP\n";
        assert_eq!(shell_output(glued).as_deref(), Some("Welcome!"));
        assert_eq!(parse_dir(glued).as_deref(), Some("/tmp/sshbench.Ab12Cd"));
        // No answer at all: nothing to tell the shell's words from a failure's.
        assert_eq!(shell_output("Welcome\n"), None);
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
            setup_command(None),
            setup_command(Some("/mnt/backup")),
            count_command("/tmp/sshbench.a/put"),
            cleanup_command("/tmp/sshbench.a"),
        ] {
            assert!(cmd.starts_with("sh -c '"), "{cmd}");
        }
    }

    #[test]
    fn sftp_batches_make_list_and_remove_only_their_own_directory() {
        let name = sftp_dir(None);
        // The shape the command route accepts, with a random tail.
        assert!(parse_dir(&format!("{DIR} /{name}")).is_some(), "{name}");
        assert_ne!(name, sftp_dir(None));
        let within = sftp_dir(Some("/"));
        assert!(parse_dir(&format!("{DIR} {within}")).is_some(), "{within}");
        assert!(sftp_dir(Some("upload")).starts_with("upload/sshbench."));
        assert_eq!(
            sftp_setup_batch("sshbench.a"),
            "mkdir sshbench.a\n-chmod 700 sshbench.a\nmkdir sshbench.a/put\nmkdir sshbench.a/src\n"
        );
        let clean = sftp_cleanup_batch("sshbench.a", 2);
        // Every line may fail alone and names nothing outside the directory.
        assert!(
            clean
                .lines()
                .all(|l| l.starts_with('-') && l.contains(" sshbench.a"))
        );
        assert!(clean.contains("-rm sshbench.a/src/tree/d01/*\n-rmdir sshbench.a/src/tree/d01\n"));
        assert!(
            clean.ends_with("-rmdir sshbench.a/src\n-rmdir sshbench.a\n"),
            "{clean}"
        );
        assert_eq!(
            sftp_count_batches("sshbench.a/put/file", Shape::File, 3),
            ["ls -ln sshbench.a/put/file\n"]
        );
        // 45 directories: listings of 20, 20 and 5.
        let tree = sftp_count_batches("sshbench.a/put/tree", Shape::Tree, 45);
        let lists: Vec<usize> = tree
            .iter()
            .map(|b| b.matches("-ls -ln d").count())
            .collect();
        assert_eq!(lists, [20, 20, 5]);
        assert!(
            tree[2].starts_with("cd sshbench.a/put/tree\n-ls -ln d40/*\n"),
            "{tree:?}"
        );
    }

    #[test]
    fn sftp_listings_count_regular_files_only() {
        let out = "sftp> cd sshbench.a/put/tree\n\
                   sftp> -ls -ln d00/*\n\
                   -rw-r--r--    ? 0        0           16384 Dec  4 04:10 d00/f0000\n\
                   -rwxr-xr-x    1 1000     1000        16384 Dec  4  2025 d00/f0001 x\n\
                   drwxr-xr-x    ? 0        0            4096 Dec  4 04:10 d00/sub\n\
                   lrwxrwxrwx    ? 0        0              10 Dec  4 04:10 d00/link\n\
                   -rw-r--r--    ? 0        0      notanumber Dec  4 04:10 d00/odd\n\
                   -rw-r--r--\n";
        assert_eq!(parse_ls(out), (2, 32768));
        assert_eq!(parse_ls(""), (0, 0));
        // Sizes that would wrap (a hostile server) saturate instead: no panic, no match.
        let huge = "-rw-r--r-- 1 u u 18446744073709551615 Jan 1 a\n-rw-r--r-- 1 u u 5 Jan 1 b";
        assert_eq!(parse_ls(huge), (2, u64::MAX));
        assert_eq!(
            parse_space("SSHBENCH-SPACE /dev/x 1 1 18446744073709551615 1% /"),
            None
        );
    }

    /// An scp from before OpenSSH 9.0 refuses `-O` (BSD's and glibc's wording); a newer
    /// one, this machine's included, prints its usage.
    #[test]
    fn the_classic_flag_is_given_to_an_scp_that_takes_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fake = |name: &str, said: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("#!/bin/sh\necho \"{said}\" >&2\nexit 1\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            scp_takes_classic_flag(&path, &Cancel::new())
        };
        assert!(!fake("bsd", "scp: unknown option -- O"));
        assert!(!fake("glibc", "scp: invalid option -- 'O'"));
        assert!(fake("new", "usage: scp [-346ABCOpqRrsTv] [-c cipher]"));
        let scp = super::super::on_path("scp").expect("scp installed");
        assert!(scp_takes_classic_flag(&scp, &Cancel::new()));
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
