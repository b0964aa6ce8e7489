//! Reading OpenSSH's stderr: what was negotiated (`-v` lines) and why a session failed.
//!
//! Pure functions over the captured lines, so every message seen in the wild can be
//! pinned by a unit test.

use crate::model::{FailureKind, KeyTypes, Negotiated, Outcome, Phases, Problem};
use crate::sys::proc::messages;

/// Extract the negotiated algorithms from `ssh -v` output.
pub fn negotiated(lines: &[String]) -> Option<Negotiated> {
    let mut n = Negotiated::default();
    let mut seen = false;
    for line in lines {
        let Some(rest) = line.trim_end().strip_prefix("debug1: kex: ") else {
            continue;
        };
        if let Some(v) = rest.strip_prefix("algorithm: ") {
            n.kex = Some(v.trim().to_string());
            seen = true;
        } else if let Some(v) = rest.strip_prefix("host key algorithm: ") {
            n.hostkey = Some(v.trim().to_string());
            seen = true;
        } else if let Some(v) = rest.strip_prefix("client->server ") {
            let (c, m, z) = parse_direction(v);
            (n.cipher_cs, n.mac_cs, n.compression_cs) = (c, m, z);
            seen = true;
        } else if let Some(v) = rest.strip_prefix("server->client ") {
            let (c, m, z) = parse_direction(v);
            (n.cipher_sc, n.mac_sc, n.compression_sc) = (c, m, z);
            seen = true;
        }
    }
    seen.then_some(n)
}

type Direction = (Option<String>, Option<String>, Option<String>);

/// `cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none`
fn parse_direction(text: &str) -> Direction {
    let words: Vec<&str> = text.split_whitespace().collect();
    let value = |key: &str| {
        words
            .iter()
            .position(|w| *w == key)
            .and_then(|i| words.get(i + 1))
            .map(|v| v.to_string())
    };
    let mac = value("MAC:").filter(|m| m != "<implicit>");
    (value("cipher:"), mac, value("compression:"))
}

const REFUSALS: &[&str] = &["Unable to negotiate", "no matching"];
const AUTH: &[&str] = &["Permission denied"];
/// ssh offered more keys than the server's MaxAuthTries before the one it takes.
const TOO_MANY_TRIES: &str = "Too many authentication failures";
const HOST_KEY: &[&str] = &[
    "Host key verification failed",
    "REMOTE HOST IDENTIFICATION HAS CHANGED",
    "host key is known for",
    "No matching host key type found",
];
/// ssh's words where the server's key is not the one known_hosts holds for it.
const CHANGED_KEY: &str = "has changed and you have requested strict checking";

/// Where the key the server sent is of another type than the one known_hosts holds (a
/// HostKeyAlgorithms list that puts another type first asks for it).
fn key_types(msgs: &[&str]) -> Option<KeyTypes> {
    let word = |prefix: &str, suffix: &str| {
        msgs.iter().find_map(|m| {
            let rest = m.strip_prefix(prefix)?;
            rest.split_once(suffix).map(|(t, _)| t.to_string())
        })
    };
    let sent = word("The fingerprint for the ", " key sent by the remote host")?;
    let held = word("Offending ", " key in ")?;
    (sent != held).then_some(KeyTypes { sent, held })
}

/// A changed host key as a problem: ssh's sentence names the host (`Host key for
/// [HOST]:PORT has changed ...`).
fn key_changed(said: String, msgs: &[&str]) -> Problem {
    let host = (said.strip_prefix("Host key for "))
        .and_then(|m| m.split_once(" has changed"))
        .map(|(host, _)| host.to_string());
    Problem::KeyChanged {
        said,
        host,
        types: key_types(msgs),
    }
}

const CLIENT: &[&str] = &[
    "Bad SSH2",
    "Bad key types",
    "Unsupported option",
    "command-line line",
    "Bad configuration option",
    "unknown cipher",
    "Unknown cipher",
    "Unknown mac",
];
const NETWORK: &[&str] = &[
    "Connection refused",
    "Connection timed out",
    "Operation timed out",
    "No route to host",
    "Network is unreachable",
    "Could not resolve hostname",
    "Name or service not known",
    "Connection closed by",
    "Connection reset",
    "Connection to",
    "kex_exchange_identification",
    "Broken pipe",
    "Timeout, server",
    "banner exchange",
    // A jump host that would not forward to the server (`channel 0: open failed: ...`)
    // says so before ssh's own "Connection closed".
    "open failed: ",
];

