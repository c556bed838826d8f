//! A small client of the Telegram Bot API over the workspace's reqwest: `POST
//! <base>/bot<token>/<method>` with a JSON body, the `{ok, result | error_code, description,
//! parameters.retry_after}` envelope read into [`ChannelError`]s, and multipart uploads.
//!
//! Hand-written rather than an SDK: the adapter needs seven methods, the envelope decoding
//! must be fuzzable on its own, and the token must never reach a log — reqwest's errors
//! carry the URL (with the token in its path), so every error is taken `without_url`.
//! Uploads use the shared hand-built multipart body (`crate::support`).

use pincer_base::Secret;
use std::time::Duration;

use pincer_channel_port::ChannelError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::support::{FilePart, text_parts, with_multipart};

const CHANNEL: &str = "telegram";
/// The long poll's own wait, plus slack for the network.
const HTTP_SLACK: Duration = Duration::from_secs(15);

/// One bot's API endpoint.
#[derive(Debug, Clone)]
pub struct TelegramApi {
    client: reqwest::Client,
    base: String,
    token: Secret,
}

/// A file part of a multipart upload.
pub struct Upload<'a> {
    /// `document` or `photo`.
    pub field: &'a str,
    pub file_name: &'a str,
    pub bytes: Vec<u8>,
}

impl TelegramApi {
    pub fn new(client: reqwest::Client, base: &str, token: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            token: Secret::new(token),
        }
    }

    fn url(&self, method: &str) -> String {
        format!("{}/bot{}/{method}", self.base, self.token.expose())
    }

    /// The download address of a `getFile` path.
    pub fn file_url(&self, file_path: &str) -> String {
        format!("{}/file/bot{}/{file_path}", self.base, self.token.expose())
    }

    /// Calls `method` with JSON `params`; `wait` is how long the server may hold the call
    /// (long polling).
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: &Value,
        wait: Duration,
    ) -> Result<T, ChannelError> {
        let request = self
            .client
            .post(self.url(method))
            .json(params)
            .timeout(wait + HTTP_SLACK);
        finish(request).await
    }

    /// `sendDocument` / `sendPhoto` with a file: `fields` are the text parts.
    pub async fn upload<T: DeserializeOwned>(
        &self,
        method: &str,
        fields: &[(&str, String)],
        file: Upload<'_>,
    ) -> Result<T, ChannelError> {
        let request = with_multipart(
            self.client.post(self.url(method)),
            &text_parts(fields),
            &FilePart {
                field: file.field,
                file_name: file.file_name,
                bytes: &file.bytes,
            },
        );
        finish(request).await
    }

    /// Downloads a file (at most `max` bytes: more is refused, not truncated).
    pub async fn download(&self, file_path: &str, max: u64) -> Result<Vec<u8>, ChannelError> {
        let request = self.client.get(self.file_url(file_path));
        crate::support::download_capped(CHANNEL, request, "file", max).await
    }
}

/// Sends `request` and reads the answer's envelope.
async fn finish<T: DeserializeOwned>(request: reqwest::RequestBuilder) -> Result<T, ChannelError> {
    let response = request.send().await.map_err(connection_error)?;
    let status = response.status().as_u16();
    let body = response.bytes().await.map_err(connection_error)?;
    decode_envelope(status, &body)
}

fn connection_error(e: reqwest::Error) -> ChannelError {
    crate::support::connection_error(CHANNEL, e)
}

/// Reads the Bot API's envelope: `result` on `ok`, else the error as a [`ChannelError`]
/// (401/404 on every call means a wrong token; 429 carries `retry_after`).
pub fn decode_envelope<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T, ChannelError> {
    let envelope: Value = serde_json::from_slice(body).map_err(|e| ChannelError::Connection {
        channel: CHANNEL.into(),
        message: format!("HTTP {status}: the answer is not JSON ({e})"),
    })?;
    if envelope.get("ok").and_then(Value::as_bool) == Some(true) {
        let result = envelope.get("result").cloned().unwrap_or(Value::Null);
        return serde_json::from_value(result).map_err(|e| ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("unexpected result: {e}"),
        });
    }
    let code = envelope
        .get("error_code")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(status));
    let description = envelope
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("no description")
        .to_owned();
    Err(match code {
        401 | 404 => ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!("{description} (check channels.telegram.botToken)"),
        },
        429 => ChannelError::RateLimited {
            channel: CHANNEL.into(),
            retry_after_secs: envelope
                .pointer("/parameters/retry_after")
                .and_then(Value::as_u64)
                .unwrap_or(5),
        },
        500..=599 => ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {code}: {description}"),
        },
        _ => ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("{code}: {description}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes() {
        let ok: Result<bool, _> = decode_envelope(200, br#"{"ok":true,"result":true}"#);
        assert!(ok.unwrap());
        let limited: Result<Value, _> = decode_envelope(
            429,
            br#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}"#,
        );
        assert!(matches!(
            limited,
            Err(ChannelError::RateLimited {
                retry_after_secs: 7,
                ..
            })
        ));
        let auth: Result<Value, _> = decode_envelope(
            401,
            br#"{"ok":false,"error_code":401,"description":"Unauthorized"}"#,
        );
        assert_eq!(
            auth.unwrap_err().to_string(),
            "telegram: the platform refused the credentials: Unauthorized (check channels.telegram.botToken)"
        );
        let bad: Result<Value, _> = decode_envelope(502, b"<html>Bad Gateway</html>");
        assert!(matches!(bad, Err(ChannelError::Connection { .. })));
        let odd: Result<Value, _> = decode_envelope(200, br#"[1,2]"#);
        assert!(odd.is_err());
    }
}
