//! Tests of pgcost.toml: parsing with positions, variables and secrets, the mapping onto
//! the audit options.

use std::time::Duration;

use super::*;
use crate::config::AuditConfig;
use pgcost_core::check::budget::Budget;
use pgcost_core::external_load::{self, CountSource};

const GOOD: &str = r#"
base_url = "http://127.0.0.1:3000/"

[database]
url = "postgres://auditor@127.0.0.1:5432/app"

[defaults]
requests = 100
concurrency = 4
warmup = 40
headers = { Accept = "application/json", Authorization = "Bearer ${API_TOKEN}" }

[thresholds]
collection_min_rows_per_call = 20

[[endpoint]]
name = "list projects"
path = "/api/v1/projects?limit=20"

[endpoint.budget]
transactions = 3
statements = 3
rows_read = 100
rows_returned = 25.5
p95_ms = 50
forbid = ["collection_to_boolean", "n_plus_one"]

[[endpoint]]
name = "create project"
method = "post"
allow_writes = true
path = "/api/v1/projects"
requests = 20
body = '{"name": "x"}'
headers = { "content-type" = "application/json", authorization = "Token ${OTHER}" }
"#;

fn env(name: &str) -> Option<String> {
    match name {
        "API_TOKEN" => Some("tok-123456".into()),
        "OTHER" => Some("other-secret".into()),
        "DB_URL" => Some("postgres://u:pw@h/d".into()),
        "JWT_SECRET" => Some("a-test-secret-of-more-than-32-bytes-0123456789".into()),
        _ => None,
    }
}

fn built(text: &str, only: &[&str]) -> Result<Vec<Endpoint>> {
    let file = parse(text, "pgcost.toml")?;
    let overrides = Overrides {
        base_url: None,
        only: only.iter().map(|s| s.to_string()).collect(),
        source: None,
    };
    build(
        &file,
        text,
        "pgcost.toml",
        Path::new("/repo"),
        &overrides,
        &env,
    )
}

fn error(text: &str) -> Error {
    built(text, &[]).expect_err("the file is invalid")
}

#[test]
fn a_complete_file_becomes_one_audit_config_per_endpoint() {
    let endpoints = built(GOOD, &[]).unwrap();
    assert_eq!(endpoints.len(), 2);
    let list = &endpoints[0];
    assert_eq!(list.name, "list projects");
    assert_eq!(
        list.audit.request.url.as_str(),
        "http://127.0.0.1:3000/api/v1/projects?limit=20"
    );
    assert_eq!(list.audit.request.method, reqwest::Method::GET);
    assert_eq!(
        (
            list.audit.requests,
            list.audit.concurrency,
            list.audit.warmup
        ),
        (100, 4, 40)
    );
    assert_eq!(
        list.audit.db.redacted(),
        "postgres://auditor@127.0.0.1:5432/app"
    );
    assert_eq!(list.budget.rows_returned, Some(25.5));
    assert_eq!(list.budget.transactions, Some(3.0));
    assert_eq!(list.budget.forbid.len(), 2);
    let h = &list.audit.request.headers;
    assert_eq!(h["authorization"], "Bearer tok-123456");
    assert!(h["authorization"].is_sensitive());
    assert_eq!(
        list.audit
            .findings
            .as_ref()
            .unwrap()
            .collection_min_rows_per_call,
        20.0
    );

    let create = &endpoints[1];
    assert_eq!(create.audit.request.method, reqwest::Method::POST);
    assert_eq!(create.audit.requests, 20);
    assert_eq!(
        create.audit.request.body.as_deref(),
        Some(&b"{\"name\": \"x\"}"[..])
    );
    // The endpoint's own header replaces the default of the same name.
    let h = &create.audit.request.headers;
    assert_eq!(h.get_all("authorization").iter().count(), 1);
    assert_eq!(h["authorization"], "Token other-secret");
    assert_eq!(h["accept"], "application/json");
    let lines = create.budget.lines.clone().expect("the endpoint's lines");
    assert_eq!((lines.uri.as_str(), lines.keys.len()), ("pgcost.toml", 0));
    let limits = Budget {
        lines: None,
        ..create.budget.clone()
    };
    assert_eq!(limits, Budget::default());

    let only = built(GOOD, &["create project"]).unwrap();
    assert_eq!(only.len(), 1);
    let e = built(GOOD, &["nope"]).unwrap_err();
    assert!(e.message.contains("--endpoint \"nope\""), "{}", e.message);
    assert!(e.hint.unwrap().contains("list projects, create project"));
}

