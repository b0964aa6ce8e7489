//! Charts as SVG strings (plotters' SVG backend, which escapes every text and
//! attribute), and their PNG rendering (resvg) for pasting into forums.

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One bar: a figure with its 95% interval.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: f64,
    /// Bars of one group share a colour (e.g. the cipher).
    pub group: String,
}

/// A stable colour per group name.
pub fn palette(group: &str) -> RGBColor {
    const COLORS: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    let h = group.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    COLORS[(h % COLORS.len() as u64) as usize]
}

fn white(root: &DrawingArea<SVGBackend, Shift>) -> Result<()> {
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The frame both bar charts draw into: one row per label, the first on top.
type RowChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<RangedCoordf64, plotters::coord::ranged1d::SegmentedCoord<RangedCoordusize>>,
>;

/// Draw a row chart: `draw` gets the chart and the segment index of row `i`.
fn rows_chart(
    title: &str,
    unit: &str,
    labels: &[String],
    max: f64,
    legend_room: u32,
    draw: impl FnOnce(&mut RowChart, &dyn Fn(usize) -> usize) -> Result<()>,
) -> Result<String> {
    let n = labels.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1020, 80 + legend_room + 16 * n as u32))
            .into_drawing_area();
        white(&root)?;
        let max = if max > 0.0 { max * 1.05 } else { 1.0 };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(420)
            .build_cartesian_2d(0.0..max, (0..n).into_segmented())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // Row i from the top is segment n-1-i from the bottom.
        let row = |i: usize| n - 1 - i;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(k) if *k < labels.len() => labels[row(*k)].clone(),
                _ => String::new(),
            })
            .x_desc(unit)
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        draw(&mut chart, &row)?;
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(svg)
}

/// One bar of a row, leaving a small gap to the next.
fn segment(
    row: usize,
    from: f64,
    to: f64,
    style: ShapeStyle,
) -> Rectangle<(f64, SegmentValue<usize>)> {
    let mut r = Rectangle::new(
        [
            (from, SegmentValue::Exact(row)),
            (to, SegmentValue::Exact(row + 1)),
        ],
        style,
    );
    r.set_margin(2, 2, 0, 0);
    r
}

/// Horizontal bars, first bar on top, with interval whiskers.
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar]) -> Result<String> {
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let max = bars.iter().map(|b| b.value + b.ci).fold(0.0, f64::max);
    rows_chart(title, unit, &labels, max, 0, |chart, row| {
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .map(|(i, b)| segment(row(i), 0.0, b.value, palette(&b.group).filled())),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .filter(|(_, b)| b.ci > 0.0)
                    .map(|(i, b)| {
                        let y = SegmentValue::CenterOf(row(i));
                        PathElement::new(
                            vec![((b.value - b.ci).max(0.0), y.clone()), (b.value + b.ci, y)],
                            BLACK.stroke_width(2),
                        )
                    }),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    })
}

/// Horizontal stacked bars: each bar is a sequence of segments, one per part in order
/// from the left, coloured by part; the parts are named in the title.
pub fn stacked_bar_chart(
    title: &str,
    unit: &str,
    labels: &[String],
    parts: &[&str],
    values: &[Vec<f64>],
) -> Result<String> {
    let max = values
        .iter()
        .map(|v| v.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let title = format!("{title} — from the left: {}", parts.join(", "));
    rows_chart(&title, unit, labels, max, 0, |chart, row| {
        for (p, part) in parts.iter().enumerate() {
            let color = palette(part);
            chart
                .draw_series(values.iter().enumerate().map(|(i, v)| {
                    let start: f64 = v[..p].iter().sum();
                    segment(row(i), start, start + v[p], color.filled())
                }))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    })
}

/// The heat map's chart: segmented columns and rows.
type HeatChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<SegmentedCoord<RangedCoordusize>, SegmentedCoord<RangedCoordusize>>,
>;

/// One cell at column `c`, row `y` (from the bottom): coloured by `t` (0 slowest, 1
/// fastest), with its figure.
fn heat_cell(chart: &mut HeatChart, c: usize, y: usize, v: f64, t: f64) -> Result<()> {
    let color = HSLColor(t * 0.33, 0.65, 0.55);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [
                (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
            ],
            color.filled(),
        )))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let style =
        TextStyle::from(("sans-serif", 11).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    chart
        .draw_series(std::iter::once(Text::new(
            format!("{v:.0}"),
            (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y)),
            style,
        )))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// A grid of cells coloured from slow (red) to fast (green), with the figure in each.
pub fn heat_map(
    title: &str,
    rows: &[String],
    cols: &[String],
    cell: &dyn Fn(usize, usize) -> Option<f64>,
) -> Result<String> {
    let (nr, nc) = (rows.len().max(1), cols.len().max(1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (260 + 70 * nc as u32, 240 + 26 * nr as u32))
            .into_drawing_area();
        white(&root)?;
        let values: Vec<f64> = (0..rows.len())
            .flat_map(|r| (0..cols.len()).filter_map(move |c| cell(r, c)))
            .collect();
        let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(190)
            .y_label_area_size(230)
            .build_cartesian_2d((0..nc).into_segmented(), (0..nr).into_segmented())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nc)
            .y_labels(nr)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(k) if *k < cols.len() => cols[*k].clone(),
                _ => String::new(),
            })
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(k) if *k < rows.len() => rows[nr - 1 - *k].clone(),
                _ => String::new(),
            })
            .x_label_style(
                ("sans-serif", 11)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .y_label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for r in 0..rows.len() {
            for c in 0..cols.len() {
                let Some(v) = cell(r, c) else { continue };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
                heat_cell(&mut chart, c, nr - 1 - r, v, t)?;
            }
        }
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(svg)
}

