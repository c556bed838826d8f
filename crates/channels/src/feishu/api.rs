//! A small client of the Feishu / Lark Open API over the workspace's reqwest: the
//! `{"code", "msg", …}` envelope (a code other than 0 is an error even with HTTP 200) read
//! into [`ChannelError`]s, the tenant token sent as a bearer and refreshed once when
//! Feishu calls it invalid, multipart uploads, resource downloads within a size limit, and
//! the long connection's endpoint.
//!
//! The app secret and the token never appear in a message or in `Debug`; every reqwest
//! error is taken `without_url`.

use pincer_base::Secret;
use std::time::{Duration, Instant};

use pincer_channel_port::ChannelError;
use serde_json::{Value, json};

use super::CHANNEL;
use super::answers::{
    TOKEN_INVALID_CODES, WsEndpoint, answer_code, api_error, data_key, decode_answer,
    decode_endpoint, file_type_for, path_segment, sent_id,
};
use super::auth::{TokenCache, decode_token_answer};
use crate::support::{FilePart, header_number, header_text, multipart_body};

const TIMEOUT: Duration = Duration::from_secs(30);
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// One app's Open API client.
#[derive(Debug)]
pub struct FeishuApi {
    client: reqwest::Client,
    base: String,
    app_id: String,
    app_secret: Secret,
    tokens: TokenCache,
}

/// A downloaded resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
}

/// Why a download did not give a file.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("the file is over the {0}-byte limit")]
    TooBig(u64),
    #[error(transparent)]
    Failed(#[from] ChannelError),
}

impl crate::support::FetchError for DownloadError {
    fn is_too_big(&self) -> bool {
        matches!(self, Self::TooBig(_))
    }
}

/// A JSON answer, or a successful download still streaming.
enum Reply {
    Json(Value),
    Stream(reqwest::Response),
}

/// Sends `request`, one that carries the app's own credentials instead of a tenant token,
/// and decodes the whole answer (status, body) with `decode`.
async fn call_without_token<T>(
    request: reqwest::RequestBuilder,
    decode: impl FnOnce(u16, &[u8]) -> Result<T, ChannelError>,
) -> Result<T, ChannelError> {
    let response = request
        .timeout(TIMEOUT)
        .send()
        .await
        .map_err(connection_error)?;
    let status = response.status().as_u16();
    let body = response.bytes().await.map_err(connection_error)?;
    decode(status, &body)
}

fn connection_error(e: reqwest::Error) -> ChannelError {
    crate::support::connection_error(CHANNEL, e)
}

