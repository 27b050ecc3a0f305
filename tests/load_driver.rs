//! The load driver against a hand-written loopback HTTP/1.1 server that counts its
//! connections and records what it was sent: keep-alive, servers that close connections
//! (with or without saying so), exact counts, timeouts, and the bytes of the request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::ProgressBar;
use pgcost::http::connection::Driver;
use pgcost::http::load;
use pgcost::http::request::RequestSpec;
use pgcost::http::rotation::Target;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// 204 on every request, connection kept open.
    KeepAlive,
    /// 200 with `Connection: close`, then closes.
    CloseEach,
    /// 204 without saying anything, then closes (a server whose keep-alive ran out).
    CloseSilently,
    /// Reads requests but never answers.
    Hang,
    /// Answers every request with these pieces, written one at a time with a pause between
    /// them so that the client reads them apart; an empty last piece closes the connection.
    Script(&'static [&'static [u8]]),
    /// 204 to the first this many requests (over all connections), then silence.
    AnswerThenHang(usize),
    /// 204 on every request, and a close after this many milliseconds without one (the
    /// keep-alive timeout of Node, nginx and most servers).
    IdleClose(u64),
}

struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
    /// The raw request heads and bodies received, in order.
    requests: Arc<Mutex<Vec<String>>>,
}

async fn serve(mode: Mode) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let server = Server {
        port,
        accepted: accepted.clone(),
        requests: requests.clone(),
    };
    let answered = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            accepted.fetch_add(1, Ordering::SeqCst);
            let requests = requests.clone();
            let answered = answered.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let idle = match mode {
                        Mode::IdleClose(ms) => Duration::from_millis(ms),
                        _ => Duration::from_secs(3600),
                    };
                    match tokio::time::timeout(idle, socket.read(&mut chunk)).await {
                        Ok(Ok(0) | Err(_)) => return,
                        Ok(Ok(n)) => buffer.extend_from_slice(&chunk[..n]),
                        Err(_) => {
                            let _ = socket.shutdown().await;
                            return;
                        }
                    }
                    while let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buffer[..end]).to_string();
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if buffer.len() < end + 4 + length {
                            break;
                        }
                        let body = String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]);
                        requests
                            .lock()
                            .unwrap()
                            .push(format!("{head}\r\n\r\n{body}"));
                        buffer.drain(..end + 4 + length);
                        let reply: &[u8] = match mode {
                            Mode::KeepAlive | Mode::IdleClose(_) => {
                                b"HTTP/1.1 204 No Content\r\n\r\n"
                            }
                            Mode::CloseEach => {
                                b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
                            }
                            Mode::CloseSilently => b"HTTP/1.1 204 No Content\r\n\r\n",
                            Mode::Hang => continue,
                            Mode::Script(pieces) => {
                                for piece in pieces {
                                    if piece.is_empty() {
                                        let _ = socket.shutdown().await;
                                        return;
                                    }
                                    if socket.write_all(piece).await.is_err() {
                                        return;
                                    }
                                    tokio::time::sleep(Duration::from_millis(2)).await;
                                }
                                continue;
                            }
                            Mode::AnswerThenHang(count) => {
                                if answered.fetch_add(1, Ordering::SeqCst) >= count {
                                    continue;
                                }
                                b"HTTP/1.1 204 No Content\r\n\r\n"
                            }
                        };
                        if socket.write_all(reply).await.is_err() {
                            return;
                        }
                        if matches!(mode, Mode::CloseEach | Mode::CloseSilently) {
                            let _ = socket.shutdown().await;
                            return;
                        }
                    }
                }
            });
        }
    });
    server
}

fn spec(url: &str) -> RequestSpec {
    RequestSpec {
        url: Url::parse(url).unwrap(),
        method: Method::GET,
        headers: HeaderMap::new(),
        body: None,
        timeout: Duration::from_secs(10),
        error_rule: Default::default(),
        data: None,
    }
}

/// A GET of `/` on `server`.
fn root_of(server: &Server) -> Arc<Driver> {
    let url = format!("http://127.0.0.1:{}/", server.port);
    Arc::new(Driver::new(&spec(&url), None).unwrap())
}

/// A stop signal raised after `delay`.
fn raised_after(delay: Duration) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let raise = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        raise.store(true, Ordering::Relaxed);
    });
    stop
}

