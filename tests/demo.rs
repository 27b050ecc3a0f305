//! The demo end to end: exact per-request figures for the three pipelines, computed from
//! the seeded data; and cleanup of the cluster after a normal run and after SIGINT.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgcost::commands::demo::{self, TENANT_ID, USER_ID};
use pgcost::progress::Progress;
use pgcost::render::View;
use pgcost::render::format::Format;

/// The expected cost of one request of each pipeline, from the pipeline's code
/// (src/commands/demo/api.rs) and counts taken from the seeded database.
struct Expected {
    statements: f64,
    rows_returned: f64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_pipelines_cost_what_their_code_says() {
    // A TTL far longer than the test, so the cached pipeline never expires mid-burst.
    let env = demo::setup(Duration::from_secs(3600), &Progress::hidden())
        .await
        .unwrap();
    let (client, conn) = tokio_postgres::connect(&env.db_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let count = |sql: &'static str| {
        let client = &client;
        async move {
            client
                .query_one(sql, &[&USER_ID, &TENANT_ID])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    let group_grants = count(
        "SELECT count(*) FROM group_grants g JOIN group_members m ON m.group_id = g.group_id \
         WHERE m.user_id = $1 AND g.tenant_id = $2",
    )
    .await as f64;
    let user_grants =
        count("SELECT count(*) FROM user_grants WHERE user_id = $1 AND tenant_id = $2").await
            as f64;
    let memberships =
        count("SELECT count(*) FROM memberships WHERE user_id = $1 AND tenant_id = $2").await
            as f64;
    let projects = client
        .query_one(
            "SELECT least(count(*), 20) FROM projects WHERE tenant_id = $1",
            &[&TENANT_ID],
        )
        .await
        .unwrap()
        .get::<_, i64>(0) as f64;
    assert!(
        group_grants >= 200.0,
        "the demo user holds several hundred grants: {group_grants}"
    );
    assert_eq!(memberships, 1.0);

    // tenant + session + entitlement, the permission question asked twice, the listing.
    let lookups = 3.0;
    let naive = Expected {
        statements: lookups + 2.0 * 3.0 + 1.0,
        rows_returned: lookups + 2.0 * (memberships + group_grants + user_grants) + projects,
    };
    let exists = Expected {
        statements: lookups + 2.0 + 1.0,
        rows_returned: lookups + 2.0 + projects,
    };
    // The tenant and the permission decision come from the TTL cache.
    let cached = Expected {
        statements: 2.0 + 1.0,
        rows_returned: 2.0 + projects,
    };

    let ramp_statements = [naive.statements, cached.statements];
    let report = demo::audit_all(&env, 200, 8, &Progress::hidden())
        .await
        .unwrap();
    for ((pipeline, r), expected) in report.all().into_iter().zip([naive, exists, cached]) {
        let name = pipeline.name();
        assert!(r.valid, "{name}: {:?}", r.invalid_reasons);
        let p = &r.per_request;
        assert_eq!(p.statements, Some(expected.statements), "{name}: {p:?}");
        assert_eq!(
            p.transactions, expected.statements,
            "{name}: one implicit transaction per statement"
        );
        assert_eq!(
            p.rows_returned,
            Some(expected.rows_returned),
            "{name}: {p:?}"
        );
        assert_eq!(p.new_sessions, Some(0.0), "{name}");
        let (parsed, total) = pgcost_core::findings::parse_rate(&r.statements);
        assert_eq!(parsed, total, "{name}: every demo statement parses");
    }
    for (pipeline, r) in report.all() {
        every_statement_names_its_route_and_line(pipeline.name(), r);
    }
    let [(_, n), (_, e), (_, c)] = report.all();
    round_trips_say_where_to_look_without_tag_comments(n);
    // Rows read are the plans' reads of the seeded data (tup_returned: rows from sequential
    // scans and index entries), one plan per statement once the warm-up is steady: a plan
    // that switches inside the window (issue 23: exists read 39.0, 43.6, 66.75) shows here.
    let reads = [n, e, c].map(|r| r.per_request.rows_read);
    eprintln!("rows read per request: {reads:?}");
    for r in [n, e, c] {
        let warmed = r.load.warmup_done.as_ref().expect("a steady warm-up");
        assert!(warmed.steady, "{warmed:?}");
    }
    assert_eq!(reads, [889.0, 39.0, 30.0]);
    let kinds = |r: &pgcost_core::report::Report| {
        r.findings
            .iter()
            .map(|f| f.kind.to_string())
            .collect::<Vec<_>>()
    };
    assert!(
        n.findings
            .iter()
            .any(|f| f.kind.to_string() == "collection_to_boolean"
                && f.query.as_deref().unwrap_or("").contains("group_grants")),
        "{:?}",
        kinds(n)
    );
    assert_eq!(
        n.findings[0].kind.to_string(),
        "collection_to_boolean",
        "ranked first: {:?}",
        kinds(n)
    );
    assert!(
        n.findings[0]
            .suggestion
            .contains("SELECT EXISTS (SELECT 1 FROM")
    );
    assert!(
        !kinds(c).contains(&"collection_to_boolean".to_string()),
        "{:?}",
        kinds(c)
    );
    assert!(
        !kinds(e).contains(&"collection_to_boolean".to_string()),
        "{:?}",
        kinds(e)
    );
    // The finding points at the line of the demo's api.rs that sends the statement, from
    // the tags on its SQL, and says who sent it.
    let first = &n.findings[0];
    let at = first.locations.first().expect("a tagged location");
    assert_eq!(at.uri, "src/commands/demo/api.rs");
    let source = include_str!("../src/commands/demo/api.rs");
    let line = source.lines().nth(at.line as usize - 1).unwrap();
    assert!(
        line.contains("query!(client, SQL_GROUP_GRANTS,"),
        "{at:?}: {line}"
    );
    let sent_by = (first.tags.as_ref())
        .and_then(pgcost_core::findings::sent_from::sent_by)
        .unwrap_or_default();
    // A statement no sample saw keeps the tags of the text pg_stat_statements kept.
    let route = pgcost::commands::demo::api::ROUTE;
    let sampled = format!("sent by route {route}, 100% of samples");
    let kept = format!("sent by route {route}, as pg_stat_statements kept it");
    assert!(sent_by == sampled || sent_by == kept, "{sent_by}");
    // The plan Postgres would use, fetched after the last window.
    let plan = n.findings[0].plan.as_deref().unwrap_or_default();
    assert!(plan.contains("group_grants"), "{plan}");
    let text = demo::render_comparison(&report);
    assert!(text.contains("naive") && text.contains("collection_to_boolean"));
    // The demo shows the first finding in full: its rewrite and its plan.
    assert!(
        text.contains("SELECT EXISTS (SELECT 1 FROM group_grants g JOIN group_members m"),
        "{text}"
    );
    assert!(text.contains("   plan:\n"), "{text}");
    // ...and where each statement comes from, from the tags the demo puts on its SQL.
    assert!(text.contains("The naive run's tags: "), "{text}");
    assert!(text.contains("│ src/commands/demo/api.rs:"), "{text}");

    // `pgcost demo --ramp`: the naive and cached pipelines ramped at c = 1, 2, 4 and 8 for
    // 5 s each. Timed steps end gently, so each step's statements per request are exactly
    // the pipeline's, at every concurrency.
    let ramps = demo::ramps::ramp_pipelines(&env, &Progress::hidden())
        .await
        .unwrap();
    for (name, ramp, statements) in [
        ("naive", &ramps.naive, ramp_statements[0]),
        ("cached", &ramps.cached, ramp_statements[1]),
    ] {
        assert!(ramp.valid, "{name}: {:?}", ramp.invalid_reasons);
        let levels: Vec<_> = ramp.steps.iter().map(|s| s.concurrency).collect();
        assert_eq!(levels, [1, 2, 4, 8].map(Some), "{name}");
        for step in &ramp.steps {
            assert_eq!(step.per_request.statements, statements, "{name}: {step:?}");
            assert!(
                step.requests > 0 && step.errors.is_empty(),
                "{name}: {step:?}"
            );
        }
        let totals = ramp.totals.as_ref().expect("settled before and after");
        assert!(totals.transactions > 0, "{name}: {totals:?}");
    }
    let document = demo::Demo {
        report: &report,
        ramps: Some(&ramps),
    };
    let text = View::render(&document, Format::Table).unwrap();
    assert!(text.contains("Ramp of the naive pipeline") && text.contains("Verdict:"));
}

/// The naive pipeline's `round_trips` names the route and the lines of its statements, lists
/// the tenant lookup (keyed by the token's tenant) apart from the page's batch loads, and no
/// finding shows the demo's tag comments.
fn round_trips_say_where_to_look_without_tag_comments(n: &pgcost_core::report::Report) {
    let trips = (n.findings.iter())
        .find(|f| f.kind.to_string() == "round_trips")
        .expect("the naive pipeline's round trips");
    let tags = trips.tags.as_ref().expect("its statements' tags");
    let routes: Vec<_> = tags.seen.iter().map(|s| s.tags.route.as_deref()).collect();
    assert!(
        routes
            .iter()
            .all(|r| *r == Some(pgcost::commands::demo::api::ROUTE)),
        "{routes:?}"
    );
    assert!(!trips.locations.is_empty());
    for at in &trips.locations {
        assert_eq!(at.uri, "src/commands/demo/api.rs", "{at:?}");
    }
    let batch_loads = (trips.suggestion.split("\n\n"))
        .find(|part| part.starts_with("Batch loads keyed by the page"))
        .unwrap_or_default();
    assert!(
        !batch_loads.contains("FROM tenants"),
        "{}",
        trips.suggestion
    );
    let scoping = (trips.suggestion.split("\n\n"))
        .find(|part| part.starts_with("The tenant that scopes the page"))
        .unwrap_or_default();
    assert!(scoping.contains("FROM tenants"), "{}", trips.suggestion);
    let table = View::render(n, Format::Table).unwrap();
    let findings = &table[table.find("\nFindings (").expect("findings")..];
    let end = ["\nWhy the numbers", "\nWarnings"]
        .iter()
        .filter_map(|next| findings.find(next))
        .min();
    let findings = &findings[..end.unwrap_or(findings.len())];
    assert!(!findings.contains("code.lineno"), "{findings}");
    for f in &n.findings {
        assert!(!f.suggestion.contains("code.lineno"), "{}", f.suggestion);
    }
}

/// Every statement a request runs carries the demo's sqlcommenter tags: its route, and
/// the line of src/commands/demo/api.rs that sends it, read from that file.
fn every_statement_names_its_route_and_line(name: &str, r: &pgcost_core::report::Report) {
    use pgcost::commands::demo::api;
    // Constants and comments folded: pg_stat_statements shows `SELECT 1` as `SELECT $4`.
    use pgcost_core::tags::comment::fold;
    let source = include_str!("../src/commands/demo/api.rs");
    let sent = [
        ("SQL_TENANT", api::SQL_TENANT),
        ("SQL_SESSION", api::SQL_SESSION),
        ("SQL_ENTITLEMENT", api::SQL_ENTITLEMENT),
        ("SQL_MEMBERSHIP", api::SQL_MEMBERSHIP),
        ("SQL_GROUP_GRANTS", api::SQL_GROUP_GRANTS),
        ("SQL_USER_GRANTS", api::SQL_USER_GRANTS),
        ("SQL_CAN", api::SQL_CAN),
        ("SQL_PROJECTS", api::SQL_PROJECTS),
    ];
    let summary = r.tags.as_ref().expect("a tag summary");
    eprintln!("{name}: {}", summary.describe());
    let mut seen_in_samples = 0;
    for s in r.statements.iter().filter(|s| s.calls_per_request >= 1.0) {
        let tags = s
            .tags
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: untagged {}", s.query));
        assert_eq!(tags.seen.len(), 1, "{name}: one call site each: {tags:?}");
        let first = tags.first().unwrap();
        assert_eq!(first.route.as_deref(), Some(api::ROUTE), "{name}");
        assert_eq!(
            first.file.as_deref(),
            Some("src/commands/demo/api.rs"),
            "{name}"
        );
        let line = first.line.expect("a line") as usize;
        let text = source.lines().nth(line - 1).unwrap();
        let (constant, _) = (sent.iter())
            .find(|(_, sql)| fold(sql) == fold(&s.query))
            .unwrap_or_else(|| panic!("{name}: not a demo statement: {}", s.query));
        assert!(
            text.contains("query!(") && text.contains(&format!("{constant},")),
            "{name}: line {line} sends {constant}: {text}"
        );
        eprintln!("{name}: {constant} at line {line}, {}", tags.describe());
        seen_in_samples += usize::from(tags.seen[0].share.is_some());
    }
    every_finding_points_at_its_tagged_line(name, r);
    assert_eq!(summary.tagged, summary.statements, "{name}: {summary:?}");
    assert!(summary.samples.unwrap_or(0) > 0, "{name}: {summary:?}");
    assert!(seen_in_samples > 0, "{name}: no statement seen in a sample");
}

/// Every finding about a statement carries the statement's tags, and its first place to
/// open is the line those tags name, the route beside it.
fn every_finding_points_at_its_tagged_line(name: &str, r: &pgcost_core::report::Report) {
    use pgcost_core::source::Origin;
    for f in r.findings.iter().filter(|f| f.query.is_some()) {
        let s = (r.statements.iter())
            .find(|s| f.query.as_ref() == Some(&s.query))
            .unwrap_or_else(|| panic!("{name}: {f:?}"));
        assert_eq!(f.tags, s.tags, "{name}: {}", f.kind);
        let tags = s.tags.as_ref().and_then(|t| t.first()).expect("tagged");
        let at = f.locations.first().expect("a tagged location");
        let route = pgcost::commands::demo::api::ROUTE;
        assert!(
            matches!(&at.origin, Origin::Tag { route: Some(r), share: Some(_), .. } if r == route),
            "{name}: {at:?}"
        );
        assert_eq!(tags.location(), Some(at.at()), "{name}: {}", f.kind);
        eprintln!("{name}: {} at {}", f.kind, at.line_text());
    }
}

fn cluster_dir_of(line: &str) -> Option<String> {
    line.strip_prefix("cluster: ").map(|d| d.trim().to_string())
}

fn server_running_in(dir: &str) -> bool {
    let out = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.contains(dir))
}

fn wait_gone(dir: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while (std::path::Path::new(dir).exists() || server_running_in(dir))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!std::path::Path::new(dir).exists(), "{dir} was left behind");
    assert!(!server_running_in(dir), "a server still runs in {dir}");
}

#[test]
fn serve_mode_cleans_up_after_sigint() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args(["demo", "--serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut dir = None;
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(d) = cluster_dir_of(&line) {
            dir = Some(d);
            break;
        }
    }
    let dir = dir.expect("the demo names its cluster directory");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        let done = line.contains("Ctrl-C");
        printed.push(line);
        if done {
            break;
        }
    }
    let printed = printed.join("\n");
    assert!(printed.contains("database  postgres://"), "{printed}");
    assert!(printed.contains("/cached/api/v1/projects"), "{printed}");
    assert!(printed.contains("pgcost audit --db"), "{printed}");
    assert!(std::path::Path::new(&dir).exists());
    assert!(server_running_in(&dir));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    wait_gone(&dir);
}

