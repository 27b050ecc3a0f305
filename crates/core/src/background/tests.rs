use super::*;
use crate::snapshot::StatementKey;

fn stmt(userid: u32, queryid: i64, calls: i64) -> StatementDelta {
    StatementDelta {
        key: StatementKey {
            userid,
            queryid,
            toplevel: Some(true),
        },
        query: format!("SELECT {queryid}"),
        calls,
        rows: calls * 2,
        exec_time_ms: 0.0,
        plan_time_ms: None,
        shared_blks_hit: 0,
        shared_blks_read: 0,
        writes: Default::default(),
    }
}

fn input(control: Option<Control>) -> Input {
    Input {
        options: Options {
            control: (control.as_ref()).map(|c| Duration::from_secs_f64(c.seconds)),
            ..Options::default()
        },
        window_seconds: 20.0,
        flush_interval_seconds: 1.0,
        control,
        ..Input::default()
    }
}

/// The assessment of a window of `window_seconds` that counted `measured` in `requests`,
/// beside `control`.
fn assessed(control: Control, window_seconds: f64, measured: Counts, requests: u64) -> Assessed {
    let input = Input {
        window_seconds,
        ..input(Some(control))
    };
    assess(&input, measured, requests)
}

/// The statements' uncertainty per request that an assessment reports.
fn statements_uncertainty(a: &Assessed) -> f64 {
    let background = a.background.as_ref().unwrap();
    background.uncertainty.unwrap().statements.unwrap()
}

fn control(seconds: f64, transactions: i64, rows_read: i64, statements: i64) -> Control {
    Control {
        seconds,
        counts: totals(transactions, rows_read, Some(statements)),
        ..Control::default()
    }
}

/// A window's counts of transactions, rows read and statements.
fn totals(transactions: i64, rows_read: i64, statements: Option<i64>) -> Counts {
    Counts {
        transactions: Some(transactions),
        rows_read: Some(rows_read),
        statements,
        ..Counts::default()
    }
}

/// Sub-windows that counted only `figures`, each `values` of them in turn.
fn subs(figures: &[Figure], values: impl IntoIterator<Item = i64>) -> Vec<Counts> {
    (values.into_iter())
        .map(|v| PerFigure::from_fn(|f| figures.contains(&f).then_some(v)))
        .collect()
}

#[test]
fn other_roles_statements_are_set_apart_and_summed_by_role() {
    let names: BTreeMap<u32, String> = [(10, "app".into()), (20, "cron".into())].into();
    let statements = vec![
        stmt(10, 1, 200),
        stmt(20, 2, 30),
        stmt(20, 3, 5),
        stmt(30, 4, 1),
    ];
    let (app, others) = split_by_role(statements, &[10].into(), &names);
    assert_eq!(app, vec![stmt(10, 1, 200)]);
    assert_eq!(
        others,
        vec![
            OtherRole {
                role: "cron".into(),
                calls: 35,
                rows: 70,
                entries: 2
            },
            OtherRole {
                role: "oid 30".into(),
                calls: 1,
                rows: 2,
                entries: 1
            },
        ]
    );
}

#[test]
fn the_uncertainty_is_counting_noise_plus_what_active_backends_held() {
    assert_eq!(rate(50, 10.0), 5.0);
    assert_eq!(rate(50, 0.0), 0.0);
    // 100 transactions in 10 s, a 20 s window: 200 expected; 3 * sqrt(100) * 2 = 60 of
    // noise, and 10/s held for up to 1 s at the edges of both windows: 10 * (1 + 2) = 30.
    assert!((uncertainty(100, 100, 10.0, 20.0, Some(1.0)) - 90.0).abs() < 1e-9);
    // Rows read: 5000 over the same 100 transactions; noise 3 * 5000 / 10 * 2 = 3000,
    // held 500/s * 3 = 1500.
    assert!((uncertainty(5000, 100, 10.0, 20.0, Some(1.0)) - 4500.0).abs() < 1e-9);
    // Statements are counted at once: noise only.
    assert!((uncertainty(100, 100, 10.0, 20.0, None) - 60.0).abs() < 1e-9);
    // Nothing seen: up to 3 events in the control window, scaled.
    assert_eq!(uncertainty(0, 0, 10.0, 20.0, Some(1.0)), 6.0);
    assert_eq!(uncertainty(10, 10, 0.0, 20.0, Some(1.0)), 0.0);
}

