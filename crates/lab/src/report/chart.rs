//! SVG charts of figures, drawn with plotters' SVG backend and no font library.
//!
//! Contract: [`render_svg`] gives a standalone SVG document of [`SIZE`] pixels with the title
//! "figure title (scale)", both axes with ticks, numeric tick labels and the axis labels (which carry
//! the units), and a legend to the right of the plot naming every series. Same figure, same bytes.
//!
//! - The title is wrapped at spaces (a word too long for a line is cut) onto as many centred lines as
//!   it needs, at 18 px while three lines are enough, else smaller (down to 12 px, then more lines);
//!   the plot starts below it. No line is wider than the chart (see [`title_lines`]).
//!
//! - Lines: over a numeric x axis, or over categories when `categories` is set (x = category index).
//!   Each series is a 2 px line through its points in the given order, with a marker on every point
//!   (so a single point shows); dashed series (e.g. the paper's numbers) are dashed with hollow markers.
//! - Bars: grouped by category, one bar per series, from zero (so negative values go down). Without
//!   categories the distinct x values become the categories. Dashed series are drawn as light bars
//!   with an outline.
//! - Points with NaN or infinite coordinates, or of magnitude 1e300 and more (the axis span would
//!   overflow), are skipped. A figure with nothing left to draw still gets its axes, legend and a
//!   "no data" note.
//! - The y axis always includes zero (differences are not exaggerated), and both axes run from one
//!   round tick to another (steps of 1, 2, 2.5 or 5 times a power of ten, even over several decades).
//!
//! Why no font library: plotters' default `ttf` feature pulls font-kit, which needs fontconfig and
//! freetype on the system. Layout needs only text widths, which [`text_width`] estimates from the
//! advance widths of DejaVu Sans (the font the PNG is drawn with; it is wider than Arial, Helvetica
//! or Liberation Sans, so text that fits in DejaVu Sans fits in a browser using those too).

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::format::{cell_number, nice_ticks, tick_labels};
use super::model::{Figure, FigureKind, Series};
use super::ReportError;

/// Width and height of every chart, in pixels (the page shows them at this size).
pub const SIZE: (u32, u32) = (880, 500);

/// Colour-blind-friendly palette (Okabe-Ito, then a few more); series take them in order.
const PALETTE: [(u8, u8, u8); 10] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (120, 120, 120),
    (150, 80, 30),
    (90, 60, 170),
    (180, 170, 0),
];

/// Values this large or larger are not drawn: the span of an axis holding them could overflow f64.
const TOO_BIG: f64 = 1e300;

/// The chart title: the figure's title and the scale it ran at.
pub fn full_title(fig: &Figure, scale: &str) -> String {
    if scale.is_empty() {
        fig.title.clone()
    } else {
        format!("{} ({scale})", fig.title)
    }
}

/// The category name of x in a figure with categories (x must be a valid index).
pub fn category_name(fig: &Figure, x: f64) -> Option<String> {
    index_of(x, fig.categories.len()).map(|i| fig.categories[i].clone())
}

fn index_of(x: f64, n: usize) -> Option<usize> {
    let r = x.round();
    ((x - r).abs() < 1e-9 && r >= 0.0 && r < n as f64).then_some(r as usize)
}

/// The SVG document of `fig`, titled with `scale`.
pub fn render_svg(fig: &Figure, scale: &str) -> Result<String, ReportError> {
    let failed = |message: String| ReportError::Chart { figure: fig.id.clone(), format: "SVG", message };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, fig, &full_title(fig, scale)).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    svg.push('\n');
    Ok(svg)
}

/// Title font sizes: the largest, and the smallest it shrinks to before taking more lines.
const TITLE_PX: f64 = 18.0;
const TITLE_MIN_PX: f64 = 12.0;
/// Lines the title may take at [`TITLE_PX`] before it shrinks.
const TITLE_LINES: usize = 3;
/// Space between the title and the chart's left and right edges, in pixels.
const TITLE_SIDE: f64 = 16.0;

