//! The auth group: how each measured request authenticates, and the one table of rules
//! between its keys (which exclude which, which need which) that clap and pgcost.toml's
//! `[auth]` both apply.

use std::path::PathBuf;

use clap::Args;

use super::DEFAULT_JWT_TTL;

/// Keys that exclude each other, by clap id (the flag's name with `_`).
pub const CONFLICTS: &[(&str, &str)] = &[
    ("bearer", "bearer_file"),
    ("jwt_secret_env", "jwt_secret_file"),
    ("jwt_secret_env", "jwt_key_file"),
    ("jwt_secret_file", "jwt_key_file"),
];

/// Keys that need another, by clap id: the first needs the second.
pub const REQUIRES: &[(&str, &str)] = &[
    ("env_secret_var", "env_file"),
    ("env_issuer_var", "env_file"),
    ("env_audience_var", "env_file"),
    ("login_url", "login_body"),
    ("login_body", "login_url"),
    ("login_token_pointer", "login_url"),
];

/// The `[auth]` key of pgcost.toml that stands for the flag of clap id `id`: a secret is
/// named by its variable there, a login body is a file.
pub fn toml_key(id: &str) -> &str {
    match id {
        "bearer" => "bearer_env",
        "basic" => "basic_user",
        "login_body" => "login_body_file",
        other => other,
    }
}

/// Adds the rules of [`CONFLICTS`] and [`REQUIRES`] to the flag they name.
fn with_rules(mut arg: clap::Arg) -> clap::Arg {
    let id = arg.get_id().as_str().to_owned();
    for (a, b) in CONFLICTS {
        if *a == id {
            arg = arg.conflicts_with(*b);
        }
    }
    for (a, b) in REQUIRES {
        if *a == id {
            arg = arg.requires(*b);
        }
    }
    arg
}

/// How each measured request authenticates. Every value read here is a secret: none is
/// ever printed.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Authentication", mut_args(with_rules))]
pub struct AuthArgs {
    /// Send 'Authorization: Bearer TOKEN'. A value on the command line is visible to other
    /// users of this machine in `ps`: prefer --bearer-file or the PGCOST_BEARER variable.
    #[arg(long, value_name = "TOKEN")]
    pub bearer: Option<String>,

    /// Read the bearer token from a file (surrounding whitespace is ignored). Without
    /// --bearer or --bearer-file, the PGCOST_BEARER variable is used when set.
    #[arg(long, value_name = "PATH")]
    pub bearer_file: Option<PathBuf>,

    /// Send a cookie, 'name=value'. Repeatable; all go in one Cookie header.
    #[arg(long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,

    /// HTTP Basic authentication as USER. The password comes from PGCOST_BASIC_PASSWORD,
    /// or from a prompt when standard input is a terminal.
    #[arg(long, value_name = "USER")]
    pub basic: Option<String>,

    /// Mint a JWT signed with the secret in this environment variable (HS256/384/512).
    #[arg(long, value_name = "NAME")]
    pub jwt_secret_env: Option<String>,

    /// Mint a JWT signed with the secret in this file (trailing newline ignored).
    #[arg(long, value_name = "PATH")]
    pub jwt_secret_file: Option<PathBuf>,

    /// Mint a JWT signed with this PEM private key (RS256: RSA; ES256: P-256 in PKCS#8).
    #[arg(long, value_name = "PEM")]
    pub jwt_key_file: Option<PathBuf>,

    /// Signing algorithm of the minted JWT: HS256, HS384, HS512, RS256 or ES256. Defaults
    /// to HS256 with a secret, and to the key's own type with --jwt-key-file.
    #[arg(long, value_name = "ALG")]
    pub jwt_alg: Option<String>,

    /// The minted JWT's `sub` claim.
    #[arg(long, value_name = "SUBJECT")]
    pub jwt_sub: Option<String>,

