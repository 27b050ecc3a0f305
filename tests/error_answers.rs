//! Errors served with status 200: without its credentials, a GraphQL-like endpoint answers
//! 200 with `{"data": null, "errors": [...]}`; measuring it is measuring the error path.
//! The run is refused with exit 3 and says what it saw; a login answered 200 with an error
//! is exit 2; with the credentials the same endpoint is measured and valid.

mod support;

use support::fixture::{Fixture, error_answers};
use support::{TestDb, audit, pgcost, run_blocking};

fn stderr(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_answered_with_200_are_errors() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let db_url = db.url();
    let run = |url: String, extra: &[&str]| {
        let mut cmd = pgcost();
        cmd.args([
            "audit", "--url", &url, "--db", &db_url, "-n", "20", "--warmup", "4",
        ]);
        cmd.args(extra);
        run_blocking(cmd)
    };

    // No credentials: every answer is an error in the body. Refused after the warm-up,
    // before any settle wait, with what was seen.
    let graphql = app.url("/errors/graphql");
    let refused = run(graphql.clone(), &[]);
    let text = stderr(&refused);
    assert_eq!(refused.get_output().status.code(), Some(3), "{text}");
    assert!(text.contains("error answered with a 2xx status"), "{text}");
    assert!(
        text.contains(r#"body "errors": [{"message":"not authenticated"}]"#),
        "{text}"
    );

    // A header the user names marks the error, though the body looks like an answer.
    let header = app.url("/errors/header");
    let refused = run(header.clone(), &["--error-header", "X-App-Error"]);
    let text = stderr(&refused);
    assert_eq!(refused.get_output().status.code(), Some(3), "{text}");
    assert!(
        text.contains("header x-app-error: \"login-required\""),
        "{text}"
    );

    // A login that "succeeds" with 200 and an error body did not log in: exit 2.
    let login = app.url("/errors/login");
    let refused = run(
        graphql.clone(),
        &[
            "--login-url",
            &login,
            "--login-body",
            r#"{"user": "u", "password": "pw-123456"}"#,
            "--login-token-pointer",
            "/token",
        ],
    );
    let text = stderr(&refused);
    assert_eq!(refused.get_output().status.code(), Some(2), "{text}");
    assert!(
        text.contains("answered HTTP 200 OK with an error"),
        "{text}"
    );
    assert!(
        text.contains(r#"body "error": "invalid credentials""#),
        "{text}"
    );
    assert!(!text.contains("pw-123456"), "{text}");

    // With the token: one statement per request, no error answer, valid.
    let bearer = format!("Authorization: Bearer {}", error_answers::TOKEN);
    let r = audit(&db, graphql, &["-n", "40", "-H", &bearer]).await;
    support::assert_valid(&r);
    assert!(
        r.load.error_answers.is_empty(),
        "{:?}",
        r.load.error_answers
    );
    assert_eq!(r.per_request.statements, Some(1.0));
}
