//! The HTML report's charts: horizontal bar charts and the latency curve, drawn as inline
//! SVG by `plotters`, each in a `<figure>` with its title, its legend and the table of the
//! numbers behind it.
//!
//! Colours come from the Okabe–Ito palette, which stays distinct under every common kind
//! of colour blindness; text and axes are drawn black and recoloured by the page's CSS, so
//! that the dark scheme needs no second drawing.

use maud::{Markup, PreEscaped, html};
use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

/// Series colours, in order (Okabe–Ito: blue, orange, bluish green, sky blue, purple).
pub const PALETTE: [RGBColor; 5] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xCC, 0x79, 0xA7),
];

/// The colour of limits (budget lines): vermillion, apart from every series colour.
pub const LIMIT: RGBColor = RGBColor(0xD5, 0x5E, 0x00);

/// Text and axes; the stylesheet maps this exact colour to the scheme's foreground.
pub(super) const INK: RGBColor = RGBColor(0, 0, 0);
/// Grid lines; the stylesheet maps this exact colour to the scheme's grid colour.
pub(super) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

const WIDTH: u32 = 900;
pub(super) const FONT: (&str, u32) = ("sans-serif", 13);

pub(super) fn hex(color: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
}

/// Values of one kind, one per category (`None` where the figure is missing).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

impl Series {
    /// The series `name`: `value` of each of `items`, in order.
    pub fn of<T>(
        name: &str,
        items: impl IntoIterator<Item = T>,
        value: impl FnMut(T) -> Option<f64>,
    ) -> Series {
        Series {
            name: name.into(),
            values: items.into_iter().map(value).collect(),
        }
    }
}

/// The legend entries of `series`, each in its palette colour.
pub(super) fn series_legend(series: &[Series]) -> Vec<(String, String)> {
    (series.iter().zip(PALETTE.iter().cycle()))
        .map(|(s, c)| (s.name.clone(), hex(*c)))
        .collect()
}

/// A chart's `<figure>`: its title, its legend, the drawing (`svg`), a sentence on how to
/// read it, then `numbers`, the table of the numbers behind it, folded away.
pub(super) fn figure(
    title: &str,
    legend: &[(String, String)],
    svg: String,
    note: Option<&str>,
    numbers: Markup,
) -> Markup {
    html! {
        figure.chart {
            figcaption { (title) }
            (legend_markup(legend))
            div.plot { (PreEscaped(svg)) }
            @if let Some(note) = note { p.note { (note) } }
            details {
                summary { "The numbers behind this chart" }
                (numbers)
            }
        }
    }
}

/// The numbers behind a chart as a sortable table: a row per label (under `corner`), a
/// column per series, `decimals` places each (`n/a` where a value is missing).
pub(super) fn numbers(
    corner: &str,
    labels: &[String],
    columns: &[&Series],
    decimals: usize,
) -> Markup {
    let cell = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.decimals$}"));
    html! {
        table.sortable {
            thead { tr {
                th { (corner) }
                @for s in columns { th.num { (s.name) } }
            } }
            tbody {
                @for (i, label) in labels.iter().enumerate() {
                    tr {
                        td { (label) }
                        @for s in columns { td.num { (cell(s.values.get(i).copied().flatten())) } }
                    }
                }
            }
        }
    }
}

/// A horizontal bar chart: one row per category, one bar per series in each row, and
/// optional limit marks (a vertical line across the row, e.g. a budget).
pub struct BarChart {
    pub title: String,
    /// What the bars measure, with the unit: "rows per request".
    pub axis: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// Drawn as a vermillion line across each row that has a value.
    pub limits: Option<Series>,
    /// A sentence under the chart: how to read it.
    pub note: Option<String>,
    /// Decimal places of the numbers in the table.
    pub decimals: usize,
}

impl BarChart {
    /// The figure: title, legend, chart and the table of its numbers.
    pub fn render(&self) -> Markup {
        let mut legend = series_legend(&self.series);
        legend.extend((self.limits.iter()).map(|l| (l.name.clone(), hex(LIMIT))));
        let columns: Vec<&Series> = self.series.iter().chain(self.limits.as_ref()).collect();
        let numbers = numbers("", &self.categories, &columns, self.decimals);
        figure(
            &self.title,
            &legend,
            self.svg(),
            self.note.as_deref(),
            numbers,
        )
    }

