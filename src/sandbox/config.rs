//! The sandbox's sshd_config: rendered from directives, checked with `sshd -t`, options
//! this sshd does not know dropped, and the algorithm names it accepts found by bisection.

use super::keys::HostKey;
use super::privsep::Privsep;
use crate::model::AlgoKind;
use anyhow::{Context, Result, bail};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

/// Keep the names `accepts` takes, testing whole sublists and bisecting only where a
/// list is rejected: one `sshd -t` per kind in the common case.
pub fn filter_accepted(
    names: &[String],
    accepts: &mut dyn FnMut(&[String]) -> bool,
) -> Vec<String> {
    if names.is_empty() {
        return Vec::new();
    }
    if accepts(names) {
        return names.to_vec();
    }
    if names.len() == 1 {
        return Vec::new();
    }
    let (a, b) = names.split_at(names.len() / 2);
    let mut out = filter_accepted(a, accepts);
    out.extend(filter_accepted(b, accepts));
    out
}

/// Options that only some sshd versions know; dropped when this sshd rejects them.
const OPTIONAL: &[&str] = &[
    "PerSourcePenalties",
    "SetEnv",
    "PermitUserRC",
    "UsePAM",
    "KbdInteractiveAuthentication",
    "PrintLastLog",
];

/// The sandbox's sshd_config, built up and validated with `sshd -t`.
pub(super) struct SshdConfig {
    lines: Vec<(String, String)>,
    pub algorithms: Vec<(AlgoKind, String)>,
}

impl SshdConfig {
    pub fn new(dir: &Path, home: &Path, user: &str, keys: &[HostKey]) -> Self {
        let q = |p: &Path| format!("\"{}\"", p.display());
        let mut lines: Vec<(String, String)> = vec![
            ("ListenAddress".into(), "127.0.0.1".into()),
            ("AddressFamily".into(), "inet".into()),
            ("PidFile".into(), q(&dir.join("sshd.pid"))),
            ("AuthorizedKeysFile".into(), q(&dir.join("authorized_keys"))),
            ("StrictModes".into(), "no".into()),
            ("PubkeyAuthentication".into(), "yes".into()),
            ("PasswordAuthentication".into(), "no".into()),
            ("KbdInteractiveAuthentication".into(), "no".into()),
            ("UsePAM".into(), "no".into()),
            ("PermitRootLogin".into(), "prohibit-password".into()),
            ("AllowUsers".into(), user.to_string()),
            ("UseDNS".into(), "no".into()),
            ("PrintMotd".into(), "no".into()),
            ("PrintLastLog".into(), "no".into()),
            ("PermitUserRC".into(), "no".into()),
            ("X11Forwarding".into(), "no".into()),
            ("AllowTcpForwarding".into(), "no".into()),
            ("AllowAgentForwarding".into(), "no".into()),
            ("PermitTunnel".into(), "no".into()),
            ("MaxStartups".into(), "100:30:200".into()),
            ("LoginGraceTime".into(), "60".into()),
            ("LogLevel".into(), "INFO".into()),
            // Quoted: one SetEnv line takes several NAME=value words.
            (
                "SetEnv".into(),
                format!("\"HOME={}\" \"TMPDIR={}\"", home.display(), home.display()),
            ),
            ("PerSourcePenalties".into(), "no".into()),
            // The workloads (sftp-put, sftp-get) need it; internal: no binary to find.
            ("Subsystem".into(), "sftp internal-sftp".into()),
        ];
        for k in keys {
            lines.push(("HostKey".into(), q(&k.path)));
        }
        SshdConfig {
            lines,
            algorithms: Vec::new(),
        }
    }

    /// What the options change: forwarding, no SFTP, the sessions' PATH.
    pub fn apply(&mut self, opts: &super::SandboxOptions) {
        if opts.forwarding {
            self.set("AllowTcpForwarding", "yes");
        }
        if opts.x11 {
            self.set("X11Forwarding", "yes");
        }
        if let Some(xauth) = &opts.xauth {
            self.set("XAuthLocation", &format!("\"{}\"", xauth.display()));
        }
        if opts.log_kex {
            self.set("LogLevel", "DEBUG1");
        }
        if opts.no_sftp {
            self.lines.retain(|(k, _)| k != "Subsystem");
        }
        if let Some(path) = &opts.session_path {
            for (k, v) in &mut self.lines {
                if k == "SetEnv" {
                    v.push_str(&format!(" \"PATH={path}\""));
                }
            }
        }
    }

