//! Credentials: the options (the flags of `pgcost audit`, or `[auth]` in pgcost.toml), files
//! and variables that say how each measured request authenticates, resolved into headers
//! whose values are never printed; and the guard that refuses a token which would expire
//! before the run ends.

pub mod jwt;
pub mod login;
mod options;
pub mod redact;

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, HeaderValue};

pub use login::{LoginSpec, Session};
pub use options::{CredentialOptions, JwtOptions};
pub use redact::Redactor;

use crate::error::{Error, Result};
use crate::postgres::conninfo::EnvLookup;
use crate::values::{is_secret_header, parse_allowed_statuses};
use pgcost_core::report::model::notes::Note;

/// Holds the bearer token when no flag gives one.
pub const BEARER_VAR: &str = "PGCOST_BEARER";
/// Holds the password of `--basic`.
pub const BASIC_PASSWORD_VAR: &str = "PGCOST_BASIC_PASSWORD";
/// The names `--env-file` reads by default.
pub const DEFAULT_SECRET_VAR: &str = "JWT_SECRET";
pub const DEFAULT_ISSUER_VAR: &str = "JWT_ISSUER";
pub const DEFAULT_AUDIENCE_VAR: &str = "JWT_AUDIENCE";

/// A token expiring this close after the run's estimated end is warned about.
pub const EXPIRY_WARNING_MARGIN: Duration = Duration::from_secs(5 * 60);
/// A generous guess of one request's time per worker, for the run-length estimate: an
/// estimate too long only ever refuses a token that was nearly expired anyway.
const PER_REQUEST_GUESS: Duration = Duration::from_millis(250);
/// Connecting to the database and the app, and reading the statistics views.
const SETUP_GUESS: Duration = Duration::from_secs(5);
/// `audit::run` waits to settle three times: before the burst, after reading the
/// tables, and after the burst.
const SETTLE_WAITS: u32 = 3;

/// Asks for a password; `None` when there is no terminal to ask on.
pub type Prompt<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Prompts on the terminal without echo, only when standard input is a terminal (a
/// prompt in CI would hang).
pub fn prompt_on_terminal(question: &str) -> Option<String> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    rpassword::prompt_password(question).ok()
}

/// What the credential options decided, validated: how the requests authenticate, which
/// statuses are accepted on purpose, and which secrets must never be printed.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// What authenticates the requests, by name only, for the report.
    pub described: Vec<String>,
    /// A login to perform once, before the warm-up.
    pub login: Option<LoginSpec>,
    /// Statuses outside 2xx and 3xx that do not make the report invalid.
    pub allowed_statuses: Vec<u16>,
    /// Measure the same burst without credentials first.
    pub compare_unauthenticated: bool,
    /// Every secret this run knows, scrubbed from whatever is printed.
    pub redactor: Redactor,
    /// Caveats known before measuring, carried into the report.
    pub warnings: Vec<Note>,
    /// An answer without the credentials identical to the one with them is accepted
    /// (`--allow-anonymous-equal`): the endpoint is public.
    pub allow_anonymous_equal: bool,
}

/// The credentials of every measured request, resolved.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// Authorization and Cookie, their values marked sensitive.
    pub headers: HeaderMap,
    /// What authenticates the requests, by name only, for the report.
    pub described: Vec<String>,
    /// A login to perform before the warm-up.
    pub login: Option<LoginSpec>,
}

/// Resolves the credentials against the `-H` headers already in `headers`, adds the
/// credential headers to them, and returns what the run needs about authentication.
/// `redactor` holds the secrets known so far; every one met here joins them.
pub fn configure(
    options: &CredentialOptions,
    headers: &mut HeaderMap,
    timeout: Duration,
    env: EnvLookup<'_>,
    prompt: Prompt<'_>,
    redactor: Redactor,
) -> Result<AuthConfig> {
    let credentials = resolve(
        options,
        headers,
        timeout,
        env,
        prompt,
        &redactor,
        SystemTime::now(),
    )?;
    if options.compare_unauthenticated
        && credentials.login.is_none()
        && without_credentials(headers).len() == headers.len()
        && credentials.headers.is_empty()
    {
        return Err(
            Error::usage("--compare-unauthenticated needs credentials to compare against")
                .with_hint(
                    "add --bearer-file, --cookie, --basic, a --jwt-* key, --login-url or -H",
                ),
        );
    }
    for (name, value) in &credentials.headers {
        headers.insert(name, value.clone());
    }
    let (allowed_statuses, warnings) = parse_allowed_statuses(&options.allow_status)?;
    Ok(AuthConfig {
        described: credentials.described,
        login: credentials.login,
        allowed_statuses,
        compare_unauthenticated: options.compare_unauthenticated,
        redactor,
        warnings,
        allow_anonymous_equal: options.allow_anonymous_equal,
    })
}