/// Classify an ssh that exited with `status` (255 is ssh's own error) from its stderr.
/// Returns `None` when nothing in stderr explains a failure.
pub fn classify(lines: &[String]) -> Option<Outcome> {
    let msgs: Vec<&str> = messages(lines).collect();
    let find = |needles: &[&str]| {
        msgs.iter()
            .find(|m| needles.iter().any(|n| m.contains(n)))
            .map(|m| m.to_string())
    };
    // A changed host key: ssh's sentence that names the host, not its box of @ signs.
    if let Some(m) = find(&[CHANGED_KEY]).or_else(|| find(&[HOST_KEY[1]])) {
        return Some(Outcome::failed(FailureKind::HostKey, key_changed(m, &msgs)));
    }
    // Order matters: a host key refusal reads "no matching host key type found".
    if let Some(m) = find(HOST_KEY[3..].as_ref()) {
        return Some(Outcome::refused(m));
    }
    if let Some(m) = find(REFUSALS) {
        return Some(Outcome::refused(m));
    }
    if let Some(said) = find(&[TOO_MANY_TRIES]) {
        return Some(Outcome::failed(
            FailureKind::Auth,
            Problem::TooManyAuthTries { said },
        ));
    }
    for (needles, kind) in [
        (AUTH, FailureKind::Auth),
        (HOST_KEY, FailureKind::HostKey),
        (CLIENT, FailureKind::Client),
        (NETWORK, FailureKind::Network),
    ] {
        if let Some(said) = find(needles) {
            return Some(Outcome::failed(kind, Problem::Said { said }));
        }
    }
    None
}

/// Where the server's own connection starts in ssh's `-v` lines: its banner, the last
/// one logged. Through a ProxyJump the jump host's ssh logs its own connection first
/// (ssh passes `-v` on), with the same kinds of lines.
pub fn server_banner(lines: &[String]) -> Option<usize> {
    lines
        .iter()
        .rposition(|l| l.contains("debug1: Remote protocol version"))
}

/// Split a connection's `wall` time at ssh's `-v` milestones (`times[i]` is when
/// `lines[i]` arrived, since spawn). `None` when a milestone is missing.
///
/// The milestones are the server's, from [`server_banner`] on. Through any proxy there is
/// no TCP connect of ssh's own: `tcp` is then everything until the server's banner (the
/// proxy, and a jump host's whole connection), `version` nothing.
pub fn phases(
    lines: &[String],
    times: &[std::time::Duration],
    wall: std::time::Duration,
) -> Option<Phases> {
    let time = |i: usize| times.get(i).map(|t| t.as_secs_f64());
    let banner = server_banner(lines)?;
    let after = |needles: &[&str]| {
        (banner..lines.len()).find(|&i| needles.iter().any(|n| lines[i].contains(n)))
    };
    let proxied = lines[..banner]
        .iter()
        .any(|l| l.starts_with("debug1: Executing proxy command"));
    let version = time(banner)?;
    let tcp = if proxied {
        version
    } else {
        let established = lines[..banner]
            .iter()
            .rposition(|l| l.contains("debug1: Connection established"))?;
        time(established)?
    };
    let kex = time(after(&["SSH2_MSG_NEWKEYS received"])?)?.max(version);
    let auth = time(after(&["Authenticated to ", "Authentication succeeded"])?)?.max(kex);
    let end = wall.as_secs_f64().max(auth);
    Some(Phases {
        tcp,
        version: version - tcp,
        kex: kex - version,
        auth: auth - kex,
        session: end - auth,
    })
}

