//! Acknowledgements (`[[endpoint.ack]]`): findings a team has seen and accepted for now,
//! with a reason and an optional expiry date. Matching them against an endpoint's findings
//! and judging expiry is pure; "today" is passed in.

use time::{Date, Month};

use crate::error::{Error, Result};
pub use pgcost_core::check::AckStatus;
use pgcost_core::check::statement_diff::{FindingRef, normalized};
use pgcost_core::findings::FindingKind;

/// One validated `[[endpoint.ack]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    pub kind: FindingKind,
    /// A finding fingerprint, or a substring of the finding's normalized statement (or
    /// table). None: every finding of `kind` on the endpoint.
    pub statement: Option<String>,
    pub reason: String,
    /// From this day on (UTC) the acknowledgement fails the check.
    pub expires: Option<Date>,
    /// `pgcost.toml:LINE:COLUMN` of the `statement` key (of `kind` without one).
    pub at: String,
}

/// Parses `YYYY-MM-DD` strictly: four, two and two digits, a real calendar day.
pub fn parse_date(text: &str) -> std::result::Result<Date, String> {
    let bad = || format!("{text:?} is not a date in the form YYYY-MM-DD");
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts[..] else {
        return Err(bad());
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
        return Err(bad());
    }
    let number = |s: &str| s.parse::<u16>().map_err(|_| bad());
    let month = Month::try_from(number(month)? as u8).map_err(|_| bad())?;
    Date::from_calendar_date(i32::from(number(year)?), month, number(day)? as u8)
        .map_err(|_| format!("{text:?} is not a calendar day"))
}

/// Today's date in UTC, from the system clock.
pub fn today() -> Date {
    time::OffsetDateTime::now_utc().date()
}

impl Ack {
    /// Whether this acknowledgement covers `finding`.
    fn covers(&self, finding: &FindingRef) -> bool {
        if finding.kind != self.kind.as_str() {
            return false;
        }
        let Some(wanted) = &self.statement else {
            return true;
        };
        finding.fingerprint == *wanted
            || finding
                .subject()
                .is_some_and(|subject| normalized(subject).contains(&normalized(wanted)))
    }
}

