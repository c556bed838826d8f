//! The chat commands the gateway answers itself, for `chat.send` and every channel alike:
//! `/status`, `/help`, `/stop`, `/model [ref|default]` and `/think [level|default]`, and
//! `/usage`, `/queue`, `/verbose` and `/compact` (in `chat_commands_more.rs`)
//! ([`pincer_turns::commands`]; `/new` is the session's reset, handled where the message
//! arrives). The model never sees them: the answer comes from the session's index entry,
//! the agent's defaults and the runs, and a setting goes where `sessions.patch` puts it.
//!
//! The exchange (what was typed and the answer) is kept in the transcript as one
//! `pincer.command` entry (see `transcript_ids.rs`), so `chat.history` shows it where it was
//! typed, as OpenClaw's clients expect after they reload, and each of its two messages goes
//! to `session.message` subscribers. A command typed while a run appends to the same
//! transcript lands beside that run's messages, off their branch: it is answered, not kept.

use std::sync::Arc;

use pincer_ai::{Message, ThinkingLevel};
use pincer_store::{CustomEntry, EntryBody, SessionEntry, SessionStore, StoreError};
use pincer_turns::commands::{Command, Setting, help_lines, status_lines};
use serde_json::{Value, json};

use super::super::Gateway;
use super::catalog::{configured_models, thinking_level};
use super::chat::injected_message;
use super::chat_commands_more as more;
use super::session_events::broadcast_message;
use super::sessions::announce;
use super::transcript_ids::{COMMAND_EXCHANGE, Identity, exchange_data};
use super::{Defaults, blocking};

/// Answers `command`, typed as `typed` on session `key` of `agent_id` by run `run_id`, keeps
/// the exchange in the transcript and tells subscribers; returns the answer's text.
pub(in crate::server) async fn answer(
    gw: &Arc<Gateway>,
    agent_id: &str,
    key: &str,
    run_id: &str,
    typed: &str,
    command: Command,
) -> String {
    let reply = match reply(gw, agent_id, key, command).await {
        Ok(text) | Err(text) => text,
    };
    let store = gw.runtime.sessions(agent_id);
    let runs = Arc::clone(&gw.runs);
    let (agent, key_owned, run, typed) = (
        agent_id.to_owned(),
        key.to_owned(),
        run_id.to_owned(),
        typed.to_owned(),
    );
    let text = reply.clone();
    let kept = store
        .run(move |s| {
            let kept = keep_exchange(s, &key_owned, &run, &typed, &text)?;
            for (message, identity) in &kept {
                broadcast_message(s, &runs, &agent, &key_owned, message, identity);
            }
            Ok::<_, StoreError>(())
        })
        .await;
    if let Err(e) = kept {
        tracing::warn!(error = %e, key, "cannot keep a chat command's answer in the transcript");
    }
    reply
}

/// The answer to `command`; `Err` is an answer too, one that says what was wrong.
async fn reply(
    gw: &Arc<Gateway>,
    agent_id: &str,
    key: &str,
    command: Command,
) -> Result<String, String> {
    match command {
        Command::Help => Ok(help_lines().join("\n")),
        Command::Stop => Ok(match gw.runs.abort(key, None) {
            0 => "Nothing is running on this session.".to_owned(),
            1 => "Stopped the running reply.".to_owned(),
            n => format!("Stopped {n} runs."),
        }),
        Command::Status => {
            let entry = entry(gw, agent_id, key).await?;
            let defaults = Defaults::of(gw, agent_id).await.map_err(|e| e.message)?;
            let runs = match gw.runs.active_run_ids(key).len() {
                0 => "idle".to_owned(),
                n => format!("{n} running"),
            };
            Ok(status_lines(
                key,
                entry.as_ref(),
                &model_of(entry.as_ref(), &defaults),
                &thinking_of(gw, agent_id, entry.as_ref()),
                &runs,
            )
            .join("\n"))
        }
        Command::Model(setting) => {
            if let Some(setting) = setting {
                let value = match setting {
                    Setting::Default => Value::Null,
                    Setting::Value(name) => json!(known_model(gw, agent_id, &name)?),
                };
                set(gw, agent_id, key, json!({ "model": value })).await?;
            }
            let entry = entry(gw, agent_id, key).await?;
            let defaults = Defaults::of(gw, agent_id).await.map_err(|e| e.message)?;
            Ok(format!("model: {}", model_of(entry.as_ref(), &defaults)))
        }
        Command::Think(setting) => {
            if let Some(setting) = setting {
                let value = match setting {
                    Setting::Default => Value::Null,
                    Setting::Value(level) => {
                        serde_json::from_value::<ThinkingLevel>(json!(level)).map_err(|_| {
                            format!(
                                "Thinking level {level:?} is not one of off, minimal, low, \
                                 medium, high, xhigh (or default)."
                            )
                        })?;
                        json!(level)
                    }
                };
                set(gw, agent_id, key, json!({ "thinkingLevel": value })).await?;
            }
            let entry = entry(gw, agent_id, key).await?;
            Ok(format!(
                "thinking: {}",
                thinking_of(gw, agent_id, entry.as_ref())
            ))
        }
        Command::Usage => more::usage(gw, agent_id, key).await,
        Command::Queue(setting) => more::queue(gw, agent_id, key, setting).await,
        Command::Verbose(setting) => more::verbose(gw, agent_id, key, setting).await,
        Command::Activation(setting) => {
            super::chat_commands_activation::activation(gw, agent_id, key, setting).await
        }
        Command::Compact { instructions } => more::compact(gw, agent_id, key, instructions).await,
        Command::Subagents { args } => {
            super::chat_commands_subagents::subagents(gw, key, args).await
        }
        // Only the chat an approval went to may answer it there (`channel_ingress`);
        // operator clients answer with `exec.approval.resolve`.
        Command::Approve { .. } => Err(
            "⚠️ /approve works in the chat the approval request was sent to; here, use the \
             Allow/Deny buttons (exec.approval.resolve)."
                .to_owned(),
        ),
        Command::NewSession { .. } => Err("/new is answered where the message arrives".into()),
    }
}

