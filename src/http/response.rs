//! Reading one HTTP/1.1 response off a connection into a reusable buffer: the head parsed
//! with `httparse`, then the body framed by `Content-Length`, chunked transfer-encoding,
//! the end of the connection, or nothing (HEAD, 1xx, 204, 304). The body is read to its
//! end, so that the latency is complete and the connection can carry the next request.

use std::mem::MaybeUninit;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::http::error_answer::{ErrorAnswer, ErrorRule};

/// Where a response's head and body are read: one per connection, allocated once.
pub(crate) struct Buffer {
    bytes: Vec<u8>,
    /// The unread bytes are `bytes[start..end]`.
    start: usize,
    end: usize,
    /// The body of a 2xx response kept for the error rule while it may be a JSON error
    /// answer; reused from one response to the next.
    kept: Vec<u8>,
    /// Whether body bytes are still being kept.
    keeping: bool,
    /// Whether the caller wants the items of the next 2xx JSON body counted
    /// (`http::items`): its body is then kept when it starts with `[` too.
    pub(crate) count_items: bool,
    /// Whether the body being read is kept for its items.
    counting: bool,
}

/// A body kept for the error rule is at most this long: an error answer is short, and a
/// longer body is a real answer.
const MAX_KEPT: usize = 1024 * 1024;

/// Room for a usual response head in one read; a longer head grows the buffer up to
/// [`MAX_HEAD`].
const INITIAL: usize = 16 * 1024;
const MAX_HEAD: usize = 256 * 1024;
/// More response headers than this are refused (hyper's default is 100).
const MAX_HEADERS: usize = 100;

impl Buffer {
    pub(crate) fn new() -> Buffer {
        Buffer {
            bytes: vec![0; INITIAL],
            start: 0,
            end: 0,
            kept: Vec::new(),
            keeping: false,
            count_items: false,
            counting: false,
        }
    }

    /// Keeps the body bytes `bytes[start..start + n]` for the error rule, while they can
    /// still be a JSON error answer: the first byte that is not white space decides.
    fn keep(&mut self, n: usize, rule: &ErrorRule) {
        if !self.keeping {
            return;
        }
        let Buffer {
            bytes, start, kept, ..
        } = self;
        let part = &bytes[*start..*start + n];
        if kept.is_empty() {
            match part.iter().find(|b| !b.is_ascii_whitespace()) {
                None => return,
                Some(&first) if rule.may_judge(first) || (self.counting && first == b'[') => {}
                Some(_) => {
                    self.keeping = false;
                    return;
                }
            }
        }
        if kept.len() + part.len() > MAX_KEPT {
            (self.keeping, self.kept) = (false, Vec::new());
            return;
        }
        kept.extend_from_slice(part);
    }

    fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Reads more bytes after the unread ones; 0 at the end of the stream.
    async fn fill<S: AsyncRead + Unpin>(&mut self, stream: &mut S) -> std::io::Result<usize> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.bytes.len() {
            if self.start > 0 {
                self.bytes.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else if self.bytes.len() < MAX_HEAD {
                self.bytes.resize(self.bytes.len() * 2, 0);
            } else {
                return Err(std::io::Error::other(format!(
                    "a response line or head longer than {MAX_HEAD} bytes"
                )));
            }
        }
        let n = stream.read(&mut self.bytes[self.end..]).await?;
        self.end += n;
        Ok(n)
    }
}

/// Whether the connection can carry another request after this response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    KeepAlive,
    Close,
}

/// A response read to its end.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub ended: Ended,
    /// A 2xx response that the error rule recognised as an error answer.
    pub error: Option<ErrorAnswer>,
    /// With `Buffer::count_items`: the items of a 2xx JSON body (`http::items`).
    pub items: Option<u64>,
}

/// Why a response could not be read: the `load.errors` kind (`request` before the head
/// was complete, `body` after it), and whether no byte at all came back.
#[derive(Debug)]
pub(crate) struct Failed {
    pub kind: &'static str,
    pub text: String,
    pub nothing_received: bool,
}

fn failed(kind: &'static str, text: impl Into<String>) -> Failed {
    Failed {
        kind,
        text: text.into(),
        nothing_received: false,
    }
}

/// How the body after a head ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// What the rest of the reading needs from a response head.
struct Head {
    status: u16,
    framing: Framing,
    keep_alive: bool,
    /// A header of the error rule, found on a 2xx response.
    error: Option<ErrorAnswer>,
}

