//! Static knowledge about every SSH algorithm name: kind, AEAD, aliases, security grade.
//!
//! One plain table, no behaviour beyond look-ups. Grades follow current consensus
//! (NIST SP 800-131A, RFC 9142 for key exchange, RFC 8758 for RC4, OpenSSH release
//! notes). Unknown names are never dropped by callers: [`lookup`] returns `None` and
//! views show them as "unknown".

use crate::model::AlgoKind;
use serde::Serialize;
use std::fmt;

/// Security grade, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    Recommended,
    Acceptable,
    Legacy,
    Broken,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Recommended => "recommended",
            Grade::Acceptable => "acceptable",
            Grade::Legacy => "legacy",
            Grade::Broken => "broken",
        }
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One algorithm name and what is known about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub name: &'static str,
    pub kind: AlgoKind,
    /// For ciphers: authenticated encryption, so the negotiated MAC is ignored.
    pub aead: bool,
    pub grade: Grade,
    pub reason: &'static str,
    /// The canonical name this one is an alias of, if any.
    pub alias_of: Option<&'static str>,
}

const fn e(name: &'static str, kind: AlgoKind, grade: Grade, reason: &'static str) -> Entry {
    Entry {
        name,
        kind,
        aead: false,
        grade,
        reason,
        alias_of: None,
    }
}

const fn aead(name: &'static str, grade: Grade, reason: &'static str) -> Entry {
    Entry {
        name,
        kind: AlgoKind::Cipher,
        aead: true,
        grade,
        reason,
        alias_of: None,
    }
}

const fn alias(entry: Entry, of: &'static str) -> Entry {
    Entry {
        alias_of: Some(of),
        ..entry
    }
}

use AlgoKind::{Cipher as C, Compression as Z, HostKey as H, Kex as K, Mac as M};
use Grade::{Acceptable as OK, Broken as BAD, Legacy as OLD, Recommended as TOP};

const SHA1_KEX: &str = "SHA-1 exchange hash (RFC 9142: SHOULD NOT)";
const CBC: &str = "CBC mode: padding-oracle and plaintext-recovery history";
const BLOCK64: &str = "64-bit block cipher (Sweet32)";
const RC4: &str = "RC4 keystream biases (RFC 8758 forbids it)";
const MD5: &str = "MD5 is broken";
const SHA1_MAC: &str = "SHA-1 based MAC, deprecated";
const EAM: &str = "encrypt-and-MAC; prefer the -etm variant";
const ETM: &str = "encrypt-then-MAC with a strong hash";

