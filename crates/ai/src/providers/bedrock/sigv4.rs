//! AWS Signature Version 4 for one request: the canonical request, the string to sign, the
//! derived key and the `Authorization` header (`x-amz-date`, `x-amz-content-sha256` is not
//! needed outside S3; `x-amz-security-token` for temporary credentials).
//!
//! Hand-written on ring's HMAC-SHA256 and SHA-256 rather than with aws-sigv4: a header
//! signer is about a hundred lines, AWS publishes test vectors for it (checked below), and
//! the SDK crates would pull a large dependency tree into the LLM layer.

use ring::{digest, hmac};

use super::credentials::AwsCredentials;

/// What one signature is for.
#[derive(Debug, Clone, Copy)]
pub struct SigningScope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ` (UTC).
    pub amz_date: &'a str,
}

/// One request as SigV4 sees it.
#[derive(Debug, Clone, Copy)]
pub struct SignableRequest<'a> {
    pub method: &'a str,
    /// The URL's path exactly as sent (already percent-encoded).
    pub path: &'a str,
    /// The raw query string, without `?`.
    pub query: &'a str,
    /// Headers to sign besides `x-amz-date` (and the token): at least `host`.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// `x-amz-date` for `ms` since the epoch: `20150830T123600Z`.
pub fn amz_date(ms: i64) -> String {
    // `2015-08-30T12:36:00.000Z` without its separators and fraction.
    let iso = pincer_base::time::iso_from_ms(ms);
    let mut out: String = iso
        .chars()
        .take(19)
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    out.push('Z');
    out
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, bytes).as_ref())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> hmac::Tag {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
}

/// RFC 3986 unreserved characters stay; everything else is `%XX` (upper case), as SigV4
/// requires. `keep_slash` for paths.
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The canonical query: each `name=value` pair encoded, sorted by name then value.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (uri_encode(name, false), uri_encode(value, false))
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The headers SigV4 signs: names lower-cased and sorted, values trimmed with inner runs of
/// spaces collapsed. Returns (canonical headers block, signed header names).
fn canonical_headers(headers: &[(&str, &str)]) -> (String, String) {
    let mut list: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| {
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            (name.to_ascii_lowercase(), value)
        })
        .collect();
    list.sort();
    let mut block = String::new();
    for (name, value) in &list {
        block.push_str(name);
        block.push(':');
        block.push_str(value);
        block.push('\n');
    }
    let names = list
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    (block, names)
}

/// The signature and the signed header names of `request`. Non-S3 services encode the
/// (already encoded) path once more, segment by segment: `%3A` is signed as `%253A`.
pub fn signature(
    credentials: &AwsCredentials,
    scope: &SigningScope<'_>,
    request: &SignableRequest<'_>,
) -> (String, String) {
    let path = if request.path.is_empty() {
        "/".to_owned()
    } else {
        uri_encode(request.path, true)
    };
    let (headers, signed) = canonical_headers(request.headers);
    let canonical = format!(
        "{}\n{path}\n{}\n{headers}\n{signed}\n{}",
        request.method,
        canonical_query(request.query),
        sha256_hex(request.body)
    );
    let date = &scope.amz_date[..scope.amz_date.len().min(8)];
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.amz_date,
        sha256_hex(canonical.as_bytes())
    );
    let secret = format!("AWS4{}", credentials.secret_access_key.expose());
    let key = hmac_sha256(secret.as_bytes(), date.as_bytes());
    let key = hmac_sha256(key.as_ref(), scope.region.as_bytes());
    let key = hmac_sha256(key.as_ref(), scope.service.as_bytes());
    let key = hmac_sha256(key.as_ref(), b"aws4_request");
    (
        hex(hmac_sha256(key.as_ref(), to_sign.as_bytes()).as_ref()),
        signed,
    )
}

/// The headers that authenticate `request`: `x-amz-date`, `x-amz-security-token` for
/// temporary credentials, and `authorization`.
pub fn sign(
    credentials: &AwsCredentials,
    scope: &SigningScope<'_>,
    request: &SignableRequest<'_>,
) -> Vec<(String, String)> {
    let mut headers: Vec<(&str, &str)> = request.headers.to_vec();
    headers.push(("x-amz-date", scope.amz_date));
    let token = credentials.session_token.as_ref().map(|t| t.expose());
    if let Some(token) = token {
        headers.push(("x-amz-security-token", token));
    }
    let (signature, signed) = signature(
        credentials,
        scope,
        &SignableRequest {
            headers: &headers,
            ..*request
        },
    );
    let date = &scope.amz_date[..scope.amz_date.len().min(8)];
    let mut out = vec![("x-amz-date".to_owned(), scope.amz_date.to_owned())];
    if let Some(token) = token {
        out.push(("x-amz-security-token".to_owned(), token.to_owned()));
    }
    out.push((
        "authorization".to_owned(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{date}/{}/{}/aws4_request, SignedHeaders={signed}, Signature={signature}",
            credentials.access_key_id, scope.region, scope.service
        ),
    ));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The credentials and time of AWS's SigV4 test suite.
    fn suite(method: &str, path: &str, query: &str) -> Vec<(String, String)> {
        let credentials = AwsCredentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
        );
        let scope = SigningScope {
            region: "us-east-1",
            service: "service",
            amz_date: "20150830T123600Z",
        };
        sign(
            &credentials,
            &scope,
            &SignableRequest {
                method,
                path,
                query,
                headers: &[("Host", "example.amazonaws.com")],
                body: b"",
            },
        )
    }

    fn authorization(headers: &[(String, String)]) -> &str {
        &headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .unwrap()
            .1
    }

    #[test]
    fn aws_test_suite_vectors() {
        let prefix = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=";
        for (name, method, query, signature) in [
            (
                "get-vanilla",
                "GET",
                "",
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
            ),
            (
                "get-vanilla-query-order-key-case",
                "GET",
                "Param2=value2&Param1=value1",
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
            (
                "post-vanilla",
                "POST",
                "",
                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
            ),
        ] {
            let headers = suite(method, "/", query);
            assert_eq!(
                authorization(&headers),
                format!("{prefix}{signature}"),
                "{name}"
            );
            assert_eq!(headers[0], ("x-amz-date".into(), "20150830T123600Z".into()));
        }
    }

    #[test]
    fn temporary_credentials_sign_their_token() {
        let credentials = AwsCredentials::new("AKID", "secret", Some("tok en".into()));
        let scope = SigningScope {
            region: "eu-west-1",
            service: "bedrock",
            amz_date: "20240102T030405Z",
        };
        let headers = sign(
            &credentials,
            &scope,
            &SignableRequest {
                method: "POST",
                path: "/model/a.b-v1%3A0/converse-stream",
                query: "",
                headers: &[("host", "bedrock-runtime.eu-west-1.amazonaws.com")],
                body: b"{}",
            },
        );
        assert_eq!(headers[1], ("x-amz-security-token".into(), "tok en".into()));
        let auth = authorization(&headers);
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKID/20240102/eu-west-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="),
            "{auth}"
        );
        // The path is encoded once more for signing: a different path, a different signature.
        let other = sign(
            &credentials,
            &scope,
            &SignableRequest {
                method: "POST",
                path: "/model/a.b-v1:0/converse-stream",
                query: "",
                headers: &[("host", "bedrock-runtime.eu-west-1.amazonaws.com")],
                body: b"{}",
            },
        );
        assert_ne!(authorization(&other), auth);
    }

    #[test]
    fn dates_and_encoding() {
        assert_eq!(amz_date(1_440_938_160_000), "20150830T123600Z");
        assert_eq!(
            uri_encode("a.claude-v2:1/x y~", true),
            "a.claude-v2%3A1/x%20y~"
        );
        assert_eq!(uri_encode("%3A", true), "%253A");
        assert_eq!(canonical_query("b=2&a=1&A=0"), "A=0&a=1&b=2");
    }
}
