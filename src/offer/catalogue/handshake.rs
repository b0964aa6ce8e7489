//! The catalogue's key exchange and host key algorithms.

use super::{AlgoKind, Entry, Grade, SHA1_KEX, alias, e};
use AlgoKind::{HostKey as H, Kex as K};
use Grade::{Acceptable as OK, Broken as BAD, Legacy as OLD, Recommended as TOP};

/// Hybrid post-quantum exchanges resist "store now, decrypt later" while keeping a
/// classical exchange as a backstop; OpenSSH made them its default (9.0 sntrup761x25519,
/// 10.0 mlkem768x25519) and 10.1 warns when a connection uses none.
const PQ_MLKEM_X25519: &str =
    "hybrid post-quantum: ML-KEM-768 (FIPS 203) + X25519; OpenSSH 10.0's default";
const PQ_SNTRUP: &str =
    "hybrid post-quantum: Streamlined NTRU Prime + X25519; OpenSSH 9.0's default";
const NO_PQ_X25519: &str = "X25519 ECDH (RFC 8731); no post-quantum protection";
const NO_PQ_NIST: &str = "NIST curve ECDH (RFC 5656); no post-quantum protection";

pub static HANDSHAKE: &[Entry] = &[
    // Key exchange.
    e("mlkem768x25519-sha256", K, TOP, PQ_MLKEM_X25519),
    e("sntrup761x25519-sha512", K, TOP, PQ_SNTRUP),
    alias(
        e("sntrup761x25519-sha512@openssh.com", K, TOP, PQ_SNTRUP),
        "sntrup761x25519-sha512",
    ),
    e(
        "mlkem768nistp256-sha256",
        K,
        TOP,
        "hybrid post-quantum: ML-KEM-768 (FIPS 203) + NIST P-256 ECDH",
    ),
    e(
        "mlkem1024nistp384-sha384",
        K,
        TOP,
        "hybrid post-quantum: ML-KEM-1024 (FIPS 203) + NIST P-384 ECDH",
    ),
    e("curve25519-sha256", K, OK, NO_PQ_X25519),
    alias(
        e("curve25519-sha256@libssh.org", K, OK, NO_PQ_X25519),
        "curve25519-sha256",
    ),
    e(
        "curve448-sha512",
        K,
        OK,
        "X448 ECDH (RFC 8731); no post-quantum protection",
    ),
    e("ecdh-sha2-nistp256", K, OK, NO_PQ_NIST),
    e("ecdh-sha2-nistp384", K, OK, NO_PQ_NIST),
    e("ecdh-sha2-nistp521", K, OK, NO_PQ_NIST),
    e(
        "diffie-hellman-group14-sha256",
        K,
        OK,
        "2048-bit MODP group, SHA-256 (RFC 8268); no post-quantum protection",
    ),
    e(
        "diffie-hellman-group15-sha512",
        K,
        OK,
        "3072-bit MODP group, SHA-512 (RFC 8268); no post-quantum protection",
    ),
    e(
        "diffie-hellman-group16-sha512",
        K,
        OK,
        "4096-bit MODP group, SHA-512 (RFC 8268); no post-quantum protection",
    ),
    e(
        "diffie-hellman-group17-sha512",
        K,
        OK,
        "6144-bit MODP group, SHA-512 (RFC 8268); no post-quantum protection",
    ),
    e(
        "diffie-hellman-group18-sha512",
        K,
        OK,
        "8192-bit MODP group, SHA-512 (RFC 8268); no post-quantum protection",
    ),
    e(
        "diffie-hellman-group-exchange-sha256",
        K,
        OK,
        "server-chosen MODP group, SHA-256 (RFC 4419); no post-quantum protection",
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
    // Signatures are checked while connecting, so a future quantum computer cannot forge
    // one for a connection already made: a hybrid host key is no more urgent than a
    // hybrid key exchange, and as safe as its Ed25519 half.
    e(
        "ssh-mldsa44-ed25519@openssh.com",
        H,
        TOP,
        "hybrid post-quantum signatures: ML-DSA-44 (FIPS 204) + Ed25519; an upcoming OpenSSH host key type",
    ),
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
];
