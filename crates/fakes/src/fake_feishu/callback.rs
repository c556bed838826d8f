//! The event-callback mode from Feishu's side: a [`CallbackClient`] POSTs events to an
//! adapter's request URL the way Feishu does — encrypted (`{"encrypt": base64(iv ‖
//! AES-256-CBC(sha256(key), iv, PKCS#7(json)))}`) and signed (`X-Lark-Signature` = hex
//! sha256(timestamp ‖ nonce ‖ key ‖ body)) when an encrypt key is set — plus the
//! `url_verification` challenge and deliberately wrong requests (bad signature, replayed
//! timestamp, raw bodies).
//!
//! The crypto is the fake's own (aes + cbc + sha2), written from the protocol notes
//! independently of the adapter's, and the HTTP client is a minimal HTTP/1.1 one over a
//! TCP stream (the testkit has no HTTP client dependency): `http://` URLs only.

use std::sync::Arc;
use std::time::Duration;

use aes::Aes256;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::inject::{InjectFeishuMessage, receive_event};
use super::state::Shared;

/// How long a callback may take to be answered (the adapter answers after handing the
/// event to the gateway).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The answer to a callback POST. `status` 0 means no HTTP answer at all (`body` says
/// why: connection refused, timeout, garbage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    pub status: u16,
    pub body: String,
    /// The chat message id of a posted message event.
    pub message_id: Option<String>,
}

impl Posted {
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `X-Lark-Signature`: lowercase hex of sha256(timestamp ‖ nonce ‖ encrypt_key ‖ body).
pub fn signature(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(timestamp.as_bytes());
    hasher.update(nonce.as_bytes());
    hasher.update(encrypt_key.as_bytes());
    hasher.update(body);
    hex(&hasher.finalize())
}

/// `base64(iv ‖ AES-256-CBC(key = sha256(encrypt_key), iv, PKCS#7(plaintext)))`.
pub fn encrypt(encrypt_key: &str, iv: [u8; 16], plaintext: &[u8]) -> String {
    let key = Sha256::digest(encrypt_key.as_bytes());
    let mut out = iv.to_vec();
    // Both lengths are fixed (32 and 16 bytes), so this never fails.
    if let Ok(cipher) = cbc::Encryptor::<Aes256>::new_from_slices(&key, &iv) {
        out.extend(cipher.encrypt_padded_vec_mut::<Pkcs7>(plaintext));
    }
    STANDARD.encode(out)
}

/// The inverse of [`encrypt`]; `None` for anything malformed.
pub fn decrypt(encrypt_key: &str, encrypted: &str) -> Option<Vec<u8>> {
    let bytes = STANDARD.decode(encrypted).ok()?;
    let (iv, data) = bytes.split_at_checked(16)?;
    let key = Sha256::digest(encrypt_key.as_bytes());
    let cipher = cbc::Decryptor::<Aes256>::new_from_slices(&key, iv).ok()?;
    cipher.decrypt_padded_vec_mut::<Pkcs7>(data).ok()
}

fn unix_now() -> u64 {
    pincer_base::time::now_secs().unsigned_abs()
}

/// Posts events to an adapter's callback URL as Feishu would; made by
/// [`FakeFeishu::callback_client`](super::FakeFeishu::callback_client).
#[derive(Clone)]
pub struct CallbackClient {
    pub(crate) shared: Arc<Shared>,
    pub(crate) url: String,
    pub(crate) verification_token: String,
    pub(crate) encrypt_key: Option<String>,
}

impl std::fmt::Debug for CallbackClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackClient")
            .field("url", &self.url)
            .field("encrypted", &self.encrypt_key.is_some())
            .finish()
    }
}

impl CallbackClient {
    /// The event of `message` (its images and files served by the fake), encrypted and
    /// signed when a key is set.
    pub async fn post_event(&self, message: InjectFeishuMessage) -> Posted {
        let (message_id, event) = self.event(&message);
        let mut posted = self.post_json(&event).await;
        posted.message_id = Some(message_id);
        posted
    }

    /// Any event JSON, as Feishu sends it (encrypted and signed when a key is set).
    pub async fn post_json(&self, event: &Value) -> Posted {
        let body = self.body(event);
        self.post_signed(body, unix_now(), None).await
    }

    /// The URL check Feishu makes when the request URL is saved: `{"challenge", "token",
    /// "type": "url_verification"}`, encrypted when a key is set (as Feishu does).
    pub async fn post_url_verification(&self, challenge: &str) -> Posted {
        self.post_json(&self.challenge(challenge)).await
    }

    /// The URL check in plaintext even when a key is set.
    pub async fn post_url_verification_plain(&self, challenge: &str) -> Posted {
        let body = self.challenge(challenge).to_string().into_bytes();
        self.post_signed(body, unix_now(), None).await
    }

    /// `body` as is, with these headers only (plus `Content-Type: application/json`).
    pub async fn post_raw(&self, body: impl Into<Vec<u8>>, headers: &[(&str, &str)]) -> Posted {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        post(&self.url, &body.into(), &headers).await
    }

    /// The event of `message` with a wrong `X-Lark-Signature` (the adapter must answer
    /// 401 and drop it).
    pub async fn post_with_bad_signature(&self, message: InjectFeishuMessage) -> Posted {
        let (message_id, event) = self.event(&message);
        let body = self.body(&event);
        let bad = signature("0", "bad", "not-the-key", &body);
        let mut posted = self.post_signed(body, unix_now(), Some(bad)).await;
        posted.message_id = Some(message_id);
        posted
    }

