//! Under CPU stress (busy loops at twice the cores), a pgcost run may be slower, or
//! honestly not valid (`valid: false` with a reason, exit 3), but never valid and wrong:
//! runs of `pgcost demo` against the exact truth of its three pipelines, audits of a
//! Rails-like pooled app with prepared statements at `-c 4`, and `pgcost ramp` of a
//! CPU-bound app, which is the app's wall, inconclusive, or this machine saturated (wall
//! `host`), never the database, the pool or pgcost's load generator.
//!
//! `PGCOST_STRESS_RUNS` sets the demo runs and the audits (3 of each by default),
//! `PGCOST_STRESS_RAMPS` the ramps (1), `PGCOST_STRESS_LANES` the runs at once (3: most
//! of a run is an idle settle wait) and `PGCOST_STRESS_HOGS` the busy loops (twice the
//! cores). Each case prints a summary line: runs, right, flagged not valid, wrong, time.

mod support;

use std::time::Instant;

use serde_json::Value;
use support::busy_app::BusyApp;
use support::fixture::{Fixture, plan_switch, rails_like};
use support::stress::{Outcome, StressCase, Truth, env_count, in_lanes, judge_audit};
use support::{TestDb, pgcost};

/// Demo runs, and audits, by default.
const RUNS: usize = 3;
/// Runs at once, by default.
const LANES: usize = 3;
/// The Rails-like app's pool: puma's four threads, one connection each.
const POOL: usize = 4;

/// What one request of each demo pipeline costs, from its code (src/commands/demo/api.rs)
/// and the seeded data (sql/demo_seed.sql), as tests/demo.rs counts them: the demo user's
/// one membership, 300 group grants and 4 user grants, and a page of 20 projects. Every
/// statement is a transaction of its own.
const DEMO_TRUTH: [(&str, Truth); 3] = [
    (
        // Tenant, session, entitlement; the permission set fetched twice; the page.
        "naive",
        Truth {
            transactions: 10.0,
            statements: 10.0,
            rows_read: 889.0,
            rows_returned: 3.0 + 2.0 * (1.0 + 300.0 + 4.0) + 20.0,
        },
    ),
    (
        // The three lookups, two EXISTS probes, the page.
        "exists",
        Truth {
            transactions: 6.0,
            statements: 6.0,
            rows_read: 39.0,
            rows_returned: 3.0 + 2.0 + 20.0,
        },
    ),
    (
        // The tenant and the decision come from the cache.
        "cached",
        Truth {
            transactions: 3.0,
            statements: 3.0,
            rows_read: 30.0,
            rows_returned: 2.0 + 20.0,
        },
    ),
];

fn runs() -> usize {
    env_count("PGCOST_STRESS_RUNS", RUNS)
}

fn lanes(runs: usize) -> usize {
    env_count("PGCOST_STRESS_LANES", LANES).clamp(1, runs.max(1))
}

/// A run of the binary: its JSON document, or the outcome that says why there is none.
fn run_json(what: &str, mut cmd: assert_cmd::Command) -> Result<Value, Outcome> {
    let output = cmd.output().expect("pgcost starts");
    support::stress::json_of(what, &output)
}

