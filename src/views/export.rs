//! Output formats shared by every report view: a view builds a [`Document`] (text and
//! tables) plus a JSON value with the raw figures, and [`render`] turns it into a
//! terminal table, Markdown, CSV or JSON.

use super::scope::{WIDTH, wrap_at};
use super::{fit, safe};
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
    /// Fit to this many columns (the terminal's width, [`super::fit`]); `None`: print
    /// every column whole (pipes, `--wide`).
    pub width: Option<u16>,
    /// Colour the grade column (a terminal without `NO_COLOR`).
    pub color: bool,
}

/// A table with a title.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Grid {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns to align right (figures).
    #[serde(skip)]
    pub right: Vec<usize>,
    /// Columns of algorithm names, shortened in a terminal ([`super::fit`]).
    #[serde(skip)]
    pub names: Vec<usize>,
    /// Columns that move into the heading in a terminal when every row holds the same.
    #[serde(skip)]
    pub heading: Vec<usize>,
    /// Columns a terminal leaves out when every row holds the same, which the title
    /// says already (the destination, the mode).
    #[serde(skip)]
    pub implied: Vec<usize>,
    /// Columns a terminal too narrow leaves out, the first first.
    #[serde(skip)]
    pub droppable: Vec<usize>,
    /// The column of grades, coloured in a terminal that takes colour.
    #[serde(skip)]
    pub grade: Option<usize>,
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

    pub fn names(mut self, cols: &[usize]) -> Self {
        self.names = cols.to_vec();
        self
    }

    pub fn heading(mut self, cols: &[usize]) -> Self {
        self.heading = cols.to_vec();
        self
    }

    pub fn implied(mut self, cols: &[usize]) -> Self {
        self.implied = cols.to_vec();
        self
    }

    /// The columns to leave out of a narrow terminal, in the order they go.
    pub fn droppable(mut self, cols: &[usize]) -> Self {
        self.droppable = cols.to_vec();
        self
    }

    pub fn grade(mut self, col: usize) -> Self {
        self.grade = Some(col);
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
    /// A paragraph wrapped where it is printed (at [`WIDTH`] or a narrower terminal's
    /// width), each line's continuation indented by `indent`.
    Para {
        text: String,
        indent: String,
    },
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
    pub fn para(&mut self, t: impl Into<String>, indent: &str) {
        self.blocks.push(Block::Para {
            text: t.into(),
            indent: indent.into(),
        });
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

/// A table without a frame: a rule under the header, two spaces between columns.
const RULED: &str = "     ─             ";

/// `g` drawn whole: a row is never wrapped into lines (fitting it is [`fit`]'s).
fn terminal_table(g: &Grid, color: bool, framed: bool) -> String {
    let mut t = Table::new();
    t.load_preset(match framed {
        true => presets::UTF8_FULL_CONDENSED,
        false => RULED,
    });
    t.set_content_arrangement(ContentArrangement::Disabled);
    if color {
        // The caller decided (a terminal without NO_COLOR); comfy-table would
        // otherwise check for a terminal itself.
        t.enforce_styling();
    }
    t.set_header(g.headers.clone());
    let grade_col = g.grade;
    for row in &g.rows {
        t.add_row(row.iter().enumerate().map(|(i, c)| {
            let mut cell = Cell::new(c);
            if g.right.contains(&i) {
                cell = cell.set_alignment(CellAlignment::Right);
            }
            if color && Some(i) == grade_col {
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
                Block::Para { text, indent } => Block::Para {
                    text: s(text),
                    indent: indent.clone(),
                },
                Block::Code(c) => Block::Code(s(c)),
                Block::Grid(g) => Block::Grid(Grid {
                    title: s(&g.title),
                    headers: g.headers.iter().map(s).collect(),
                    rows: (g.rows.iter()).map(|r| r.iter().map(s).collect()).collect(),
                    ..g.clone()
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
                    Block::Para { text, indent } => wrap_at(text, indent, WIDTH) + "\n",
                    Block::Grid(g) => markdown_table(g),
                    Block::Code(c) => format!("```\n{}```\n", c),
                });
            }
            parts.join("\n")
        }
        Format::Table => match style.width {
            Some(width) => fitted_document(doc, style, width.into()),
            None => whole_document(doc, style),
        },
    }
}

/// Every column and every line as the view made them: output for scripts and `--wide`.
fn whole_document(doc: &Document, style: Style) -> String {
    let mut out = String::new();
    for b in &doc.blocks {
        match b {
            Block::Text(t) => out.push_str(&format!("{t}\n")),
            Block::Para { text, indent } => {
                out.push_str(&format!("{}\n", wrap_at(text, indent, WIDTH)));
            }
            Block::Code(c) => out.push_str(c),
            Block::Grid(g) => {
                if !g.title.is_empty() {
                    out.push_str(&format!("\n{}\n", g.title));
                }
                out.push_str(&terminal_table(g, style.color, true));
                out.push('\n');
            }
        }
    }
    out
}

/// A document for a terminal `width` columns wide: paragraphs and comments wrapped,
/// tables fitted ([`fit`]) and followed by what was moved out of them.
fn fitted_document(doc: &Document, style: Style, width: usize) -> String {
    let wrap = |t: &str, indent: &str| wrap_at(t, indent, width);
    let mut out = String::new();
    for b in &doc.blocks {
        match b {
            Block::Text(t) => out.push_str(&format!("{}\n", wrap(t, ""))),
            Block::Para { text, indent } => {
                let said = wrap_at(text, indent, width.min(WIDTH));
                out.push_str(&format!("{said}\n"));
            }
            Block::Code(c) => out.push_str(&wrap_comments(c, width)),
            Block::Grid(g) => {
                let f = fit::fit(g, width);
                let heading: Vec<String> = (f.heading.iter())
                    .map(|(h, v)| format!("{h}: {v}"))
                    .collect();
                let title = match (g.title.is_empty(), heading.is_empty()) {
                    (_, true) => g.title.clone(),
                    (true, false) => heading.join("; "),
                    (false, false) => format!("{} ({})", g.title, heading.join("; ")),
                };
                if !title.is_empty() {
                    out.push_str(&format!("\n{}\n", wrap(&title, "  ")));
                }
                // A terminal narrower than the columns no view lets go folds the
                // rows, and is told so.
                out.push_str(&terminal_table(&f.grid, style.color, f.framed));
                out.push('\n');
                for (short, full) in &f.legend {
                    out.push_str(&format!("{}\n", wrap(&format!("{short} = {full}"), "  ")));
                }
                let needs = fit::table_width(&f.grid, f.framed);
                if needs > width {
                    let said =
                        format!("This table needs {needs} columns; the terminal has {width}.");
                    out.push_str(&format!("{}\n", wrap(&said, "  ")));
                }
                if !f.dropped.is_empty() {
                    let said = format!(
                        "Left out to fit {width} columns: {} (--wide shows them).",
                        f.dropped.join(", ")
                    );
                    out.push_str(&format!("{}\n", wrap(&said, "  ")));
                }
            }
        }
    }
    out
}

/// A config block for a terminal: its comments wrapped as comments; a setting is never
/// split (ssh_config has no continuation lines), so its view keeps it short.
fn wrap_comments(code: &str, width: usize) -> String {
    let mut out = String::new();
    for line in code.lines() {
        let body = line.trim_start();
        match body.strip_prefix('#') {
            Some(_) if line.chars().count() > width => {
                let indent = &line[..line.len() - body.len()];
                let rest = format!("{indent}# ");
                out.push_str(&wrap_at(line, &rest, width));
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        let mut d = Document::default();
        d.text("destination: x");
        let mut g = Grid::new("send", &["Cipher", "MB/s", "Grade"])
            .right(&[1])
            .grade(2);
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

    /// Paragraphs wrap to the terminal; a table no view can narrow further keeps each
    /// row on one line and says how wide it is.
    #[test]
    fn narrow_terminals_wrap_words_never_rows() {
        let mut d = doc();
        d.para(
            "a paragraph long enough to need more than one line of twenty",
            "  ",
        );
        let narrow = render(
            &d,
            &(),
            Format::Table,
            Style {
                width: Some(20),
                color: false,
            },
        );
        let row = narrow.lines().find(|l| l.contains("aes|gcm")).unwrap();
        assert!(row.contains("1.0") && row.contains("broken"), "{narrow}");
        assert!(narrow.contains("This table needs 23\n"), "{narrow}");
        let para: Vec<&str> = narrow
            .lines()
            .skip_while(|l| !l.starts_with("a para"))
            .collect();
        assert!(
            para.len() > 2 && para.iter().all(|l| l.chars().count() <= 20),
            "{narrow}"
        );
        let wide = render(&d, &(), Format::Table, Style::default());
        assert!(!wide.contains("This table needs"), "{wide}");
    }
}
