//! How often a long transfer renews its keys and what each renewal costs.

use serde::Serialize;

/// The rekeying a transfer would meet if it went on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rekey {
    /// Bytes of the encrypted stream (compressed, when compression is on) between two
    /// rekeys, in the sample's direction.
    pub every: u64,
    /// How long one rekey stalls the transfer, in seconds.
    pub seconds: f64,
    /// Rekeys that happened inside the sample's own window (a `RekeyLimit` below the
    /// window's bytes, or a connection that had carried enough before it): their
    /// stalls are in the window's time already.
    #[serde(skip_serializing_if = "is_zero")]
    pub within: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Rekey {
    /// The share of a long transfer's time its rekeys take at `rate` (bytes/s, stalls
    /// included): one stall over the time an interval's bytes take.
    pub fn share(&self, rate: f64) -> f64 {
        self.seconds * rate / self.every.max(1) as f64
    }

    /// Seconds of stall a transfer of `bytes` payload bytes meets on average, given
    /// the compressed / raw factor of its stream (1 without compression), beyond the
    /// stalls of the rekeys its window already held (never below none).
    pub fn stall(&self, bytes: u64, factor: f64) -> f64 {
        if self.every == 0 {
            return 0.0;
        }
        let expected = bytes as f64 * factor / self.every as f64;
        self.seconds * (expected - self.within as f64).max(0.0)
    }
}
