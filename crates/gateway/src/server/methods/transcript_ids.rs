//! The identity OpenClaw's clients read on each transcript message (`chat.history`,
//! `session.message`): `__openclaw: {id, seq}` (the transcript entry's id and the message's
//! 1-based position among the context's messages), `runId` on the messages a run produced,
//! and on the user message a `chat.send` sent, `idempotencyKey: "<runId>:user"` (at the top
//! level and in `__openclaw`): the Control UI matches the messages it sent by it.
//!
//! A run's messages follow its marker entry (`pincer_turns::turn::RUN_MARKER`, written by
//! the turn), so they are found again by walking the transcript's branch.
//!
//! A chat command the gateway answered (`/status`, `/model`…) is kept as one `custom` entry
//! of type [`COMMAND_EXCHANGE`] holding the typed message and the reply: shown in the
//! history where it was typed, never given to the model. Its two messages have an id
//! (`<entryId>:user`, `<entryId>:reply`) and the run that sent them, but no `seq`: they
//! have no place among the context's messages.

use pincer_ai::Message;
use pincer_store::{EntryBody, Transcript};
use pincer_turns::turn::RUN_MARKER;
use serde_json::{Value, json};

/// The `customType` of a chat command's exchange (`data: {runId, messages: [user, reply]}`).
pub(super) const COMMAND_EXCHANGE: &str = "pincer.command";

/// Who a message is in the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    pub id: String,
    /// The 1-based position among the context's messages; none for a command's exchange.
    pub seq: Option<usize>,
    pub run_id: Option<String>,
    /// The user message the run was started with.
    pub sent_by_run: bool,
}

/// `message` as OpenClaw's clients get it, with its identity.
pub(super) fn with_identity(message: &Message, identity: &Identity) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
    let mut meta = json!({ "id": identity.id });
    if let Some(seq) = identity.seq {
        meta["seq"] = json!(seq);
    }
    match (&identity.run_id, identity.sent_by_run) {
        (Some(run_id), true) => {
            let key = format!("{run_id}:user");
            meta["idempotencyKey"] = json!(key);
            value["idempotencyKey"] = json!(key);
        }
        (Some(run_id), false) => meta["runId"] = json!(run_id),
        (None, _) => {}
    }
    value["__openclaw"] = meta;
    value
}

/// A message and its identity, if it has one.
pub(super) type Identified = (Message, Option<Identity>);

/// The context's messages (as `Transcript::context` gives them) with their identity; a
/// message not on the branch as an entry (a compaction's summary) has none. The exchanges
/// of chat commands are put in where they were typed (those before a compaction's kept
/// messages are left out with the messages they followed).
pub(super) fn identified(transcript: &Transcript) -> Vec<Identified> {
    let context = transcript.context();
    let branch = transcript
        .leaf_id()
        .map(|leaf| transcript.branch(leaf))
        .unwrap_or_default();
    // (entry id, message, run, sent by the run) of each message entry on the branch.
    let mut tagged = Vec::new();
    // (message entries before it, its messages) of each command exchange.
    let mut exchanges: Vec<(usize, Vec<Identified>)> = Vec::new();
    let (mut run, mut user_seen) = (None::<String>, false);
    for entry in branch {
        match &entry.body {
            EntryBody::Custom(c) if c.custom_type == RUN_MARKER => {
                run = c
                    .data
                    .as_ref()
                    .and_then(|d| d.get("runId"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                user_seen = false;
            }
            EntryBody::Custom(c) if c.custom_type == COMMAND_EXCHANGE => {
                if let Some(messages) = exchange_messages(&entry.id, c.data.as_ref()) {
                    exchanges.push((tagged.len(), messages));
                }
            }
            EntryBody::Message(m) => {
                let sent = run.is_some() && !user_seen && matches!(m.message, Message::User(_));
                user_seen |= sent;
                tagged.push((entry.id.as_str(), &m.message, run.clone(), sent));
            }
            _ => {}
        }
    }
    let mut next = 0;
    // Each context message, with the index in `tagged` of the entry it is.
    let mut out: Vec<(Identified, Option<usize>)> = context
        .into_iter()
        .enumerate()
        .map(|(i, message)| {
            let found = tagged[next..].iter().position(|t| *t.1 == message);
            let identity = found.map(|k| {
                let (id, _, run_id, sent_by_run) = &tagged[next + k];
                next += k + 1;
                Identity {
                    id: (*id).to_owned(),
                    seq: Some(i + 1),
                    run_id: run_id.clone(),
                    sent_by_run: *sent_by_run,
                }
            });
            ((message, identity), found.map(|_| next - 1))
        })
        .collect();
    // In order: each goes before the first message typed after it, so after the
    // exchanges already put there.
    for (before, messages) in exchanges {
        let shown_before = before == 0 || out.iter().any(|(_, t)| *t == Some(before - 1));
        if !shown_before {
            continue;
        }
        let at = out
            .iter()
            .position(|(_, t)| t.is_some_and(|t| t >= before))
            .unwrap_or(out.len());
        out.splice(at..at, messages.into_iter().map(|m| (m, None)));
    }
    out.into_iter().map(|(identified, _)| identified).collect()
}

/// The two messages of a command exchange entry, with their identities; `None` for an entry
/// that does not hold them (written by something else).
fn exchange_messages(entry_id: &str, data: Option<&Value>) -> Option<Vec<Identified>> {
    let data = data?;
    let run_id = data.get("runId").and_then(Value::as_str).map(str::to_owned);
    let messages: Vec<Message> = serde_json::from_value(data.get("messages")?.clone()).ok()?;
    Some(
        messages
            .into_iter()
            .map(|message| {
                let user = matches!(message, Message::User(_));
                let identity = Identity {
                    id: format!("{entry_id}:{}", if user { "user" } else { "reply" }),
                    seq: None,
                    run_id: run_id.clone(),
                    sent_by_run: user,
                };
                (message, Some(identity))
            })
            .collect(),
    )
}

/// The data of a command exchange entry: the typed message and the reply, sent by `run_id`.
pub(super) fn exchange_data(run_id: &str, typed: &Message, reply: &Message) -> Value {
    json!({ "runId": run_id, "messages": [typed, reply] })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pincer_ai::{UserContent, UserMessage};

    #[test]
    fn a_run_s_user_message_carries_its_idempotency_key() {
        let message = Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 5,
        });
        let identity = Identity {
            id: "e1".into(),
            seq: Some(3),
            run_id: Some("r1".into()),
            sent_by_run: true,
        };
        assert_eq!(
            with_identity(&message, &identity).to_string(),
            r#"{"__openclaw":{"id":"e1","idempotencyKey":"r1:user","seq":3},"content":"hi","idempotencyKey":"r1:user","role":"user","timestamp":5}"#
        );
        let reply = Identity {
            sent_by_run: false,
            ..identity
        };
        assert_eq!(
            with_identity(&message, &reply)["__openclaw"],
            json!({"id": "e1", "runId": "r1", "seq": 3})
        );
    }
}