#[test]
fn demo_pipelines_are_exact_or_not_valid_under_stress() {
    let runs = runs();
    let stress = StressCase::start("demo", "exact");
    in_lanes(runs, lanes(runs), |_, i| {
        let started = Instant::now();
        let mut cmd = pgcost();
        cmd.args(["demo", "--format", "json"]);
        let run = format!("run {}", i + 1);
        let outcomes = match run_json("demo", cmd) {
            Err(failed) => vec![(run.clone(), failed)],
            Ok(demo) => (DEMO_TRUTH.iter())
                .map(|(name, truth)| {
                    let outcome = judge_audit(&demo["pipelines"][name], truth);
                    (format!("{run} {name}"), outcome)
                })
                .collect(),
        };
        stress.record(&run, started.elapsed(), outcomes);
    });
    stress.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rails_like_audits_at_c4_are_exact_or_not_valid_under_stress() {
    let runs = runs();
    let lanes = lanes(runs);
    let stress = StressCase::start("rails-like audit -c 4", "exact");
    let db = TestDb::start().await;
    // Every lane's database before any lane measures (tests/churn.rs says why).
    let mut db_urls = Vec::new();
    for lane in 0..lanes {
        let name = format!("stress_lane_{lane}");
        db.create_seeded_database(&name).await;
        let client = db.connect(&name).await;
        client.batch_execute(plan_switch::SCHEMA).await.unwrap();
        client.batch_execute(plan_switch::ANALYZE).await.unwrap();
        db_urls.push(db.cluster.url(&name));
    }
    let mut apps = Vec::new();
    for url in &db_urls {
        apps.push(Fixture::start(url, POOL).await);
    }
    let truth = Truth {
        transactions: rails_like::STATEMENTS,
        statements: rails_like::STATEMENTS,
        rows_read: rails_like::ROWS_READ,
        rows_returned: rails_like::ROWS_RETURNED,
    };
    // Off the runtime's workers, which serve the apps meanwhile.
    tokio::task::block_in_place(|| {
        in_lanes(runs, lanes, |lane, i| {
            let started = Instant::now();
            let mut cmd = pgcost();
            cmd.args(["audit", "--quiet", "--format", "json", "-c", "4"])
                .args(["--url", &apps[lane].url(rails_like::PATH)])
                .args(["--db", &db_urls[lane]]);
            let outcome = run_json("audit", cmd).map_or_else(|f| f, |r| judge_audit(&r, &truth));
            let run = format!("audit {} (lane {lane})", i + 1);
            stress.record(&run, started.elapsed(), vec![(run.clone(), outcome)]);
        })
    });
    stress.finish();
}

/// The app child of the ramp under stress, started by it; never by `cargo test` itself.
#[test]
#[ignore = "the app child of the ramp under stress, started by it"]
fn busy_app_child() {
    support::busy_app::serve_if_child();
}

/// Whether the verdict says it is inconclusive: the string `inconclusive` as the verdict,
/// or as any field of it (`wall` or another), or `inconclusive: true`.
fn inconclusive(verdict: &Value) -> bool {
    verdict == "inconclusive"
        || verdict["inconclusive"] == true
        || (verdict.as_object()).is_some_and(|v| v.values().any(|field| field == "inconclusive"))
}

/// A ramp of the CPU-bound app: not valid with a reason, the wall `app`, inconclusive, or
/// the host named as saturated (wall `host`: the hogs are on it). Anything else (the
/// database, the pool, pgcost's own load generator, none) is wrong.
fn judge_ramp(report: &Value) -> Outcome {
    if report["valid"] != true {
        return support::stress::not_valid(report);
    }
    let verdict = &report["verdict"];
    let rps: Vec<String> = (report["steps"].as_array().into_iter().flatten())
        .map(|s| {
            format!(
                "c={} {:.0} rps",
                s["concurrency"],
                s["rps"].as_f64().unwrap_or(0.0)
            )
        })
        .collect();
    let said = format!(
        "wall {}, knee {} over {}",
        verdict["wall"],
        verdict["knee_concurrency"],
        rps.join(", ")
    );
    let saturated = verdict["wall"] == "host" && verdict["saturated"] == "host";
    match inconclusive(verdict) || verdict["wall"] == "app" || saturated {
        true => Outcome::Right(said),
        false => Outcome::Wrong(format!("{said}: {}", verdict["evidence"])),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_bound_app_ramped_under_stress_is_the_app_or_inconclusive() {
    let runs = env_count("PGCOST_STRESS_RAMPS", 1);
    let stress = StressCase::start("ramp of a CPU-bound app", "app or inconclusive");
    let db = TestDb::start().await;
    let app = BusyApp::start("busy_app_child");
    for i in 0..runs {
        let started = Instant::now();
        let mut cmd = pgcost();
        cmd.args(["ramp", "--quiet", "--format", "json", "--warmup", "20"])
            .args(["--url", &app.url(), "--db", &db.url()])
            .args(["--steps", "1,2,4", "--step-requests", "150"])
            .args(["--pid", &app.pid().to_string()]);
        let result = tokio::task::block_in_place(|| run_json("ramp", cmd));
        let outcome = result.map_or_else(|f| f, |r| judge_ramp(&r));
        let run = format!("ramp {}", i + 1);
        stress.record(&run, started.elapsed(), vec![(run.clone(), outcome)]);
    }
    drop(app);
    stress.finish();
}