    fn svg(&self) -> String {
        let rows = self.categories.len().max(1);
        let bars = self.series.len().max(1);
        let row_height = 10 + 16 * bars as u32;
        let height = 70 + row_height * rows as u32;
        let longest_label = (self.categories.iter()).map(|c| c.chars().count()).max();
        let label_width = (longest_label.unwrap_or(4) as u32 * 7 + 16).clamp(60, 360);
        let values = (self.series.iter().chain(self.limits.as_ref()))
            .flat_map(|s| s.values.iter().flatten().copied());
        let top = nice_top(values.fold(0.0, f64::max));
        draw(height, |root| {
            let n = rows as f64;
            let keys: Vec<f64> = (0..rows).map(|i| i as f64 + 0.5).collect();
            let categories = &self.categories;
            let label = move |v: &f64| {
                let row = rows.saturating_sub(1 + v.floor().max(0.0) as usize);
                categories.get(row).cloned().unwrap_or_default()
            };
            let mut chart = builder(root, label_width).build_cartesian_2d(
                0f64..top,
                TickedAxis {
                    range: 0f64..n,
                    ticks: keys,
                },
            )?;
            styled(&mut chart.configure_mesh())
                .disable_y_mesh()
                .x_label_formatter(&|v| axis_number(*v))
                .x_desc(self.axis.as_str())
                .y_label_formatter(&label)
                .draw()?;
            let slot = 0.8 / bars as f64;
            for (s, series) in self.series.iter().enumerate() {
                let color = PALETTE[s % PALETTE.len()];
                chart.draw_series(series.values.iter().enumerate().filter_map(|(i, v)| {
                    let y_top = n - i as f64 - 0.1 - slot * s as f64;
                    let value = (*v)?;
                    Some(Rectangle::new(
                        [(0.0, y_top), (value, y_top - slot * 0.9)],
                        color.filled(),
                    ))
                }))?;
            }
            if let Some(limits) = &self.limits {
                chart.draw_series(limits.values.iter().enumerate().filter_map(|(i, v)| {
                    let value = (*v)?;
                    let y = n - i as f64;
                    Some(PathElement::new(
                        vec![(value, y - 0.02), (value, y - 0.98)],
                        LIMIT.stroke_width(3),
                    ))
                }))?;
            }
            Ok(())
        })
    }
}

/// A chart on `root` within the page's margins, `y_labels` pixels wide for the labels at
/// its left.
pub(super) fn builder<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    y_labels: u32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    (builder.margin(8).margin_right(24))
        .x_label_area_size(44)
        .y_label_area_size(y_labels);
    builder
}

/// The mesh in the page's style: no light lines, grid lines in `GRID`, text and axes in
/// `INK`.
pub(super) fn styled<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .axis_style(INK)
        .label_style(FONT)
        .axis_desc_style(FONT)
}

