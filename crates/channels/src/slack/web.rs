//! A small client of Slack's Web API over the workspace's reqwest: `POST {api}/{method}`
//! with `Authorization: Bearer` (the bot token; the app token only for
//! `apps.connections.open`), JSON or form bodies, Slack's `{"ok": false, "error": …}`
//! answers (HTTP 200 for most errors) and HTTP 429 `Retry-After` read into
//! [`ChannelError`]s, private file downloads and external uploads.
//!
//! The tokens are kept out of `Debug`, every reqwest error is taken `without_url`, and the
//! bot token is sent with a download only to Slack's own hosts (or the configured API's).

use pincer_base::Secret;
use std::time::Duration;

use pincer_channel_port::ChannelError;
use serde_json::Value;

use crate::support::{header_number, header_text};

const CHANNEL: &str = "slack";
const TIMEOUT: Duration = Duration::from_secs(30);
const FILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Which token a call uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// `xoxb-…`: every Web API call.
    Bot,
    /// `xapp-…`: only `apps.connections.open`.
    App,
}

/// One app's Web API endpoint.
#[derive(Debug, Clone)]
pub struct SlackWeb {
    client: reqwest::Client,
    /// `https://slack.com/api` (no trailing slash).
    api: String,
    bot_token: Secret,
    app_token: Secret,
}

/// Why a file could not be downloaded.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("the file is over the {0}-byte limit")]
    TooBig(u64),
    #[error("{0}")]
    Failed(String),
}

impl crate::support::FetchError for DownloadError {
    fn is_too_big(&self) -> bool {
        matches!(self, Self::TooBig(_))
    }
}

impl SlackWeb {
    pub fn new(client: reqwest::Client, api: &str, bot_token: &str, app_token: &str) -> Self {
        Self {
            client,
            api: api.trim_end_matches('/').to_owned(),
            bot_token: Secret::new(bot_token),
            app_token: Secret::new(app_token),
        }
    }

    fn request(&self, method: &str, token: Token) -> reqwest::RequestBuilder {
        let token = match token {
            Token::Bot => self.bot_token.expose(),
            Token::App => self.app_token.expose(),
        };
        self.client
            .post(format!("{}/{method}", self.api))
            .header(reqwest::header::AUTHORIZATION, format!("Bearer {token}"))
            .timeout(TIMEOUT)
    }

    async fn finish(method: &str, request: reqwest::RequestBuilder) -> Result<Value, ChannelError> {
        let response = request.send().await.map_err(connection_error)?;
        let status = response.status().as_u16();
        let retry_after = header_number::<f64>(&response, reqwest::header::RETRY_AFTER);
        let body = response.bytes().await.map_err(connection_error)?;
        decode_response(method, status, retry_after, &body)
    }

