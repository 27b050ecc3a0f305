//! Tags from a real Django app: the library site of tests/fixtures/django_tags (Django 5.2,
//! psycopg2, google-cloud-sqlcommenter's middleware), migrated with `manage.py migrate` and
//! served by gunicorn (sync workers, one persistent connection each), all started here.
//! Its page `shelves/<int:shelf_id>/books/` lists a shelf's books, then reads each book's
//! author on its own (an N+1 through Django's ORM). `pgcost audit` of that page must be
//! exact against what the view does with the rows seeded here, and its N+1 statements
//! must carry the route and the view that sqlcommenter appended to them.
//!
//! The Python packages come from `.ci/run`'s install step; without them the test fails,
//! saying so.

mod support;

use std::time::Instant;

use nix::sys::signal::killpg;
use serde_json::Value;
use support::django::{Gunicorn, Site, require_packages};
use support::{TestDb, pgcost};

/// The Django project, and the database it uses on the test's cluster.
const SITE: Site = Site {
    dir: "tests/fixtures/django_tags",
    settings: "library_site.settings",
    wsgi: "library_site.wsgi:application",
    database: "library",
};
/// Authors seeded: enough pages that a lookup by primary key is an index scan.
const AUTHORS: i64 = 1000;
/// Books seeded, book g on shelf `g % 3 + 1`: shelf 2 holds books 1, 4, ..., 58.
const BOOKS: i64 = 60;
/// The shelf measured, and its books: each is one author lookup of the N+1.
const SHELF: i64 = 2;
const SHELF_BOOKS: i64 = 20;
/// The route and the view as Django resolves the page: sqlcommenter sends them
/// URL-encoded (`shelves/%3Cint%3Ashelf_id%3E/books/`).
const ROUTE: &str = "shelves/<int:shelf_id>/books/";
const VIEW: &str = "library.views.shelf_books";

/// Imports what the site needs, and prints Django's version.
const IMPORTS: &str = "import django, psycopg2, gunicorn
import google.cloud.sqlcommenter.django.middleware
print(django.get_version())";

/// The Django version, once the site's packages import; a loud failure otherwise.
fn django_version() -> String {
    require_packages(
        IMPORTS,
        "Django, psycopg2, gunicorn and google-cloud-sqlcommenter",
        "Django==5.2.19 psycopg2-binary==2.9.13 gunicorn==23.0.0 \
         google-cloud-sqlcommenter==2.0.0",
    )
}

/// Creates the `library` database, Django's tables (`manage.py migrate`) and the rows.
async fn seed(db: &TestDb) {
    let library = SITE.create_database(db).await;
    library
        .batch_execute(&format!(
            "INSERT INTO library_author (id, name)
               SELECT g, 'author ' || g FROM generate_series(1, {AUTHORS}) g;
             INSERT INTO library_book (title, shelf, author_id)
               SELECT 'book ' || g, g % 3 + 1, (g * 37) % {AUTHORS} + 1
               FROM generate_series(1, {BOOKS}) g;"
        ))
        .await
        .unwrap();
    library.batch_execute("VACUUM ANALYZE").await.unwrap();
    let on_shelf: i64 = (library.query_one(
        "SELECT count(*) FROM library_book WHERE shelf = $1",
        &[&(SHELF as i32)],
    ))
    .await
    .unwrap()
    .get(0);
    assert_eq!(on_shelf, SHELF_BOOKS);
}