#[test]
fn replicas_join_every_endpoint_without_passwords() {
    let file = |replicas: &str| {
        format!(
            "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h:5432/app\"\n\
             replicas = [{replicas}]\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n"
        )
    };
    let endpoints = built(
        &file("\"postgres://u@r1:5432/app\", \"host=r2 user=v dbname=app\""),
        &[],
    );
    let replicas: Vec<String> = (endpoints.unwrap()[0].audit.replicas.iter())
        .map(|r| r.redacted())
        .collect();
    assert_eq!(
        replicas,
        ["postgres://u@r1:5432/app", "postgres://v@r2:5432/app"]
    );
    let e = error(&file("\"postgres://u:pw@r1/app\""));
    assert!(
        e.message.contains("replicas contains a password"),
        "{}",
        e.message
    );
    // The primary again: one node, counted once.
    let e = error(&file("\"postgres://u@h:5432/app\""));
    assert!(
        e.message.contains("named twice (--db, --replica)"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_keys_name_the_key_with_file_line_and_column() {
    let text =
        "base_url = \"http://h\"\n\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nrequets = 5\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:6:1: "), "{}", e.message);
    assert!(
        e.message.contains("unknown field `requets`"),
        "{}",
        e.message
    );

    let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nrows = 5\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:6:1: "), "{}", e.message);
    assert!(e.message.contains("unknown field `rows`"), "{}", e.message);

    let text = "[auth]\nbearer = \"abc\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:2:1: "), "{}", e.message);
    assert!(e.hint.unwrap().contains("never inline"));

    let text = "base_url = \"http://h\"\nverbose = true\n";
    assert!(
        error(text)
            .message
            .starts_with("pgcost.toml:2:1: unknown field `verbose`")
    );
}

#[test]
fn wrong_types_and_values_carry_their_position() {
    let text = "[defaults]\nrequests = \"many\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:2:12: "), "{}", e.message);
    assert!(e.message.contains("invalid type"), "{}", e.message);

    let text = "[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nforbid = [\"n_plus_one\", \"slow\"]\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:5:25: "), "{}", e.message);
    assert!(e.message.contains("slow"), "{}", e.message);

    let text = "[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nstatements = -1\n";
    assert!(error(text).message.contains("must not be negative"));
}

#[test]
fn a_command_endpoint_needs_its_count_and_no_path() {
    let head = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/app\"\n\
                [[endpoint]]\nname = \"c\"\n";
    let text = format!("{head}command = [\"k6\", \"run\"]\ncount_from = \"k6:out/s.json\"\n");
    let endpoints = built(&text, &[]).unwrap();
    let load = endpoints[0].command.as_ref().unwrap();
    assert_eq!(load.command, ["k6", "run"]);
    assert_eq!(
        load.count,
        CountSource::Tool(external_load::Tool::K6, "/repo/out/s.json".into())
    );
    assert_eq!(load.dir, Path::new("/repo"));
    let text = format!("{head}command = [\"./load.sh\"]\nrequests = 40\n");
    let endpoints = built(&text, &[]).unwrap();
    assert_eq!(
        endpoints[0].command.as_ref().unwrap().count,
        CountSource::Given(40)
    );

    let cases = [
        ("command = [\"k6\"]\n", "a command needs its request count"),
        ("command = []\nrequests = 1\n", "command is empty"),
        (
            "command = [\"k6\"]\npath = \"/a\"\nrequests = 1\n",
            "has both path and command",
        ),
        ("requests = 1\n", "has no path"),
        (
            "command = [\"k6\"]\ncount_from = \"wrk:x\"\n",
            "unknown load tool",
        ),
    ];
    for (rest, expected) in cases {
        let e = error(&format!("{head}{rest}"));
        assert!(e.message.contains(expected), "{rest}: {}", e.message);
    }
}

