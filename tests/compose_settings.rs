//! docker-compose.yml and the throwaway clusters must run with the same audit settings.

#[test]
fn compose_flags_match_the_cluster_settings() {
    let compose =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker-compose.yml"))
            .unwrap();
    let flags: Vec<String> = compose
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("- "))
        .filter(|l| l.contains('=') && !l.starts_with('"'))
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = pgcost::postgres::cluster::audit_settings()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(
        flags, expected,
        "docker-compose.yml drifted from sql/cluster_settings.conf"
    );
}