#[test]
fn the_verdict_compares_the_background_with_the_signal() {
    assert_eq!(share(10.0, 200.0), Some(0.05));
    assert_eq!(share(10.0, 0.0), None);
    assert!(!too_loud(10.0, 200.0, 0.05), "exactly 5% is allowed");
    assert!(too_loud(10.5, 200.0, 0.05));
    assert!(too_loud(1.0, 0.0, 0.05), "a background and no signal");
    assert!(!too_loud(0.0, 0.0, 0.05), "nothing at all");
}

#[test]
fn the_control_windows_rates_are_subtracted_over_the_measured_window() {
    // 10 s of control: 20 transactions, 40 rows read, 0 statements of the app's roles.
    // Measured over 20 s: 1040 transactions (1000 from 1000 requests), 50080 rows read.
    let input = input(Some(control(10.0, 20, 40, 0)));
    let measured = totals(1040, 50_080, Some(1000));
    let a = assess(&input, measured, 1000);
    assert!(a.invalid_reasons.is_empty(), "{:?}", a.invalid_reasons);
    let corrected = a.corrected.unwrap();
    assert!((corrected.transactions.unwrap() - 1.0).abs() < 1e-12);
    assert!((corrected.rows_read.unwrap() - 50.0).abs() < 1e-12);
    assert_eq!(corrected.statements, Some(1.0));
    let b = a.background.unwrap();
    assert_eq!(b.window_seconds, Some(10.0));
    assert_eq!(b.transactions_per_second, Some(2.0));
    assert_eq!(b.rows_read_per_second, Some(4.0));
    assert_eq!(b.statements_per_second, Some(0.0));
    let subtracted = b.subtracted.unwrap();
    assert!((subtracted.transactions.unwrap() - 0.04).abs() < 1e-12);
    assert!((subtracted.rows_read.unwrap() - 0.08).abs() < 1e-12);
    // transactions: 3 * sqrt(20) * 2 + 2/s * 1 s * 3, per 1000 requests.
    let u = b.uncertainty.unwrap();
    let expected = (3.0 * 20f64.sqrt() * 2.0 + 6.0) / 1000.0;
    assert!((u.transactions.unwrap() - expected).abs() < 1e-12, "{u:?}");
    // Statements: none seen, so up to 3 in 10 s, scaled to 20 s.
    assert_eq!(u.statements, Some(6.0 / 1000.0));
    assert!((b.share.unwrap().transactions.unwrap() - 0.04).abs() < 1e-12);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

#[test]
fn a_background_too_uncertain_beside_the_signal_is_not_valid() {
    // 50 transactions a second for 20 s: 1000 of background against 200 of signal, ± 3 *
    // sqrt(500) * 2 + 50 * 3 = 284.2, more than 15% of 200. The 50 held at each edge
    // alone is more than 30: only more requests help.
    let input = input(Some(control(10.0, 500, 500, 0)));
    let measured = totals(1200, 101_000, Some(200));
    let a = assess(&input, measured, 200);
    assert_eq!(a.invalid_reasons.len(), 1, "{:?}", a.invalid_reasons);
    assert_eq!(
        a.invalid_reasons[0].code,
        crate::report::model::invalid::Code::BackgroundTooUncertain
    );
    let reason = &a.invalid_reasons[0].message;
    assert!(
        reason.starts_with(
            "the background leaves transactions uncertain by ± 284.2 against 200.0 from the \
             requests (more than 15%)"
        ),
        "{reason}"
    );
    assert!(
        reason.contains("about 334 requests would give an answer"),
        "{reason}"
    );
    // A share far above --max-background is no refusal when the ± is small: 5000
    // requests, the same background.
    let measured = totals(6000, 501_000, Some(5000));
    let a = assess(&input, measured, 5000);
    assert!(a.invalid_reasons.is_empty(), "{:?}", a.invalid_reasons);
    assert!((a.corrected.unwrap().transactions.unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn a_periodic_background_is_uncertain_by_its_bursts_and_its_period_is_said() {
    // 40 statements every 2 s for 10 s, sampled each second; a 13 s window of 100
    // requests of 1 statement. Poisson: 3 * 200 / sqrt(200) * 1.3 = 55.2; the bursts: 20
    // at the edges, the rate exact.
    let mut c = control(10.0, 0, 0, 200);
    c.subs = subs(
        &[Figure::Statements],
        (0..10).map(|i| if i % 2 == 0 { 40 } else { 0 }),
    );
    let mut input = input(Some(c.clone()));
    input.window_seconds = 13.0;
    let measured = totals(1000, 1000, Some(1260));
    let a = assess(&input, measured, 1000);
    let b = a.background.unwrap();
    assert_eq!(b.period_seconds, Some(2.0));
    let u = b.uncertainty.unwrap().statements.unwrap();
    assert!(
        (u - 3.0 * 200.0 / 200f64.sqrt() * 1.3 / 1000.0).abs() < 1e-12,
        "{u}"
    );
    assert!(a.invalid_reasons.is_empty(), "{:?}", a.invalid_reasons);
    // The same bursts of 400: 4 per request in 100 requests. Poisson still says 3 * 2000 /
    // sqrt(2000) * 1.3 = 174; the edges 200, too much beside 100: more requests.
    c.subs = subs(
        &[Figure::Statements],
        (0..10).map(|i| if i % 2 == 0 { 400 } else { 0 }),
    );
    c.counts.statements = Some(2000);
    input.control = Some(c);
    let measured = Counts {
        statements: Some(2700),
        ..measured
    };
    let a = assess(&input, measured, 100);
    let u = statements_uncertainty(&a);
    assert_eq!(u, 2.0, "the edges: 200 over 100 requests");
    let reason = &a.invalid_reasons.last().unwrap().message;
    assert!(
        reason.contains("statements uncertain by ± 200.0 against 100.0")
            && reason.contains("a period of 2.0 s")
            && reason.contains("about 1334 requests would give an answer"),
        "{reason}"
    );
}

#[test]
fn control_windows_before_and_after_the_burst_keep_their_own_phase() {
    // 400 statements every 2 s: in odd seconds over the 6 s before the burst, in even ones
    // over the 8 s after it (the burst lasted a whole number and a half of periods).
    // Poisson would say 3 * 2800 / sqrt(2800) * 11 / 14 = 124.7; the bursts say more.
    let window = |n: usize, phase: usize| {
        let mut c = control(n as f64, 0, 0, 200 * n as i64);
        let bursts = (0..n).map(|i| if i % 2 == phase { 400 } else { 0 });
        c.subs = subs(&[Figure::Statements], bursts);
        c
    };
    let merged = window(6, 1).merged(&window(8, 0));
    assert_eq!(merged.joins, vec![6]);
    let statements = merged.series(Figure::Statements);
    assert_eq!(merged.segments(&statements).len(), 2);
    let measured = totals(2000, 2000, Some(4200));
    let a = assessed(merged, 11.0, measured, 2000);
    // Half a burst at the edges, as either window alone says, and the rate exact; not the
    // whole burst that the two side by side at the join would make of it.
    let u = statements_uncertainty(&a);
    assert!((u - 200.0 / 2000.0).abs() < 1e-12, "{u}");
    // A third window after another burst: two joins.
    let three = window(6, 1).merged(&window(8, 0)).merged(&window(4, 1));
    assert_eq!(three.joins, vec![6, 14]);
    assert_eq!(three.segments(&three.series(Figure::Statements)).len(), 3);
}

#[test]
fn without_control_other_backends_are_warned_about() {
    let mut input = input(None);
    input.other_backends = vec!["pid 7 (role cron)".into()];
    let measured = totals(10, 10, None);
    let a = assess(&input, measured, 10);
    assert_eq!(a.background, None, "no flag, no section");
    assert_eq!(a.corrected, None);
    assert_eq!(a.warnings.len(), 1);
    assert_eq!(a.warnings[0].code(), "background_not_subtracted");
    let w = &a.warnings[0].message();
    assert!(w.contains("pid 7 (role cron)"), "{w}");
    assert!(
        w.contains("--app-role ROLE") && w.contains("--control DURATION"),
        "{w}"
    );

    input.options.app_roles = vec!["app".into()];
    input.other_roles = vec![OtherRole {
        role: "cron".into(),
        calls: 12,
        rows: 12,
        entries: 1,
    }];
    let a = assess(&input, measured, 10);
    let b = a.background.expect("--app-role shows the section");
    assert_eq!(b.app_roles, vec!["app".to_string()]);
    assert_eq!(b.subtracted, None);
    assert!(
        a.warnings[0]
            .message()
            .contains("statements are the app roles' only")
    );
    assert_eq!(
        a.warnings[1],
        Note::OtherRolesStatements {
            roles: vec![RoleCalls {
                role: "cron".into(),
                calls: 12
            }]
        }
    );
    assert!(a.warnings[1].message().starts_with(
        "12 statement call(s) of roles outside --app-role ran in the window (cron 12)"
    ));

    // A backend of the app's own role (its pool running jobs): its statements are counted
    // as the app's, and the note says so instead of calling them the app roles' only.
    input.other_backends = vec!["pid 8 (role app, application \"worker\")".into()];
    let a = assess(&input, measured, 10);
    let w = a.warnings[0].message();
    assert!(
        matches!(
            a.warnings[0],
            Note::BackgroundNotSubtracted {
                shares_app_role: true,
                ..
            }
        ),
        "{:?}",
        a.warnings[0]
    );
    assert!(!w.contains("app roles' only"), "{w}");
    assert!(
        w.contains("the statement figures include theirs too"),
        "{w}"
    );
    assert!(!w.contains("other client backend"), "{w}");
}

#[test]
fn the_control_windows_are_sized_for_an_uncertainty_within_fifteen_percent() {
    // 1000 statements in 10 s, none in bursts, 20 s window of 1000 requests: 2000
    // expected, ± 3 * 1000 / sqrt(1000) * 2 = 189.7 beside 1000, 15% is 150. Noise shrinks
    // as one over the root of the control window: (189.7 / 150)^2 * 10 = 16 s.
    let input = input(Some(control(10.0, 0, 0, 1000)));
    let measured = totals(1000, 1000, Some(3000));
    let needed = control_needed(&input, measured).unwrap();
    assert!((needed - 16.0).abs() < 1e-9, "{needed}");
    let a = assess(&input, measured, 1000);
    let reason = &a.invalid_reasons[0].message;
    assert!(
        reason.contains("control windows of about 16 s in all")
            && reason.contains("raise --max-duration by about 6 s"),
        "{reason}"
    );
    // Twice the control window: 1 / sqrt(2) of the noise, within 15%.
    let twice = control(10.0, 0, 0, 1000).merged(&control(10.0, 0, 0, 1000));
    assert_eq!((twice.seconds, twice.counts.statements), (20.0, Some(2000)));
    let input = Input {
        control: Some(twice),
        ..input
    };
    assert_eq!(control_needed(&input, measured), Some(20.0));
    assert!(assess(&input, measured, 1000).invalid_reasons.is_empty());
}

#[test]
fn without_control_a_window_whose_background_may_be_above_the_threshold_is_not_valid() {
    // 24 statements in the 8 s after the burst: 3 a second, 60 over a 20 s window, against
    // 1060 counted: 6% of the 1000 left, above 5%.
    let mut input = input(None);
    input.tail = Some(Tail {
        seconds: 8.0,
        statements: 24,
    });
    let measured = totals(1060, 1060, Some(1060));
    let a = assess(&input, measured, 1000);
    assert_eq!(a.invalid_reasons.len(), 1, "{:?}", a.invalid_reasons);
    assert_eq!(
        a.invalid_reasons[0].code,
        crate::report::model::invalid::Code::BackgroundTooLoud
    );
    assert_eq!(
        a.invalid_reasons[0].message,
        "background in the window: 24 statement(s) ran in the 8.0 s after the last response, \
         while pgcost sent nothing, so about 60 of the window's 1060 statements are not the \
         requests' (6% of the rest, more than --max-background 5%); measure it and subtract \
         it with --control 10s (give --app-role ROLE too when it runs as another role)"
    );
    // 2 a second: 40, 4% of the rest, within the limit; but 16 counted in 8 s bound the
    // rate only to 2 + 3 * 4 / 8 = 3.5 a second: up to 70, 7% of the rest. Not valid.
    input.tail = Some(Tail {
        seconds: 8.0,
        statements: 16,
    });
    let measured = Counts {
        statements: Some(1040),
        ..measured
    };
    let a = assess(&input, measured, 1000);
    assert_eq!(a.invalid_reasons.len(), 1, "{:?}", a.invalid_reasons);
    assert_eq!(
        a.invalid_reasons[0].message,
        "background in the window: 16 statement(s) ran in the 8.0 s after the last response, \
         while pgcost sent nothing, so about 40 of the window's 1040 statements are not the \
         requests' (4% of the rest), and so short a count leaves up to 70 possible (7% of the \
         rest, more than --max-background 5%); measure it and subtract it with --control 10s \
         (give --app-role ROLE too when it runs as another role)"
    );
    // Against 4000 statements, 70 is 1.8% of the rest: valid.
    let measured = Counts {
        statements: Some(4000),
        ..measured
    };
    assert!(assess(&input, measured, 1000).invalid_reasons.is_empty());
    // A tail that saw nothing, or none read: nothing to bound.
    input.tail = Some(Tail {
        seconds: 8.0,
        statements: 0,
    });
    assert!(assess(&input, measured, 1000).invalid_reasons.is_empty());
    input.tail = None;
    assert!(assess(&input, measured, 1000).invalid_reasons.is_empty());
}

#[test]
fn transactions_in_one_burst_of_the_control_window_are_uncertain_by_the_burst() {
    // 100 transactions at once, in one of ten sub-windows; a 13 s window. Poisson would
    // say 3 * 100 / sqrt(100) * 1.3 = 39 (plus the held edges); the sub-windows say more:
    // 90 at the edges (one sub-window of 100 against a mean of 10), and the rate's spread
    // (sd 31.62 of the sub-windows, over sqrt(10), times 3) over 13 sub-windows: 390.
    let mut c = control(10.0, 100, 100, 0);
    let both = [Figure::Transactions, Figure::RowsRead];
    c.subs = subs(&both, [vec![100], vec![0; 9]].concat());
    let measured = totals(10_000, 10_000, Some(10_000));
    let a = assessed(c, 13.0, measured, 10_000);
    let u = a.background.unwrap().uncertainty.unwrap();
    // The held edges: 10 a second for 1 s, at both edges of both windows (1 + 1.3).
    let held = 10.0 * 1.0 * 2.3;
    let spread = (9.0 * 100.0 + 8100.0) / 9.0;
    let expected = 90.0 + 3.0 * f64::sqrt(spread) / 10f64.sqrt() * 13.0 + held;
    assert!(
        (u.transactions.unwrap() * 10_000.0 - expected).abs() < 1e-6,
        "{} vs {expected}",
        u.transactions.unwrap() * 10_000.0
    );
    assert!((u.rows_read.unwrap() - u.transactions.unwrap()).abs() < 1e-12);
    // Steady sub-windows: Poisson stands.
    let mut c = control(10.0, 100, 100, 0);
    c.subs = subs(&[Figure::Transactions], vec![10; 10]);
    let mut input = super::tests::input(Some(c));
    input.window_seconds = 13.0;
    let u = assess(&input, measured, 10_000).background.unwrap();
    let u = u.uncertainty.unwrap().transactions.unwrap() * 10_000.0;
    assert!((u - (39.0 + held)).abs() < 1e-9, "{u}");
}

#[test]
fn the_reasons_follow_the_figure_table() {
    // A background of nearly the whole window in every figure: each too uncertain.
    let a = assessed(
        control(10.0, 100, 100, 100),
        20.0,
        totals(210, 210, Some(210)),
        10,
    );
    let figures: Vec<_> = (a.invalid_reasons.iter())
        .map(|r| r.message.split(" uncertain by").next().unwrap())
        .collect();
    let leaves = |figure| format!("the background leaves {figure}");
    assert_eq!(
        figures,
        [
            leaves("transactions"),
            leaves("statements"),
            leaves("rows read")
        ]
    );
}
