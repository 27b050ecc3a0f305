//! The burst's HTTP/1.1 connections, on hyper's client directly: one keep-alive connection
//! per worker, polled in the worker's own task, and a request built once and copied.
//! Connections do not outlive a burst: an idle one may have been closed by the server
//! (Node's default keep-alive timeout is 5 s), and a request sent on it would fail.

use std::future::{Future, poll_fn};
use std::io::IoSlice;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{Connection, SendRequest};
use hyper::header::{ACCEPT, AUTHORIZATION, HOST, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use percent_encoding::percent_decode_str;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::http::request::RequestSpec;

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
enum Stream {
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

type Body = Full<Bytes>;

/// One open connection: the request side and the connection future that does its I/O.
pub struct Link {
    sender: SendRequest<Body>,
    conn: Pin<Box<Connection<TokioIo<Stream>, Body>>>,
    /// Set once the connection future has ended (closed by either side, or failed).
    ended: bool,
}

impl Link {
    /// Awaits `fut` while driving the connection, in the caller's task. A future still
    /// pending once the connection has ended never resolves: that is a closed connection.
    async fn drive<F: Future>(
        conn: &mut Pin<Box<Connection<TokioIo<Stream>, Body>>>,
        ended: &mut bool,
        fut: F,
    ) -> Result<F::Output, Failure> {
        let mut fut = pin!(fut);
        poll_fn(|cx| {
            if !*ended && conn.as_mut().poll(cx).is_ready() {
                *ended = true;
            }
            match fut.as_mut().poll(cx) {
                Poll::Ready(output) => Poll::Ready(Ok(output)),
                Poll::Pending if *ended => Poll::Ready(Err(Failure {
                    kind: "request",
                    text: "the server closed the connection before the response ended".into(),
                })),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    /// Whether another request can go out on this connection.
    async fn usable(&mut self) -> bool {
        let Link {
            sender,
            conn,
            ended,
        } = self;
        let ready = matches!(
            Link::drive(conn, ended, poll_fn(|cx| sender.poll_ready(cx))).await,
            Ok(Ok(()))
        );
        // An ended connection can still look ready: hyper keeps its request queue open
        // after a clean end of file on an idle connection.
        ready && !*ended
    }
}

/// Everything a burst sends, prepared once: where to connect and the request to copy.
pub struct Driver {
    host: String,
    port: u16,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    request: Request<Body>,
    pub timeout: Duration,
}

impl Driver {
    /// Prepares `spec`; TLS settings are used for https URLs only.
    pub fn new(
        spec: &RequestSpec,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> Result<Driver, String> {
        let url = &spec.url;
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
        let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let uri: Uri = path
            .parse()
            .map_err(|e| format!("{path:?} is not a request target: {e}"))?;
        let mut headers = spec.headers.clone();
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
            let mut value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
                .map_err(|e| format!("the URL's user name cannot be sent: {e}"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let mut request = Request::new(Full::new(spec.body.clone().unwrap_or_default()));
        *request.method_mut() = spec.method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        Ok(Driver {
            host,
            port,
            tls,
            request,
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
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| connect(&e))?;
        Ok(Link {
            sender,
            conn: Box::pin(conn),
            ended: false,
        })
    }

    /// Sends the request once on `link` (opening a connection when there is none or the
    /// last one was closed) and reads the whole response. Returns the status code.
    pub async fn exchange(&self, link: &mut Option<Link>) -> Result<u16, Failure> {
        if let Some(open) = link.as_mut()
            && !open.usable().await
        {
            *link = None;
        }
        let open = match link {
            Some(open) => open,
            None => {
                let mut fresh = self.connect().await?;
                if !fresh.usable().await {
                    return Err(Failure {
                        kind: "connect",
                        text: "the connection closed before the first request".into(),
                    });
                }
                link.insert(fresh)
            }
        };
        let Link {
            sender,
            conn,
            ended,
        } = open;
        let response = Link::drive(conn, ended, sender.send_request(self.request.clone()))
            .await?
            .map_err(|e| Failure::new("request", &e))?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        // Read the whole body, so the connection is reused and the latency is complete.
        while let Some(frame) = Link::drive(conn, ended, body.frame()).await? {
            frame.map_err(|e| Failure::new("body", &e))?;
        }
        Ok(status)
    }
}
