//! The HTML report in a real browser: a real audit of the fixture app rendered as HTML,
//! loaded by headless Chromium (Debian's `chromium`; `.ci/run` installs it), which must
//! log no console message, show the report's figures in its DOM, and draw a screenshot
//! with the charts' colours in it. The page must name no external URL. The check and
//! demo pages get the same browser checks on hand-built reports.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use pgcost::render::format::Format;
use pgcost::render::{Exporter, HtmlExporter, View};
use pgcost_core::report::Report;
use support::fixture::Fixture;
use support::{TestDb, assert_valid, pgcost, run_blocking};

/// Where the pages and screenshots are kept for a person (or a CI artifact) to look at.
fn keep_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The Chromium binary; a missing one fails the test with how to install it.
fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(path) = which(name) {
            return path;
        }
    }
    panic!(
        "headless Chromium is needed to test the HTML report: install Debian's package with \
         `apt-get install chromium` (.ci/run does so when it is missing)"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or(())
}

/// What the browser made of a page: its DOM after scripts ran, its log, a screenshot.
struct Loaded {
    dom: String,
    console: Vec<String>,
    screenshot: png_image::Image,
}

/// Loads `page` in headless Chromium, offline flags set, `width` pixels wide.
fn load(page: &Path, width: u32) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.display());
    let run = |extra: &[String]| {
        let output = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},2400"))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        assert!(output.status.success(), "chromium failed: {output:?}");
        output
    };
    let dumped = run(&["--dump-dom".to_string()]);
    let shot = page.with_extension(format!("{width}.png"));
    let captured = run(&[format!("--screenshot={}", shot.display())]);
    let console = [&dumped.stderr, &captured.stderr]
        .iter()
        .flat_map(|log| {
            String::from_utf8_lossy(log)
                .into_owned()
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|line| line.contains(":CONSOLE"))
        .collect();
    Loaded {
        dom: String::from_utf8(dumped.stdout).unwrap(),
        console,
        screenshot: png_image::decode(&shot),
    }
}

mod png_image {
    use std::path::Path;

    /// An RGB(A) screenshot, decoded.
    pub struct Image {
        pub width: u32,
        pub height: u32,
        pub channels: usize,
        pub pixels: Vec<u8>,
    }

    pub fn decode(path: &Path) -> Image {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        pixels.truncate(info.buffer_size());
        Image {
            width: info.width,
            height: info.height,
            channels: info.color_type.samples(),
            pixels,
        }
    }

    impl Image {
        /// Pixels of exactly this colour.
        pub fn count(&self, rgb: [u8; 3]) -> usize {
            self.pixels
                .chunks(self.channels)
                .filter(|p| p[..3] == rgb)
                .count()
        }

        /// Whether any two pixels differ.
        pub fn is_blank(&self) -> bool {
            let first = &self.pixels[..self.channels];
            self.pixels.chunks(self.channels).all(|p| p == first)
        }
    }
}

/// `src=`, `href=`, `url(`, `@import` or an http(s) URL anywhere but in `allowed` text.
fn external_references(html: &str, allowed: &[&str]) -> Vec<String> {
    let mut text = html.to_string();
    for a in allowed {
        text = text.replace(a, "");
    }
    let lower = text.to_ascii_lowercase();
    [
        "src=", "href=", "url(", "@import", "http://", "https://", "//fonts", "cdn",
    ]
    .into_iter()
    .filter_map(|needle| {
        let at = lower.find(needle)?;
        Some(lower[at..(at + 80).min(lower.len())].to_string())
    })
    .collect()
}

/// The checks every page must pass in the browser; returns what it loaded at 1280 px.
fn assert_renders(name: &str, html: &str, allowed_text: &[&str], charts: usize) -> Loaded {
    assert!(html.len() < 1_000_000, "{name}: {} bytes", html.len());
    assert_eq!(
        external_references(html, allowed_text),
        Vec::<String>::new(),
        "{name}"
    );
    let page = keep_dir().join(format!("{name}.html"));
    std::fs::write(&page, html).unwrap();
    let desktop = load(&page, 1280);
    assert_eq!(
        desktop.console,
        Vec::<String>::new(),
        "{name}: console messages"
    );
    assert_eq!(
        desktop.dom.matches("<svg").count(),
        charts,
        "{name}: charts in the DOM"
    );
    assert!(!desktop.screenshot.is_blank(), "{name}: blank screenshot");
    assert_eq!(desktop.screenshot.width, 1280);
    // The charts were painted: the first series colour (Okabe–Ito blue) fills bars.
    let blue = desktop.screenshot.count([0x00, 0x72, 0xB2]);
    assert!(blue > 500, "{name}: {blue} pixels of the chart blue");
    // A phone: same page, no console message, and something drawn.
    let phone = load(&page, 390);
    assert_eq!(phone.console, Vec::<String>::new(), "{name} on a phone");
    assert!(!phone.screenshot.is_blank(), "{name} on a phone: blank");
    println!(
        "{name}: {} bytes, {}x{} screenshot, kept in {}",
        html.len(),
        desktop.screenshot.width,
        desktop.screenshot.height,
        keep_dir().display()
    );
    desktop
}

