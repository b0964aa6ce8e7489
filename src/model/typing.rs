//! Typing in a terminal (`typing` mode): the client's ObscureKeystrokeTiming variants
//! measured, each key's echo with its place in the typing, and what the client's socket
//! carried while typing and after.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The longest a client keeps sending chaff after the last key (OpenSSH 9.5 and later:
/// 1-3 s, drawn per burst). A key after a longer pause goes at once; one within it waits
/// for the clock.
pub const CHAFF_MAX_S: f64 = 3.0;

/// A typing sample's bursts: each this many keys.
pub const KEYS_PER_BURST: u64 = 8;
/// Every key a typing sample types: three bursts (at the session's start, after a pause
/// within the chaff period, after one past it).
pub const TYPED_KEYS: u64 = KEYS_PER_BURST * 3;

/// Most keys one typing sample may store: a stored row saying more is refused.
pub const MAX_TYPED_KEYS: usize = 256;

/// An `ObscureKeystrokeTiming` setting (`ssh_config(5)`), as a typing suite forces it or
/// a client's `ssh -G` reports it. Stored and shown as ssh spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum KeystrokeTiming {
    /// The client's clock (20 ms in OpenSSH).
    Yes,
    /// Every key sent at once, no chaff.
    No,
    /// A clock of this many milliseconds.
    Interval(u16),
}

impl KeystrokeTiming {
    /// The variants a run measures unless told otherwise: the default and off.
    pub const DEFAULTS: [KeystrokeTiming; 2] = [KeystrokeTiming::Yes, KeystrokeTiming::No];

    /// ssh's spelling: `yes`, `no`, `interval:40`. ssh accepts intervals of 1 to 1000 ms;
    /// anything else is refused here, so that nothing unchecked reaches its command line.
    pub fn parse(s: &str) -> Option<KeystrokeTiming> {
        match s {
            "yes" => Some(KeystrokeTiming::Yes),
            "no" => Some(KeystrokeTiming::No),
            _ => {
                let ms: u16 = s.strip_prefix("interval:")?.parse().ok()?;
                (1..=1000)
                    .contains(&ms)
                    .then_some(KeystrokeTiming::Interval(ms))
            }
        }
    }

    /// Sends keys without waiting for a clock.
    pub fn is_off(self) -> bool {
        self == KeystrokeTiming::No
    }
}

impl fmt::Display for KeystrokeTiming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeystrokeTiming::Yes => f.write_str("yes"),
            KeystrokeTiming::No => f.write_str("no"),
            KeystrokeTiming::Interval(ms) => write!(f, "interval:{ms}"),
        }
    }
}

impl From<KeystrokeTiming> for String {
    fn from(k: KeystrokeTiming) -> String {
        k.to_string()
    }
}

impl TryFrom<String> for KeystrokeTiming {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        KeystrokeTiming::parse(&s).ok_or_else(|| format!("not an ObscureKeystrokeTiming: {s:?}"))
    }
}

/// One key typed and echoed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypedKey {
    /// Seconds since the previous key was typed; `None` for the session's first key.
    pub idle_s: Option<f64>,
    /// Its place in its burst: 0 for the first.
    pub position: u8,
    /// Seconds from writing the key to reading its echo.
    pub echo_s: f64,
}

/// Where a key falls in the typing, which decides whether ObscureKeystrokeTiming holds
/// it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyPlace {
    /// A burst's second key or later: within the chaff period of the key before.
    InBurst,
    /// A burst's first key after a pause shorter than the chaff period can last.
    AfterShortPause,
    /// A burst's first key after a pause past any chaff period, or the session's first.
    AfterLongPause,
}

impl KeyPlace {
    pub const ALL: [KeyPlace; 3] = [
        KeyPlace::InBurst,
        KeyPlace::AfterShortPause,
        KeyPlace::AfterLongPause,
    ];
}

impl TypedKey {
    pub fn place(&self) -> KeyPlace {
        match (self.position, self.idle_s) {
            (1.., _) => KeyPlace::InBurst,
            (0, Some(idle)) if idle <= CHAFF_MAX_S => KeyPlace::AfterShortPause,
            (0, _) => KeyPlace::AfterLongPause,
        }
    }
}

