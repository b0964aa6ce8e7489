//! The one output sanitiser: what a server or a database row said reaches a terminal
//! only as visible text. Control characters (C0 but newline and tab, DEL, C1) and the
//! bidirectional and invisible format characters are written as `\u{..}` escapes, so no
//! escape sequence sets a title, moves the cursor or reorders a line.

use crate::model::text::hidden;
use std::borrow::Cow;

/// `s` with every hidden character escaped (borrowed when there is none).
pub fn text(s: &str) -> Cow<'_, str> {
    escaped(s, |c| format!("\\u{{{c:x}}}"))
}

/// JSON text with every hidden character inside its strings as a JSON escape (serde
/// escapes C0 itself; DEL, C1 and the format characters it leaves as they are). Outside
/// a string JSON holds only whitespace, punctuation and literals: a hidden character can
/// only be inside one, where `\uXXXX` is what it means (all of them are below U+10000).
pub fn json(s: &str) -> Cow<'_, str> {
    escaped(s, |c| format!("\\u{c:04x}"))
}

/// `s` with each hidden character written as `escape` gives its code point.
fn escaped(s: &str, escape: fn(u32) -> String) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match hidden(c) {
            true => out.push_str(&escape(c as u32)),
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_bidi_overrides_become_visible() {
        let hostile =
            "Permission denied\u{1b}]0;pwned\u{7}\u{1b}[31m red \u{202e}txt.exe\u{9b}2J\u{7f}";
        let shown = text(hostile);
        assert_eq!(
            shown,
            "Permission denied\\u{1b}]0;pwned\\u{7}\\u{1b}[31m red \\u{202e}txt.exe\\u{9b}2J\\u{7f}"
        );
        assert!(!shown.chars().any(hidden));
        // Lines and tabs stay: messages have hints on lines of their own.
        assert_eq!(text("a\n\tb"), "a\n\tb");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_meaning_with_hidden_characters_escaped() {
        let v = serde_json::json!({ "said": "x\u{202e}y\u{9b}z\u{1b}" });
        let s = serde_json::to_string(&v).unwrap();
        let safe = json(&s);
        assert!(!safe.chars().any(hidden), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
