//! Authenticated bursts against the fixture app: every credential path reaches the
//! endpoint, a failing login stops the run with the reason and without the secrets, and
//! the unauthenticated baseline shows what everything after authentication costs.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use pgcost::config::AuditConfig;
use pgcost::error::Result;
use pgcost::flags::{Cli, Command};
use pgcost::progress::Progress;
use pgcost::render::View;
use pgcost::render::format::Format;
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::{Fixture, issue_token, secrets};
use support::{SMALL, TestDb};

const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/keys");

/// Runs the whole audit command in-process, as `pgcost audit` does after parsing.
async fn measure(
    db_url: &str,
    url: String,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Report> {
    let mut argv = vec!["pgcost", "audit", "--url", &url, "--db", db_url, "--quiet"];
    argv.extend(extra);
    let Command::Audit(args) = <Cli as clap::Parser>::parse_from(argv).command else {
        unreachable!("argv starts with audit")
    };
    let vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| vars.get(name).cloned();
    let config = AuditConfig::from_args_with_prompt(&args, &lookup, &|_| None)?;
    pgcost::measure::measure(
        &config,
        &Progress::hidden(),
        Arc::new(AtomicBool::new(false)),
    )
    .await
}

/// Every rendering of the report, none of which may hold a secret (HTML neither as is nor
/// escaped).
fn assert_no_secret_rendered(report: &Report, secrets: &[&str]) {
    for format in [Format::Table, Format::Json, Format::Markdown, Format::Html] {
        let text = View::render(report, format).unwrap();
        for secret in secrets {
            let escaped = secret
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;");
            assert!(
                !text.contains(secret) && !text.contains(&escaped),
                "{format:?} output holds {secret:?}:\n{text}"
            );
        }
    }
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Each way of authenticating, sent at an endpoint that accepts only that credential.
/// These bursts skip settling (`--settle-timeout 0`), so the report is invalid for that
/// reason alone; but the statuses are the app's own verdict, and pg_stat_statements counts
/// the endpoint's one query at once, without settling. The full, valid audit of an
/// authenticated burst is in `the_baseline_shows_what_authentication_lets_through`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_credential_path_reaches_the_endpoint() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let dir = tempfile::tempdir().unwrap();
    let token = issue_token("carol", 3600);
    let token_file = write(&dir, "token", &format!("{token}\n"));
    let secret_file = write(&dir, "jwt-secret", &format!("{}\n", secrets::JWT_SECRET));
    let env_file = write(
        &dir,
        ".env",
        &format!(
            "# as the app reads it\nexport APP_JWT_SECRET='{}'\nJWT_ISSUER=\"{}\"\nJWT_AUDIENCE={} # api\n",
            secrets::JWT_SECRET,
            secrets::JWT_ISSUER,
            secrets::JWT_AUDIENCE
        ),
    );
    let rsa_key = format!("{KEYS}/rsa-private.pem");
    let basic_header = "YWxpY2U6Zml4dHVyZS1iYXNpYy1wdy05M2I3YzE="; // alice:fixture-basic-pw-93b7c1
    let login_body = format!(
        r#"{{"user":"{}","password":"{}"}}"#,
        secrets::LOGIN_USER,
        secrets::LOGIN_PASSWORD
    );
    let login_json = app.url("/auth/login-json");
    let login_cookie = app.url("/auth/login-cookie");
    let api_key_header = format!("X-Api-Key: {}", secrets::API_KEY);
    let cookie = format!("{}={}", secrets::COOKIE_NAME, secrets::COOKIE_VALUE);

    struct Case<'a> {
        path: &'a str,
        flags: Vec<&'a str>,
        env: Vec<(&'a str, &'a str)>,
        described: &'a str,
        secrets: Vec<&'a str>,
    }
    let jwt_flags = [
        "--jwt-iss",
        secrets::JWT_ISSUER,
        "--jwt-aud",
        secrets::JWT_AUDIENCE,
    ];
    let cases = vec![
        Case {
            path: "/auth/hs256",
            flags: vec!["--bearer", &token],
            env: vec![],
            described: "Authorization: Bearer (--bearer)",
            secrets: vec![&token],
        },
        Case {
            path: "/auth/hs256",
            flags: vec!["--bearer-file", &token_file],
            env: vec![],
            described: "Authorization: Bearer (--bearer-file",
            secrets: vec![&token],
        },
        Case {
            path: "/auth/hs256",
            flags: vec![],
            env: vec![("PGCOST_BEARER", &token)],
            described: "Authorization: Bearer (PGCOST_BEARER)",
            secrets: vec![&token],
        },
        Case {
            path: "/auth/hs256",
            flags: [
                &["--jwt-secret-env", "APP_SECRET", "--jwt-sub", "7"][..],
                &jwt_flags,
            ]
            .concat(),
            env: vec![("APP_SECRET", secrets::JWT_SECRET)],
            described: "Authorization: Bearer (minted HS256 JWT)",
            secrets: vec![secrets::JWT_SECRET],
        },
        Case {
            path: "/auth/hs256",
            flags: [
                &["--jwt-secret-file", &secret_file, "--jwt-alg", "HS256"][..],
                &jwt_flags,
            ]
            .concat(),
            env: vec![],
            described: "Authorization: Bearer (minted HS256 JWT)",
            secrets: vec![secrets::JWT_SECRET],
        },
        Case {
            path: "/auth/hs256",
            flags: vec![
                "--env-file",
                &env_file,
                "--env-secret-var",
                "APP_JWT_SECRET",
            ],
            env: vec![],
            described: "Authorization: Bearer (minted HS256 JWT)",
            secrets: vec![secrets::JWT_SECRET],
        },
        Case {
            path: "/auth/rs256",
            flags: vec!["--jwt-key-file", &rsa_key, "--jwt-sub", "7"],
            env: vec![],
            described: "Authorization: Bearer (minted RS256 JWT)",
            secrets: vec!["MII"],
        },
        Case {
            path: "/auth/cookie",
            flags: vec!["--cookie", &cookie],
            env: vec![],
            described: "Cookie: session (--cookie)",
            secrets: vec![secrets::COOKIE_VALUE],
        },
        Case {
            path: "/auth/basic",
            flags: vec!["--basic", secrets::BASIC_USER],
            env: vec![("PGCOST_BASIC_PASSWORD", secrets::BASIC_PASSWORD)],
            described: "Authorization: Basic (user alice)",
            secrets: vec![secrets::BASIC_PASSWORD, basic_header],
        },
        Case {
            path: "/auth/api-key",
            flags: vec!["-H", &api_key_header],
            env: vec![],
            described: "x-api-key (-H)",
            secrets: vec![secrets::API_KEY],
        },
        Case {
            path: "/auth/hs256",
            flags: vec![
                "--login-url",
                &login_json,
                "--login-body",
                &login_body,
                "--login-token-pointer",
                "/user/token",
            ],
            env: vec![],
            described: "Authorization: Bearer (login at",
            secrets: vec![secrets::LOGIN_PASSWORD, "eyJ"],
        },
        Case {
            path: "/auth/session",
            flags: vec!["--login-url", &login_cookie, "--login-body", &login_body],
            env: vec![],
            described: "Cookie: sid, theme (set by the login at",
            secrets: vec![secrets::LOGIN_PASSWORD, "eyJ"],
        },
    ];

    let quick = [
        "-n",
        "20",
        "-c",
        "2",
        "--warmup",
        "4",
        "--settle-timeout",
        "0",
    ];
    for case in &cases {
        let flags = [&quick[..], &case.flags].concat();
        let report = measure(&db.url(), app.url(case.path), &flags, &case.env)
            .await
            .unwrap_or_else(|e| panic!("{}: {} ({:?})", case.described, e.message, e.hint));
        let what = format!("{} at {}", case.described, case.path);
        assert_eq!(
            report.load.status.get("200"),
            Some(&20),
            "{what}: {:?}",
            report.load
        );
        assert!(
            report
                .invalid_reasons
                .iter()
                .all(|r| r.code == support::Code::SettleTimeout),
            "{what}: {:?}",
            report.invalid_reasons
        );
        assert_eq!(report.per_request.statements, Some(1.0), "{what}");
        assert_eq!(
            report.per_request.rows_returned,
            Some(SMALL as f64),
            "{what}"
        );
        assert!(
            report
                .target
                .credentials
                .iter()
                .any(|c| c.starts_with(case.described)),
            "{what}: {:?}",
            report.target.credentials
        );
        assert_no_secret_rendered(&report, &case.secrets);
    }

    // The same endpoints without their credential reject every request, before any query:
    // a warm-up rejected whole ends the run at once (exit 3), before any settle wait.
    let err = measure(&db.url(), app.url("/auth/api-key"), &quick, &[])
        .await
        .unwrap_err();
    assert_eq!(err.exit_code(), pgcost::error::exit::INVALID);
    assert!(
        err.message
            .contains("every warm-up response to GET http://127.0.0.1:")
            // The warm-up floor goes out in two halves: the first, rejected whole, ends it.
            && err.message.contains("was rejected (401 x2)"),
        "{}",
        err.message
    );
    // Without a warm-up, the burst itself is rejected, and the report says so.
    let no_warmup = [&quick[..4], &["--warmup", "0"], &quick[6..]].concat();
    let report = measure(&db.url(), app.url("/auth/api-key"), &no_warmup, &[])
        .await
        .unwrap();
    assert_eq!(report.load.status.get("401"), Some(&20));
    assert_eq!(report.per_request.statements, Some(0.0));
    assert_eq!(
        report.invalid_reasons[0].code,
        support::Code::Rejected,
        "{:?}",
        report.invalid_reasons
    );
    assert!(
        report.invalid_reasons[0]
            .message
            .contains("measure the rejection path")
    );
}

