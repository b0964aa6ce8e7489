//! Static knowledge about every SSH algorithm name: kind, AEAD, aliases, security grade.
//!
//! One plain table, no behaviour beyond look-ups. Grades follow current references:
//! OpenSSH's release notes through 10.x (hybrid post-quantum key exchange the default
//! since 9.0, and recommended here above classical exchanges, which stay acceptable with
//! "no post-quantum protection"; DSA removed in 10.0), RFC 9142 for key exchange (SHA-1
//! and small groups), RFC 8758 for RC4, NIST SP 800-131A r2 and the r3 draft (3DES,
//! 64-bit blocks, SHA-1), and ssh-audit's policies. Each entry's reason says why. Unknown
//! names are never dropped by callers: [`lookup`] returns `None` and views show them as
//! "unknown".

mod handshake;
mod session;

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
    /// A client's own implementation of another name, which is what it sends and the
    /// server must offer (HPN-SSH's multithreaded chacha20-poly1305). Unlike an alias it
    /// is measured apart: the point is how it compares.
    pub on_wire: Option<&'static str>,
}

pub(super) const fn e(
    name: &'static str,
    kind: AlgoKind,
    grade: Grade,
    reason: &'static str,
) -> Entry {
    Entry {
        name,
        kind,
        aead: false,
        grade,
        reason,
        alias_of: None,
        on_wire: None,
    }
}

pub(super) const fn aead(name: &'static str, grade: Grade, reason: &'static str) -> Entry {
    Entry {
        name,
        kind: AlgoKind::Cipher,
        aead: true,
        grade,
        reason,
        alias_of: None,
        on_wire: None,
    }
}

pub(super) const fn alias(entry: Entry, of: &'static str) -> Entry {
    Entry {
        alias_of: Some(of),
        ..entry
    }
}

pub(super) const fn implements(entry: Entry, on_wire: &'static str) -> Entry {
    Entry {
        on_wire: Some(on_wire),
        ..entry
    }
}

pub(super) const SHA1_KEX: &str = "SHA-1 exchange hash (RFC 9142: SHOULD NOT)";
pub(super) const CBC: &str = "CBC mode: padding-oracle and plaintext-recovery history";
pub(super) const BLOCK64: &str = "64-bit block cipher (Sweet32)";
pub(super) const RC4: &str = "RC4 keystream biases (RFC 8758 forbids it)";
pub(super) const MD5: &str = "MD5 is broken";
pub(super) const SHA1_MAC: &str = "SHA-1 based MAC, deprecated";
pub(super) const EAM: &str = "encrypt-and-MAC; prefer the -etm variant";
pub(super) const ETM: &str = "encrypt-then-MAC with a strong hash";

/// Where sshbench grades a name looser than ssh-audit (which warns about or fails
/// everything here, and which `tests/system/ssh_audit.rs` runs against a real sshd), and
/// why: each stays allowed by default, post-quantum key exchanges ranked first.
pub const LOOSER_THAN_SSH_AUDIT: &[(&str, &str)] = &[
    (
        "curve25519-sha256",
        "no post-quantum protection, but no known weakness: the fallback every client \
         and server shares",
    ),
    (
        "curve25519-sha256@libssh.org",
        "the same as curve25519-sha256",
    ),
    (
        "diffie-hellman-group14-sha256",
        "112-bit strength and no post-quantum protection: what older servers offer, \
         graded acceptable as NIST SP 800-57 allows to 2030",
    ),
    (
        "diffie-hellman-group16-sha512",
        "no post-quantum protection, no known weakness",
    ),
    (
        "diffie-hellman-group18-sha512",
        "no post-quantum protection, no known weakness",
    ),
    (
        "diffie-hellman-group-exchange-sha256",
        "no post-quantum protection, no known weakness",
    ),
    (
        "ecdh-sha2-nistp256",
        "NIST curves: distrust of their origin, no known weakness; FIPS setups need them",
    ),
    ("ecdh-sha2-nistp384", "as ecdh-sha2-nistp256"),
    ("ecdh-sha2-nistp521", "as ecdh-sha2-nistp256"),
    ("ecdsa-sha2-nistp256", "as ecdh-sha2-nistp256"),
    ("ecdsa-sha2-nistp384", "as ecdh-sha2-nistp256"),
    ("ecdsa-sha2-nistp521", "as ecdh-sha2-nistp256"),
];

/// Every name known to sshbench: the handshake's, then the session's.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    handshake::HANDSHAKE.iter().chain(session::SESSION)
}

/// Look a name up within one kind.
pub fn lookup(kind: AlgoKind, name: &str) -> Option<&'static Entry> {
    entries().find(|e| e.kind == kind && e.name == name)
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

/// The name a client sends for `name`: the one it implements (see [`Entry::on_wire`]),
/// or the name itself.
pub fn on_wire(kind: AlgoKind, name: &str) -> &str {
    match lookup(kind, name).and_then(|e| e.on_wire) {
        Some(wire) => wire,
        None => name,
    }
}

/// Every catalogue name of one kind that a server may offer (a client's own
/// implementation of another name is not one).
pub fn names(kind: AlgoKind) -> impl Iterator<Item = &'static str> {
    (entries().filter(move |e| e.kind == kind && e.on_wire.is_none())).map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_within_a_kind() {
        let mut seen = HashSet::new();
        for entry in entries() {
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
        for entry in entries() {
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
        // OpenSSH 10's names: its default key exchange, and the hybrid host key to come.
        for (kind, name) in [
            (AlgoKind::Kex, "mlkem768x25519-sha256"),
            (AlgoKind::HostKey, "ssh-mldsa44-ed25519@openssh.com"),
        ] {
            assert_eq!(grade(kind, name), Some(Grade::Recommended), "{name}");
        }
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
