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

use super::client::SoftwareVersion;
use crate::model::{AlgoKind, AlgoLists};
use serde::Serialize;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

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
    #[error("the server sent nothing within the deadline ({0:.1} s)")]
    Timeout(f64),
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

/// A reader that enforces one deadline over every read.
struct Deadline<R> {
    inner: R,
    until: Instant,
    total: Duration,
    set_timeout: fn(&R, Duration) -> std::io::Result<()>,
}

impl<R: Read> Deadline<R> {
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, ProbeError> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::Timeout(self.total.as_secs_f64()));
        }
        (self.set_timeout)(&self.inner, left).map_err(|e| ProbeError::Io(e.to_string()))?;
        match self.inner.read(buf) {
            Ok(n) => Ok(n),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(ProbeError::Timeout(self.total.as_secs_f64()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => self.read_some(buf),
            // A reset is the server closing abruptly: report it as a close.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(0),
            Err(e) => Err(ProbeError::Io(e.to_string())),
        }
    }

    fn read_exact(&mut self, buf: &mut [u8], during: &'static str) -> Result<(), ProbeError> {
        let mut got = 0;
        while got < buf.len() {
            match self.read_some(&mut buf[got..])? {
                0 => return Err(ProbeError::Closed(during)),
                n => got += n,
            }
        }
        Ok(())
    }

    /// One line ending in LF (CR stripped), at most [`MAX_LINE`] bytes. Reads byte by
    /// byte so nothing after the line is consumed.
    fn read_line(&mut self) -> Result<String, ProbeError> {
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        loop {
            if self.read_some(&mut b)? == 0 {
                return Err(ProbeError::Closed(if line.is_empty() {
                    "before sending its SSH version line"
                } else {
                    "in the middle of a line"
                }));
            }
            if b[0] == b'\n' {
                break;
            }
            line.push(b[0]);
            if line.len() > MAX_LINE {
                return Err(ProbeError::LineTooLong);
            }
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(String::from_utf8_lossy(&line).into_owned())
    }
}

/// Read the version exchange and the server's KEXINIT from a stream (the client's own
/// version line has already been sent).
fn read_offer<R: Read>(
    r: &mut Deadline<R>,
    method: ProbeMethod,
) -> Result<ServerOffer, ProbeError> {
    let mut pre = Vec::new();
    let (banner, software) = loop {
        let line = r.read_line()?;
        if line.starts_with("SSH-") {
            let sw = parse_banner(&line)?;
            break (line, sw);
        }
        if pre.len() >= MAX_PRE_LINES {
            return Err(ProbeError::TooManyLines);
        }
        pre.push(line);
    };
    for _ in 0..MAX_EARLY_MESSAGES {
        let payload = read_packet(r)?;
        match payload.first() {
            Some(&MSG_KEXINIT) => {
                return Ok(ServerOffer {
                    banner,
                    software,
                    pre_banner: pre,
                    kexinit: parse_kexinit(&payload)?,
                    method,
                });
            }
            Some(&MSG_IGNORE) | Some(&MSG_DEBUG) => continue,
            Some(&t) => return Err(ProbeError::NotKexinit(t)),
            None => return Err(ProbeError::BadKexinit("empty packet".into())),
        }
    }
    Err(ProbeError::BadKexinit(format!(
        "more than {MAX_EARLY_MESSAGES} messages before KEXINIT"
    )))
}

/// One unencrypted binary packet's payload (RFC 4253 §6).
fn read_packet<R: Read>(r: &mut Deadline<R>) -> Result<Vec<u8>, ProbeError> {
    let mut head = [0u8; 5];
    r.read_exact(&mut head, "before sending a whole packet")?;
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let pad = head[4] as u32;
    check_framing(len, pad)?;
    let mut rest = vec![0u8; len as usize - 1];
    r.read_exact(&mut rest, "in the middle of a packet")?;
    rest.truncate((len - pad - 1) as usize);
    Ok(rest)
}

/// Reject absurd lengths and padding before allocating anything.
pub fn check_framing(len: u32, pad: u32) -> Result<(), ProbeError> {
    if len > MAX_PACKET {
        return Err(ProbeError::PacketTooLarge(len));
    }
    if len < 5 {
        return Err(ProbeError::BadPadding(format!(
            "packet length {len} is too short"
        )));
    }
    if pad < 4 {
        return Err(ProbeError::BadPadding(format!(
            "{pad} bytes, at least 4 required"
        )));
    }
    if pad + 1 >= len {
        return Err(ProbeError::BadPadding(format!(
            "{pad} bytes leave no payload in a {len}-byte packet"
        )));
    }
    Ok(())
}

/// Parse a KEXINIT payload (message type byte included).
pub fn parse_kexinit(p: &[u8]) -> Result<Kexinit, ProbeError> {
    let bad = |what: String| ProbeError::BadKexinit(what);
    if p.first() != Some(&MSG_KEXINIT) {
        return Err(ProbeError::NotKexinit(p.first().copied().unwrap_or(0)));
    }
    let mut at = 1 + 16; // type, cookie
    if p.len() < at {
        return Err(bad("shorter than its cookie".into()));
    }
    const NAMES: [&str; 10] = [
        "kex_algorithms",
        "server_host_key_algorithms",
        "encryption_algorithms_client_to_server",
        "encryption_algorithms_server_to_client",
        "mac_algorithms_client_to_server",
        "mac_algorithms_server_to_client",
        "compression_algorithms_client_to_server",
        "compression_algorithms_server_to_client",
        "languages_client_to_server",
        "languages_server_to_client",
    ];
    let mut lists: Vec<Vec<String>> = Vec::with_capacity(10);
    for name in NAMES {
        let Some(len_bytes) = p.get(at..at + 4) else {
            return Err(bad(format!("{name} is missing")));
        };
        let len = u32::from_be_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
        at += 4;
        let Some(text) = p.get(at..at.saturating_add(len)) else {
            return Err(bad(format!(
                "{name} claims {len} bytes, only {} left",
                p.len() - at
            )));
        };
        at += len;
        if let Some(c) = text
            .iter()
            .find(|&&c| !(0x20..0x7f).contains(&c) || c == b' ')
        {
            return Err(bad(format!("{name} contains byte 0x{c:02x}")));
        }
        let text = std::str::from_utf8(text).expect("checked ASCII");
        let names: Vec<String> = if text.is_empty() {
            Vec::new()
        } else {
            text.split(',').map(str::to_string).collect()
        };
        if names.iter().any(String::is_empty) {
            return Err(bad(format!("{name} has an empty name")));
        }
        lists.push(names);
    }
    let Some(&follows) = p.get(at) else {
        return Err(bad("first_kex_packet_follows is missing".into()));
    };
    if p.len() < at + 1 + 4 {
        return Err(bad("the reserved field is missing".into()));
    }
    let mut it = lists.into_iter();
    let mut next = || it.next().expect("ten lists");
    Ok(Kexinit {
        kex: next(),
        hostkey: next(),
        ciphers_cs: next(),
        ciphers_sc: next(),
        macs_cs: next(),
        macs_sc: next(),
        compression_cs: next(),
        compression_sc: next(),
        languages_cs: next(),
        languages_sc: next(),
        first_kex_follows: follows != 0,
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

fn probe_stream(
    mut stream: TcpStream,
    address: &str,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    let _ = stream.set_write_timeout(Some(timeout));
    let _ = stream.set_nodelay(true);
    // Our version line first: many servers wait for it before sending KEXINIT.
    stream
        .write_all(format!("SSH-2.0-sshbench_{}\r\n", env!("CARGO_PKG_VERSION")).as_bytes())
        .map_err(|e| ProbeError::Io(e.to_string()))?;
    let mut r = Deadline {
        inner: stream,
        until: Instant::now() + timeout,
        total: timeout,
        set_timeout: |s: &TcpStream, d| s.set_read_timeout(Some(d)),
    };
    read_offer(
        &mut r,
        ProbeMethod::Direct {
            address: address.to_string(),
        },
    )
}

/// Read the server's proposal from `ssh -vv` stderr (the lines after
/// `debug2: peer server KEXINIT proposal`), for servers behind a jump host.
pub fn parse_ssh_vv(lines: &[String]) -> Option<ServerOffer> {
    let mut banner = None;
    let mut k = Kexinit::default();
    let mut in_peer = false;
    let mut seen = 0;
    for line in lines {
        let l = line.trim_end();
        if let Some(v) = l.split("remote software version ").nth(1) {
            banner = Some(v.trim().to_string());
        }
        if l.contains("peer server KEXINIT proposal") {
            in_peer = true;
            continue;
        }
        if !in_peer {
            continue;
        }
        let Some(rest) = l.strip_prefix("debug2: ") else {
            continue;
        };
        let Some((key, value)) = rest.split_once(": ") else {
            if rest.starts_with("first_kex_follows") {
                k.first_kex_follows = rest.ends_with('1');
            }
            if rest.starts_with("reserved") {
                break;
            }
            continue;
        };
        let names: Vec<String> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let slot = match key {
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
            _ => continue,
        };
        *slot = names;
        seen += 1;
    }
    if seen < 8 {
        return None;
    }
    let banner_line = banner.unwrap_or_default();
    let software = parse_banner(&format!("SSH-2.0-{banner_line}")).unwrap_or_default();
    Some(ServerOffer {
        banner: format!("SSH-2.0-{banner_line}"),
        software,
        pre_banner: Vec::new(),
        kexinit: k,
        method: ProbeMethod::SshVerbose,
    })
}

/// Build a KEXINIT payload (for tests and fuzz corpora).
pub fn build_kexinit(lists: [&str; 10]) -> Vec<u8> {
    let mut p = vec![MSG_KEXINIT];
    p.extend([0x5a; 16]);
    for l in lists {
        p.extend((l.len() as u32).to_be_bytes());
        p.extend(l.as_bytes());
    }
    p.push(0);
    p.extend([0; 4]);
    p
}

/// Frame a payload as an unencrypted binary packet with valid padding.
pub fn frame_packet(payload: &[u8]) -> Vec<u8> {
    let mut pad = 8 - (payload.len() + 5) % 8;
    if pad < 4 {
        pad += 8;
    }
    let len = (payload.len() + pad + 1) as u32;
    let mut out = len.to_be_bytes().to_vec();
    out.push(pad as u8);
    out.extend(payload);
    out.extend(std::iter::repeat_n(0u8, pad));
    out
}

/// Parse a whole server byte stream (version exchange + packets) without a socket.
/// Used by the fuzz target and unit tests.
pub fn parse_stream(bytes: &[u8]) -> Result<ServerOffer, ProbeError> {
    let mut r = Deadline {
        inner: std::io::Cursor::new(bytes),
        until: Instant::now() + Duration::from_secs(3600),
        total: Duration::from_secs(3600),
        set_timeout: |_, _| Ok(()),
    };
    read_offer(
        &mut r,
        ProbeMethod::Direct {
            address: "(stream)".into(),
        },
    )
}

/// Read the server's proposal through the user's own ssh path (`ssh -vv`), for
/// destinations behind ProxyJump/ProxyCommand. Key exchange happens before
/// authentication, so this works even where login would fail.
pub fn probe_via_ssh(
    ssh: &std::path::Path,
    target: &crate::target::Target,
    timeout: Duration,
) -> Result<ServerOffer, ProbeError> {
    let out = std::process::Command::new(ssh)
        .args(["-vv", "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=no"])
        .args(["-o", "ControlPath=none"])
        .arg("-o")
        .arg(format!("ConnectTimeout={}", timeout.as_secs().max(1)))
        .args(&target.ssh_options)
        .arg("--")
        .arg(&target.destination)
        .arg("exit 0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| ProbeError::Io(format!("running {}: {e}", ssh.display())))?;
    let lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .take(20_000)
        .map(|l| l.chars().take(4096).collect())
        .collect();
    parse_ssh_vv(&lines).ok_or_else(|| {
        ProbeError::Io(format!(
            "ssh -vv did not show the server's proposal: {}",
            crate::sys::proc::last_message(&lines).unwrap_or_default()
        ))
    })
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
            include_bytes!("../../tests/fixtures/kexinit/openssh-9.2p1.bin"),
        ),
        (
            "dropbear-2022.83",
            include_bytes!("../../tests/fixtures/kexinit/dropbear-2022.83.bin"),
        ),
        (
            "openssh-5.8",
            include_bytes!("../../tests/fixtures/kexinit/openssh-5.8-handbuilt.bin"),
        ),
        (
            "dropbear-2013.58",
            include_bytes!("../../tests/fixtures/kexinit/dropbear-2013.58-handbuilt.bin"),
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
        let offer = parse_ssh_vv(&log).unwrap();
        assert_eq!(offer.method, ProbeMethod::SshVerbose);
        assert_eq!(offer.software.version, "9.2p1");
        assert_eq!(offer.kexinit.kex[0], "sntrup761x25519-sha512");
        assert!(offer.kexinit.strict_kex());
        assert_eq!(offer.kexinit.hostkey, ["rsa-sha2-512", "ssh-ed25519"]);
        assert!(parse_ssh_vv(&log[..4]).is_none());
    }
}
