//! The HTML view: one self-contained page per report (inline CSS, charts as inline SVG, no
//! URL fetched when it opens, readable without JavaScript), and the page parts that the
//! audit, check and demo pages share.

pub mod chart;
pub mod lines;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::sections::Grid;
use pgcost_core::findings::Finding;
use pgcost_core::findings::sent_from::sent_by;

const STYLE: &str = include_str!("style.css");
/// Sorting a table by a click on its heading: the only script, and nothing needs it.
const SORT_SCRIPT: &str = include_str!("sort.js");

/// A whole page: the document around `body`, with the stylesheet and the sorting script
/// inline.
pub fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main { (body) }
                script { (PreEscaped(SORT_SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// Whether the numbers can be trusted, first on the page and impossible to miss: the
/// reasons when they cannot, then the warnings.
pub fn verdict(valid: bool, label: &str, reasons: &[String], warnings: &[String]) -> Markup {
    html! {
        @if valid {
            div.verdict.valid role="status" { "✓ VALID: " (label) }
        } @else {
            div.verdict.invalid role="alert" {
                "✗ NOT VALID: do not use these numbers"
                ul { @for reason in reasons { li { (reason) } } }
            }
        }
        @if !warnings.is_empty() {
            div.warnings role="note" {
                strong { "⚠ " (warnings.len()) " warning(s)" }
                ul { @for warning in warnings { li { (warning) } } }
            }
        }
    }
}

/// The headline strip: big figures with their labels.
pub fn strip(cards: &[(String, String)]) -> Markup {
    html! {
        div.strip {
            @for (label, value) in cards {
                div.card { div.value { (value) } div.label { (label) } }
            }
        }
    }
}

/// Where a finding's statement came from: who sent it, and the places in the source to
/// look; nothing of what is not known.
pub fn provenance(f: &Finding) -> Markup {
    html! {
        @if let Some(sent_by) = f.tags.as_ref().and_then(sent_by) {
            p.tags { (sent_by) }
        }
        @if !f.locations.is_empty() {
            ul.locations {
                @for at in &f.locations { li { code { (at.at()) } ", " (at.describe()) } }
            }
        }
    }
}

/// A grid as a sortable table; the figure columns align right.
pub fn grid_table(grid: &Grid) -> Markup {
    let class = |i: usize| grid.figures.contains(&i).then_some("num");
    html! {
        div.scroll {
            table.sortable {
                thead { tr { @for (i, h) in grid.header.iter().enumerate() { th class=[class(i)] { (h) } } } }
                tbody {
                    @for row in &grid.rows {
                        tr { @for (i, cell) in row.iter().enumerate() { td class=[class(i)] { (cell) } } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