/// A login that fails stops everything before the database is touched: the error names
/// the status and quotes the body, without the password it echoes or its token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_login_names_the_status_and_hides_the_secrets() {
    // Nothing listens at this database: the login must fail first.
    let db_url = "postgres://app:db-password-4411@127.0.0.1:9/app";
    let app = Fixture::start(db_url, 1).await;
    let body = r#"{"user":"bob","password":"wrong-password-8812"}"#;
    let err = measure(
        db_url,
        app.url("/auth/hs256"),
        &[
            "--login-url",
            &app.url("/auth/login-json"),
            "--login-body",
            body,
            "--login-token-pointer",
            "/user/token",
        ],
        &[],
    )
    .await
    .unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.message.contains("failed: HTTP 401 Unauthorized"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("invalid credentials for bob"),
        "{}",
        err.message
    );
    for secret in ["wrong-password-8812", "eyJ", "db-password-4411"] {
        assert!(!err.message.contains(secret), "{secret} in {}", err.message);
    }

    let err = measure(
        db_url,
        app.url("/auth/hs256"),
        &[
            "--login-url",
            &app.url("/auth/login-json"),
            "--login-body",
            &format!(
                r#"{{"user":"{}","password":"{}"}}"#,
                secrets::LOGIN_USER,
                secrets::LOGIN_PASSWORD
            ),
            "--login-token-pointer",
            "/token",
        ],
        &[],
    )
    .await
    .unwrap_err();
    assert!(err.message.contains("nothing at /token"), "{}", err.message);
    assert_eq!(err.hint.as_deref(), Some("its top-level keys are: user"));
}

