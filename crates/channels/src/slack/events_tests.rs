//! Tests of the Socket Mode decoders and of Slack's text as plain text.

use super::*;
use serde_json::json;

fn envelope(event: Value) -> Value {
    json!({
        "envelope_id": "e1", "type": "events_api", "accepts_response_payload": false,
        "retry_attempt": 0, "retry_reason": "",
        "payload": {"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                    "event_id": "Ev1", "event_time": 1, "event": event},
    })
}

fn event_of(event: Value) -> Event {
    match decode_value(&envelope(event)).unwrap() {
        SocketFrame::Envelope(envelope) => envelope.event,
        other => panic!("{other:?}"),
    }
}

fn skipped_why(event: Value) -> String {
    match event_of(event) {
        Event::Skipped { why } => why,
        other => panic!("{other:?}"),
    }
}

#[test]
fn control_frames() {
    assert_eq!(
        decode_frame(
            r#"{"type":"hello","num_connections":1,"connection_info":{"app_id":"A1"},"debug_info":{"host":"h"}}"#
        ),
        Ok(SocketFrame::Hello {
            app_id: Some("A1".into())
        })
    );
    assert_eq!(
        decode_frame(r#"{"type":"disconnect","reason":"refresh_requested"}"#),
        Ok(SocketFrame::Disconnect {
            reason: "refresh_requested".into()
        })
    );
    assert_eq!(
        decode_frame(r#"{"type":"surprise"}"#),
        Ok(SocketFrame::Skipped {
            why: "a \"surprise\" frame without an envelope id".into()
        })
    );
    assert_eq!(ack_frame("e\"1"), r#"{"envelope_id":"e\"1"}"#);
}

#[test]
fn a_dm_message() {
    let frame = decode_value(&json!({
        "envelope_id": "e7", "type": "events_api", "retry_attempt": 2, "retry_reason": "timeout",
        "payload": {"team_id": "T1", "type": "event_callback", "event": {
            "type": "message", "channel": "D1", "channel_type": "im", "user": "U1",
            "text": "hi &amp; bye", "ts": "1700000000.000100", "team": "T1",
            "blocks": [], "client_msg_id": "x",
        }},
    }))
    .unwrap();
    assert_eq!(
        frame,
        SocketFrame::Envelope(Box::new(Envelope {
            envelope_id: "e7".into(),
            kind: "events_api".into(),
            retry_attempt: 2,
            team_id: Some("T1".into()),
            event: Event::Message(Box::new(MessageEvent {
                kind: MessageKind::Message,
                channel: "D1".into(),
                channel_type: Some("im".into()),
                user: "U1".into(),
                text: "hi &amp; bye".into(),
                ts: "1700000000.000100".into(),
                thread_ts: None,
                team: Some("T1".into()),
                files: Vec::new(),
            })),
        }))
    );
}

#[test]
fn mentions_threads_and_files() {
    let Event::Message(message) = event_of(json!({
        "type": "app_mention", "channel": "C1", "user": "U1", "text": "<@U0BOT> look",
        "ts": "2.0", "thread_ts": "1.0", "subtype": "file_share",
        "files": [{"id": "F1", "name": "a.png", "mimetype": "image/png", "size": 123,
                   "url_private_download": "https://files.slack.com/d/a.png",
                   "url_private": "https://files.slack.com/a.png"},
                  {"id": "F2", "mode": "hidden_by_limit"}],
    })) else {
        panic!()
    };
    assert_eq!(message.kind, MessageKind::AppMention);
    assert_eq!(message.channel_type, None);
    assert_eq!(message.thread_ts.as_deref(), Some("1.0"));
    assert_eq!(message.files.len(), 2);
    assert_eq!(
        message.files[0].url(),
        Some("https://files.slack.com/d/a.png")
    );
    assert_eq!(message.files[0].size, 123);
    assert_eq!(message.files[1].url(), None);
    // A thread's parent carries its own ts as thread_ts: not in a thread.
    let Event::Message(parent) = event_of(json!({
        "type": "message", "channel": "C1", "user": "U1", "text": "x", "ts": "1.0",
        "thread_ts": "1.0", "subtype": "thread_broadcast",
    })) else {
        panic!()
    };
    assert_eq!(parent.thread_ts, None);
}

#[test]
fn what_is_not_a_post_is_skipped_with_a_reason() {
    assert_eq!(
        skipped_why(
            json!({"type": "message", "subtype": "message_changed", "channel": "C1",
                           "message": {"text": "x"}, "ts": "1"})
        ),
        "message subtype message_changed is not a post"
    );
    assert_eq!(
        skipped_why(
            json!({"type": "message", "channel": "C1", "user": "U1", "text": "x",
                           "ts": "1", "bot_id": "B1"})
        ),
        "a bot's message"
    );
    assert_eq!(
        skipped_why(json!({"type": "reaction_added", "user": "U1"})),
        "reaction_added events are not handled"
    );
    assert_eq!(
        skipped_why(json!({"type": "message", "channel": "C1", "text": "x", "ts": "1"})),
        "a message without a channel, user or ts"
    );
    assert!(
        skipped_why(
            json!({"type": "message", "channel": "C1", "user": "U1", "ts": "1",
                           "files": [{"size": "big"}]})
        )
        .starts_with("malformed files"),
    );
    let slash = decode_value(&json!({"envelope_id": "e2", "type": "slash_commands",
                                      "payload": {"command": "/x"}}))
    .unwrap();
    let SocketFrame::Envelope(slash) = slash else {
        panic!()
    };
    assert_eq!(slash.envelope_id, "e2");
    assert_eq!(
        slash.event,
        Event::Skipped {
            why: "\"slash_commands\" envelopes are not handled".into()
        }
    );
}

#[test]
fn malformed_frames_are_errors_or_skips_never_panics() {
    for text in [
        "",
        "not json",
        "[1]",
        "null",
        "3",
        "\"x\"",
        r#"{"type":"hello""#,
    ] {
        assert!(decode_frame(text).is_err(), "{text:?}");
    }
    for value in [
        json!({}),
        json!({"type": 5}),
        json!({"envelope_id": "e", "type": "events_api"}),
        json!({"envelope_id": "e", "type": "events_api", "payload": []}),
        json!({"envelope_id": "e", "type": "events_api", "payload": {"type": "event_callback"}}),
        json!({"envelope_id": "e", "type": "events_api",
               "payload": {"type": "event_callback", "event": {"type": 1}}}),
        json!({"envelope_id": "e", "type": "events_api", "retry_attempt": -1,
               "payload": {"type": "event_callback", "event": {"type": "message", "user": 1}}}),
        json!({"type": "disconnect", "reason": 7}),
    ] {
        let frame = decode_value(&value).unwrap();
        assert!(
            !matches!(&frame, SocketFrame::Envelope(e) if matches!(e.event, Event::Message(_))),
            "{value}: {frame:?}"
        );
    }
}

#[test]
fn slack_text_becomes_plain_text() {
    assert_eq!(plain_text("a &lt;b&gt; &amp;amp; c", None), "a <b> &amp; c");
    assert_eq!(
        plain_text(
            "<@U0BOT> what is <https://x.com/a?b=1&amp;c=2|this>?",
            Some("U0BOT")
        ),
        "what is this (https://x.com/a?b=1&c=2)?"
    );
    assert_eq!(
        plain_text("hi <@U0BOT|pincer>, ask <@U2> and <@U3|ann>", Some("U0BOT")),
        "hi , ask @U2 and @ann"
    );
    assert_eq!(
        plain_text(
            "see <#C1|general> <#C2> <!here> <!subteam^S1|@devs> <!date^1^{date}|May 1>",
            None
        ),
        "see #general #C2 @here @devs May 1"
    );
    assert_eq!(
        plain_text(
            "<https://x.com> <http://example.com|example.com> <mailto:a@b.c|a@b.c>",
            None
        ),
        "https://x.com example.com a@b.c"
    );
    assert_eq!(plain_text("a < b", None), "a < b");
    assert_eq!(plain_text("<@U0BOT>", Some("U0BOT")), "");
    assert_eq!(plain_text("<>|<|> é", None), "| é");
    assert!(mentions("hey <@U0BOT>", "U0BOT"));
    assert!(mentions("hey <@U0BOT|pincer>", "U0BOT"));
    assert!(!mentions("hey <@U0BOTX>", "U0BOT"));
}
