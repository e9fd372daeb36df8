//! Just enough HTTP/1.1 for the node's API: write one request, read one response with a
//! `Content-Length`, chunked, or read-to-close body. Every read is bounded, so a broken or
//! hostile peer cannot make the client allocate without limit.

use std::io::{self, BufRead, Read, Write};

/// The longest status or header line accepted.
const MAX_LINE: u64 = 16 * 1024;
/// The most header lines accepted in one response.
const MAX_HEADERS: usize = 128;
/// The largest body accepted (the OpenAPI document and the catalogue are the large ones).
pub const MAX_RESPONSE_BODY: usize = 64 * 1024 * 1024;

/// One parsed response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Header names in lowercase, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, crate::ClientError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            crate::ClientError::Http(format!(
                "the body of a {} answer is not JSON: {e}",
                self.status
            ))
        })
    }
}

/// How reading a response failed.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// The connection ended before the first byte of a status line: on a reused connection,
    /// the server had closed it while idle, and the request can be sent again on a new one.
    ClosedBeforeAnswer,
    Io(io::Error),
    Malformed(String),
}

impl From<io::Error> for ReadFailure {
    fn from(e: io::Error) -> Self {
        ReadFailure::Io(e)
    }
}

/// Whether a string can go into a request line or header without changing its structure.
pub(crate) fn is_clean(s: &str) -> bool {
    !s.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
}

/// Serializes a request head; the caller writes it and the body in one go.
pub(crate) fn request_head(
    method: &str,
    target: &str,
    host: &str,
    headers: &[(&str, &str)],
    body_len: Option<usize>,
) -> Vec<u8> {
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: layerone-client/{}\r\nAccept: application/json\r\n",
        env!("CARGO_PKG_VERSION")
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    // A caller that frames the body itself (chunked, for tests of the server's stream limit)
    // says so with its own Transfer-Encoding; the two framings must never be sent together.
    let framed = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"));
    match body_len {
        _ if framed => {}
        Some(len) => head.push_str(&format!("Content-Length: {len}\r\n")),
        // A body-less POST still says so, or a server would wait for one.
        None if method != "GET" && method != "HEAD" => head.push_str("Content-Length: 0\r\n"),
        None => {}
    }
    head.push_str("\r\n");
    head.into_bytes()
}

fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> Result<usize, ReadFailure> {
    buf.clear();
    let n = r.by_ref().take(MAX_LINE).read_until(b'\n', buf)?;
    if n > 0 && buf.last() != Some(&b'\n') {
        return Err(if n as u64 >= MAX_LINE {
            ReadFailure::Malformed("a header line is too long".into())
        } else {
            ReadFailure::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection ended inside a line",
            ))
        });
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(n)
}

/// Reads one response. Returns it with whether the connection may carry another request.
pub(crate) fn read_response(
    r: &mut impl BufRead,
    head_request: bool,
) -> Result<(Response, bool), ReadFailure> {
    let mut line = Vec::new();
    let n = match read_line(r, &mut line) {
        Ok(n) => n,
        // A reset or a TLS EOF without close_notify before any byte: the idle-close race too.
        Err(ReadFailure::Io(e))
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::ConnectionAborted
            ) =>
        {
            return Err(ReadFailure::ClosedBeforeAnswer);
        }
        Err(e) => return Err(e),
    };
    if n == 0 {
        return Err(ReadFailure::ClosedBeforeAnswer);
    }
    let status_line = String::from_utf8_lossy(&line).into_owned();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or_else(|| ReadFailure::Malformed(format!("bad status line {status_line:?}")))?;
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => {
            return Err(ReadFailure::Malformed(format!(
                "bad status line {status_line:?}"
            )));
        }
    };

    let mut headers = Vec::new();
    loop {
        if read_line(r, &mut line)? == 0 {
            return Err(ReadFailure::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection ended inside the headers",
            )));
        }
        if line.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Err(ReadFailure::Malformed("too many headers".into()));
        }
        let text = String::from_utf8_lossy(&line);
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| ReadFailure::Malformed(format!("bad header line {text:?}")))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let connection = header("connection")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut reusable = if http11 {
        !connection.contains("close")
    } else {
        connection.contains("keep-alive")
    };

    // 1xx, 204 and 304 carry no body, and neither does any answer to HEAD.
    let no_body = head_request || status < 200 || status == 204 || status == 304;
    let chunked =
        header("transfer-encoding").is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let length = header("content-length")
        .map(|v| {
            v.parse::<usize>()
                .map_err(|_| ReadFailure::Malformed(format!("bad Content-Length {v:?}")))
        })
        .transpose()?;
    let body = if no_body {
        Vec::new()
    } else if chunked {
        read_chunked(r)?
    } else if let Some(len) = length {
        if len > MAX_RESPONSE_BODY {
            return Err(ReadFailure::Malformed(format!(
                "a body of {len} bytes is more than this client accepts"
            )));
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        body
    } else {
        // No length: the body runs to the end of the connection, which cannot be reused.
        reusable = false;
        let mut body = Vec::new();
        r.by_ref()
            .take(MAX_RESPONSE_BODY as u64 + 1)
            .read_to_end(&mut body)?;
        if body.len() > MAX_RESPONSE_BODY {
            return Err(ReadFailure::Malformed(
                "the body is more than this client accepts".into(),
            ));
        }
        body
    };
    Ok((
        Response {
            status,
            headers,
            body,
        },
        reusable,
    ))
}

