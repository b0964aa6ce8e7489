//! What rekeying costs a long transfer, in the answer's words.

use crate::model::Rekey;
use crate::model::options::bytes_text;

/// Rekeying that takes this share of a long transfer's time or more is said, with what
/// gives it back: OpenSSH's own limits cost AES nothing and chacha20-poly1305 ~5% here.
const REKEY_SHARE: f64 = 0.10;

/// A suite's rekeying `k` at its `rate` (bytes/s), where it takes a large share of a
/// long transfer's time (a small `RekeyLimit`, a slow key exchange).
pub fn sentence(k: Rekey, rate: f64) -> Option<String> {
    let share = k.share(rate);
    let every = match k.every {
        e if e >= 1 << 30 => format!("{:.1} GiB", e as f64 / (1u64 << 30) as f64),
        e => bytes_text(e),
    };
    let taken = share_taken(share);
    (share >= REKEY_SHARE).then(|| {
        format!(
            "\n         a rekey every {every} (~{:.2} s each) takes {taken} of a long transfer's \
             time: a larger RekeyLimit or a quicker key exchange gives it back",
            k.seconds,
        )
    })
}

/// A share of a transfer's time in words. The stall it comes from is the connection's
/// first key exchange, which can take longer than a rekey does: past most of the time,
/// a percentage (even over 100%) would claim too much.
fn share_taken(share: f64) -> String {
    match share {
        s if s >= 0.8 => "most".to_string(),
        s => format!("{:.0}%", s * 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rekey_share_past_most_of_the_time_is_not_a_percentage() {
        assert_eq!(share_taken(0.12), "12%");
        assert_eq!(share_taken(0.79), "79%");
        assert_eq!(share_taken(0.8), "most");
        assert_eq!(share_taken(1.05), "most");
    }

    #[test]
    fn a_small_share_is_not_said() {
        let k = Rekey {
            every: 1 << 30,
            seconds: 0.1,
            within: 0,
        };
        // 1 GiB at 100 MB/s takes ~10.7 s: a 0.1 s stall is under 1%.
        assert_eq!(sentence(k, 1e8), None);
        let small = Rekey {
            every: 4 << 20,
            ..k
        };
        let said = sentence(small, 1e7).unwrap();
        assert!(
            said.contains("a rekey every 4.0 MiB (~0.10 s each) takes 24%"),
            "{said}"
        );
    }
}
