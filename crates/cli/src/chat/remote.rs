//! The gateway backend of `pincer chat --url ws://… --token …`: one operator connection
//! through `pincer`'s own gateway client ([`GatewayClient`]), following the events a chat
//! needs: a message is `chat.send` with our own run id (its
//! `idempotencyKey`), its reply streams as `agent` events of that run (`assistant` deltas,
//! `tool` start/result) and ends with its `chat` event (`final`, `aborted`, `error`).
//! Ctrl-C is `chat.abort` of the run. `/new`, `/usage`, `/queue`, `/verbose` and
//! `/compact` are sent as messages: the gateway answers them itself (the answer is the
//! run's `chat` final), and so is `/model` (the gateway checks the model). `/think` is
//! `sessions.patch`, `/status` and `/sessions` read
//! `sessions.list`, `/stop` is `chat.abort` of every run of the session.

use std::time::Duration;

use anyhow::{Context as _, Result};
use pincer_store::SessionEntry;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Interrupts;
use super::render::{Ending, Renderer, Shown};
use crate::gateway::client::GatewayClient;
use pincer_turns::commands::{Setting, status_lines};

/// How long connecting plus the handshake may take (a remote gateway may be far away).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection to a gateway, chatting on one session.
pub struct Remote {
    client: GatewayClient,
    url: String,
    key: String,
}

/// One frame, sorted.
enum Frame {
    Response {
        id: String,
        ok: bool,
        payload: Value,
        error: String,
    },
    Event {
        name: String,
        payload: Value,
    },
    Other,
}

/// `sessions.list`'s answer, as far as the chat reads it.
#[derive(Deserialize)]
struct SessionsList {
    #[serde(default)]
    sessions: Vec<SessionRow>,
    #[serde(default)]
    defaults: Defaults,
}

#[derive(Deserialize)]
struct SessionRow {
    key: String,
    #[serde(flatten)]
    entry: SessionEntry,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Defaults {
    #[serde(default)]
    model_provider: String,
    #[serde(default)]
    model: String,
}

impl Remote {
    /// Connects to `url` and completes the handshake as an operator with `token`.
    pub async fn connect(url: &str, token: Option<&str>, key: String) -> Result<Self> {
        let client = GatewayClient::connect_url(url, token, CONNECT_TIMEOUT).await?;
        Ok(Self {
            client,
            url: url.to_owned(),
            key,
        })
    }

    pub fn session_key(&self) -> &str {
        &self.key
    }

    /// Sends one request frame; its id.
    async fn request(&mut self, method: &str, params: Value) -> Result<String> {
        self.client.send_request(method, params).await
    }

    /// Calls `method` and waits for its answer (events in between are skipped).
    async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        self.client.call(method, params).await
    }

    /// The next frame, sorted. A closed connection is an error naming the gateway's reason.
    async fn next_frame(&mut self) -> Result<Frame> {
        self.client.next_frame().await.map(sort)
    }

    /// Whether the connection is gone.
    pub fn is_lost(&self) -> bool {
        self.client.is_lost()
    }

