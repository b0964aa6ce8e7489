//! Fitting a table to the terminal it is printed to: columns that say the same on every
//! row move into the heading, algorithm names lose their `@domain` (with a legend where
//! that makes two names alike), and columns a view marked as optional are left out, in
//! its order, until every row is one line. Only terminal tables are fitted: piped
//! output, CSV, Markdown and JSON keep every column and every full name.

use super::export::Grid;
use unicode_width::UnicodeWidthStr;

/// A table made to fit, and what was moved out of it to get there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fitted {
    pub grid: Grid,
    /// Drawn with its frame; else with rules only, two spaces between columns, which
    /// leaves three more columns of width to the cells of a narrow terminal.
    pub framed: bool,
    /// Columns the same on every row: (header, value).
    pub heading: Vec<(String, String)>,
    /// Headers of the columns left out for want of width.
    pub dropped: Vec<String>,
    /// Short names that stand for more than one algorithm: (short name as shown, full).
    pub legend: Vec<(String, String)>,
}

/// The display width of `t`'s widest line.
fn widest(t: &str) -> usize {
    t.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// How wide each column's cells print (its widest line; 0 without rows).
fn cell_widths(g: &Grid) -> Vec<usize> {
    (0..g.headers.len())
        .map(|c| {
            let cells = g.rows.iter().filter_map(|r| r.get(c));
            cells.map(|v| widest(v)).max().unwrap_or(0)
        })
        .collect()
}

/// How wide each column of `g` prints: its widest line, header or cell.
fn column_widths(g: &Grid) -> Vec<usize> {
    (cell_widths(g).into_iter().zip(&g.headers))
        .map(|(cells, h)| cells.max(widest(h)))
        .collect()
}

/// How wide `g` prints: framed, comfy-table's condensed UTF-8 frame (a border before
/// each column and after the last, a space of padding each side of every cell); else
/// rules only (the padding alone).
pub fn table_width(g: &Grid, framed: bool) -> usize {
    let widths = column_widths(g);
    match framed {
        true => 1 + widths.iter().map(|w| w + 3).sum::<usize>(),
        false => widths.iter().map(|w| w + 2).sum::<usize>(),
    }
}

/// `g` fitted into `width` columns.
pub fn fit(g: &Grid, width: usize) -> Fitted {
    let mut f = Fitted {
        grid: g.clone(),
        framed: true,
        ..Fitted::default()
    };
    let same = same_everywhere(&f.grid);
    // From the last, so that the columns still to go keep their numbers.
    for &(c, _) in same.iter().rev() {
        remove_column(&mut f.grid, c);
    }
    f.heading = same.into_iter().filter_map(|(_, said)| said).collect();
    f.legend = shorten_names(&mut f.grid);
    if table_width(&f.grid, true) <= width {
        return f;
    }
    // Headers wider than their figures ("Server CPU (s/GB)" over "1.05") take two
    // lines, the widest first, until the table fits.
    for c in headers_by_excess(&f.grid) {
        wrap_header(&mut f.grid, c);
        if table_width(&f.grid, true) <= width {
            return f;
        }
    }
    f.framed = false;
    // Left out in the view's order until the rows fit.
    while table_width(&f.grid, false) > width {
        let Some(c) = f.grid.droppable.first().copied() else {
            break;
        };
        f.dropped.push(f.grid.headers[c].replace('\n', " "));
        remove_column(&mut f.grid, c);
    }
    f
}

/// The columns whose header is wider than any of their cells, the most so first.
fn headers_by_excess(g: &Grid) -> Vec<usize> {
    let widths = cell_widths(g);
    let mut cols: Vec<(usize, usize)> = (0..g.headers.len())
        .map(|c| (c, g.headers[c].width().saturating_sub(widths[c])))
        .filter(|&(_, excess)| excess > 0)
        .collect();
    cols.sort_by_key(|&(c, excess)| (std::cmp::Reverse(excess), c));
    cols.into_iter().map(|(c, _)| c).collect()
}

/// Column `c`'s header on (about) two lines, none narrower than its widest cell.
fn wrap_header(g: &mut Grid, c: usize) {
    let cell = cell_widths(g)[c];
    let header = g.headers[c].clone();
    let words: Vec<&str> = header.split(' ').collect();
    // The narrowest split into two lines, at a space.
    let halves = (1..words.len()).map(|k| {
        let (a, b) = (words[..k].join(" "), words[k..].join(" "));
        a.width().max(b.width())
    });
    let limit = halves.min().unwrap_or(header.width()).max(cell);
    let mut lines: Vec<String> = Vec::new();
    for w in words {
        match lines.last_mut() {
            Some(l) if l.width() + 1 + w.width() <= limit => {
                l.push(' ');
                l.push_str(w);
            }
            _ => lines.push(w.to_string()),
        }
    }
    g.headers[c] = lines.join("\n");
}

/// The columns that hold one value on every one of two or more rows and go: those
/// marked as headings, with (header, value) for the heading; those the title implies,
/// and any column of dashes, which say nothing, without.
fn same_everywhere(g: &Grid) -> Vec<(usize, Option<(String, String)>)> {
    if g.rows.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in 0..g.headers.len() {
        let first = &g.rows[0][c];
        if !g.rows.iter().all(|r| &r[c] == first) {
            continue;
        }
        let blank = first.is_empty() || first == "-";
        if blank || g.implied.contains(&c) {
            out.push((c, None));
        } else if g.heading.contains(&c) {
            out.push((c, Some((g.headers[c].clone(), first.clone()))));
        }
    }
    out
}

/// Take column `c` out of the grid, and out of every list of columns that names it.
fn remove_column(g: &mut Grid, c: usize) {
    g.headers.remove(c);
    for row in &mut g.rows {
        if c < row.len() {
            row.remove(c);
        }
    }
    let renumber = |cols: &mut Vec<usize>| {
        cols.retain(|&i| i != c);
        for i in cols.iter_mut() {
            if *i > c {
                *i -= 1;
            }
        }
    };
    renumber(&mut g.right);
    renumber(&mut g.names);
    renumber(&mut g.heading);
    renumber(&mut g.implied);
    renumber(&mut g.droppable);
    g.grade = g
        .grade
        .filter(|&i| i != c)
        .map(|i| if i > c { i - 1 } else { i });
}

/// An algorithm's name without its `@domain` (`aes256-gcm@openssh.com` → `aes256-gcm`);
/// anything else as it is.
pub fn short_name(name: &str) -> &str {
    match name.split_once('@') {
        Some((short, domain)) if !short.is_empty() && domain.contains('.') => short,
        _ => name,
    }
}

const MARKS: [&str; 9] = ["¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"];

/// Shorten every name in the grid's name columns (a cell may hold several, as in
/// `aes256-gcm@openssh.com + <implicit>`). A short name that two different names of
/// this table share marks each `@domain` form with a superscript, spelt out in the
/// legend; past nine such names the rest keep their full names.
fn shorten_names(g: &mut Grid) -> Vec<(String, String)> {
    let mut full: Vec<&str> = Vec::new();
    for row in &g.rows {
        for &c in &g.names {
            full.extend(row.get(c).into_iter().flat_map(|v| v.split_whitespace()));
        }
    }
    full.sort_unstable();
    full.dedup();
    let shared = |name: &str| {
        let short = short_name(name);
        short != name && full.iter().filter(|f| short_name(f) == short).count() > 1
    };
    let mut legend: Vec<(String, String)> = Vec::new();
    let mut shown: Vec<(String, String)> = Vec::new();
    for name in full.iter().copied().filter(|n| short_name(n) != *n) {
        let label = match shared(name) {
            false => short_name(name).to_string(),
            true if legend.len() < MARKS.len() => {
                let label = format!("{}{}", short_name(name), MARKS[legend.len()]);
                legend.push((label.clone(), name.to_string()));
                label
            }
            true => name.to_string(),
        };
        shown.push((name.to_string(), label));
    }
    let names = g.names.clone();
    for row in &mut g.rows {
        for &c in &names {
            let Some(cell) = row.get_mut(c) else { continue };
            let replaced: Vec<String> = cell
                .split(' ')
                .map(|w| match shown.iter().find(|(n, _)| n == w) {
                    Some((_, label)) => label.clone(),
                    None => w.to_string(),
                })
                .collect();
            *cell = replaced.join(" ");
        }
    }
    legend
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::export::{Document, Format, Style, render};

    fn grid() -> Grid {
        let mut g = Grid::new(
            "send",
            &[
                "Destination",
                "Mode",
                "Cipher",
                "MB/s",
                "Server CPU (s/GB)",
                "Why",
            ],
        )
        .right(&[3, 4])
        .names(&[2])
        .implied(&[1])
        .heading(&[0])
        .droppable(&[5, 4]);
        for (cipher, speed) in [
            ("aes256-gcm@openssh.com", "885.8"),
            ("chacha20-poly1305@openssh.com", "578.5"),
        ] {
            g.row(vec![
                "local sandbox".into(),
                "send".into(),
                cipher.into(),
                speed.into(),
                "1.05".into(),
                "a long reason why this cipher was graded as it was".into(),
            ]);
        }
        g
    }

    #[test]
    fn a_column_the_same_on_every_row_moves_into_the_heading_or_goes() {
        let f = fit(&grid(), 200);
        // The mode is in the title already: it goes without a word.
        assert_eq!(f.heading, [("Destination".into(), "local sandbox".into())]);
        assert_eq!(
            f.grid.headers,
            ["Cipher", "MB/s", "Server CPU (s/GB)", "Why"]
        );
        assert_eq!(f.grid.right, [1, 2], "the figures stay right-aligned");
        assert!(f.framed);
        // One row: nothing is "the same on every row".
        let mut one = grid();
        one.rows.truncate(1);
        assert!(fit(&one, 200).heading.is_empty());
        assert_eq!(fit(&one, 200).grid.headers.len(), 6);
    }

    #[test]
    fn names_lose_their_domain_then_headers_wrap_then_columns_go_in_order() {
        let f = fit(&grid(), 100);
        assert_eq!(f.grid.rows[0][0], "aes256-gcm");
        assert!(f.dropped.is_empty() && f.framed);
        // Narrower: the long header takes lines before anything is left out.
        let f = fit(&grid(), 96);
        assert_eq!(f.grid.headers[2], "Server CPU\n(s/GB)");
        assert!(f.dropped.is_empty() && f.framed, "{f:?}");
        // Narrower still: rules instead of a frame, before anything is left out.
        let f = fit(&grid(), 92);
        assert!(f.dropped.is_empty() && !f.framed, "{f:?}");
        let f = fit(&grid(), 60);
        assert_eq!(f.dropped, ["Why"]);
        assert!(!f.framed && table_width(&f.grid, false) <= 60);
        let f = fit(&grid(), 30);
        assert_eq!(f.dropped, ["Why", "Server CPU (s/GB)"]);
        assert!(f.legend.is_empty());
    }

    #[test]
    fn two_names_alike_once_shortened_are_told_apart_in_a_legend() {
        let mut g = Grid::new("", &["KEX", "ms"]).names(&[0]);
        for kex in [
            "curve25519-sha256",
            "curve25519-sha256@libssh.org",
            "ecdh-sha2-nistp256 + ssh-ed25519",
        ] {
            g.row(vec![kex.into(), "1".into()]);
        }
        let f = fit(&g, 100);
        let cells: Vec<&str> = f.grid.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            cells,
            [
                "curve25519-sha256",
                "curve25519-sha256¹",
                "ecdh-sha2-nistp256 + ssh-ed25519"
            ]
        );
        assert_eq!(
            f.legend,
            [(
                "curve25519-sha256¹".into(),
                "curve25519-sha256@libssh.org".into()
            )]
        );
    }

    /// The widths counted are the widths drawn, framed or not, and a fitted document
    /// has no line wider than its terminal and says what it left out.
    #[test]
    fn the_width_counts_what_comfy_table_draws() {
        let doc = |g: &Grid| {
            let mut d = Document::default();
            d.grid(g.clone());
            d
        };
        let widest = |t: &str| t.lines().map(UnicodeWidthStr::width).max().unwrap();
        let drawn = render(&doc(&grid()), &(), Format::Table, Style::default());
        assert_eq!(widest(&drawn), table_width(&grid(), true), "{drawn}");
        for width in [60u16, 92, 100] {
            let style = Style {
                width: Some(width),
                color: false,
            };
            let out = render(&doc(&grid()), &(), Format::Table, style);
            let f = fit(&grid(), width.into());
            let table: String = (out.lines())
                .filter(|l| l.contains("aes256-gcm") || l.contains("chacha20"))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(widest(&table), table_width(&f.grid, f.framed), "{out}");
            assert!(widest(&out) <= width.into(), "{out}");
            assert_eq!(
                out.contains("Left out to fit"),
                !f.dropped.is_empty(),
                "{out}"
            );
        }
    }
}