/// Where the Authorization header comes from, for messages.
fn authorization_sources(options: &CredentialOptions, given: &HeaderMap) -> Vec<&'static str> {
    let mut sources = Vec::new();
    if options.bearer.is_some() {
        sources.push("--bearer");
    }
    if options.bearer_file.is_some() {
        sources.push("--bearer-file");
    }
    if options.jwt.has_key() {
        sources.push("the minted JWT");
    }
    if options.basic.is_some() {
        sources.push("--basic");
    }
    if options.login_token_pointer.is_some() {
        sources.push("--login-token-pointer");
    }
    if given.contains_key(AUTHORIZATION) {
        sources.push("-H Authorization");
    }
    sources
}

/// Resolves the credential options into headers (and a login to perform). `given` holds
/// the `-H` headers; every secret met on the way is added to `redactor`.
pub fn resolve(
    options: &CredentialOptions,
    given: &HeaderMap,
    timeout: Duration,
    env: EnvLookup<'_>,
    prompt: Prompt<'_>,
    redactor: &Redactor,
    now: SystemTime,
) -> Result<Credentials> {
    let mut credentials = Credentials {
        described: given_secrets(given, redactor),
        ..Credentials::default()
    };
    check_claims_have_a_key(&options.jwt)?;
    let sources = authorization_sources(options, given);
    if let [first, second, ..] = sources[..] {
        return Err(Error::usage(format!(
            "{first} and {second} both set the Authorization header"
        ))
        .with_hint("keep one of them"));
    }
    let from_variable = sources.is_empty();
    if let Some((value, described)) =
        authorization(options, from_variable, env, prompt, redactor, now)?
    {
        credentials.headers.insert(AUTHORIZATION, value);
        credentials
            .described
            .push(format!("Authorization: {described}"));
    }
    if let Some((value, described)) = cookies(options, given, redactor)? {
        credentials.described.push(described);
        credentials.headers.insert(COOKIE, value);
    }
    credentials.login = login_spec(options, given, timeout, redactor)?;
    Ok(credentials)
}

/// Records the secret `-H` headers (and the credential inside each) as secrets, and
/// names them for the report.
fn given_secrets(given: &HeaderMap, redactor: &Redactor) -> Vec<String> {
    let mut described = Vec::new();
    for (name, value) in given {
        if is_secret_header(name) {
            redactor.add_bytes(value.as_bytes());
            if let Ok(text) = value.to_str() {
                // The credential alone too: the token after "Bearer ", each cookie's value.
                if let Some((_, credential)) = text.split_once(' ') {
                    redactor.add(credential);
                }
                for pair in text.split(';') {
                    if let Some((_, cookie)) = pair.split_once('=') {
                        redactor.add(cookie);
                    }
                }
            }
            described.push(format!("{name} (-H)"));
        }
    }
    described
}

/// The Authorization header from the one source given, and what to call it. Without
/// any source (`from_variable`), a token in [`BEARER_VAR`] is used.
fn authorization(
    options: &CredentialOptions,
    from_variable: bool,
    env: EnvLookup<'_>,
    prompt: Prompt<'_>,
    redactor: &Redactor,
    now: SystemTime,
) -> Result<Option<(HeaderValue, String)>> {
    let header = if let Some(token) = &options.bearer {
        let value = bearer(token, "--bearer", redactor)?;
        (value, "Bearer (--bearer)".to_string())
    } else if let Some(path) = &options.bearer_file {
        let token = read_secret_file(path, "--bearer-file")?;
        let value = bearer(&token, "--bearer-file", redactor)?;
        (value, format!("Bearer (--bearer-file {})", path.display()))
    } else if let Some((token, algorithm)) = minted_jwt(&options.jwt, env, redactor, now)? {
        let value = bearer(&token, "the minted JWT", redactor)?;
        (value, format!("Bearer (minted {algorithm:?} JWT)"))
    } else if let Some(user) = &options.basic {
        let variable = options
            .basic_password_var
            .as_deref()
            .unwrap_or(BASIC_PASSWORD_VAR);
        let value = basic(user, variable, env, prompt, redactor)?;
        (value, format!("Basic (user {user})"))
    } else if from_variable && let Some(token) = env(BEARER_VAR).filter(|t| !t.trim().is_empty()) {
        let value = bearer(&token, BEARER_VAR, redactor)?;
        (value, format!("Bearer ({BEARER_VAR})"))
    } else {
        return Ok(None);
    };
    Ok(Some(header))
}