    /// One turn: `chat.send`, then the run's events until its `chat` end event.
    pub async fn send(
        &mut self,
        text: String,
        renderer: &mut Renderer,
        ctrl_c: &mut Interrupts,
    ) -> Result<Ending> {
        let run_id = format!(
            "chat-{:016x}{:016x}",
            pincer_base::id::random_u64(),
            pincer_base::id::random_u64()
        );
        ctrl_c.forget_earlier();
        let send_id = self
            .request(
                "chat.send",
                json!({ "sessionKey": self.key, "message": text, "idempotencyKey": run_id }),
            )
            .await?;
        let mut aborting = false;
        loop {
            // The frame is read in the select and handled after it: aborting needs `self`.
            let frame = tokio::select! {
                frame = self.next_frame() => Some(frame?),
                () = ctrl_c.next() => None,
            };
            let Some(frame) = frame else {
                if !aborting {
                    aborting = true;
                    let params = json!({ "sessionKey": self.key, "runId": run_id });
                    self.request("chat.abort", params).await?;
                }
                continue;
            };
            match frame {
                Frame::Response {
                    id,
                    ok,
                    payload,
                    error,
                } if id == send_id => {
                    if !ok {
                        return Ok(Ending::Failed(error));
                    }
                    if payload["status"] == "steered" {
                        renderer.note("(added to the reply already running on this session)");
                        return Ok(Ending::Done);
                    }
                }
                Frame::Event { name, payload } if payload["runId"] == run_id.as_str() => {
                    match name.as_str() {
                        "agent" => show_agent_event(&payload, renderer),
                        "chat" => {
                            if let Some(ending) = chat_ending(&payload, renderer) {
                                return Ok(ending);
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// `/model`: shows the session's model, or sets it. Typed to the gateway, which checks
    /// the model (`sessions.patch` takes any name) and names the ones it has when it does
    /// not know it.
    pub async fn model(&mut self, setting: Option<Setting>) -> Result<String> {
        let line = match setting {
            None => "/model".to_owned(),
            Some(Setting::Default) => "/model default".to_owned(),
            Some(Setting::Value(name)) => format!("/model {name}"),
        };
        self.answer_of(line).await
    }

    /// The gateway's answer to a chat command typed as `line` (the text of the run's `chat`
    /// final), for a caller that shows it itself.
    async fn answer_of(&mut self, line: String) -> Result<String> {
        let run_id = format!(
            "chat-{:016x}{:016x}",
            pincer_base::id::random_u64(),
            pincer_base::id::random_u64()
        );
        let send_id = self
            .request(
                "chat.send",
                json!({ "sessionKey": self.key, "message": line, "idempotencyKey": run_id }),
            )
            .await?;
        loop {
            match self.next_frame().await? {
                Frame::Response { id, ok, error, .. } if id == send_id && !ok => {
                    anyhow::bail!("{error}")
                }
                Frame::Event { name, payload }
                    if name == "chat"
                        && payload["runId"] == run_id.as_str()
                        && payload["state"] == "final" =>
                {
                    return Ok(final_text(&payload));
                }
                _ => {}
            }
        }
    }

    /// `/think`: shows the session's thinking level, or sets it (`sessions.patch`).
    pub async fn think(&mut self, setting: Option<Setting>) -> Result<String> {
        if let Some(setting) = setting {
            self.patch("thinkingLevel", setting).await?;
        }
        let (entry, _) = self.session().await?;
        Ok(format!("thinking: {}", thinking_of(entry.as_ref())))
    }

    async fn patch(&mut self, field: &str, setting: Setting) -> Result<()> {
        let value = match setting {
            Setting::Value(value) => json!(value),
            Setting::Default => Value::Null,
        };
        let mut params = json!({ "key": self.key });
        params[field] = value;
        self.call("sessions.patch", params).await?;
        Ok(())
    }

    /// `/status`.
    pub async fn status(&mut self) -> Result<Vec<String>> {
        let (entry, defaults) = self.session().await?;
        let model = model_of(entry.as_ref(), &defaults);
        let url = self.url.clone();
        Ok(status_lines(
            &self.key,
            entry.as_ref(),
            &model,
            thinking_of(entry.as_ref()),
            &format!("gateway {url}"),
        ))
    }

    /// `/sessions`: the session agent's sessions, most recent first.
    pub async fn sessions(&mut self) -> Result<Vec<(String, SessionEntry)>> {
        let list = self.list().await?;
        let mut rows: Vec<_> = list
            .sessions
            .into_iter()
            .map(|r| (r.key, r.entry))
            .collect();
        rows.sort_by(|(ka, a), (kb, b)| b.updated_at.cmp(&a.updated_at).then_with(|| ka.cmp(kb)));
        Ok(rows)
    }

    async fn list(&mut self) -> Result<SessionsList> {
        let mut params = json!({ "limit": 1000 });
        if let Some(agent_id) = pincer_turns::router::parse_session_key(&self.key)
            .ok()
            .and_then(|k| k.agent_id)
        {
            params["agentId"] = json!(agent_id);
        }
        let payload = self.call("sessions.list", params).await?;
        serde_json::from_value(payload).context("the gateway's sessions.list answer")
    }

    /// This session's entry (`None` before its first message) and the agent's defaults.
    async fn session(&mut self) -> Result<(Option<SessionEntry>, Defaults)> {
        let list = self.list().await?;
        let entry = list
            .sessions
            .into_iter()
            .find(|r| r.key == self.key)
            .map(|r| r.entry);
        Ok((entry, list.defaults))
    }

    /// `/stop`: aborts every run of the session (another client's too).
    pub async fn stop(&mut self) -> Result<String> {
        let answer = self
            .call("chat.abort", json!({ "sessionKey": self.key }))
            .await?;
        Ok(match answer["count"].as_u64().unwrap_or(0) {
            0 => "nothing is running on this session".to_owned(),
            1 => "stopped 1 run".to_owned(),
            n => format!("stopped {n} runs"),
        })
    }

    pub async fn close(self) {
        self.client.close().await;
    }
}

fn sort(frame: Value) -> Frame {
    match frame["type"].as_str() {
        Some("res") => Frame::Response {
            id: frame["id"].as_str().unwrap_or_default().to_owned(),
            ok: frame["ok"] == true,
            error: frame["error"]["message"]
                .as_str()
                .unwrap_or("the gateway refused the request without saying why")
                .to_owned(),
            payload: frame.get("payload").cloned().unwrap_or(Value::Null),
        },
        Some("event") => Frame::Event {
            name: frame["event"].as_str().unwrap_or_default().to_owned(),
            payload: frame.get("payload").cloned().unwrap_or(Value::Null),
        },
        _ => Frame::Other,
    }
}

/// An `agent` event of our run: reply text and tool calls.
fn show_agent_event(payload: &Value, renderer: &mut Renderer) {
    let data = &payload["data"];
    match (payload["stream"].as_str(), data["phase"].as_str()) {
        (Some("assistant"), _) => renderer.text(data["delta"].as_str().unwrap_or_default()),
        (Some("tool"), Some("start")) => renderer.show(&Shown::ToolStart {
            name: data["name"].as_str().unwrap_or_default(),
            args: data["args"].to_string(),
        }),
        (Some("tool"), Some("result")) => renderer.show(&Shown::ToolEnd {
            name: data["name"].as_str().unwrap_or_default(),
            is_error: data["isError"] == true,
            result: match &data["result"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            },
        }),
        _ => {}
    }
}

/// How a `chat` event of our run ends it (`None`: it does not). A reply that streamed no
/// text (`/new`'s answer, a queued run) shows the final message's text.
fn chat_ending(payload: &Value, renderer: &mut Renderer) -> Option<Ending> {
    match payload["state"].as_str()? {
        "final" => {
            if !renderer.showed_text() {
                renderer.text(&final_text(payload));
            }
            Some(Ending::Done)
        }
        "aborted" => Some(Ending::Aborted),
        "error" => Some(Ending::Failed(
            payload["errorMessage"]
                .as_str()
                .unwrap_or("the run failed")
                .to_owned(),
        )),
        _ => None,
    }
}

/// The text of a `chat` final's message.
fn final_text(payload: &Value) -> String {
    payload["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect()
}

/// The session's model as `provider/model`: Pincer keeps it whole in `model`, OpenClaw
/// splits it into `modelProvider` and `model`.
fn model_of(entry: Option<&SessionEntry>, defaults: &Defaults) -> String {
    let Some(entry) = entry else {
        return format!("{}/{}", defaults.model_provider, defaults.model);
    };
    match (
        &entry.model,
        entry.extra.get("modelProvider").and_then(Value::as_str),
    ) {
        (Some(model), Some(provider)) if !model.contains('/') => format!("{provider}/{model}"),
        (Some(model), _) => model.clone(),
        (None, _) => format!("{}/{}", defaults.model_provider, defaults.model),
    }
}

fn thinking_of(entry: Option<&SessionEntry>) -> &str {
    entry
        .and_then(|e| e.thinking_level.as_deref())
        .unwrap_or("default")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_model_reads_as_provider_slash_model_from_either_gateway() {
        let defaults = Defaults {
            model_provider: "mock".into(),
            model: "primary".into(),
        };
        let entry = |fields: Value| -> SessionEntry {
            let mut all = json!({"sessionId": "s", "createdAt": 1, "updatedAt": 1});
            all.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            serde_json::from_value(all).unwrap()
        };
        let cases = [
            (None, "mock/primary"),
            (Some(entry(json!({}))), "mock/primary"),
            (Some(entry(json!({"model": "mock/backup"}))), "mock/backup"),
            // OpenClaw's entries split it.
            (
                Some(entry(
                    json!({"model": "gpt-4o-mini", "modelProvider": "openai"}),
                )),
                "openai/gpt-4o-mini",
            ),
        ];
        for (entry, want) in cases {
            assert_eq!(model_of(entry.as_ref(), &defaults), want, "{entry:?}");
        }
    }
}