/// The truth, from what the view does: one query for the shelf's books, then one lookup
/// per book of its author, each in its own transaction (Django's autocommit).
const STATEMENTS: f64 = 1.0 + SHELF_BOOKS as f64;
/// The shelf's books, then one author per lookup.
const ROWS_RETURNED: f64 = 2.0 * SHELF_BOOKS as f64;
/// `shelf` has no index, so the page reads every book (sequentially, or every entry of
/// the primary key); each lookup reads one entry of the authors' primary key.
const ROWS_READ: f64 = (BOOKS + SHELF_BOOKS) as f64;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_django_n_plus_one_carries_its_route_and_view() {
    let started = Instant::now();
    let django = django_version();
    let db = TestDb::start().await;
    seed(&db).await;
    let dir = tempfile::tempdir().unwrap();
    let path = format!("/shelves/{SHELF}/books/");
    let log = dir.path().join("gunicorn.log");
    let server = Gunicorn::start(&SITE, &db, log, &path, &[]).await;
    let page = server.url(&path);
    // The view's own answer: the shelf's books, each with its author.
    let body: Value = reqwest::get(&page).await.unwrap().json().await.unwrap();
    let books = body["books"].as_array().unwrap();
    assert_eq!(books.len() as i64, SHELF_BOOKS, "{body}");
    assert!(books.iter().all(|b| b["author"].is_string()), "{body}");

    let json_file = dir.path().join("report.json");
    let mut audit = pgcost();
    audit
        .args(["audit", "-q", "-n", "60", "-c", "4", "--no-plans"])
        .args(["--url", &page, "--db", &db.cluster.url(SITE.database)])
        .arg("--export")
        .arg(format!("json={}", json_file.display()));
    let table = support::run_blocking(audit)
        .code(0)
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(table).unwrap();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(report["valid"], true, "{report:#}");

    let figures = exact_figures(&report);
    let framework = format!("django:{django}");
    tagged_n_plus_one(&report, &framework);
    assert!(
        table.contains(&format!(
            "sent by route {ROUTE} (controller {VIEW}), 100% of"
        )),
        "{table}"
    );
    assert!(table.contains("tags: 2 of 2 statements tagged"), "{table}");

    let group = server.group;
    drop(server);
    assert!(
        killpg(group, None).is_err(),
        "gunicorn's processes are gone"
    );
    eprintln!(
        "Django {django}: {figures}; tags route {ROUTE}, controller {VIEW}, framework \
         {framework}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The per-request figures and the two statements, exact; returns them in one line.
fn exact_figures(report: &Value) -> String {
    let per = &report["per_request"];
    assert_eq!(per["statements"], STATEMENTS, "{per:#}");
    assert_eq!(per["transactions"], STATEMENTS, "{per:#}");
    assert_eq!(per["rows_returned"], ROWS_RETURNED, "{per:#}");
    assert_eq!(per["rows_read"], ROWS_READ, "{per:#}");
    assert_eq!(
        per["new_sessions"], 0.0,
        "one connection per worker: {per:#}"
    );
    let statements = report["statements"].as_array().unwrap();
    assert_eq!(statements.len(), 2, "{statements:#?}");
    let lookup = statement(report, "FROM \"library_author\"");
    assert_eq!(lookup["calls_per_request"], SHELF_BOOKS as f64);
    assert_eq!(lookup["rows_per_call"], 1.0);
    let list = statement(report, "FROM \"library_book\"");
    assert_eq!(list["calls_per_request"], 1.0);
    assert_eq!(list["rows_per_call"], SHELF_BOOKS as f64);
    format!(
        "{} statements, {} transactions, {} rows returned, {} rows read per request",
        per["statements"], per["transactions"], per["rows_returned"], per["rows_read"]
    )
}

/// The report's statement whose text contains `needle`.
fn statement<'a>(report: &'a Value, needle: &str) -> &'a Value {
    (report["statements"].as_array().unwrap().iter())
        .find(|s| s["query"].as_str().unwrap().contains(needle))
        .unwrap_or_else(|| panic!("no statement with {needle}: {report:#}"))
}

/// The N+1's statement and finding carry the one tag set sqlcommenter sent, seen in the
/// samples of pg_stat_activity; the page's statement carries the same route and view.
fn tagged_n_plus_one(report: &Value, framework: &str) {
    let findings = report["findings"].as_array().unwrap();
    let finding = (findings.iter())
        .find(|f| f["kind"] == "n_plus_one")
        .unwrap_or_else(|| panic!("the N+1 is found: {findings:#?}"));
    assert!(
        finding["query"]
            .as_str()
            .unwrap()
            .contains("library_author"),
        "{finding:#}"
    );
    assert_eq!(finding["evidence"]["calls_per_request"], SHELF_BOOKS as f64);
    let lookup = statement(report, "FROM \"library_author\"");
    // The comment as sqlcommenter sent it, kept in pg_stat_statements' text: URL-encoded,
    // with a key pgcost does not keep.
    let sent = lookup["query"].as_str().unwrap();
    assert!(
        sent.contains("db_driver='django.db.backends.postgresql'")
            && sent.contains("route='shelves/%3Cint%3Ashelf_id%3E/books/'"),
        "{sent}"
    );
    let tags = &lookup["tags"];
    assert_eq!(
        finding["tags"], *tags,
        "the finding has its statement's tags"
    );
    let samples = tags["samples"].as_u64().unwrap();
    assert!(samples > 0, "seen in pg_stat_activity: {tags:#}");
    assert_eq!(
        tags["seen"],
        serde_json::json!([{
            "route": ROUTE,
            "controller": VIEW,
            "framework": framework,
            "samples": samples,
            "share": 1.0,
        }]),
        "one tag set, db_driver left out"
    );
    // sqlcommenter's Django middleware names no file:line: no place to open.
    assert!(finding.get("locations").is_none(), "{finding:#}");
    let list = &statement(report, "FROM \"library_book\"")["tags"]["seen"][0];
    assert_eq!(
        (&list["route"], &list["controller"]),
        (&ROUTE.into(), &VIEW.into())
    );
    assert_eq!(report["tags"]["tagged"], 2, "{:#}", report["tags"]);
}
