//! Snapshot tests of every output view over fixed data.

use sshbench::model::AlgoKind;
use sshbench::offer::client::{ClientOffer, parse_version};
use sshbench::offer::{self, server};
use sshbench::views::algos::{self, AlgosReport};

fn client() -> ClientOffer {
    let mut c = ClientOffer {
        version: parse_version("OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026"),
        ..ClientOffer::default()
    };
    let v = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
    c.lists.set(AlgoKind::Kex, v("curve25519-sha256,ecdh-sha2-nistp256,diffie-hellman-group14-sha1,diffie-hellman-group1-sha1"));
    c.lists.set(
        AlgoKind::HostKey,
        v("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,ssh-rsa"),
    );
    c.lists.set(
        AlgoKind::Cipher,
        v("chacha20-poly1305@openssh.com,aes128-ctr,aes128-gcm@openssh.com,aes128-cbc,3des-cbc"),
    );
    c.lists.set(
        AlgoKind::Mac,
        v("umac-64-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha1,hmac-md5"),
    );
    c.lists
        .set(AlgoKind::Compression, v("none,zlib@openssh.com"));
    c
}

fn report_for(fixture: &[u8], f: impl Fn(&AlgosReport) -> String) -> String {
    let c = client();
    let server = server::parse_stream(fixture).unwrap();
    let rows = offer::compare(
        &c.lists,
        Some(&server.kexinit.lists()),
        Some(server.kexinit.strict_kex()),
    );
    f(&AlgosReport {
        destination: "old-server",
        client: &c.version,
        server: Some(&server),
        server_error: None,
        algorithms: &rows,
    })
}

const OPENSSH_58: &[u8] = include_bytes!("fixtures/kexinit/openssh-5.8-handbuilt.bin");
const OPENSSH_92: &[u8] = include_bytes!("fixtures/kexinit/openssh-9.2p1.bin");

#[test]
fn algos_table_against_openssh_5_8() {
    insta::assert_snapshot!(report_for(OPENSSH_58, algos::render_table));
}

#[test]
fn algos_json_against_openssh_5_8() {
    insta::assert_snapshot!(report_for(OPENSSH_58, algos::render_json));
}

#[test]
fn terrapin_is_flagged_only_without_strict_kex() {
    let c = client();
    for (fixture, strict) in [(OPENSSH_58, false), (OPENSSH_92, true)] {
        let s = server::parse_stream(fixture).unwrap();
        assert_eq!(s.kexinit.strict_kex(), strict);
        let mut lists = s.kexinit.lists();
        // Pretend the old server also offered chacha20 to see the flag.
        let mut ciphers = lists.get(AlgoKind::Cipher).unwrap().to_vec();
        ciphers.push("chacha20-poly1305@openssh.com".into());
        lists.set(AlgoKind::Cipher, ciphers);
        let rows = offer::compare(&c.lists, Some(&lists), Some(strict));
        let chacha = rows
            .iter()
            .find(|r| r.name == "chacha20-poly1305@openssh.com")
            .unwrap();
        assert_eq!(chacha.terrapin, !strict);
    }
}

#[test]
fn algos_table_when_the_server_is_unknown() {
    let c = client();
    let rows = offer::compare(&c.lists, None, None);
    insta::assert_snapshot!(algos::render_table(&AlgosReport {
        destination: "unreachable",
        client: &c.version,
        server: None,
        server_error: Some("cannot connect to 192.0.2.1:22: timed out".into()),
        algorithms: &rows,
    }));
}
