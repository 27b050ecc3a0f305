//! Where the database is: `--db`, then `DATABASE_URL`, then the libpq variables; and how
//! to show it without its password.

use std::path::Path;

use tokio_postgres::config::{Config, Host};

use crate::error::{Error, Result};
use crate::tls::{SslMode, TlsSettings, split_tls_options};

/// A resolved connection target.
#[derive(Clone)]
pub struct DbTarget {
    pub config: Config,
    pub dbname: String,
    pub tls: TlsSettings,
}

impl std::fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Reads one environment variable; injectable so that resolution is testable.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Builds the target from `--db` (URL or key=value), `DATABASE_URL`, then `PG*` variables.
/// As in libpq, the `PG*` variables also fill whatever the URL leaves out.
pub fn resolve(db_arg: Option<&str>, env: EnvLookup<'_>) -> Result<DbTarget> {
    let from_env = env("DATABASE_URL").filter(|s| !s.is_empty());
    let (text, origin) = match (db_arg, from_env.as_deref()) {
        (Some(arg), _) => (Some(arg.to_string()), "--db"),
        (None, Some(url)) => (Some(url.to_string()), "DATABASE_URL"),
        (None, None) => (None, "the PG* environment variables"),
    };
    // tokio-postgres knows neither verify-ca/verify-full nor sslrootcert: take them out.
    let (text, url_sslmode, url_rootcert) = match text {
        Some(text) => {
            let (rest, mode, root) = split_tls_options(&text);
            (Some(rest), mode, root)
        }
        None => (None, None, None),
    };
    let mut config = match &text {
        Some(text) => parse_connection_string(text, origin)?,
        None => Config::new(),
    };
    fill_from_environment(&mut config, env)?;
    let tls = tls_settings(url_sslmode, url_rootcert, env)?;
    config.ssl_mode(tls.mode.transport());
    if config.get_application_name().is_none() {
        config.application_name("pgcost");
    }
    let dbname = config.get_dbname().unwrap_or_default().to_string();
    Ok(DbTarget {
        config,
        dbname,
        tls,
    })
}

fn parse_connection_string(text: &str, origin: &str) -> Result<Config> {
    text.parse::<Config>().map_err(|e| {
        Error::usage(format!("{origin} is not a valid connection string: {e}")).with_hint(
            "use postgres://user@host:5432/dbname or 'host=... port=... user=... dbname=...'",
        )
    })
}

/// Fills what the connection string left out from `PGHOST`, `PGPORT`, `PGUSER` (or
/// `USER`), `PGPASSWORD` and `PGDATABASE`, as libpq does.
fn fill_from_environment(config: &mut Config, env: EnvLookup<'_>) -> Result<()> {
    if config.get_hosts().is_empty() {
        fill_host(config, env);
    }
    if config.get_ports().is_empty()
        && let Some(port) = env("PGPORT").filter(|s| !s.is_empty())
    {
        let port: u16 = port
            .parse()
            .map_err(|_| Error::usage(format!("PGPORT is not a port number: {port:?}")))?;
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::usage("no database user given")
                    .with_hint("set PGUSER or put the user in --db")
            })?;
        config.user(&user);
    }
    if config.get_password().is_none()
        && let Some(password) = env("PGPASSWORD")
    {
        config.password(password);
    }
    if config.get_dbname().is_none() {
        let dbname = env("PGDATABASE")
            .filter(|s| !s.is_empty())
            .or_else(|| config.get_user().map(str::to_string))
            .unwrap_or_default();
        config.dbname(&dbname);
    }
    Ok(())
}

/// `PGHOST` (comma-separated), else the first local socket directory, else localhost.
fn fill_host(config: &mut Config, env: EnvLookup<'_>) {
    match env("PGHOST").filter(|s| !s.is_empty()) {
        Some(hosts) => {
            for host in hosts.split(',') {
                config.host(host);
            }
        }
        None => {
            let socket_dir = ["/var/run/postgresql", "/tmp"]
                .into_iter()
                .find(|d| Path::new(d).is_dir());
            match socket_dir {
                Some(dir) => config.host_path(dir),
                None => config.host("localhost"),
            };
        }
    }
}

/// `sslmode` and `sslrootcert` from the connection string, else `PGSSLMODE` and
/// `PGSSLROOTCERT`, else prefer and `~/.postgresql/root.crt` when it exists.
fn tls_settings(
    url_sslmode: Option<String>,
    url_rootcert: Option<String>,
    env: EnvLookup<'_>,
) -> Result<TlsSettings> {
    let mode = match url_sslmode.or_else(|| env("PGSSLMODE").filter(|s| !s.is_empty())) {
        Some(mode) => SslMode::parse(&mode)?,
        None => SslMode::Prefer,
    };
    let root_cert = url_rootcert
        .or_else(|| env("PGSSLROOTCERT").filter(|s| !s.is_empty()))
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let default = Path::new(&env("HOME")?).join(".postgresql/root.crt");
            default.is_file().then_some(default)
        });
    Ok(TlsSettings { mode, root_cert })
}

