//! pgcost.toml and the flags of `pgcost check`, validated into one `CheckConfig`: each
//! endpoint is mapped onto the raw groups of `pgcost audit`'s flags (`crate::flags`) and
//! checked by the same `AuditConfig::from_raw` as the flags, so every key means the same
//! here as its flag does on the command line.

mod baseline;
mod credentials;
mod files;
mod mapping;
mod schema;
mod spanned;
mod vars;

#[cfg(test)]
mod ack_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use baseline::Baseline;
pub use credentials::credential_options;
pub use schema::{
    AckTable, Auth, CommandLoad, Database, Defaults, Endpoint, EndpointTable, File, Overrides,
};
pub use vars::expand_vars;

use super::previous_run::PreviousRun;
use crate::error::{Error, Result};
use crate::flags::{CheckArgs, DEFAULT_CONFIG};
use crate::postgres::conninfo::EnvLookup;
use crate::render::format::{CHECK_FORMATS, Outputs};
use crate::values::parse_percent;
use mapping::Shared;
use pgcost_core::source::ConfigLines;
use spanned::{Source, check_endpoint};

/// Everything `check::run` needs, already checked: the endpoints of the file and the
/// flags of the command.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub path: PathBuf,
    pub endpoints: Vec<Endpoint>,
    /// `--format` and `-o`, and every `--export`.
    pub outputs: Outputs,
    pub baseline: Option<Baseline>,
    /// `--max-regression`, in percent.
    pub max_regression_percent: Option<f64>,
    pub write_baseline: Option<PathBuf>,
    pub quiet: bool,
}

impl CheckConfig {
    /// Validates the flags, loads pgcost.toml and the baseline: every usage error comes
    /// out here, before anything is measured.
    pub fn from_args(args: &CheckArgs, env: EnvLookup<'_>) -> Result<CheckConfig> {
        let max_regression = args.max_regression.as_deref();
        let max_regression_percent = max_regression.map(parse_percent).transpose()?;
        let overrides = Overrides {
            base_url: args.base.base_url.clone(),
            only: args.endpoints.clone(),
            source: args.source.source.clone(),
        };
        let path = args.file.config.clone().unwrap_or(DEFAULT_CONFIG.into());
        let mut endpoints = load(&path, &overrides, env)?;
        // --no-plans and --no-tags hold for every audit: the endpoints' and their scale points'.
        let off = |audit: &mut crate::config::AuditConfig| {
            audit.plans &= !args.plans.no_plans;
            audit.tags &= !args.source.no_tags;
        };
        for endpoint in &mut endpoints {
            off(&mut endpoint.audit);
            for (_, point) in endpoint.scale.iter_mut().flat_map(|s| &mut s.points) {
                off(point);
            }
        }
        // Read before measuring: a bad baseline should not cost a minute of waiting.
        let baseline = match &args.baseline {
            Some(path) => {
                let baseline = Baseline {
                    origin: path.display().to_string(),
                    run: PreviousRun::load(path)?,
                };
                baseline.check_endpoints(&endpoints)?;
                Some(baseline)
            }
            None => None,
        };
        Ok(CheckConfig {
            path,
            endpoints,
            outputs: crate::config::outputs_from_args(&args.output, CHECK_FORMATS)?,
            baseline,
            max_regression_percent,
            write_baseline: args.write_baseline.clone(),
            quiet: args.output.quiet,
        })
    }
}

/// Parses the text of a pgcost.toml; errors carry `origin:line:column`.
pub fn parse(text: &str, origin: &str) -> Result<File> {
    let source = Source {
        origin: origin.to_string(),
        text,
    };
    let mut file: File = toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end().replace('\n', "; ");
        let hint = if message.contains("unknown field") && message.contains("bearer_env") {
            "[auth] takes secrets only by variable name or file (bearer_env, bearer_file, \
             basic_password_env, jwt_secret_env, ...), never inline"
        } else {
            "the keys are described in `pgcost docs ci`"
        };
        source.at(e.span(), message).with_hint(hint)
    })?;
    if file.endpoints.is_empty() {
        return Err(source
            .at(None, "there is no [[endpoint]] to check")
            .with_hint("add [[endpoint]] tables with name, method and path"));
    }
    let mut seen = BTreeMap::new();
    let mut acks = Vec::with_capacity(file.endpoints.len());
    for endpoint in &file.endpoints {
        acks.push(check_endpoint(&source, endpoint, &mut seen)?);
    }
    // Validated once, here; `build` takes them from the tables.
    for (endpoint, acks) in file.endpoints.iter_mut().zip(acks) {
        endpoint.acks = acks;
    }
    if let Some(url) = &file.database.url
        && url
            .get_ref()
            .parse::<tokio_postgres::Config>()
            .is_ok_and(|c| c.get_password().is_some())
    {
        return Err(source
            .at(Some(url.span()), "[database] url contains a password")
            .with_hint("name a variable that holds the URL (url_env), or use PGPASSWORD"));
    }
    Ok(file)
}

/// Loads and validates the file at `path`, and builds the selected endpoints.
pub fn load(path: &Path, overrides: &Overrides, env: EnvLookup<'_>) -> Result<Vec<Endpoint>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", path.display()))
            .with_hint("pass --config PATH, or run pgcost check where pgcost.toml is")
    })?;
    let origin = path.display().to_string();
    let file = parse(&text, &origin)?;
    let base_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    build(&file, &text, &origin, base_dir, overrides, env)
}

/// Builds one `AuditConfig` per selected endpoint of a parsed file. Relative file paths
/// are taken from `base_dir`, the file's directory.
pub fn build(
    file: &File,
    text: &str,
    origin: &str,
    base_dir: &Path,
    overrides: &Overrides,
    env: EnvLookup<'_>,
) -> Result<Vec<Endpoint>> {
    let source = Source {
        origin: origin.to_string(),
        text,
    };
    mapping::check_selection(file, origin, overrides)?;
    let shared = Shared::new(file, &source, base_dir, overrides, env)?;
    let uri = relative_uri(origin);
    file.endpoints
        .iter()
        .filter(|t| overrides.only.is_empty() || overrides.only.contains(t.name.get_ref()))
        .map(|table| {
            let mut endpoint = mapping::endpoint(&shared, table, origin, env)?;
            let lines = ConfigLines::of(&uri, text, table.name.span().start);
            endpoint.budget.lines = Some(lines);
            Ok(endpoint)
        })
        .collect()
}

/// pgcost.toml's path for annotations: relative to the working directory when under it
/// (GitHub wants paths relative to the checkout), `/` separators.
fn relative_uri(origin: &str) -> String {
    let path = Path::new(origin);
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let parts: Vec<String> = (relative.components())
        .filter(|c| {
            !matches!(
                c,
                std::path::Component::RootDir | std::path::Component::CurDir
            )
        })
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
