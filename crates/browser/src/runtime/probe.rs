//! Asking a Chromium where and whether it listens: the `DevToolsActivePort` file it writes
//! for `--remote-debugging-port=0`, and `GET /json/version` on 127.0.0.1.
//!
//! The GET is a raw HTTP/1.1 request (`Connection: close`; Chromium refuses HTTP/1.0) over a tokio `TcpStream`, not reqwest: reqwest follows
//! `HTTP_PROXY`/`ALL_PROXY` from the environment (a loopback check sent to a proxy fails or,
//! worse, answers for someone else), and the supervisor process stays small. The parsers are
//! public for the fuzz target (`fuzz/fuzz_targets/browser_runtime_probe.rs`).

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The most a `/json/version` answer may be (Chromium's is about 500 bytes).
const MAX_RESPONSE: usize = 64 * 1024;

/// `DevToolsActivePort`: the port on its first line, the browser target's path on its
/// second. `None` unless both are well formed (Chromium may be halfway through writing it).
pub fn parse_devtools_active_port(text: &str) -> Option<(u16, String)> {
    let mut lines = text.lines();
    let port = lines
        .next()?
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)?;
    let path = lines.next()?.trim();
    let id = path.strip_prefix("/devtools/browser/")?;
    let well_formed = !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    well_formed.then(|| (port, path.to_owned()))
}

/// What `/json/version` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionInfo {
    /// `Chrome/148.0.7778.167`, `HeadlessChrome/…`.
    pub browser: String,
    /// `webSocketDebuggerUrl`.
    pub ws_url: String,
}

/// Why `/json/version` gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("no answer on 127.0.0.1:{port}: {reason}")]
    Unreachable { port: u16, reason: String },
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("not an HTTP response")]
    NotHttp,
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("the answer is not /json/version's: {0}")]
    Body(String),
}

#[derive(serde::Deserialize)]
struct VersionBody {
    #[serde(rename = "Browser", default)]
    browser: String,
    #[serde(rename = "webSocketDebuggerUrl")]
    ws_url: String,
}

/// Parses a whole HTTP response to `GET /json/version`: status 200, a body (cut to its
/// `Content-Length` when given) that is JSON with a `ws://` `webSocketDebuggerUrl`.
pub fn parse_json_version(response: &[u8]) -> Result<VersionInfo, ProbeError> {
    let head_end = find(response, b"\r\n\r\n").ok_or(ProbeError::NotHttp)?;
    let head = std::str::from_utf8(&response[..head_end]).map_err(|_| ProbeError::NotHttp)?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or(ProbeError::NotHttp)?;
    let mut parts = status_line.split(' ');
    let version = parts.next().ok_or(ProbeError::NotHttp)?;
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(ProbeError::NotHttp);
    }
    let status = parts
        .next()
        .filter(|code| code.len() == 3)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or(ProbeError::NotHttp)?;
    if status != 200 {
        return Err(ProbeError::Status(status));
    }
    let mut body = &response[head_end + 4..];
    if let Some(length) = content_length(lines)? {
        body = body
            .get(..length)
            .ok_or_else(|| ProbeError::Body(format!("{} of {length} bytes", body.len())))?;
    }
    let parsed: VersionBody =
        serde_json::from_slice(body).map_err(|e| ProbeError::Body(e.to_string()))?;
    if !parsed.ws_url.starts_with("ws://") {
        return Err(ProbeError::Body(format!(
            "webSocketDebuggerUrl {:?} is not ws://",
            parsed.ws_url
        )));
    }
    Ok(VersionInfo {
        browser: parsed.browser,
        ws_url: parsed.ws_url,
    })
}

