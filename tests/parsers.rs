//! Property tests: every parser of user input returns a value or an error for any input,
//! and never panics. Errors never echo a password.

use std::time::Duration;

use pgcost::auth::{jwt, login, read_env_file};
use pgcost::postgres::conninfo;
use pgcost::values::{parse_duration, parse_header, parse_method, parse_thresholds, parse_url};
use proptest::prelude::*;

fn no_env(_: &str) -> Option<String> {
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn headers(text in ".{0,80}") {
        let _ = parse_header(&text);
    }

    #[test]
    fn header_like(name in "[A-Za-z0-9!#$%&'*+.^_`|~ -]{0,20}", value in "[ -~\t\u{80}-\u{ff}]{0,40}") {
        let _ = parse_header(&format!("{name}:{value}"));
    }

    #[test]
    fn durations(text in ".{0,24}") {
        let _ = parse_duration("--timeout", &text);
    }

    #[test]
    fn numbers_as_durations(n in any::<f64>()) {
        let _ = parse_duration("--timeout", &n.to_string());
    }

    #[test]
    fn urls_and_methods(text in ".{0,60}") {
        let _ = parse_url(&text);
        let _ = parse_method(&text);
    }

    #[test]
    fn thresholds(items in proptest::collection::vec(".{0,30}", 0..4)) {
        let _ = parse_thresholds(&items);
    }

    #[test]
    fn connection_strings(text in ".{0,80}") {
        let _ = conninfo::resolve(Some(&text), &no_env);
    }

    #[test]
    fn connection_urls(user in "[a-z]{1,8}", password in "[A-Za-z0-9]{6,12}", host in "[a-z0-9.:%\\[\\]]{0,20}", rest in ".{0,30}") {
        let url = format!("postgres://{user}:{password}@{host}/{rest}");
        match conninfo::resolve(Some(&url), &no_env) {
            Ok(target) => prop_assert!(!target.redacted().contains(&password)),
            Err(err) => prop_assert!(!err.message.contains(&password), "{}", err.message),
        }
    }

    #[test]
    fn key_value_strings(pairs in proptest::collection::vec(("[a-z_]{1,12}", "[^ ]{0,12}"), 0..6)) {
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = conninfo::resolve(Some(&text.join(" ")), &no_env);
    }

    #[test]
    fn libpq_variables(host in ".{0,20}", port in ".{0,8}", user in ".{0,12}") {
        let env = move |name: &str| match name {
            "PGHOST" => Some(host.clone()),
            "PGPORT" => Some(port.clone()),
            "PGUSER" => Some(user.clone()),
            _ => None,
        };
        let _ = conninfo::resolve(None, &env);
    }

    #[test]
    fn json_pointers_and_bodies(pointer in ".{0,30}", body in ".{0,60}") {
        let _ = login::parse_pointer(&pointer);
        let _ = login::parse_body(&body);
        let _ = login::token_at(body.as_bytes(), &pointer);
    }

    #[test]
    fn jwt_claims_and_algorithms(text in ".{0,40}") {
        let mut claims = jwt::ClaimSet::new(None, None, None, Duration::from_secs(60));
        let _ = claims.add(&text);
        let _ = jwt::parse_algorithm(&text);
        let _ = jwt::expires_at(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn config_files(text in ".{0,200}") {
        let _ = pgcost::commands::check::config::parse(&text, "pgcost.toml");
    }

    #[test]
    fn config_like_files(
        keys in proptest::collection::vec("(base_url|name|path|method|requests|transactions|forbid|url_env|\\[database\\]|\\[\\[endpoint\\]\\]|\\[endpoint.budget\\]|\\[auth\\])", 1..8),
        values in proptest::collection::vec("(\"[ -~]{0,12}\"|[0-9]{1,6}|\\[\"n_plus_one\"\\]|true|-1)", 1..8),
    ) {
        let text: Vec<String> = keys
            .iter()
            .zip(values.iter().cycle())
            .map(|(k, v)| if k.starts_with('[') { k.clone() } else { format!("{k} = {v}") })
            .collect();
        let _ = pgcost::commands::check::config::parse(&text.join("\n"), "pgcost.toml");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn dotenv_files(lines in proptest::collection::vec("(export )?[A-Za-z_#]{0,10}=?[\"' #a-z=\\\\]{0,16}", 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let _ = read_env_file(&path);
    }
}
