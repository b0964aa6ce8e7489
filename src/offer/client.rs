//! The client's side of the offer: `ssh -V` and `ssh -Q ...`.
//!
//! Parsing is pure; [`query`] is the one function here that runs processes. `-Q` query
//! names differ across OpenSSH versions (no `-Q` before 6.3, no `cipher-auth` before
//! 6.5, `HostKeyAlgorithms` only in recent releases), so each list degrades to an older
//! query or to "unknown" instead of failing.

use crate::model::{AlgoKind, AlgoLists, ClientKind};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::Path;
use std::process::{Command, Stdio};

/// A software version string as ssh or a server banner states it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SoftwareVersion {
    /// The whole line, trimmed.
    pub raw: String,
    /// e.g. `OpenSSH`, `dropbear`.
    pub product: String,
    /// e.g. `9.2p1`.
    pub version: String,
}

impl SoftwareVersion {
    /// The release as (major, minor), where the version says it: `9.2p1` is (9, 2),
    /// Windows' `for_Windows_9.5p1` (9, 5).
    pub fn release(&self) -> Option<(u32, u32)> {
        let v = self
            .version
            .trim_start_matches(|c: char| !c.is_ascii_digit());
        let mut parts = v.split(|c: char| !c.is_ascii_digit());
        let major = parts.next()?.parse().ok()?;
        Some((
            major,
            parts.next().and_then(|m| m.parse().ok()).unwrap_or(0),
        ))
    }

    /// Whether it is HPN-SSH (`OpenSSH_10.2p1_hpn18.8.0`), whose windows follow the TCP
    /// buffers and which has threaded ciphers and a `none` cipher.
    pub fn is_hpn(&self) -> bool {
        is_hpn(&self.version)
    }

    /// Which kind of client it is, by its product (`OpenSSH_…`, `Dropbear v…`); `None`
    /// for any other.
    pub fn kind(&self) -> Option<ClientKind> {
        [
            ("OpenSSH", ClientKind::OpenSsh),
            ("Dropbear", ClientKind::Dropbear),
        ]
        .into_iter()
        .find_map(|(product, kind)| self.product.eq_ignore_ascii_case(product).then_some(kind))
    }

    /// Whether this ssh has `ObscureKeystrokeTiming` (OpenSSH 9.5 and later): its
    /// terminal sessions send keys on a clock, a variant a typing run measures.
    pub fn obscures_keystrokes(&self) -> bool {
        self.kind() == Some(ClientKind::OpenSsh) && self.release().is_some_and(|r| r >= (9, 5))
    }

    /// Whether this ssh takes an algorithm list that starts with `^` (its names ahead of
    /// the defaults): OpenSSH 8.1 and later.
    pub fn takes_head_lists(&self) -> bool {
        self.kind() == Some(ClientKind::OpenSsh) && self.release().is_some_and(|r| r >= (8, 1))
    }
}

/// Whether a version or banner word names HPN-SSH: its `hpn` suffix, after `_` since
/// HPN 17 (`OpenSSH_10.2p1_hpn18.8.0`, as its `ssh -V` and banner say) and after `-`
/// before (`OpenSSH_7.4p1-hpn14v5`).
pub fn is_hpn(version: &str) -> bool {
    let first = version.split([' ', ',']).next().unwrap_or("");
    let first = first.to_ascii_lowercase();
    first.contains("-hpn") || first.contains("_hpn")
}

/// Parse `ssh -V` output, e.g. `OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026`.
pub fn parse_version(text: &str) -> SoftwareVersion {
    let raw = text.lines().next().unwrap_or("").trim().to_string();
    let first = raw.split([' ', ',']).next().unwrap_or("").to_string();
    let (product, version) = match first.split_once('_') {
        Some((p, v)) => (p.to_string(), v.to_string()),
        None => (first.clone(), String::new()),
    };
    SoftwareVersion {
        raw,
        product,
        version,
    }
}

/// Parse one `ssh -Q` answer: one name per line, blank lines ignored.
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// What the local ssh client supports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClientOffer {
    pub kind: ClientKind,
    pub version: SoftwareVersion,
    pub lists: AlgoLists,
    /// Ciphers the client reports as authenticated (`ssh -Q cipher-auth`), if it can.
    pub aead_ciphers: Option<Vec<String>>,
}

