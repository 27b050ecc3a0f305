use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, HeaderName, HeaderValue};

use super::*;
use crate::flags::{AuditArgs, Cli, Command};
use crate::values::parse_header;

fn audit_args(extra: &[&str]) -> AuditArgs {
    let mut argv = vec!["pgcost", "audit", "--url", "http://127.0.0.1:1/x"];
    argv.extend(extra);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Audit(args) => args,
        other => unreachable!("not an audit: {other:?}"),
    }
}

struct Resolved {
    credentials: Credentials,
    redactor: Redactor,
}

fn resolve_with(extra: &[&str], env: &[(&str, &str)], prompt: Option<&str>) -> Result<Resolved> {
    let args = audit_args(extra);
    let mut given = HeaderMap::new();
    for text in &args.load.headers {
        let (name, value) = parse_header(text)?;
        given.append(name, value);
    }
    let vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| vars.get(name).cloned();
    let answer = prompt.map(str::to_string);
    let ask = move |_: &str| answer.clone();
    let redactor = Redactor::default();
    let options = CredentialOptions::from_args(&args)?;
    let credentials = resolve(
        &options,
        &given,
        Duration::from_secs(5),
        &lookup,
        &ask,
        &redactor,
        SystemTime::now(),
    )?;
    Ok(Resolved {
        credentials,
        redactor,
    })
}

fn authorization(r: &Resolved) -> String {
    let value = r
        .credentials
        .headers
        .get(AUTHORIZATION)
        .expect("an Authorization header");
    assert!(value.is_sensitive());
    value.to_str().unwrap().to_string()
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn bearer_from_flag_file_and_variable() {
    let r = resolve_with(
        &["--bearer", "tok-flag-123"],
        &[(BEARER_VAR, "tok-env-123")],
        None,
    )
    .unwrap();
    assert_eq!(authorization(&r), "Bearer tok-flag-123");
    assert_eq!(
        r.credentials.described,
        ["Authorization: Bearer (--bearer)"]
    );

    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "token", "  Bearer tok-file-123\n");
    let r = resolve_with(&["--bearer-file", &path], &[], None).unwrap();
    assert_eq!(authorization(&r), "Bearer tok-file-123");
    assert_eq!(r.redactor.scrub("x tok-file-123"), "x <redacted>");

    let r = resolve_with(&[], &[(BEARER_VAR, "tok-env-123")], None).unwrap();
    assert_eq!(authorization(&r), "Bearer tok-env-123");
    assert_eq!(
        r.credentials.described,
        ["Authorization: Bearer (PGCOST_BEARER)"]
    );

    // Another credential for the same header wins over the variable.
    let r = resolve_with(
        &["--basic", "bob"],
        &[(BEARER_VAR, "tok-env-123"), (BASIC_PASSWORD_VAR, "pw")],
        None,
    )
    .unwrap();
    assert!(authorization(&r).starts_with("Basic "));

    let r = resolve_with(&[], &[], None).unwrap();
    assert!(r.credentials.headers.is_empty());
    assert!(r.credentials.described.is_empty());
}

#[test]
fn basic_from_variable_or_prompt_or_refused() {
    let r = resolve_with(
        &["--basic", "alice"],
        &[(BASIC_PASSWORD_VAR, "open sesame")],
        None,
    )
    .unwrap();
    // base64("alice:open sesame")
    assert_eq!(authorization(&r), "Basic YWxpY2U6b3BlbiBzZXNhbWU=");
    assert_eq!(
        r.redactor.scrub("YWxpY2U6b3BlbiBzZXNhbWU= open sesame"),
        "<redacted> <redacted>"
    );

    let r = resolve_with(&["--basic", "alice"], &[], Some("typed-pw")).unwrap();
    assert_eq!(authorization(&r), "Basic YWxpY2U6dHlwZWQtcHc=");

    let err = resolve_with(&["--basic", "alice"], &[], None)
        .err()
        .unwrap();
    assert_eq!(err.exit_code(), crate::error::exit::USAGE);
    assert!(err.message.contains("no terminal"), "{}", err.message);
    assert!(resolve_with(&["--basic", "alice:pw"], &[], None).is_err());
}

