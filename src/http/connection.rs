//! The burst's HTTP/1.1 connections: the request encoded once into bytes, written as is on
//! one keep-alive connection per worker, and each response read into the connection's
//! own buffer and parsed there (`http::response`). Nothing is allocated per request.
//! Connections do not outlive a burst: an idle one may have been closed by the server
//! (Node's default keep-alive timeout is 5 s), and a request sent on it would fail.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hyper::Method;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_LENGTH, HOST, HeaderValue, TRANSFER_ENCODING};
use percent_encoding::percent_decode_str;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::http::error_answer::{ErrorAnswer, ErrorRule};
use crate::http::request::{RequestSpec, add_guessed_content_type};
use crate::http::response::{self, Ended, Response};
use crate::http::rotation::{Rotation, Target};
use crate::http::template::{self, DataSet, Template, Turn};

/// Why one request got no response: the kind names the `load.errors` key.
#[derive(Debug)]
pub struct Failure {
    pub kind: &'static str,
    pub text: String,
}

impl Failure {
    fn new(kind: &'static str, err: &dyn std::error::Error) -> Failure {
        Failure {
            kind,
            text: crate::error::chain(err),
        }
    }
}

/// A plain or TLS connection to the target.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// One open connection and the buffer its responses are read into.
pub struct Link {
    stream: Stream,
    buffer: response::Buffer,
    /// Whether a request has been answered on it: a failure on a connection that has served
    /// before may only mean that the server closed it while it was idle.
    reused: bool,
}

/// Everything a burst sends, prepared once: where to connect and the request's bytes.
pub struct Driver {
    host: String,
    port: u16,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    /// The request as written on the wire, head and body: one per URL.
    rotation: Rotation,
    /// Instead, a request with per-request values (`http::template`), rendered for each.
    templated: Option<Box<Templated>>,
    /// A HEAD request's response has no body, whatever its head says.
    head_only: bool,
    /// How a 2xx response is recognised as an error answer.
    error_rule: ErrorRule,
    pub timeout: Duration,
}

/// One response as the burst counts it: its status, and for a 2xx, what made it an error
/// answer if it was one.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub error: Option<ErrorAnswer>,
    /// When asked for (`count_items`), the items of a 2xx JSON body (`http::items`).
    pub items: Option<u64>,
}

