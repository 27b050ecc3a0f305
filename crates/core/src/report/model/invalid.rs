//! Invalid reasons, typed: why a report's numbers must not be used. Each has a stable
//! `code` (listed in docs/json.md) that tests and CI match on, and the `message` the
//! views show. A report that holds one is `valid: false`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What made the numbers untrustworthy. The serde name is the JSON `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// A settle wait timed out: the counters read after it may be incomplete.
    SettleTimeout,
    /// Ctrl-C or a stop ended the burst, the command or the ramp early.
    Interrupted,
    /// 2xx responses that carried an error in them: the error path was measured.
    ErrorAnswers,
    /// 401 or 403 responses: the rejection path was measured.
    Rejected,
    /// 404 responses.
    NotFound,
    /// 429 responses: the app's rate limiter was measured.
    RateLimited,
    /// 5xx responses.
    ServerErrors,
    /// Any other status outside 2xx and 3xx that `--allow-status` does not allow.
    UnexpectedStatus,
    /// Requests that got no response, or that the load command reported failed.
    RequestsFailed,
    /// The `measure` load command exited with a non-zero code.
    LoadCommandFailed,
    /// The answer was the same without the credentials: they are ignored.
    CredentialsIgnored,
    /// The server restarted inside the window.
    ServerRestarted,
    /// Statistics (`pg_stat_database` or `pg_stat_statements`) were reset inside the window.
    StatsReset,
    /// A cumulative counter went backwards.
    CounterWentBackwards,
    /// `pg_stat_statements` evicted entries (or recreated one) inside the window.
    StatementsEvicted,
    /// `pg_stat_statements_info` could be read on one side of the window only.
    StatementsInfoOneSided,
    /// A few requests did something the others did not, in every window within `--retries`.
    OneOffsInEveryWindow,
    /// A plain audit's window held more background than `--max-background`.
    BackgroundTooLoud,
    /// The background `--control` subtracts leaves a figure too uncertain.
    BackgroundTooUncertain,
    /// Read from a report written before reasons had codes (a bare string).
    Uncoded,
}

/// One reason a report is not valid. Reads the bare strings of reports written before
/// reasons had codes, as `uncoded`, so a stored `check --baseline` still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(from = "Stored")]
pub struct Invalid {
    pub code: Code,
    /// The prose the views show, with the figures it names.
    pub message: String,
}

/// What a report file holds: today's object, or an older report's bare string.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum Stored {
    Coded { code: Code, message: String },
    Text(String),
}

impl From<Stored> for Invalid {
    fn from(stored: Stored) -> Invalid {
        match stored {
            Stored::Coded { code, message } => Invalid::new(code, message),
            Stored::Text(message) => Invalid::new(Code::Uncoded, message),
        }
    }
}

impl Invalid {
    pub fn new(code: Code, message: impl Into<String>) -> Invalid {
        Invalid {
            code,
            message: message.into(),
        }
    }

    /// The same reason, its message prefixed with where it comes from (a node, a size,
    /// the unauthenticated baseline, the control window).
    pub fn within(&self, scope: &str) -> Invalid {
        Invalid::new(self.code, format!("{scope}: {}", self.message))
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The messages of `reasons`, in order, as the views list them.
pub fn messages(reasons: &[Invalid]) -> Vec<String> {
    reasons.iter().map(|r| r.message.clone()).collect()
}

/// The messages of `reasons` joined by `sep`, as a view's one-liner shows them.
pub fn joined(reasons: &[Invalid], sep: &str) -> String {
    messages(reasons).join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_code_and_message() {
        let r = Invalid::new(Code::SettleTimeout, "settling timed out").within("app");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"code":"settle_timeout","message":"app: settling timed out"}"#
        );
        assert_eq!(r.to_string(), "app: settling timed out");
        let back: Invalid = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        let old: Invalid = serde_json::from_str(r#""settling timed out""#).unwrap();
        assert_eq!(old, Invalid::new(Code::Uncoded, "settling timed out"));
        assert_eq!(
            joined(&[r.clone(), r], "; "),
            "app: settling timed out; app: settling timed out"
        );
    }
}