#[test]
fn cookies_go_in_one_header() {
    let r = resolve_with(
        &["--cookie", "session=s-123456", "--cookie", "csrf=c1"],
        &[],
        None,
    )
    .unwrap();
    let cookie = r.credentials.headers.get(COOKIE).unwrap();
    assert!(cookie.is_sensitive());
    assert_eq!(cookie.to_str().unwrap(), "session=s-123456; csrf=c1");
    assert_eq!(
        r.credentials.described,
        ["Cookie: session, csrf (--cookie)"]
    );
    for bad in ["novalue", "=v", "a b=1", "a=1;b=2"] {
        let err = resolve_with(&["--cookie", bad], &[], None).err().unwrap();
        assert!(!err.message.contains("b=2"), "{}", err.message);
    }
    let err = resolve_with(&["--cookie", "a=1", "-H", "Cookie: b=2"], &[], None)
        .err()
        .unwrap();
    assert!(err.message.contains("both set the Cookie header"));
}

#[test]
fn one_source_per_authorization_header() {
    for extra in [
        &["--bearer", "t", "--basic", "u"][..],
        &["--bearer", "t", "-H", "Authorization: Bearer x"],
        &["--jwt-secret-env", "S", "--bearer", "t"],
        &[
            "--login-url",
            "http://h/l",
            "--login-body",
            "{}",
            "--login-token-pointer",
            "/t",
            "--bearer",
            "t",
        ],
    ] {
        let err = resolve_with(extra, &[("S", "secret-secret")], None)
            .err()
            .unwrap();
        assert!(
            err.message.contains("both set the Authorization header"),
            "{extra:?}: {}",
            err.message
        );
    }
    let err = resolve_with(&["--jwt-sub", "42"], &[], None).err().unwrap();
    assert!(
        err.message.contains("--jwt-sub needs a key"),
        "{}",
        err.message
    );
}

#[test]
fn jwt_minted_from_a_variable_with_claims() {
    let r = resolve_with(
        &[
            "--jwt-secret-env",
            "APP_SECRET",
            "--jwt-sub",
            "42",
            "--jwt-iss",
            "me",
            "--jwt-claim",
            "role=admin",
            "--jwt-ttl",
            "10m",
        ],
        &[("APP_SECRET", "app-secret-123")],
        None,
    )
    .unwrap();
    let header = authorization(&r);
    let token = header.strip_prefix("Bearer ").unwrap();
    let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(token).unwrap();
    assert_eq!(claims["sub"], "42");
    assert_eq!(claims["iss"], "me");
    assert_eq!(claims["role"], "admin");
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        600
    );
    assert!(uuid::Uuid::parse_str(claims["jti"].as_str().unwrap()).is_ok());
    assert_eq!(
        r.credentials.described,
        ["Authorization: Bearer (minted HS256 JWT)"]
    );
    assert_eq!(
        r.redactor.scrub(&format!("{token} app-secret-123")),
        "<redacted> <redacted>"
    );

    let err = resolve_with(&["--jwt-secret-env", "NOPE"], &[], None)
        .err()
        .unwrap();
    assert!(err.message.contains("NOPE: the variable is not set"));
}

