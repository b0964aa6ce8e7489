//! Rekeying: how often a long transfer renews its keys, and what each renewal costs.
//!
//! SSH renews the session keys after a volume of data: OpenSSH every 1 GiB for ciphers
//! with 8-byte blocks (3des-cbc, blowfish, chacha20-poly1305 as OpenSSH counts it) and
//! every 2^32 blocks (64 GiB) for 16-byte ones, sooner with `RekeyLimit`; Dropbear every
//! 1 GiB in both directions together, whatever the cipher. Whichever side reaches its
//! limit first starts the exchange, and until both have the new keys no data moves: the
//! transfer stalls for one key exchange. A sample's window is far shorter than 1 GiB, so
//! it seldom contains a rekey; a long transfer (a backup) does. The sample therefore
//! records the interval and the cost, the latter as its own connection's initial key
//! exchange (same algorithms, same hosts, same path), and its throughput is the
//! sustained rate with the stalls spread in, less those of the rekeys its window did
//! hold (a small `RekeyLimit`), which are counted from ssh's log. A server's own
//! `RekeyLimit` is not in the client's log, but its rekeys are, each with the bytes the
//! connection had carried: their interval needs no clock, so a log read late says the
//! same.
//!
//! Pure functions over ssh's `-v` lines, so the rules are pinned by unit tests.

use crate::model::{Mode, Rekey};
use crate::offer::server::parse_banner;
use std::ops::RangeInclusive;
use std::time::Duration;

const GIB: u64 = 1 << 30;

/// The block size OpenSSH counts for a cipher (its `cipher.c` table); `None` for a
/// name it does not know.
fn block_size(cipher: &str) -> Option<u64> {
    match cipher {
        "3des-cbc"
        | "blowfish-cbc"
        | "cast128-cbc"
        | "arcfour"
        | "arcfour128"
        | "arcfour256"
        | "chacha20-poly1305@openssh.com"
        | "none" => Some(8),
        c if c.starts_with("aes") || c == "rijndael-cbc@lysator.liu.se" => Some(16),
        _ => None,
    }
}

/// OpenSSH's limit without `RekeyLimit`, in bytes: 2^(2 × block size) blocks for
/// 16-byte blocks and up, 1 GiB below (RFC 4344, section 3.2).
fn openssh_default(block: u64) -> u64 {
    if block >= 16 {
        block << (block * 2).min(48)
    } else {
        GIB
    }
}

/// The server's limit by its product (as its banner names it), known for OpenSSH (the
/// default rule; its own `RekeyLimit`, if set, is not visible from here) and Dropbear
/// (1 GiB, both directions together).
fn server_limit(product: &str, block: Option<u64>) -> Option<u64> {
    match product.to_ascii_lowercase().as_str() {
        "openssh" => block.map(openssh_default),
        "dropbear" => Some(GIB),
        _ => None,
    }
}

/// The client's own limit for the direction: OpenSSH logs it at every NEWKEYS as
/// `rekey out after N blocks` / `rekey in after N blocks` (before 7.x without the
/// direction), `RekeyLimit` included.
fn client_limit(lines: &[String], mode: Mode, block: Option<u64>) -> Option<u64> {
    let dir = if mode == Mode::Send { "out" } else { "in" };
    let blocks = |prefix: &str| {
        lines.iter().find_map(|l| {
            let rest = l.trim().strip_prefix("debug1: ")?.strip_prefix(prefix)?;
            rest.strip_suffix(" blocks")?.trim().parse::<u64>().ok()
        })
    };
    let n = blocks(&format!("rekey {dir} after ")).or_else(|| blocks("rekey after "))?;
    n.checked_mul(block?)
}

/// A period counts for a direction when that direction carried this many times the
/// other's bytes in it: a rekey its own volume triggered, not a session's of the other
/// way (nor a gap inside one rekey, where neither moves).
const ONE_WAY: u64 = 8;

/// One `ssh_set_newkeys` line (OpenSSH 8.0+): whose keys changed, incoming or outgoing,
/// and the bytes each direction had carried on the connection by then.
fn key_change(line: &str) -> Option<(bool, u64, u64)> {
    let rest = line.split("ssh_set_newkeys: rekeying ").nth(1)?;
    let w: Vec<&str> = rest.split_whitespace().collect();
    let after = |key: &str| -> Option<u64> {
        let i = w.iter().position(|x| *x == key)?;
        w.get(i + 1)?.parse().ok()
    };
    let incoming = match *w.first()? {
        "in," => true,
        "out," => false,
        _ => return None,
    };
    Some((incoming, after("input")?, after("output")?))
}

