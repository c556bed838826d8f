//! What `/usage`, `/queue`, `/verbose` and `/model <unknown>` answer and store, shared by
//! every surface that answers them (the gateway for `chat.send` and the channels, `pincer
//! chat` in process): the usage summed over the transcript's replies, the values
//! `sessions.patch` keeps on the session's index entry (`queueMode`, `verboseLevel`),
//! checked the same way, and the configured models a wrong `/model` is told of.

use pincer_ai::Message;
use pincer_config::{PincerConfig, QUEUE_MODE_NAMES, QueueMode};
use pincer_store::{EntryBody, SessionEntry, SessionStore, StoreError};
use serde_json::{Value, json};

use crate::commands::Setting;

/// Token counts and cost summed over a session's replies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageTotals {
    pub replies: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
}

/// Sums the usage of every reply in the transcript of `key` (nothing before its first).
/// Blocking: call it on the blocking pool.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run and pincer chat's own thread"
)]
pub fn usage_totals(store: &SessionStore, key: &str) -> Result<UsageTotals, StoreError> {
    let mut totals = UsageTotals::default();
    if store.entry(key)?.is_none() {
        return Ok(totals);
    }
    let session = store.resume(key)?;
    for entry in session.transcript.entries() {
        if let EntryBody::Message(m) = &entry.body
            && let Message::Assistant(reply) = &m.message
        {
            let u = &reply.usage;
            totals.replies += 1;
            totals.input += u.input;
            totals.output += u.output;
            totals.cache_read += u.cache_read;
            totals.cache_write += u.cache_write;
            totals.cost += u.cost.total;
        }
    }
    Ok(totals)
}

/// `/usage`'s answer: the totals and the context the session last reported (`None`:
/// unknown).
pub fn usage_text(totals: &UsageTotals, context: Option<u64>) -> String {
    let context = context.map_or_else(|| "unknown".to_owned(), |t| t.to_string());
    [
        format!("replies:    {}", totals.replies),
        format!("tokens in:  {}", totals.input),
        format!("tokens out: {}", totals.output),
        format!(
            "cache:      {} read, {} written",
            totals.cache_read, totals.cache_write
        ),
        format!("cost:       ${:.4}", totals.cost),
        format!("context:    {context}"),
    ]
    .join("\n")
}

/// The session's own queue mode (`/queue`), if it has one.
pub fn session_queue_mode(entry: &SessionEntry) -> Option<QueueMode> {
    entry
        .extra
        .get("queueMode")
        .and_then(Value::as_str)
        .and_then(QueueMode::parse)
}

/// The `queueMode` value `/queue <setting>` stores (`null`: back to the default), or what
/// is wrong with it.
pub fn queue_value(setting: Setting) -> Result<Value, String> {
    Ok(match setting {
        Setting::Default => Value::Null,
        Setting::Value(name) => json!(
            QueueMode::parse(&name)
                .ok_or_else(|| format!(
                    "Queue mode {name:?} is not one of {QUEUE_MODE_NAMES} (or default)."
                ))?
                .as_str()
        ),
    })
}

/// `/queue`'s answer: the session's own mode, else `default` marked as such.
pub fn queue_text(entry: Option<&SessionEntry>, default: QueueMode) -> String {
    match entry.and_then(session_queue_mode) {
        Some(mode) => format!("queue: {mode}"),
        None => format!("queue: {default} (default)"),
    }
}

/// The `verboseLevel` value `/verbose <setting>` stores (`null`: back to the default), or
/// what is wrong with it.
pub fn verbose_value(setting: Setting) -> Result<Value, String> {
    match setting {
        Setting::Default => Ok(Value::Null),
        Setting::Value(level) if level == "on" || level == "off" => Ok(json!(level)),
        Setting::Value(level) => Err(format!(
            "Verbose level {level:?} is not one of on, off (or default)."
        )),
    }
}

/// `/verbose`'s answer.
pub fn verbose_text(entry: Option<&SessionEntry>) -> String {
    let level = entry.and_then(|e| e.verbose_level.as_deref());
    format!("verbose: {}", level.unwrap_or("off"))
}