/// The one Cookie header of the cookie options, and what to call it.
fn cookies(
    options: &CredentialOptions,
    given: &HeaderMap,
    redactor: &Redactor,
) -> Result<Option<(HeaderValue, String)>> {
    if options.cookies.is_empty() {
        return Ok(None);
    }
    if given.contains_key(COOKIE) {
        return Err(
            Error::usage("-H Cookie and --cookie both set the Cookie header")
                .with_hint("pass each cookie with --cookie NAME=VALUE"),
        );
    }
    let cookies = options
        .cookies
        .iter()
        .map(|text| parse_cookie(text, redactor))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<&str> = cookies.iter().map(|(n, _)| n.as_str()).collect();
    let described = format!("Cookie: {} (--cookie)", names.join(", "));
    Ok(Some((cookie_header(&cookies)?, described)))
}

/// The login to perform before the warm-up, if one is asked for; it sends the `-H`
/// headers without their credentials.
fn login_spec(
    options: &CredentialOptions,
    given: &HeaderMap,
    timeout: Duration,
    redactor: &Redactor,
) -> Result<Option<LoginSpec>> {
    let (Some(url), Some(body)) = (&options.login_url, &options.login_body) else {
        return Ok(None);
    };
    let url = Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| {
            Error::usage(format!(
                "--login-url {:?} is not an http or https URL",
                redact::truncate(url, 60)
            ))
            .with_hint("write it like http://127.0.0.1:3000/api/login")
        })?;
    let (body, value) = login::parse_body(body)?;
    login::body_secrets(&value)
        .iter()
        .for_each(|secret| redactor.add(secret));
    let token_pointer = options
        .login_token_pointer
        .as_deref()
        .map(login::parse_pointer)
        .transpose()?;
    let mut headers = given.clone();
    headers.remove(AUTHORIZATION);
    headers.remove(COOKIE);
    Ok(Some(LoginSpec {
        url,
        body,
        token_pointer,
        headers,
        timeout,
        error_rule: Default::default(),
    }))
}

/// `Bearer TOKEN`, marked sensitive. A pasted `Bearer ` prefix is dropped.
fn bearer(token: &str, origin: &str, redactor: &Redactor) -> Result<HeaderValue> {
    let token = token.trim();
    let token = match token.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ => token,
    };
    if token.is_empty() {
        return Err(Error::usage(format!("{origin}: the token is empty")));
    }
    redactor.add(token);
    sensitive(&format!("Bearer {token}")).map_err(|_| {
        Error::usage(format!(
            "{origin}: the token has characters HTTP does not allow in a header"
        ))
    })
}

fn sensitive(text: &str) -> std::result::Result<HeaderValue, reqwest::header::InvalidHeaderValue> {
    let mut value = HeaderValue::from_str(text)?;
    value.set_sensitive(true);
    Ok(value)
}

/// `Basic base64(user:password)`, the password from `variable` or a prompt.
fn basic(
    user: &str,
    variable: &str,
    env: EnvLookup<'_>,
    prompt: Prompt<'_>,
    redactor: &Redactor,
) -> Result<HeaderValue> {
    if user.contains(':') {
        return Err(
            Error::usage("--basic takes the user name only; it cannot contain ':'").with_hint(
                format!("put the password in {variable}, or type it at the prompt"),
            ),
        );
    }
    let password = env(variable)
        .or_else(|| prompt(&format!("Password for {user}: ")))
        .ok_or_else(|| {
            Error::usage(format!(
                "--basic {user}: no password: {variable} is not set and there is no terminal \
                 to ask on"
            ))
            .with_hint(format!("set {variable}, or run pgcost on a terminal"))
        })?;
    redactor.add(&password);
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    redactor.add(&encoded);
    sensitive(&format!("Basic {encoded}"))
        .map_err(|_| Error::usage("--basic: the credentials cannot be sent in a header"))
}

/// Reads a secret from a file, without the trailing newline an editor adds.
fn read_secret_file(path: &Path, flag: &str) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("cannot read {flag} {}: {e}", path.display())))?;
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