/// Refuses a database named twice among the `--db` and `--replica` targets: it would be
/// counted twice.
pub fn check_distinct(first: &DbTarget, more: &[DbTarget]) -> Result<()> {
    let all: Vec<&DbTarget> = std::iter::once(first).chain(more).collect();
    for (i, target) in all.iter().enumerate() {
        let same =
            |other: &&&DbTarget| other.server() == target.server() && other.dbname == target.dbname;
        if all[..i].iter().any(|other| same(&other)) {
            return Err(Error::usage(format!(
                "the database {:?} on {} is named twice (--db, --replica): each database is \
                 one node, measured once",
                target.dbname,
                target.server()
            ))
            .with_hint("give each database the request touches one --db or --replica"));
        }
    }
    Ok(())
}

impl DbTarget {
    /// The same server and credentials, another database.
    pub fn with_dbname(&self, dbname: &str) -> DbTarget {
        let mut config = self.config.clone();
        config.dbname(dbname);
        DbTarget {
            config,
            dbname: dbname.to_string(),
            tls: self.tls.clone(),
        }
    }

    /// `host:port`: which server the target is on.
    pub fn server(&self) -> String {
        let redacted = self.redacted();
        let after_user = redacted.rsplit_once('@').map_or("", |(_, rest)| rest);
        let end = after_user.rfind('/').unwrap_or(after_user.len());
        after_user[..end].to_string()
    }

    /// `postgres://user@host:port/dbname`, never with the password.
    pub fn redacted(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(Host::Unix(p)) => p.display().to_string(),
            None => String::new(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let user = self.config.get_user().unwrap_or("");
        format!("postgres://{user}@{host}:{port}/{}", self.dbname)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    #[test]
    fn url_wins_and_env_fills_the_gaps() {
        let env = env_of(&[
            ("PGPASSWORD", "s3cret"),
            ("DATABASE_URL", "postgres://x@y/z"),
        ]);
        let t = resolve(Some("postgres://app@db.local:6543/shop"), &env).unwrap();
        assert_eq!(t.dbname, "shop");
        assert_eq!(t.config.get_password(), Some(&b"s3cret"[..]));
        assert_eq!(t.redacted(), "postgres://app@db.local:6543/shop");
    }

    #[test]
    fn database_url_then_libpq_variables() {
        let env = env_of(&[("DATABASE_URL", "postgres://u:pw@h:1/d")]);
        let t = resolve(None, &env).unwrap();
        assert_eq!(t.redacted(), "postgres://u@h:1/d");
        let env = env_of(&[
            ("PGHOST", "h2"),
            ("PGPORT", "7"),
            ("PGUSER", "bob"),
            ("PGDATABASE", "b"),
        ]);
        let t = resolve(None, &env).unwrap();
        assert_eq!(t.redacted(), "postgres://bob@h2:7/b");
    }

    #[test]
    fn key_value_strings_parse() {
        let env = env_of(&[]);
        let t = resolve(Some("host=h port=5433 user=u dbname=d password=pw"), &env).unwrap();
        assert_eq!(t.redacted(), "postgres://u@h:5433/d");
        assert!(!format!("{t:?}").contains("pw"));
    }

    #[test]
    fn malformed_input_is_a_usage_error_without_the_secret() {
        let env = env_of(&[]);
        let err = resolve(Some("postgres://u:topsecret@h:notaport/d"), &env).unwrap_err();
        assert!(err.message.contains("not a valid connection string"));
        assert!(!err.message.contains("topsecret"));
        let err = resolve(None, &env_of(&[("PGPORT", "abc"), ("PGUSER", "u")])).unwrap_err();
        assert!(err.message.contains("PGPORT"));
    }

    #[test]
    fn sslmode_and_root_certificate_from_url_or_environment() {
        let env = env_of(&[("PGSSLMODE", "require"), ("PGSSLROOTCERT", "/env/ca.pem")]);
        let t = resolve(
            Some("postgres://u@h/d?sslmode=verify-full&sslrootcert=/url/ca.pem"),
            &env,
        )
        .unwrap();
        assert_eq!(t.tls.mode, SslMode::VerifyFull);
        assert_eq!(t.tls.root_cert.as_deref(), Some(Path::new("/url/ca.pem")));
        let t = resolve(Some("postgres://u@h/d"), &env).unwrap();
        assert_eq!(t.tls.mode, SslMode::Require);
        assert_eq!(t.tls.root_cert.as_deref(), Some(Path::new("/env/ca.pem")));
        let t = resolve(Some("host=h user=u sslmode=disable"), &env_of(&[])).unwrap();
        assert_eq!(t.tls.mode, SslMode::Disable);
        assert!(resolve(Some("postgres://u@h/d?sslmode=maybe"), &env_of(&[])).is_err());
    }

    #[test]
    fn admin_target_keeps_credentials() {
        let env = env_of(&[]);
        let t = resolve(Some("postgres://u:pw@h/app"), &env).unwrap();
        let admin = t.with_dbname("postgres");
        assert_eq!(admin.redacted(), "postgres://u@h:5432/postgres");
        assert_eq!(admin.config.get_password(), Some(&b"pw"[..]));
    }
}
