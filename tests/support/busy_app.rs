//! A CPU-bound app with no database, whose wall is the app by construction: one thread (a
//! single-threaded runtime) burns [`BUSY`] of its own CPU time per request. It runs in a
//! child process of its own, this test binary started again, so that `pgcost ramp --pid`
//! sees the app alone: neither the test's other children (CPU hogs, pgcost itself) nor its
//! threads.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use axum::Router;
use axum::routing::get;

/// CPU each request burns: long beside a loopback round trip.
pub const BUSY: Duration = Duration::from_millis(10);
/// Set in the child's environment: serve, rather than return at once.
const CHILD: &str = "PGCOST_BUSY_APP_CHILD";

/// Serves the app when this process is the child [`BusyApp::start`] started; returns at
/// once otherwise. A test binary that uses [`BusyApp`] calls it from an ignored test,
/// whose name it passes to [`BusyApp::start`].
pub fn serve_if_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    // A test killed before it could drop its BusyApp leaves this process to a new parent:
    // it then stops too.
    let parent = std::os::unix::process::parent_id();
    std::thread::spawn(move || {
        while std::os::unix::process::parent_id() == parent {
            std::thread::sleep(Duration::from_millis(200));
        }
        std::process::exit(0);
    });
    let runtime = (tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build())
    .unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        // Written past libtest's capture of println!, which would hold the line back.
        let port = listener.local_addr().unwrap().port();
        let mut stdout = std::io::stdout();
        stdout
            .write_all(format!("PORT={port}\n").as_bytes())
            .unwrap();
        stdout.flush().unwrap();
        let app = Router::new().route("/busy", get(burn));
        axum::serve(listener, app).await.unwrap();
    });
}

/// [`BUSY`] of this thread's CPU time, however long the host makes it wait for it.
async fn burn() -> &'static str {
    let until = cpu_of_this_thread() + BUSY;
    while cpu_of_this_thread() < until {
        std::hint::spin_loop();
    }
    "done"
}

/// `CLOCK_THREAD_CPUTIME_ID`.
fn cpu_of_this_thread() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The app's child process, killed when dropped.
pub struct BusyApp {
    child: Child,
    pub port: u16,
}

impl BusyApp {
    /// Starts this test binary again, running only `child_test`, the ignored test that
    /// calls [`serve_if_child`], and waits for the port it serves on.
    pub fn start(child_test: &str) -> BusyApp {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([child_test, "--exact", "--ignored", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(CHILD, "1")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let port = (stdout.lines().map_while(Result::ok))
            .find_map(|line| Some(line.split("PORT=").nth(1)?.trim().parse().unwrap()))
            .expect("the app child prints its port");
        BusyApp { child, port }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/busy", self.port)
    }
}

impl Drop for BusyApp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
