//! The TOML schema of pgcost.toml: plain data, as serde reads it, and the endpoints built from it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use crate::commands::check::acks::Ack;
use crate::config::AuditConfig;
use pgcost_core::check::budget::Budget;
use pgcost_core::external_load::CountSource;
use pgcost_core::findings::FindingKind;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// Prefix of every endpoint's path, e.g. `http://127.0.0.1:3000`.
    pub base_url: Option<Spanned<String>>,
    #[serde(default)]
    pub database: Database,
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub auth: Auth,
    /// Finding thresholds, as `--threshold NAME=VALUE`.
    #[serde(default)]
    pub thresholds: BTreeMap<String, f64>,
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointTable>,
    /// The app's source tree, under the file's directory (`--source`, which overrides
    /// it): findings name the model of their tables and the line of their SQL.
    pub source: Option<PathBuf>,
    /// `[survey]`: read by `pgcost survey` (`commands/survey_config`), not by check.
    pub survey: Option<toml::Table>,
}

/// `[database]`: where the counters are read. Without `url` and `url_env`, DATABASE_URL
/// and the libpq variables apply, as for `pgcost audit`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    /// A URL or key=value string without a password.
    pub url: Option<Spanned<String>>,
    /// The variable that holds the URL.
    pub url_env: Option<Spanned<String>>,
    /// Every database the requests touch, as `--db` repeated: measured in the same
    /// windows; budgets apply to their sum, `[endpoint.budget.nodes.NAME]` to one.
    pub urls: Option<Spanned<Vec<String>>>,
    /// Hot standbys the app reads from, as `--replica` repeated: each one a node (role
    /// replica) of every endpoint's window, added to the sum.
    pub replicas: Option<Spanned<Vec<String>>>,
    pub admin_db: Option<String>,
}

/// `[defaults]`: what every endpoint gets unless it says otherwise.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Defaults {
    pub requests: Option<u64>,
    pub concurrency: Option<u32>,
    pub warmup: Option<u64>,
    /// Per-request timeout, e.g. "10s".
    pub timeout: Option<String>,
    /// One value for the whole run: the settle waits are shared.
    pub settle_timeout: Option<String>,
    /// Headers that mark an error answered with a 2xx status (`--error-header`).
    pub error_headers: Vec<String>,
    /// A JSON pointer whose value marks an error in a 2xx body (`--error-body-pointer`).
    pub error_body_pointer: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub insecure: bool,
    /// A CA certificate (PEM) to trust for an https base URL.
    pub cacert: Option<PathBuf>,
    /// Fetch the plans of the findings' and the top statements after the last endpoint
    /// (default true).
    pub plans: Option<bool>,
    /// Times a window with connection churn is measured again (`--retries`).
    pub retries: Option<u32>,
    /// Accept endpoints that answer the same without the credentials
    /// (`--allow-anonymous-equal`).
    pub allow_anonymous_equal: Option<bool>,
    /// `fail_on_plan_change` of every endpoint whose `[endpoint.budget]` does not set it.
    pub fail_on_plan_change: Option<bool>,
}

/// `[auth]`: credentials, by variable name or file, never inline. See
/// [`super::credential_options`].
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Auth {
    pub bearer_env: Option<String>,
    pub bearer_file: Option<PathBuf>,
    /// Cookie name → the variable that holds its value.
    pub cookies_env: BTreeMap<String, String>,
    pub basic_user: Option<String>,
    pub basic_password_env: Option<String>,
    pub jwt_secret_env: Option<String>,
    pub jwt_secret_file: Option<PathBuf>,
    pub jwt_key_file: Option<PathBuf>,
    pub jwt_alg: Option<String>,
    pub jwt_sub: Option<String>,
    pub jwt_iss: Option<String>,
    pub jwt_aud: Option<String>,
    pub jwt_claims: BTreeMap<String, toml::Value>,
    pub jwt_ttl: Option<String>,
    pub env_file: Option<PathBuf>,
    pub env_secret_var: Option<String>,
    pub env_issuer_var: Option<String>,
    pub env_audience_var: Option<String>,
    /// Absolute, or a path under `base_url`.
    pub login_url: Option<String>,
    pub login_body_file: Option<PathBuf>,
    pub login_token_pointer: Option<String>,
}