/// A linear axis whose labelled ticks sit exactly at `ticks` (one per bar row, or at
/// chosen percentiles), and that draws no light grid lines between them.
#[derive(Clone)]
pub(super) struct TickedAxis {
    pub(super) range: Range<f64>,
    pub(super) ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    // Labels come from the formatter each chart sets; this only satisfies the mesh.
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        plotters::coord::types::RangedCoordf64::from(self.range.clone()).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// One point of a latency curve: the percentile (0 to 100) and the latency in ms.
pub type CurvePoint = (f64, f64);

/// The latency curve as an HDR percentile plot: the percentile axis spreads the tail
/// logarithmically (by 1 / (1 − p)), so that p99 and p99.9 get as much room as p50.
/// `requests` caps the axis: beyond 1 − 1/requests every percentile is the slowest
/// request, which is drawn at that place.
pub fn latency_curve(title: &str, points: &[CurvePoint], requests: u64, note: &str) -> Markup {
    let tail_limit = 1.0 - 1.0 / (requests.max(2) as f64);
    let position = |percentile: f64| {
        let q = (percentile / 100.0).min(tail_limit);
        -(1.0 - q).log10()
    };
    // Percentiles the sample count cannot resolve repeat the slowest request: draw it once.
    let mut drawn: Vec<(f64, f64, f64)> = Vec::new();
    for &(percentile, ms) in points {
        let x = position(percentile);
        if drawn.last().is_some_and(|last| (last.0 - x).abs() < 1e-9) {
            drawn.pop();
        }
        drawn.push((x, percentile, ms));
    }
    let x_max = drawn.last().map(|p| p.0).unwrap_or(1.0).max(1.0);
    let y_max = nice_top(points.iter().map(|p| p.1).fold(0.0, f64::max));
    let ticks: Vec<f64> = [0.0, 90.0, 99.0, 99.9, 99.99, 99.999]
        .into_iter()
        .map(position)
        .filter(|x| *x <= x_max + 1e-9)
        .collect();
    let svg = draw(380, |root| {
        let mut chart = builder(root, 70).build_cartesian_2d(
            TickedAxis {
                range: 0f64..x_max * 1.02,
                ticks: ticks.clone(),
            },
            0f64..y_max,
        )?;
        styled(&mut chart.configure_mesh())
            .y_label_formatter(&|v| axis_number(*v))
            .x_desc("percentile of requests (log scale toward the tail)")
            .y_desc("latency (ms)")
            .x_label_formatter(&|x| percentile_label(100.0 * (1.0 - 10f64.powf(-*x))))
            .draw()?;
        let color = PALETTE[0];
        chart.draw_series(LineSeries::new(
            drawn.iter().map(|p| (p.0, p.2)),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            drawn
                .iter()
                .map(|p| Circle::new((p.0, p.2), 4, color.filled())),
        )?;
        Ok(())
    });
    let numbers = html! {
        table {
            thead { tr { th { "percentile" } th.num { "latency (ms)" } } }
            tbody {
                @for (percentile, ms) in points {
                    tr { td { (percentile_label(*percentile)) } td.num { (format!("{ms:.3}")) } }
                }
            }
        }
    };
    figure(title, &[], svg, Some(note), numbers)
}

/// `p50`, `p99.9`, `min` for 0 and `max` for 100.
fn percentile_label(percentile: f64) -> String {
    if percentile <= 0.0 {
        "min".into()
    } else if percentile >= 100.0 {
        "max".into()
    } else {
        let rounded = (percentile * 1000.0).round() / 1000.0;
        format!("p{rounded}")
    }
}

/// An axis label: `20`, `2.5`, `0.25`, without trailing zeros.
pub(super) fn axis_number(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Colour swatches with names, in HTML so that they wrap on a phone.
pub fn legend_markup(entries: &[(String, String)]) -> Markup {
    html! {
        @if entries.len() > 1 {
            ul.legend {
                @for (name, color) in entries {
                    li { span.swatch style=(format!("background:{color}")) {} (name) }
                }
            }
        }
    }
}

/// A round upper bound for an axis that ends at `max`, a little above it.
pub(super) fn nice_top(max: f64) -> f64 {
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let target = max * 1.08;
    let magnitude = 10f64.powf(target.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|step| step * magnitude)
        .find(|top| *top >= target)
        .unwrap_or(10.0 * magnitude)
}

pub(super) type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws on an SVG canvas `WIDTH` wide and returns the element, sized by the stylesheet
/// (its `viewBox` keeps the proportions). A drawing error leaves a note instead of a chart:
/// the numbers are in the table beside it either way.
pub(super) fn draw(
    height: u32,
    paint: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> String {
    let mut svg = String::new();
    let outcome = {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        paint(&root).and_then(|()| root.present().map_err(Into::into))
    };
    match outcome {
        // The namespace is implied inside HTML; dropping it keeps the file free of URLs.
        Ok(()) => svg.replacen(
            r#" xmlns="http://www.w3.org/2000/svg""#,
            r#" role="img""#,
            1,
        ),
        Err(err) => format!("<p class=\"note\">The chart could not be drawn: {err}</p>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round_and_above_the_data() {
        assert_eq!(nice_top(0.0), 1.0);
        assert_eq!(nice_top(301.0), 400.0);
        assert_eq!(nice_top(1.0), 1.2);
        assert_eq!(nice_top(93.0), 120.0);
    }

    #[test]
    fn axis_numbers_drop_trailing_zeros() {
        assert_eq!(axis_number(20.0), "20");
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(0.25), "0.25");
        assert_eq!(axis_number(0.0), "0");
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(0.0), "min");
        assert_eq!(percentile_label(99.9), "p99.9");
        assert_eq!(percentile_label(100.0), "max");
        // The axis label of 1 / (1 − p) = 1000.
        assert_eq!(percentile_label(100.0 * (1.0 - 10f64.powf(-3.0))), "p99.9");
    }

    #[test]
    fn a_bar_chart_draws_every_category_and_keeps_its_numbers() {
        let chart = BarChart {
            title: "t".into(),
            axis: "rows per request".into(),
            categories: vec!["alpha".into(), "beta".into()],
            series: vec![Series {
                name: "rows".into(),
                values: vec![Some(301.0), None],
            }],
            limits: Some(Series {
                name: "budget".into(),
                values: vec![Some(250.0), Some(5.0)],
            }),
            note: None,
            decimals: 2,
        }
        .render()
        .into_string();
        assert!(chart.contains("<svg"), "{chart}");
        assert!(!chart.contains("http://"), "{chart}");
        for text in [">alpha<", ">beta<", ">301.00<", ">n/a<", ">250.00<"] {
            assert!(chart.contains(text), "{text} missing: {chart}");
        }
    }
}
