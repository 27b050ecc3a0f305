//! The binary and secrets: no secret given to pgcost, in any option, appears in any
//! output format or error message; tokens that would expire mid-run are refused.

mod support;

use support::pgcost;

use assert_cmd::Command;
use predicates::prelude::*;
use support::TestDb;
use support::fixture::{Fixture, issue_token, secrets};

const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/keys");

/// Runs the binary off the async runtime, which the fixture app needs to keep serving.
fn run_blocking(mut cmd: Command) -> std::process::Output {
    std::thread::spawn(move || cmd.output().unwrap())
        .join()
        .unwrap()
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A token signed with the fixture's secret that expires `exp_offset` seconds from now.
fn token_expiring_in(exp_offset: i64) -> String {
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let claims = serde_json::json!({ "sub": "x", "iat": now, "exp": now + exp_offset });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secrets::JWT_SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

fn assert_clean(what: &str, output: &std::process::Output, extra: &str, secrets: &[&str]) {
    let text = format!(
        "{}\n{}\n{extra}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{what}: output holds {secret:?}:\n{text}"
        );
    }
    assert!(!text.contains("panicked"), "{what}:\n{text}");
}

/// What is being checked, the endpoint, the flags, the environment, and the secrets that
/// must not appear.
type Case<'a> = (
    &'a str,
    &'a str,
    Vec<&'a str>,
    Vec<(&'a str, &'a str)>,
    Vec<&'a str>,
);

