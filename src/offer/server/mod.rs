//! The server's side of the offer: its SSH_MSG_KEXINIT, read without authenticating.
//!
//! Everything the server sends is hostile input. The version exchange caps line length
//! (255 bytes, RFC 4253 §4.2) and the number of lines before the banner; the binary
//! packet framing rejects absurd lengths and bad padding; name-lists must be printable
//! ASCII and fit their packet. Every read has a deadline, so a slow, endless, truncated
//! or nonsensical server ends in a [`ProbeError`], never a panic or a hang.
//!
//! Destinations behind ProxyJump/ProxyCommand cannot be reached by a direct socket; for
//! them [`parse_ssh_vv`] reads the server's proposal from `ssh -vv` output.

mod verbose;
mod wire;

pub use verbose::{parse_ssh_vv, probe_via_ssh};
use wire::probe_stream;
pub use wire::{build_kexinit, check_framing, frame_packet, parse_kexinit, parse_stream};

use super::client::SoftwareVersion;
use crate::model::{AlgoKind, AlgoLists};
use serde::Serialize;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Longest version line, CR LF included (RFC 4253 §4.2).
pub const MAX_LINE: usize = 255;
/// Lines accepted before the version line.
pub const MAX_PRE_LINES: usize = 64;
/// Largest packet accepted (OpenSSH's own limit is 256 KiB).
pub const MAX_PACKET: u32 = 256 * 1024;
/// Messages tolerated before KEXINIT (IGNORE, DEBUG).
const MAX_EARLY_MESSAGES: usize = 8;

const MSG_IGNORE: u8 = 2;
const MSG_DEBUG: u8 = 4;
const MSG_KEXINIT: u8 = 20;

/// The markers servers put into the kex list; not algorithms.
pub const STRICT_KEX_MARKER: &str = "kex-strict-s-v00@openssh.com";
pub const EXT_INFO_MARKER: &str = "ext-info-s";

/// Why probing failed, phrased for a person.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProbeError {
    #[error("cannot connect to {0}")]
    Connect(String),
    #[error("{}", timeout_text(*.0, *.1))]
    Timeout(f64, u64),
    #[error("the server closed the connection {0}")]
    Closed(&'static str),
    #[error("a line from the server is longer than {MAX_LINE} bytes (not an SSH server?)")]
    LineTooLong,
    #[error("more than {MAX_PRE_LINES} lines before the SSH version line (not an SSH server?)")]
    TooManyLines,
    #[error("the server speaks SSH protocol 1 only: {0:?}")]
    ProtocolOne(String),
    #[error("the version line is malformed: {0:?}")]
    BadBanner(String),
    #[error("packet length {0} is absurd (limit {MAX_PACKET})")]
    PacketTooLarge(u32),
    #[error("bad packet padding: {0}")]
    BadPadding(String),
    #[error("the first message is type {0}, not KEXINIT (20)")]
    NotKexinit(u8),
    #[error("malformed KEXINIT: {0}")]
    BadKexinit(String),
    #[error("network error: {0}")]
    Io(String),
}

/// A deadline's error: a tarpit that drips lines is told from a server that is silent.
fn timeout_text(seconds: f64, bytes: u64) -> String {
    match bytes {
        0 => format!("the server sent nothing within the deadline ({seconds:.1} s)"),
        n => format!(
            "the server sent {n} bytes but no complete offer within the deadline ({seconds:.1} s)"
        ),
    }
}

/// How the offer was obtained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeMethod {
    /// A direct TCP connection reading the server's KEXINIT.
    Direct { address: String },
    /// `ssh -vv` through the user's own path (ProxyJump/ProxyCommand).
    SshVerbose,
}

impl std::fmt::Display for ProbeMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeMethod::Direct { address } => write!(f, "KEXINIT read from {address}"),
            ProbeMethod::SshVerbose => f.write_str("proposal read from ssh -vv"),
        }
    }
}

/// The ten name-lists of a KEXINIT, in RFC 4253 order, plus its flag.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Kexinit {
    pub kex: Vec<String>,
    pub hostkey: Vec<String>,
    pub ciphers_cs: Vec<String>,
    pub ciphers_sc: Vec<String>,
    pub macs_cs: Vec<String>,
    pub macs_sc: Vec<String>,
    pub compression_cs: Vec<String>,
    pub compression_sc: Vec<String>,
    pub languages_cs: Vec<String>,
    pub languages_sc: Vec<String>,
    pub first_kex_follows: bool,
}