/// The stream bytes between the rekeys a send (outgoing) or receive (incoming) met on the
/// connection so far: the middle one of the periods between key changes of that direction
/// that it carried alone. A server's own `RekeyLimit` shows only here. The periods are
/// what a long transfer meets, not the limit: OpenSSH's sender rekeys early by its next
/// packet's bytes counted as blocks (512 KiB with 32 KiB packets), its receiver late by
/// the bytes already on their way. Older clients' lines name no direction and are not
/// read.
fn seen_every(lines: &[String], mode: Mode) -> Option<u64> {
    let incoming = mode == Mode::Receive;
    let mut last = (0, 0);
    let mut periods = Vec::new();
    for (_, input, output) in lines
        .iter()
        .filter_map(|l| key_change(l))
        .filter(|c| c.0 == incoming)
    {
        let now = if incoming {
            (input, output)
        } else {
            (output, input)
        };
        let (this, other) = (now.0.saturating_sub(last.0), now.1.saturating_sub(last.1));
        if this > 0 && this >= ONE_WAY.saturating_mul(other) {
            periods.push(this);
        }
        last = now;
    }
    periods.sort_unstable();
    periods.get(periods.len() / 2).copied()
}

/// The rekeying a send or receive sample of `cipher` would meet, from its `-v` lines:
/// the soonest of the client's logged limit, the server's known rule and the rekeys'
/// own interval so far, and the cost of this connection's key exchange (`kex_seconds`).
/// `None` when none is known.
pub fn rekey(lines: &[String], mode: Mode, cipher: &str, kex_seconds: f64) -> Option<Rekey> {
    if !mode.is_transfer() || !kex_seconds.is_finite() || kex_seconds < 0.0 {
        return None;
    }
    // Through a jump host its ssh logs its own connection first.
    let lines = &lines[super::sshlog::server_banner(lines).unwrap_or(0)..];
    let block = block_size(cipher);
    let server = lines
        .iter()
        .find_map(|l| l.split("remote software version ").nth(1))
        .and_then(|v| parse_banner(&format!("SSH-2.0-{}", v.trim())).ok())
        .and_then(|software| server_limit(&software.product, block));
    let client = client_limit(lines, mode, block);
    let seen = seen_every(lines, mode);
    let every = [client, server, seen].into_iter().flatten().min()?;
    (every > 0).then_some(Rekey {
        every,
        seconds: kex_seconds,
        within: 0,
    })
}

/// Key exchanges that ended between `from` and `to` (times since ssh started, as
/// `times` holds each line's): ssh logs `SSH2_MSG_NEWKEYS received` at the end of each,
/// the first one at login.
pub fn key_exchanges_between(
    lines: &[String],
    times: &[Duration],
    within: RangeInclusive<Duration>,
) -> u32 {
    let done = (lines.iter().zip(times))
        .filter(|(l, t)| l.trim() == "debug1: SSH2_MSG_NEWKEYS received" && within.contains(*t));
    done.count().try_into().unwrap_or(u32::MAX)
}

