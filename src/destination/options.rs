//! ssh's own `-F FILE` and `-o Option=value` for a destination, checked: an option that
//! would decide what sshbench measures, or weaken host key checking, is refused with
//! what to use instead.

use anyhow::{Result, bail};
use std::path::Path;

/// Options sshbench sets itself for every sample, and what to use instead.
const SET_BY_SSHBENCH: &[(&str, &str)] = &[
    ("ciphers", "--ciphers"),
    ("macs", "--macs"),
    ("kexalgorithms", "--kex"),
    ("hostkeyalgorithms", "--hostkeys"),
    ("compression", "--compression"),
    (
        "controlmaster",
        "nothing: every sample is a connection of its own",
    ),
    (
        "controlpath",
        "nothing: every sample is a connection of its own",
    ),
    (
        "controlpersist",
        "nothing: every sample is a connection of its own",
    ),
    (
        "batchmode",
        "nothing: sshbench never prompts; key-based login must work unattended",
    ),
    ("requesttty", "nothing: sessions run without a terminal"),
    (
        "updatehostkeys",
        "nothing: sshbench never adds keys to known_hosts",
    ),
];

/// Set on every ssh that connects, before the user's options (ssh takes an option's first
/// value): ssh would otherwise add the server's other host keys to `known_hosts`
/// (OpenSSH's default since 8.5 where the key was known), and sshbench writes nothing
/// there.
pub const NO_HOST_KEY_UPDATES: &str = "UpdateHostKeys=no";

/// Split `Option=value` or `Option value` into a lower-case name and the value.
fn split(option: &str) -> Option<(String, &str)> {
    let option = option.trim();
    let at = option.find(|c: char| c == '=' || c.is_whitespace())?;
    let (name, rest) = option.split_at(at);
    let value = rest
        .trim_start_matches(|c: char| c == '=' || c.is_whitespace())
        .trim();
    (!name.is_empty() && !value.is_empty()).then(|| (name.to_ascii_lowercase(), value))
}

/// Check one `-o` option.
fn check(option: &str) -> Result<()> {
    let Some((name, value)) = split(option) else {
        bail!("-o {option:?} is not Option=value (as in `ssh -o Port=2222`)");
    };
    if let Some((_, instead)) = SET_BY_SSHBENCH.iter().find(|(n, _)| *n == name) {
        bail!("-o {option:?}: sshbench sets this option for every sample; use {instead}");
    }
    let off = matches!(
        value.to_ascii_lowercase().as_str(),
        "no" | "off" | "accept-new"
    );
    if name == "stricthostkeychecking" && off {
        bail!(
            "-o {option:?}: sshbench never weakens host key checking; connect once with plain \
             `ssh DEST` to verify and record the server's host key"
        );
    }
    if name == "userknownhostsfile" && value == "/dev/null" {
        bail!(
            "-o {option:?}: sshbench never weakens host key checking; keep the known_hosts \
             file that holds the server's key"
        );
    }
    Ok(())
}

/// ssh's arguments for `-F config` and each `-o option`, in order, after checking them.
pub fn ssh_args(config: Option<&Path>, options: &[String]) -> Result<Vec<String>> {
    let mut args = Vec::new();
    if let Some(file) = config {
        if !file.is_file() {
            bail!("-F {}: no such ssh config file", file.display());
        }
        args.extend(["-F".to_string(), file.display().to_string()]);
    }
    for o in options {
        check(o)?;
        args.extend(["-o".to_string(), o.trim().to_string()]);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(o: &str) -> String {
        ssh_args(None, &[o.to_string()]).unwrap_err().to_string()
    }

    #[test]
    fn ordinary_options_pass_in_order() {
        let args = ssh_args(None, &["Port=2222".into(), "ProxyJump bastion".into()]).unwrap();
        assert_eq!(args, ["-o", "Port=2222", "-o", "ProxyJump bastion"]);
    }

    #[test]
    fn options_sshbench_sets_name_the_option_to_use() {
        assert!(err("Ciphers=aes128-ctr").contains("--ciphers"));
        assert!(err("macs=hmac-sha1").contains("--macs"));
        assert!(err("KexAlgorithms curve25519-sha256").contains("--kex"));
        assert!(err("HostKeyAlgorithms=ssh-ed25519").contains("--hostkeys"));
        assert!(err("Compression=yes").contains("--compression"));
        assert!(err("ControlMaster=auto").contains("connection of its own"));
    }

    #[test]
    fn host_key_checking_stays_on() {
        assert!(err("StrictHostKeyChecking=no").contains("never weakens"));
        assert!(err("stricthostkeychecking accept-new").contains("never weakens"));
        assert!(err("UserKnownHostsFile=/dev/null").contains("never weakens"));
        assert!(ssh_args(None, &["StrictHostKeyChecking=yes".into()]).is_ok());
    }

    #[test]
    fn malformed_options_and_missing_files_are_errors() {
        assert!(err("Port").contains("Option=value"));
        assert!(err("=2222").contains("Option=value"));
        let missing = ssh_args(Some(Path::new("/nonexistent/ssh_config")), &[]);
        assert!(
            missing
                .unwrap_err()
                .to_string()
                .contains("no such ssh config file")
        );
    }
}
