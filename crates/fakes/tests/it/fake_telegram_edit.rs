//! The fake Telegram's message actions over real HTTP: `editMessageText` (only the bot's
//! own messages, "not modified" for the same text, HTML checked), `setMessageReaction`
//! and `deleteMessage` (only messages the fake knows), each recorded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::telegram_support;

use std::time::Duration;

use pincer_fakes::FakeTelegram;
use pincer_fakes::fake_telegram::{EditedMessage, InjectMessage, Reaction};
use serde_json::json;
use telegram_support::*;

const CHAT: i64 = 55;

/// A message the bot sent to [`CHAT`]; its id.
async fn bot_message(fake: &FakeTelegram, text: &str) -> i64 {
    let sent = ok(fake, "sendMessage", json!({"chat_id": CHAT, "text": text})).await;
    sent["message_id"].as_i64().unwrap()
}

#[tokio::test]
async fn edits_change_the_bots_own_messages() {
    let fake = FakeTelegram::start().await;
    let id = bot_message(&fake, "helo").await;
    let edited = ok(
        &fake,
        "editMessageText",
        json!({"chat_id": CHAT, "message_id": id, "text": "<b>hello</b>", "parse_mode": "HTML"}),
    )
    .await;
    assert_eq!(edited["message_id"], id);
    assert_eq!(edited["text"], "hello");
    assert!(edited["edit_date"].as_i64().unwrap() > 1_600_000_000);
    assert_eq!(
        fake.wait_for_edits(1, Duration::from_secs(5)).await,
        [EditedMessage {
            chat_id: CHAT,
            message_id: id,
            text: "<b>hello</b>".into(),
            plain_text: "hello".into(),
            parse_mode: Some("HTML".into()),
        }]
    );
    // The same text again; a user's message; an unknown one; bad markup; no text.
    let (_, users) = fake.inject_message(InjectMessage::private(CHAT, "mine"));
    let refusals = [
        (
            json!({"chat_id": CHAT, "message_id": id, "text": "hello"}),
            "Bad Request: message is not modified: specified new message content and reply \
             markup are exactly the same as a current content and reply markup of the message",
        ),
        (
            json!({"chat_id": CHAT, "message_id": users, "text": "x"}),
            "Bad Request: message can't be edited",
        ),
        (
            json!({"chat_id": CHAT, "message_id": 999, "text": "x"}),
            "Bad Request: message to edit not found",
        ),
        (
            json!({"chat_id": CHAT + 1, "message_id": id, "text": "x"}),
            "Bad Request: message to edit not found",
        ),
        (
            json!({"chat_id": CHAT, "message_id": id, "text": "<b>x", "parse_mode": "HTML"}),
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            json!({"chat_id": CHAT, "message_id": id, "text": " "}),
            "Bad Request: message text is empty",
        ),
        (
            json!({"chat_id": CHAT, "text": "x"}),
            "Bad Request: message_id is empty",
        ),
    ];
    for (params, expected) in refusals {
        assert_eq!(
            bad_request(&fake, "editMessageText", params.clone()).await,
            expected,
            "{params}"
        );
    }
    assert_eq!(fake.edited_messages().len(), 1);
}

#[tokio::test]
async fn reactions_and_deletions_need_a_known_message() {
    let fake = FakeTelegram::start().await;
    let (_, users) = fake.inject_message(InjectMessage::private(CHAT, "hi"));
    let reacted = ok(
        &fake,
        "setMessageReaction",
        json!({"chat_id": CHAT, "message_id": users,
               "reaction": [{"type": "emoji", "emoji": "👍"}]}),
    )
    .await;
    assert_eq!(reacted, true);
    // No reaction list: the bot's reactions taken back.
    ok(
        &fake,
        "setMessageReaction",
        json!({"chat_id": CHAT, "message_id": users}),
    )
    .await;
    assert_eq!(
        fake.reactions(),
        [
            Reaction {
                chat_id: CHAT,
                message_id: users,
                emoji: vec!["👍".into()]
            },
            Reaction {
                chat_id: CHAT,
                message_id: users,
                emoji: vec![]
            },
        ]
    );
    for (params, expected) in [
        (
            json!({"chat_id": CHAT, "message_id": 999, "reaction": []}),
            "Bad Request: message to react not found",
        ),
        (
            json!({"chat_id": CHAT, "message_id": users, "reaction": [{"type": "custom_emoji"}]}),
            "Bad Request: REACTION_INVALID",
        ),
        (
            json!({"chat_id": CHAT, "message_id": users, "reaction": {"emoji": "x"}}),
            "Bad Request: can't parse reaction types JSON object",
        ),
    ] {
        assert_eq!(
            bad_request(&fake, "setMessageReaction", params.clone()).await,
            expected,
            "{params}"
        );
    }

    let id = bot_message(&fake, "bye").await;
    let deleted = ok(
        &fake,
        "deleteMessage",
        json!({"chat_id": CHAT, "message_id": id}),
    )
    .await;
    assert_eq!(deleted, true);
    assert_eq!(
        bad_request(
            &fake,
            "deleteMessage",
            json!({"chat_id": CHAT, "message_id": id})
        )
        .await,
        "Bad Request: message to delete not found"
    );
    assert_eq!(fake.deleted_messages(), [(CHAT, id)]);
    // A deleted message cannot be edited either.
    assert_eq!(
        bad_request(
            &fake,
            "editMessageText",
            json!({"chat_id": CHAT, "message_id": id, "text": "x"})
        )
        .await,
        "Bad Request: message to edit not found"
    );
}