#[test]
fn jwt_from_an_env_file() {
    let dir = tempfile::tempdir().unwrap();
    let env_file = write(
        &dir,
        ".env",
        "# the app's settings\nexport JWT_SECRET='env-file-secret'\nJWT_ISSUER=\"https://app.test\"\n\
         JWT_AUDIENCE=api # trailing comment\nOTHER_SECRET=other-secret-1\nJWT_SECRET=ignored\n",
    );
    let r = resolve_with(&["--env-file", &env_file], &[], None).unwrap();
    let header = authorization(&r);
    let token = header.strip_prefix("Bearer ").unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.set_issuer(&["https://app.test"]);
    validation.set_audience(&["api"]);
    jsonwebtoken::decode::<serde_json::Value>(
        token,
        &jsonwebtoken::DecodingKey::from_secret(b"env-file-secret").unwrap(),
        &validation,
    )
    .unwrap();

    // Other names, and flags that win over the file.
    let r = resolve_with(
        &[
            "--env-file",
            &env_file,
            "--env-secret-var",
            "OTHER_SECRET",
            "--jwt-aud",
            "web",
        ],
        &[],
        None,
    )
    .unwrap();
    let header = authorization(&r);
    let claims: serde_json::Value =
        jsonwebtoken::dangerous::insecure_decode_claims(header.strip_prefix("Bearer ").unwrap())
            .unwrap();
    assert_eq!(claims["aud"], "web");
    assert_eq!(claims["iss"], "https://app.test");

    let err = resolve_with(
        &["--env-file", &env_file, "--env-issuer-var", "NOPE"],
        &[],
        None,
    )
    .err()
    .unwrap();
    assert!(err.message.contains("has no NOPE"), "{}", err.message);
    let broken = write(&dir, "broken.env", "A=1\nJWT_SECRET='unterminated-secret\n");
    let err = resolve_with(&["--env-file", &broken], &[], None)
        .err()
        .unwrap();
    assert!(
        !err.message.contains("unterminated-secret"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("cannot parse --env-file"),
        "{}",
        err.message
    );
}

#[test]
fn secret_headers_given_with_h_are_known_secrets() {
    let r = resolve_with(
        &["-H", "X-Api-Key: key-123456", "-H", "Accept: text/plain"],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(r.credentials.described, ["x-api-key (-H)"]);
    assert_eq!(r.redactor.scrub("key-123456"), "<redacted>");

    let r = resolve_with(
        &[
            "-H",
            "Authorization: Bearer tok-123456",
            "-H",
            "Cookie: a=cookie-123456; b=2",
        ],
        &[],
        None,
    )
    .unwrap();
    // The credentials go, wherever they are; the scheme word alone is no secret.
    assert_eq!(
        r.redactor
            .scrub("token tok-123456, a=cookie-123456; Bearer (-H)"),
        "token <redacted>, a=<redacted>; Bearer (-H)"
    );
}

#[test]
fn login_spec_keeps_its_password_secret() {
    let r = resolve_with(
        &[
            "--login-url",
            "http://h/login",
            "--login-body",
            r#"{"user":"u","password":"pw-123456"}"#,
        ],
        &[],
        None,
    )
    .unwrap();
    let spec = r.credentials.login.as_ref().unwrap();
    assert_eq!(spec.token_pointer, None);
    assert_eq!(r.redactor.scrub("pw-123456"), "<redacted>");
    assert!(!format!("{:?}", r.credentials).contains("pw-123456"));
    let err = resolve_with(&["--login-url", "ftp://h", "--login-body", "{}"], &[], None)
        .err()
        .unwrap();
    assert!(err.message.contains("--login-url"));
}

#[test]
fn sessions_become_headers() {
    let spec = LoginSpec {
        url: Url::parse("http://h/login").unwrap(),
        body: bytes::Bytes::new(),
        token_pointer: Some("/token".into()),
        headers: HeaderMap::new(),
        timeout: Duration::from_secs(1),
        error_rule: Default::default(),
    };
    let mut headers = HeaderMap::new();
    let mut described = Vec::new();
    apply_session(
        Session::Token("tok".into()),
        &spec,
        &mut headers,
        &mut described,
    )
    .unwrap();
    assert_eq!(headers[AUTHORIZATION], "Bearer tok");
    assert!(headers[AUTHORIZATION].is_sensitive());

    let mut headers = HeaderMap::new();
    headers.insert(COOKIE, HeaderValue::from_static("theme=dark; sid=old"));
    let cookies = vec![("sid".to_string(), "new".to_string())];
    apply_session(
        Session::Cookies(cookies),
        &spec,
        &mut headers,
        &mut described,
    )
    .unwrap();
    assert_eq!(headers[COOKIE], "theme=dark; sid=new");
    assert_eq!(
        described[1],
        "Cookie: sid (set by the login at http://h/login)"
    );
}

#[test]
fn anonymous_requests_keep_only_harmless_headers() {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer x"));
    headers.insert(COOKIE, HeaderValue::from_static("a=1"));
    headers.insert(
        HeaderName::from_static("x-api-key"),
        HeaderValue::from_static("k"),
    );
    headers.insert(
        HeaderName::from_static("accept"),
        HeaderValue::from_static("text/plain"),
    );
    let anonymous = without_credentials(&headers);
    assert_eq!(anonymous.len(), 1);
    assert!(anonymous.contains_key("accept"));
}

fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

#[test]
fn run_length_is_estimated_generously() {
    // 220 requests over 8 workers at 250 ms, three 30 s settle waits, 5 s of set-up.
    let one = estimated_run_length(20, 200, 8, Duration::from_secs(30), 1);
    assert_eq!(
        one,
        Duration::from_millis(28 * 250) + Duration::from_secs(95)
    );
    assert_eq!(
        estimated_run_length(20, 200, 8, Duration::from_secs(30), 2),
        one * 2
    );
}

#[test]
fn expiry_before_the_end_is_refused_and_near_it_warned() {
    let now = at(1_700_000_000);
    let run = Duration::from_secs(100);
    let err = judge_expiry("the bearer token", at(1_700_000_060), now, run).unwrap_err();
    assert_eq!(
        err.message,
        "the bearer token expires at 2023-11-14 22:14:20 UTC (in 1m), before this run is likely \
         to end (up to 1m 40s from now)"
    );
    assert!(err.hint.unwrap().contains("--jwt-ttl"));
    let err = judge_expiry("the bearer token", at(1_699_999_000), now, run).unwrap_err();
    assert_eq!(
        err.message,
        "the bearer token expired at 2023-11-14 21:56:40 UTC (16m 40s ago)"
    );

    let warning = judge_expiry("the cookie sid", at(1_700_000_300), now, run)
        .unwrap()
        .unwrap();
    assert_eq!(warning.code(), "token_expires_soon");
    let warning = warning.message();
    assert!(
        warning.starts_with("the cookie sid expires at 2023-11-14 22:18:20 UTC (in 5m)"),
        "{warning}"
    );
    assert_eq!(
        judge_expiry("t", at(1_700_001_000), now, run).unwrap(),
        None
    );
}

#[test]
fn expiry_is_read_from_the_bearer_token_and_jwt_cookies() {
    let signer = jwt::Signer::secret(None, b"secret-secret").unwrap();
    let short = jwt::ClaimSet::new(None, None, None, Duration::from_secs(30));
    let now = SystemTime::now();
    let token = jwt::mint(&signer, &short, now, uuid::Uuid::nil()).unwrap();

    let mut headers = HeaderMap::new();
    headers.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    let err = check_expiry(&headers, now, Duration::from_secs(60)).unwrap_err();
    assert!(
        err.message.starts_with("the bearer token expires at"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(&token));

    let mut headers = HeaderMap::new();
    headers.insert(
        COOKIE,
        HeaderValue::from_str(&format!("theme=dark; jwt={token}")).unwrap(),
    );
    let err = check_expiry(&headers, now, Duration::from_secs(60)).unwrap_err();
    assert!(
        err.message.starts_with("the cookie jwt expires at"),
        "{}",
        err.message
    );

    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer opaque"));
    assert!(
        check_expiry(&headers, now, Duration::from_secs(3600))
            .unwrap()
            .is_empty()
    );
}
