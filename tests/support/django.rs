//! A real Django site for the tests that measure one (tests/django_tags.rs,
//! tests/django_drf.rs, the survey fixture of tests/support/survey_app.rs): its Python
//! packages checked, with a loud failure when one is missing; its database created on the
//! test's cluster and migrated with `manage.py migrate`; and gunicorn serving it (sync
//! workers, one persistent connection each) in a process group of its own, which dropping
//! the server stops, also when the test panics; with its access log when a test needs the
//! traffic it served as a log.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::TestDb;

/// A Django project of tests/fixtures.
pub struct Site {
    /// The project's folder, from the crate's root (`tests/fixtures/django_tags`).
    pub dir: &'static str,
    /// `DJANGO_SETTINGS_MODULE`.
    pub settings: &'static str,
    /// The WSGI application gunicorn serves (`library_site.wsgi:application`).
    pub wsgi: &'static str,
    /// The database the site uses, on the test's cluster.
    pub database: &'static str,
}

/// Runs `python3 -c IMPORTS` and returns what it printed (the versions it prints), or fails
/// the test, naming the `packages` it needs and the `pins` `.ci/run` installs.
pub fn require_packages(imports: &str, packages: &str, pins: &str) -> String {
    let output = Command::new("python3").args(["-c", imports]).output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap().trim().into(),
        other => panic!(
            "this test needs {packages} for python3: run the install step of .ci/run \
             (pip3 install {pins}); got {other:?}"
        ),
    }
}

impl Site {
    fn project(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(self.dir)
    }

    /// `python3 ARGS` in the project, pointed at the site's database on `db`'s cluster.
    pub fn python(&self, db: &TestDb) -> Command {
        let mut cmd = Command::new("python3");
        cmd.current_dir(self.project())
            .env("DJANGO_DB_NAME", self.database)
            .env("DJANGO_DB_USER", "postgres")
            .env("DJANGO_DB_HOST", "127.0.0.1")
            .env("DJANGO_DB_PORT", db.cluster.port.to_string())
            .env("DJANGO_SETTINGS_MODULE", self.settings)
            // No __pycache__ left in the source tree.
            .env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    }

    /// Creates the site's database with pg_stat_statements, and its tables (`manage.py
    /// migrate`); returns a connection to it, for the test's rows.
    pub async fn create_database(&self, db: &TestDb) -> tokio_postgres::Client {
        let admin = db.connect("postgres").await;
        (admin.batch_execute(&format!("CREATE DATABASE {}", self.database)))
            .await
            .unwrap();
        let migrate = (self.python(db))
            .args(["manage.py", "migrate", "--verbosity", "0"])
            .output()
            .unwrap();
        assert!(migrate.status.success(), "manage.py migrate: {migrate:?}");
        let site = db.connect(self.database).await;
        (site.batch_execute("CREATE EXTENSION pg_stat_statements"))
            .await
            .unwrap();
        site
    }
}

/// gunicorn serving a site, in a process group of its own: dropping it stops the master
/// and its workers, also when the test panics.
pub struct Gunicorn {
    child: Child,
    pub group: Pid,
    port: u16,
    log: PathBuf,
}

impl Gunicorn {
    /// Two sync workers on a free loopback port, stderr to `log`; returns once `probe` (a
    /// path, sent with `headers`) answers 2xx.
    pub async fn start(
        site: &Site,
        db: &TestDb,
        log: PathBuf,
        probe: &str,
        headers: &[(&str, &str)],
    ) -> Gunicorn {
        Gunicorn::start_logging(site, db, log, None, probe, headers).await
    }

    /// As [`Gunicorn::start`], and with `access_log`, gunicorn's own access log written
    /// there (`--access-logfile`, its default format: Apache's combined, the status after
    /// the quoted request line). The probe's requests are not traffic: the access log is
    /// emptied once their lines are in, before this returns.
    pub async fn start_logging(
        site: &Site,
        db: &TestDb,
        log: PathBuf,
        access_log: Option<&Path>,
        probe: &str,
        headers: &[(&str, &str)],
    ) -> Gunicorn {
        let port = super::closed_port();
        let mut command = site.python(db);
        command.args(["-m", "gunicorn", "--workers", "2", "--worker-class", "sync"]);
        if let Some(access_log) = access_log {
            command.arg("--access-logfile").arg(access_log);
        }
        let child = command
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .arg(site.wsgi)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("python3 -m gunicorn starts");
        let group = Pid::from_raw(child.id() as i32);
        let mut server = Gunicorn {
            child,
            group,
            port,
            log,
        };
        let answered = server.wait_until_it_answers(probe, headers).await;
        if let Some(access_log) = access_log {
            server.forget_probes(access_log, answered).await;
        }
        server
    }

    /// Waits for the `answered` probes' lines (gunicorn writes a line once its response is
    /// sent), then empties the access log; the workers append (`O_APPEND`), so the next
    /// line starts the file.
    async fn forget_probes(&self, access_log: &Path, answered: usize) {
        let started = Instant::now();
        let lines = || std::fs::read_to_string(access_log).map_or(0, |t| t.lines().count());
        while lines() < answered {
            if started.elapsed() > Duration::from_secs(10) {
                panic!("gunicorn logged no access line for its {answered} probes");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        std::fs::File::create(access_log).unwrap();
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Returns how many probes got an answer (each is a line of the access log).
    async fn wait_until_it_answers(&mut self, probe: &str, headers: &[(&str, &str)]) -> usize {
        let started = Instant::now();
        let client = reqwest::Client::new();
        let page = self.url(probe);
        let mut answered = 0;
        loop {
            let mut request = client.get(&page);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            if let Ok(response) = request.send().await {
                answered += 1;
                if response.status().is_success() {
                    return answered;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("gunicorn exited ({status}):\n{}", self.log());
            }
            if started.elapsed() > Duration::from_secs(60) {
                panic!("gunicorn did not answer in 60 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether any process of the group is left.
    pub fn any_left(&self) -> bool {
        killpg(self.group, None).is_ok()
    }
}

impl Drop for Gunicorn {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers, then itself; SIGKILL whatever is left.
        let _ = killpg(self.group, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.any_left() && Instant::now() < deadline {
            let _ = self.child.try_wait();
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = killpg(self.group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}
