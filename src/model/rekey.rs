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
}

impl Rekey {
    /// Seconds of stall a transfer of `bytes` payload bytes meets on average, given
    /// the compressed / raw factor of its stream (1 without compression).
    pub fn stall(&self, bytes: u64, factor: f64) -> f64 {
        if self.every == 0 {
            return 0.0;
        }
        self.seconds * bytes as f64 * factor / self.every as f64
    }
}