/// The font size and lines of a chart title: wrapped to fit [`SIZE`]'s width less a margin on each
/// side (by [`text_width`]).
pub fn title_lines(title: &str) -> (f64, Vec<String>) {
    let room = f64::from(SIZE.0) - 2.0 * TITLE_SIDE;
    let mut px = TITLE_PX;
    loop {
        let lines = wrap(title, room, px);
        if lines.len() <= TITLE_LINES || px <= TITLE_MIN_PX {
            return (px, lines);
        }
        px -= 1.0;
    }
}

/// `text` in lines of at most `room` pixels at `px`: words (split at spaces) go on a line while
/// they fit; a word wider than a line is cut between characters.
fn wrap(text: &str, room: f64, px: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let joined = if current.is_empty() { word.to_string() } else { format!("{current} {word}") };
        if text_width(&joined, px) <= room {
            current = joined;
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        for c in word.chars() {
            current.push(c);
            if text_width(&current, px) > room && current.chars().count() > 1 {
                current.pop();
                lines.push(std::mem::replace(&mut current, c.to_string()));
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// A font of `px` pixels in the SVG. (plotters writes `size / 1.24` as the SVG font size.)
fn font(px: f64) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", px * 1.24)).color(&BLACK)
}

/// Advance widths of DejaVu Sans for ASCII ' ' to '~', in thousandths of the font size.
const ADVANCE: [u16; 95] = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636,
    636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863,
    748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635,
    615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636,
    337, 636, 838,
];

/// How wide `text` is at a font size of `px` pixels, in DejaVu Sans (a character beyond ASCII counts
/// as a full em, as wide as DejaVu Sans's widest letters). No kerning.
pub fn text_width(text: &str, px: f64) -> f64 {
    let ems: u32 = text
        .chars()
        .map(|c| match c {
            ' '..='~' => u32::from(ADVANCE[c as usize - ' ' as usize]),
            _ => 1000,
        })
        .sum();
    f64::from(ems) / 1000.0 * px
}

/// The largest size up to `max` px (but not below 9) at which `text` fits in `room` pixels.
fn fitting(text: &str, room: f64, max: f64) -> f64 {
    (room / text_width(text, 1.0).max(1.0)).clamp(9.0, max)
}

fn colour(k: usize) -> RGBColor {
    let (r, g, b) = PALETTE[k % PALETTE.len()];
    RGBColor(r, g, b)
}

/// What the x axis is: numbers, or slots named by category.
enum XAxis {
    Numeric,
    /// Slot names; a point goes to slot `slot_of(x)`.
    Slots {
        names: Vec<String>,
        values: Vec<f64>,
    },
}

impl XAxis {
    fn of(fig: &Figure) -> XAxis {
        if !fig.categories.is_empty() {
            let n = fig.categories.len();
            return XAxis::Slots { names: fig.categories.clone(), values: (0..n).map(|i| i as f64).collect() };
        }
        if fig.kind == FigureKind::Line {
            return XAxis::Numeric;
        }
        // Bars without categories: the distinct x values are the categories.
        let mut values: Vec<f64> =
            fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| drawable(*x)).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let names = values.iter().map(|&x| cell_number(x)).collect();
        XAxis::Slots { names, values }
    }

    /// The plotted x of a data x: itself, or its slot index.
    fn place(&self, x: f64) -> Option<f64> {
        match self {
            XAxis::Numeric => drawable(x).then_some(x),
            XAxis::Slots { values, .. } => {
                values.iter().position(|v| (v - x).abs() <= 1e-9 * v.abs().max(1.0)).map(|i| i as f64)
            }
        }
    }
}

fn drawable(v: f64) -> bool {
    v.is_finite() && v.abs() < TOO_BIG
}

/// The points of a series as plotted, skipping those that cannot be drawn.
fn placed(axis: &XAxis, s: &Series) -> Vec<(f64, f64)> {
    s.points.iter().filter(|p| drawable(p.1)).filter_map(|&(x, y)| axis.place(x).map(|px| (px, y))).collect()
}

/// An axis: its range and the labelled ticks on it. It is its own plotters coordinate so that the
/// ticks are exactly ours (round steps, or one per category) and carry our labels.
#[derive(Clone)]
struct Axis {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
    labels: Vec<String>,
}

impl Axis {
    fn numeric(lo: f64, hi: f64, target: usize) -> Axis {
        let ticks = nice_ticks(lo, hi, target);
        let first = ticks.first().copied().unwrap_or(lo);
        let last = ticks.last().copied().unwrap_or(hi);
        let labels = tick_labels(&ticks);
        Axis { range: first..last, ticks, labels }
    }

    fn label(&self, v: f64) -> String {
        self.ticks
            .iter()
            .position(|t| t.total_cmp(&v).is_eq())
            .and_then(|i| self.labels.get(i).cloned())
            .unwrap_or_else(|| cell_number(v))
    }
}

impl Ranged for Axis {
    type ValueType = f64;
    // Labels come from the formatters given to the mesh; this only satisfies plotters' bounds.
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(self.range.clone()).map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: a light grid between ticks is clutter.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A drawing error of plotters.
type DrawError = DrawingAreaErrorKind<std::io::Error>;

fn draw(root: &Area, fig: &Figure, title: &str) -> Result<(), DrawError> {
    root.fill(&WHITE)?;
    let (width, _) = SIZE;
    let body = draw_title(root, title)?;

    let axis = XAxis::of(fig);
    let series: Vec<Vec<(f64, f64)>> = fig.series.iter().map(|s| placed(&axis, s)).collect();
    let all = || series.iter().flatten();

    let x = match &axis {
        XAxis::Numeric => {
            let lo = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
            let hi = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
            if lo <= hi {
                Axis::numeric(lo, hi, 7)
            } else {
                Axis::numeric(0.0, 1.0, 5)
            }
        }
        XAxis::Slots { names, .. } => Axis {
            range: -0.5..(names.len().max(1) as f64 - 0.5),
            ticks: (0..names.len()).map(|i| i as f64).collect(),
            labels: names.clone(),
        },
    };
    // Zero is always on the y axis; a little headroom keeps the top point off the frame.
    let lo = all().map(|p| p.1).fold(0.0, f64::min);
    let hi = all().map(|p| p.1).fold(0.0, f64::max);
    let (lo, hi, pad) = if lo == hi { (0.0, 1.0, 0.0) } else { (lo, hi, (hi - lo) * 0.03) };
    let y = Axis::numeric(if lo < 0.0 { lo - pad } else { lo }, if hi > 0.0 { hi + pad } else { hi }, 8);

    let legend_w = fig
        .series
        .iter()
        .map(|s| text_width(&s.name, 13.0) * 1.1 + 60.0)
        .fold(0.0, f64::max)
        .clamp(if fig.series.is_empty() { 0.0 } else { 120.0 }, 320.0) as u32;
    let (plot, legend) = body.split_horizontally(width - legend_w);

    let y_label_w = y.labels.iter().map(|l| text_width(l, 12.0)).fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&plot)
        .margin_top(8)
        .margin_left(8)
        .margin_right(12)
        .margin_bottom(4)
        .x_label_area_size(54)
        .y_label_area_size((y_label_w + 40.0) as u32)
        .build_cartesian_2d(x.clone(), y.clone())?;
    let x_fmt = |v: &f64| x.label(*v);
    let y_fmt = |v: &f64| y.label(*v);
    let grid = RGBColor(0, 0, 0).mix(0.12);
    let mut mesh = chart.configure_mesh();
    mesh.label_style(font(12.0))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .bold_line_style(grid)
        .axis_style(BLACK);
    if matches!(axis, XAxis::Slots { .. }) {
        mesh.disable_x_mesh();
    }
    mesh.draw()?;

    axis_labels(root, &plot, chart.plotting_area().get_pixel_range(), fig)?;

    if y.range.start < 0.0 {
        let zero = [(x.range.start, 0.0), (x.range.end, 0.0)];
        chart.draw_series(std::iter::once(PathElement::new(zero, BLACK.stroke_width(1))))?;
    }
    if all().next().is_none() {
        let centre = ((x.range.start + x.range.end) / 2.0, (y.range.start + y.range.end) / 2.0);
        let note = font(14.0).pos(Pos::new(HPos::Center, VPos::Center));
        chart.draw_series(std::iter::once(Text::new("no data", centre, note)))?;
    }
    draw_data(&mut chart, fig, &series)?;
    draw_legend(&legend, fig)?;
    Ok(())
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Axis, Axis>>;

/// Each series' lines and markers, or bars, at its plotted `points`.
fn draw_data(chart: &mut Chart, fig: &Figure, series: &[Vec<(f64, f64)>]) -> Result<(), DrawError> {
    let n = fig.series.len();
    for (k, (s, points)) in fig.series.iter().zip(series).enumerate() {
        let c = colour(k);
        match fig.kind {
            FigureKind::Line => {
                let line = c.stroke_width(2);
                if s.dashed {
                    chart.draw_series(DashedLineSeries::new(points.clone(), 9, 5, line))?;
                } else {
                    chart.draw_series(LineSeries::new(points.clone(), line))?;
                }
                chart.draw_series(points.iter().flat_map(|&p| marker(p, c, s.dashed)))?;
            }
            FigureKind::Bar => {
                let w = 0.8 / n as f64;
                let bars = points.iter().flat_map(|&(slot, v)| {
                    let left = slot - 0.4 + k as f64 * w;
                    let corners = [(left, v.max(0.0)), (left + w, v.min(0.0))];
                    bar(corners, c, s.dashed)
                });
                chart.draw_series(bars)?;
            }
        }
    }
    Ok(())
}

/// The title's lines, centred at the top; returns the area below them.
fn draw_title<'a>(root: &Area<'a>, title: &str) -> Result<Area<'a>, DrawError> {
    let (px, lines) = title_lines(title);
    let line_h = (px * 1.25).round() as i32;
    let top = 8;
    let style = font(px).pos(Pos::new(HPos::Center, VPos::Top));
    let centre = SIZE.0 as i32 / 2;
    for (i, line) in lines.iter().enumerate() {
        root.draw(&Text::new(line.clone(), (centre, top + line_h * i as i32), style.clone()))?;
    }
    let (_, body) = root.split_vertically(top + line_h * lines.len() as i32 + 6);
    Ok(body)
}