async fn run(driver: &Arc<Driver>, total: u64, concurrency: u32) -> pgcost_core::load::LoadResult {
    load::burst(
        driver,
        total,
        concurrency,
        &ProgressBar::hidden(),
        Arc::new(AtomicBool::new(false)),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_uses_one_connection_per_worker() {
    let server = serve(Mode::KeepAlive).await;
    let url = format!("http://127.0.0.1:{}/static", server.port);
    let driver = Arc::new(Driver::new(&spec(&url), None).unwrap());

    let warm = run(&driver, 20, 4).await;
    assert_eq!(warm.status.get(&204), Some(&20));
    let burst = run(&driver, 2_000, 4).await;
    assert_eq!(burst.status.get(&204), Some(&2_000), "{:?}", burst.errors);
    assert_eq!(burst.error_count(), 0);
    assert_eq!(burst.sent, 2_000);
    assert_eq!(burst.latency_us.len(), 2_000);
    assert!(!burst.interrupted);
    // Four connections for the warm-up, four for the burst: one per worker each time.
    assert_eq!(server.accepted.load(Ordering::SeqCst), 8);
    assert_eq!(server.requests.lock().unwrap().len(), 2_020);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_closed_by_the_server_are_replaced_without_errors() {
    let server = serve(Mode::CloseEach).await;
    let url = format!("http://127.0.0.1:{}/", server.port);
    let driver = Arc::new(Driver::new(&spec(&url), None).unwrap());
    let burst = run(&driver, 300, 3).await;
    assert_eq!(
        burst.status.get(&200),
        Some(&300),
        "{:?}",
        burst.first_error
    );
    assert_eq!(burst.error_count(), 0);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 300);

    // A server that closes after a response without saying so (a keep-alive that ran out).
    // The next request on that connection gets no byte back: it goes out once more on a new
    // connection, and only that attempt counts, whichever of the close and the request
    // came first.
    let server = serve(Mode::CloseSilently).await;
    let url = format!("http://127.0.0.1:{}/", server.port);
    let driver = Arc::new(Driver::new(&spec(&url), None).unwrap());
    let burst = run(&driver, 200, 2).await;
    assert_eq!(
        burst.status.get(&204),
        Some(&200),
        "{:?}",
        burst.first_error
    );
    assert_eq!(burst.error_count(), 0, "{:?}", burst.first_error);
    assert_eq!(server.requests.lock().unwrap().len(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_closed_while_idle_cost_no_errors() {
    // Five requests 100 ms apart, on connections the server closes after 30 ms idle: each
    // request after the first finds its connection closed, and goes out on a new one.
    let server = serve(Mode::IdleClose(30)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let paced = pgcost::http::open_loop::paced(&root_of(&server), 10.0, 5, 1, stop).await;
    let load = paced.load;
    assert_eq!(load.status.get(&204), Some(&5), "{:?}", load.first_error);
    assert_eq!(load.error_count(), 0);
    assert_eq!(server.requests.lock().unwrap().len(), 5);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 5);
}

/// Sends `total` requests with `method` on one connection to a server that answers each
/// with `pieces`, and checks that all were answered `status` on that one connection.
async fn one_connection(pieces: &'static [&'static [u8]], method: Method, status: u16) {
    let server = serve(Mode::Script(pieces)).await;
    let mut request = spec(&format!("http://127.0.0.1:{}/", server.port));
    request.method = method;
    let driver = Arc::new(Driver::new(&request, None).unwrap());
    let burst = run(&driver, 5, 1).await;
    assert_eq!(
        burst.status.get(&status),
        Some(&5),
        "{:?}",
        burst.first_error
    );
    assert_eq!(burst.error_count(), 0);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "the connection is reused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_bodies_are_read_across_reads() {
    // Split inside a size line, inside the data, between data and its CRLF, and in the
    // trailers, with a chunk extension.
    one_connection(
        &[
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1",
            b"0\r\n0123456789abc",
            b"def\r",
            b"\n3;ext=1\r\nxyz\r\n0\r\nX-Trailer: 1",
            b"\r\n\r\n",
        ],
        Method::GET,
        200,
    )
    .await;
}

/// 100,000 bytes of body, more than the read buffer holds.
static LONG: [u8; 100_000] = [b'x'; 100_000];
static LONG_RESPONSE: [&[u8]; 2] = [b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", &LONG];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_bodies_are_read_to_their_length() {
    one_connection(&LONG_RESPONSE, Method::GET, 200).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_without_a_body_are_not_waited_for() {
    // The length of the body a GET would have had: none follows.
    let head: &'static [&'static [u8]] = &[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"];
    one_connection(head, Method::HEAD, 200).await;
    let not_modified: &'static [&'static [u8]] =
        &[b"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\nETag: \"a\"\r\n\r\n"];
    one_connection(not_modified, Method::GET, 304).await;
    one_connection(&[b"HTTP/1.1 204 No Content\r\n\r\n"], Method::GET, 204).await;
    // An interim 103 precedes the response.
    let hints: &'static [&'static [u8]] = &[
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ];
    one_connection(hints, Method::GET, 200).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_to_the_close_and_truncated_bodies() {
    // No length: the body ends with the connection, which is not reused.
    let server = serve(Mode::Script(&[b"HTTP/1.1 200 OK\r\n\r\nto the end", b""])).await;
    let driver = root_of(&server);
    let burst = run(&driver, 7, 2).await;
    assert_eq!(burst.status.get(&200), Some(&7), "{:?}", burst.first_error);
    assert_eq!(burst.error_count(), 0);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 7);

    // A body cut short is a body error, counted once per request, never retried.
    let server = serve(Mode::Script(&[
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        b"",
    ]))
    .await;
    let driver = root_of(&server);
    let burst = run(&driver, 6, 2).await;
    assert_eq!(burst.errors.get("body"), Some(&6), "{:?}", burst.errors);
    assert_eq!(burst.responses(), 0);
    assert_eq!(server.requests.lock().unwrap().len(), 6);

    // A head that is not HTTP is a request error.
    let server = serve(Mode::Script(&[b"SSH-2.0-OpenSSH_9.2\r\n\r\n", b""])).await;
    let driver = root_of(&server);
    let burst = run(&driver, 3, 1).await;
    assert_eq!(burst.errors.get("request"), Some(&3), "{:?}", burst.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_are_counted_exactly_and_the_connection_is_replaced() {
    let server = serve(Mode::Hang).await;
    let url = format!("http://127.0.0.1:{}/slow", server.port);
    let mut request = spec(&url);
    request.timeout = Duration::from_millis(150);
    let driver = Arc::new(Driver::new(&request, None).unwrap());
    let burst = run(&driver, 6, 2).await;
    assert_eq!(burst.errors.get("timeout"), Some(&6));
    assert_eq!(burst.responses(), 0);
    assert_eq!(burst.sent, 6);
    assert!(burst.first_error.unwrap().contains("150ms"));
    // A connection whose request timed out is not reused.
    assert_eq!(server.accepted.load(Ordering::SeqCst), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_are_connect_errors() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let driver = Arc::new(Driver::new(&spec(&format!("http://127.0.0.1:{port}/")), None).unwrap());
    let burst = run(&driver, 5, 1).await;
    assert_eq!(burst.errors.get("connect"), Some(&5));
    assert!(
        burst
            .first_error
            .unwrap()
            .to_lowercase()
            .contains("refused"),
        "the cause is named"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_is_sent_as_specified() {
    let server = serve(Mode::KeepAlive).await;
    let url = format!(
        "http://alice:p%40ss@127.0.0.1:{}/api/items?tenant=7&q=a%20b",
        server.port
    );
    let mut request = spec(&url);
    request.method = Method::POST;
    request
        .headers
        .insert("x-tenant", HeaderValue::from_static("7"));
    request.body = Some(bytes::Bytes::from_static(b"{\"n\":1}"));
    let driver = Arc::new(Driver::new(&request, None).unwrap());
    let burst = run(&driver, 3, 1).await;
    assert_eq!(burst.status.get(&204), Some(&3));
    let received = server.requests.lock().unwrap().clone();
    assert_eq!(received.len(), 3);
    let first = &received[0];
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines[0], "POST /api/items?tenant=7&q=a%20b HTTP/1.1");
    let has = |line: &str| lines.iter().any(|l| l.eq_ignore_ascii_case(line));
    assert!(has(&format!("host: 127.0.0.1:{}", server.port)), "{first}");
    assert!(has("x-tenant: 7"), "{first}");
    assert!(has("content-length: 7"), "{first}");
    // alice:p@ss, from the URL's user information.
    assert!(has("authorization: Basic YWxpY2U6cEBzcw=="), "{first}");
    assert!(first.ends_with("\r\n\r\n{\"n\":1}"), "{first}");
    assert!(
        received.iter().all(|r| r == first),
        "every request is the same"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_target_sends_its_own_body_with_its_content_type() {
    let server = serve(Mode::KeepAlive).await;
    let url = format!("http://127.0.0.1:{}/graphql", server.port);
    let mut request = spec(&url);
    request.method = Method::POST;
    let target = |body: &'static str, requests: u64| Target {
        url: Url::parse(&url).unwrap(),
        requests,
        body: Some(bytes::Bytes::from_static(body.as_bytes())),
    };
    let list = r#"{"query":"query List { items { id } }","operationName":"List"}"#;
    let one = r#"{"query":"{ item(id: 7) { name } }"}"#;
    let targets = [target(list, 2), target(one, 1)];
    let driver = Arc::new(Driver::rotating(&request, None, &targets).unwrap());
    let burst = run(&driver, 3, 1).await;
    assert_eq!(burst.status.get(&204), Some(&3), "{:?}", burst.first_error);
    let received = server.requests.lock().unwrap().clone();
    let bodies: Vec<&str> = (received.iter())
        .map(|r| r.split_once("\r\n\r\n").unwrap().1)
        .collect();
    // The rotation of counts 2:1 (`http::rotation`), each body whole.
    assert_eq!(bodies, [list, one, list]);
    for (sent, body) in received.iter().zip(&bodies) {
        let lines: Vec<&str> = sent.lines().collect();
        let has = |line: &str| lines.iter().any(|l| l.eq_ignore_ascii_case(line));
        assert_eq!(lines[0], "POST /graphql HTTP/1.1");
        assert!(has("content-type: application/json"), "{sent}");
        assert!(has(&format!("content-length: {}", body.len())), "{sent}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_targets_and_headers_set_by_the_user() {
    let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback here: skipped");
        return;
    };
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    // The hand-written server listens on IPv4; a tiny one on [::1] records the head.
    let listener = TcpListener::bind(("::1", port)).await.unwrap();
    let head = Arc::new(Mutex::new(String::new()));
    let seen = head.clone();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 4096];
        let n = socket.read(&mut buffer).await.unwrap();
        *seen.lock().unwrap() = String::from_utf8_lossy(&buffer[..n]).to_string();
        socket
            .write_all(b"HTTP/1.1 204 No Content\r\n\r\n")
            .await
            .unwrap();
    });
    let driver = Arc::new(Driver::new(&spec(&format!("http://[::1]:{port}/v6")), None).unwrap());
    let burst = run(&driver, 1, 1).await;
    assert_eq!(burst.status.get(&204), Some(&1), "{:?}", burst.first_error);
    let head = head.lock().unwrap().to_ascii_lowercase();
    assert!(head.starts_with("get /v6 http/1.1\r\n"), "{head}");
    assert!(head.contains(&format!("host: [::1]:{port}\r\n")), "{head}");
    assert!(head.contains("accept: */*\r\n"), "{head}");

    // Host and Accept given with -H win over the ones built from the URL.
    let server = serve(Mode::KeepAlive).await;
    let mut request = spec(&format!("http://127.0.0.1:{}/", server.port));
    request
        .headers
        .insert("host", HeaderValue::from_static("api.example.test"));
    request
        .headers
        .insert("accept", HeaderValue::from_static("application/json"));
    let driver = Arc::new(Driver::new(&request, None).unwrap());
    assert_eq!(run(&driver, 1, 1).await.status.get(&204), Some(&1));
    let received = server.requests.lock().unwrap()[0].to_ascii_lowercase();
    assert!(
        received.contains("\r\nhost: api.example.test\r\n"),
        "{received}"
    );
    assert!(
        received.contains("\r\naccept: application/json\r\n"),
        "{received}"
    );
    assert_eq!(received.matches("host:").count(), 1, "{received}");
}

#[test]
fn an_https_url_needs_tls_settings() {
    let err = Driver::new(&spec("https://127.0.0.1:1/"), None)
        .err()
        .unwrap();
    assert!(err.contains("TLS"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_the_burst_early_and_says_so() {
    let server = serve(Mode::Hang).await;
    let url = format!("http://127.0.0.1:{}/", server.port);
    let driver = Arc::new(Driver::new(&spec(&url), None).unwrap());
    let stop = raised_after(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let burst = load::burst(&driver, 100, 4, &ProgressBar::hidden(), stop).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(burst.interrupted);
    assert_eq!(
        burst.sent, 0,
        "abandoned requests are neither responses nor errors"
    );

    // What was answered before the stop is kept.
    let server = serve(Mode::AnswerThenHang(25)).await;
    let driver = root_of(&server);
    let stop = raised_after(Duration::from_millis(300));
    let burst = load::burst(&driver, 100, 3, &ProgressBar::hidden(), stop).await;
    assert!(burst.interrupted);
    assert_eq!(burst.status.get(&204), Some(&25));
    assert_eq!((burst.sent, burst.latency_us.len()), (25, 25));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_progress_bar_counts_every_request() {
    let server = serve(Mode::KeepAlive).await;
    let driver = root_of(&server);
    let bar = ProgressBar::hidden();
    let burst = load::burst(&driver, 300, 4, &bar, Arc::new(AtomicBool::new(false))).await;
    assert_eq!(burst.status.get(&204), Some(&300));
    assert_eq!(bar.position(), 300);
}