#[test]
fn paths_must_start_with_a_slash_and_names_must_be_unique() {
    let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"api/a\"\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:4:8: "), "{}", e.message);
    assert!(e.message.contains("must start with /"), "{}", e.message);

    let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n\n[[endpoint]]\nname = \"a\"\npath = \"/b\"\n";
    let e = error(text);
    assert_eq!(
        e.message,
        "pgcost.toml:7:8: duplicate endpoint name \"a\" (first defined on line 3)"
    );
}

#[test]
fn secrets_come_from_variables_and_never_show_in_errors() {
    let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nheaders = { X-Key = \"${MISSING}\" }\n";
    let e = error(text);
    assert!(
        e.message.contains("MISSING, which is not set"),
        "{}",
        e.message
    );
    assert!(e.message.starts_with("pgcost.toml: "), "{}", e.message);

    let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u:hunter2@h/d\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let e = error(text);
    assert!(e.message.starts_with("pgcost.toml:3:7: "), "{}", e.message);
    assert!(!e.message.contains("hunter2"));

    let text = "base_url = \"http://h\"\n[database]\nurl_env = \"DB_URL\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let endpoints = built(text, &[]).unwrap();
    assert_eq!(endpoints[0].audit.db.redacted(), "postgres://u@h:5432/d");

    // A header value HTTP forbids: the error names the header, not the secret.
    let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nheaders = { X-Key = \"${API_TOKEN}\\u0001x\" }\n";
    let e = error(text);
    assert!(e.message.contains("endpoint \"a\""), "{}", e.message);
    assert!(!e.message.contains("tok-123456"), "{}", e.message);
}

#[test]
fn auth_maps_to_the_credential_options_of_audit() {
    let auth = Auth {
        bearer_env: Some("API_TOKEN".into()),
        cookies_env: [("sid".to_string(), "OTHER".to_string())].into(),
        basic_user: Some("ann".into()),
        jwt_secret_env: Some("JWT_SECRET".into()),
        jwt_key_file: Some("keys/app.pem".into()),
        jwt_claims: [
            ("org_id".to_string(), toml::Value::Integer(1)),
            ("role".to_string(), toml::Value::String("admin".into())),
        ]
        .into(),
        login_url: Some("/login".into()),
        login_body_file: Some("/etc/login.json".into()),
        ..Auth::default()
    };
    let mut secrets = Vec::new();
    let options = credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets);
    // jwt_secret_env and jwt_key_file exclude each other, as their flags do.
    let err = options.err().unwrap();
    assert_eq!(
        err.message,
        "[auth] has both jwt_secret_env and jwt_key_file; keep one"
    );

    let auth = Auth {
        jwt_secret_env: None,
        ..auth
    };
    let mut secrets = Vec::new();
    let o =
        credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets).unwrap();
    assert_eq!(o.bearer.as_deref(), Some("tok-123456"));
    assert_eq!(o.cookies, vec!["sid=other-secret"]);
    assert_eq!(o.basic.as_deref(), Some("ann"));
    assert_eq!(o.jwt.key_file, Some(PathBuf::from("/repo/keys/app.pem")));
    assert_eq!(o.login_body.as_deref(), Some("@/etc/login.json"));
    assert_eq!(o.jwt.claims, vec!["org_id=1", "role=admin"]);
    assert_eq!(o.login_url.as_deref(), Some("http://h:1/login"));
    assert_eq!(o.jwt.ttl, Duration::from_secs(3600));
    assert_eq!(secrets, vec!["tok-123456", "other-secret"]);

    let auth = Auth {
        jwt_secret_env: Some("JWT_SECRET".into()),
        ..Auth::default()
    };
    let o =
        credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets).unwrap();
    assert_eq!(o.jwt.secret_env.as_deref(), Some("JWT_SECRET"));
}