/// The axis labels, each shrunk to fit along its own axis rather than run off the picture. (plotters'
/// own axis descriptions share one size, so a long y label would shrink the x label too.)
fn axis_labels(
    root: &Area,
    plot: &Area,
    (xs, ys): (std::ops::Range<i32>, std::ops::Range<i32>),
    fig: &Figure,
) -> Result<(), DrawError> {
    let x_px = fitting(&fig.x_label, f64::from(xs.end - xs.start), 14.0);
    let x_style = font(x_px).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(fig.x_label.clone(), ((xs.start + xs.end) / 2, ys.end + 30), x_style))?;
    let y_px = fitting(&fig.y_label, f64::from(ys.end - ys.start), 14.0);
    let y_style = font(y_px).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Top));
    let left = plot.get_base_pixel().0 + 6;
    root.draw(&Text::new(fig.y_label.clone(), (left, (ys.start + ys.end) / 2), y_style))?;
    Ok(())
}

/// A point marker: filled for our series, hollow for dashed ones.
fn marker(p: (f64, f64), c: RGBColor, hollow: bool) -> Vec<Circle<(f64, f64), u32>> {
    if hollow {
        vec![Circle::new(p, 4, WHITE.filled()), Circle::new(p, 4, c.stroke_width(2))]
    } else {
        vec![Circle::new(p, 4, c.filled())]
    }
}