    /// Calls `method` with a JSON body and the bot token.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let request = self
            .request(method, Token::Bot)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/json; charset=utf-8",
            )
            .body(body.to_string());
        Self::finish(method, request).await
    }

    /// Calls `method` with form fields (some methods, e.g. `files.getUploadURLExternal`,
    /// take no JSON).
    pub async fn call_form(
        &self,
        method: &str,
        fields: &[(&str, &str)],
        token: Token,
    ) -> Result<Value, ChannelError> {
        let request = self
            .request(method, token)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form_encode(fields));
        Self::finish(method, request).await
    }

    /// Whether the bot token may go with a request to `url`: Slack's own hosts over
    /// https, or the configured API's origin (a proxy, a test fake).
    fn token_goes_to(&self, url: &reqwest::Url) -> bool {
        let slack = url.scheme() == "https"
            && url
                .host_str()
                .is_some_and(|h| h == "slack.com" || h.ends_with(".slack.com"));
        let same_origin = reqwest::Url::parse(&self.api).is_ok_and(|api| {
            api.scheme() == url.scheme()
                && api.host_str() == url.host_str()
                && api.port_or_known_default() == url.port_or_known_default()
        });
        slack || same_origin
    }

    /// Downloads a private file (with the bot token); at most `max` bytes (more is
    /// refused, not truncated).
    pub async fn download(&self, url: &str, max: u64) -> Result<Vec<u8>, DownloadError> {
        let failed = |e: String| DownloadError::Failed(e);
        let parsed = reqwest::Url::parse(url).map_err(|e| failed(format!("bad file URL: {e}")))?;
        let mut request = self.client.get(parsed.clone()).timeout(FILE_TIMEOUT);
        if self.token_goes_to(&parsed) {
            request = request.header(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", self.bot_token.expose()),
            );
        }
        let response = request
            .send()
            .await
            .map_err(|e| failed(e.without_url().to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!(
                "file download failed with HTTP {}",
                response.status()
            )));
        }
        // Without `files:read` Slack answers a file URL with its HTML sign-in page.
        let html = header_text(&response, reqwest::header::CONTENT_TYPE)
            .is_some_and(|v| v.starts_with("text/html"));
        if html {
            return Err(failed(
                "Slack answered with a web page instead of the file (does the bot have the files:read scope?)".into(),
            ));
        }
        if response.content_length().is_some_and(|n| n > max) {
            return Err(DownloadError::TooBig(max));
        }
        crate::support::read_capped(response, max)
            .await
            .map_err(|e| failed(e.without_url().to_string()))?
            .ok_or(DownloadError::TooBig(max))
    }

    /// POSTs a file's bytes to the `upload_url` of `files.getUploadURLExternal` (no token:
    /// the URL is its own credential).
    pub async fn upload(&self, upload_url: &str, bytes: Vec<u8>) -> Result<(), ChannelError> {
        let response = self
            .client
            .post(upload_url)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes)
            .timeout(FILE_TIMEOUT)
            .send()
            .await
            .map_err(connection_error)?;
        let status = response.status().as_u16();
        match status {
            200..=299 => Ok(()),
            429 => Err(ChannelError::RateLimited {
                channel: CHANNEL.into(),
                retry_after_secs: 5,
            }),
            500..=599 => Err(connection(format!("file upload failed with HTTP {status}"))),
            _ => Err(ChannelError::Api {
                channel: CHANNEL.into(),
                message: format!("file upload failed with HTTP {status}"),
            }),
        }
    }
}

fn connection(message: String) -> ChannelError {
    ChannelError::Connection {
        channel: CHANNEL.into(),
        message,
    }
}

fn connection_error(e: reqwest::Error) -> ChannelError {
    connection(e.without_url().to_string())
}

/// `application/x-www-form-urlencoded` of `fields`.
pub fn form_encode(fields: &[(&str, &str)]) -> String {
    fn encode(out: &mut String, text: &str) {
        for byte in text.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                    out.push(char::from(byte));
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{byte:02X}")),
            }
        }
    }
    let mut out = String::new();
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode(&mut out, name);
        out.push('=');
        encode(&mut out, value);
    }
    out
}

