//! Views of a `ScaleReport`, one file per format (JSON is the document as it serializes,
//! keys in docs/json.md): the points, the fitted lines of the request's figures, each
//! statement's slope next to its text, each table's rows read slope, and the findings the
//! slopes prove. This module holds what they share.

mod html;
mod markdown;
mod sarif;
mod table;

use crate::render::format::{Format, SCALE_FORMATS};
use crate::render::sections::Grid;
use crate::render::text::{figure, json};
use crate::render::view::View;
use pgcost_core::report::model::figure::Figure;
use pgcost_core::scale::{Fit, ScaleReport};
use pgcost_core::text::one_line;

impl View for ScaleReport {
    fn name(&self) -> &'static str {
        "a scale report"
    }

    fn formats(&self) -> &'static [Format] {
        SCALE_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        Some(match format {
            Format::Table => table::render(self),
            Format::Json => json(self),
            Format::Markdown => markdown::render(self),
            Format::Html => html::render(self),
            Format::Sarif => sarif::render(self),
            _ => return None,
        })
    }

    fn headline(&self) -> Option<String> {
        Some(headline(self))
    }
}

/// Valid or not, what was measured, and what the slopes prove, in one line.
pub(crate) fn headline(report: &ScaleReport) -> String {
    let values: Vec<String> = report.points.iter().map(|p| p.n.to_string()).collect();
    let verdict = match report.invalid_reasons.first() {
        None => "VALID".to_string(),
        Some(first) => format!("NOT VALID ({first})"),
    };
    let found = match report.findings.len() {
        0 => "nothing grows with the page".to_string(),
        n => format!("{n} finding(s) proven by their slope"),
    };
    format!(
        "{verdict}: {} {} at {} = {}: {found}",
        report.method,
        report.url,
        report.param,
        values.join(", "),
    )
}

fn fit_cells(fit: Option<&Fit>) -> [String; 3] {
    match fit {
        Some(f) => [
            format!("{:.2}", f.slope),
            format!("{:.2}", f.intercept),
            format!("{:.3}", f.r2),
        ],
        None => ["n/a".into(), "n/a".into(), "n/a".into()],
    }
}

/// One row per point: its figures per request.
pub(crate) fn points(report: &ScaleReport) -> Grid {
    let rows = (report.points.iter())
        .map(|p| {
            let r = &p.per_request;
            vec![
                p.n.to_string(),
                figure(r.statements),
                format!("{:.2}", r.rows_read),
                figure(r.rows_returned),
                format!("{:.2}", r.transactions),
                if p.valid { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    let header = [
        report.param.as_str(),
        "stmts/req",
        "rows read/req",
        "rows returned/req",
        "xacts/req",
        "valid",
    ];
    Grid::new(&header, rows, 0..5)
}

/// The request's figures, each with its line over n.
pub(crate) fn growth(report: &ScaleReport) -> Grid {
    let rows = (Figure::COLUMNS.into_iter())
        .map(|figure| {
            let mut row = vec![figure.label().to_string()];
            row.extend(fit_cells(report.per_request.get(figure).as_ref()));
            row
        })
        .collect();
    let slope = format!("slope per {}", report.param);
    Grid::new(&["per request", &slope, "intercept", "r²"], rows, 1..4)
}

/// One row per statement: its slope next to it, then its calls at each point.
pub(crate) fn statements(report: &ScaleReport, width: usize) -> Grid {
    let mut header: Vec<String> = vec!["slope".into(), "intercept".into(), "r²".into()];
    header.extend((report.points.iter()).map(|p| format!("calls @{}", p.n)));
    header.push("statement".into());
    let rows = (report.statements.iter())
        .map(|s| {
            let mut row: Vec<String> = fit_cells(Some(&s.fit)).into();
            row.extend(s.calls_per_request.iter().map(|c| format!("{c:.2}")));
            row.push(one_line(&s.query, width));
            row
        })
        .collect();
    with_label_last(header, rows)
}

/// A grid whose last column is a label and every other a figure.
fn with_label_last(header: Vec<String>, rows: Vec<Vec<String>>) -> Grid {
    let figures = 0..header.len() - 1;
    Grid {
        header,
        rows,
        figures,
    }
}

/// The sections the table and Markdown show, titled, statements cut to `width`; those
/// without rows are left out.
pub(crate) fn sections(report: &ScaleReport, width: usize) -> impl Iterator<Item = (&str, Grid)> {
    [
        ("Points", points(report)),
        ("Per request, over the page size", growth(report)),
        ("Statements, steepest first", statements(report, width)),
        ("Tables: rows read", tables(report)),
    ]
    .into_iter()
    .filter(|(_, grid)| !grid.rows.is_empty())
}

/// One row per table: the slope of its rows read.
pub(crate) fn tables(report: &ScaleReport) -> Grid {
    let mut header: Vec<String> = vec!["slope".into(), "r²".into()];
    header.extend((report.points.iter()).map(|p| format!("rows read @{}", p.n)));
    header.push("table".into());
    let rows = (report.tables.iter())
        .map(|t| {
            let [slope, _, r2] = fit_cells(Some(&t.fit));
            let mut row = vec![slope, r2];
            row.extend(t.rows_read_per_request.iter().map(|v| format!("{v:.1}")));
            row.push(t.table.clone());
            row
        })
        .collect();
    with_label_last(header, rows)
}

#[cfg(test)]
pub(crate) mod tests;