/// The per-request figures the DOM must show, as the page formats them.
fn headline_figures(report: &Report) -> Vec<String> {
    let p = &report.per_request;
    vec![
        format!("{:.2}", p.transactions),
        format!("{:.2}", p.statements.unwrap()),
        format!("{:.2}", p.rows_read),
        format!("{:.2}", p.rows_returned.unwrap()),
        format!("{:.2} ms", report.load.latency_ms.p50),
        format!("{:.2} ms", report.load.latency_ms.p99),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_html_of_the_fixture_renders_in_chromium() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let url = app.url("/perms-naive");
    let report = support::audit(&db, url.clone(), &["-n", "100", "-c", "4"]).await;
    assert_valid(&report);
    assert!(!report.findings.is_empty(), "the naive gate has a finding");
    let html = HtmlExporter.render(&report);
    let loaded = assert_renders("audit", &html, &[&url], 4);
    let dom = loaded.dom;
    for figure in headline_figures(&report) {
        assert!(
            dom.contains(&format!(">{figure}<")),
            "{figure} missing from the DOM"
        );
    }
    assert!(dom.contains("✓ VALID: GET"), "the verdict");
    for statement in &report.statements {
        let start: String = statement.query.chars().take(20).collect();
        assert!(dom.contains(&start), "statement {start} missing");
    }
    for table in &report.tables {
        assert!(dom.contains(&table.table), "table {} missing", table.table);
    }
    // The latency curve's numbers: every percentile point of the report.
    assert_eq!(report.load.latency_percentiles_ms.len(), 12);
    for point in &report.load.latency_percentiles_ms {
        assert!(dom.contains(&format!(">{:.3}<", point.ms)), "{point:?}");
    }
    let finding = &report.findings[0];
    assert!(dom.contains(finding.kind.as_str()));
    assert!(dom.contains(&format!("{:.2}", finding.avoidable_rows_per_request)));

    // The check and demo pages, built from real reports of the same fixture.
    let exists = support::audit(&db, app.url("/perms-exists"), &["-n", "100", "-c", "4"]).await;
    assert_valid(&exists);
    check_page(&report, &exists);
    demo_page(&report, &exists);

    // The binary writes the same page with -o.
    let out = keep_dir().join("audit-cli.html");
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        &url,
        "--db",
        &db.url(),
        "--quiet",
        "-n",
        "20",
        "-c",
        "2",
    ])
    .args(["--format", "html", "-o"])
    .arg(&out);
    run_blocking(cmd).success();
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("<!DOCTYPE html>"), "{}", &written[..40]);
    assert!(written.len() < 1_000_000);
    assert_eq!(external_references(&written, &[&url]), Vec::<String>::new());
}

/// Two endpoints: the naive gate over its rows-returned budget, the EXISTS gate within its
/// budget and compared with a baseline (the naive run's figures).
fn check_page(naive: &Report, exists: &Report) {
    use pgcost::commands::check::budget::{self, Budget, Figures};
    use pgcost::commands::check::{CheckReport, EndpointResult};
    let rows = naive.per_request.rows_returned.unwrap();
    let endpoint = |name: &str, report: &Report, budget: Budget, baseline: Option<&Report>| {
        let verdict = budget::check(&budget, report);
        let (deltas, regressions) = baseline
            .map(|b| budget::compare(&Figures::of(b), &Figures::of(report), Some(10.0)))
            .unwrap_or_default();
        EndpointResult {
            name: name.into(),
            budget,
            breaches: verdict.breaches,
            unchecked: verdict.unchecked,
            regressions,
            deltas,
            baseline_note: None,
            statement_diff: None,
            findings: Vec::new(),
            acks: Vec::new(),
            report: report.clone(),
            scale: None,
        }
    };
    let over = Budget {
        rows_returned: Some((rows / 2.0).floor()),
        statements: Some(10.0),
        ..Budget::default()
    };
    let within = Budget {
        rows_returned: Some(rows),
        statements: Some(10.0),
        ..Budget::default()
    };
    let check = CheckReport {
        schema_version: 1,
        valid: true,
        passed: false,
        baseline: Some("baseline.json".into()),
        max_regression_percent: Some(10.0),
        endpoints: vec![
            endpoint("naive", naive, over, None),
            endpoint("exists", exists, within, Some(naive)),
        ],
    };
    assert_eq!(check.endpoints[0].breaches.len(), 1, "naive is over budget");
    let html = pgcost::render::View::render(&check, Format::Html).unwrap();
    let urls = [naive.target.url.as_str(), exists.target.url.as_str()];
    // A chart per figure the endpoints have: transactions, statements, rows read, rows
    // returned, p95.
    let dom = assert_renders("check", &html, &urls, 5).dom;
    assert!(dom.contains("✗ over budget"));
    assert!(dom.contains("✓ passed"));
    assert!(
        dom.contains(&format!(">{:.2}<", (rows / 2.0).floor())),
        "the budget"
    );
    assert!(
        dom.contains(&format!(">{rows:.2}<")),
        "the baseline and the actual"
    );
}