/// Every secret-bearing option, in every format. The bursts skip settling
/// (`--settle-timeout 0`) to stay short, so the reports are invalid (exit 3) for that
/// reason only; the 200s show that the credential worked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_any_output() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let dir = tempfile::tempdir().unwrap();
    let token = issue_token("carol", 3600);
    let token_file = write(&dir, "token", &token);
    let secret_file = write(&dir, "jwt-secret", secrets::JWT_SECRET);
    let env_file = write(
        &dir,
        ".env",
        &format!(
            "export JWT_SECRET=\"{}\"\nJWT_ISSUER={}\nJWT_AUDIENCE='{}'\n",
            secrets::JWT_SECRET,
            secrets::JWT_ISSUER,
            secrets::JWT_AUDIENCE
        ),
    );
    let rsa_key = format!("{KEYS}/rsa-private.pem");
    let rsa_line = std::fs::read_to_string(&rsa_key)
        .unwrap()
        .lines()
        .nth(2)
        .unwrap()
        .to_string();
    let cookie = format!("{}={}", secrets::COOKIE_NAME, secrets::COOKIE_VALUE);
    let api_key = format!("X-Api-Key: {}", secrets::API_KEY);
    let login_body = format!(
        r#"{{"user":"{}","password":"{}"}}"#,
        secrets::LOGIN_USER,
        secrets::LOGIN_PASSWORD
    );
    let db_password = "db-password-5150";
    let port = db
        .url()
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let db_with_password = format!("postgres://postgres:{db_password}@127.0.0.1:{port}/app");
    let basic_encoded = "YWxpY2U6Zml4dHVyZS1iYXNpYy1wdy05M2I3YzE=";
    let iss_aud = [
        "--jwt-iss",
        secrets::JWT_ISSUER,
        "--jwt-aud",
        secrets::JWT_AUDIENCE,
    ];

    let cases: Vec<Case> = vec![
        (
            "--bearer",
            "/auth/hs256",
            vec!["--bearer", &token],
            vec![],
            vec![&token],
        ),
        (
            "--bearer-file",
            "/auth/hs256",
            vec!["--bearer-file", &token_file],
            vec![],
            vec![&token],
        ),
        (
            "PGCOST_BEARER",
            "/auth/hs256",
            vec![],
            vec![("PGCOST_BEARER", &token)],
            vec![&token],
        ),
        (
            "--cookie",
            "/auth/cookie",
            vec!["--cookie", &cookie],
            vec![],
            vec![secrets::COOKIE_VALUE],
        ),
        (
            "--basic",
            "/auth/basic",
            vec!["--basic", secrets::BASIC_USER],
            vec![("PGCOST_BASIC_PASSWORD", secrets::BASIC_PASSWORD)],
            vec![secrets::BASIC_PASSWORD, basic_encoded],
        ),
        (
            "-H X-Api-Key",
            "/auth/api-key",
            vec!["-H", &api_key],
            vec![],
            vec![secrets::API_KEY],
        ),
        (
            "--jwt-secret-env",
            "/auth/hs256",
            [&["--jwt-secret-env", "APP_SECRET"][..], &iss_aud].concat(),
            vec![("APP_SECRET", secrets::JWT_SECRET)],
            vec![secrets::JWT_SECRET],
        ),
        (
            "--jwt-secret-file",
            "/auth/hs256",
            [&["--jwt-secret-file", &secret_file][..], &iss_aud].concat(),
            vec![],
            vec![secrets::JWT_SECRET],
        ),
        (
            "--jwt-key-file",
            "/auth/rs256",
            vec!["--jwt-key-file", &rsa_key],
            vec![],
            vec![&rsa_line],
        ),
        (
            "--env-file",
            "/auth/hs256",
            vec!["--env-file", &env_file],
            vec![],
            vec![secrets::JWT_SECRET],
        ),
        (
            "--login-body",
            "/auth/hs256",
            vec![
                "--login-url",
                "LOGIN",
                "--login-body",
                &login_body,
                "--login-token-pointer",
                "/user/token",
            ],
            vec![],
            vec![secrets::LOGIN_PASSWORD],
        ),
        (
            "--db password",
            "/auth/hs256",
            vec!["--db", &db_with_password, "--bearer-file", &token_file],
            vec![],
            vec![db_password, &token],
        ),
    ];
    let login_url = app.url("/auth/login-json");
    let out_file = dir.path().join("report.out");
    for (what, path, flags, env, case_secrets) in &cases {
        for format in ["table", "json", "markdown"] {
            let mut cmd = pgcost();
            cmd.args(["audit", "--url", &app.url(path), "--format", format]);
            cmd.args([
                "-n",
                "4",
                "-c",
                "2",
                "--warmup",
                "2",
                "--settle-timeout",
                "0",
            ]);
            if !flags.contains(&"--db") {
                cmd.args(["--db", &db.url()]);
            }
            for flag in flags {
                cmd.arg(if *flag == "LOGIN" {
                    login_url.as_str()
                } else {
                    flag
                });
            }
            // JSON goes to a file, so that written reports are checked too.
            if format == "json" {
                cmd.arg("-o").arg(&out_file);
            }
            cmd.envs(env.iter().copied());
            let output = run_blocking(cmd);
            let written = if format == "json" {
                std::fs::read_to_string(&out_file).unwrap()
            } else {
                String::new()
            };
            let case = format!("{what} as {format}");
            let shown = format!("{}{written}", String::from_utf8_lossy(&output.stdout));
            assert_eq!(
                output.status.code(),
                Some(3),
                "{case}: {}{}",
                shown,
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                shown.contains("200×4") || shown.contains("\"200\": 4"),
                "{case}: {shown}"
            );
            let mut all: Vec<&str> = case_secrets.clone();
            all.push("eyJ");
            assert_clean(&case, &output, &written, &all);
        }
    }

    // Error paths: the message says what failed, never with the secret.
    let mut cmd = pgcost();
    cmd.args(["audit", "--url", &app.url("/auth/hs256"), "--db", &db.url()]);
    cmd.args([
        "--login-url",
        &login_url,
        "--login-token-pointer",
        "/user/token",
    ]);
    cmd.args([
        "--login-body",
        r#"{"user":"bob","password":"wrong-password-8812"}"#,
    ]);
    let output = run_blocking(cmd);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("failed: HTTP 401 Unauthorized; response body: {"),
        "{stderr}"
    );
    assert_clean(
        "failing login",
        &output,
        "",
        &["wrong-password-8812", "eyJ"],
    );

    let closed = support::closed_port();
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        &app.url("/auth/hs256"),
        "--bearer",
        &token,
    ]);
    cmd.arg("--db").arg(format!(
        "postgres://app:{db_password}@127.0.0.1:{closed}/shop"
    ));
    let output = run_blocking(cmd);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("cannot connect to postgres://app@127.0.0.1")
    );
    assert_clean("unreachable database", &output, "", &[db_password, &token]);

    let broken_env = write(
        &dir,
        "broken.env",
        &format!("JWT_SECRET='{}\n", secrets::JWT_SECRET),
    );
    let not_a_key = write(&dir, "not-a-key.pem", secrets::JWT_SECRET);
    for (what, flags) in [
        ("broken --env-file", vec!["--env-file", &broken_env]),
        (
            "--jwt-key-file that is no key",
            vec!["--jwt-key-file", &not_a_key],
        ),
        (
            "--cookie with a space",
            vec!["--cookie", "session=fixture cookie-value-2c8e4d"],
        ),
        (
            "--login-body that is no JSON",
            vec![
                "--login-url",
                &login_url,
                "--login-body",
                "password=fixture-login-pw-61fa0d",
            ],
        ),
    ] {
        let mut cmd = pgcost();
        cmd.args(["audit", "--url", &app.url("/auth/hs256"), "--db", &db.url()]);
        cmd.args(&flags);
        let output = run_blocking(cmd);
        assert_eq!(output.status.code(), Some(2), "{what}");
        assert_clean(
            what,
            &output,
            "",
            &[
                secrets::JWT_SECRET,
                "cookie-value-2c8e4d",
                secrets::LOGIN_PASSWORD,
            ],
        );
    }
}