/// What the client's TCP connection carried over a stretch of time, from its socket's
/// counters (Linux `TCP_INFO`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WireSpan {
    pub seconds: f64,
    pub bytes_out: u64,
    pub packets_out: u64,
    pub bytes_in: u64,
    pub packets_in: u64,
}

impl WireSpan {
    /// Packets per second, both ways.
    pub fn packets_per_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| (self.packets_out + self.packets_in) as f64 / self.seconds)
    }

    /// Bytes per second, both ways.
    pub fn bytes_per_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| (self.bytes_out + self.bytes_in) as f64 / self.seconds)
    }
}

/// The wire while the keys were typed (the bursts) and in the long pause after them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypingWire {
    pub typing: WireSpan,
    pub idle: WireSpan,
}

/// A typing sample's keys and wire.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Typing {
    pub keys: Vec<TypedKey>,
    /// `None` where the OS does not tell (not Linux, or ssh's socket not its own: a
    /// ProxyCommand's pipe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<TypingWire>,
}

impl Typing {
    /// A stored record, checked as the hostile input every row is: a bounded count of
    /// keys, finite non-negative times under a minute.
    pub fn checked(self) -> Option<Typing> {
        let time = |s: f64| s.is_finite() && (0.0..60.0).contains(&s);
        let keys_ok = self.keys.len() <= MAX_TYPED_KEYS
            && (self.keys.iter()).all(|k| time(k.echo_s) && k.idle_s.is_none_or(time));
        let span_ok = |w: &WireSpan| w.seconds.is_finite() && (0.0..600.0).contains(&w.seconds);
        let wire_ok = self
            .wire
            .is_none_or(|w| span_ok(&w.typing) && span_ok(&w.idle));
        (keys_ok && wire_ok).then_some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_ssh_spells_them_and_nothing_else() {
        for s in ["yes", "no", "interval:40", "interval:1", "interval:1000"] {
            assert_eq!(KeystrokeTiming::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "",
            "Yes",
            "interval:",
            "interval:0",
            "interval:1001",
            "interval:-5",
            "no ",
        ] {
            assert_eq!(KeystrokeTiming::parse(bad), None, "{bad:?}");
        }
        let json = serde_json::to_string(&KeystrokeTiming::Interval(40)).unwrap();
        assert_eq!(json, "\"interval:40\"");
        assert!(serde_json::from_str::<KeystrokeTiming>("\"interval:0\"").is_err());
    }

    #[test]
    fn a_key_is_placed_by_its_burst_and_its_pause() {
        let key = |idle_s, position| TypedKey {
            idle_s,
            position,
            echo_s: 0.001,
        };
        assert_eq!(key(Some(0.08), 3).place(), KeyPlace::InBurst);
        assert_eq!(key(Some(0.8), 0).place(), KeyPlace::AfterShortPause);
        assert_eq!(key(Some(3.5), 0).place(), KeyPlace::AfterLongPause);
        assert_eq!(key(None, 0).place(), KeyPlace::AfterLongPause);
    }

    #[test]
    fn a_stored_record_out_of_bounds_is_refused() {
        let key = TypedKey {
            idle_s: None,
            position: 0,
            echo_s: 0.001,
        };
        let ok = Typing {
            keys: vec![key; 3],
            wire: None,
        };
        assert!(ok.clone().checked().is_some());
        let nan = TypedKey {
            echo_s: f64::NAN,
            ..key
        };
        assert!(
            Typing {
                keys: vec![nan],
                wire: None
            }
            .checked()
            .is_none()
        );
        let many = Typing {
            keys: vec![key; MAX_TYPED_KEYS + 1],
            wire: None,
        };
        assert!(many.checked().is_none());
        let span = WireSpan {
            seconds: -1.0,
            ..WireSpan::default()
        };
        let wire = Some(TypingWire {
            typing: span,
            idle: WireSpan::default(),
        });
        assert!(Typing { wire, ..ok }.checked().is_none());
    }
}