    /// Replace a directive's value, or add the directive.
    pub fn set(&mut self, key: &str, value: &str) {
        let mut found = false;
        for (k, v) in &mut self.lines {
            if k == key {
                *v = value.to_string();
                found = true;
            }
        }
        if !found {
            self.lines.push((key.to_string(), value.to_string()));
        }
    }

    pub fn render(&self, port: u16) -> String {
        let mut s = format!("# sshbench sandbox\nPort {port}\n");
        for (k, v) in &self.lines {
            s.push_str(&format!("{k} {v}\n"));
        }
        for (kind, list) in &self.algorithms {
            s.push_str(&format!("{} {list}\n", kind.config_keyword()));
        }
        s
    }

    /// Run `sshd -t` on the config plus extra `-o` options; the combined output on failure.
    fn test(&self, sshd: &Path, extra: &[String]) -> Result<std::result::Result<(), String>> {
        let file = tempfile::NamedTempFile::new()?;
        fs::write(file.path(), self.render(22))?;
        let mut cmd = Command::new(sshd);
        cmd.arg("-t")
            .arg("-f")
            .arg(file.path())
            .stdin(Stdio::null());
        for o in extra {
            cmd.arg("-o").arg(o);
        }
        let out = cmd
            .output()
            .with_context(|| format!("running {} -t", sshd.display()))?;
        Ok(if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout))
        })
    }

    pub fn accepts(&self, sshd: &Path, kind: AlgoKind, list: &[String]) -> bool {
        let opt = format!("{}={}", kind.config_keyword(), list.join(","));
        matches!(self.test(sshd, &[opt]), Ok(Ok(())))
    }

    /// Drop options this sshd does not know and, as root, create a missing
    /// privilege-separation directory or user. Returns the privsep guard (root only).
    pub fn make_valid(&mut self, sshd: &Path) -> Result<Option<Privsep>> {
        let mut privsep = nix::unistd::geteuid()
            .is_root()
            .then(Privsep::acquire)
            .transpose()?;
        for _ in 0..12 {
            let err = match self.test(sshd, &[])? {
                Ok(()) => {
                    if let Some(p) = &privsep {
                        p.share()?;
                    }
                    return Ok(privsep);
                }
                Err(e) => e,
            };
            if let Some(opt) = bad_option(&err) {
                if OPTIONAL.iter().any(|o| o.eq_ignore_ascii_case(&opt)) {
                    self.lines.retain(|(k, _)| !k.eq_ignore_ascii_case(&opt));
                    continue;
                }
            }
            if let Some(p) = privsep.as_mut() {
                if let Some(dir) = after(&err, "Missing privilege separation directory: ") {
                    p.create_dir(Path::new(&dir))?;
                    continue;
                }
                // OpenSSH says "separated", HPN-SSH's hpnsshd "separation".
                let user = after(&err, "Privilege separated user ")
                    .or_else(|| after(&err, "Privilege separation user "));
                if let Some(rest) = user {
                    let name = rest.split_whitespace().next().unwrap_or("sshd").to_string();
                    p.create_user(&name)?;
                    continue;
                }
            }
            bail!(
                "the sandbox sshd ({}) rejects its configuration:\n{}",
                sshd.display(),
                err.trim()
            );
        }
        // Unreachable in practice: every round fixes one problem or fails.
        privsep.take();
        bail!(
            "could not produce a configuration {} accepts",
            sshd.display()
        )
    }
}

/// The option named in "Bad configuration option: X" / "Unsupported option X".
fn bad_option(err: &str) -> Option<String> {
    after(err, "Bad configuration option: ")
        .or_else(|| after(err, "Unsupported option "))
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
}

/// The rest of the first line containing `marker`, after it.
fn after(text: &str, marker: &str) -> Option<String> {
    text.lines().find_map(|l| {
        l.split_once(marker)
            .map(|(_, rest)| rest.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sshd_complaints() {
        assert_eq!(
            bad_option("/tmp/x: line 12: Bad configuration option: PerSourcePenalties\n"),
            Some("PerSourcePenalties".into())
        );
        assert_eq!(
            after(
                "Missing privilege separation directory: /run/sshd\n",
                "Missing privilege separation directory: "
            ),
            Some("/run/sshd".into())
        );
    }
}