/// Reads a Web API answer of `method`: the JSON object when `ok` is true, else a
/// [`ChannelError`] — HTTP 429 or `ratelimited` a rate limit (`Retry-After` seconds, else
/// 5), 5xx or a body that is not JSON a connection problem, refused tokens
/// (`invalid_auth`, `not_authed`, `account_inactive`, `token_revoked`, `token_expired`,
/// `not_allowed_token_type`) unauthorized, any other error `{method}: {error}`.
pub fn decode_response(
    method: &str,
    status: u16,
    retry_after: Option<f64>,
    body: &[u8],
) -> Result<Value, ChannelError> {
    let rate_limited = || ChannelError::RateLimited {
        channel: CHANNEL.into(),
        // Saturating: a silly value waits long, never wraps.
        retry_after_secs: retry_after
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(5, |s| s.ceil().min(86_400.0) as u64),
    };
    match status {
        429 => return Err(rate_limited()),
        500..=599 => return Err(connection(format!("{method}: HTTP {status}"))),
        _ => {}
    }
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let Some(Value::Object(answer)) = parsed else {
        return Err(if (200..300).contains(&status) {
            connection(format!(
                "{method}: HTTP {status}: the answer is not a JSON object"
            ))
        } else {
            ChannelError::Api {
                channel: CHANNEL.into(),
                message: format!("{method}: HTTP {status}"),
            }
        });
    };
    if answer.get("ok").and_then(Value::as_bool) == Some(true) && (200..300).contains(&status) {
        return Ok(Value::Object(answer));
    }
    let error = answer
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("unknown_error");
    let key = if method == "apps.connections.open" {
        "appToken"
    } else {
        "botToken"
    };
    Err(match error {
        "invalid_auth"
        | "not_authed"
        | "account_inactive"
        | "token_revoked"
        | "token_expired"
        | "not_allowed_token_type" => ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!("{method}: {error} (check channels.slack.{key})"),
        },
        "ratelimited" => rate_limited(),
        "missing_scope" => ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!(
                "{method}: missing_scope (the app needs the {} scope)",
                answer
                    .get("needed")
                    .and_then(Value::as_str)
                    .unwrap_or("right")
            ),
        },
        other => ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("{method}: {other}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(method: &str, status: u16, retry: Option<f64>, body: &str) -> String {
        decode_response(method, status, retry, body.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn answers() {
        let ok = decode_response("auth.test", 200, None, br#"{"ok":true,"user_id":"U0"}"#);
        assert_eq!(ok.unwrap()["user_id"], "U0");
        assert_eq!(
            err(
                "auth.test",
                200,
                None,
                r#"{"ok":false,"error":"invalid_auth"}"#
            ),
            "slack: the platform refused the credentials: auth.test: invalid_auth (check channels.slack.botToken)"
        );
        assert_eq!(
            err(
                "apps.connections.open",
                200,
                None,
                r#"{"ok":false,"error":"not_allowed_token_type"}"#
            ),
            "slack: the platform refused the credentials: apps.connections.open: not_allowed_token_type (check channels.slack.appToken)"
        );
        assert!(matches!(
            decode_response("chat.postMessage", 429, Some(7.0), b"{}"),
            Err(ChannelError::RateLimited {
                retry_after_secs: 7,
                ..
            })
        ));
        assert!(matches!(
            decode_response(
                "chat.postMessage",
                200,
                None,
                br#"{"ok":false,"error":"ratelimited"}"#
            ),
            Err(ChannelError::RateLimited {
                retry_after_secs: 5,
                ..
            })
        ));
        assert!(matches!(
            decode_response("chat.postMessage", 429, Some(f64::NAN), b""),
            Err(ChannelError::RateLimited {
                retry_after_secs: 5,
                ..
            })
        ));
        assert!(matches!(
            decode_response("chat.postMessage", 503, None, b"<html>"),
            Err(ChannelError::Connection { .. })
        ));
        assert!(matches!(
            decode_response("chat.postMessage", 200, None, b"not json"),
            Err(ChannelError::Connection { .. })
        ));
        assert_eq!(
            err(
                "chat.postMessage",
                200,
                None,
                r#"{"ok":false,"error":"not_in_channel"}"#
            ),
            "slack: chat.postMessage: not_in_channel"
        );
        assert_eq!(
            err(
                "chat.postMessage",
                200,
                None,
                r#"{"ok":false,"error":"missing_scope","needed":"chat:write"}"#
            ),
            "slack: chat.postMessage: missing_scope (the app needs the chat:write scope)"
        );
        assert_eq!(err("x", 404, None, "nope"), "slack: x: HTTP 404");
        assert_eq!(
            err("x", 200, None, r#"{"ok":"yes"}"#),
            "slack: x: unknown_error"
        );
    }

    #[test]
    fn forms_and_secrets() {
        assert_eq!(
            form_encode(&[("filename", "a b&c=é.txt"), ("length", "12")]),
            "filename=a+b%26c%3D%C3%A9.txt&length=12"
        );
        let web = SlackWeb::new(
            reqwest::Client::new(),
            "http://127.0.0.1:9/api/",
            "xoxb-s",
            "xapp-s",
        );
        let shown = format!("{web:?}");
        assert!(
            !shown.contains("xoxb-s") && !shown.contains("xapp-s"),
            "{shown}"
        );
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(web.token_goes_to(&url("https://files.slack.com/files-pri/T1-F1/a.png")));
        assert!(web.token_goes_to(&url("http://127.0.0.1:9/files/F1")));
        assert!(!web.token_goes_to(&url("http://127.0.0.1:10/files/F1")));
        assert!(!web.token_goes_to(&url("http://files.slack.com/a")));
        assert!(!web.token_goes_to(&url("https://evilslack.com/a")));
    }
}