/// The compression factor ssh reports at exit with `-v` (`compress outgoing: raw data
/// R, compressed C, factor F`); `None` without compression.
pub fn compression_factor(lines: &[String]) -> Option<f64> {
    let mut raw = 0.0;
    let mut compressed = 0.0;
    for l in lines {
        let Some(rest) = l
            .split("compress outgoing: raw data ")
            .nth(1)
            .or_else(|| l.split("compress incoming: raw data ").nth(1))
        else {
            continue;
        };
        let nums: Vec<f64> = rest
            .split(|c: char| !c.is_ascii_digit() && c != '.')
            .filter_map(|t| t.parse().ok())
            .collect();
        if let [r, c, ..] = nums[..] {
            raw += r;
            compressed += c;
        }
    }
    (raw > 0.0).then(|| compressed / raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_changed_host_key_is_told_by_ssh_s_sentence_that_names_the_host() {
        let log = lines(
            "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n\
             @    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n\
             @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n\
             IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n\
             Host key for [127.0.0.1]:2222 has changed and you have requested strict checking.\n\
             Host key verification failed.",
        );
        let said =
            "Host key for [127.0.0.1]:2222 has changed and you have requested strict checking.";
        let changed = |said: &str, types| {
            Outcome::failed(
                FailureKind::HostKey,
                Problem::KeyChanged {
                    said: said.into(),
                    host: Some("[127.0.0.1]:2222".into()),
                    types,
                },
            )
        };
        assert_eq!(classify(&log), Some(changed(said, None)));
        // Another type than the one known: a HostKeyAlgorithms list asked for it.
        let mut typed = log.clone();
        let sent = "The fingerprint for the ED25519 key sent by the remote host is";
        typed.insert(4, sent.into());
        typed.insert(5, "Offending RSA key in /root/.ssh/known_hosts:3".into());
        let types = KeyTypes {
            sent: "ED25519".into(),
            held: "RSA".into(),
        };
        assert_eq!(classify(&typed), Some(changed(said, Some(types))));
        // Without the sentence, the box's line still tells it (without the host).
        let boxed = classify(&log[..4]).unwrap();
        assert!(matches!(
            &boxed,
            Outcome::Failed {
                kind: FailureKind::HostKey,
                problem: Problem::KeyChanged { host: None, .. }
            }
        ));
        let plain = classify(&log[5..]).unwrap();
        assert!(matches!(
            &plain,
            Outcome::Failed {
                problem: Problem::Said { .. },
                ..
            }
        ));
    }

    #[test]
    fn too_many_authentication_failures_is_its_own_problem() {
        let said = "Received disconnect from 127.0.0.1 port 22:2: Too many authentication failures";
        assert_eq!(
            classify(&lines(said)),
            Some(Outcome::failed(
                FailureKind::Auth,
                Problem::TooManyAuthTries { said: said.into() }
            ))
        );
    }

    #[test]
    fn parses_negotiated_suite_from_openssh_9() {
        let log = lines(
            "debug1: kex: algorithm: sntrup761x25519-sha512\n\
             debug1: kex: host key algorithm: ssh-ed25519\n\
             debug1: kex: server->client cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none\n\
             debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: zlib@openssh.com\n",
        );
        let n = negotiated(&log).unwrap();
        assert_eq!(n.kex.as_deref(), Some("sntrup761x25519-sha512"));
        assert_eq!(n.hostkey.as_deref(), Some("ssh-ed25519"));
        assert_eq!(n.cipher_sc.as_deref(), Some("aes128-ctr"));
        assert_eq!(n.mac_sc.as_deref(), Some("umac-64-etm@openssh.com"));
        assert_eq!(
            n.cipher_cs.as_deref(),
            Some("chacha20-poly1305@openssh.com")
        );
        assert_eq!(n.mac_cs, None);
        assert_eq!(n.compression_cs.as_deref(), Some("zlib@openssh.com"));
    }

    #[test]
    fn no_kex_lines_means_unknown() {
        assert_eq!(
            negotiated(&lines("debug1: Reading configuration data")),
            None
        );
    }

    #[test]
    fn refusal_is_not_a_failure() {
        let log = lines(
            "debug1: Connecting to 127.0.0.1\nUnable to negotiate with 127.0.0.1 port 2222: no matching cipher found. Their offer: aes128-ctr\n",
        );
        let out = classify(&log).unwrap();
        assert_eq!(out.label(), "refused");
        let said = out.problem().and_then(Problem::said).unwrap();
        assert!(said.contains("no matching cipher"), "{said}");
    }

    #[test]
    fn a_jump_host_s_refusal_to_forward_is_the_reason_given() {
        let log = lines(
            "channel 0: open failed: administratively prohibited: open failed\n\
             stdio forwarding failed\n\
             kex_exchange_identification: Connection closed by remote host\n\
             Connection closed by UNKNOWN port 65535\n",
        );
        assert_eq!(
            classify(&log).unwrap(),
            Outcome::failed(
                FailureKind::Network,
                Problem::Said {
                    said: log[0].trim().into()
                }
            )
        );
    }

    #[test]
    fn host_key_type_refusal_is_a_refusal() {
        let log = lines(
            "Unable to negotiate with 10.0.0.1 port 22: no matching host key type found. Their offer: ssh-rsa",
        );
        assert_eq!(classify(&log).unwrap().label(), "refused");
    }

    #[test]
    fn classifies_failures() {
        for (text, kind) in [
            (
                "root@127.0.0.1: Permission denied (publickey).",
                FailureKind::Auth,
            ),
            ("Host key verification failed.", FailureKind::HostKey),
            (
                "command-line line 0: Bad SSH2 cipher spec 'rot13'.",
                FailureKind::Client,
            ),
            (
                "ssh: connect to host 127.0.0.1 port 1: Connection refused",
                FailureKind::Network,
            ),
            (
                "Connection closed by 127.0.0.1 port 2222",
                FailureKind::Network,
            ),
            (
                "ssh: Could not resolve hostname nowhere.invalid: Name or service not known",
                FailureKind::Network,
            ),
        ] {
            let out = classify(&lines(text)).unwrap();
            let said = Problem::Said { said: text.into() };
            assert_eq!(out, Outcome::failed(kind, said), "{text}");
        }
    }

    #[test]
    fn phases_add_up_to_the_wall_time() {
        let log = lines(
            "debug1: Connecting to 127.0.0.1 [127.0.0.1] port 2222.\n\
             debug1: Connection established.\n\
             debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1\n\
             debug1: SSH2_MSG_KEXINIT sent\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             Authenticated to 127.0.0.1 ([127.0.0.1]:2222) using \"publickey\".\n",
        );
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        let p = phases(
            &log,
            &ms(&[5, 10, 12, 13, 40, 70]),
            Duration::from_millis(100),
        )
        .unwrap();
        assert!((p.tcp - 0.010).abs() < 1e-9 && (p.version - 0.002).abs() < 1e-9);
        assert!((p.kex - 0.028).abs() < 1e-9 && (p.auth - 0.030).abs() < 1e-9);
        assert!((p.session - 0.030).abs() < 1e-9);
        assert!((p.total() - 0.100).abs() < 1e-9);
        assert_eq!(
            phases(&log[..3], &ms(&[1, 2, 3]), Duration::from_millis(5)),
            None
        );
    }

    #[test]
    fn through_a_jump_host_the_phases_are_the_servers_own() {
        // What `ssh -v` logs through a ProxyJump (OpenSSH 9.2, shortened): the jump
        // host's ssh logs its whole connection before the server's banner arrives.
        let log = lines(
            "debug1: Setting implicit ProxyCommand from ProxyJump: ssh -v -W '[%h]:%p' jump\n\
             debug1: Executing proxy command: exec ssh -v -W '[10.0.0.2]:22' jump\n\
             debug1: Connection established.\n\
             debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             Authenticated to jump ([192.0.2.1]:22) using \"publickey\".\n\
             debug1: channel_connect_stdio_fwd: 10.0.0.2:22\n\
             debug1: Remote protocol version 2.0, remote software version dropbear_2022.83\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             Authenticated to 10.0.0.2 (via proxy) using \"publickey\".\n",
        );
        let times: Vec<Duration> = [1, 2, 10, 20, 50, 80, 90, 100, 130, 170]
            .iter()
            .map(|m| Duration::from_millis(*m))
            .collect();
        let p = phases(&log, &times, Duration::from_millis(200)).unwrap();
        let close = |a: f64, ms: f64| (a - ms / 1e3).abs() < 1e-9;
        assert!(close(p.tcp, 100.0) && close(p.version, 0.0), "{p:?}");
        assert!(close(p.kex, 30.0) && close(p.auth, 40.0), "{p:?}");
        assert!(close(p.session, 30.0), "{p:?}");
    }

    #[test]
    fn compression_factor_from_both_directions() {
        let log = lines(
            "debug1: compress outgoing: raw data 1000, compressed 250, factor 0.25\n\
             debug1: compress incoming: raw data 1000, compressed 750, factor 0.75\n",
        );
        assert_eq!(compression_factor(&log), Some(0.5));
        assert_eq!(compression_factor(&lines("debug1: nothing")), None);
    }

    #[test]
    fn debug_lines_do_not_classify() {
        assert_eq!(
            classify(&lines(
                "debug1: Connection established.\ndebug1: Permission denied"
            )),
            None
        );
        assert_eq!(
            crate::sys::proc::last_message(&lines("debug1: x\nreal error\ndebug2: y")),
            Some("real error".into())
        );
    }
}