/// Parses a complete head out of `bytes`: the head and its length, or `None` for a
/// partial one.
fn parse_head(
    bytes: &[u8],
    head_only: bool,
    rule: &ErrorRule,
) -> Result<Option<(Head, usize)>, Failed> {
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    );
    let length = match parsed {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(failed("request", format!("invalid response head: {e}"))),
    };
    let status = response.code.unwrap_or_default();
    let mut close = false;
    let mut keep_alive_token = false;
    let mut length_header = None;
    let mut chunked = None;
    let mut error = None;
    let judged = ErrorRule::applies_to(status);
    for header in response.headers.iter() {
        let (name, value) = (header.name, header.value);
        if judged && error.is_none() {
            error = (rule.header_index(name.as_bytes())).map(|i| rule.header_answer(i, value));
        }
        // By length first: most headers are none of the three.
        if !matches!(name.len(), 10 | 14 | 17) {
            continue;
        }
        if name.eq_ignore_ascii_case("connection") {
            close |= has_token(value, b"close");
            keep_alive_token |= has_token(value, b"keep-alive");
        } else if name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            match (parsed, length_header) {
                (Some(n), None) => length_header = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => return Err(failed("request", "an invalid Content-Length")),
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Only a last coding of chunked frames the body; any other reads to the end.
            let last = value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        }
    }
    let framing = match (status, chunked, length_header) {
        _ if head_only || status == 204 || status == 304 || status < 200 => Framing::Length(0),
        (_, Some(true), _) => Framing::Chunked,
        (_, Some(false), _) => Framing::UntilClose,
        (_, None, Some(n)) => Framing::Length(n),
        (_, None, None) => Framing::UntilClose,
    };
    let keep_alive = !close && (response.version == Some(1) || keep_alive_token);
    let head = Head {
        status,
        framing,
        keep_alive: keep_alive && framing != Framing::UntilClose && status != 101,
        error,
    };
    Ok(Some((head, length)))
}

fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// Reads one whole response to a request just written on `stream`.
pub(crate) async fn read<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
    head_only: bool,
    rule: &ErrorRule,
) -> Result<Response, Failed> {
    let head = read_head(stream, buffer, head_only, rule).await?;
    buffer.kept.clear();
    buffer.keeping = ErrorRule::applies_to(head.status) && head.error.is_none();
    buffer.counting = buffer.count_items && buffer.keeping;
    let complete = match head.framing {
        Framing::Length(n) => skip(stream, buffer, n, rule).await?,
        Framing::Chunked => chunks(stream, buffer, rule).await?,
        Framing::UntilClose => {
            until_close(stream, buffer, rule).await?;
            false
        }
    };
    let first = buffer.kept.iter().find(|b| !b.is_ascii_whitespace());
    let error = match head.error {
        Some(error) => Some(error),
        None if buffer.keeping && first.is_some_and(|&b| rule.may_judge(b)) => {
            rule.judge_body(&buffer.kept)
        }
        None => None,
    };
    let items = (buffer.counting && buffer.keeping && error.is_none())
        .then(|| crate::http::items::count(&buffer.kept))
        .flatten();
    // Bytes beyond the response were not asked for: the connection is out of step.
    let reusable = head.keep_alive && complete && buffer.start == buffer.end;
    Ok(Response {
        status: head.status,
        error,
        items,
        ended: if reusable {
            Ended::KeepAlive
        } else {
            Ended::Close
        },
    })
}

/// Reads the head of the response (past any interim one) into `buffer`, from its start.
async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
    head_only: bool,
    rule: &ErrorRule,
) -> Result<Head, Failed> {
    (buffer.start, buffer.end) = (0, 0);
    let mut received = false;
    loop {
        let unread = buffer.unread();
        if let Some((head, length)) = (!unread.is_empty())
            .then(|| parse_head(unread, head_only, rule))
            .transpose()?
            .flatten()
        {
            buffer.start += length;
            // Interim responses (100 Continue, 103 Early Hints) precede the real one.
            if (100..200).contains(&head.status) && head.status != 101 {
                continue;
            }
            return Ok(head);
        }
        let text = match buffer.fill(stream).await {
            Ok(0) => "the server closed the connection before the response ended".into(),
            Ok(_) => {
                received = true;
                continue;
            }
            Err(e) => crate::error::chain(&e),
        };
        return Err(Failed {
            kind: "request",
            text,
            nothing_received: !received,
        });
    }
}