impl Driver {
    /// Prepares `spec`; TLS settings are used for https URLs only.
    pub fn new(
        spec: &RequestSpec,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> Result<Driver, String> {
        Driver::rotating(spec, tls, &[])
    }

    /// Prepares `spec` sent to each of `targets` in turn, each its share of the requests
    /// (`http::rotation`); with no target, to `spec`'s URL. The targets share the URL's
    /// origin: one host, one set of connections.
    pub fn rotating(
        spec: &RequestSpec,
        tls: Option<Arc<rustls::ClientConfig>>,
        targets: &[Target],
    ) -> Result<Driver, String> {
        let url = &spec.url;
        if let Some(other) = (targets.iter()).find(|t| t.url.origin() != url.origin()) {
            return Err(format!(
                "{} is not on {}",
                other.url,
                url.origin().ascii_serialization()
            ));
        }
        let templated = match targets.is_empty() {
            true => Templated::of(spec)?.map(Box::new),
            false => None,
        };
        let rotation = if targets.is_empty() {
            Rotation::single(encode(spec)?)
        } else {
            let requests = (targets.iter())
                .map(|t| encode_to(spec, &t.url, t.body.as_deref()))
                .collect::<Result<Vec<_>, String>>()?;
            let counts: Vec<u64> = targets.iter().map(|t| t.requests).collect();
            Rotation::weighted(requests, &counts)
        };
        let host = match url.host() {
            Some(url::Host::Ipv6(addr)) => addr.to_string(),
            Some(host) => host.to_string(),
            None => return Err(format!("{url} has no host")),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("{url} has no port"))?;
        let tls = match (url.scheme(), tls) {
            ("https", Some(config)) => {
                let name = ServerName::try_from(host.clone())
                    .map_err(|e| format!("{host} is not a TLS server name: {e}"))?;
                Some((TlsConnector::from(config), name))
            }
            ("https", None) => return Err("an https URL needs TLS settings".into()),
            _ => None,
        };
        Ok(Driver {
            host,
            port,
            tls,
            rotation,
            templated,
            head_only: spec.method == Method::HEAD,
            error_rule: spec.error_rule.clone(),
            timeout: spec.timeout,
        })
    }

    /// Opens a connection ready for its first request.
    pub async fn connect(&self) -> Result<Link, Failure> {
        let connect = |e: &dyn std::error::Error| Failure::new("connect", e);
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| connect(&e))?;
        tcp.set_nodelay(true).map_err(|e| connect(&e))?;
        let stream = match &self.tls {
            None => Stream::Plain(tcp),
            Some((connector, name)) => Stream::Tls(Box::new(
                connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| connect(&e))?,
            )),
        };
        Ok(Link {
            stream,
            buffer: response::Buffer::new(),
            reused: false,
        })
    }

    /// Sends the request once on `link` (opening a connection when there is none) and reads
    /// the whole response. Returns the status code. A connection that has served before
    /// and fails before any byte of the response came back was most likely closed by the
    /// server while idle: the request goes out once more on a new connection, and only
    /// that attempt counts. `link` is left empty when the connection cannot be reused.
    /// With `count_items`, a 2xx JSON body's items are counted (one body parsed). `k`, the
    /// request's number in its burst, picks the URL when there are several.
    pub async fn exchange(
        &self,
        link: &mut Option<Link>,
        count_items: bool,
        k: u64,
    ) -> Result<Answer, Failure> {
        let rendered;
        let bytes = match &self.templated {
            None => self.rotation.bytes(k),
            Some(templated) => {
                rendered = templated.render(Turn::next());
                rendered.as_slice()
            }
        };
        if let Some(open) = link.as_mut() {
            match self.send(open, bytes, count_items).await {
                Ok((answer, reusable)) => {
                    if !reusable {
                        *link = None;
                    }
                    return Ok(answer);
                }
                Err((failure, silent)) => {
                    *link = None;
                    if !silent {
                        return Err(failure);
                    }
                }
            }
        }
        // Boxed: the connecting future (TLS included) is large, and would otherwise be
        // copied with every request's future.
        let mut fresh = Box::pin(self.connect()).await?;
        match self.send(&mut fresh, bytes, count_items).await {
            Ok((answer, reusable)) => {
                if reusable {
                    *link = Some(fresh);
                }
                Ok(answer)
            }
            Err((failure, _)) => Err(failure),
        }
    }

    /// One request and its response on `link`: the status and whether the connection can
    /// carry another request, or the failure and whether the server said nothing at all
    /// on a connection that had served before.
    async fn send(
        &self,
        link: &mut Link,
        bytes: &[u8],
        count_items: bool,
    ) -> Result<(Answer, bool), (Failure, bool)> {
        let reused = link.reused;
        let silent = |failure: Failure| (failure, reused);
        if let Err(e) = write(&mut link.stream, bytes).await {
            return Err(silent(Failure::new("request", &e)));
        }
        let rule = &self.error_rule;
        link.buffer.count_items = count_items;
        let response = response::read(&mut link.stream, &mut link.buffer, self.head_only, rule);
        match response.await {
            Ok(Response {
                status,
                ended,
                error,
                items,
            }) => {
                link.reused = true;
                if ended == Ended::KeepAlive {
                    drained(&link.stream);
                }
                let answer = Answer {
                    status,
                    error,
                    items,
                };
                Ok((answer, ended == Ended::KeepAlive))
            }
            Err(failure) => {
                let nothing = failure.nothing_received;
                Err((failure.into(), reused && nothing))
            }
        }
    }
}

/// Marks a plain connection's socket as read to its end after a whole response: nothing
/// more comes before the next request is written, so the next response's first read waits
/// for the socket to become readable instead of first trying a read that would find
/// nothing (one system call per request saved). Pure bookkeeping in tokio: no system call.
fn drained(stream: &Stream) {
    if let Stream::Plain(tcp) = stream {
        let _ = tcp.try_io(tokio::io::Interest::READABLE, || {
            Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
        });
    }
}

async fn write(stream: &mut Stream, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(bytes).await?;
    if let Stream::Tls(_) = stream {
        stream.flush().await?;
    }
    Ok(())
}

impl From<response::Failed> for Failure {
    fn from(failed: response::Failed) -> Failure {
        Failure {
            kind: failed.kind,
            text: failed.text,
        }
    }
}

/// A request with per-request values, as its parts: the request line's target, the header
/// lines and the body, each a template; the length of the body is counted for each.
struct Templated {
    method: String,
    target: Template,
    headers: Template,
    body: Template,
    length: bool,
    data: Option<Arc<DataSet>>,
    /// The head's size with its placeholders as written: room to allocate.
    size: usize,
}

impl Templated {
    /// `spec`'s parts, or `None` when none has a placeholder.
    fn of(spec: &RequestSpec) -> Result<Option<Templated>, String> {
        let head = Head::of(spec, &spec.url, None)?;
        let data = spec.data.as_deref();
        let templated = Templated {
            method: spec.method.to_string(),
            target: Template::parse_target(&head.target, data)?,
            headers: Template::parse(&head.headers, template::Context::Header, data)?,
            body: Template::parse(
                spec.body.as_deref().unwrap_or_default(),
                template::Context::Body,
                data,
            )?,
            length: head.length,
            data: spec.data.clone(),
            size: 128 + spec.method.as_str().len() + head.target.len() + head.headers.len(),
        };
        let fixed = [&templated.target, &templated.headers, &templated.body];
        Ok((!fixed.iter().all(|t| t.is_fixed())).then_some(templated))
    }

