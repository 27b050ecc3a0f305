//! A periodic job in the app's own process and role (every 2 s, 30 scans of `small`):
//! `--app-role` cannot tell it apart. With `--control` the figures are within their stated
//! uncertainty of the truth measured with the job stopped, and the job's period is found
//! (a busy machine can hide it: the audit runs again, each run held to the truth);
//! without it, the report names the background and is not valid (above --max-background).

mod support;

use std::sync::Arc;
use std::time::Duration;

use pgcost_core::report::{PerRequest, Report};
use support::fixture::Fixture;
use support::fixture::periodic::Periodic;
use support::{ITEMS, TestDb, assert_valid};

const DB: &str = "periodic";
const PERIOD: Duration = Duration::from_secs(2);
const STATEMENTS: usize = 30;

async fn audit(db: &TestDb, app: &Fixture, extra: &[&str]) -> Report {
    audit_n(db, app, "1000", extra).await
}

async fn audit_n(db: &TestDb, app: &Fixture, requests: &str, extra: &[&str]) -> Report {
    let mut args = vec!["-n", requests, "-c", "8", "--warmup", "80"];
    args.extend(extra);
    let config = support::audit_config_of(&db.cluster.url(DB), &app.url("/scan"), &args);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    pgcost::measure::run(&config, &pgcost::progress::Progress::hidden(), stop)
        .await
        .unwrap_or_else(|e| panic!("audit failed: {} ({:?})", e.message, e.hint))
}

/// Audits with the job on, before the period is given up for a busy machine's.
const ATTEMPTS: usize = 3;