/// The demo page, with the fixture's naive and EXISTS gates as pipelines.
fn demo_page(naive: &Report, exists: &Report) {
    use pgcost::commands::demo::{Demo, DemoReport, Pipelines};
    let demo = DemoReport {
        pipelines: Pipelines {
            naive: naive.clone(),
            exists: exists.clone(),
            cached: exists.clone(),
        },
    };
    let demo = Demo {
        report: &demo,
        ramps: None,
    };
    let html = View::render(&demo, Format::Html).unwrap();
    let urls = [naive.target.url.as_str(), exists.target.url.as_str()];
    // Six figures side by side, and the naive run's findings.
    let dom = assert_renders("demo", &html, &urls, 7).dom;
    for figure in [naive.per_request.rows_read, exists.per_request.rows_read] {
        assert!(dom.contains(&format!(">{figure:.2}<")), "{figure}");
    }
    assert!(dom.contains(naive.findings[0].kind.as_str()));
}

/// A real ramp of the fixture's EXISTS gate (one statement per request), run by the binary
/// with timed steps: its page shows the five curves and every step's figures; and the demo
/// page with ramps embeds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramp_html_of_the_fixture_renders_in_chromium() {
    use pgcost_core::ramp::RampReport;
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let url = app.url("/perms-exists");
    let json = keep_dir().join("ramp.json");
    let mut cmd = pgcost();
    cmd.args(["ramp", "--url", &url, "--db", &db.url(), "--quiet"])
        .args([
            "--steps",
            "1,2,4",
            "--step-duration",
            "1s",
            "--warmup",
            "20",
        ])
        .args(["--format", "json", "-o"])
        .arg(&json);
    run_blocking(cmd).success();
    let report: RampReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(report.valid, "{:?}", report.invalid_reasons);
    assert_eq!(report.steps.len(), 3);
    for step in &report.steps {
        // Timed steps end gently: in-flight requests finish and count, so the statements
        // of a step are exactly its requests'.
        assert_eq!(step.per_request.statements, 1.0, "{step:?}");
        assert!(step.requests > 10, "{step:?}");
    }
    let html = View::render(&report, Format::Html).unwrap();
    let dom = assert_renders("ramp", &html, &[&url], 5).dom;
    assert!(dom.contains(&pgcost::render::ramp::sentence(&report)));
    for step in &report.steps {
        let rps = format!(">{:.2}<", step.rps);
        let p99 = format!(">{:.2}<", step.latency_ms.p99);
        assert!(dom.contains(&rps) && dom.contains(&p99), "{rps} {p99}");
    }
    for c in ["1", "2", "4"] {
        assert!(dom.contains(&format!("<td>{c}</td>")), "step c={c}");
    }
    if report.usl.is_some() {
        assert!(dom.contains("USL fit"), "the fitted curve's legend");
    }

    // The demo's page with the ramps of two pipelines under the audits' charts.
    use pgcost::commands::demo::{Demo, DemoReport, Pipelines, ramps::Ramps};
    let audit = support::audit(&db, url.clone(), &["-n", "50", "-c", "2"]).await;
    let demo = DemoReport {
        pipelines: Pipelines {
            naive: audit.clone(),
            exists: audit.clone(),
            cached: audit,
        },
    };
    let ramps = Ramps {
        naive: report.clone(),
        cached: report,
    };
    let demo = Demo {
        report: &demo,
        ramps: Some(&ramps),
    };
    let html = View::render(&demo, Format::Html).unwrap();
    let dom = assert_renders("demo-ramp", &html, &[&url], 7 + 2 * 5).dom;
    assert!(dom.contains("Ramp of the cached pipeline"));
}