/// The same burst without credentials first: the app rejects it before any query, so the
/// difference is the endpoint's own query. Full audits, settled, valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baseline_shows_what_authentication_lets_through() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    // 400 s outlives this run but not its generous estimate plus five minutes: a warning.
    let report = measure(
        &db.url(),
        app.url("/auth/hs256"),
        &[
            "-n",
            "20",
            "-c",
            "2",
            "--warmup",
            "4",
            "--jwt-secret-env",
            "APP_SECRET",
            "--jwt-ttl",
            "400s",
            "--jwt-iss",
            secrets::JWT_ISSUER,
            "--jwt-aud",
            secrets::JWT_AUDIENCE,
            "--compare-unauthenticated",
        ],
        &[("APP_SECRET", secrets::JWT_SECRET)],
    )
    .await
    .unwrap_or_else(|e| panic!("{} ({:?})", e.message, e.hint));
    assert!(report.valid, "{:?}", report.invalid_reasons);
    assert_eq!(report.load.status.get("200"), Some(&20));
    let baseline = report.baseline.as_ref().expect("a baseline");
    assert_eq!(baseline.unauthenticated_status.get("401"), Some(&20));
    let (without, with) = (
        baseline.unauthenticated.per_figure.statements.unwrap(),
        baseline.authenticated.per_figure.statements.unwrap(),
    );
    assert!(
        without < with,
        "pre-auth {without} statements, authenticated {with}"
    );
    assert_eq!((without, with), (0.0, 1.0));
    assert_eq!(
        baseline.after_authentication.per_figure.statements,
        Some(1.0)
    );
    assert_eq!(baseline.unauthenticated.per_figure.transactions, Some(0.0));
    assert_eq!(
        baseline.after_authentication.per_figure.transactions,
        Some(1.0)
    );
    assert_eq!(
        baseline.after_authentication.per_figure.rows_read,
        Some(SMALL as f64)
    );
    assert_eq!(report.per_request.statements, Some(1.0));
    assert!(
        report.notes.iter().map(Note::message).any(|w| w.starts_with("the bearer token expires at") && w.contains("within 5 minutes")),
        "{:?}",
        report.notes
    );
    let table = View::render(&report, Format::Table).unwrap();
    assert!(table.contains("Unauthenticated baseline"), "{table}");
    assert_no_secret_rendered(&report, &[secrets::JWT_SECRET, "eyJ"]);
}
