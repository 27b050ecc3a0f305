//! Connection churn in a measured window: app connections that opened or closed while it
//! ran, whether that calls for measuring the window again, and the transactions
//! pg_stat_statements did not count. Pure rules; `measure` acts on them.

use std::collections::BTreeSet;

use crate::delta::per_request;
pub use crate::report::model::Windows;
use crate::report::model::notes::{self, Note};

/// New sessions per request from which the app is taken to open a connection for most
/// requests: the `connection_per_request` finding, a real cost no retry would remove.
pub const PER_REQUEST_SESSIONS: f64 = 0.5;

/// App connections to the target that opened or closed inside one window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Churn {
    pub opened: i64,
    pub closed: i64,
}

impl Churn {
    /// From the app's backend pids at both edges of the window and the window's
    /// `pg_stat_database.sessions` (PG 14+). `sessions` also counts a connection that
    /// opened and closed inside the window, which neither set of pids shows.
    pub fn of(before: &BTreeSet<i32>, after: &BTreeSet<i32>, sessions: Option<i64>) -> Churn {
        let appeared = after.difference(before).count() as i64;
        let gone = before.difference(after).count() as i64;
        let opened = sessions.unwrap_or(0).max(appeared);
        Churn {
            opened,
            closed: gone + (opened - appeared),
        }
    }

    pub fn is_clean(&self) -> bool {
        self.opened == 0 && self.closed == 0
    }

    /// "1 app connection opened and 1 closed".
    pub fn describe(&self) -> String {
        notes::describe_churn(self.opened, self.closed)
    }
}

/// What a window's churn means for the measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChurnVerdict {
    /// No app connection opened or closed: a clean measurement.
    Clean,
    /// The app opens a connection for most requests: that is the endpoint's cost, and
    /// measuring again would show it again.
    ConnectionPerRequest,
    /// Connections opened or closed now and then (an age limit, idle reaping, a pool
    /// growing): not the endpoint's cost; measure the window again.
    Churned(Churn),
}

/// Judges the churn of a window of `requests` requests.
pub fn judge(churn: Churn, requests: u64) -> ChurnVerdict {
    if churn.is_clean() {
        ChurnVerdict::Clean
    } else if requests > 0 && per_request(churn.opened, requests) >= PER_REQUEST_SESSIONS {
        ChurnVerdict::ConnectionPerRequest
    } else {
        ChurnVerdict::Churned(churn)
    }
}

/// Why a window was measured again, for the report.
pub fn discard_reason(churn: Churn) -> String {
    format!("{} during the window", churn.describe())
}

/// The warning when no clean window came within the retries: the figures include the
/// churn, with the transactions pg_stat_statements did not count beside it.
pub fn unclean_warning(churn: Churn, retries: u32, uncounted: Option<i64>, requests: u64) -> Note {
    Note::ConnectionChurn {
        opened: churn.opened,
        closed: churn.closed,
        retries,
        uncounted_transactions: uncounted,
        uncounted_per_request: uncounted.map(|extra| per_request(extra, requests)),
    }
}

/// Transactions beyond the top-level statements, when there are any. Meaningful only when
/// pg_stat_statements tracks utility statements, so that BEGIN and COMMIT are statements:
/// then every transaction holds at least one statement it counted.
pub fn uncounted_transactions(transactions: i64, statement_calls: i64) -> Option<i64> {
    (transactions > statement_calls).then_some(transactions - statement_calls)
}

/// The warning that names the transactions pg_stat_statements did not count.
pub fn uncounted_warning(extra: i64, transactions: i64, statements: i64, requests: u64) -> Note {
    Note::UncountedTransactions {
        transactions,
        statements,
        beyond_per_request: per_request(extra, requests),
    }
}