impl Kexinit {
    /// Whether the server offers strict KEX (the Terrapin countermeasure).
    pub fn strict_kex(&self) -> bool {
        self.kex.iter().any(|k| k == STRICT_KEX_MARKER)
    }

    pub fn ext_info(&self) -> bool {
        self.kex.iter().any(|k| k == EXT_INFO_MARKER)
    }

    /// The negotiable algorithms per kind (markers removed; client→server direction,
    /// with the other direction's extra names appended).
    pub fn lists(&self) -> AlgoLists {
        let both = |a: &[String], b: &[String]| {
            let mut v = a.to_vec();
            v.extend(b.iter().filter(|n| !a.contains(n)).cloned());
            v
        };
        let mut out = AlgoLists::new();
        out.set(
            AlgoKind::Kex,
            self.kex.iter().filter(|k| !is_marker(k)).cloned().collect(),
        );
        out.set(AlgoKind::HostKey, self.hostkey.clone());
        out.set(AlgoKind::Cipher, both(&self.ciphers_cs, &self.ciphers_sc));
        out.set(AlgoKind::Mac, both(&self.macs_cs, &self.macs_sc));
        out.set(
            AlgoKind::Compression,
            both(&self.compression_cs, &self.compression_sc),
        );
        out
    }
}

/// Pseudo-algorithms that signal extensions rather than name a key exchange.
pub fn is_marker(name: &str) -> bool {
    name.starts_with("ext-info-")
        || name.starts_with("kex-strict-")
        || name == "kexguess2@matt.ucc.asn.au"
}

/// Everything the probe learned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerOffer {
    /// The version line, e.g. `SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6`.
    pub banner: String,
    pub software: SoftwareVersion,
    /// Lines the server sent before its version line.
    pub pre_banner: Vec<String>,
    pub kexinit: Kexinit,
    pub method: ProbeMethod,
}

/// Parse a version line (without CR LF) into its software version.
pub fn parse_banner(line: &str) -> Result<SoftwareVersion, ProbeError> {
    let rest = if let Some(r) = line.strip_prefix("SSH-2.0-") {
        r
    } else if let Some(r) = line.strip_prefix("SSH-1.99-") {
        r
    } else if line.starts_with("SSH-1.") {
        return Err(ProbeError::ProtocolOne(line.to_string()));
    } else {
        return Err(ProbeError::BadBanner(line.to_string()));
    };
    if rest.is_empty() || rest.chars().any(|c| c.is_control()) {
        return Err(ProbeError::BadBanner(line.to_string()));
    }
    let software = rest.split(' ').next().unwrap_or("");
    let (product, version) = match software.split_once('_') {
        Some((p, v)) => (p.to_string(), v.to_string()),
        None => (software.to_string(), String::new()),
    };
    Ok(SoftwareVersion {
        raw: rest.to_string(),
        product,
        version,
    })
}

