//! A small client of Discord's REST API (v10) over the workspace's reqwest: JSON bodies,
//! `Authorization: Bot <token>`, Discord's `{message, code}` errors and `retry_after` read
//! into [`ChannelError`]s, multipart uploads, and attachment downloads.
//!
//! The token is only ever sent to the API base (never to attachment URLs, which point at
//! a CDN), is kept out of `Debug`, and every reqwest error is taken `without_url`.

use pincer_base::Secret;
use std::time::Duration;

use pincer_channel_port::ChannelError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::support::{FilePart, TextPart, header_number, with_multipart};

const CHANNEL: &str = "discord";
const USER_AGENT: &str = "DiscordBot (pincer, 0.1)";
const TIMEOUT: Duration = Duration::from_secs(30);

/// One bot's REST endpoint.
#[derive(Debug, Clone)]
pub struct DiscordRest {
    client: reqwest::Client,
    /// `<apiBaseUrl>/api/v10`.
    api: String,
    token: Secret,
}

/// A file part of a multipart upload.
pub struct Upload<'a> {
    pub file_name: &'a str,
    pub bytes: Vec<u8>,
}

impl DiscordRest {
    /// `base` is Discord's address (`https://discord.com`); the API is under `/api/v10`.
    pub fn new(client: reqwest::Client, base: &str, token: &str) -> Self {
        Self {
            client,
            api: format!("{}/api/v10", base.trim_end_matches('/')),
            token: Secret::new(token),
        }
    }

    pub fn token(&self) -> &str {
        self.token.expose()
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.api))
            .header(
                reqwest::header::AUTHORIZATION,
                format!("Bot {}", self.token.expose()),
            )
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .timeout(TIMEOUT)
    }

    async fn finish<T: DeserializeOwned>(
        request: reqwest::RequestBuilder,
    ) -> Result<T, ChannelError> {
        let response = request.send().await.map_err(connection_error)?;
        let status = response.status().as_u16();
        let retry_after = header_number::<f64>(&response, reqwest::header::RETRY_AFTER);
        let body = response.bytes().await.map_err(connection_error)?;
        decode_response(status, retry_after, &body)
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ChannelError> {
        Self::finish(self.request(reqwest::Method::GET, path)).await
    }

    /// POSTs `body` as JSON (`None`: an empty body, e.g. typing).
    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, ChannelError> {
        let request = self.request(reqwest::Method::POST, path);
        let request = match body {
            Some(body) => request.json(body),
            None => request.header(reqwest::header::CONTENT_LENGTH, "0"),
        };
        Self::finish(request).await
    }

    /// POSTs a message with one file: `payload_json` and `files[0]`.
    pub async fn upload<T: DeserializeOwned>(
        &self,
        path: &str,
        payload: &Value,
        file: Upload<'_>,
    ) -> Result<T, ChannelError> {
        let payload_json = payload.to_string();
        let request = with_multipart(
            self.request(reqwest::Method::POST, path),
            &[TextPart {
                name: "payload_json",
                content_type: Some("application/json"),
                value: &payload_json,
            }],
            &FilePart {
                field: "files[0]",
                file_name: file.file_name,
                bytes: &file.bytes,
            },
        );
        Self::finish(request).await
    }

    /// Downloads an attachment from its (CDN) `url`, without the token; at most `max`
    /// bytes (more is refused, not truncated).
    pub async fn download(&self, url: &str, max: u64) -> Result<Vec<u8>, ChannelError> {
        let request = self
            .client
            .get(url)
            .header(reqwest::header::USER_AGENT, USER_AGENT);
        crate::support::download_capped(CHANNEL, request, "attachment", max).await
    }
}

fn connection_error(e: reqwest::Error) -> ChannelError {
    crate::support::connection_error(CHANNEL, e)
}

/// Reads a REST answer: the JSON body on 2xx (`null` for 204), else the error as a
/// [`ChannelError`] — 401 a wrong token, 429 `retry_after` (body, else the `Retry-After`
/// header) rounded up, 5xx a connection problem, anything else `{code}: {message}`.
pub fn decode_response<T: DeserializeOwned>(
    status: u16,
    retry_after_header: Option<f64>,
    body: &[u8],
) -> Result<T, ChannelError> {
    let parsed: Option<Value> = if body.iter().all(u8::is_ascii_whitespace) {
        Some(Value::Null)
    } else {
        serde_json::from_slice(body).ok()
    };
    if (200..300).contains(&status) {
        let value = parsed.ok_or_else(|| ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: the answer is not JSON"),
        })?;
        return serde_json::from_value(value).map_err(|e| ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("unexpected answer: {e}"),
        });
    }
    let parsed = parsed.unwrap_or(Value::Null);
    let message = parsed
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned();
    Err(match status {
        401 => ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!("{message} (check channels.discord.token)"),
        },
        429 => {
            let secs = parsed
                .get("retry_after")
                .and_then(Value::as_f64)
                .or(retry_after_header)
                .filter(|s| s.is_finite() && *s >= 0.0)
                .unwrap_or(5.0);
            ChannelError::RateLimited {
                channel: CHANNEL.into(),
                // Saturating: a silly value waits long, never wraps.
                retry_after_secs: secs.ceil().min(86_400.0) as u64,
            }
        }
        500..=599 => ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: {message}"),
        },
        _ => {
            let code = parsed.get("code").and_then(Value::as_i64).unwrap_or(0);
            ChannelError::Api {
                channel: CHANNEL.into(),
                message: format!("HTTP {status} (code {code}): {message}"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses() {
        let ok: Value = decode_response(200, None, br#"{"id":"5"}"#).unwrap();
        assert_eq!(ok["id"], "5");
        let empty: Value = decode_response(204, None, b"").unwrap();
        assert_eq!(empty, Value::Null);
        let limited: Result<Value, _> = decode_response(
            429,
            Some(9.0),
            br#"{"message":"You are being rate limited.","retry_after":1.2,"global":false}"#,
        );
        assert!(matches!(
            limited,
            Err(ChannelError::RateLimited {
                retry_after_secs: 2,
                ..
            })
        ));
        let header_only: Result<Value, _> = decode_response(429, Some(3.0), b"oops");
        assert!(matches!(
            header_only,
            Err(ChannelError::RateLimited {
                retry_after_secs: 3,
                ..
            })
        ));
        let auth: Result<Value, _> =
            decode_response(401, None, br#"{"message":"401: Unauthorized","code":0}"#);
        assert_eq!(
            auth.unwrap_err().to_string(),
            "discord: the platform refused the credentials: 401: Unauthorized (check channels.discord.token)"
        );
        let bad: Result<Value, _> = decode_response(502, None, b"<html>Bad Gateway</html>");
        assert!(matches!(bad, Err(ChannelError::Connection { .. })));
        let form: Result<Value, _> = decode_response(
            400,
            None,
            br#"{"message":"Cannot send an empty message","code":50006}"#,
        );
        assert_eq!(
            form.unwrap_err().to_string(),
            "discord: HTTP 400 (code 50006): Cannot send an empty message"
        );
        let odd: Result<Value, _> = decode_response(200, None, b"not json");
        assert!(odd.is_err());
    }

    #[test]
    fn the_token_stays_out_of_debug() {
        let rest = DiscordRest::new(reqwest::Client::new(), "http://x/", "secret-token");
        let shown = format!("{rest:?}");
        assert!(!shown.contains("secret-token"), "{shown}");
        assert!(shown.contains("http://x/api/v10"), "{shown}");
    }
}
