//! Tests of `[[endpoint.ack]]`: validation and where each ack is written.

use super::*;
use pgcost_core::findings::FindingKind;

fn file(acks: &str) -> String {
    format!(
        "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
         [[endpoint]]\nname = \"a\"\npath = \"/a\"\n{acks}"
    )
}

fn built(text: &str) -> Result<Vec<Endpoint>> {
    let file = parse(text, "pgcost.toml")?;
    build(
        &file,
        text,
        "pgcost.toml",
        Path::new("/repo"),
        &Overrides::default(),
        &|_| None,
    )
}

#[test]
fn acks_are_read_with_where_they_are_written() {
    let text = file(
        "[[endpoint.ack]]\nkind = \"collection_to_boolean\"\nstatement = \"group_grants\"\n\
         reason = \"fixed in #123\"\nexpires = \"2027-03-01\"\n\
         [[endpoint.ack]]\nkind = \"round_trips\"\nreason = \"one round trip per check\"\n",
    );
    let acks = built(&text).unwrap().remove(0).acks;
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[0].kind, FindingKind::CollectionToBoolean);
    assert_eq!(acks[0].statement.as_deref(), Some("group_grants"));
    assert_eq!(acks[0].expires.unwrap().to_string(), "2027-03-01");
    assert_eq!(acks[0].at, "pgcost.toml:9:13");
    assert_eq!(acks[1].statement, None);
    assert_eq!(acks[1].at, "pgcost.toml:13:8");
}

#[test]
fn bad_acks_are_usage_errors_with_file_line_and_column() {
    let cases = [
        (
            "[[endpoint.ack]]\nstatement = \"x\"\nreason = \"r\"\n",
            "pgcost.toml:7:1: missing field `kind`",
        ),
        (
            "[[endpoint.ack]]\nkind = \"slow\"\nreason = \"r\"\n",
            "pgcost.toml:8:8: unknown variant `slow`",
        ),
        (
            "[[endpoint.ack]]\nkind = \"n_plus_one\"\n",
            "pgcost.toml:7:1: missing field `reason`",
        ),
        (
            "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \" \"\n",
            "pgcost.toml:9:10: endpoint \"a\": an ack's reason is empty",
        ),
        (
            "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = \"next march\"\n",
            "pgcost.toml:10:11: endpoint \"a\": ack expires \"next march\" is not a date in the form YYYY-MM-DD",
        ),
        (
            "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = \"2027-02-30\"\n",
            "pgcost.toml:10:11: endpoint \"a\": ack expires \"2027-02-30\" is not a calendar day",
        ),
        (
            "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = 2027-03-01\n",
            "pgcost.toml:10:11: invalid type",
        ),
    ];
    for (acks, message) in cases {
        let e = built(&file(acks)).unwrap_err();
        assert!(e.message.starts_with(message), "{acks}: {}", e.message);
        assert_eq!(e.exit_code(), 2);
    }
}

#[test]
fn a_baseline_of_another_endpoint_set_is_a_usage_error() {
    let endpoints = built(&file("")).unwrap();
    let doc = |names: &[&str]| {
        let endpoints: Vec<String> = names
            .iter()
            .map(|n| {
                format!(
                    r#"{{"name": "{n}", "report": {{"valid": true, "target": {{"method": "GET", "url": "http://h/{n}"}},
                    "per_request": {{"transactions": 1, "statements": 1, "rows_read": 1, "rows_returned": 1}},
                    "load": {{"latency_ms": {{"p95": 1}}}}}}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"schema_version": 1, "endpoints": [{}]}}"#,
            endpoints.join(",")
        )
    };
    let baseline = |names: &[&str]| Baseline {
        origin: "main.json".into(),
        run: PreviousRun::parse(&doc(names), "main.json").unwrap(),
    };
    // One endpoint in common is enough: the others were added or removed.
    baseline(&["a", "b"]).check_endpoints(&endpoints).unwrap();
    let e = baseline(&["x", "y"])
        .check_endpoints(&endpoints)
        .unwrap_err();
    assert_eq!(
        e.message,
        "--baseline main.json is the baseline of another endpoint set: it has x, y, none of a"
    );
    assert_eq!(e.exit_code(), 2);
}