/// Connect to `host:port` (every address it resolves to, in order) and read the offer.
/// `timeout` bounds each connection attempt and, separately, the whole exchange.
pub fn probe(host: &str, port: u16, timeout: Duration) -> Result<ServerOffer, ProbeError> {
    let addrs: Vec<_> = (host, port)
        .to_socket_addrs()
        .map_err(|e| ProbeError::Connect(format!("{host}:{port}: {e}")))?
        .collect();
    if addrs.is_empty() {
        return Err(ProbeError::Connect(format!("{host}:{port}: no address")));
    }
    let mut errors = Vec::new();
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => return probe_stream(stream, &addr.to_string(), timeout),
            Err(e) => errors.push(format!("{addr}: {e}")),
        }
    }
    Err(ProbeError::Connect(errors.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENSSH_58: [&str; 10] = [
        "ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group-exchange-sha1,diffie-hellman-group14-sha1,diffie-hellman-group1-sha1",
        "ssh-rsa,ecdsa-sha2-nistp256",
        "aes128-ctr,aes192-ctr,aes256-ctr,arcfour256,arcfour128,aes128-cbc,3des-cbc,blowfish-cbc,cast128-cbc,aes192-cbc,aes256-cbc,arcfour,rijndael-cbc@lysator.liu.se",
        "aes128-ctr,aes192-ctr,aes256-ctr,arcfour256,arcfour128,aes128-cbc,3des-cbc,blowfish-cbc,cast128-cbc,aes192-cbc,aes256-cbc,arcfour,rijndael-cbc@lysator.liu.se",
        "hmac-md5,hmac-sha1,umac-64@openssh.com,hmac-ripemd160,hmac-ripemd160@openssh.com,hmac-sha1-96,hmac-md5-96",
        "hmac-md5,hmac-sha1,umac-64@openssh.com,hmac-ripemd160,hmac-ripemd160@openssh.com,hmac-sha1-96,hmac-md5-96",
        "none,zlib@openssh.com",
        "none,zlib@openssh.com",
        "",
        "",
    ];

    fn stream(pre: &str, banner: &str, packets: &[Vec<u8>]) -> Vec<u8> {
        let mut s = format!("{pre}{banner}\r\n").into_bytes();
        for p in packets {
            s.extend(frame_packet(p));
        }
        s
    }

    /// Real and hand-built server streams (version line + KEXINIT packet), also the
    /// seed corpus of the fuzz target.
    const FIXTURES: &[(&str, &[u8])] = &[
        (
            "openssh-9.2p1",
            include_bytes!("../../../tests/fixtures/kexinit/openssh-9.2p1.bin"),
        ),
        (
            "dropbear-2022.83",
            include_bytes!("../../../tests/fixtures/kexinit/dropbear-2022.83.bin"),
        ),
        (
            "openssh-5.8",
            include_bytes!("../../../tests/fixtures/kexinit/openssh-5.8-handbuilt.bin"),
        ),
        (
            "dropbear-2013.58",
            include_bytes!("../../../tests/fixtures/kexinit/dropbear-2013.58-handbuilt.bin"),
        ),
    ];

    #[test]
    fn parses_every_fixture() {
        for (name, bytes) in FIXTURES {
            let offer = parse_stream(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            let lists = offer.kexinit.lists();
            for kind in AlgoKind::ALL {
                assert!(!lists.get(kind).unwrap().is_empty(), "{name}: no {kind:?}");
            }
        }
    }

    #[test]
    fn fixture_details() {
        let o = parse_stream(FIXTURES[0].1).unwrap();
        assert_eq!(o.banner, "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10");
        assert!(o.kexinit.strict_kex());
        let o = parse_stream(FIXTURES[1].1).unwrap();
        assert_eq!(
            (o.software.product.as_str(), o.software.version.as_str()),
            ("dropbear", "2022.83")
        );
        let o = parse_stream(FIXTURES[3].1).unwrap();
        assert!(!o.kexinit.strict_kex());
        assert_eq!(
            o.kexinit.lists().get(AlgoKind::Kex).unwrap(),
            ["diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1"]
        );
    }

    #[test]
    fn every_truncation_of_a_fixture_is_an_error_not_a_panic() {
        for (name, bytes) in FIXTURES {
            for cut in 0..bytes.len() {
                assert!(parse_stream(&bytes[..cut]).is_err(), "{name} cut at {cut}");
            }
        }
    }

    #[test]
    fn parses_an_openssh_5_8_offer() {
        let bytes = stream("", "SSH-2.0-OpenSSH_5.8", &[build_kexinit(OPENSSH_58)]);
        let offer = parse_stream(&bytes).unwrap();
        assert_eq!(offer.software.product, "OpenSSH");
        assert_eq!(offer.software.version, "5.8");
        assert_eq!(offer.kexinit.ciphers_cs.len(), 13);
        assert!(!offer.kexinit.strict_kex());
        assert!(offer.kexinit.languages_cs.is_empty());
        let lists = offer.kexinit.lists();
        assert!(lists.contains(AlgoKind::Mac, "hmac-ripemd160"));
        assert!(lists.contains(AlgoKind::Compression, "zlib@openssh.com"));
    }

    #[test]
    fn tolerates_lines_before_the_banner_and_ignore_messages() {
        let bytes = stream(
            "Welcome\r\nto the machine\n",
            "SSH-1.99-Cisco-1.25 comment here",
            &[vec![MSG_IGNORE, 0, 0, 0, 0], build_kexinit(OPENSSH_58)],
        );
        let offer = parse_stream(&bytes).unwrap();
        assert_eq!(offer.pre_banner, ["Welcome", "to the machine"]);
        assert_eq!(offer.software.product, "Cisco-1.25");
        assert_eq!(offer.software.raw, "Cisco-1.25 comment here");
    }

    #[test]
    fn markers_are_flagged_and_removed_from_lists() {
        let mut l = OPENSSH_58;
        l[0] = "curve25519-sha256,ext-info-s,kex-strict-s-v00@openssh.com";
        let k = parse_kexinit(&build_kexinit(l)).unwrap();
        assert!(k.strict_kex() && k.ext_info());
        assert_eq!(k.lists().get(AlgoKind::Kex).unwrap(), ["curve25519-sha256"]);
    }

    #[test]
    fn rejects_hostile_input_with_clear_errors() {
        let good = build_kexinit(OPENSSH_58);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                b"".to_vec(),
                "closed the connection before sending its SSH version line",
            ),
            (vec![b'x'; 1000], "longer than 255"),
            ("hi\n".repeat(100).into_bytes(), "more than 64 lines"),
            (b"SSH-1.5-old\r\n".to_vec(), "protocol 1"),
            (b"SSH-2.0-\r\n".to_vec(), "malformed"),
            (
                [b"SSH-2.0-x\r\n".as_slice(), &[0xff, 0xff, 0xff, 0xff, 4]].concat(),
                "absurd",
            ),
            (
                [b"SSH-2.0-x\r\n".as_slice(), &[0, 0, 0, 12, 2]].concat(),
                "padding",
            ),
            (
                [b"SSH-2.0-x\r\n".as_slice(), &[0, 0, 0, 12, 11]].concat(),
                "no payload",
            ),
            (
                [b"SSH-2.0-x\r\n".as_slice(), &frame_packet(&good)[..40]].concat(),
                "middle of a packet",
            ),
            (
                [b"SSH-2.0-x\r\n".as_slice(), b"garbage garbage garbage"].concat(),
                "absurd",
            ),
            (stream("", "SSH-2.0-x", &[vec![21, 1, 2, 3]]), "type 21"),
            (
                stream("", "SSH-2.0-x", &[good[..good.len() - 40].to_vec()]),
                "malformed KEXINIT",
            ),
        ];
        for (bytes, want) in cases {
            let err = parse_stream(&bytes).unwrap_err().to_string();
            assert!(err.contains(want), "{want:?} not in {err:?}");
        }
    }

    #[test]
    fn a_missing_list_is_named() {
        let mut p = vec![MSG_KEXINIT];
        p.extend([0; 16]);
        for l in &OPENSSH_58[..7] {
            p.extend((l.len() as u32).to_be_bytes());
            p.extend(l.as_bytes());
        }
        let err = parse_kexinit(&p).unwrap_err().to_string();
        assert!(
            err.contains("compression_algorithms_server_to_client is missing"),
            "{err}"
        );
    }

    #[test]
    fn list_lengths_past_the_end_and_binary_names_are_rejected() {
        let mut p = vec![MSG_KEXINIT];
        p.extend([0; 16]);
        p.extend(0xffff_fff0u32.to_be_bytes());
        assert!(
            parse_kexinit(&p)
                .unwrap_err()
                .to_string()
                .contains("claims")
        );
        let mut l = OPENSSH_58;
        l[2] = "aes128-ctr,\u{1b}[2J";
        assert!(
            parse_kexinit(&build_kexinit(l))
                .unwrap_err()
                .to_string()
                .contains("0x1b")
        );
        l[2] = "aes128-ctr,,aes256-ctr";
        assert!(
            parse_kexinit(&build_kexinit(l))
                .unwrap_err()
                .to_string()
                .contains("empty name")
        );
    }

    #[test]
    fn parses_the_peer_proposal_from_ssh_vv() {
        let log: Vec<String> =
            "debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2\n\
debug2: local client KEXINIT proposal\n\
debug2: KEX algorithms: client-side,ext-info-c\n\
debug2: peer server KEXINIT proposal\n\
debug2: KEX algorithms: sntrup761x25519-sha512,curve25519-sha256,kex-strict-s-v00@openssh.com\n\
debug2: host key algorithms: rsa-sha2-512,ssh-ed25519\n\
debug2: ciphers ctos: aes128-ctr,aes128-gcm@openssh.com\n\
debug2: ciphers stoc: aes128-ctr,aes128-gcm@openssh.com\n\
debug2: MACs ctos: hmac-sha1\n\
debug2: MACs stoc: hmac-sha1\n\
debug2: compression ctos: none,zlib@openssh.com\n\
debug2: compression stoc: none,zlib@openssh.com\n\
debug2: languages ctos: \n\
debug2: languages stoc: \n\
debug2: first_kex_follows 0 \n\
debug2: reserved 0 \n"
                .lines()
                .map(str::to_string)
                .collect();
        let offer = parse_ssh_vv(&log, Some("nas:22")).unwrap();
        assert_eq!(offer.method, ProbeMethod::SshVerbose);
        assert_eq!(offer.software.version, "9.2p1");
        assert_eq!(offer.kexinit.kex[0], "sntrup761x25519-sha512");
        assert!(offer.kexinit.strict_kex());
        assert_eq!(offer.kexinit.hostkey, ["rsa-sha2-512", "ssh-ed25519"]);
        assert!(parse_ssh_vv(&log[..4], Some("nas:22")).is_none());
    }

    /// Through a ProxyJump, ssh -vv logs the jump host's connection first: the offer
    /// is the proposal logged after `Authenticating to` the server, and none when the
    /// jump host would not forward.
    #[test]
    fn through_a_jump_host_the_offer_is_the_destination_s() {
        let proposal = |kex: &str, cipher: &str| {
            format!(
                "debug2: peer server KEXINIT proposal\n\
                 debug2: KEX algorithms: {kex}\n\
                 debug2: host key algorithms: ssh-ed25519\n\
                 debug2: ciphers ctos: {cipher}\n\
                 debug2: ciphers stoc: {cipher}\n\
                 debug2: MACs ctos: hmac-sha2-256\n\
                 debug2: MACs stoc: hmac-sha2-256\n\
                 debug2: compression ctos: none\n\
                 debug2: compression stoc: none\n\
                 debug2: first_kex_follows 0\n\
                 debug2: reserved 0\n"
            )
        };
        let jump = format!(
            "debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1\n\
             debug1: Authenticating to bastion:22 as 'me'\n{}\
             Authenticated to bastion ([192.0.2.1]:22) using \"publickey\".\n",
            proposal(
                "sntrup761x25519-sha512,curve25519-sha256",
                "aes128-gcm@openssh.com"
            ),
        );
        let router = format!(
            "debug1: Remote protocol version 2.0, remote software version dropbear_2022.83\n\
             debug1: Authenticating to 10.0.0.2:2222 as 'root'\n{}",
            proposal("curve25519-sha256,kexguess2@matt.ucc.asn.au", "aes128-ctr"),
        );
        let log = |text: &str| -> Vec<String> {
            text.lines().map(|l| l.trim_start().to_string()).collect()
        };
        let offer = parse_ssh_vv(&log(&format!("{jump}{router}")), Some("10.0.0.2:2222")).unwrap();
        assert_eq!(offer.software.product, "dropbear");
        assert_eq!(offer.kexinit.ciphers_cs, ["aes128-ctr"]);
        assert!(!offer.kexinit.kex.iter().any(|k| k.starts_with("sntrup")));
        // The jump host would not forward: its proposal is not the router's.
        let refused = format!(
            "{jump}channel 0: open failed: administratively prohibited: open failed\n\
             stdio forwarding failed\n\
             kex_exchange_identification: Connection closed by remote host\n"
        );
        assert!(parse_ssh_vv(&log(&refused), Some("10.0.0.2:2222")).is_none());
        assert!(parse_ssh_vv(&log(&refused), Some("BASTION:22")).is_some());
        // An ssh known to have reached the server (its `exit 0` ran there), under a name
        // other than `ssh -G`'s: the last proposal.
        let renamed = log(&format!("{jump}{router}"));
        assert!(parse_ssh_vv(&renamed, Some("router.lan:2222")).is_none());
        let last = parse_ssh_vv(&renamed, None).unwrap();
        assert_eq!(last.software.product, "dropbear");
    }
}