#[test]
fn interrupted_demo_run_cleans_up() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args(["demo", "-n", "20", "-c", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut dir = None;
    for line in stderr.by_ref() {
        let line = line.unwrap();
        if let Some(d) = cluster_dir_of(&line) {
            dir = Some(d);
        }
        // Interrupt in the middle of the first audit.
        if line.starts_with("auditing the naive pipeline") {
            break;
        }
    }
    let drain = std::thread::spawn(move || stderr.map_while(Result::ok).collect::<Vec<_>>());
    let dir = dir.expect("the demo names its cluster directory");
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let rest = drain.join().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    wait_gone(&dir);
}

#[test]
fn quiet_demo_prints_its_report_and_nothing_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("demo.md");
    let output = Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args([
            "demo", "-q", "-n", "20", "-c", "2", "--format", "markdown", "-o",
        ])
        .arg(&report)
        .arg("--export")
        .arg(format!("json={}", dir.path().join("demo.json").display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr, "",
        "-q: no cluster line, no progress, no verdict line"
    );
    let json = std::fs::read_to_string(dir.path().join("demo.json")).unwrap();
    support::assert_schema("demo", &json);
    assert!(output.stdout.is_empty());
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.starts_with("### ✅ pgcost demo:"), "{text}");
    assert!(text.contains("| rows read / request"), "{text}");
}