/// One `--cookie NAME=VALUE`; the value is never echoed.
fn parse_cookie(text: &str, redactor: &Redactor) -> Result<(String, String)> {
    let (name, value) = text.split_once('=').ok_or_else(|| {
        Error::usage("--cookie needs NAME=VALUE").with_hint("e.g. --cookie session_id=...")
    })?;
    let name = name.trim();
    let value = value.trim();
    let bad_name = name.is_empty()
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "=;,\"".contains(c));
    if bad_name {
        return Err(Error::usage(format!(
            "--cookie: {:?} is not a cookie name",
            redact::truncate(name, 40)
        )));
    }
    if value
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == ';' || c == ',')
    {
        return Err(Error::usage(format!(
            "--cookie {name}: the value has characters a cookie cannot hold (space, ';' or ',')"
        )));
    }
    redactor.add(value);
    Ok((name.to_string(), value.to_string()))
}

fn cookie_header(cookies: &[(String, String)]) -> Result<HeaderValue> {
    let text: Vec<String> = cookies.iter().map(|(n, v)| format!("{n}={v}")).collect();
    sensitive(&text.join("; ")).map_err(|_| Error::usage("the cookies cannot be sent in a header"))
}

/// Claim options without a key would be ignored silently: refuse them.
fn check_claims_have_a_key(options: &JwtOptions) -> Result<()> {
    if options.has_key() {
        return Ok(());
    }
    let claim_flags = [
        ("--jwt-alg", options.alg.is_some()),
        ("--jwt-sub", options.sub.is_some()),
        ("--jwt-iss", options.iss.is_some()),
        ("--jwt-aud", options.aud.is_some()),
        ("--jwt-claim", !options.claims.is_empty()),
    ];
    match claim_flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(
            Error::usage(format!("{flag} needs a key to sign the JWT with")).with_hint(
                "add --jwt-secret-env NAME, --jwt-secret-file PATH, --jwt-key-file PEM or \
                 --env-file .env",
            ),
        ),
        None => Ok(()),
    }
}

/// The variables of `--env-file`, read once.
struct DotEnv<'a> {
    path: &'a Path,
    vars: HashMap<String, String>,
}

impl DotEnv<'_> {
    /// The variable the user `chose`, else `default`. A chosen or `required` name must be
    /// there; a default one may be missing.
    fn get(&self, chose: &Option<String>, default: &str, required: bool) -> Result<Option<String>> {
        let name = chose.as_deref().unwrap_or(default);
        match self.vars.get(name) {
            Some(value) => Ok(Some(value.clone())),
            None if required || chose.is_some() => Err(Error::usage(format!(
                "--env-file {} has no {name}",
                self.path.display()
            ))
            .with_hint(
                "name the variable with --env-secret-var, --env-issuer-var or --env-audience-var",
            )),
            None => Ok(None),
        }
    }
}

/// Mints the JWT that the key options ask for; `None` when none is asked for.
fn minted_jwt(
    options: &JwtOptions,
    env: EnvLookup<'_>,
    redactor: &Redactor,
    now: SystemTime,
) -> Result<Option<(String, jsonwebtoken::Algorithm)>> {
    if !options.has_key() {
        return Ok(None);
    }
    let algorithm = options
        .alg
        .as_deref()
        .map(jwt::parse_algorithm)
        .transpose()?;
    let dotenv = match &options.env_file {
        Some(path) => Some(DotEnv {
            path,
            vars: read_env_file(path)?,
        }),
        None => None,
    };
    let signer = signer(options, algorithm, dotenv.as_ref(), env, redactor)?;
    let from_dotenv = |chose: &Option<String>, default: &str| -> Result<Option<String>> {
        match &dotenv {
            Some(dotenv) => dotenv.get(chose, default, false),
            None => Ok(None),
        }
    };
    let issuer = match &options.iss {
        Some(issuer) => Some(issuer.clone()),
        None => from_dotenv(&options.env_issuer_var, DEFAULT_ISSUER_VAR)?,
    };
    let audience = match &options.aud {
        Some(audience) => Some(audience.clone()),
        None => from_dotenv(&options.env_audience_var, DEFAULT_AUDIENCE_VAR)?,
    };
    let mut claims = jwt::ClaimSet::new(
        options.sub.as_deref(),
        issuer.as_deref(),
        audience.as_deref(),
        options.ttl,
    );
    for text in &options.claims {
        claims.add(text)?;
    }
    let token = jwt::mint(&signer, &claims, now, uuid::Uuid::new_v4())?;
    redactor.add(&token);
    Ok(Some((token, signer.algorithm())))
}

