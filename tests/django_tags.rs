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

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use support::{TestDb, pgcost};

/// The Django project.
const PROJECT: &str = "tests/fixtures/django_tags";
/// The database the site uses, on the test's cluster.
const LIBRARY: &str = "library";
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

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(PROJECT)
}

/// Imports what the site needs, and prints Django's version.
const IMPORTS: &str = "import django, psycopg2, gunicorn
import google.cloud.sqlcommenter.django.middleware
print(django.get_version())";

/// The Django version, once the site's packages import; a loud failure otherwise.
fn django_version() -> String {
    let output = Command::new("python3").args(["-c", IMPORTS]).output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap().trim().into(),
        other => panic!(
            "this test needs Django, psycopg2, gunicorn and google-cloud-sqlcommenter for \
             python3: run the install step of .ci/run (pip3 install Django==5.2.19 \
             psycopg2-binary==2.9.13 gunicorn==23.0.0 google-cloud-sqlcommenter==2.0.0); \
             got {other:?}"
        ),
    }
}

/// `python3 ARGS` in the project, pointed at the `library` database of `db`.
fn python(db: &TestDb) -> Command {
    let mut cmd = Command::new("python3");
    cmd.current_dir(project())
        .env("DJANGO_DB_NAME", LIBRARY)
        .env("DJANGO_DB_USER", "postgres")
        .env("DJANGO_DB_HOST", "127.0.0.1")
        .env("DJANGO_DB_PORT", db.cluster.port.to_string())
        .env("DJANGO_SETTINGS_MODULE", "library_site.settings")
        // No __pycache__ left in the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

/// Creates the `library` database, Django's tables (`manage.py migrate`) and the rows.
async fn seed(db: &TestDb) {
    let admin = db.connect("postgres").await;
    (admin.batch_execute(&format!("CREATE DATABASE {LIBRARY}")))
        .await
        .unwrap();
    let migrate = python(db)
        .args(["manage.py", "migrate", "--verbosity", "0"])
        .output()
        .unwrap();
    assert!(migrate.status.success(), "manage.py migrate: {migrate:?}");
    let library = db.connect(LIBRARY).await;
    library
        .batch_execute(&format!(
            "CREATE EXTENSION pg_stat_statements;
             INSERT INTO library_author (id, name)
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

/// gunicorn serving the site, in a process group of its own: dropping it stops the master
/// and its workers, also when the test panics.
struct Gunicorn {
    child: Child,
    group: Pid,
    port: u16,
    log: PathBuf,
}

impl Gunicorn {
    /// Two sync workers on a free loopback port; returns once the page answers 200.
    async fn start(db: &TestDb, log: PathBuf) -> Gunicorn {
        let port = support::closed_port();
        let child = python(db)
            .args(["-m", "gunicorn", "--workers", "2", "--worker-class", "sync"])
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .arg("library_site.wsgi:application")
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("python3 -m gunicorn starts");
        let group = Pid::from_raw(child.id() as i32);
        let mut server = Gunicorn {
            child,
            group,
            port,
            log,
        };
        server.wait_until_it_answers().await;
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn wait_until_it_answers(&mut self) {
        let started = Instant::now();
        let page = self.url(&format!("/shelves/{SHELF}/books/"));
        loop {
            if let Ok(response) = reqwest::get(&page).await
                && response.status().is_success()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("gunicorn exited ({status}):\n{}", self.log());
            }
            if started.elapsed() > Duration::from_secs(60) {
                panic!("gunicorn did not answer in 60 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether any process of the group is left.
    fn any_left(&self) -> bool {
        killpg(self.group, None).is_ok()
    }
}

impl Drop for Gunicorn {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers, then itself; SIGKILL whatever is left.
        let _ = killpg(self.group, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.any_left() && Instant::now() < deadline {
            let _ = self.child.try_wait();
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = killpg(self.group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
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
    let server = Gunicorn::start(&db, dir.path().join("gunicorn.log")).await;
    let page = server.url(&format!("/shelves/{SHELF}/books/"));
    // The view's own answer: the shelf's books, each with its author.
    let body: Value = reqwest::get(&page).await.unwrap().json().await.unwrap();
    let books = body["books"].as_array().unwrap();
    assert_eq!(books.len() as i64, SHELF_BOOKS, "{body}");
    assert!(books.iter().all(|b| b["author"].is_string()), "{body}");

    let json_file = dir.path().join("report.json");
    let mut audit = pgcost();
    audit
        .args(["audit", "-q", "-n", "60", "-c", "4", "--no-plans"])
        .args(["--url", &page, "--db", &db.cluster.url(LIBRARY)])
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