/// The model a reference names: a configured one (`provider/id`, or an id only one
/// configured provider has) or one Pincer's catalog knows by `provider/id`.
pub(in crate::server) fn known_model(
    gw: &Gateway,
    agent_id: &str,
    name: &str,
) -> Result<String, String> {
    let configured: Vec<String> = configured_models(gw, agent_id)
        .iter()
        .map(|m| m.reference())
        .collect();
    if configured.iter().any(|r| r == name)
        || gw.runtime.models().iter().any(|m| m.reference() == name)
    {
        return Ok(name.to_owned());
    }
    let by_id: Vec<&String> = configured
        .iter()
        .filter(|r| r.rsplit_once('/').is_some_and(|(_, id)| id == name))
        .collect();
    if let [only] = by_id.as_slice() {
        return Ok((*only).clone());
    }
    Err(pincer_turns::command_answers::unknown_model_text(
        name,
        &configured,
    ))
}

pub(super) async fn entry(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
) -> Result<Option<SessionEntry>, String> {
    let key = key.to_owned();
    gw.runtime
        .sessions(agent_id)
        .run(move |s| blocking::entry(s, &key))
        .await
        .map_err(|e| format!("Cannot read the session: {e}"))
}

/// Patches the session (created first if it has no entry yet) and tells subscribers.
pub(super) async fn set(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    patch: Value,
) -> Result<(), String> {
    let patch_key = key.to_owned();
    gw.runtime
        .sessions(agent_id)
        .run(move |s| blocking::ensure_and_patch(s, &patch_key, &patch))
        .await
        .map_err(|e| format!("Cannot change the session: {e}"))?;
    announce(gw, agent_id.to_owned(), key, "patch");
    Ok(())
}

/// The model the session's next turn uses: its own, else the agent's default.
fn model_of(entry: Option<&SessionEntry>, defaults: &Defaults) -> String {
    match entry.and_then(|e| e.model.as_deref()) {
        Some(model) => model.to_owned(),
        None => defaults.reference(),
    }
}

/// The session's thinking level, else the agent's configured one, else `default`.
fn thinking_of(gw: &Gateway, agent_id: &str, entry: Option<&SessionEntry>) -> String {
    entry
        .and_then(|e| e.thinking_level.clone())
        .or_else(|| thinking_level(gw.runtime.config(), agent_id))
        .unwrap_or_else(|| "default".to_owned())
}

/// Appends the exchange to the session's transcript (creating the session if it has none)
/// and returns its two messages with their identities.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
fn keep_exchange(
    store: &SessionStore,
    key: &str,
    run_id: &str,
    typed: &str,
    reply: &str,
) -> Result<Vec<(Message, Identity)>, StoreError> {
    let mut session = pincer_turns::turn::open_session(store, key, false)?;
    let typed = Message::user(typed);
    let reply = Message::Assistant(injected_message(reply, None));
    let entry = session
        .transcript
        .append_body(EntryBody::Custom(CustomEntry {
            custom_type: COMMAND_EXCHANGE.to_owned(),
            data: Some(exchange_data(run_id, &typed, &reply)),
        }))?;
    let identity = |suffix: &str, user: bool| Identity {
        id: format!("{}:{suffix}", entry.id),
        seq: None,
        run_id: Some(run_id.to_owned()),
        sent_by_run: user,
    };
    let (user, answer) = (identity("user", true), identity("reply", false));
    session.transcript.sync()?;
    Ok(vec![(typed, user), (reply, answer)])
}
