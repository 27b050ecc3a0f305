//! Line charts of figures by step (the ramp's curves): one line per series over labelled
//! x positions, an optional model curve drawn without points, and an optional vertical
//! mark (the knee), each in a `<figure>` with its legend and the table of its numbers.

use maud::Markup;
use plotters::prelude::*;

use super::chart::{
    LIMIT, PALETTE, Series, TickedAxis, axis_number, builder, draw, figure, hex, nice_top, numbers,
    series_legend, styled,
};

/// A curve drawn thin and without points, e.g. a model fitted to the series.
pub struct Model {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart: `series[i].values[j]` is drawn at `xs[j]`, labelled `x_labels[j]`.
pub struct LineChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub xs: Vec<f64>,
    pub x_labels: Vec<String>,
    pub series: Vec<Series>,
    pub model: Option<Model>,
    /// A vertical vermillion line at this x, with its name in the legend.
    pub mark: Option<(String, f64)>,
    pub note: Option<String>,
    pub decimals: usize,
}

impl LineChart {
    /// The figure: title, legend, chart, note and the table of its numbers.
    pub fn render(&self) -> Markup {
        let model_color = PALETTE[self.series.len() % PALETTE.len()];
        let mut legend = series_legend(&self.series);
        legend.extend((self.model.iter()).map(|m| (m.name.clone(), hex(model_color))));
        legend.extend(self.mark.iter().map(|(name, _)| (name.clone(), hex(LIMIT))));
        let columns: Vec<&Series> = self.series.iter().collect();
        let numbers = numbers(&self.x_desc, &self.x_labels, &columns, self.decimals);
        let svg = self.svg(model_color);
        figure(&self.title, &legend, svg, self.note.as_deref(), numbers)
    }

    /// The x range, padded so that the first and last points are not on the frame.
    fn x_range(&self) -> (f64, f64) {
        let lo = self.xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() || !hi.is_finite() {
            return (0.0, 1.0);
        }
        let pad = if hi > lo { (hi - lo) * 0.04 } else { 1.0 };
        (lo - pad, hi + pad)
    }

    fn svg(&self, model_color: RGBColor) -> String {
        let values = (self.series.iter()).flat_map(|s| s.values.iter().flatten().copied());
        let model = self.model.iter().flat_map(|m| m.points.iter().map(|p| p.1));
        let top = nice_top(values.chain(model).fold(0.0, f64::max));
        let (lo, hi) = self.x_range();
        let (xs, labels) = (&self.xs, &self.x_labels);
        let label = move |x: &f64| {
            xs.iter()
                .position(|v| (v - x).abs() < 1e-9)
                .and_then(|j| labels.get(j).cloned())
                .unwrap_or_default()
        };
        draw(340, |root| {
            let axis = TickedAxis {
                range: lo..hi,
                ticks: self.xs.clone(),
            };
            let mut chart = builder(root, 70).build_cartesian_2d(axis, 0f64..top)?;
            styled(&mut chart.configure_mesh())
                .y_label_formatter(&|v| axis_number(*v))
                .x_label_formatter(&label)
                .x_desc(self.x_desc.as_str())
                .y_desc(self.y_desc.as_str())
                .draw()?;
            if let Some(model) = &self.model {
                let points = model.points.iter().copied();
                chart.draw_series(LineSeries::new(points, model_color.stroke_width(1)))?;
            }
            if let Some((_, x)) = self.mark {
                let line = vec![(x, 0.0), (x, top)];
                chart.draw_series(std::iter::once(PathElement::new(
                    line,
                    LIMIT.stroke_width(2),
                )))?;
            }
            for (s, series) in self.series.iter().enumerate() {
                let color = PALETTE[s % PALETTE.len()];
                let points: Vec<(f64, f64)> = (self.xs.iter().copied())
                    .zip(series.values.iter())
                    .filter_map(|(x, v)| Some((x, (*v)?)))
                    .collect();
                chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?;
                chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        LineChart {
            title: "Throughput".into(),
            x_desc: "concurrency".into(),
            y_desc: "requests per second".into(),
            xs: vec![0.0, 1.0, 2.0],
            x_labels: vec!["1".into(), "2".into(), "4".into()],
            series: vec![Series {
                name: "rps".into(),
                values: vec![Some(100.0), Some(190.0), None],
            }],
            model: Some(Model {
                name: "fit".into(),
                points: vec![(0.0, 100.0), (2.0, 300.0)],
            }),
            mark: Some(("knee".into(), 1.0)),
            note: Some("how to read it".into()),
            decimals: 1,
        }
    }

    #[test]
    fn the_figure_keeps_its_numbers_legend_and_labels() {
        let html = chart().render().into_string();
        assert_eq!(html.matches("<svg").count(), 1);
        for text in [
            ">100.0<",
            ">190.0<",
            ">n/a<",
            "rps",
            "fit",
            "knee",
            "how to read it",
        ] {
            assert!(html.contains(text), "{text} missing");
        }
        // The x axis is labelled with the steps, not with the positions.
        assert!(html.contains(">\n4\n</text>"), "{html}");
        assert!(html.contains("#0072B2"), "the series colour");
        assert!(html.contains("#D55E00"), "the mark's colour");
    }

    #[test]
    fn one_step_still_has_a_range() {
        let mut one = chart();
        one.xs = vec![3.0];
        assert_eq!(one.x_range(), (2.0, 4.0));
        one.xs = Vec::new();
        assert_eq!(one.x_range(), (0.0, 1.0));
    }
}