    /// The bytes of request `turn`: one allocation, the body rendered first into this
    /// thread's scratch buffer for its length.
    fn render(&self, turn: Turn) -> Vec<u8> {
        thread_local! {
            static BODY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let data = self.data.as_deref();
        BODY.with_borrow_mut(|body| {
            body.clear();
            self.body.render(turn, data, body);
            let mut bytes = Vec::with_capacity(self.size + body.len());
            bytes.extend_from_slice(self.method.as_bytes());
            bytes.push(b' ');
            self.target.render(turn, data, &mut bytes);
            bytes.extend_from_slice(b" HTTP/1.1\r\n");
            self.headers.render(turn, data, &mut bytes);
            if self.length {
                use std::io::Write;
                let _ = write!(bytes, "content-length: {}\r\n", body.len());
            }
            bytes.extend_from_slice(b"\r\n");
            bytes.extend_from_slice(body);
            bytes
        })
    }
}

/// A request's head as [`encode_to`] writes it: the target, the header lines but the
/// body's length, and whether it gets one.
struct Head {
    target: String,
    headers: Vec<u8>,
    length: bool,
}

impl Head {
    /// The head of `spec` sent to `url`, with `body` instead of the spec's when given.
    fn of(spec: &RequestSpec, url: &reqwest::Url, body: Option<&[u8]>) -> Result<Head, String> {
        let mut headers = spec.headers.clone();
        if let Some(body) = body {
            add_guessed_content_type(&mut headers, body);
        }
        if !headers.contains_key(HOST) {
            let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
            let value = HeaderValue::from_str(authority)
                .map_err(|e| format!("{authority:?} is not a Host header: {e}"))?;
            headers.insert(HOST, value);
        }
        // As reqwest did before the burst moved to hyper.
        if !headers.contains_key(ACCEPT) {
            headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
        }
        // As browsers and reqwest do: credentials in the URL become Basic authorization.
        if !url.username().is_empty() && !headers.contains_key(AUTHORIZATION) {
            let decode = |t: &str| percent_decode_str(t).decode_utf8_lossy().into_owned();
            let pair = format!(
                "{}:{}",
                decode(url.username()),
                url.password().map(decode).unwrap_or_default()
            );
            let value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
                .map_err(|e| format!("the URL's user name cannot be sent: {e}"))?;
            headers.insert(AUTHORIZATION, value);
        }
        let body = body.or(spec.body.as_deref()).unwrap_or_default();
        // As hyper did: a length for any body, and an explicit 0 for methods that expect one.
        let expects = matches!(spec.method.as_str(), "POST" | "PUT" | "PATCH");
        let length = (!body.is_empty() || expects)
            && !headers.contains_key(CONTENT_LENGTH)
            && !headers.contains_key(TRANSFER_ENCODING);
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        if target
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(format!("{target:?} is not a request target"));
        }
        let mut lines = Vec::with_capacity(256);
        for (name, value) in &headers {
            lines.extend_from_slice(name.as_str().as_bytes());
            lines.extend_from_slice(b": ");
            lines.extend_from_slice(value.as_bytes());
            lines.extend_from_slice(b"\r\n");
        }
        Ok(Head {
            target: target.to_string(),
            headers: lines,
            length,
        })
    }

    /// The request's bytes with `body`: request line, header lines, the body's length
    /// last, and the body.
    fn bytes(&self, method: &str, body: &[u8]) -> Vec<u8> {
        let mut bytes =
            Vec::with_capacity(64 + self.target.len() + self.headers.len() + body.len());
        bytes.extend_from_slice(method.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(self.target.as_bytes());
        bytes.extend_from_slice(b" HTTP/1.1\r\n");
        bytes.extend_from_slice(&self.headers);
        if self.length {
            bytes.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(body);
        bytes
    }
}

/// The request's bytes: request line, headers (`Host` and `Accept` unless given, Basic
/// authorization from the URL's user information, `Content-Length` for a body), body.
fn encode(spec: &RequestSpec) -> Result<Vec<u8>, String> {
    encode_to(spec, &spec.url, None)
}

/// As [`encode`], to `url` instead of the spec's own, and with `body` instead of the
/// spec's when given (its Content-Type guessed unless the headers name one).
fn encode_to(
    spec: &RequestSpec,
    url: &reqwest::Url,
    body: Option<&[u8]>,
) -> Result<Vec<u8>, String> {
    let head = Head::of(spec, url, body)?;
    let body = body.or(spec.body.as_deref()).unwrap_or_default();
    Ok(head.bytes(spec.method.as_str(), body))
}
