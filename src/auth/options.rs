//! The credential options as the user gave them (the auth group of the flags, which
//! pgcost.toml's `[auth]` also fills), each value parsed, before [`super::configure`]
//! resolves them.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;
use crate::flags::{AuditArgs, AuthArgs, Spelling};
use crate::values::parse_positive_duration;

/// How the requests authenticate, as the user gave it: filled from the flags of
/// `pgcost audit` or from the `[auth]` table of pgcost.toml, and turned into an
/// [`super::AuthConfig`] by [`super::configure`] alone, so that both mean the same. The default is no
/// credentials at all (`pgcost measure`).
#[derive(Clone, Default)]
pub struct CredentialOptions {
    /// A bearer token (a secret).
    pub bearer: Option<String>,
    /// A file that holds the bearer token.
    pub bearer_file: Option<PathBuf>,
    /// Cookies, `NAME=VALUE` (secrets).
    pub cookies: Vec<String>,
    /// The user of HTTP Basic authentication.
    pub basic: Option<String>,
    /// The variable that holds the Basic password; [`super::BASIC_PASSWORD_VAR`] when
    /// `None`.
    pub basic_password_var: Option<String>,
    /// The JWT to mint, if a key is given.
    pub jwt: JwtOptions,
    /// A login to perform once before the warm-up.
    pub login_url: Option<String>,
    /// The login's JSON body, or `@PATH`.
    pub login_body: Option<String>,
    /// Where the token is in the login response, as a JSON pointer.
    pub login_token_pointer: Option<String>,
    /// Statuses outside 2xx and 3xx accepted on purpose.
    pub allow_status: Vec<u16>,
    /// Measure the same burst without credentials first.
    pub compare_unauthenticated: bool,
    /// Accept an answer without the credentials identical to the one with them.
    pub allow_anonymous_equal: bool,
}

/// The key and the claims of a JWT to mint; none is minted without a key.
#[derive(Clone, Default)]
pub struct JwtOptions {
    /// The variable that holds an HMAC secret.
    pub secret_env: Option<String>,
    /// A file that holds an HMAC secret.
    pub secret_file: Option<PathBuf>,
    /// A PEM private key.
    pub key_file: Option<PathBuf>,
    pub alg: Option<String>,
    pub sub: Option<String>,
    pub iss: Option<String>,
    pub aud: Option<String>,
    /// More claims, `KEY=VALUE`; a value that parses as JSON is used as JSON.
    pub claims: Vec<String>,
    /// The token's lifetime, greater than zero.
    pub ttl: Duration,
    /// A dotenv file with the secret, the issuer and the audience, as the app reads them.
    pub env_file: Option<PathBuf>,
    /// The names read in `env_file`, when not the defaults.
    pub env_secret_var: Option<String>,
    pub env_issuer_var: Option<String>,
    pub env_audience_var: Option<String>,
}

impl JwtOptions {
    pub(super) fn has_key(&self) -> bool {
        self.secret_env.is_some()
            || self.secret_file.is_some()
            || self.key_file.is_some()
            || self.env_file.is_some()
    }
}

impl CredentialOptions {
    /// The credential flags of `pgcost audit` (and `--allow-status`).
    pub fn from_args(args: &AuditArgs) -> Result<CredentialOptions> {
        Self::from_groups(&args.auth, &args.load.allow_status, &Spelling::flags())
    }

    /// The auth group (and the load group's `--allow-status`), from the flags or from
    /// pgcost.toml; `spelling` names the values in the errors.
    pub fn from_groups(
        a: &AuthArgs,
        allow_status: &[u16],
        spelling: &Spelling,
    ) -> Result<CredentialOptions> {
        Ok(CredentialOptions {
            bearer: a.bearer.clone(),
            bearer_file: a.bearer_file.clone(),
            cookies: a.cookies.clone(),
            basic: a.basic.clone(),
            basic_password_var: a.basic_password_var.clone(),
            jwt: JwtOptions {
                secret_env: a.jwt_secret_env.clone(),
                secret_file: a.jwt_secret_file.clone(),
                key_file: a.jwt_key_file.clone(),
                alg: a.jwt_alg.clone(),
                sub: a.jwt_sub.clone(),
                iss: a.jwt_iss.clone(),
                aud: a.jwt_aud.clone(),
                claims: a.jwt_claims.clone(),
                ttl: parse_positive_duration(&spelling.of("jwt_ttl"), &a.jwt_ttl)?,
                env_file: a.env_file.clone(),
                env_secret_var: a.env_secret_var.clone(),
                env_issuer_var: a.env_issuer_var.clone(),
                env_audience_var: a.env_audience_var.clone(),
            },
            login_url: a.login_url.clone(),
            login_body: a.login_body.clone(),
            login_token_pointer: a.login_token_pointer.clone(),
            allow_status: allow_status.to_vec(),
            compare_unauthenticated: a.compare_unauthenticated,
            allow_anonymous_equal: a.allow_anonymous_equal,
        })
    }
}
