//! A survey's route is replayed across its concrete URLs: the load driver sends each URL
//! of a rotation exactly its count in a burst of the sample's size (counted by the app),
//! and `pgcost survey` on `/first/{n}`, whose cost is its n, measures the sample-weighted
//! cost of the real mix exactly. A route that runs no statement is static, not ranked.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::ProgressBar;
use pgcost::http::connection::Driver;
use pgcost::http::load;
use pgcost::http::request::RequestSpec;
use pgcost::http::rotation::Target;
use reqwest::header::HeaderMap;
use reqwest::{Method, Url};

use support::fixture::Fixture;
use support::fixture::survey::FIRST_SERVED;
use support::{TestDb, pgcost, run_blocking};

fn line(path: &str) -> String {
    format!(
        "10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] \"GET {path} HTTP/1.1\" 200 12 \"-\" \"test\"\n"
    )
}

fn served(n: usize) -> u64 {
    FIRST_SERVED[n].load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_sends_each_url_its_count_in_one_rotation() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let url = |n: usize| Url::parse(&app.url(&format!("/first/{n}"))).unwrap();
    let spec = RequestSpec {
        url: url(2),
        method: Method::GET,
        headers: HeaderMap::new(),
        body: None,
        timeout: Duration::from_secs(10),
        error_rule: Default::default(),
        data: None,
    };
    // Ids of this test only: the other test of this file counts its own.
    let counts = [(2, 20), (5, 13), (9, 7)];
    let targets: Vec<Target> = (counts.iter())
        .map(|&(n, requests)| Target {
            url: url(n),
            requests,
            body: None,
        })
        .collect();
    let driver = Arc::new(Driver::rotating(&spec, None, &targets).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let result = load::burst(&driver, 40, 4, &ProgressBar::hidden(), stop.clone()).await;
    assert_eq!(result.status.get(&200), Some(&40), "{:?}", result.status);
    for (n, requests) in counts {
        assert_eq!(served(n), requests, "/first/{n}");
    }
    // A second burst of the same size sends the same mix again.
    load::burst(&driver, 40, 1, &ProgressBar::hidden(), stop).await;
    for (n, requests) in counts {
        assert_eq!(served(n), 2 * requests, "/first/{n}");
    }
    let other = Url::parse("http://127.0.0.2:1/first/2").unwrap();
    let foreign = [Target {
        url: other,
        requests: 1,
        body: None,
    }];
    let err = Driver::rotating(&spec, None, &foreign).err().unwrap();
    assert!(err.contains("is not on"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_costs_the_sample_weighted_mix_of_its_urls() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let mut text = String::new();
    for (n, times) in [(3, 3), (6, 2), (12, 1)] {
        text += &line(&format!("/first/{n}")).repeat(times);
    }
    // `/static` answers 204 without a query: a static file without an extension.
    text += &line("/static").repeat(2);
    std::fs::write(&log, text).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(&log)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args([
            "--format", "json", "-q", "-n", "40", "-c", "4", "--warmup", "40",
        ]);
    let (markdown, html) = (dir.path().join("s.md"), dir.path().join("s.html"));
    cmd.arg(format!("--export=markdown={}", markdown.display()))
        .arg(format!("--export=html={}", html.display()));
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let routes = json["routes"].as_array().unwrap();
    let route = |name: &str| routes.iter().find(|r| r["route"] == name).unwrap();
    let first = route("/first/{id}");
    let sample: Vec<(String, u64)> = (first["sample"].as_array().unwrap().iter())
        .map(|u| {
            let url = u["url"].as_str().unwrap().to_string();
            (url, u["requests"].as_u64().unwrap())
        })
        .collect();
    let expected = [("/first/3", 20), ("/first/6", 13), ("/first/12", 7)];
    assert_eq!(sample, expected.map(|(u, n)| (u.to_string(), n)));
    // Each request of /first/n reads and returns n rows: 20 × 3 + 13 × 6 + 7 × 12 = 222.
    let truth = 222.0 / 40.0;
    assert_eq!(first["per_request"]["statements"], 1.0, "{first}");
    assert_eq!(first["per_request"]["rows_read"], truth, "{first}");
    assert_eq!(first["per_request"]["rows_returned"], truth, "{first}");
    assert_eq!(first["rank"], 1);
    assert_eq!(first["share_of_total"]["rows_read"], 1.0);
    // The route that ran no statement: valid, static, unranked, its traffic static.
    let fixed = route("/static");
    // Screened (`--exact auto` chooses only routes that ran statements): its screening
    // burst ran none.
    assert_eq!(fixed["measurement"], "screened", "{fixed}");
    assert_eq!(fixed["screened"]["statements"], 0.0, "{fixed}");
    assert_eq!(fixed["per_request"], serde_json::Value::Null, "{fixed}");
    assert_eq!(first["measurement"], "exact", "{first}");
    assert_eq!(first["screened"]["statements"], 1.0, "{first}");
    assert_eq!(first["screened"]["rows_returned"], truth, "{first}");
    assert_eq!(
        (
            &fixed["valid"],
            &fixed["static_by_statements"],
            &fixed["rank"]
        ),
        (&true.into(), &true.into(), &serde_json::Value::Null)
    );
    assert_eq!(fixed["share_of_total"], serde_json::Value::Null);
    assert_eq!(json["static_requests"], 2);
    assert_eq!(json["valid"], true);
    // The same run in Markdown and HTML: the ranked route, and its figures as measured.
    let markdown = std::fs::read_to_string(markdown).unwrap();
    let row = (markdown.lines())
        .find(|l| l.contains("/first/{id}"))
        .unwrap();
    assert!(row.starts_with("| 1 "), "{row}");
    assert!(row.contains("| 5.55 "), "{row}");
    assert!(markdown.contains("static (no statement)"), "{markdown}");
    let html = std::fs::read_to_string(html).unwrap();
    assert_eq!(html.matches("<svg").count(), 1);
    assert!(html.contains(">GET /first/{id}<"));
}
