//! A throwaway PostgreSQL cluster: found binaries, initdb into a temporary directory,
//! started on a free loopback port, removed on drop; and a streaming hot standby of one.
//! Used by the demo and the tests.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// The audit settings every throwaway cluster runs with (also used by docker-compose.yml).
pub const AUDIT_SETTINGS: &str = include_str!("../../sql/cluster_settings.conf");

/// `name = value` pairs of [`AUDIT_SETTINGS`], quotes removed.
pub fn audit_settings() -> Vec<(String, String)> {
    AUDIT_SETTINGS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            (
                k.trim().to_string(),
                v.trim().trim_matches('\'').to_string(),
            )
        })
        .collect()
}

const MISSING_BINARIES_HINT: &str = "install the PostgreSQL server: Debian/Ubuntu `apt-get install \
postgresql postgresql-contrib`, Fedora `dnf install postgresql-server postgresql-contrib`, macOS \
`brew install postgresql@17`; or set PGCOST_PG_BIN to the directory holding initdb, or run \
`docker compose up -d` and audit that server instead";

fn has_server_binaries(dir: &Path) -> bool {
    ["initdb", "pg_ctl", "postgres"]
        .iter()
        .all(|b| dir.join(b).is_file())
}

/// Finds `initdb`, `pg_ctl` and `postgres`: `PGCOST_PG_BIN`, then `PATH`, then
/// `pg_config --bindir`, then the newest `/usr/lib/postgresql/*/bin`.
pub fn find_bin_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PGCOST_PG_BIN") {
        let dir = PathBuf::from(dir);
        if has_server_binaries(&dir) {
            return Ok(dir);
        }
        return Err(Error::usage(format!(
            "PGCOST_PG_BIN={} does not hold initdb, pg_ctl and postgres",
            dir.display()
        )));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if initdb.is_file() {
                let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
                if let Some(parent) = real.parent().filter(|d| has_server_binaries(d)) {
                    return Ok(parent.to_path_buf());
                }
            }
        }
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_server_binaries(&dir) {
            return Ok(dir);
        }
    }
    let mut candidates: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            has_server_binaries(&bin).then_some((major, bin))
        })
        .collect();
    candidates.sort();
    candidates.pop().map(|(_, dir)| dir).ok_or_else(|| {
        Error::usage("no PostgreSQL server binaries found (initdb, pg_ctl, postgres)")
            .with_hint(MISSING_BINARIES_HINT)
    })
}

/// Postgres refuses to run as root: when root, run it as the `postgres` OS user.
fn run_as() -> Result<Option<(u32, u32)>> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    match nix::unistd::User::from_name("postgres") {
        Ok(Some(user)) => Ok(Some((user.uid.as_raw(), user.gid.as_raw()))),
        _ => Err(Error::usage(
            "running as root, and there is no `postgres` OS user to run the server as",
        )
        .with_hint("create one (useradd --system postgres) or run as an ordinary user")),
    }
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::usage(format!("cannot find a free loopback port: {e}")))?;
    Ok(listener
        .local_addr()
        .map_err(|e| Error::usage(e.to_string()))?
        .port())
}