/// The acknowledgement of each finding (the first that covers it), and the status of each
/// acknowledgement. A `statement` that covers more than one finding is a usage error: it
/// would hide findings nobody looked at.
pub fn apply(
    acks: &[Ack],
    findings: &[FindingRef],
    today: Date,
) -> Result<(Vec<Option<usize>>, Vec<AckStatus>)> {
    let mut covered_by: Vec<Option<usize>> = vec![None; findings.len()];
    let mut statuses = Vec::new();
    for (i, ack) in acks.iter().enumerate() {
        let matched: Vec<usize> = (0..findings.len())
            .filter(|&j| ack.covers(&findings[j]))
            .collect();
        if let Some(statement) = &ack.statement
            && matched.len() > 1
        {
            let which: Vec<String> = matched
                .iter()
                .map(|&j| findings[j].fingerprint.clone())
                .collect();
            return Err(Error::usage(format!(
                "{}: the ack statement {statement:?} matches {} {} findings: {}",
                ack.at,
                matched.len(),
                ack.kind,
                which.join(", ")
            ))
            .with_hint(
                "name one finding: use its fingerprint, or a longer part of its statement",
            ));
        }
        for &j in &matched {
            covered_by[j].get_or_insert(i);
        }
        statuses.push(AckStatus {
            kind: ack.kind.as_str().into(),
            statement: ack.statement.clone(),
            reason: ack.reason.clone(),
            expires: ack.expires.map(|d| d.to_string()),
            at: ack.at.clone(),
            matched: matched
                .iter()
                .map(|&j| findings[j].fingerprint.clone())
                .collect(),
            expired: ack.expires.is_some_and(|d| today >= d),
        });
    }
    Ok((covered_by, statuses))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(kind: FindingKind, statement: Option<&str>, expires: Option<&str>) -> Ack {
        Ack {
            kind,
            statement: statement.map(str::to_string),
            reason: "fixed in #123".into(),
            expires: expires.map(|d| parse_date(d).unwrap()),
            at: "pgcost.toml:12:13".into(),
        }
    }

    fn day(text: &str) -> Date {
        parse_date(text).unwrap()
    }

    fn findings() -> Vec<FindingRef> {
        use pgcost_core::findings::Severity;
        vec![
            FindingRef::new(
                "collection_to_boolean",
                Severity::High,
                Some("SELECT g.action FROM group_grants g WHERE m.user_id = $1".into()),
                None,
            ),
            FindingRef::new(
                "n_plus_one",
                Severity::Medium,
                Some("SELECT label FROM small WHERE id = $1".into()),
                None,
            ),
            FindingRef::new(
                "n_plus_one",
                Severity::Medium,
                Some("SELECT name FROM items WHERE id = $1".into()),
                None,
            ),
        ]
    }

    #[test]
    fn dates_are_strict_calendar_days() {
        assert_eq!(day("2027-03-01").to_string(), "2027-03-01");
        assert_eq!(day("2028-02-29").to_string(), "2028-02-29");
        for bad in [
            "2027-3-01",
            "27-03-01",
            "2027/03/01",
            "2027-03-01T00:00",
            "soon",
            "",
        ] {
            let e = parse_date(bad).unwrap_err();
            assert!(e.contains("YYYY-MM-DD"), "{bad}: {e}");
        }
        for bad in ["2027-02-29", "2027-13-01", "2027-00-10", "2027-04-31"] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_ack_covers_its_finding_by_substring_or_fingerprint() {
        let f = findings();
        let acks = [
            ack(FindingKind::CollectionToBoolean, Some("group_grants"), None),
            ack(
                FindingKind::NPlusOne,
                Some(&f[2].fingerprint),
                Some("2027-03-01"),
            ),
        ];
        let (covered, statuses) = apply(&acks, &f, day("2027-02-28")).unwrap();
        assert_eq!(covered, vec![Some(0), None, Some(1)]);
        assert_eq!(statuses[0].matched, vec![f[0].fingerprint.clone()]);
        assert_eq!(statuses[1].matched, vec![f[2].fingerprint.clone()]);
        assert!(!statuses[1].expired);
        assert_eq!(statuses[1].expires.as_deref(), Some("2027-03-01"));
        // The kind must match too.
        let (covered, _) = apply(
            &[ack(FindingKind::NPlusOne, Some("group_grants"), None)],
            &f,
            day("2027-02-28"),
        )
        .unwrap();
        assert_eq!(covered, vec![None, None, None]);
    }

    #[test]
    fn an_ack_expires_on_its_date() {
        let f = findings();
        let acks = [ack(
            FindingKind::CollectionToBoolean,
            Some("group_grants"),
            Some("2027-03-01"),
        )];
        let (_, s) = apply(&acks, &f, day("2027-02-28")).unwrap();
        assert!(!s[0].expired);
        let (covered, s) = apply(&acks, &f, day("2027-03-01")).unwrap();
        assert!(s[0].expired);
        assert_eq!(covered[0], Some(0), "still shown as acknowledged");
    }

    #[test]
    fn an_ack_that_matches_nothing_is_reported() {
        let acks = [ack(FindingKind::SeqScanHeavy, Some("public.items"), None)];
        let (covered, s) = apply(&acks, &findings(), day("2027-01-01")).unwrap();
        assert!(covered.iter().all(Option::is_none));
        assert!(s[0].matched.is_empty());
        assert!(!s[0].expired);
    }

    #[test]
    fn a_statement_that_matches_two_findings_is_a_usage_error() {
        let acks = [ack(FindingKind::NPlusOne, Some("WHERE id = $1"), None)];
        let e = apply(&acks, &findings(), day("2027-01-01")).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Usage);
        assert!(
            e.message.starts_with(
                "pgcost.toml:12:13: the ack statement \"WHERE id = $1\" matches 2 n_plus_one findings: n_plus_one:"
            ),
            "{}",
            e.message
        );
        assert!(e.hint.unwrap().contains("fingerprint"));
        // Without a statement, an ack covers every finding of its kind on purpose.
        let (covered, s) = apply(
            &[ack(FindingKind::NPlusOne, None, None)],
            &findings(),
            day("2027-01-01"),
        )
        .unwrap();
        assert_eq!(covered, vec![None, Some(0), Some(0)]);
        assert_eq!(s[0].matched.len(), 2);
    }
}
