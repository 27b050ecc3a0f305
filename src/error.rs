//! Typed errors, each carrying the exit code and a hint that names the fix.

/// Documented exit codes.
pub mod exit {
    /// A valid report, within budget.
    pub const OK: i32 = 0;
    /// A budget was exceeded (`pgcost check`).
    pub const BUDGET: i32 = 1;
    /// Bad input or a setup problem: nothing was measured.
    pub const USAGE: i32 = 2;
    /// A report was produced, but its numbers cannot be trusted.
    pub const INVALID: i32 = 3;
    /// Interrupted by SIGINT.
    pub const INTERRUPTED: i32 = 130;
}

/// What went wrong, in terms of what the user must fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A flag or value the user passed is malformed.
    Usage,
    /// The database cannot be used as asked.
    Database,
    /// The HTTP target cannot be used as asked.
    Target,
    /// The run was interrupted.
    Interrupted,
    /// A connection to Postgres dropped in the middle of the run.
    ConnectionLost,
    /// Nothing worth measuring: e.g. the app rejected every warm-up request.
    Untrustworthy,
}

/// The one error type of the library. `Display` prints the message only; `hint` names the
/// fix; `source` keeps the error that caused it (a driver's, an I/O one), reached through
/// [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub kind: Kind,
    pub message: String,
    pub hint: Option<String>,
    pub source: Option<Cause>,
}

/// The error behind an [`Error`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

impl Error {
    fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            hint: None,
            source: None,
        }
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(Kind::Usage, message)
    }
    pub fn database(message: impl Into<String>) -> Self {
        Error::new(Kind::Database, message)
    }
    pub fn target(message: impl Into<String>) -> Self {
        Error::new(Kind::Target, message)
    }
    /// Ends the run with exit 3: whatever would be measured could not be trusted.
    pub fn untrustworthy(message: impl Into<String>) -> Self {
        Error::new(Kind::Untrustworthy, message)
    }
    pub fn interrupted() -> Self {
        Error::new(Kind::Interrupted, "interrupted")
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    /// Keeps `cause` as this error's source.
    pub fn with_source(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(cause));
        self
    }
    /// The causes below the message, outermost first, each once, leaving out those the
    /// message already quotes: what the user is shown after the `error:` line.
    pub fn causes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            let text = cause.to_string();
            let known = self.message.contains(&text) || out.iter().any(|o| o.contains(&text));
            if !known && !text.is_empty() && text != "db error" {
                out.push(text);
            }
            next = cause.source();
        }
        out
    }
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::Interrupted => exit::INTERRUPTED,
            Kind::Untrustworthy => exit::INVALID,
            _ => exit::USAGE,
        }
    }
}

/// A cause kept as text: an error's source once its secrets are scrubbed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CauseText(pub String);

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Renders a tokio-postgres error with the server's message, DETAIL and HINT, or the I/O
/// cause, instead of the bare "db error".
pub fn describe_pg(err: &tokio_postgres::Error) -> (String, Option<String>) {
    if let Some(db) = err.as_db_error() {
        let mut message = format!("{} ({})", db.message(), db.code().code());
        if let Some(detail) = db.detail() {
            message.push_str(&format!("; DETAIL: {detail}"));
        }
        return (message, db.hint().map(str::to_string));
    }
    (chain(err), None)
}

/// An error and its causes on one line, each cause once.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_causes_are_kept_and_shown_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = Error::database("cannot connect to postgres://u@h:5432/d").with_source(io);
        assert_eq!(err.causes(), ["refused"]);
        assert!(std::error::Error::source(&err).is_some());
        let quoted = std::io::Error::other("refused");
        let err = Error::database("cannot connect: refused").with_source(quoted);
        assert!(err.causes().is_empty(), "the message quotes it already");
    }
}
