//! The offer through `ssh -vv` (for servers behind a ProxyJump or ProxyCommand): the
//! proposal ssh logs as `debug2: peer server KEXINIT proposal`.

use super::{Kexinit, ProbeError, ProbeMethod, ServerOffer, parse_banner};
use std::time::Duration;
/// The list of a KEXINIT that `ssh -vv` logs under this key.
fn slot<'a>(k: &'a mut Kexinit, key: &str) -> Option<&'a mut Vec<String>> {
    Some(match key {
        "KEX algorithms" => &mut k.kex,
        "host key algorithms" => &mut k.hostkey,
        "ciphers ctos" => &mut k.ciphers_cs,
        "ciphers stoc" => &mut k.ciphers_sc,
        "MACs ctos" => &mut k.macs_cs,
        "MACs stoc" => &mut k.macs_sc,
        "compression ctos" => &mut k.compression_cs,
        "compression stoc" => &mut k.compression_sc,
        "languages ctos" => &mut k.languages_cs,
        "languages stoc" => &mut k.languages_sc,
        _ => return None,
    })
}

/// One proposal as `ssh -vv` logs it: the banner logged before it, the `host:port` ssh
/// said it was authenticating to after that banner, its lists, and how many of them
/// were seen.
struct Proposal {
    banner: Option<String>,
    to: Option<String>,
    kexinit: Kexinit,
    lists: usize,
}

/// One `debug2:` line of a proposal into `p`; true at its last line (`reserved`).
fn proposal_line(p: &mut Proposal, line: &str) -> bool {
    let Some(rest) = line.strip_prefix("debug2: ") else {
        return false;
    };
    let Some((key, value)) = rest.split_once(": ") else {
        if rest.starts_with("first_kex_follows") {
            p.kexinit.first_kex_follows = rest.ends_with('1');
        }
        return rest.starts_with("reserved");
    };
    if let Some(list) = slot(&mut p.kexinit, key) {
        *list = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        p.lists += 1;
    }
    false
}

/// Read the server's proposal from `ssh -vv` stderr (the lines after
/// `debug2: peer server KEXINIT proposal`), for servers behind a jump host. Through a
/// ProxyJump the jump host's ssh logs its own connection too (ssh passes `-vv` on): the
/// server's proposal is the last one that ssh logged after `Authenticating to
/// HOST:PORT` for `server` (`hostname:port` as `ssh -G` gives them; `None`: the last
/// proposal, for an ssh known to have reached the server). `None` when no proposal is
/// the server's: one that went no further than the jump host is not.
pub fn parse_ssh_vv(lines: &[String], server: Option<&str>) -> Option<ServerOffer> {
    let mut banner = None;
    let mut to: Option<String> = None;
    let mut current: Option<Proposal> = None;
    let mut seen: Vec<Proposal> = Vec::new();
    for line in lines {
        let l = line.trim_end();
        if let Some(v) = l.split("remote software version ").nth(1) {
            banner = Some(v.trim().to_string());
            to = None;
        }
        if let Some(v) = l.strip_prefix("debug1: Authenticating to ") {
            to = v.split(" as '").next().map(str::to_string);
        }
        if l.contains("peer server KEXINIT proposal") {
            seen.extend(current.take().filter(|p| p.lists >= 8));
            current = Some(Proposal {
                banner: banner.clone(),
                to: to.clone(),
                kexinit: Kexinit::default(),
                lists: 0,
            });
            continue;
        }
        if let Some(p) = current.as_mut()
            && proposal_line(p, l)
        {
            seen.extend(current.take().filter(|p| p.lists >= 8));
        }
    }
    // A proposal cut short (no `reserved` line) still counts if its lists are there.
    seen.extend(current.filter(|p| p.lists >= 8));
    // An ssh that does not log whom it authenticates to: the last proposal, as before.
    let named = seen.iter().any(|p| p.to.is_some());
    let p = seen.into_iter().rev().find(|p| match (server, &p.to) {
        (Some(s), Some(to)) => to.eq_ignore_ascii_case(s),
        (Some(_), None) => !named,
        (None, _) => true,
    })?;
    let banner_line = p.banner.unwrap_or_default();
    let software = parse_banner(&format!("SSH-2.0-{banner_line}")).unwrap_or_default();
    Some(ServerOffer {
        banner: format!("SSH-2.0-{banner_line}"),
        software,
        pre_banner: Vec::new(),
        kexinit: p.kexinit,
        method: ProbeMethod::SshVerbose,
    })
}

/// How long past its ConnectTimeout the `ssh -vv` probe may take (a proxy's own start,
/// the key exchange) before it is killed.
const PROBE_GRACE: Duration = Duration::from_secs(10);

/// Read the server's proposal through the user's own ssh path (`ssh -vv`), for
/// destinations behind ProxyJump/ProxyCommand; `server` is its `hostname:port` as
/// `ssh -G` resolves them. Key exchange happens before authentication, so this works
/// even where login would fail.
pub fn probe_via_ssh(
    ssh: &std::path::Path,
    target: &crate::destination::Target,
    server: &str,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    let mut cmd = std::process::Command::new(ssh);
    cmd.args(["-vv", "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=no"])
        .args(["-o", "ControlPath=none", "-o", "RemoteCommand=none"])
        .args(["-o", crate::destination::NO_HOST_KEY_UPDATES])
        .arg("-o")
        .arg(format!("ConnectTimeout={}", timeout.as_secs().max(1)))
        .args(&target.ssh_options)
        .arg("--")
        .arg(&target.destination)
        .arg("exit 0");
    // A server (or proxy) that stalls after its KEXINIT holds ssh past ConnectTimeout:
    // the whole probe has a deadline of its own, and answers the process's Ctrl-C at once
    // (`run` has ssh die with sshbench too).
    let deadline = timeout + PROBE_GRACE;
    let cancel = crate::sys::cancel::Cancel::of_process();
    let out = crate::sys::run::run(cmd, deadline, &cancel)
        .map_err(|e| ProbeError::Io(format!("running {}: {e}", ssh.display())))?;
    let lines: Vec<String> = out
        .stderr
        .lines()
        .take(20_000)
        .map(|l| l.chars().take(4096).collect())
        .collect();
    // An ssh that ran `exit 0` reached the server, whatever name it logged for it (a
    // canonicalized host name, say): its last proposal is the server's.
    let reached = out.success();
    let offer = parse_ssh_vv(&lines, Some(server))
        .or_else(|| parse_ssh_vv(&lines, None).filter(|_| reached));
    offer.ok_or_else(|| {
        // A jump host that would not forward says why before ssh's own last words.
        let mut said = crate::sys::proc::messages(&lines);
        let why = said
            .find(|m| m.contains("open failed"))
            .map(str::to_string)
            .or_else(|| crate::sys::proc::last_message(&lines));
        ProbeError::Io(format!(
            "ssh -vv did not show {server}'s proposal: {}",
            why.unwrap_or_default()
        ))
    })
}