/// The key the JWT is signed with, from the first key option given; every secret read
/// (the dotenv file's too, whether used or not) joins `redactor`.
fn signer(
    options: &JwtOptions,
    algorithm: Option<jsonwebtoken::Algorithm>,
    dotenv: Option<&DotEnv<'_>>,
    env: EnvLookup<'_>,
    redactor: &Redactor,
) -> Result<jwt::Signer> {
    if let Some(secret) = dotenv.and_then(|d| {
        d.vars.get(
            options
                .env_secret_var
                .as_deref()
                .unwrap_or(DEFAULT_SECRET_VAR),
        )
    }) {
        redactor.add(secret);
    }
    let secret = if let Some(name) = &options.secret_env {
        env(name).filter(|s| !s.is_empty()).ok_or_else(|| {
            Error::usage(format!("--jwt-secret-env {name}: the variable is not set"))
                .with_hint(format!("export {name}=... first, or use --jwt-secret-file"))
        })?
    } else if let Some(path) = &options.secret_file {
        read_secret_file(path, "--jwt-secret-file")?
    } else if let Some(path) = &options.key_file {
        let pem = std::fs::read(path).map_err(|e| {
            Error::usage(format!(
                "cannot read --jwt-key-file {}: {e}",
                path.display()
            ))
        })?;
        redactor.add_bytes(&pem);
        return jwt::Signer::pem(algorithm, &pem);
    } else {
        match dotenv {
            Some(dotenv) => dotenv
                .get(&options.env_secret_var, DEFAULT_SECRET_VAR, true)?
                .unwrap_or_default(),
            None => String::new(),
        }
    };
    redactor.add(&secret);
    jwt::Signer::secret(algorithm, secret.as_bytes())
}

/// The variables of a dotenv file (comments, quotes and `export` as the app's loader
/// reads them); the first definition of a name wins, as in dotenvy.
pub fn read_env_file(path: &Path) -> Result<HashMap<String, String>> {
    let cannot = |e: dotenvy::Error| -> Error {
        match e {
            dotenvy::Error::LineParse(line, _) => {
                // The line may hold the secret: say where it is, not what it says.
                let first = line.lines().next().unwrap_or("").trim();
                let number = std::fs::read_to_string(path)
                    .ok()
                    .and_then(|text| text.lines().position(|l| l.trim() == first).map(|i| i + 1));
                let place = number
                    .map(|n| format!("line {n}"))
                    .unwrap_or("a line".into());
                Error::usage(format!(
                    "cannot parse --env-file {}: {place} is not NAME=value",
                    path.display()
                ))
                .with_hint("the line is not shown, as it may hold a secret")
            }
            dotenvy::Error::Io(io) => {
                Error::usage(format!("cannot read --env-file {}: {io}", path.display()))
            }
            _ => Error::usage(format!("cannot read --env-file {}", path.display())),
        }
    };
    let mut vars = HashMap::new();
    for item in dotenvy::from_path_iter(path).map_err(cannot)? {
        let (name, value) = item.map_err(cannot)?;
        vars.entry(name).or_insert(value);
    }
    Ok(vars)
}

/// Adds what a login handed over to the request headers.
pub fn apply_session(
    session: Session,
    spec: &LoginSpec,
    headers: &mut HeaderMap,
    described: &mut Vec<String>,
) -> Result<()> {
    let at = redact::url(&spec.url);
    match session {
        Session::Token(token) => {
            let value = sensitive(&format!("Bearer {token}")).map_err(|_| {
                Error::target(format!(
                    "the token from the login at {at} has characters HTTP does not allow in a header"
                ))
            })?;
            headers.insert(AUTHORIZATION, value);
            let pointer = spec.token_pointer.as_deref().unwrap_or("");
            described.push(format!("Authorization: Bearer (login at {at}, {pointer})"));
        }
        Session::Cookies(cookies) => {
            let mut all: Vec<(String, String)> = Vec::new();
            if let Some(existing) = headers.get(COOKIE).and_then(|v| v.to_str().ok()) {
                for pair in existing.split(';') {
                    if let Some((n, v)) = pair.split_once('=') {
                        all.push((n.trim().to_string(), v.trim().to_string()));
                    }
                }
            }
            let names: Vec<&str> = cookies.iter().map(|(n, _)| n.as_str()).collect();
            described.push(format!(
                "Cookie: {} (set by the login at {at})",
                names.join(", ")
            ));
            for (name, value) in cookies {
                all.retain(|(n, _)| *n != name);
                all.push((name, value));
            }
            let value = cookie_header(&all).map_err(|_| {
                Error::target(format!(
                    "the cookies set by the login at {at} cannot be sent back in a header"
                ))
            })?;
            headers.insert(COOKIE, value);
        }
    }
    Ok(())
}