impl ClientOffer {
    /// Whether a cipher is an AEAD, trusting the client's own answer when it gave one.
    pub fn is_aead(&self, cipher: &str) -> bool {
        match &self.aead_ciphers {
            Some(list) => list.iter().any(|c| c == cipher),
            None => super::catalogue::is_aead(cipher),
        }
    }
}

/// The `-Q` queries to try for each kind, newest first.
fn queries(kind: AlgoKind) -> &'static [&'static str] {
    match kind {
        AlgoKind::Kex => &["kex"],
        AlgoKind::HostKey => &["HostKeyAlgorithms", "key-sig", "key"],
        AlgoKind::Cipher => &["cipher"],
        AlgoKind::Mac => &["mac"],
        AlgoKind::Compression => &["compression"],
    }
}

/// Run `ssh -Q what`; `None` when this client does not know the query.
fn run_query(ssh: &Path, what: &str) -> Result<Option<Vec<String>>> {
    let out = Command::new(ssh)
        .args(["-Q", what])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {} -Q {what}", ssh.display()))?;
    if !out.status.success() {
        return Ok(None);
    }
    let list = parse_list(&String::from_utf8_lossy(&out.stdout));
    Ok((!list.is_empty()).then_some(list))
}

/// Ask the local ssh client what it supports.
pub fn query(ssh: &Path) -> Result<ClientOffer> {
    let out = Command::new(ssh)
        .arg("-V")
        .stdin(Stdio::null())
        .output()
        .with_context(|| {
            format!(
                "cannot run the ssh client {}; install OpenSSH (Debian: apt-get install openssh-client)",
                ssh.display()
            )
        })?;
    // ssh -V writes to stderr.
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let version = parse_version(&text);
    if version.raw.is_empty() {
        bail!("{} -V printed nothing; is it an ssh client?", ssh.display());
    }
    match version.kind() {
        Some(ClientKind::Dropbear) => return dropbear(ssh, version),
        Some(ClientKind::OpenSsh) => {}
        None => bail!(
            "{} is {}, neither OpenSSH nor Dropbear's dbclient: sshbench forces each suite \
             with their options, which this client may not take; install OpenSSH's client \
             (Debian: apt-get install openssh-client)",
            ssh.display(),
            version.raw
        ),
    }
    let mut lists = AlgoLists::new();
    for kind in AlgoKind::ALL {
        for q in queries(kind) {
            if let Some(list) = run_query(ssh, q)? {
                lists.set(kind, list);
                break;
            }
        }
    }
    let aead_ciphers = run_query(ssh, "cipher-auth")?;
    Ok(ClientOffer {
        kind: ClientKind::OpenSsh,
        version,
        lists,
        aead_ciphers,
    })
}

/// The OpenSSH client sshbench resolves destinations and reads offers with (`ssh -G`,
/// `ssh -vv`): `ssh` on PATH must be one; dbclient is measured only as a `--ssh` beside it.
pub fn query_openssh(ssh: &Path) -> Result<ClientOffer> {
    let offer = query(ssh)?;
    if offer.kind != ClientKind::OpenSsh {
        bail!(
            "{} is {}, not OpenSSH: sshbench resolves destinations and reads offers with \
             OpenSSH's ssh (ssh -G, -vv); install OpenSSH's client (Debian: apt-get install \
             openssh-client) and put it first on PATH, and give this client with --ssh to \
             measure it",
            ssh.display(),
            offer.version.raw
        );
    }
    Ok(offer)
}

/// Dropbear's dbclient: its ciphers and MACs from `-c help` and `-m help`; it has no
/// choice of key exchange or host key to list.
fn dropbear(dbclient: &Path, version: SoftwareVersion) -> Result<ClientOffer> {
    let mut lists = AlgoLists::new();
    for (kind, flag) in [(AlgoKind::Cipher, "-c"), (AlgoKind::Mac, "-m")] {
        let out = Command::new(dbclient)
            .args([flag, "help"])
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {} {flag} help", dbclient.display()))?;
        let names = dropbear_list(&String::from_utf8_lossy(&out.stderr));
        if names.is_empty() {
            bail!("{} {flag} help listed nothing", dbclient.display());
        }
        lists.set(kind, names);
    }
    Ok(ClientOffer {
        kind: ClientKind::Dropbear,
        version,
        lists,
        aead_ciphers: None,
    })
}