fn read_chunked(r: &mut impl BufRead) -> Result<Vec<u8>, ReadFailure> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        read_line(r, &mut line)?;
        let text = String::from_utf8_lossy(&line);
        let size_text = text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadFailure::Malformed(format!("bad chunk size {text:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line that ends the message.
            loop {
                if read_line(r, &mut line)? == 0 || line.is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len().saturating_add(size) > MAX_RESPONSE_BODY {
            return Err(ReadFailure::Malformed(
                "the body is more than this client accepts".into(),
            ));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        read_line(r, &mut line)?;
        if !line.is_empty() {
            return Err(ReadFailure::Malformed(
                "a chunk is not followed by CRLF".into(),
            ));
        }
    }
}

/// Writes a request head and body in one buffer, so a small request is one TLS record.
pub(crate) fn write_request(
    w: &mut impl Write,
    head: &[u8],
    body: Option<&[u8]>,
) -> io::Result<()> {
    match body {
        Some(body) if !body.is_empty() => {
            let mut all = Vec::with_capacity(head.len() + body.len());
            all.extend_from_slice(head);
            all.extend_from_slice(body);
            w.write_all(&all)?;
        }
        _ => w.write_all(head)?,
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<(Response, bool), ReadFailure> {
        read_response(&mut io::BufReader::new(raw.as_bytes()), false)
    }

    #[test]
    fn content_length_bodies_are_read_exactly_and_keep_the_connection() {
        let (resp, reusable) =
            parse("HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}EXTRA").unwrap();
        assert_eq!(resp.status, 202);
        assert_eq!(resp.body, b"{}");
        assert_eq!(resp.header("content-type"), Some("application/json"));
        assert!(reusable);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        let (resp, reusable) =
            parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n").unwrap();
        assert_eq!(resp.body, b"abcde");
        assert!(reusable);
    }

    #[test]
    fn connection_close_and_unframed_bodies_end_reuse() {
        let (_, reusable) =
            parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!reusable);
        let (resp, reusable) = parse("HTTP/1.1 200 OK\r\n\r\nto the end").unwrap();
        assert_eq!(resp.body, b"to the end");
        assert!(!reusable);
    }

    #[test]
    fn an_empty_connection_is_reported_as_closed_before_answer() {
        assert!(matches!(parse(""), Err(ReadFailure::ClosedBeforeAnswer)));
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for raw in [
            "SPDY/3 200 OK\r\n\r\n",
            "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ] {
            assert!(
                matches!(parse(raw), Err(ReadFailure::Malformed(_))),
                "{raw:?}"
            );
        }
        assert!(matches!(
            parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"),
            Err(ReadFailure::Io(_))
        ));
    }

    #[test]
    fn request_heads_frame_the_body() {
        let head = String::from_utf8(request_head(
            "POST",
            "/v1/jobs",
            "h:1",
            &[("X-A", "b")],
            Some(2),
        ))
        .unwrap();
        assert!(head.starts_with("POST /v1/jobs HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(head.contains("X-A: b\r\n"));
        assert!(head.ends_with("Content-Length: 2\r\n\r\n"));
        assert!(
            String::from_utf8(request_head("DELETE", "/x", "h", &[], None))
                .unwrap()
                .contains("Content-Length: 0")
        );
        assert!(!is_clean("a\r\nInjected: 1"));
    }
}
