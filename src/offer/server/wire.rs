//! The SSH wire, as far as the offer goes: our version line, the server's banner and
//! its first binary packets, read with a deadline and bounded sizes, and the KEXINIT
//! payload parsed as hostile input.

use super::{
    Kexinit, MAX_EARLY_MESSAGES, MAX_LINE, MAX_PACKET, MAX_PRE_LINES, MSG_DEBUG, MSG_IGNORE,
    MSG_KEXINIT, ProbeError, ProbeMethod, ServerOffer, parse_banner,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
/// A reader that enforces one deadline over every read.
pub(super) struct Deadline<R> {
    inner: R,
    until: Instant,
    total: Duration,
    /// Bytes read so far, for the deadline's error.
    got: u64,
    set_timeout: fn(&R, Duration) -> std::io::Result<()>,
}

impl<R: Read> Deadline<R> {
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, ProbeError> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::Timeout(self.total.as_secs_f64(), self.got));
        }
        (self.set_timeout)(&self.inner, left).map_err(|e| ProbeError::Io(e.to_string()))?;
        match self.inner.read(buf) {
            Ok(n) => {
                self.got += n as u64;
                Ok(n)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(ProbeError::Timeout(self.total.as_secs_f64(), self.got))
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
pub(super) fn read_offer<R: Read>(
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
pub(super) fn read_packet<R: Read>(r: &mut Deadline<R>) -> Result<Vec<u8>, ProbeError> {
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

/// One `name-list` of a KEXINIT at `*at`: a length, then printable ASCII names without
/// spaces, separated by commas, none empty.
fn name_list(p: &[u8], at: &mut usize, name: &str) -> Result<Vec<String>, ProbeError> {
    let bad = |what: String| ProbeError::BadKexinit(what);
    let Some(len_bytes) = p.get(*at..*at + 4) else {
        return Err(bad(format!("{name} is missing")));
    };
    let len = u32::from_be_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
    *at += 4;
    let Some(text) = p.get(*at..at.saturating_add(len)) else {
        return Err(bad(format!(
            "{name} claims {len} bytes, only {} left",
            p.len() - *at
        )));
    };
    *at += len;
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
    Ok(names)
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
        lists.push(name_list(p, &mut at, name)?);
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

pub(super) fn probe_stream(
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
        got: 0,
        set_timeout: |s: &TcpStream, d| s.set_read_timeout(Some(d)),
    };
    read_offer(
        &mut r,
        ProbeMethod::Direct {
            address: address.to_string(),
        },
    )
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
        got: 0,
        set_timeout: |_, _| Ok(()),
    };
    read_offer(
        &mut r,
        ProbeMethod::Direct {
            address: "(stream)".into(),
        },
    )
}