/// The names of `dbclient -c help` (`dbclient: Available ciphers: a,b,c`).
pub fn dropbear_list(text: &str) -> Vec<String> {
    let Some(rest) = text
        .lines()
        .find_map(|l| l.split_once("Available ").map(|(_, r)| r))
    else {
        return Vec::new();
    };
    let names = rest.split_once(':').map_or("", |(_, n)| n);
    (names.split(','))
        .map(str::trim)
        .filter(|n| crate::model::text::algorithm_name(n))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn dbclient_s_lists_are_read_from_its_help() {
        let said = "dbclient: Available ciphers: chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr\n\ndbclient: Exited: .";
        assert_eq!(
            dropbear_list(said),
            ["chacha20-poly1305@openssh.com", "aes128-ctr", "aes256-ctr"]
        );
        assert!(dropbear_list("dbclient: Exited: No valid ciphers").is_empty());
        let v = parse_version("Dropbear v2022.83");
        assert_eq!(v.product, "Dropbear");
    }

    use super::*;

    #[test]
    fn hpn_ssh_is_told_by_its_version_suffix() {
        // As HPN-SSH 18.8.0's `hpnssh -V` and banner read.
        let hpn = parse_version("OpenSSH_10.2p1_hpn18.8.0, OpenSSL 3.0.19 27 Jan 2026");
        assert!(hpn.is_hpn());
        assert_eq!(hpn.kind(), Some(ClientKind::OpenSsh));
        assert!(is_hpn("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0"));
        // Before HPN 17.
        assert!(is_hpn("SSH-2.0-OpenSSH_7.4p1-hpn14v5"));
        assert!(!parse_version("OpenSSH_9.2p1 Debian-2+deb12u7, OpenSSL 3.0.17").is_hpn());
        // A distribution's word after the version is not the version.
        assert!(!is_hpn("OpenSSH_9.2p1 chpn-build"));
    }

    #[test]
    fn parses_debian_openssh_version() {
        let v = parse_version("OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026\n");
        assert_eq!(v.product, "OpenSSH");
        assert_eq!(v.version, "9.2p1");
        assert_eq!(
            v.raw,
            "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026"
        );
    }

    #[test]
    fn parses_macos_and_bsd_versions() {
        let v = parse_version("OpenSSH_9.8p1, LibreSSL 3.3.6");
        assert_eq!(
            (v.product.as_str(), v.version.as_str()),
            ("OpenSSH", "9.8p1")
        );
        let v = parse_version("OpenSSH_9.7, LibreSSL 3.9.0");
        assert_eq!(v.version, "9.7");
        // Windows' port is OpenSSH too (the product check lets it through).
        let v = parse_version("OpenSSH_for_Windows_9.5p1, LibreSSL 3.8.2");
        assert_eq!(v.product, "OpenSSH");
    }

    #[test]
    fn head_lists_come_with_openssh_8_1() {
        let takes = |line: &str| parse_version(line).takes_head_lists();
        assert!(takes(
            "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026"
        ));
        assert!(takes("OpenSSH_8.1p1, OpenSSL 1.1.1"));
        assert!(takes("OpenSSH_10.0p2, OpenSSL 3.5.0"));
        assert!(takes("OpenSSH_for_Windows_9.5p1, LibreSSL 3.8.2"));
        assert!(!takes("OpenSSH_8.0p1, OpenSSL 1.1.1c"));
        assert!(!takes("OpenSSH_7.4p1, OpenSSL 1.0.2k-fips"));
        assert!(!takes("Dropbear v2022.83"));
        assert!(!takes(""));
        assert_eq!(
            parse_version("OpenSSH_9.7, LibreSSL").release(),
            Some((9, 7))
        );
    }

    #[test]
    fn version_without_underscore_keeps_product() {
        let v = parse_version("Dropbear v2022.83");
        assert_eq!(v.product, "Dropbear");
        assert_eq!(v.version, "");
    }

    #[test]
    fn list_ignores_blank_lines_and_whitespace() {
        assert_eq!(parse_list("a\n\n b \r\nc"), vec!["a", "b", "c"]);
        assert!(parse_list("").is_empty());
    }

    #[test]
    fn aead_prefers_the_clients_answer() {
        let mut offer = ClientOffer::default();
        assert!(offer.is_aead("aes128-gcm@openssh.com"));
        offer.aead_ciphers = Some(vec!["x-aead".into()]);
        assert!(offer.is_aead("x-aead"));
        assert!(!offer.is_aead("aes128-gcm@openssh.com"));
    }
}
