//! The identity OpenClaw's clients read on each transcript message (`chat.history`,
//! `session.message`): `__openclaw: {id, seq}` (the transcript entry's id and the message's
//! 1-based position among the context's messages), `runId` on the messages a run produced,
//! and on the user message a `chat.send` sent, `idempotencyKey: "<runId>:user"` (at the top
//! level and in `__openclaw`): the Control UI matches the messages it sent by it.
//!
//! A run's messages follow its marker entry (`pincer_turns::turn::RUN_MARKER`, written by
//! the turn), so they are found again by walking the transcript's branch.

use pincer_ai::Message;
use pincer_store::{EntryBody, Transcript};
use pincer_turns::turn::RUN_MARKER;
use serde_json::{Value, json};

/// Who a message is in the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    pub id: String,
    pub seq: usize,
    pub run_id: Option<String>,
    /// The user message the run was started with.
    pub sent_by_run: bool,
}

/// `message` as OpenClaw's clients get it, with its identity.
pub(super) fn with_identity(message: &Message, identity: &Identity) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
    let mut meta = json!({ "id": identity.id, "seq": identity.seq });
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
/// message not on the branch as an entry (a compaction's summary) has none.
pub(super) fn identified(transcript: &Transcript) -> Vec<Identified> {
    let context = transcript.context();
    let branch = transcript
        .leaf_id()
        .map(|leaf| transcript.branch(leaf))
        .unwrap_or_default();
    // (entry id, message, run, sent by the run) of each message entry on the branch.
    let mut tagged = Vec::new();
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
            EntryBody::Message(m) => {
                let sent = run.is_some() && !user_seen && matches!(m.message, Message::User(_));
                user_seen |= sent;
                tagged.push((entry.id.as_str(), &m.message, run.clone(), sent));
            }
            _ => {}
        }
    }
    let mut next = 0;
    context
        .into_iter()
        .enumerate()
        .map(|(i, message)| {
            let found = tagged[next..].iter().position(|t| *t.1 == message);
            let identity = found.map(|k| {
                let (id, _, run_id, sent_by_run) = &tagged[next + k];
                next += k + 1;
                Identity {
                    id: (*id).to_owned(),
                    seq: i + 1,
                    run_id: run_id.clone(),
                    sent_by_run: *sent_by_run,
                }
            });
            (message, identity)
        })
        .collect()
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
            seq: 3,
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