#[test]
fn auth_keys_become_credentials_through_the_audit_flags() {
    let endpoint = |auth: &str| {
        let text = format!(
            "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n[auth]\n{auth}\n\
             [[endpoint]]\nname = \"a\"\npath = \"/a\"\nallow_status = [404]\n"
        );
        built(&text, &[]).map(|mut e| e.remove(0))
    };
    let e = endpoint("bearer_env = \"API_TOKEN\"").unwrap();
    let headers = &e.audit.request.headers;
    assert_eq!(headers["authorization"], "Bearer tok-123456");
    assert!(headers["authorization"].is_sensitive());
    assert_eq!(e.audit.auth.allowed_statuses, vec![404]);
    assert_eq!(
        e.audit.auth.redactor.scrub("token tok-123456"),
        "token <redacted>"
    );

    let e = endpoint("cookies_env = { sid = \"OTHER\" }").unwrap();
    assert_eq!(e.audit.request.headers["cookie"], "sid=other-secret");

    let e = endpoint("basic_user = \"ann\"\nbasic_password_env = \"OTHER\"").unwrap();
    // base64("ann:other-secret")
    assert_eq!(
        e.audit.request.headers["authorization"],
        "Basic YW5uOm90aGVyLXNlY3JldA=="
    );

    let e =
        endpoint("jwt_secret_env = \"JWT_SECRET\"\njwt_sub = \"42\"\njwt_claims = { org_id = 1 }")
            .unwrap();
    let bearer = e.audit.request.headers["authorization"].to_str().unwrap();
    assert!(bearer.starts_with("Bearer ey"), "{bearer}");

    // Two sources of one header: the audit's own error, in the file's terms.
    let err = endpoint("bearer_env = \"API_TOKEN\"\nbasic_user = \"ann\"").unwrap_err();
    assert!(
        err.message.starts_with("pgcost.toml: endpoint \"a\": "),
        "{}",
        err.message
    );
    assert!(!err.message.contains("tok-123456"), "{}", err.message);

    let err = endpoint("bearer_env = \"NOT_SET\"").unwrap_err();
    assert!(
        err.message.contains("NOT_SET, which is not set"),
        "{}",
        err.message
    );
}