/// A line ssh repeats for every write it holds back during a rekey (hundreds per
/// rekey under a small `RekeyLimit`): kept out of the bounded logs, where it would push
/// out the lines that count.
pub fn is_flood(line: &str) -> bool {
    line.trim() == "debug1: rekeying in progress"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    /// What OpenSSH 9.2 logs with `-v` around a transfer's first key exchange.
    fn openssh_log(server: &str, out_blocks: u64, in_blocks: u64) -> Vec<String> {
        lines(&format!(
            "debug1: Remote protocol version 2.0, remote software version {server}\n\
             debug1: SSH2_MSG_NEWKEYS sent\n\
             debug1: ssh_set_newkeys: rekeying out, input 0 bytes 0 blocks, output 0 bytes 0 blocks\n\
             debug1: rekey out after {out_blocks} blocks\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             debug1: rekey in after {in_blocks} blocks\n"
        ))
    }

    #[test]
    fn openssh_rules_by_block_size() {
        // 8-byte blocks: 2^27 blocks = 1 GiB on both sides.
        let l = openssh_log("OpenSSH_9.2p1 Debian-2", 1 << 27, 1 << 27);
        let r = rekey(&l, Mode::Send, "chacha20-poly1305@openssh.com", 0.08).unwrap();
        assert_eq!(r.every, GIB);
        assert_eq!(r.seconds, 0.08);
        assert_eq!(
            rekey(&l, Mode::Receive, "3des-cbc", 0.08).unwrap().every,
            GIB
        );
        // 16-byte blocks: 2^32 blocks = 64 GiB.
        let l = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        let r = rekey(&l, Mode::Send, "aes128-gcm@openssh.com", 0.01).unwrap();
        assert_eq!(r.every, 64 * GIB);
    }

    #[test]
    fn the_client_rekey_limit_and_its_direction_count() {
        // RekeyLimit 128M with AES: 2^23 blocks of 16 bytes out; in unchanged.
        let l = openssh_log("OpenSSH_9.2p1", 1 << 23, 1 << 32);
        assert_eq!(
            rekey(&l, Mode::Send, "aes256-ctr", 0.1).unwrap().every,
            128 << 20
        );
        assert_eq!(
            rekey(&l, Mode::Receive, "aes256-ctr", 0.1).unwrap().every,
            64 * GIB
        );
        // Older clients log one limit for both directions.
        let old = lines(
            "debug1: Remote protocol version 2.0, remote software version OpenSSH_6.6\n\
             debug1: rekey after 134217728 blocks\n",
        );
        assert_eq!(
            rekey(&old, Mode::Receive, "3des-cbc", 0.1).unwrap().every,
            GIB
        );
    }

    #[test]
    fn dropbear_rekeys_every_gib_whatever_the_cipher() {
        let l = openssh_log("dropbear_2022.83", 1 << 32, 1 << 32);
        let r = rekey(&l, Mode::Receive, "aes128-ctr", 0.2).unwrap();
        assert_eq!(r.every, GIB);
    }

    #[test]
    fn through_a_jump_host_the_rules_are_the_server_s() {
        // An OpenSSH jump host (AES: 64 GiB both ways) before a Dropbear server.
        let mut l = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        l.extend(openssh_log("dropbear_2022.83", 1 << 32, 1 << 32));
        let r = rekey(&l, Mode::Send, "aes128-ctr", 0.2).unwrap();
        assert_eq!(r.every, GIB);
        // A Dropbear jump host before an OpenSSH server with RekeyLimit 128M.
        let mut l = openssh_log("dropbear_2022.83", 1 << 32, 1 << 32);
        l.extend(openssh_log("OpenSSH_9.2p1", 1 << 23, 1 << 32));
        let r = rekey(&l, Mode::Receive, "aes128-ctr", 0.2).unwrap();
        assert_eq!(r.every, 64 * GIB);
    }

    #[test]
    fn unknown_server_uses_the_client_limit_and_nothing_known_gives_none() {
        let l = openssh_log("SomeSSH_1.0", 1 << 27, 1 << 27);
        assert_eq!(
            rekey(&l, Mode::Send, "chacha20-poly1305@openssh.com", 0.1)
                .unwrap()
                .every,
            GIB
        );
        let bare = lines("debug1: Remote protocol version 2.0, remote software version Foo\n");
        assert_eq!(rekey(&bare, Mode::Send, "aes128-ctr", 0.1), None);
        // An unknown cipher with an unknown server: no block size, no rule.
        let l = openssh_log("SomeSSH_1.0", 1 << 27, 1 << 27);
        assert_eq!(rekey(&l, Mode::Send, "twofish-cbc", 0.1), None);
        // Not a transfer, or no usable cost.
        let l = openssh_log("OpenSSH_9.2p1", 1 << 27, 1 << 27);
        assert_eq!(rekey(&l, Mode::Connect, "3des-cbc", 0.1), None);
        assert_eq!(rekey(&l, Mode::Send, "3des-cbc", f64::NAN), None);
    }

    /// The two lines OpenSSH 8.0+ logs at a rekey: `(in, out)` bytes so far.
    fn key_changes(first_out: bool, at: &[(u64, u64)]) -> Vec<String> {
        let line = |dir: &str, (i, o): (u64, u64)| {
            format!(
                "debug1: ssh_set_newkeys: rekeying {dir}, input {i} bytes {} blocks, \
                 output {o} bytes {} blocks",
                i / 16,
                o / 16
            )
        };
        let order = if first_out {
            ["out", "in"]
        } else {
            ["in", "out"]
        };
        (at.iter())
            .flat_map(|&(i, o)| order.map(|d| line(d, (i + 20 * u64::from(d == "in"), o))))
            .collect()
    }

    #[test]
    fn a_server_s_own_limit_shows_in_the_rekeys_logged() {
        // RekeyLimit 2M on an OpenSSH 9.2 server, AES, a receive: the client logs only its
        // own 64 GiB limits; the rekeys the server started came every ~1.5 MiB (a sender
        // rekeys early by its next packet's bytes counted as blocks).
        let mut l = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        l.extend(key_changes(true, &[(1_579_412, 6020), (3_155_584, 8836)]));
        let r = rekey(&l, Mode::Receive, "aes128-ctr", 0.1).unwrap();
        assert_eq!(r.every, 1_579_432);
        // A send over the same connection later, its periods a little longer (the bytes on
        // their way when the server started each rekey): the middle one, and the periods
        // the receive carried say nothing of sends.
        let sent = [
            (3_170_000, 2_600_000),
            (3_180_000, 6_700_000),
            (3_190_000, 9_000_000),
        ];
        l.extend(key_changes(false, &sent));
        assert_eq!(
            rekey(&l, Mode::Send, "aes128-ctr", 0.1).unwrap().every,
            2_591_164
        );
        assert_eq!(
            rekey(&l, Mode::Receive, "aes128-ctr", 0.1).unwrap().every,
            1_579_432
        );
        // A period both ways carried (a send's session then a receive's) counts for neither.
        let mut mixed = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        mixed.extend(key_changes(true, &[(1_000_000, 1_500_000)]));
        for mode in [Mode::Send, Mode::Receive] {
            assert_eq!(
                rekey(&mixed, mode, "aes128-ctr", 0.1).unwrap().every,
                64 * GIB
            );
        }
        // Clients before 8.0 name no direction: their lines are not read.
        let mut old = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        old.push(
            "debug1: set_newkeys: rekeying, input 1579432 bytes 98553 blocks, \
             output 6040 bytes 1 blocks"
                .into(),
        );
        assert_eq!(
            rekey(&old, Mode::Receive, "aes128-ctr", 0.1).unwrap().every,
            64 * GIB
        );
        // A jump host's own rekeys are its connection's, not the server's.
        let mut l = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32);
        l.extend(key_changes(true, &[(1_579_412, 6020)]));
        l.extend(openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 32));
        assert_eq!(
            rekey(&l, Mode::Receive, "aes128-ctr", 0.1).unwrap().every,
            64 * GIB
        );
        // A known limit sooner than the rekeys' interval stays the interval.
        let mut l = openssh_log("OpenSSH_9.2p1", 1 << 32, 1 << 16);
        l.extend(key_changes(true, &[(1_579_412, 6020)]));
        assert_eq!(
            rekey(&l, Mode::Receive, "aes128-ctr", 0.1).unwrap().every,
            1 << 20
        );
    }

    #[test]
    fn key_exchanges_are_counted_inside_a_span_only() {
        let ms = Duration::from_millis;
        let log = lines(
            "debug1: SSH2_MSG_NEWKEYS received\n\
             debug1: SSH2_MSG_KEXINIT sent\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             debug1: rekeying in progress\n\
             debug1: SSH2_MSG_NEWKEYS received\n\
             debug1: SSH2_MSG_NEWKEYS sent",
        );
        let times = [ms(100), ms(300), ms(310), ms(400), ms(520), ms(530)];
        // The login's exchange (at 100 ms) is before the window; the others inside it.
        assert_eq!(key_exchanges_between(&log, &times, ms(200)..=ms(600)), 2);
        assert_eq!(key_exchanges_between(&log, &times, ms(200)..=ms(500)), 1);
        assert_eq!(key_exchanges_between(&log, &times, ms(600)..=ms(900)), 0);
        assert!(is_flood(&log[3]) && !is_flood(&log[2]));
    }

    #[test]
    fn stall_spreads_the_cost_over_the_bytes() {
        let r = Rekey {
            every: GIB,
            seconds: 0.1,
            within: 0,
        };
        assert!((r.stall(GIB, 1.0) - 0.1).abs() < 1e-12);
        assert!((r.stall(GIB / 2, 1.0) - 0.05).abs() < 1e-12);
        // Compressed to a quarter: four times the payload per rekey.
        assert!((r.stall(GIB, 0.25) - 0.025).abs() < 1e-12);
        let none = Rekey {
            every: 0,
            seconds: 0.1,
            within: 0,
        };
        assert_eq!(none.stall(GIB, 1.0), 0.0);
        // A window that held its rekeys (a small RekeyLimit) has their stalls in its time
        // already: only what it was short of the average is added, never less than none.
        let small = Rekey {
            every: 4 << 20,
            seconds: 0.1,
            within: 2,
        };
        assert!((small.stall(10 << 20, 1.0) - 0.05).abs() < 1e-12);
        assert_eq!(small.stall(6 << 20, 1.0), 0.0);
    }
}
