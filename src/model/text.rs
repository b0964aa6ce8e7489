//! Which characters may reach a terminal or a config file as themselves: the one
//! definition the output sanitiser (`views::safe`) and the store's checks of stored
//! labels share.

/// Whether `c` must not be printed as itself: control characters (C0 but newline and
/// tab, DEL, C1) and the bidirectional and invisible format characters.
pub fn hidden(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        c if c.is_control() => true,
        // Arabic letter mark, zero-width and directional marks, the bidi embeddings,
        // overrides and isolates, word joiner and invisible operators, the BOM, and the
        // interlinear annotation characters.
        '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' => true,
        '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}' => true,
        _ => false,
    }
}

/// Whether `s` can be an SSH algorithm's name (RFC 4251 §6: printable US-ASCII without
/// comma or whitespace; what servers and clients use is letters, digits and `@._+-`),
/// and so written into an `ssh_config` list as it is.
pub fn algorithm_name(s: &str) -> bool {
    // By byte: reports check every stored sample's names, 100,000 rows and more.
    let name_byte =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'@' | b'.' | b'_' | b'+' | b'-');
    !s.is_empty() && s.bytes().all(name_byte)
}

/// Whether a one-line label (a destination, a host) holds only what prints as itself:
/// no hidden character and no line break.
pub fn plain_line(s: &str) -> bool {
    !s.chars().any(|c| hidden(c) || c == '\n' || c == '\t')
}