impl FeishuApi {
    /// `base` is `https://open.feishu.cn`, `https://open.larksuite.com`, or a fake's.
    pub fn new(client: reqwest::Client, base: &str, app_id: &str, app_secret: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            app_id: app_id.to_owned(),
            app_secret: Secret::new(app_secret),
            tokens: TokenCache::default(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn fetch_token(&self) -> Result<(String, u64), ChannelError> {
        let request = self
            .client
            .post(self.url("/open-apis/auth/v3/tenant_access_token/internal"))
            .json(&json!({ "app_id": self.app_id, "app_secret": self.app_secret.expose() }));
        call_without_token(request, decode_token_answer).await
    }

    /// The tenant token (cached; fetched when missing or near its end).
    pub async fn tenant_token(&self) -> Result<String, ChannelError> {
        self.tokens.get(Instant::now(), || self.fetch_token()).await
    }

    /// Sends the request `build` makes, with the token; once more with a new token when
    /// Feishu calls the first invalid. A success that is not JSON is a download
    /// (`stream_ok`).
    async fn execute<F>(&self, build: F, stream_ok: bool) -> Result<Reply, ChannelError>
    where
        F: Fn() -> reqwest::RequestBuilder,
    {
        let mut retried = false;
        loop {
            let token = self.tenant_token().await?;
            let response = build()
                .bearer_auth(&token)
                .send()
                .await
                .map_err(connection_error)?;
            let status = response.status().as_u16();
            let is_json = header_text(&response, reqwest::header::CONTENT_TYPE)
                .is_some_and(|t| t.contains("json"));
            if stream_ok && (200..300).contains(&status) && !is_json {
                return Ok(Reply::Stream(response));
            }
            let reset = header_number::<u64>(&response, "x-ogw-ratelimit-reset");
            let body = response.bytes().await.map_err(connection_error)?;
            if !retried && answer_code(&body).is_some_and(|c| TOKEN_INVALID_CODES.contains(&c)) {
                tracing::info!("feishu: the tenant token was refused; fetching a new one");
                self.tokens.invalidate(&token).await;
                retried = true;
                continue;
            }
            return decode_answer(status, reset, &body).map(Reply::Json);
        }
    }

    async fn json(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Value, ChannelError> {
        match self.execute(build, false).await? {
            Reply::Json(value) => Ok(value),
            Reply::Stream(_) => Err(api_error("unexpected non-JSON answer".into())),
        }
    }

    pub async fn get_json(&self, path: &str) -> Result<Value, ChannelError> {
        let url = self.url(path);
        self.json(|| self.client.get(&url).timeout(TIMEOUT)).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, ChannelError> {
        let url = self.url(path);
        self.json(|| self.client.post(&url).json(body).timeout(TIMEOUT))
            .await
    }

    /// POSTs a multipart form: `texts`, then the file as `field`.
    pub async fn upload(
        &self,
        path: &str,
        texts: &[(&str, &str)],
        field: &str,
        file_name: &str,
        bytes: &[u8],
    ) -> Result<Value, ChannelError> {
        let boundary = crate::support::boundary();
        let parts = crate::support::text_parts(texts);
        let body = multipart_body(
            &boundary,
            &parts,
            &FilePart {
                field,
                file_name,
                bytes,
            },
        );
        let url = self.url(path);
        self.json(|| {
            self.client
                .post(&url)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(body.clone())
                .timeout(UPLOAD_TIMEOUT)
        })
        .await
    }

    /// Downloads a resource at `path`: at most `max` bytes (more is refused, not
    /// truncated; a `Content-Length` over it is refused before reading).
    pub async fn download(&self, path: &str, max: u64) -> Result<Download, DownloadError> {
        let url = self.url(path);
        let reply = self
            .execute(|| self.client.get(&url).timeout(UPLOAD_TIMEOUT), true)
            .await?;
        let response = match reply {
            Reply::Stream(response) => response,
            Reply::Json(_) => {
                return Err(api_error("the resource download gave JSON, not a file".into()).into());
            }
        };
        if response.content_length().is_some_and(|n| n > max) {
            return Err(DownloadError::TooBig(max));
        }
        let content_type = header_text(&response, reqwest::header::CONTENT_TYPE)
            .map(|t| t.split(';').next().unwrap_or(t).trim().to_owned())
            .filter(|t| !t.is_empty());
        let bytes = crate::support::read_capped(response, max)
            .await
            .map_err(connection_error)?
            .ok_or(DownloadError::TooBig(max))?;
        Ok(Download {
            bytes,
            content_type,
        })
    }

    /// The bot's `open_id` (what decides whether a message mentions it).
    pub async fn bot_open_id(&self) -> Result<String, ChannelError> {
        let info = self.get_json("/open-apis/bot/v3/info").await?;
        info.pointer("/bot/open_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| api_error("the bot info has no open_id (is the bot enabled?)".into()))
    }

    /// Where to open the long connection (a fresh ticket each time).
    pub async fn ws_endpoint(&self) -> Result<WsEndpoint, ChannelError> {
        let request = self
            .client
            .post(self.url("/callback/ws/endpoint"))
            .header("locale", "zh")
            .json(&json!({ "AppID": self.app_id, "AppSecret": self.app_secret.expose() }));
        call_without_token(request, decode_endpoint).await
    }

    /// Sends a message (`msg_type`, `content` a JSON string) to `receive_id`; its id.
    pub async fn send_message(
        &self,
        receive_id_type: &str,
        receive_id: &str,
        msg_type: &str,
        content: &str,
    ) -> Result<String, ChannelError> {
        self.post_message(
            &format!("/open-apis/im/v1/messages?receive_id_type={receive_id_type}"),
            &json!({ "receive_id": receive_id, "msg_type": msg_type, "content": content }),
        )
        .await
    }

    /// Replies to message `message_id` (in its thread when `in_thread`); the reply's id.
    pub async fn reply_message(
        &self,
        message_id: &str,
        msg_type: &str,
        content: &str,
        in_thread: bool,
    ) -> Result<String, ChannelError> {
        self.post_message(
            &format!(
                "/open-apis/im/v1/messages/{}/reply",
                path_segment(message_id)?
            ),
            &json!({ "msg_type": msg_type, "content": content, "reply_in_thread": in_thread }),
        )
        .await
    }

    /// POSTs a message (sent or replied); the id of the message made.
    async fn post_message(&self, path: &str, body: &Value) -> Result<String, ChannelError> {
        Ok(sent_id(&self.post_json(path, body).await?))
    }

    /// Uploads an image for a message; its `image_key`.
    pub async fn upload_image(
        &self,
        file_name: &str,
        bytes: &[u8],
    ) -> Result<String, ChannelError> {
        let done = self
            .upload(
                "/open-apis/im/v1/images",
                &[("image_type", "message")],
                "image",
                file_name,
                bytes,
            )
            .await?;
        data_key(&done, "image_key")
    }

    /// Uploads a file for a message; its `file_key`.
    pub async fn upload_file(&self, file_name: &str, bytes: &[u8]) -> Result<String, ChannelError> {
        let done = self
            .upload(
                "/open-apis/im/v1/files",
                &[
                    ("file_type", file_type_for(file_name)),
                    ("file_name", file_name),
                ],
                "file",
                file_name,
                bytes,
            )
            .await?;
        data_key(&done, "file_key")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_stays_out_of_debug() {
        let api = FeishuApi::new(reqwest::Client::new(), "http://x/", "cli_a", "s3cret");
        let shown = format!("{api:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("http://x"), "{shown}");
    }
}
