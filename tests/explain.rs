//! `pgcost explain KIND`: the full advice of every kind, exit 0; an unknown kind is a usage
//! error that lists the kinds.

mod support;

use predicates::prelude::*;
use support::pgcost;

#[test]
fn every_kind_is_explained_in_full() {
    for kind in pgcost_core::findings::FindingKind::ALL {
        let expected = pgcost_core::findings::explain(kind);
        pgcost()
            .args(["explain", kind.as_str()])
            .assert()
            .code(0)
            .stdout(predicate::eq(expected.as_str()));
    }
    pgcost()
        .args(["explain", "collection_to_boolean"])
        .assert()
        .stdout(predicate::str::contains(
            "SELECT EXISTS (SELECT 1 FROM <the same FROM>",
        ));
    pgcost()
        .args(["explain", "n_plus_one"])
        .assert()
        .stdout(predicate::str::contains("= ANY($1)"));
}

#[test]
fn an_unknown_kind_lists_the_kinds() {
    pgcost()
        .args(["explain", "n-plus-one"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("repeated_statement"))
        .stderr(predicate::str::contains("seq_scan_heavy"));
}