    /// The event of `message` correctly signed, but with a timestamp `age` old (a replay:
    /// the adapter must answer 401 when it is more than 5 minutes off).
    pub async fn post_replayed(&self, message: InjectFeishuMessage, age: Duration) -> Posted {
        let (message_id, event) = self.event(&message);
        let body = self.body(&event);
        let timestamp = unix_now().saturating_sub(age.as_secs());
        let mut posted = self.post_signed(body, timestamp, None).await;
        posted.message_id = Some(message_id);
        posted
    }

    /// The event of `message` without the signature headers.
    pub async fn post_unsigned(&self, message: InjectFeishuMessage) -> Posted {
        let (message_id, event) = self.event(&message);
        let body = self.body(&event);
        let mut posted = post(&self.url, &body, &[]).await;
        posted.message_id = Some(message_id);
        posted
    }

    fn challenge(&self, challenge: &str) -> Value {
        json!({
            "challenge": challenge,
            "token": self.verification_token,
            "type": "url_verification",
        })
    }

    fn event(&self, message: &InjectFeishuMessage) -> (String, Value) {
        let shared = &self.shared;
        shared.update(|inner| receive_event(shared, inner, message, &self.verification_token))
    }

    /// The request body of `payload`: encrypted when a key is set.
    fn body(&self, payload: &Value) -> Vec<u8> {
        let plaintext = payload.to_string();
        match &self.encrypt_key {
            Some(key) => {
                let id = self.shared.update(|inner| inner.take_id());
                let seed = Sha256::digest(format!("{id}-{}", unix_now()).as_bytes());
                let mut iv = [0u8; 16];
                iv.copy_from_slice(seed.get(..16).unwrap_or(&[0; 16]));
                json!({"encrypt": encrypt(key, iv, plaintext.as_bytes())})
                    .to_string()
                    .into_bytes()
            }
            None => plaintext.into_bytes(),
        }
    }

    /// Posts `body` with the timestamp, nonce and signature headers (`signature`
    /// overrides the right one). Without an encrypt key Feishu signs with an empty key.
    async fn post_signed(&self, body: Vec<u8>, timestamp: u64, sig: Option<String>) -> Posted {
        let timestamp = timestamp.to_string();
        let nonce = format!("n{:x}", self.shared.update(|inner| inner.take_id()));
        let key = self.encrypt_key.as_deref().unwrap_or_default();
        let sig = sig.unwrap_or_else(|| signature(&timestamp, &nonce, key, &body));
        let headers = vec![
            ("X-Lark-Request-Timestamp".to_owned(), timestamp),
            ("X-Lark-Request-Nonce".to_owned(), nonce),
            ("X-Lark-Signature".to_owned(), sig),
        ];
        post(&self.url, &body, &headers).await
    }
}

fn no_answer(why: String) -> Posted {
    Posted {
        status: 0,
        body: why,
        message_id: None,
    }
}

/// One HTTP/1.1 POST with `Connection: close`; reads the whole answer.
async fn post(url: &str, body: &[u8], headers: &[(String, String)]) -> Posted {
    let Some(rest) = url.strip_prefix("http://") else {
        return no_answer(format!("only http:// URLs are supported: {url}"));
    };
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: Go-http-client/1.1\r\n\
         Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let exchange = async {
        let mut stream = TcpStream::connect(authority).await?;
        stream.write_all(request.as_bytes()).await?;
        stream.write_all(body).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    match tokio::time::timeout(ANSWER_TIMEOUT, exchange).await {
        Ok(Ok(answer)) => parse_answer(&answer),
        Ok(Err(err)) => no_answer(format!("POST {url}: {err}")),
        Err(_) => no_answer(format!("POST {url}: no answer within {ANSWER_TIMEOUT:?}")),
    }
}

fn parse_answer(answer: &[u8]) -> Posted {
    let Some(split) = answer.windows(4).position(|window| window == b"\r\n\r\n") else {
        return no_answer(format!(
            "malformed answer: {}",
            String::from_utf8_lossy(answer)
        ));
    };
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let raw = &answer[split + 4..];
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let chunked = head.lines().any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("transfer-encoding")
                && value.to_ascii_lowercase().contains("chunked")
        })
    });
    let body = if chunked { dechunk(raw) } else { raw.to_vec() };
    Posted {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
        message_id: None,
    }
}

/// Decodes a chunked body (stops at the first malformed chunk).
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|window| window == b"\r\n") {
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            break;
        };
        let start = line_end + 2;
        if size == 0 {
            break;
        }
        let Some(chunk) = raw.get(start..start + size) else {
            out.extend_from_slice(raw.get(start..).unwrap_or_default());
            break;
        };
        out.extend_from_slice(chunk);
        raw = raw.get(start + size + 2..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn encrypt_roundtrip_and_signature() {
        let encrypted = encrypt("key", [7; 16], b"{\"a\":1}");
        assert_eq!(decrypt("key", &encrypted).unwrap(), b"{\"a\":1}");
        assert_eq!(decrypt("other", &encrypted), None);
        assert_eq!(decrypt("key", "%%%"), None);
        // sha256("") for empty inputs.
        assert_eq!(
            signature("", "", "", b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn answers() {
        let posted = parse_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
        assert_eq!((posted.status, posted.body.as_str()), (200, "{}"));
        let posted = parse_answer(
            b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        );
        assert_eq!((posted.status, posted.body.as_str()), (401, "abc"));
        assert_eq!(parse_answer(b"garbage").status, 0);
    }
}