    /// The minted JWT's `iss` claim (overrides the one from --env-file).
    #[arg(long, value_name = "ISSUER")]
    pub jwt_iss: Option<String>,

    /// The minted JWT's `aud` claim (overrides the one from --env-file).
    #[arg(long, value_name = "AUDIENCE")]
    pub jwt_aud: Option<String>,

    /// Another claim, KEY=VALUE (repeatable). A value that parses as JSON is used as JSON
    /// (42, true, ["admin"]); anything else is a string.
    #[arg(long = "jwt-claim", value_name = "KEY=VALUE")]
    pub jwt_claims: Vec<String>,

    /// Lifetime of the minted JWT (`exp` = now + TTL).
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_JWT_TTL)]
    pub jwt_ttl: String,

    /// Read the JWT secret, issuer and audience from this dotenv file, as the app does.
    #[arg(long, value_name = "PATH")]
    pub env_file: Option<PathBuf>,

    /// Name of the secret in --env-file [default: JWT_SECRET].
    #[arg(long, value_name = "NAME")]
    pub env_secret_var: Option<String>,

    /// Name of the issuer in --env-file [default: JWT_ISSUER].
    #[arg(long, value_name = "NAME")]
    pub env_issuer_var: Option<String>,

    /// Name of the audience in --env-file [default: JWT_AUDIENCE].
    #[arg(long, value_name = "NAME")]
    pub env_audience_var: Option<String>,

    /// Log in once before the warm-up by POSTing --login-body to this URL.
    #[arg(long, value_name = "URL")]
    pub login_url: Option<String>,

    /// The login request's JSON body, or @PATH to read it from a file. A password on the
    /// command line is visible to other users in `ps`: prefer @PATH.
    #[arg(long, value_name = "JSON")]
    pub login_body: Option<String>,

    /// Where the token is in the login response, as a JSON pointer (/user/token); it is
    /// then sent as a bearer token. Without it, the session cookies the login sets are
    /// kept instead.
    #[arg(long, value_name = "POINTER")]
    pub login_token_pointer: Option<String>,

    /// Run the same burst without any credentials first, and report what everything after
    /// authentication costs: the difference between the two runs.
    #[arg(long)]
    pub compare_unauthenticated: bool,

    /// Accept an endpoint that answers the same without the credentials (the same 2xx or
    /// 3xx status, an identical body). Without this flag such a run is not valid (exit 3): an app that
    /// serves an unknown key as anonymous would be measured on its anonymous path. Before
    /// the warm-up, one request is sent with the credentials and one without.
    #[arg(long)]
    pub allow_anonymous_equal: bool,

    /// The variable that holds the Basic password (pgcost.toml's `basic_password_env`);
    /// no flag sets it: `--basic` reads PGCOST_BASIC_PASSWORD.
    #[arg(skip)]
    pub basic_password_var: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_flags_of_the_group() {
        let cmd = AuthArgs::augment_args(clap::Command::new("t"));
        let ids: Vec<&str> = cmd.get_arguments().map(|a| a.get_id().as_str()).collect();
        for (a, b) in CONFLICTS.iter().chain(REQUIRES) {
            assert!(ids.contains(a) && ids.contains(b), "{a} {b}");
        }
        let bearer = cmd
            .get_arguments()
            .find(|a| a.get_id() == "bearer")
            .unwrap();
        let conflicts: Vec<&str> = (cmd.get_arg_conflicts_with(bearer).iter())
            .map(|a| a.get_id().as_str())
            .collect();
        assert_eq!(conflicts, ["bearer_file"]);
    }

    #[test]
    fn clap_applies_the_table() {
        let cmd = || AuthArgs::augment_args(clap::Command::new("t").no_binary_name(true));
        let err = cmd()
            .try_get_matches_from(["--bearer", "x", "--bearer-file", "f"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
        let err = cmd()
            .try_get_matches_from(["--login-url", "http://h/x"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }
}
