//! Output formats shared by every report view: a view builds a [`Document`] (text and
//! tables) plus a JSON value with the raw figures, and [`render`] turns it into a
//! terminal table, Markdown, CSV or JSON.

use super::safe;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table, presets};
use serde::Serialize;

/// Output formats of the report commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

/// How terminal tables are drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// Wrap to this many columns (the terminal's width); `None`: never wrap.
    pub width: Option<u16>,
    /// Colour the grade column (a terminal without `NO_COLOR`).
    pub color: bool,
}

/// A table with a title.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Grid {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns to align right (figures).
    #[serde(skip)]
    pub right: Vec<usize>,
}

impl Grid {
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Self {
        Grid {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            ..Grid::default()
        }
    }

    pub fn right(mut self, cols: &[usize]) -> Self {
        self.right = cols.to_vec();
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
}

/// One piece of a report.
#[derive(Clone, Debug)]
pub enum Block {
    /// A paragraph (one or more lines).
    Text(String),
    Grid(Grid),
    /// Preformatted text (a config file): a code block in Markdown.
    Code(String),
}

#[derive(Clone, Debug, Default)]
pub struct Document {
    pub blocks: Vec<Block>,
}

impl Document {
    pub fn text(&mut self, t: impl Into<String>) {
        self.blocks.push(Block::Text(t.into()));
    }
    pub fn grid(&mut self, g: Grid) {
        self.blocks.push(Block::Grid(g));
    }
    pub fn code(&mut self, c: impl Into<String>) {
        self.blocks.push(Block::Code(c.into()));
    }
}

fn grade_color(cell: &str) -> Option<Color> {
    match cell {
        "recommended" => Some(Color::Green),
        "legacy" => Some(Color::Yellow),
        "broken" => Some(Color::Red),
        _ => None,
    }
}

fn terminal_table(g: &Grid, style: Style) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match style.width {
        Some(w) => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(w);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if style.color {
        // The caller decided (a terminal without NO_COLOR); comfy-table would
        // otherwise check for a terminal itself.
        t.enforce_styling();
    }
    t.set_header(g.headers.clone());
    let grade_col = g.headers.iter().position(|h| h == "Grade");
    for row in &g.rows {
        t.add_row(row.iter().enumerate().map(|(i, c)| {
            let mut cell = Cell::new(c);
            if g.right.contains(&i) {
                cell = cell.set_alignment(CellAlignment::Right);
            }
            if style.color && Some(i) == grade_col {
                if let Some(color) = grade_color(c) {
                    cell = cell.fg(color);
                }
            }
            cell
        }));
    }
    t.to_string()
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

fn markdown_table(g: &Grid) -> String {
    let mut out = String::new();
    if !g.title.is_empty() {
        out.push_str(&format!("### {}\n\n", md_escape(&g.title)));
    }
    out.push_str(&format!(
        "| {} |\n",
        g.headers
            .iter()
            .map(|h| md_escape(h))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    let seps: Vec<&str> = (0..g.headers.len())
        .map(|i| if g.right.contains(&i) { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", seps.join(" | ")));
    for row in &g.rows {
        out.push_str(&format!(
            "| {} |\n",
            row.iter()
                .map(|c| md_escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

impl Document {
    /// Every string of every block through the sanitiser: what a server or a stored row
    /// said reaches no terminal as escape sequences, whichever view put it where.
    fn safe(&self) -> Document {
        let s = |t: &String| safe::text(t).into_owned();
        let blocks = (self.blocks.iter())
            .map(|b| match b {
                Block::Text(t) => Block::Text(s(t)),
                Block::Code(c) => Block::Code(s(c)),
                Block::Grid(g) => Block::Grid(Grid {
                    title: s(&g.title),
                    headers: g.headers.iter().map(s).collect(),
                    rows: (g.rows.iter()).map(|r| r.iter().map(s).collect()).collect(),
                    right: g.right.clone(),
                }),
            })
            .collect();
        Document { blocks }
    }
}

/// Render a document; JSON ignores it and prints `json`. Either way every string is
/// sanitised ([`safe`]).
pub fn render(doc: &Document, json: &impl Serialize, format: Format, style: Style) -> String {
    let doc = &doc.safe();
    match format {
        // Through a `Value`, so that keys come sorted whatever the view's field order.
        Format::Json => {
            let value = serde_json::to_value(json).expect("serializable");
            let text = serde_json::to_string_pretty(&value).expect("serializable");
            safe::json(&text).into_owned() + "\n"
        }
        Format::Csv => {
            // One CSV: the table's title as the first column, so several tables stay
            // apart; text blocks are left out.
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(Vec::new());
            let mut header_done: Vec<Vec<String>> = Vec::new();
            for b in &doc.blocks {
                if let Block::Grid(g) = b {
                    if !header_done.contains(&g.headers) {
                        let mut h = vec!["table".to_string()];
                        h.extend(g.headers.iter().cloned());
                        w.write_record(&h).expect("in-memory");
                        header_done.push(g.headers.clone());
                    }
                    for row in &g.rows {
                        let mut r = vec![g.title.clone()];
                        r.extend(row.iter().cloned());
                        w.write_record(&r).expect("in-memory");
                    }
                }
            }
            String::from_utf8(w.into_inner().expect("in-memory")).expect("utf-8 in, utf-8 out")
        }
        Format::Markdown => {
            let mut parts = Vec::new();
            for b in &doc.blocks {
                parts.push(match b {
                    Block::Text(t) => t.clone() + "\n",
                    Block::Grid(g) => markdown_table(g),
                    Block::Code(c) => format!("```\n{}```\n", c),
                });
            }
            parts.join("\n")
        }
        Format::Table => {
            let mut out = String::new();
            for b in &doc.blocks {
                match b {
                    Block::Text(t) => out.push_str(&format!("{t}\n")),
                    Block::Code(c) => out.push_str(c),
                    Block::Grid(g) => {
                        if !g.title.is_empty() {
                            out.push_str(&format!("\n{}\n", g.title));
                        }
                        out.push_str(&terminal_table(g, style));
                        out.push('\n');
                    }
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        let mut d = Document::default();
        d.text("destination: x");
        let mut g = Grid::new("send", &["Cipher", "MB/s", "Grade"]).right(&[1]);
        g.row(vec!["aes|gcm".into(), "1.0".into(), "broken".into()]);
        d.grid(g);
        d.code("Host x\n  Ciphers a\n");
        d
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_figures() {
        let md = render(&doc(), &(), Format::Markdown, Style::default());
        assert!(
            md.contains("| Cipher | MB/s | Grade |\n| --- | ---: | --- |"),
            "{md}"
        );
        assert!(md.contains("aes\\|gcm"), "{md}");
        assert!(md.contains("```\nHost x\n  Ciphers a\n```"), "{md}");
    }

    #[test]
    fn csv_quotes_and_names_the_table() {
        let csv = render(&doc(), &(), Format::Csv, Style::default());
        assert_eq!(csv, "table,Cipher,MB/s,Grade\nsend,aes|gcm,1.0,broken\n");
    }

    #[test]
    fn colour_only_when_asked() {
        let plain = render(&doc(), &(), Format::Table, Style::default());
        assert!(!plain.contains('\u{1b}'));
        let coloured = render(
            &doc(),
            &(),
            Format::Table,
            Style {
                width: None,
                color: true,
            },
        );
        assert!(coloured.contains('\u{1b}'));
    }

    #[test]
    fn narrow_terminals_wrap() {
        let wide = render(&doc(), &(), Format::Table, Style::default());
        let narrow = render(
            &doc(),
            &(),
            Format::Table,
            Style {
                width: Some(20),
                color: false,
            },
        );
        let longest = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(longest(&narrow) <= 20, "{narrow}");
        assert!(longest(&wide) > 20);
    }
}