/// Sans-serif families tried for the charts' text, in order, when the font database's
/// default (Arial) is not installed: the usual ones on Linux, the BSDs and macOS.
const SANS: [&str; 6] = [
    "Arial",
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "Helvetica",
    "Bitstream Vera Sans",
];

/// Render an SVG to a PNG file (system fonts for the text; without any font the text is
/// left out and the bars are still drawn).
pub fn save_png(svg: &str, path: &std::path::Path) -> Result<()> {
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    let has = |db: &resvg::usvg::fontdb::Database, name: &str| {
        db.faces()
            .any(|f| f.families.iter().any(|(fam, _)| fam == name))
    };
    let family = SANS
        .iter()
        .find(|f| has(db, f))
        .map(|f| f.to_string())
        .or_else(|| {
            db.faces()
                .next()
                .and_then(|f| f.families.first())
                .map(|(f, _)| f.clone())
        });
    if let Some(f) = family {
        db.set_sans_serif_family(f);
    }
    let tree = resvg::usvg::Tree::from_str(svg, &opt).context("parsing the chart SVG")?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .context("allocating the image")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .save_png(path)
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars() -> Vec<Bar> {
        vec![
            Bar {
                label: "fast".into(),
                value: 900.0,
                ci: 20.0,
                group: "a".into(),
            },
            Bar {
                label: "<script>alert(1)</script>".into(),
                value: 30.0,
                ci: 0.0,
                group: "b".into(),
            },
        ]
    }

    #[test]
    fn bars_are_drawn_and_labels_escaped() {
        let svg = bar_chart("send", "MB/s", &bars()).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.matches("<rect").count() >= 3, "background and two bars");
        assert!(svg.contains("&lt;script&gt;"));
        assert!(!svg.contains("<script>"));
    }

    #[test]
    fn stacked_bars_have_a_segment_per_part_named_in_the_title() {
        let svg = stacked_bar_chart(
            "connect",
            "ms",
            &["a".into(), "b".into()],
            &["tcp", "kex"],
            &[vec![1.0, 2.0], vec![0.5, 4.0]],
        )
        .unwrap();
        // The background and four segments.
        assert!(svg.matches("<rect").count() >= 5, "{svg}");
        assert!(svg.contains("from the left: tcp, kex"), "{svg}");
    }

    #[test]
    fn heat_map_cells() {
        let rows = vec!["aes128-ctr".to_string(), "3des-cbc".to_string()];
        let cols = vec!["hmac-sha1".to_string()];
        let svg = heat_map("send", &rows, &cols, &|r, _| {
            Some(if r == 0 { 700.0 } else { 28.0 })
        })
        .unwrap();
        assert!(svg.contains("\n700\n") && svg.contains("\n28\n"), "{svg}");
    }

    #[test]
    fn png_rendering() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        save_png(
            &bar_chart("Send throughput per cipher and MAC", "MB/s", &bars()).unwrap(),
            &path,
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        // The text is drawn with an installed sans-serif font (fonts-dejavu-core on
        // Debian): the caption band above the bars has ink.
        let img = resvg::tiny_skia::Pixmap::load_png(&path).unwrap();
        let caption = img.pixels()[..img.width() as usize * 30]
            .iter()
            .filter(|p| p.red() < 128)
            .count();
        assert!(
            caption > 100,
            "no caption text in the PNG ({caption} dark pixels)"
        );
    }
}