/// Every name known to sshbench.
pub static CATALOGUE: &[Entry] = &[
    // Key exchange.
    e(
        "mlkem768x25519-sha256",
        K,
        TOP,
        "hybrid post-quantum (ML-KEM) + X25519",
    ),
    e(
        "sntrup761x25519-sha512",
        K,
        TOP,
        "hybrid post-quantum (NTRU Prime) + X25519",
    ),
    alias(
        e(
            "sntrup761x25519-sha512@openssh.com",
            K,
            TOP,
            "hybrid post-quantum (NTRU Prime) + X25519",
        ),
        "sntrup761x25519-sha512",
    ),
    e(
        "mlkem768nistp256-sha256",
        K,
        OK,
        "hybrid post-quantum (ML-KEM) + NIST P-256",
    ),
    e(
        "mlkem1024nistp384-sha384",
        K,
        OK,
        "hybrid post-quantum (ML-KEM) + NIST P-384",
    ),
    e(
        "curve25519-sha256",
        K,
        TOP,
        "X25519, fast and constant-time",
    ),
    alias(
        e(
            "curve25519-sha256@libssh.org",
            K,
            TOP,
            "X25519, fast and constant-time",
        ),
        "curve25519-sha256",
    ),
    e("curve448-sha512", K, TOP, "X448"),
    e("ecdh-sha2-nistp256", K, OK, "NIST P-256 ECDH"),
    e("ecdh-sha2-nistp384", K, OK, "NIST P-384 ECDH"),
    e("ecdh-sha2-nistp521", K, OK, "NIST P-521 ECDH"),
    e(
        "diffie-hellman-group14-sha256",
        K,
        OK,
        "2048-bit MODP group, SHA-256",
    ),
    e(
        "diffie-hellman-group15-sha512",
        K,
        OK,
        "3072-bit MODP group, SHA-512",
    ),
    e(
        "diffie-hellman-group16-sha512",
        K,
        OK,
        "4096-bit MODP group, SHA-512",
    ),
    e(
        "diffie-hellman-group17-sha512",
        K,
        OK,
        "6144-bit MODP group, SHA-512",
    ),
    e(
        "diffie-hellman-group18-sha512",
        K,
        OK,
        "8192-bit MODP group, SHA-512",
    ),
    e(
        "diffie-hellman-group-exchange-sha256",
        K,
        OK,
        "server-chosen MODP group, SHA-256",
    ),
    e("diffie-hellman-group14-sha1", K, OLD, SHA1_KEX),
    e("diffie-hellman-group-exchange-sha1", K, OLD, SHA1_KEX),
    e(
        "diffie-hellman-group1-sha1",
        K,
        BAD,
        "1024-bit MODP group (Logjam) and SHA-1",
    ),
    // Host key (signature) algorithms.
    e("ssh-ed25519", H, TOP, "Ed25519 signatures"),
    e(
        "ssh-ed25519-cert-v01@openssh.com",
        H,
        TOP,
        "Ed25519 certificate",
    ),
    e(
        "sk-ssh-ed25519@openssh.com",
        H,
        TOP,
        "Ed25519 on a security key",
    ),
    e(
        "sk-ssh-ed25519-cert-v01@openssh.com",
        H,
        TOP,
        "Ed25519 security-key certificate",
    ),
    e("ssh-ed448", H, TOP, "Ed448 signatures"),
    e("ecdsa-sha2-nistp256", H, OK, "ECDSA on NIST P-256"),
    e("ecdsa-sha2-nistp384", H, OK, "ECDSA on NIST P-384"),
    e("ecdsa-sha2-nistp521", H, OK, "ECDSA on NIST P-521"),
    e(
        "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        H,
        OK,
        "ECDSA P-256 certificate",
    ),
    e(
        "ecdsa-sha2-nistp384-cert-v01@openssh.com",
        H,
        OK,
        "ECDSA P-384 certificate",
    ),
    e(
        "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        H,
        OK,
        "ECDSA P-521 certificate",
    ),
    e(
        "sk-ecdsa-sha2-nistp256@openssh.com",
        H,
        OK,
        "ECDSA P-256 on a security key",
    ),
    e(
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        H,
        OK,
        "ECDSA security-key certificate",
    ),
    e(
        "webauthn-sk-ecdsa-sha2-nistp256@openssh.com",
        H,
        OK,
        "ECDSA P-256 via WebAuthn",
    ),
    e("rsa-sha2-256", H, OK, "RSA with SHA-256 signatures"),
    e("rsa-sha2-512", H, OK, "RSA with SHA-512 signatures"),
    e(
        "rsa-sha2-256-cert-v01@openssh.com",
        H,
        OK,
        "RSA SHA-256 certificate",
    ),
    e(
        "rsa-sha2-512-cert-v01@openssh.com",
        H,
        OK,
        "RSA SHA-512 certificate",
    ),
    e(
        "ssh-rsa",
        H,
        OLD,
        "RSA with SHA-1 signatures, off by default since OpenSSH 8.8",
    ),
    e(
        "ssh-rsa-cert-v01@openssh.com",
        H,
        OLD,
        "RSA SHA-1 certificate",
    ),
    e(
        "ssh-rsa-cert-v00@openssh.com",
        H,
        OLD,
        "obsolete certificate format, removed in OpenSSH 7.2",
    ),
    e("ssh-dss", H, BAD, "1024-bit DSA, removed in OpenSSH 10.0"),
    e(
        "ssh-dss-cert-v00@openssh.com",
        H,
        BAD,
        "obsolete 1024-bit DSA certificate",
    ),
    e(
        "ssh-dss-cert-v01@openssh.com",
        H,
        BAD,
        "1024-bit DSA certificate",
    ),
    // Ciphers.
    aead(
        "chacha20-poly1305@openssh.com",
        TOP,
        "AEAD, fast without AES hardware",
    ),
    aead(
        "aes128-gcm@openssh.com",
        TOP,
        "AEAD, fast with AES hardware",
    ),
    aead(
        "aes256-gcm@openssh.com",
        TOP,
        "AEAD, fast with AES hardware",
    ),
    aead("aes128-gcm", TOP, "AEAD (RFC 5647 name)"),
    aead("aes256-gcm", TOP, "AEAD (RFC 5647 name)"),
    e(
        "aes128-ctr",
        C,
        OK,
        "AES in counter mode; pair with an -etm MAC",
    ),
    e(
        "aes192-ctr",
        C,
        OK,
        "AES in counter mode; pair with an -etm MAC",
    ),
    e(
        "aes256-ctr",
        C,
        OK,
        "AES in counter mode; pair with an -etm MAC",
    ),
    e(
        "twofish128-ctr",
        C,
        OLD,
        "Twofish, rarely reviewed in SSH use",
    ),
    e(
        "twofish256-ctr",
        C,
        OLD,
        "Twofish, rarely reviewed in SSH use",
    ),
    e("aes128-cbc", C, OLD, CBC),
    e("aes192-cbc", C, OLD, CBC),
    e("aes256-cbc", C, OLD, CBC),
    alias(e("rijndael-cbc@lysator.liu.se", C, OLD, CBC), "aes256-cbc"),
    e("twofish-cbc", C, OLD, CBC),
    e("twofish128-cbc", C, OLD, CBC),
    e("twofish256-cbc", C, OLD, CBC),
    e("3des-cbc", C, BAD, BLOCK64),
    e("3des-ctr", C, BAD, BLOCK64),
    e("blowfish-cbc", C, BAD, BLOCK64),
    e("blowfish-ctr", C, BAD, BLOCK64),
    e("cast128-cbc", C, BAD, BLOCK64),
    e("arcfour", C, BAD, RC4),
    e("arcfour128", C, BAD, RC4),
    e("arcfour256", C, BAD, RC4),
    e("none", C, BAD, "no encryption at all"),
    // MACs.
    e("hmac-sha2-256-etm@openssh.com", M, TOP, ETM),
    e("hmac-sha2-512-etm@openssh.com", M, TOP, ETM),
    e("umac-128-etm@openssh.com", M, TOP, ETM),
    e(
        "umac-64-etm@openssh.com",
        M,
        OK,
        "encrypt-then-MAC with a 64-bit tag",
    ),
    e("hmac-sha2-256", M, OK, EAM),
    e("hmac-sha2-512", M, OK, EAM),
    e("umac-128@openssh.com", M, OK, EAM),
    e(
        "umac-64@openssh.com",
        M,
        OK,
        "encrypt-and-MAC with a 64-bit tag",
    ),
    e("hmac-sha1", M, OLD, SHA1_MAC),
    e("hmac-sha1-etm@openssh.com", M, OLD, SHA1_MAC),
    e("hmac-sha1-96", M, OLD, "truncated SHA-1 MAC, deprecated"),
    e(
        "hmac-sha1-96-etm@openssh.com",
        M,
        OLD,
        "truncated SHA-1 MAC, deprecated",
    ),
    e(
        "hmac-sha2-256-96",
        M,
        OLD,
        "truncated, non-standard SHA-2 MAC",
    ),
    e(
        "hmac-sha2-512-96",
        M,
        OLD,
        "truncated, non-standard SHA-2 MAC",
    ),
    e(
        "hmac-ripemd160",
        M,
        OLD,
        "RIPEMD-160, removed from OpenSSH 7.6",
    ),
    alias(
        e(
            "hmac-ripemd160@openssh.com",
            M,
            OLD,
            "RIPEMD-160, removed from OpenSSH 7.6",
        ),
        "hmac-ripemd160",
    ),
    e(
        "hmac-ripemd160-etm@openssh.com",
        M,
        OLD,
        "RIPEMD-160, removed from OpenSSH 7.6",
    ),
    e("hmac-md5", M, BAD, MD5),
    e("hmac-md5-96", M, BAD, MD5),
    e("hmac-md5-etm@openssh.com", M, BAD, MD5),
    e("hmac-md5-96-etm@openssh.com", M, BAD, MD5),
    e("none", M, BAD, "no integrity protection at all"),
    // Compression.
    e("none", Z, TOP, "no compression"),
    e(
        "zlib@openssh.com",
        Z,
        OK,
        "zlib, started only after authentication",
    ),
    e(
        "zlib",
        Z,
        OLD,
        "zlib before authentication widens the pre-auth attack surface",
    ),
];