impl Windows {
    /// The warning line that says so, when a window was discarded.
    pub fn warning(&self) -> Option<Note> {
        (self.discarded > 0).then(|| Note::WindowsDiscarded {
            discarded: self.discarded,
            reasons: self.reasons.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pids(list: &[i32]) -> BTreeSet<i32> {
        list.iter().copied().collect()
    }

    #[test]
    fn a_recycled_connection_is_one_opened_and_one_closed() {
        let churn = Churn::of(&pids(&[10, 11, 12]), &pids(&[10, 12, 13]), Some(1));
        assert_eq!(
            churn,
            Churn {
                opened: 1,
                closed: 1
            }
        );
        assert_eq!(churn.describe(), "1 app connection opened and 1 closed");
        assert_eq!(judge(churn, 200), ChurnVerdict::Churned(churn));
    }

    #[test]
    fn sessions_show_a_connection_that_came_and_went_inside_the_window() {
        let churn = Churn::of(&pids(&[10]), &pids(&[10]), Some(2));
        assert_eq!(
            churn,
            Churn {
                opened: 2,
                closed: 2
            }
        );
        assert_eq!(churn.describe(), "2 app connections opened and 2 closed");
    }

    #[test]
    fn without_sessions_the_pids_alone_count() {
        // PG 13: no sessions counter.
        let churn = Churn::of(&pids(&[10, 11]), &pids(&[10]), None);
        assert_eq!(
            churn,
            Churn {
                opened: 0,
                closed: 1
            }
        );
        assert_eq!(churn.describe(), "1 app connection closed");
        let grown = Churn::of(&pids(&[10]), &pids(&[10, 11, 12]), Some(2));
        assert_eq!(grown.describe(), "2 app connections opened");
    }

    #[test]
    fn the_same_backends_and_no_session_is_clean() {
        let churn = Churn::of(&pids(&[10, 11]), &pids(&[11, 10]), Some(0));
        assert!(churn.is_clean());
        assert_eq!(judge(churn, 200), ChurnVerdict::Clean);
    }

    #[test]
    fn a_connection_per_request_is_a_cost_not_churn() {
        let per_request = Churn::of(&pids(&[]), &pids(&[]), Some(50));
        assert_eq!(judge(per_request, 50), ChurnVerdict::ConnectionPerRequest);
        // Half the requests is the limit; just below it is churn.
        let half = Churn::of(&pids(&[]), &pids(&[]), Some(100));
        assert_eq!(judge(half, 200), ChurnVerdict::ConnectionPerRequest);
        let below = Churn::of(&pids(&[]), &pids(&[]), Some(99));
        assert!(matches!(judge(below, 200), ChurnVerdict::Churned(_)));
    }

    #[test]
    fn transactions_beyond_statements_are_named() {
        assert_eq!(uncounted_transactions(200, 200), None);
        assert_eq!(uncounted_transactions(100, 400), None);
        assert_eq!(uncounted_transactions(17_824, 17_800), Some(24));
        let text = uncounted_warning(24, 17_824, 17_800, 200).message();
        assert!(
            text.starts_with("transactions exceed statements: 17824 transactions against 17800 statements (0.120 per request beyond them)"),
            "{text}"
        );
        assert!(text.contains("DEALLOCATE"), "{text}");
    }

    #[test]
    fn the_unclean_warning_names_the_churn_and_the_uncounted_transactions() {
        let churn = Churn {
            opened: 1,
            closed: 1,
        };
        let note = unclean_warning(churn, 2, Some(3), 200);
        assert_eq!(note.code(), "connection_churn");
        let text = note.message();
        assert!(
            text.starts_with(
                "connection churn: 1 app connection opened and 1 closed during the window, \
                 and no clean window within --retries 2"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("transactions beyond statements: 3 (0.015 per request)"),
            "{text}"
        );
        assert!(
            !unclean_warning(churn, 0, None, 200)
                .message()
                .contains("beyond")
        );
    }

    #[test]
    fn discarded_windows_are_counted_with_their_reasons() {
        assert_eq!(Windows::default().warning(), None);
        let windows = Windows {
            discarded: 1,
            reasons: vec![discard_reason(Churn {
                opened: 1,
                closed: 1,
            })],
        };
        assert_eq!(
            windows.warning().unwrap().message(),
            "1 window(s) discarded and measured again: 1 app connection opened and 1 closed \
             during the window"
        );
        assert_eq!(
            serde_json::to_string(&windows).unwrap(),
            r#"{"discarded":1,"reasons":["1 app connection opened and 1 closed during the window"]}"#
        );
    }
}
