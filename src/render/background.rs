//! The background section the table and Markdown views share: what `--control` subtracted
//! and how far off the corrected figures may be, or the statements `--app-role` left out.

use super::sections::Grid;
use pgcost_core::background;
use pgcost_core::report::Report;
use pgcost_core::report::model::figure::Figure;

/// Its title and grid; `None` when there is nothing to show.
pub fn section(report: &Report) -> Option<(String, Grid)> {
    let b = report.background.as_ref()?;
    if let (Some(subtracted), Some(uncertainty), Some(share)) =
        (b.subtracted, b.uncertainty, b.share)
    {
        let period = (b.period_seconds)
            .map(|p| format!(", a period of {p:.1} s"))
            .unwrap_or_default();
        let mut names: Vec<_> = background::subtracted().map(Figure::label).collect();
        let last = names.pop().unwrap_or_default();
        let title = format!(
            "Background (control window {:.1} s, measured window {:.1} s{period}): subtracted \
             from {} and {last} above",
            b.window_seconds.unwrap_or_default(),
            b.measured_window_seconds,
            names.join(", ")
        );
        let fixed = |v: Option<f64>, digits| v.map_or("n/a".into(), |v| format!("{v:.digits$}"));
        let percent = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.1}%", v * 100.0));
        let rows = background::subtracted()
            .map(|f| {
                vec![
                    f.label().to_string(),
                    fixed(b.per_second(f), 2),
                    fixed(subtracted.get(f), 3),
                    format!("± {}", fixed(uncertainty.get(f), 3)),
                    percent(share.get(f)),
                ]
            })
            .collect();
        let header = [
            "figure",
            "per second",
            "subtracted/req",
            "uncertainty/req",
            "of signal",
        ];
        return Some((title, Grid::new(&header, rows, 1..5)));
    }
    if b.other_roles.is_empty() {
        return None;
    }
    let rows = (b.other_roles.iter())
        .map(|o| vec![o.role.clone(), o.calls.to_string(), o.rows.to_string()])
        .collect();
    let title = "Statements of roles outside --app-role (left out of the figures)".to_string();
    Some((title, Grid::new(&["role", "calls", "rows"], rows, 1..3)))
}

#[cfg(test)]
mod tests {
    use crate::render::view::View;
    use pgcost_core::background::{Control, Counts, Input, Options, OtherRole};
    use pgcost_core::delta::{DatabaseDelta, WindowDelta};
    use pgcost_core::report::Report;
    use pgcost_core::report::tests::{context, load, stmt};

    fn report(control: Option<Control>) -> Report {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: 210,
                tup_returned: 10_010,
                ..Default::default()
            },
            statements: vec![stmt(1, "SELECT * FROM items", 200, 10_000)],
            ..Default::default()
        };
        let mut ctx = context(200);
        ctx.background = Some(Input {
            options: Options {
                app_roles: vec!["app".into()],
                ..Options::default()
            },
            other_roles: vec![OtherRole {
                role: "cron".into(),
                calls: 40,
                rows: 40,
                entries: 1,
            }],
            control,
            window_seconds: 20.0,
            flush_interval_seconds: 1.0,
            other_backends: vec!["pid 7 (role cron)".into()],
            tail: None,
        });
        Report::build(&delta, &load(200, &[(200, 200)]), ctx)
    }

    #[test]
    fn the_views_show_what_was_subtracted_or_left_out() {
        let control = Control {
            seconds: 10.0,
            counts: Counts {
                transactions: Some(5),
                rows_read: Some(5),
                statements: Some(0),
                ..Counts::default()
            },
            subs: vec![
                Counts {
                    statements: Some(0),
                    ..Counts::default()
                };
                10
            ],
            ..Control::default()
        };
        let r = report(Some(control));
        assert!(r.valid, "{:?}", r.invalid_reasons);
        assert_eq!(r.per_request.transactions, 1.0);
        assert_eq!(r.per_request.rows_read, 50.0);
        let table = View::render(&r, crate::render::format::Format::Table).unwrap();
        // The title and the rows follow the figure table's order.
        let lines = [
            "Background (control window 10.0 s, measured window 20.0 s): subtracted from \
             transactions, statements and rows read above",
            "│ transactions │       0.50 │          0.050 │         ± 0.075 │      5.0% │",
            "│ statements   │       0.00 │          0.000 │         ± 0.030 │      0.0% │",
            "│ rows read    │       0.50 │          0.050 │         ± 0.075 │      0.1% │",
        ];
        let at = |line| {
            table
                .find(line)
                .unwrap_or_else(|| panic!("{line} in {table}"))
        };
        assert!(lines.windows(2).all(|w| at(w[0]) < at(w[1])), "{table}");
        let markdown = View::render(&r, crate::render::format::Format::Markdown).unwrap();
        assert!(
            markdown.contains("**Background (control window"),
            "{markdown}"
        );
        let html = View::render(&r, crate::render::format::Format::Html).unwrap();
        assert!(
            html.contains("<h2>Background (control window 10.0 s"),
            "{html}"
        );
        let json = View::render(&r, crate::render::format::Format::Json).unwrap();
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(json["background"]["subtracted"]["transactions"], 0.05);
        assert_eq!(json["background"]["window_seconds"], 10.0);

        let r = report(None);
        let table = View::render(&r, crate::render::format::Format::Table).unwrap();
        assert!(
            table.contains("Statements of roles outside --app-role"),
            "{table}"
        );
        assert!(
            r.notes
                .iter()
                .any(|w| w.message().contains("pid 7 (role cron)"))
        );
    }
}