/// The `Content-Length` header's value, if there is one; a malformed one is an error.
fn content_length<'a>(headers: impl Iterator<Item = &'a str>) -> Result<Option<usize>, ProbeError> {
    for line in headers {
        let Some((name, value)) = line.split_once(':') else {
            return Err(ProbeError::NotHttp);
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            return value
                .trim()
                .parse::<usize>()
                .map(Some)
                .map_err(|_| ProbeError::NotHttp);
        }
    }
    Ok(None)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The port of `http://127.0.0.1:<port>`.
pub fn port_of(http_base: &str) -> Option<u16> {
    http_base
        .strip_prefix("http://127.0.0.1:")?
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
}

/// `GET /json/version` on `127.0.0.1:<port>`, the whole exchange within `timeout`.
pub async fn json_version(port: u16, timeout: Duration) -> Result<VersionInfo, ProbeError> {
    let response = tokio::time::timeout(timeout, fetch(port))
        .await
        .map_err(|_| ProbeError::Timeout(timeout))?
        .map_err(|e| ProbeError::Unreachable {
            port,
            reason: e.to_string(),
        })?;
    parse_json_version(&response)
}

/// Sends the request and reads until the connection closes, the body is complete (by its
/// `Content-Length`) or [`MAX_RESPONSE`] bytes have come.
async fn fetch(port: u16) -> std::io::Result<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let request = format!(
        "GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buf[..n]);
        if response.len() >= MAX_RESPONSE || complete(&response) {
            break;
        }
    }
    response.truncate(MAX_RESPONSE);
    Ok(response)
}

/// Whether a response with a `Content-Length` has all of its body.
fn complete(response: &[u8]) -> bool {
    let Some(head_end) = find(response, b"\r\n\r\n") else {
        return false;
    };
    let Ok(head) = std::str::from_utf8(&response[..head_end]) else {
        return false;
    };
    match content_length(head.split("\r\n").skip(1)) {
        Ok(Some(length)) => response.len() - head_end - 4 >= length,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_port_file_is_read_only_when_whole() {
        assert_eq!(
            parse_devtools_active_port("43165\n/devtools/browser/55edd46d-f6f9\n"),
            Some((43165, "/devtools/browser/55edd46d-f6f9".to_owned()))
        );
        for bad in [
            "",
            "43165",
            "43165\n",
            "0\n/devtools/browser/x",
            "70000\n/devtools/browser/x",
            "abc\n/devtools/browser/x",
            "43165\n/devtools/page/x",
            "43165\n/devtools/browser/",
            "43165\n/devtools/browser/x?y",
        ] {
            assert_eq!(parse_devtools_active_port(bad), None, "{bad:?}");
        }
    }

    const BODY: &str = r#"{"Browser":"Chrome/148.0","webSocketDebuggerUrl":"ws://127.0.0.1:5/devtools/browser/ab"}"#;

    #[test]
    fn a_version_answer_is_parsed_to_its_length() {
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Length:{}\r\nContent-Type: application/json\r\n\r\n{BODY}trailing",
            BODY.len()
        );
        assert_eq!(
            parse_json_version(response.as_bytes()),
            Ok(VersionInfo {
                browser: "Chrome/148.0".into(),
                ws_url: "ws://127.0.0.1:5/devtools/browser/ab".into()
            })
        );
        let unsized_body = format!("HTTP/1.0 200 OK\r\n\r\n{BODY}");
        assert!(parse_json_version(unsized_body.as_bytes()).is_ok());
        assert!(complete(response.as_bytes()));
        assert!(!complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345"
        ));
    }

    #[test]
    fn malformed_answers_are_errors() {
        let cases: [(&[u8], ProbeError); 9] = [
            (b"", ProbeError::NotHttp),
            (b"HTTP/1.1 200 OK\r\n", ProbeError::NotHttp),
            (b"SSH-2.0-OpenSSH\r\n\r\n", ProbeError::NotHttp),
            (b"HTTP/1.1 2000 OK\r\n\r\n{}", ProbeError::NotHttp),
            (b"HTTP/1.1 404 Not Found\r\n\r\n", ProbeError::Status(404)),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}",
                ProbeError::NotHttp,
            ),
            (
                b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n{}",
                ProbeError::NotHttp,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{}",
                ProbeError::Body("2 of 99 bytes".into()),
            ),
            (
                b"HTTP/1.1 200 OK\r\n\r\n{\"webSocketDebuggerUrl\":\"http://x\"}",
                ProbeError::Body("webSocketDebuggerUrl \"http://x\" is not ws://".into()),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                parse_json_version(input),
                Err(expected),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
        assert!(matches!(
            parse_json_version(b"HTTP/1.1 200 OK\r\n\r\nnot json"),
            Err(ProbeError::Body(_))
        ));
    }

    #[test]
    fn only_loopback_bases_have_a_port() {
        assert_eq!(port_of("http://127.0.0.1:9222"), Some(9222));
        assert_eq!(port_of("http://example.com:9222"), None);
        assert_eq!(port_of("http://127.0.0.1:0"), None);
        assert_eq!(port_of("http://127.0.0.1:x"), None);
    }
}