#[test]
fn left_out_keys_take_the_defaults_of_the_flags() {
    let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                [[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let from_file = built(text, &[]).unwrap().remove(0).audit;
    let argv = [
        "pgcost",
        "audit",
        "--url",
        "http://h/a",
        "--db",
        "postgres://u@h/d",
    ];
    let crate::flags::Command::Audit(args) =
        <crate::flags::Cli as clap::Parser>::parse_from(argv).command
    else {
        unreachable!("an audit command line")
    };
    let from_flags = AuditConfig::from_args_with_prompt(&args, &env, &|_| None).unwrap();
    assert_eq!(
        (from_file.requests, from_file.concurrency, from_file.warmup),
        (
            from_flags.requests,
            from_flags.concurrency,
            from_flags.warmup
        )
    );
    assert_eq!(from_file.admin_db, from_flags.admin_db);
    assert_eq!(from_file.request.method, from_flags.request.method);
    assert_eq!(from_file.request.timeout, from_flags.request.timeout);
    assert_eq!(from_file.settle_timeout, from_flags.settle_timeout);
    assert_eq!(from_file.retries, from_flags.retries);
    assert_eq!(
        from_file.auth.allow_anonymous_equal,
        from_flags.auth.allow_anonymous_equal
    );
}

#[test]
fn retries_and_public_endpoints_come_from_defaults_or_the_endpoint() {
    let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                [defaults]\nretries = 5\nallow_anonymous_equal = true\n\
                [[endpoint]]\nname = \"a\"\npath = \"/a\"\n\
                [[endpoint]]\nname = \"b\"\npath = \"/b\"\nallow_anonymous_equal = false\n";
    let endpoints = built(text, &[]).unwrap();
    let seen: Vec<(u32, bool)> = endpoints
        .iter()
        .map(|e| (e.audit.retries, e.audit.auth.allow_anonymous_equal))
        .collect();
    assert_eq!(seen, [(5, true), (5, false)]);
}

#[test]
fn bad_values_name_their_key() {
    let file = |extra: &str, endpoint: &str| {
        format!(
            "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n{extra}\n\
             [[endpoint]]\nname = \"a\"\npath = \"/a\"\n{endpoint}\n"
        )
    };
    let e = error(&file("[defaults]\ntimeout = \"0s\"", ""));
    assert_eq!(
        e.message,
        "pgcost.toml: endpoint \"a\": [defaults] timeout must be greater than zero"
    );
    let e = error(&file("", "timeout = \"soon\""));
    assert!(
        e.message
            .starts_with("pgcost.toml: endpoint \"a\": timeout is not a duration"),
        "{}",
        e.message
    );
    let e = error(&file("[defaults]\nsettle_timeout = \"soon\"", ""));
    assert!(
        e.message
            .starts_with("pgcost.toml: [defaults] settle_timeout is not a duration"),
        "{}",
        e.message
    );
    let e = error(&file("[thresholds]\nnope = 1", ""));
    assert_eq!(
        e.message,
        "pgcost.toml: [thresholds]: unknown name \"nope\""
    );
    let e = error(&file("", "method = \"DELETE\""));
    assert!(
        e.message.ends_with(
            "endpoint \"a\": a DELETE request may write to the database, \
             and every request of the run would: it needs allow_writes"
        ),
        "{}",
        e.message
    );
    let e = error(&file("", "data = \"ids.csv\"\nbody = \"{{data.id}}\""));
    assert!(
        e.message.contains("data: cannot read /repo/ids.csv"),
        "{}",
        e.message
    );
    let e = error(&file("", "body = \"{{data.id}}\""));
    assert!(
        e.message.contains("{{data.id}} needs --data FILE"),
        "{}",
        e.message
    );
    let e = error(&file("", "body = \"{}\"\nbody_file = \"b.json\""));
    assert_eq!(
        e.message,
        "pgcost.toml: endpoint \"a\": has both body and body_file; keep one"
    );
    let e = error(&file(
        "",
        "content_type = \"text/csv\"\nheaders = { content-type = \"a/b\" }",
    ));
    assert_eq!(
        e.message,
        "pgcost.toml: endpoint \"a\": content_type and a Content-Type header are both given"
    );
    let e = error(&file("[auth]\nlogin_url = \"/login\"", ""));
    assert_eq!(
        e.message,
        "pgcost.toml: [auth] login_url is set without login_body_file"
    );
    let e = error(&file("[auth]\njwt_secret_env = \"NOT_SET\"", ""));
    assert!(
        e.message
            .starts_with("pgcost.toml: [auth] jwt_secret_env names the variable NOT_SET"),
        "{}",
        e.message
    );
}

#[test]
fn file_paths_are_read_from_the_directory_of_the_file() {
    let text = "base_url = \"https://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                [defaults]\ncacert = \"ci/missing-ca.pem\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
    let e = error(text);
    assert!(
        e.message.starts_with("pgcost.toml: endpoint \"a\": "),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("/repo/ci/missing-ca.pem"),
        "{}",
        e.message
    );
}

#[test]
fn the_demo_example_is_valid() {
    let text = include_str!("../../../../examples/pgcost.toml");
    let file = parse(text, "examples/pgcost.toml").unwrap();
    let env = |name: &str| match name {
        "DATABASE_URL" => Some("postgres://postgres@127.0.0.1:5432/demo".to_string()),
        "DEMO_TOKEN" => Some("eyJ.demo.token".to_string()),
        _ => None,
    };
    let overrides = Overrides {
        base_url: Some("http://127.0.0.1:4000".into()),
        only: vec![],
        source: None,
    };
    let endpoints = build(
        &file,
        text,
        "examples/pgcost.toml",
        Path::new("examples"),
        &overrides,
        &env,
    )
    .unwrap();
    let names: Vec<&str> = endpoints.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["naive", "exists", "cached"]);
    assert_eq!(
        endpoints[0].audit.request.url.as_str(),
        "http://127.0.0.1:4000/naive/api/v1/projects?limit=20"
    );
    assert_eq!(
        endpoints[2].audit.request.headers["authorization"],
        "Bearer eyJ.demo.token"
    );
    assert_eq!(endpoints[1].budget.statements, Some(6.0));
}

#[test]
fn no_plans_turns_the_plans_off_for_every_endpoint() {
    let env = |name: &str| match name {
        "DATABASE_URL" => Some("postgres://postgres@127.0.0.1:5432/demo".to_string()),
        "DEMO_TOKEN" => Some("eyJ.demo.token".to_string()),
        _ => None,
    };
    let plans = |extra: &[&str]| {
        let mut argv = vec!["pgcost", "check", "--config", "examples/pgcost.toml"];
        argv.extend(extra);
        let crate::flags::Command::Check(args) =
            <crate::flags::Cli as clap::Parser>::parse_from(argv).command
        else {
            unreachable!("argv starts with check")
        };
        let config = CheckConfig::from_args(&args, &env).unwrap();
        assert_eq!(config.endpoints.len(), 3);
        (config.endpoints.iter())
            .map(|e| e.audit.plans)
            .collect::<Vec<_>>()
    };
    assert_eq!(plans(&[]), vec![true; 3]);
    assert_eq!(plans(&["--no-plans"]), vec![false; 3]);
}

#[test]
fn fail_on_plan_change_comes_from_the_budget_or_the_defaults() {
    let text = |defaults: &str, budget: &str| {
        format!(
            "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n[defaults]\n\
             {defaults}\n[[endpoint]]\nname = \"a\"\n\
             path = \"/a\"\n[endpoint.budget]\n{budget}\n[[endpoint]]\nname = \"b\"\npath = \"/b\"\n"
        )
    };
    let gates = |defaults: &str, budget: &str| -> Vec<Option<bool>> {
        (built(&text(defaults, budget), &[]).unwrap().iter())
            .map(|e| e.budget.fail_on_plan_change)
            .collect()
    };
    assert_eq!(gates("", ""), vec![None, None]);
    assert_eq!(
        gates("", "fail_on_plan_change = true"),
        vec![Some(true), None]
    );
    assert_eq!(
        gates("fail_on_plan_change = true", "fail_on_plan_change = false"),
        vec![Some(false), Some(true)]
    );
    let e = error(&text("fail_on_plan_change = \"yes\"", ""));
    assert!(e.message.starts_with("pgcost.toml:5:23: "), "{}", e.message);
    assert!(e.message.contains("invalid type"), "{}", e.message);
    let e = error(&text("", "fail_on_plan_change = 1"));
    assert!(
        e.message.starts_with("pgcost.toml:10:23: "),
        "{}",
        e.message
    );
}

#[test]
fn source_is_read_under_the_files_directory_and_the_flag_overrides_it() {
    let text = "base_url = \"http://127.0.0.1:3000\"\nsource = \"rails\"\n\n\
                [database]\nurl = \"postgres://auditor@127.0.0.1:5432/app\"\n\n\
                [[endpoint]]\nname = \"labels\"\npath = \"/labels\"\n";
    let file = parse(text, "pgcost.toml").unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    let build_with = |source: Option<PathBuf>, base_dir: &Path| {
        let overrides = Overrides {
            source,
            ..Overrides::default()
        };
        build(&file, text, "pgcost.toml", base_dir, &overrides, &env)
    };
    let endpoints = build_with(None, &fixtures).unwrap();
    let map = endpoints[0].audit.source.as_ref().expect("source read");
    assert_eq!(map.root, fixtures.join("rails"));
    assert!(map.models.iter().any(|m| m.table == "small"));

    let err = build_with(None, Path::new("/repo")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pgcost.toml: endpoint \"labels\": source: /repo/rails is not a directory"
    );
    let endpoints = build_with(Some(fixtures.join("django")), Path::new("/repo")).unwrap();
    let map = endpoints[0].audit.source.as_ref().unwrap();
    assert!(map.models.iter().any(|m| m.table == "tracker_issue"));
}