/// With the job on and `--control`: valid, each figure within its ± of the truth `t`
/// (with the job off), the job subtracted; and, when the job's period was found (`true`),
/// that period, control windows of whole periods, the note that names it, and each ±
/// within 15% of its figure.
fn subtracted_within_its_uncertainty(r: &Report, t: &PerRequest) -> bool {
    assert_valid(r);
    let b = r.background.as_ref().expect("a background section");
    let (u, s, p) = (
        b.uncertainty.unwrap(),
        b.subtracted.unwrap(),
        &r.per_request,
    );
    println!(
        "job on, --control: period {:?} s, control {:.1} s, window {:.1} s; statements {:.4} ± \
         {:.4} (subtracted {:.4}), transactions {:.4} ± {:.4}, rows read {:.3} ± {:.3}",
        b.period_seconds,
        b.window_seconds.unwrap(),
        b.measured_window_seconds,
        p.statements.unwrap(),
        u.statements.unwrap(),
        s.statements.unwrap(),
        p.transactions,
        u.transactions.unwrap(),
        p.rows_read,
        u.rows_read.unwrap()
    );
    let report = format!("{p:?}\n{b:#?}");
    let statements = p.statements.unwrap();
    assert!(
        s.statements.unwrap() > 0.05,
        "the job was subtracted: {report}"
    );
    assert!(
        (statements - t.statements.unwrap()).abs() <= u.statements.unwrap(),
        "{report}"
    );
    assert!(
        (p.transactions - t.transactions).abs() <= u.transactions.unwrap(),
        "{report}"
    );
    assert!(
        (p.rows_read - t.rows_read).abs() <= u.rows_read.unwrap(),
        "{report}"
    );
    let Some(period) = b.period_seconds else {
        return false;
    };
    assert!((period - 2.0).abs() < 0.3, "{report}");
    let control = b.window_seconds.unwrap();
    assert!(control >= 10.0, "{report}");
    // Before and after the burst, each of whole periods (one-second sub-windows, each a
    // little over a second).
    assert!(
        (control / period).fract() < 0.2 || (control / period).fract() > 0.8,
        "{report}"
    );
    // Louder than --max-background (5%), so said, with its period.
    let loud = (r.notes.iter())
        .find(|n| n.code() == "background_subtracted")
        .unwrap_or_else(|| panic!("no background_subtracted note: {:#?}", r.notes));
    assert!(
        loud.message().contains("it runs every 2.0 s"),
        "{}",
        loud.message()
    );
    // An answer, not a shrug: each within 15% of the figure.
    assert!(u.statements.unwrap() <= 0.15 * statements, "{report}");
    assert!(u.transactions.unwrap() <= 0.15 * p.transactions, "{report}");
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_periodic_job_in_the_apps_role_is_subtracted_within_its_uncertainty() {
    let db = TestDb::start().await;
    db.create_seeded_database(DB).await;
    let app = Fixture::start(&db.cluster.url(DB), 8).await;

    // The truth, with the job stopped: the same endpoint, the same control window.
    let truth = audit(&db, &app, &["--control", "6s"]).await;
    assert_valid(&truth);
    let t = truth.per_request.clone();
    println!(
        "job off: {:.4} statements, {:.4} transactions, {:.3} rows read per request",
        t.statements.unwrap(),
        t.transactions,
        t.rows_read
    );
    assert_eq!(t.statements, Some(1.0), "{t:?}");
    assert!((t.rows_read - ITEMS as f64).abs() < 1.0, "{t:?}");
    let quiet = truth.background.as_ref().unwrap();
    assert_eq!(quiet.period_seconds, None, "{quiet:?}");

    let job = Periodic::start(&db.cluster.url(DB), PERIOD, STATEMENTS).await;
    // A busy machine delays the job's runs unevenly, and its period can go unfound: the
    // figures must hold the truth within their ± all the same, and the audit runs again.
    let mut found = false;
    for attempt in 1..=ATTEMPTS {
        let r = audit(&db, &app, &["--control", "10s"]).await;
        found = subtracted_within_its_uncertainty(&r, &t);
        if found {
            break;
        }
        println!("audit {attempt}: the job's period was not found (a busy machine)");
    }
    assert!(found, "the job's period was not found in {ATTEMPTS} audits");

    // A burst too small beside the job's edges (one run of 30 statements falls in or out
    // of the window): pgcost raises it past -n 40, within --max-duration, to an answer.
    // The default 180 s can bind on a loaded 2-core machine (the warm-up and settle waits
    // stretch, and fewer requests a second fit): then the answer is rightly "not valid",
    // which is tests/background.rs's case. Here the time must not be what decides.
    let small = audit_n(
        &db,
        &app,
        "40",
        &["--control", "6s", "--max-duration", "400s"],
    )
    .await;
    let b = small.background.as_ref().expect("a background section");
    let (u, p) = (b.uncertainty.unwrap(), &small.per_request);
    let sized = (small.notes.iter()).find(|n| n.code() == "burst_sized");
    println!(
        "-n 40 --control 6s: {} requests sent, valid {}, statements {:.4} ± {:.4}, \
         transactions {:.4} ± {:.4}; {:?}",
        small.load.requests,
        small.valid,
        p.statements.unwrap(),
        u.statements.unwrap(),
        p.transactions,
        u.transactions.unwrap(),
        sized.map(|n| n.message())
    );
    let report = format!("{:?}\n{p:?}\n{b:#?}", small.invalid_reasons);
    assert!(sized.is_some(), "no burst_sized note: {:#?}", small.notes);
    assert!(small.load.requests > 80, "{report}");
    // Every figure holds the truth within its ±. The burst is sized from the warm-up and
    // the first control window, an estimate (sized for half the target since 80% of it
    // left transactions at ±15.5% and ±25% on CI's busiest lane): valid, each ± within
    // 15%; should it still fall short, the honest answer, not valid, saying what would
    // give one, each ± short of the target by little.
    let limit = if small.valid { 0.15 } else { 0.2 };
    for (figure, truth, plus_minus) in [
        (p.statements.unwrap(), 1.0, u.statements.unwrap()),
        (p.transactions, 1.0, u.transactions.unwrap()),
        (p.rows_read, ITEMS as f64, u.rows_read.unwrap()),
    ] {
        assert!((figure - truth).abs() <= plus_minus, "{report}");
        assert!(plus_minus <= limit * figure, "{report}");
    }
    if !small.valid {
        let reason = support::reason(&small, support::Code::BackgroundTooUncertain);
        assert!(reason.contains("would give an answer"), "{reason}");
    }

    // Without --control the job's work is in the figures, and the report names it.
    let plain = audit(&db, &app, &[]).await;
    let codes: Vec<&str> = plain.notes.iter().map(|n| n.code()).collect();
    println!(
        "job on, no flags: {:.4} statements per request, notes {codes:?}",
        plain.per_request.statements.unwrap()
    );
    assert!(
        codes.contains(&"background_not_subtracted") || codes.contains(&"background_while_idle"),
        "{codes:?}"
    );
    // 15 statements a second against 1000 requests in about 12 s: 15-20%, not valid.
    assert!(!plain.valid);
    let reason = support::reason(&plain, support::Code::BackgroundTooLoud);
    println!("{reason}");
    assert!(reason.contains("--control"), "{reason}");
    assert!(plain.per_request.statements.unwrap() > 1.0);
    assert!(job.runs() >= 10, "{}", job.runs());
    job.stop().await;
}