/// Reads more of the body; the end of the stream is a failure.
async fn more<S: AsyncRead + Unpin>(stream: &mut S, buffer: &mut Buffer) -> Result<(), Failed> {
    match buffer.fill(stream).await {
        Ok(0) => Err(failed(
            "body",
            "the server closed the connection before the response ended",
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(failed("body", crate::error::chain(&e))),
    }
}

/// Consumes `n` bytes of body. Returns true (the body ended where its framing said).
async fn skip<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
    mut n: u64,
    rule: &ErrorRule,
) -> Result<bool, Failed> {
    loop {
        let take = n.min((buffer.end - buffer.start) as u64) as usize;
        buffer.keep(take, rule);
        buffer.start += take;
        n -= take as u64;
        if n == 0 {
            return Ok(true);
        }
        more(stream, buffer).await?;
    }
}

/// Consumes a chunked body to its last chunk and trailers. Returns true.
async fn chunks<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
    rule: &ErrorRule,
) -> Result<bool, Failed> {
    loop {
        let size = loop {
            match httparse::parse_chunk_size(buffer.unread()) {
                Ok(httparse::Status::Complete((length, size))) => {
                    buffer.start += length;
                    break size;
                }
                Ok(httparse::Status::Partial) => more(stream, buffer).await?,
                Err(_) => return Err(failed("body", "an invalid chunk size")),
            }
        };
        if size == 0 {
            return trailers(stream, buffer).await;
        }
        skip(stream, buffer, size, rule).await?;
        while buffer.end - buffer.start < 2 {
            more(stream, buffer).await?;
        }
        if buffer.unread()[..2] != *b"\r\n" {
            return Err(failed("body", "a chunk longer than its size"));
        }
        buffer.start += 2;
    }
}

/// Consumes the trailer lines after the last chunk, up to the empty line.
async fn trailers<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
) -> Result<bool, Failed> {
    loop {
        match buffer.unread().windows(2).position(|w| w == b"\r\n") {
            Some(0) => {
                buffer.start += 2;
                return Ok(true);
            }
            Some(line) => buffer.start += line + 2,
            None => more(stream, buffer).await?,
        }
    }
}