/// One `[[endpoint]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointTable {
    pub name: Spanned<String>,
    pub method: Option<String>,
    /// Lets the requests write (`--allow-writes`): needed for a method other than GET,
    /// HEAD and OPTIONS, and for a GraphQL mutation.
    #[serde(default)]
    pub allow_writes: bool,
    /// Starts with `/`; appended to `base_url`. An endpoint has a path or a `command`.
    pub path: Option<Spanned<String>>,
    /// Instead of `path`: the load command of `pgcost measure`, program and arguments,
    /// run in the file's directory; its count comes from `count_from` or `requests`.
    pub command: Option<Vec<String>>,
    /// `KIND:PATH`, as `pgcost measure --count-from` takes it (PATH under the file's
    /// directory).
    pub count_from: Option<String>,
    /// Name → value; `${VAR}` in a value is replaced by that variable.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    pub body_file: Option<PathBuf>,
    /// `--data`: rows for `{{data.COLUMN}}`, a CSV or JSON-lines file under the file's
    /// directory.
    pub data: Option<PathBuf>,
    /// The body's Content-Type (`--content-type`); a JSON body gets application/json
    /// without it.
    pub content_type: Option<String>,
    pub requests: Option<u64>,
    pub concurrency: Option<u32>,
    pub warmup: Option<u64>,
    pub timeout: Option<String>,
    /// Statuses this endpoint answers on purpose (`--allow-status`).
    #[serde(default)]
    pub allow_status: Vec<u16>,
    /// Headers that mark an error in a 2xx answer, added to `[defaults] error_headers`.
    #[serde(default)]
    pub error_headers: Vec<String>,
    /// Replaces `[defaults] error_body_pointer` for this endpoint.
    pub error_body_pointer: Option<String>,
    /// This endpoint is public: the same answer without credentials is accepted
    /// (`--allow-anonymous-equal`).
    pub allow_anonymous_equal: Option<bool>,
    /// `scale = { param = "n", values = [5, 25, 50] }`: the path is a template with
    /// `{param}` once, measured at each value as `pgcost scale` does; the budget's slopes
    /// (`statements_slope`, ...) are held against its fits.
    pub scale: Option<Spanned<ScaleTable>>,
    #[serde(default)]
    pub budget: Budget,
    /// `[[endpoint.ack]]`: findings acknowledged with a reason.
    #[serde(default)]
    pub ack: Vec<AckTable>,
    /// `ack` validated, filled by `parse`: never a key of the file.
    #[serde(skip)]
    pub acks: Vec<Ack>,
}

/// `scale = {...}` of an endpoint, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleTable {
    /// The placeholder's name in the path, `{n}` by default.
    pub param: Option<String>,
    /// At least two distinct non-negative integers, in any order.
    pub values: Vec<u64>,
}

impl ScaleTable {
    pub fn param(&self) -> &str {
        self.param
            .as_deref()
            .unwrap_or(crate::commands::scale::PLACEHOLDER)
    }
}

/// One `[[endpoint.ack]]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckTable {
    pub kind: Spanned<FindingKind>,
    /// A finding fingerprint, or a substring of its normalized statement (or table).
    pub statement: Option<Spanned<String>>,
    pub reason: Spanned<String>,
    /// `YYYY-MM-DD`.
    pub expires: Option<Spanned<String>>,
}

/// An endpoint ready to measure.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub name: String,
    pub budget: Budget,
    pub audit: AuditConfig,
    /// For `command = [...]`: the command that makes the load, measured as `pgcost
    /// measure` does; `None` for a path that pgcost loads itself.
    pub command: Option<CommandLoad>,
    pub acks: Vec<Ack>,
    /// For `scale = {...}`: each value and its audit (`audit` is the largest value's).
    pub scale: Option<crate::commands::scale::ScalePlan>,
}

/// The load command of a `command = [...]` endpoint.
#[derive(Debug, Clone)]
pub struct CommandLoad {
    pub command: Vec<String>,
    pub count: CountSource,
    /// Where it runs: the directory of pgcost.toml.
    pub dir: PathBuf,
}

/// What the command line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub base_url: Option<String>,
    /// Measure only these endpoints, in the file's order; all when empty.
    pub only: Vec<String>,
    /// `--source`, in place of the file's `source`.
    pub source: Option<PathBuf>,
}
