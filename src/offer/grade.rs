//! The one grade of an algorithm and of a suite, used by every view and by `recommend`:
//! the catalogue's grade, lowered to legacy for the ciphers Terrapin (CVE-2023-48795)
//! can attack when the server does not offer strict KEX.

use super::catalogue::{self, Grade};
use crate::model::{AlgoKind, Suite};
use serde::Serialize;
use std::fmt;

/// Grades algorithms for one server: what the catalogue says and what the server's
/// offer changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grader {
    /// The server was seen without strict KEX.
    terrapin: bool,
}

/// A suite's grade: the worst of its forced algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SuiteGrade {
    /// Nothing forced (the client's defaults).
    Defaults,
    Known(Grade),
    /// A forced name the catalogue does not know.
    Unknown,
}

impl Grader {
    /// `strict_kex`: whether the server's KEXINIT offered strict KEX (`None`: not known,
    /// which does not lower any grade).
    pub fn new(strict_kex: Option<bool>) -> Grader {
        Grader {
            terrapin: strict_kex == Some(false),
        }
    }

    /// Whether this server lacks strict KEX (the Terrapin rules apply).
    pub fn lacks_strict_kex(self) -> bool {
        self.terrapin
    }

    /// Whether Terrapin lowers this name's grade here: chacha20-poly1305, and CBC
    /// ciphers (exposed together with -etm MACs).
    pub fn demoted(self, kind: AlgoKind, name: &str) -> bool {
        self.terrapin
            && kind == AlgoKind::Cipher
            && (super::terrapin_exposed(kind, name) || super::is_cbc(name))
    }

    /// One algorithm's grade here; `None` for a name the catalogue does not know.
    pub fn algo(self, kind: AlgoKind, name: &str) -> Option<Grade> {
        let g = catalogue::grade(kind, name)?;
        Some(if self.demoted(kind, name) {
            g.max(Grade::Legacy)
        } else {
            g
        })
    }

    /// The worst grade among the suite's forced algorithms (unknown if any is unknown).
    pub fn suite(self, suite: &Suite) -> SuiteGrade {
        let mut worst = SuiteGrade::Defaults;
        for kind in [
            AlgoKind::Kex,
            AlgoKind::HostKey,
            AlgoKind::Cipher,
            AlgoKind::Mac,
        ] {
            let Some(name) = suite.get(kind) else {
                continue;
            };
            match self.algo(kind, name) {
                None => return SuiteGrade::Unknown,
                Some(g) => worst = worst.max(SuiteGrade::Known(g)),
            }
        }
        worst
    }
}

impl SuiteGrade {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteGrade::Defaults => "-",
            SuiteGrade::Known(g) => g.as_str(),
            SuiteGrade::Unknown => "unknown",
        }
    }

    /// Legacy or broken: what `recommend` leaves out unless asked.
    pub fn is_weak(self) -> bool {
        matches!(self, SuiteGrade::Known(Grade::Legacy | Grade::Broken))
    }
}

impl fmt::Display for SuiteGrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SuiteGrade {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(cipher: &str, mac: Option<&str>) -> Suite {
        Suite {
            cipher: Some(cipher.into()),
            mac: mac.map(str::to_string),
            ..Suite::default()
        }
    }

    #[test]
    fn a_suite_is_graded_by_its_worst_part() {
        let g = Grader::new(Some(true));
        assert_eq!(
            g.suite(&suite("aes128-ctr", Some("hmac-md5"))),
            SuiteGrade::Known(Grade::Broken)
        );
        assert_eq!(g.suite(&suite("rot13", None)), SuiteGrade::Unknown);
        assert_eq!(g.suite(&Suite::default()).to_string(), "-");
    }

    #[test]
    fn terrapin_lowers_chacha20_only_without_strict_kex() {
        let chacha = suite("chacha20-poly1305@openssh.com", None);
        assert_eq!(
            Grader::new(Some(true)).suite(&chacha),
            SuiteGrade::Known(Grade::Recommended)
        );
        assert_eq!(
            Grader::new(None).suite(&chacha),
            SuiteGrade::Known(Grade::Recommended)
        );
        assert_eq!(
            Grader::new(Some(false)).suite(&chacha),
            SuiteGrade::Known(Grade::Legacy)
        );
        let gcm = suite("aes128-gcm@openssh.com", None);
        assert_eq!(
            Grader::new(Some(false)).suite(&gcm),
            SuiteGrade::Known(Grade::Recommended)
        );
    }
}
