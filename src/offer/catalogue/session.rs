//! The catalogue's ciphers, MACs and compression.

use super::{
    AlgoKind, BLOCK64, CBC, EAM, ETM, Entry, Grade, MD5, RC4, SHA1_MAC, aead, alias, e, implements,
};
use AlgoKind::{Cipher as C, Compression as Z, Mac as M};
use Grade::{Acceptable as OK, Broken as BAD, Legacy as OLD, Recommended as TOP};

pub static SESSION: &[Entry] = &[
    // Ciphers.
    aead(
        "chacha20-poly1305@openssh.com",
        TOP,
        "AEAD, fast without AES hardware",
    ),
    implements(
        aead(
            "chacha20-poly1305-mt@hpnssh.org",
            TOP,
            "HPN-SSH's multithreaded chacha20-poly1305@openssh.com (that name on the wire)",
        ),
        "chacha20-poly1305@openssh.com",
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
    // Legacy as ssh-audit warns about them: a 64-bit tag (forgeries within reach of a
    // long session), and encrypt-and-MAC, which MACs the plaintext (the MAC may leak
    // about it, and the ciphertext is decrypted before it is checked).
    e(
        "umac-64-etm@openssh.com",
        M,
        OLD,
        "encrypt-then-MAC with a 64-bit tag",
    ),
    e("hmac-sha2-256", M, OLD, EAM),
    e("hmac-sha2-512", M, OLD, EAM),
    e("umac-128@openssh.com", M, OLD, EAM),
    e(
        "umac-64@openssh.com",
        M,
        OLD,
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