/// The headers an anonymous client would send: every credential-bearing one removed.
pub fn without_credentials(headers: &HeaderMap) -> HeaderMap {
    let mut anonymous = headers.clone();
    let secret: Vec<_> = headers
        .keys()
        .filter(|n| is_secret_header(n))
        .cloned()
        .collect();
    for name in secret {
        anonymous.remove(name);
    }
    anonymous
}

/// How long a run may take, generously: the requests at a guessed pace, every settle
/// wait at its timeout, and some set-up. `runs` is 2 with the unauthenticated baseline.
pub fn estimated_run_length(
    warmup: u64,
    requests: u64,
    concurrency: u32,
    settle_timeout: Duration,
    runs: u32,
) -> Duration {
    let requests_per_worker = (warmup + requests).div_ceil(u64::from(concurrency.max(1)));
    let burst = PER_REQUEST_GUESS.saturating_mul(requests_per_worker.min(u32::MAX as u64) as u32);
    (burst + settle_timeout * SETTLE_WAITS + SETUP_GUESS) * runs
}

/// The tokens the requests carry that may expire: the bearer token, and cookies whose
/// value is a JWT; each with what to call it.
fn expiring_tokens(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut tokens = Vec::new();
    if let Some(value) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok())
        && let Some((scheme, token)) = value.split_once(' ')
        && scheme.eq_ignore_ascii_case("bearer")
    {
        tokens.push(("the bearer token".to_string(), token.trim().to_string()));
    }
    for value in headers.get_all(COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        for pair in text.split(';') {
            if let Some((name, value)) = pair.split_once('=') {
                tokens.push((
                    format!("the cookie {}", name.trim()),
                    value.trim().to_string(),
                ));
            }
        }
    }
    tokens
}

/// Refuses a JWT that expires before the run's estimated end, and warns about one that
/// expires within [`EXPIRY_WARNING_MARGIN`] of it. Tokens that are not JWTs pass.
pub fn check_expiry(
    headers: &HeaderMap,
    now: SystemTime,
    run_length: Duration,
) -> Result<Vec<Note>> {
    let mut warnings = Vec::new();
    for (what, token) in expiring_tokens(headers) {
        if let Some(expires) = jwt::expires_at(&token) {
            warnings.extend(judge_expiry(&what, expires, now, run_length)?);
        }
    }
    Ok(warnings)
}

/// `2024-05-01 12:00:00 UTC`.
fn utc(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .replace('T', " ")
        .replace('Z', " UTC")
}

fn whole_seconds(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs().max(1))).to_string()
}

/// The verdict on one token: refused (an error), warned about, or fine.
pub fn judge_expiry(
    what: &str,
    expires: SystemTime,
    now: SystemTime,
    run_length: Duration,
) -> Result<Option<Note>> {
    let end = now + run_length;
    let hint = "use a token that outlives the run: mint a fresh one (--jwt-ttl sets a minted \
                token's lifetime), or shorten the run with a smaller -n, --warmup or \
                --settle-timeout";
    if let Ok(ago) = now.duration_since(expires) {
        return Err(Error::usage(format!(
            "{what} expired at {} ({} ago)",
            utc(expires),
            whole_seconds(ago)
        ))
        .with_hint(hint));
    }
    let left = expires.duration_since(now).unwrap_or_default();
    if expires <= end {
        return Err(Error::usage(format!(
            "{what} expires at {} (in {}), before this run is likely to end (up to {} from now)",
            utc(expires),
            whole_seconds(left),
            whole_seconds(run_length)
        ))
        .with_hint(hint));
    }
    if expires <= end + EXPIRY_WARNING_MARGIN {
        return Ok(Some(Note::TokenExpiresSoon {
            token: what.to_string(),
            expires_at: humantime::format_rfc3339_seconds(expires).to_string(),
            expires_in_seconds: left.as_secs(),
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
