//! `send` (OpenClaw's): an operator sends a message to a chat on a running channel, outside
//! any agent turn — what `pincer message send` calls. It goes out the way the `message`
//! tool's sends do (`server/message_port.rs`: the adapter's rendering and splitting,
//! retries), but is not gated by `tools.message.allowTargets`: the caller holds
//! `operator.write`. Files (`mediaUrl`, `mediaUrls`) are paths in the agent's workspace
//! (`agentId`, else the default agent); URLs are not fetched. A retry with the same
//! `idempotencyKey` gets the first answer and sends nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::message_port;
use super::params::{NonEmpty, parse};
use pincer_team::message::{ChatTarget, MessageError, SendRequest};

/// `send {to, message?, mediaUrl?, mediaUrls?, channel?, accountId?, agentId?, replyToId?,
/// threadId?, idempotencyKey}`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SendParams {
    /// The chat: the platform's chat id (`user:<id>` / `channel:<id>` say its kind).
    to: NonEmpty,
    /// The text, in Markdown (rendered and split as replies are).
    message: Option<String>,
    /// A file in the agent's workspace to attach.
    media_url: Option<String>,
    media_urls: Option<Vec<String>>,
    /// `telegram`, `discord`, `slack`, `feishu`; default: the only channel running.
    channel: Option<String>,
    account_id: Option<String>,
    /// Whose workspace the files are in (default: the default agent).
    agent_id: Option<String>,
    reply_to_id: Option<String>,
    /// A Telegram forum topic, or a thread on other platforms.
    thread_id: Option<String>,
    /// Echoed as `runId`.
    idempotency_key: NonEmpty,
}

/// Answers remembered for retries.
const REMEMBERED_SENDS: usize = 1000;

/// The answers of recent sends by `idempotencyKey`: a client that retries a send it never
/// heard back from gets the first answer, and the chat gets the message once.
#[derive(Debug, Default)]
pub struct SentLog {
    answers: Mutex<VecDeque<(String, SendResponse)>>,
}

impl SentLog {
    fn get(&self, key: &str) -> Option<SendResponse> {
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        answers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, a)| a.clone())
    }

    fn remember(&self, key: String, answer: SendResponse) {
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if answers.len() >= REMEMBERED_SENDS {
            answers.pop_front();
        }
        answers.push_back((key, answer));
    }
}

/// The answer: OpenClaw's `{runId, messageId, channel, chatId}`, plus every id sent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SendResponse {
    run_id: String,
    message_id: Option<String>,
    channel: String,
    chat_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    account_id: Option<String>,
    message_ids: Vec<String>,
}

fn given(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

pub(super) async fn send(gw: &Arc<Gateway>, p: &Value) -> Result<SendResponse, MethodError> {
    let params: SendParams = parse(p)?;
    if let Some(answer) = gw.sent.get(&params.idempotency_key.0) {
        return Ok(answer);
    }
    let text = params.message.unwrap_or_default();
    let mut media: Vec<String> = given(params.media_url).into_iter().collect();
    media.extend(
        params
            .media_urls
            .into_iter()
            .flatten()
            .filter_map(|m| given(Some(m))),
    );
    if text.trim().is_empty() && media.is_empty() {
        return Err(MethodError::invalid(
            "invalid send params: text or media is required",
        ));
    }
    if let Some(url) = media.iter().find(|m| m.contains("://")) {
        return Err(MethodError::invalid(format!(
            "mediaUrl {url:?}: only files in the agent's workspace are sent (URLs are not \
             fetched)"
        )));
    }
    let agent_id = match given(params.agent_id) {
        Some(agent) if gw.runtime.is_known_agent(&agent) => agent,
        Some(agent) => return Err(MethodError::invalid(format!("unknown agent id: {agent}"))),
        None => gw.runtime.default_agent_id(),
    };
    let channel = match given(params.channel) {
        Some(channel) => channel.to_ascii_lowercase(),
        None => only_channel(gw)?,
    };
    let request = SendRequest {
        target: ChatTarget {
            channel,
            account_id: given(params.account_id),
            to: params.to.0.trim().to_owned(),
            thread_id: given(params.thread_id),
        },
        agent_id,
        text,
        media,
        reply_to: given(params.reply_to_id),
    };
    let chat_id = request.target.to.clone();
    let receipt = message_port::send(gw, request).await.map_err(|e| match e {
        MessageError::Failed(_) => MethodError::unavailable(e.to_string()),
        other => MethodError::invalid(other.to_string()),
    })?;
    let answer = SendResponse {
        run_id: params.idempotency_key.0.clone(),
        message_id: receipt.message_ids.last().cloned(),
        channel: receipt.channel,
        chat_id,
        account_id: receipt.account_id,
        message_ids: receipt.message_ids,
    };
    gw.sent.remember(params.idempotency_key.0, answer.clone());
    Ok(answer)
}

/// The one channel running, when the request names none.
fn only_channel(gw: &Gateway) -> Result<String, MethodError> {
    let mut running: Vec<String> = gw
        .channels
        .get()
        .map(|ingress| ingress.accounts().into_iter().map(|(c, _)| c).collect())
        .unwrap_or_default();
    running.dedup();
    match running.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(MethodError::invalid(
            "no chat channel is running on this gateway (see channels in the config)",
        )),
        _ => Err(MethodError::invalid(format!(
            "channel required: one of {}",
            running.join(", ")
        ))),
    }
}
