//! Reading one request and writing one reply, both bounded.
//!
//! [`serve`] is the whole life of a request after the drop; the worker calls it on its
//! stdin, and the provider calls it in-process (on the same bytes) when it cannot start a
//! real worker, so both paths parse, check and answer identically.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use crate::protocol::{ErrorCode, MAX_REPLY_BYTES, MAX_REQUEST_BYTES, Reply, Request, TenantError};
use crate::work;

/// Reads one request from `input`: at most [`MAX_REQUEST_BYTES`], up to a newline or the
/// end. One byte more is `request_too_large`; the rest is never read. Only a request that
/// reads a stream ([`Request::reads_stream`]) may be followed by anything.
pub fn read_request(input: impl Read) -> Result<Request, TenantError> {
    read_request_line(&mut BufReader::new(input))
}

fn read_request_line(input: &mut impl BufRead) -> Result<Request, TenantError> {
    let read_error =
        |e: std::io::Error| TenantError::new(ErrorCode::Io, format!("read the request: {e}"));
    let mut bytes = Vec::new();
    input
        .take(MAX_REQUEST_BYTES as u64 + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(read_error)?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    let request = parse_request(&bytes)?;
    if !request.reads_stream() && !input.fill_buf().map_err(read_error)?.is_empty() {
        return Err(TenantError::new(
            ErrorCode::RequestInvalid,
            "bytes after the request",
        ));
    }
    Ok(request)
}

/// Parses one request from `bytes`.
pub fn parse_request(bytes: &[u8]) -> Result<Request, TenantError> {
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(TenantError::new(
            ErrorCode::RequestTooLarge,
            format!("the request is larger than {MAX_REQUEST_BYTES} bytes"),
        ));
    }
    // serde_json limits nesting (128 levels), so a deeply nested document is an error,
    // not a stack overflow.
    let request: Request = serde_json::from_slice(bytes)
        .map_err(|e| TenantError::new(ErrorCode::RequestInvalid, e.to_string()))?;
    request.check()?;
    Ok(request)
}

/// Reads, runs and answers one request against `home`. An archive goes to `output`; the
/// second value says whether one was written there (the reply then belongs elsewhere).
pub fn serve(input: impl Read, output: &mut dyn Write, home: &Path) -> (Reply, bool) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let request = match read_request_line(&mut input) {
        Ok(request) => request,
        Err(error) => return (Reply::Error(error), false),
    };
    let reply = match work::handle_stream(home, &request, &mut input, output) {
        Ok(result) => Reply::Ok(result),
        Err(error) => Reply::Error(error),
    };
    (reply, request.writes_stream())
}

/// The reply as bytes, never more than [`MAX_REPLY_BYTES`].
pub fn encode_reply(reply: &Reply) -> Vec<u8> {
    let bytes = serde_json::to_vec(reply).unwrap_or_default();
    if !bytes.is_empty() && bytes.len() <= MAX_REPLY_BYTES {
        return bytes;
    }
    let error = Reply::Error(TenantError::new(
        ErrorCode::ReplyTooLarge,
        format!("the reply would exceed {MAX_REPLY_BYTES} bytes"),
    ));
    serde_json::to_vec(&error).expect("a short error reply serializes")
}

/// Parses a reply read back from a worker: untrusted (it ran as the tenant), so bounded and
/// strictly typed.
pub fn decode_reply(bytes: &[u8]) -> Result<Reply, String> {
    if bytes.len() > MAX_REPLY_BYTES {
        return Err(format!("reply larger than {MAX_REPLY_BYTES} bytes"));
    }
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TenantResult;

    #[test]
    fn hostile_inputs_are_typed_errors() {
        let nested = "[".repeat(100_000);
        let cases: Vec<(Vec<u8>, ErrorCode)> = vec![
            (
                vec![b'x'; MAX_REQUEST_BYTES + 1],
                ErrorCode::RequestTooLarge,
            ),
            (Vec::new(), ErrorCode::RequestInvalid),
            (b"\0\0\0".to_vec(), ErrorCode::RequestInvalid),
            (vec![0xff, 0xfe, b'{'], ErrorCode::RequestInvalid),
            (nested.into_bytes(), ErrorCode::RequestInvalid),
            (
                br#"{"op":"whoami"}{"op":"whoami"}"#.to_vec(),
                ErrorCode::RequestInvalid,
            ),
            (
                br#"{"op":"ensure_dirs","dirs":[],"mode":"public"}"#.to_vec(),
                ErrorCode::RequestInvalid,
            ),
        ];
        for (bytes, code) in cases {
            let err = read_request(&bytes[..]).unwrap_err();
            assert_eq!(
                err.code,
                code,
                "{:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
            );
        }
    }

    #[test]
    fn replies_are_bounded_and_round_trip() {
        let reply = Reply::Ok(TenantResult::WriteFile { bytes: 3 });
        let bytes = encode_reply(&reply);
        assert_eq!(decode_reply(&bytes).unwrap(), reply);
        let huge = Reply::Error(TenantError {
            code: ErrorCode::Io,
            message: "x".repeat(MAX_REPLY_BYTES),
        });
        let bytes = encode_reply(&huge);
        assert!(bytes.len() <= MAX_REPLY_BYTES);
        let Reply::Error(e) = decode_reply(&bytes).unwrap() else {
            panic!("an error reply")
        };
        assert_eq!(e.code, ErrorCode::ReplyTooLarge);
        assert!(decode_reply(br#"{"ok":{"op":"write_file","bytes":1,"extra":2}}"#).is_err());
        assert!(decode_reply(&vec![b' '; MAX_REPLY_BYTES + 1]).is_err());
    }
}