/// A bar: solid, or light with an outline for dashed series.
fn bar(corners: [(f64, f64); 2], c: RGBColor, light: bool) -> Vec<Rectangle<(f64, f64)>> {
    if light {
        vec![Rectangle::new(corners, c.mix(0.3).filled()), Rectangle::new(corners, c.stroke_width(2))]
    } else {
        vec![Rectangle::new(corners, c.filled())]
    }
}

/// The legend, one row per series: its swatch (as drawn in the plot) and its name.
fn draw_legend(area: &Area, fig: &Figure) -> Result<(), DrawError> {
    if fig.series.is_empty() {
        return Ok(());
    }
    let row = 22;
    let top = 16;
    let (w, _) = area.dim_in_pixel();
    let bottom = top + row * fig.series.len() as i32;
    area.draw(&Rectangle::new(
        [(2, top - 6), (w as i32 - 8, bottom - 6)],
        RGBColor(0, 0, 0).mix(0.35).stroke_width(1),
    ))?;
    for (k, s) in fig.series.iter().enumerate() {
        let c = colour(k);
        let y = top + 5 + row * k as i32;
        match fig.kind {
            FigureKind::Line => {
                let line = c.stroke_width(2);
                if s.dashed {
                    area.draw(&PathElement::new([(8, y), (16, y)], line))?;
                    area.draw(&PathElement::new([(22, y), (30, y)], line))?;
                    area.draw(&PathElement::new([(36, y), (40, y)], line))?;
                } else {
                    area.draw(&PathElement::new([(8, y), (40, y)], line))?;
                }
                if s.dashed {
                    area.draw(&Circle::new((24, y), 4, WHITE.filled()))?;
                    area.draw(&Circle::new((24, y), 4, c.stroke_width(2)))?;
                } else {
                    area.draw(&Circle::new((24, y), 4, c.filled()))?;
                }
            }
            FigureKind::Bar => {
                let corners = [(12, y - 6), (36, y + 6)];
                if s.dashed {
                    area.draw(&Rectangle::new(corners, c.mix(0.3).filled()))?;
                    area.draw(&Rectangle::new(corners, c.stroke_width(2)))?;
                } else {
                    area.draw(&Rectangle::new(corners, c.filled()))?;
                }
            }
        }
        let px = fitting(&s.name, f64::from(w) - 60.0, 13.0);
        let style = font(px).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(s.name.clone(), (48, y), style))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_widths_are_dejavu_sans_advances() {
        // "Wi" is 0.989 + 0.278 em; anything beyond ASCII counts a full em.
        assert!((text_width("Wi", 10.0) - 12.67).abs() < 1e-9);
        assert_eq!(text_width("µ", 10.0), 10.0);
        assert_eq!(text_width("", 10.0), 0.0);
    }

    #[test]
    fn titles_wrap_at_spaces_and_cut_long_words() {
        assert_eq!(wrap("", 100.0, 10.0), [""]);
        // "aaa bbb" is 40.6 px at 10 px.
        assert_eq!(wrap("aaa bbb ccc", 45.0, 10.0), ["aaa bbb", "ccc"]);
        let long = "W".repeat(25);
        let lines = wrap(&format!("x {long} y"), 100.0, 10.0);
        assert_eq!(lines.concat().replace(' ', ""), format!("x{long}y"));
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 10.0) <= 100.0), "{lines:?}");
        // Short titles keep the full size; long ones shrink before taking a fourth line.
        assert_eq!(title_lines("short").0, TITLE_PX);
        let (px, lines) = title_lines(&"word ".repeat(60));
        assert!(px < TITLE_PX && lines.len() <= TITLE_LINES, "{px} {lines:?}");
        let (px, lines) = title_lines(&"word ".repeat(400));
        assert!(px == TITLE_MIN_PX && lines.len() > TITLE_LINES, "{px} {lines:?}");
    }
}