/// Runs `command` (the program `name`) to its end; a failure is a setup error with its
/// stderr.
fn run_to_success(name: &str, mut command: Command) -> Result<()> {
    let out = (command.output()).map_err(|e| Error::usage(format!("cannot run {name}: {e}")))?;
    if !out.status.success() {
        return Err(Error::usage(format!(
            "{name} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// A running throwaway cluster. Dropping it stops the server and deletes its directory.
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
    owner: Option<(u32, u32)>,
    running: bool,
}

impl Cluster {
    /// Runs initdb and starts the server with the audit settings plus `extra` settings.
    pub fn start(extra: &[(&str, &str)]) -> Result<Cluster> {
        let mut cluster = Cluster::unstarted(find_bin_dir()?, run_as()?)?;
        cluster.init()?;
        cluster.launch_on_a_free_port(extra)?;
        Ok(cluster)
    }

    /// A streaming hot standby of this cluster: `pg_basebackup -R` over loopback (initdb's
    /// pg_hba.conf allows replication from 127.0.0.1), started on a free port with the
    /// audit settings plus `extra`. It stops and is deleted on drop, as this one is.
    pub fn start_standby(&self, extra: &[(&str, &str)]) -> Result<Cluster> {
        let mut standby = Cluster::unstarted(self.bin.clone(), self.owner)?;
        standby.own_dir()?;
        let mut basebackup = standby.command("pg_basebackup");
        basebackup
            .arg("-D")
            .arg(standby.data_dir())
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-R", "-X", "stream", "-c", "fast"]);
        run_to_success("pg_basebackup", basebackup)?;
        standby.launch_on_a_free_port(extra)?;
        Ok(standby)
    }

    /// A cluster in a new temporary directory, neither initialised nor started.
    fn unstarted(bin: PathBuf, owner: Option<(u32, u32)>) -> Result<Cluster> {
        let dir = tempfile::Builder::new()
            .prefix("pgcost-cluster-")
            .tempdir()
            .map_err(|e| Error::usage(format!("cannot create a temporary directory: {e}")))?
            .keep();
        Ok(Cluster {
            bin,
            dir,
            port: 0,
            owner,
            running: false,
        })
    }

    fn launch_on_a_free_port(&mut self, extra: &[(&str, &str)]) -> Result<()> {
        let mut last = None;
        for _ in 0..3 {
            self.port = free_port()?;
            match self.launch(extra) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("three attempts"))
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The directory holding the server's Unix socket and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.owner {
            cmd.uid(uid).gid(gid);
        }
        cmd.current_dir(&self.dir).stdin(Stdio::null());
        cmd
    }

    /// The directory, readable by its owner only and handed to the postgres OS user.
    fn own_dir(&self) -> Result<()> {
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700)).map_err(
            |e| {
                Error::usage(format!(
                    "cannot set permissions on {}: {e}",
                    self.dir.display()
                ))
            },
        )?;
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(&self.dir, Some(uid), Some(gid)).map_err(|e| {
                Error::usage(format!(
                    "cannot hand {} to the postgres user: {e}",
                    self.dir.display()
                ))
            })?;
        }
        Ok(())
    }

    fn init(&mut self) -> Result<()> {
        self.own_dir()?;
        let mut initdb = self.command("initdb");
        initdb.args(["-D"]).arg(self.data_dir()).args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ]);
        run_to_success("initdb", initdb)
    }

    fn launch(&mut self, extra: &[(&str, &str)]) -> Result<()> {
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories={} \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
             -c shared_buffers=32MB -c max_connections=100 -c autovacuum=off",
            self.port,
            self.dir.display()
        );
        for (key, value) in audit_settings() {
            options.push_str(&format!(" -c {key}={value}"));
        }
        for (key, value) in extra {
            options.push_str(&format!(" -c {key}={value}"));
        }
        let log = self.dir.join("server.log");
        let status = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o", &options, "start"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| Error::usage(format!("cannot run pg_ctl: {e}")))?;
        if !status.success() {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            return Err(Error::usage(format!(
                "the throwaway PostgreSQL server did not start: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )));
        }
        self.running = true;
        Ok(())
    }

    /// `postgres://postgres@127.0.0.1:PORT/DB`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Restarts the server in place (fast shutdown, then start with the same settings).
    pub fn restart(&self) -> Result<()> {
        let status = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-m", "fast", "-w", "-t", "60", "restart"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| Error::usage(format!("cannot run pg_ctl: {e}")))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::usage("pg_ctl restart failed"))
        }
    }

    /// Stops the server and deletes the directory. Idempotent. The shutdown is immediate:
    /// the directory is deleted next, so the shutdown checkpoint of a fast one is wasted.
    pub fn stop(&mut self) {
        if self.running {
            let _ = self
                .command("pg_ctl")
                .arg("-D")
                .arg(self.data_dir())
                .args(["-m", "immediate", "-w", "-t", "30", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            self.running = false;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_file_parses() {
        let settings = audit_settings();
        assert!(settings.contains(&(
            "shared_preload_libraries".into(),
            "pg_stat_statements".into()
        )));
        assert!(settings.contains(&("pg_stat_statements.track".into(), "all".into())));
    }
}