/// Look a name up within one kind.
pub fn lookup(kind: AlgoKind, name: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.kind == kind && e.name == name)
}

/// Whether a cipher is an AEAD (its MAC is implicit). Unknown names fall back to the
/// naming convention, which every AEAD in use today follows.
pub fn is_aead(cipher: &str) -> bool {
    match lookup(AlgoKind::Cipher, cipher) {
        Some(entry) => entry.aead,
        None => cipher.contains("-gcm") || cipher.contains("poly1305"),
    }
}

/// The grade of a name, `None` when the name is unknown.
pub fn grade(kind: AlgoKind, name: &str) -> Option<Grade> {
    lookup(kind, name).map(|e| e.grade)
}

/// The canonical name of an alias, or the name itself.
pub fn canonical(kind: AlgoKind, name: &str) -> &str {
    match lookup(kind, name).and_then(|e| e.alias_of) {
        Some(of) => of,
        None => name,
    }
}

/// Every catalogue name of one kind.
pub fn names(kind: AlgoKind) -> impl Iterator<Item = &'static str> {
    CATALOGUE
        .iter()
        .filter(move |e| e.kind == kind)
        .map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_within_a_kind() {
        let mut seen = HashSet::new();
        for entry in CATALOGUE {
            assert!(
                seen.insert((entry.kind, entry.name)),
                "duplicate {:?} {}",
                entry.kind,
                entry.name
            );
        }
    }

    #[test]
    fn aliases_point_at_entries_of_the_same_kind() {
        for entry in CATALOGUE {
            if let Some(of) = entry.alias_of {
                let target = lookup(entry.kind, of).expect("alias target exists");
                assert_eq!(target.grade, entry.grade, "{} and {of}", entry.name);
                assert_eq!(canonical(entry.kind, entry.name), of);
            }
        }
    }

    #[test]
    fn consensus_grades_for_well_known_names() {
        for (kind, name) in [
            (AlgoKind::Cipher, "3des-cbc"),
            (AlgoKind::Cipher, "arcfour256"),
            (AlgoKind::Cipher, "blowfish-cbc"),
            (AlgoKind::Cipher, "cast128-cbc"),
            (AlgoKind::Mac, "hmac-md5"),
            (AlgoKind::Mac, "hmac-md5-96-etm@openssh.com"),
            (AlgoKind::HostKey, "ssh-dss"),
            (AlgoKind::Kex, "diffie-hellman-group1-sha1"),
            (AlgoKind::Cipher, "none"),
            (AlgoKind::Mac, "none"),
        ] {
            assert_eq!(grade(kind, name), Some(Grade::Broken), "{name}");
        }
        for (kind, name) in [
            (AlgoKind::Kex, "diffie-hellman-group14-sha1"),
            (AlgoKind::Mac, "hmac-sha1"),
            (AlgoKind::Cipher, "aes128-cbc"),
        ] {
            assert_eq!(grade(kind, name), Some(Grade::Legacy), "{name}");
        }
        assert_eq!(
            grade(AlgoKind::Cipher, "aes128-gcm@openssh.com"),
            Some(Grade::Recommended)
        );
        assert_eq!(grade(AlgoKind::Cipher, "rot13-cbc"), None);
    }

    #[test]
    fn aead_detection() {
        assert!(is_aead("aes128-gcm@openssh.com"));
        assert!(is_aead("chacha20-poly1305@openssh.com"));
        assert!(!is_aead("aes128-ctr"));
        assert!(!is_aead("3des-cbc"));
        // Unknown names follow the naming convention.
        assert!(is_aead("aes192-gcm@example.org"));
    }
}