/// A bearer token that would expire before the run ends is refused before anything is
/// measured, with its expiry in UTC and in how long; no database is needed to say so.
#[test]
fn tokens_expiring_mid_run_are_refused() {
    let base = [
        "audit",
        "--url",
        "http://127.0.0.1:9/x",
        "--db",
        "postgres://u@127.0.0.1:9/d",
    ];
    // Minted 60 s before its expiry; a loaded machine may take seconds to start pgcost.
    let soon = token_expiring_in(60);
    pgcost()
        .args(base)
        .args(["--bearer", &soon])
        .assert()
        .code(2)
        .stderr(predicate::str::is_match(
            r"error: the bearer token expires at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (5\ds|1m)\), before this run is likely to end \(up to .* from now\)",
        ).unwrap())
        .stderr(predicate::str::contains("hint: use a token that outlives the run"))
        .stderr(predicate::str::contains(soon.as_str()).not());

    let expired = token_expiring_in(-3600);
    pgcost()
        .args(base)
        .env("PGCOST_BEARER", &expired)
        .assert()
        .code(2)
        .stderr(
            predicate::str::is_match(r"the bearer token expired at .* UTC \(1h( \d+s)? ago\)")
                .unwrap(),
        )
        .stderr(predicate::str::contains(expired.as_str()).not());

    pgcost()
        .args(base)
        .args(["--jwt-secret-env", "APP_SECRET", "--jwt-ttl", "30s"])
        .env("APP_SECRET", secrets::JWT_SECRET)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the bearer token expires at"))
        .stderr(predicate::str::contains(secrets::JWT_SECRET).not());

    // A long-lived token passes the guard and fails later, at the unreachable database.
    pgcost()
        .args(base)
        .args(["--bearer", &token_expiring_in(7200)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot connect"));
}

#[test]
fn basic_without_a_password_or_a_terminal_is_a_usage_error() {
    pgcost()
        .args([
            "audit",
            "--url",
            "http://127.0.0.1:9/x",
            "--db",
            "postgres://u@127.0.0.1:9/d",
        ])
        .args(["--basic", "alice"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "PGCOST_BASIC_PASSWORD is not set and there is no terminal",
        ));
}
