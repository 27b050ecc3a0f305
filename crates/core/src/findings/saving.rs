//! What fixing a finding saves per request, the severity that follows from it, and the
//! order of findings by that saving.

use super::{Finding, FindingKind, Saving, Severity, Thresholds};

impl Saving {
    /// A saving of `statements` round trips, and nothing else.
    pub fn of_statements(statements: f64) -> Saving {
        Saving {
            statements,
            ..Saving::default()
        }
    }

    /// A saving of `rows_read` rows read, and nothing else.
    pub fn of_rows_read(rows_read: f64) -> Saving {
        Saving {
            rows_read,
            ..Saving::default()
        }
    }

    /// The larger of the rows read and the rows returned it saves: a row read and then
    /// sent back is one row of work, not two.
    pub fn rows(&self) -> f64 {
        self.rows_read.max(self.rows_returned)
    }

    /// One line for a reader: `saves 9 statements, 0.12 ms, 300 rows per request`. Parts
    /// that are 0 are left out.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.statements > 0.0 {
            parts.push(super::counted(self.statements, "statement", "statements"));
        }
        if self.db_time_ms >= 0.005 {
            parts.push(format!("{:.2} ms", self.db_time_ms));
        }
        if self.plan_time_ms >= 0.005 {
            parts.push(format!("{:.2} ms planning", self.plan_time_ms));
        }
        if self.rows_read > 0.0 {
            parts.push(super::counted(self.rows_read, "row read", "rows read"));
        }
        if self.rows_returned > 0.0 {
            parts.push(super::counted(
                self.rows_returned,
                "row returned",
                "rows returned",
            ));
        }
        if self.wal_bytes > 0.0 {
            parts.push(format!("{} bytes of WAL", super::amount(self.wal_bytes)));
        }
        if self.temp_blocks_written > 0.0 {
            parts.push(super::counted(
                self.temp_blocks_written,
                "temp block",
                "temp blocks",
            ));
        }
        if parts.is_empty() {
            "saves nothing measurable per request".to_string()
        } else {
            format!("saves {} per request", parts.join(", "))
        }
    }
}

/// The severity rule, from the saving (`rows` is [`Saving::rows`]):
///
/// 1. **high** when `rows` ≥ 100, or statements ≥ 3, or db time ≥ 10 ms; **medium** when
///    `rows` ≥ 10, or statements ≥ 1, or db time ≥ 1 ms; **low** otherwise (db time
///    counts the planning time saved too) (the numbers
///    are the `high_*` and `medium_*` fields of [`Thresholds`]);
/// 2. then by kind: `connection_per_request` is always high (a backend start,
///    authentication and cold caches cost more than any count shows); `round_trips` is at
///    most medium, since its saving is an upper bound (pgcost cannot see whether the
///    lookups are independent); `repeated_statement` without parameters is at least
///    medium (certain waste), and with parameters one step lower (the parameters may
///    differ between the calls), and so is `duplicate_load` (the keys may differ between
///    the statements); `spills_to_disk` is high from 1 MB of temp files per
///    request (128 blocks) and medium below, since its saving is in blocks, not rows.
pub fn severity(finding: &Finding, t: &Thresholds) -> Severity {
    let s = &finding.saves_per_request;
    let base = if s.rows() >= t.high_avoidable_rows_per_request
        || s.statements >= t.high_round_trips_per_request
        || s.db_time_ms + s.plan_time_ms >= t.high_db_time_ms_per_request
    {
        Severity::High
    } else if s.rows() >= t.medium_avoidable_rows_per_request
        || s.statements >= t.medium_round_trips_per_request
        || s.db_time_ms + s.plan_time_ms >= t.medium_db_time_ms_per_request
    {
        Severity::Medium
    } else {
        Severity::Low
    };
    match finding.kind {
        FindingKind::ConnectionPerRequest => Severity::High,
        FindingKind::RoundTrips => base.max(Severity::Medium),
        FindingKind::RepeatedStatement if parameterless(finding) => base.min(Severity::Medium),
        FindingKind::RepeatedStatement | FindingKind::DuplicateLoad => lower(base),
        FindingKind::SpillsToDisk => super::writes::spill_severity(finding),
        _ => base,
    }
}

/// A repeated statement with no `$n`: every call returns the same answer.
fn parameterless(finding: &Finding) -> bool {
    finding.evidence.get("parameters") == Some(&0.0)
}

fn lower(severity: Severity) -> Severity {
    match severity {
        Severity::High => Severity::Medium,
        Severity::Medium | Severity::Low => Severity::Low,
    }
}

/// Most severe first; within a severity, by the saving in this order of units: statements
/// (round trips) first, then db time, then rows. Ties keep the order of discovery.
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        let (x, y) = (&a.saves_per_request, &b.saves_per_request);
        a.severity
            .cmp(&b.severity)
            .then(y.statements.total_cmp(&x.statements))
            .then((y.db_time_ms + y.plan_time_ms).total_cmp(&(x.db_time_ms + x.plan_time_ms)))
            .then(y.rows().total_cmp(&x.rows()))
    });
}