/// Consumes a body that ends with the connection.
async fn until_close<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Buffer,
    rule: &ErrorRule,
) -> Result<(), Failed> {
    loop {
        buffer.keep(buffer.end - buffer.start, rule);
        buffer.start = buffer.end;
        match buffer.fill(stream).await {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(failed("body", crate::error::chain(&e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(bytes: &[u8], head_only: bool) -> Head {
        parse_head(bytes, head_only, &ErrorRule::default())
            .unwrap()
            .unwrap()
            .0
    }

    #[test]
    fn framing_follows_the_head() {
        let h = head(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", false);
        assert_eq!(
            (h.status, h.framing, h.keep_alive),
            (200, Framing::Length(12), true)
        );
        let h = head(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", true);
        assert_eq!(h.framing, Framing::Length(0));
        let h = head(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nContent-Length: 3\r\n\r\n",
            false,
        );
        assert_eq!(h.framing, Framing::Chunked);
        let h = head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false);
        assert_eq!((h.framing, h.keep_alive), (Framing::UntilClose, false));
        let h = head(
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
            false,
        );
        assert_eq!(h.framing, Framing::Length(0));
        let h = head(
            b"HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\n\r\n",
            false,
        );
        assert!(!h.keep_alive);
        let h = head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false);
        assert!(!h.keep_alive);
        let h = head(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(h.keep_alive);
    }

    #[test]
    fn partial_and_invalid_heads() {
        assert!(
            parse_head(
                b"HTTP/1.1 200 OK\r\nContent-Le",
                false,
                &ErrorRule::default()
            )
            .unwrap()
            .is_none()
        );
        let rule = ErrorRule::default();
        let err = parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            false,
            &rule,
        );
        assert_eq!(err.err().unwrap().kind, "request");
        let err = parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            false,
            &rule,
        );
        assert_eq!(err.err().unwrap().kind, "request");
        let err = parse_head(b"SSH-2.0-OpenSSH\r\n\r\n", false, &rule);
        assert_eq!(err.err().unwrap().kind, "request");
    }

    /// A reader that hands out its bytes a few at a time, as a slow network would.
    struct Trickle(Vec<u8>, usize);

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let n = self.1.min(buf.remaining()).min(self.0.len());
            let rest = self.0.split_off(n);
            buf.put_slice(&self.0);
            self.0 = rest;
            std::task::Poll::Ready(Ok(()))
        }
    }

    async fn read_all(bytes: &[u8], step: usize) -> Result<Response, Failed> {
        let mut stream = Trickle(bytes.to_vec(), step);
        read(
            &mut stream,
            &mut Buffer::new(),
            false,
            &ErrorRule::default(),
        )
        .await
    }

    #[tokio::test]
    async fn error_answers_are_read_off_headers_and_json_bodies_in_any_pieces() {
        let error = |body: &str| {
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            )
        };
        let graphql = error(r#"  {"data": null, "errors": [{"message": "login"}]}"#);
        let answer = error(r#"{"data": {"n": 1}}"#);
        let html = error("<p>error</p>");
        for step in [1, 5, 1 << 20] {
            let r = read_all(graphql.as_bytes(), step).await.unwrap();
            let seen = r.error.map(|e| e.seen);
            assert_eq!(seen.as_deref(), Some("body \"errors\""), "step {step}");
            assert!(
                read_all(answer.as_bytes(), step)
                    .await
                    .unwrap()
                    .error
                    .is_none()
            );
            assert!(
                read_all(html.as_bytes(), step)
                    .await
                    .unwrap()
                    .error
                    .is_none()
            );
        }
        let wiki =
            b"HTTP/1.1 200 OK\r\nMediaWiki-API-Error: readapidenied\r\nContent-Length: 2\r\n\r\n{}";
        let r = read_all(wiki, 3).await.unwrap();
        assert_eq!(r.error.unwrap().seen, "header mediawiki-api-error");
        // Not a 2xx: the status already counts it.
        let denied = b"HTTP/1.1 401 No\r\nContent-Length: 15\r\n\r\n{\"error\": \"no\"}";
        assert!(read_all(denied, 4).await.unwrap().error.is_none());
    }

    /// `response` read in pieces of `step` bytes, its items counted.
    async fn items_of(response: &[u8], step: usize) -> (Option<u64>, bool) {
        let mut buffer = Buffer::new();
        buffer.count_items = true;
        let mut stream = Trickle(response.to_vec(), step);
        let r = read(&mut stream, &mut buffer, false, &ErrorRule::default())
            .await
            .unwrap();
        (r.items, r.error.is_some())
    }

    #[tokio::test]
    async fn items_are_counted_only_when_asked_and_only_on_real_answers() {
        let chunked = |status: &str, body: &str| {
            format!(
                "HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            )
        };
        let array = chunked("200 OK", " [{\"id\": 1}, {\"id\": 2}, {\"id\": 3}]");
        let object = chunked("200 OK", r#"{"runs": [1, 2], "tags": [1, 2, 3, 4]}"#);
        let error = chunked("200 OK", r#"{"errors": [{"message": "login"}]}"#);
        let denied = chunked("404 Not Found", "[1, 2]");
        for step in [1, 5, 1 << 20] {
            assert_eq!(items_of(array.as_bytes(), step).await, (Some(3), false));
            assert_eq!(items_of(object.as_bytes(), step).await, (Some(4), false));
            assert_eq!(items_of(error.as_bytes(), step).await, (None, true));
            assert_eq!(items_of(denied.as_bytes(), step).await, (None, false));
        }
        // Not asked: an array body is not even kept.
        let r = read_all(array.as_bytes(), 5).await.unwrap();
        assert_eq!((r.items, r.error.is_none()), (None, true));
    }

    #[tokio::test]
    async fn bodies_are_read_to_their_end_in_any_pieces() {
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                        5;ext=1\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n";
        let long = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n".as_slice(),
            &[b'x'; 40_000],
        ]
        .concat();
        for step in [1, 3, 7, 4096, 1 << 20] {
            let r = read_all(chunked, step).await.unwrap();
            assert_eq!((r.status, r.ended), (200, Ended::KeepAlive), "step {step}");
            let r = read_all(&long, step).await.unwrap();
            assert_eq!((r.status, r.ended), (200, Ended::KeepAlive), "step {step}");
        }
        let early_hints =
            b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        let r = read_all(early_hints, 5).await.unwrap();
        assert_eq!((r.status, r.ended), (204, Ended::KeepAlive));
        let until_close = b"HTTP/1.1 200 OK\r\n\r\nall of it";
        let r = read_all(until_close, 4).await.unwrap();
        assert_eq!((r.status, r.ended), (200, Ended::Close));
        let extra = b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(read_all(extra, 1 << 20).await.unwrap().ended, Ended::Close);
    }

    #[tokio::test]
    async fn truncated_responses_fail_by_kind() {
        let nothing = read_all(b"", 10).await.unwrap_err();
        assert_eq!((nothing.kind, nothing.nothing_received), ("request", true));
        let head = read_all(b"HTTP/1.1 200 OK\r\n", 10).await.unwrap_err();
        assert_eq!((head.kind, head.nothing_received), ("request", false));
        let body = read_all(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", 10).await;
        assert_eq!(body.unwrap_err().kind, "body");
        let chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n";
        assert_eq!(read_all(chunk, 10).await.unwrap_err().kind, "body");
    }
}