/// The models the configuration names for `agent_id`, as `provider/id`, each once: its
/// model and fallbacks, then every configured provider's models.
pub fn configured_model_refs(config: &PincerConfig, agent_id: &str) -> Vec<String> {
    let selection = config
        .agents
        .list
        .iter()
        .find(|a| a.id == agent_id)
        .and_then(|a| a.model.as_ref())
        .or(config.agents.defaults.model.as_ref());
    let mut refs: Vec<String> = Vec::new();
    if let Some(selection) = selection {
        refs.push(selection.primary().to_owned());
        refs.extend(selection.fallbacks().iter().cloned());
    }
    for (provider, p) in &config.models.providers {
        refs.extend(p.models.iter().map(|m| format!("{provider}/{}", m.id)));
    }
    let mut seen = Vec::with_capacity(refs.len());
    refs.retain(|r| {
        let new = !seen.contains(r);
        if new {
            seen.push(r.clone());
        }
        new
    });
    refs
}

/// `/model`'s answer for a model nobody has: how to name one, and the configured ones.
pub fn unknown_model_text(name: &str, configured: &[String]) -> String {
    let listed = if configured.is_empty() {
        "none is configured".to_owned()
    } else {
        format!("configured: {}", configured.join(", "))
    };
    format!("Unknown model {name:?}: name one as provider/model ({listed}).")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_checked_before_they_are_stored() {
        let value = |v: &str| Setting::Value(v.into());
        assert_eq!(queue_value(value("collect")), Ok(json!("collect")));
        assert_eq!(queue_value(Setting::Default), Ok(Value::Null));
        assert_eq!(
            queue_value(value("soon")),
            Err(format!(
                "Queue mode \"soon\" is not one of {QUEUE_MODE_NAMES} (or default)."
            ))
        );
        assert_eq!(verbose_value(value("on")), Ok(json!("on")));
        assert_eq!(verbose_value(Setting::Default), Ok(Value::Null));
        assert_eq!(
            verbose_value(value("loud")),
            Err("Verbose level \"loud\" is not one of on, off (or default).".to_owned())
        );
    }

    #[test]
    fn an_unknown_model_is_answered_with_the_configured_ones() {
        let config: PincerConfig = serde_json::from_value(json!({
            "agents": {
                "defaults": {"model": {"primary": "mock/m", "fallbacks": ["mock/gone"]}},
                "list": [{"id": "main"}, {"id": "other", "model": "mock/x"}],
            },
            "models": {"providers": {"mock": {
                "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                "models": [{"id": "m"}, {"id": "x"}],
            }}},
        }))
        .unwrap();
        let main = configured_model_refs(&config, "main");
        assert_eq!(main, ["mock/m", "mock/gone", "mock/x"]);
        assert_eq!(
            configured_model_refs(&config, "other"),
            ["mock/x", "mock/m"]
        );
        assert_eq!(
            unknown_model_text("nope/x", &main),
            "Unknown model \"nope/x\": name one as provider/model (configured: mock/m, mock/gone, mock/x)."
        );
        assert_eq!(
            unknown_model_text("x", &[]),
            "Unknown model \"x\": name one as provider/model (none is configured)."
        );
    }

    #[test]
    fn answers_show_the_sessions_own_value_or_the_default() {
        let entry: SessionEntry = serde_json::from_value(json!({
            "sessionId": "s", "createdAt": 1, "updatedAt": 1,
            "queueMode": "followup", "verboseLevel": "on"
        }))
        .unwrap();
        assert_eq!(
            queue_text(Some(&entry), QueueMode::Steer),
            "queue: followup"
        );
        assert_eq!(queue_text(None, QueueMode::Steer), "queue: steer (default)");
        assert_eq!(verbose_text(Some(&entry)), "verbose: on");
        assert_eq!(verbose_text(None), "verbose: off");
        assert_eq!(
            usage_text(&UsageTotals::default(), None),
            "replies:    0\ntokens in:  0\ntokens out: 0\ncache:      0 read, 0 written\n\
             cost:       $0.0000\ncontext:    unknown"
        );
    }
}
