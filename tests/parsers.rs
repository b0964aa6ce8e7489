//! Fuzzing that runs with every `cargo test`: each parser of untrusted input (what a
//! server sends, what ssh logs about it, what the remote probes print, what a database
//! row holds) is fed thousands of mutations of real inputs, from fixed seeds, and must
//! return, never panic. `fuzz/` holds the same targets for cargo-fuzz's longer runs.

use sshbench::measure::{remote, sshlog};
use sshbench::model::{HostProblem, Note, Problem};
use std::time::Duration;

/// Values that break careless number handling, spliced into inputs.
const NASTY: [&str; 12] = [
    "1e300",
    "-1",
    "NaN",
    "inf",
    "18446744073709551616",
    "-9223372036854775809",
    "0",
    "\u{1b}[2J",
    "\u{202e}",
    "\0",
    "é",
    "9999999999999999999999999",
];

/// `n` mutations of `seed`, reproducible from `salt`.
fn mutations(seed: &[u8], salt: u64, n: usize) -> impl Iterator<Item = Vec<u8>> + '_ {
    let mut rng = fastrand::Rng::with_seed(salt);
    (0..n).map(move |_| {
        let mut v = seed.to_vec();
        for _ in 0..rng.usize(1..6) {
            let at = rng.usize(0..=v.len());
            match rng.u8(0..6) {
                0 if !v.is_empty() => {
                    let i = rng.usize(0..v.len());
                    v[i] = rng.u8(..);
                }
                1 => v.insert(at, rng.u8(..)),
                2 if at < v.len() => {
                    let end = rng.usize(at..=v.len());
                    v.drain(at..end);
                }
                3 if at < v.len() => {
                    let end = rng.usize(at..=v.len().min(at + 64));
                    let copy = v[at..end].to_vec();
                    v.splice(at..at, copy);
                }
                _ => {
                    let nasty = NASTY[rng.usize(0..NASTY.len())].as_bytes();
                    v.splice(at..at, nasty.iter().copied());
                }
            }
        }
        v
    })
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

const SSH_LOG: &str = "debug1: Connecting to 127.0.0.1 [127.0.0.1] port 2222.\n\
debug1: Connection established.\n\
debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1\n\
debug1: kex: algorithm: curve25519-sha256\n\
debug1: kex: host key algorithm: ssh-ed25519\n\
debug1: kex: server->client cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none\n\
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: zlib@openssh.com\n\
debug1: SSH2_MSG_NEWKEYS received\n\
debug1: Authenticated to 127.0.0.1 ([127.0.0.1]:2222) using \"publickey\".\n\
debug1: compress outgoing: raw data 1000, compressed 300, factor 0.30\n\
Host key for [127.0.0.1]:2222 has changed and you have requested strict checking.\n\
The fingerprint for the ED25519 key sent by the remote host is\n\
Offending RSA key in /root/.ssh/known_hosts:3\n\
Unable to negotiate with 127.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr\n\
Received disconnect from 127.0.0.1 port 22:2: Too many authentication failures\n\
debug2: peer server KEXINIT proposal\n\
debug2: KEX algorithms: curve25519-sha256,diffie-hellman-group14-sha256\n\
debug2: host key algorithms: ssh-ed25519,rsa-sha2-512\n\
debug2: ciphers ctos: aes128-ctr,aes256-gcm@openssh.com\n\
debug2: ciphers stoc: aes128-ctr,aes256-gcm@openssh.com\n\
debug2: MACs ctos: hmac-sha2-256-etm@openssh.com\n\
debug2: MACs stoc: hmac-sha2-256-etm@openssh.com\n";

#[test]
fn ssh_s_logs_never_panic_their_readers() {
    assert!(sshlog::negotiated(&lines(SSH_LOG.as_bytes())).is_some());
    for (i, m) in mutations(SSH_LOG.as_bytes(), 1, 3000).enumerate() {
        let l = lines(&m);
        let times: Vec<Duration> = (0..l.len())
            .map(|k| Duration::from_millis(k as u64 * 7))
            .collect();
        let _ = sshlog::classify(&l);
        let _ = sshlog::negotiated(&l);
        let _ = sshlog::phases(&l, &times, Duration::from_millis(i as u64));
        let _ = sshlog::compression_factor(&l);
        let _ = sshbench::offer::server::parse_ssh_vv(&l, Some("127.0.0.1:2222"));
        let _ = sshbench::offer::server::parse_ssh_vv(&l, None);
    }
}

#[test]
fn the_remote_probes_output_never_panics_its_readers() {
    let probe = format!(
        "{} 1 2295473 12 100 50000 100000 40 3 1234567 2 2 98765 2295400\n\
         SSHBENCH-SHELL 2295473 22954.84 100\nSSHBENCH-SHELL 1-02:03:04.5 5 100\n",
        remote::CPU0
    );
    assert!(remote::parse_cpu_probe(probe.lines().next().unwrap(), remote::CPU0).is_some());
    for m in mutations(probe.as_bytes(), 2, 5000) {
        let text = String::from_utf8_lossy(&m);
        for line in text.lines() {
            let _ = remote::parse_cpu_probe(line, remote::CPU0);
        }
        let _ = remote::parse_shell_start(&text);
        let _ = sshbench::destination::parse_ssh_g(&text);
    }
}

#[test]
fn a_server_s_bytes_never_panic_the_offer_reader() {
    let mut stream = b"SSH-2.0-OpenSSH_9.2p1 Debian\r\n".to_vec();
    // A KEXINIT packet: length, padding, type 20, cookie, ten name-lists, flag, reserved.
    let lists = [
        "curve25519-sha256",
        "ssh-ed25519",
        "aes128-ctr",
        "aes128-ctr",
    ];
    let mut payload = vec![20u8];
    payload.extend([0u8; 16]);
    for i in 0..10 {
        let l = lists.get(i).copied().unwrap_or("none");
        payload.extend((l.len() as u32).to_be_bytes());
        payload.extend(l.as_bytes());
    }
    payload.extend([0u8; 5]);
    let pad = 8 - (payload.len() + 5) % 8 + 4;
    stream.extend(((payload.len() + pad + 1) as u32).to_be_bytes());
    stream.push(pad as u8);
    stream.extend(&payload);
    stream.extend(vec![0u8; pad]);
    // The seed itself is a real offer: the mutations start from what a server sends.
    assert!(sshbench::offer::server::parse_stream(&stream).is_ok());
    for m in mutations(&stream, 3, 5000) {
        if let Ok(offer) = sshbench::offer::server::parse_stream(&m) {
            let _ = offer.kexinit.lists();
            let _ = offer.kexinit.strict_kex();
        }
        let _ = sshbench::offer::server::parse_kexinit(&m);
    }
}

#[test]
fn stored_records_never_panic_their_decoders() {
    let notes =
        r#"[{"kind":"busy_machine","others":0.4,"cpus":2,"sandbox":true},"an old sentence"]"#;
    let problem = r#"{"problem":"ended","end":{"end":"status","code":3},"said":"x","remote":{"problem":"byte-count","expected":5,"counted":4}}"#;
    let host = r#"{"why":"fatal","kind":"auth","problem":{"problem":"said","said":"denied"}}"#;
    for (seed, salt) in [(notes, 4), (problem, 5), (host, 6)] {
        for m in mutations(seed.as_bytes(), salt, 3000) {
            let text = String::from_utf8_lossy(&m);
            let _ = Note::decode_all(&text);
            let _ = Problem::decode(&text);
            let _ = HostProblem::decode(&text);
        }
    }
}
