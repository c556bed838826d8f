//! The fake Telegram Bot API server's sending side, driven over real HTTP with reqwest:
//! sendMessage (records, lengths, Telegram's HTML rules), chat actions, injected failures
//! and dropped connections, files (getFile, downloads, multipart uploads), malformed
//! requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::telegram_support;

use std::time::{Duration, Instant};

use pincer_fakes::FakeTelegram;
use pincer_fakes::fake_telegram::{ChatType, InjectMessage};
use serde_json::{Value, json};
use telegram_support::*;

#[tokio::test]
async fn send_message_records_and_answers_a_message() {
    let fake = FakeTelegram::start().await;
    let (_, incoming) = fake.inject_message(InjectMessage::supergroup(-1001, 7, "q").in_topic(12));
    let message = ok(
        &fake,
        "sendMessage",
        json!({
            "chat_id": -1001,
            "text": "<b>Hi</b> &amp; bye",
            "parse_mode": "HTML",
            "message_thread_id": 12,
            "reply_parameters": {"message_id": incoming},
            "link_preview_options": {"is_disabled": true},
            "disable_notification": true,
        }),
    )
    .await;
    assert_eq!(message["chat"]["id"], -1001);
    assert_eq!(message["chat"]["type"], "supergroup");
    assert_eq!(message["text"], "Hi & bye");
    assert_eq!(message["from"]["id"], 4242);
    assert_eq!(message["message_thread_id"], 12);
    assert_eq!(message["reply_to_message"]["message_id"], incoming);
    assert_eq!(message["reply_to_message"]["text"], "q");
    assert!(message["date"].as_i64().unwrap() > 1_600_000_000);
    // Form-encoded, with the older reply_to_message_id, into a private chat.
    let response = client()
        .post(fake.method_url("sendMessage"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("chat_id=55&text=plain&reply_to_message_id=3")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let second = response.json::<Value>().await.unwrap()["result"].clone();
    assert_eq!(second["chat"]["type"], "private");
    assert!(second["message_id"].as_i64().unwrap() > message["message_id"].as_i64().unwrap());

    let sent = fake.wait_for_messages(2, Duration::from_secs(5)).await;
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].chat_id, -1001);
    assert_eq!(sent[0].text, "<b>Hi</b> &amp; bye");
    assert_eq!(sent[0].plain_text, "Hi & bye");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(sent[0].message_thread_id, Some(12));
    assert_eq!(sent[0].reply_to_message_id, Some(incoming));
    assert!(sent[0].disable_notification);
    assert_eq!(sent[0].params["link_preview_options"]["is_disabled"], true);
    assert_eq!(sent[1].reply_to_message_id, Some(3));
    assert_eq!(sent[1].parse_mode, None);
}

#[tokio::test]
async fn wait_for_messages_wakes_and_times_out() {
    let fake = FakeTelegram::start().await;
    let started = Instant::now();
    assert!(
        fake.wait_for_messages(1, Duration::from_millis(300))
            .await
            .is_empty()
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
    let waiter = {
        let fake = fake.clone();
        tokio::spawn(async move { fake.wait_for_messages(1, Duration::from_secs(10)).await })
    };
    ok(&fake, "sendMessage", json!({"chat_id": 1, "text": "x"})).await;
    let sent = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sent.len(), 1);
}

#[tokio::test]
async fn send_message_length_and_emptiness() {
    let fake = FakeTelegram::start().await;
    // 4096 visible characters are fine even with markup around them.
    let html = format!("<b>{}</b>", "x".repeat(4096));
    ok(
        &fake,
        "sendMessage",
        json!({"chat_id": 1, "text": html, "parse_mode": "HTML"}),
    )
    .await;
    let too_long = "Bad Request: message is too long";
    let empty = "Bad Request: message text is empty";
    for (params, expected) in [
        (json!({"chat_id": 1, "text": "x".repeat(4097)}), too_long),
        // Length is counted in UTF-16 code units: 2049 emoji are 4098 units.
        (json!({"chat_id": 1, "text": "😀".repeat(2049)}), too_long),
        (json!({"chat_id": 1, "text": ""}), empty),
        (json!({"chat_id": 1, "text": "  \n"}), empty),
        (json!({"chat_id": 1, "text": null}), empty),
        (
            json!({"chat_id": 1, "text": "<b></b>", "parse_mode": "HTML"}),
            empty,
        ),
        (json!({"text": "x"}), "Bad Request: chat_id is empty"),
    ] {
        assert_eq!(
            send_refused(&fake, params.clone()).await,
            expected,
            "{params}"
        );
    }
    assert_eq!(fake.sent_messages().len(), 1);
}

#[tokio::test]
async fn send_message_html_validation() {
    let fake = FakeTelegram::start().await;
    let good = r#"<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike><del>d</del><code>c</code><pre><code class="language-rust">let x = 1 &lt; 2;</code></pre><a href="https://example.com/?a=1&amp;b=2">a</a><blockquote>q</blockquote><tg-spoiler>t</tg-spoiler><span class="tg-spoiler">p</span> &gt; &quot; &#39; &#x1F600;"#;
    let message = ok(
        &fake,
        "sendMessage",
        json!({"chat_id": 1, "text": good, "parse_mode": "HTML"}),
    )
    .await;
    assert_eq!(message["text"], "bsieunskdclet x = 1 < 2;aqtp > \" ' 😀");

    let cases = [
        (
            "<b>bold",
            "Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            "<b><i>x</b></i>",
            "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\"",
        ),
        ("x</i>", "Unexpected end tag at byte offset 1"),
        (
            "line<br>break",
            "Unsupported start tag \"br\" at byte offset 4",
        ),
        (
            "<h1>title</h1>",
            "Unsupported start tag \"h1\" at byte offset 0",
        ),
        ("1 < 2", "Unsupported start tag \"\" at byte offset 2"),
        (
            "<span>x</span>",
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0",
        ),
    ];
    for (text, expected) in cases {
        let description = send_refused(
            &fake,
            json!({"chat_id": 1, "text": text, "parse_mode": "HTML"}),
        )
        .await;
        assert_eq!(
            description,
            format!("Bad Request: can't parse entities: {expected}"),
            "{text}"
        );
    }
    let description = send_refused(
        &fake,
        json!({"chat_id": 1, "text": "Q&A", "parse_mode": "HTML"}),
    )
    .await;
    assert!(
        description
            .starts_with("Bad Request: can't parse entities: Character '&' at byte offset 1"),
        "{description}"
    );
    // Without parse_mode the same texts are plain text.
    for params in [
        json!({"chat_id": 1, "text": "1 < 2 & <b>"}),
        json!({"chat_id": 1, "text": "*x*", "parse_mode": "MarkdownV2"}),
    ] {
        ok(&fake, "sendMessage", params).await;
    }
    assert_eq!(
        send_refused(
            &fake,
            json!({"chat_id": 1, "text": "x", "parse_mode": "BBCode"})
        )
        .await,
        "Bad Request: unsupported parse_mode"
    );
    assert_eq!(fake.sent_messages().len(), 3);
}

#[tokio::test]
async fn chat_actions_are_recorded() {
    let fake = FakeTelegram::start().await;
    for params in [
        json!({"chat_id": 5, "action": "typing"}),
        json!({"chat_id": -1009, "action": "upload_document", "message_thread_id": 3}),
    ] {
        ok(&fake, "sendChatAction", params).await;
    }
    assert_eq!(
        bad_request(
            &fake,
            "sendChatAction",
            json!({"chat_id": 5, "action": "dancing"})
        )
        .await,
        "Bad Request: wrong parameter action in request"
    );
    assert_eq!(
        fake.wait_for_chat_actions(2, Duration::from_secs(1)).await,
        [
            (5, "typing".to_owned()),
            (-1009, "upload_document".to_owned())
        ]
    );
}

#[tokio::test]
async fn fail_next_with_retry_after() {
    let fake = FakeTelegram::start().await;
    fake.fail_next(
        "sendMessage",
        429,
        "Too Many Requests: retry after 3",
        Some(3),
    );
    fake.fail_next("sendmessage", 502, "Bad Gateway", None);
    let (status, body) = call(&fake, "sendMessage", json!({"chat_id": 1, "text": "x"})).await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({
            "ok": false,
            "error_code": 429,
            "description": "Too Many Requests: retry after 3",
            "parameters": {"retry_after": 3},
        })
    );
    let (status, body) = call(&fake, "sendMessage", json!({"chat_id": 1, "text": "x"})).await;
    assert_eq!(status, 502);
    assert!(body.get("parameters").is_none());
    ok(&fake, "sendMessage", json!({"chat_id": 1, "text": "x"})).await;
    // Failures are per method; only the successful call was recorded as a message.
    assert_eq!(fake.sent_messages().len(), 1);
    assert_eq!(fake.calls(), ["sendMessage", "sendMessage", "sendMessage"]);
}

#[tokio::test]
async fn failed_get_updates_confirms_nothing() {
    let fake = FakeTelegram::start().await;
    let (update_id, _) = fake.inject_message(InjectMessage::private(1, "x"));
    fake.fail_next("getUpdates", 500, "Internal Server Error", None);
    let (status, _) = call(&fake, "getUpdates", json!({"offset": update_id + 1})).await;
    assert_eq!(status, 500);
    assert_eq!(fake.pending_update_ids(), [update_id]);
}

#[tokio::test]
async fn dropped_get_updates_connections() {
    let fake = FakeTelegram::start().await;
    let (update_id, _) = fake.inject_message(InjectMessage::private(1, "x"));
    fake.drop_next_get_updates(2);
    for _ in 0..2 {
        let result = client()
            .post(fake.method_url("getUpdates"))
            .json(&json!({"offset": update_id + 1, "timeout": 0}))
            .send()
            .await;
        let error = result.expect_err("the connection should have been dropped");
        assert!(!error.is_status(), "{error:?}");
    }
    // Nothing was confirmed by the dropped calls; the third call is answered.
    assert_eq!(fake.pending_update_ids(), [update_id]);
    assert_eq!(ids(&ok(&fake, "getUpdates", json!({})).await), [update_id]);
    assert_eq!(
        fake.get_updates_offsets(),
        [update_id + 1, update_id + 1, 0]
    );
}

#[tokio::test]
async fn files_register_get_file_and_download() {
    let fake = FakeTelegram::start().await;
    let file = fake.register_file(b"hello file".to_vec(), "notes.txt");
    assert_eq!(file.file_size, 10);
    assert_eq!(file.file_name, "notes.txt");
    assert_eq!(file.file_path, "documents/file_1.txt");
    let (_, _) = fake.inject_message(
        InjectMessage::private(3, "see @pincer_test_bot").with_document(file.clone()),
    );
    let updates = ok(&fake, "getUpdates", json!({})).await;
    let message = &updates[0]["message"];
    assert!(message.get("text").is_none());
    assert_eq!(message["caption"], "see @pincer_test_bot");
    assert_eq!(
        message["caption_entities"],
        json!([{"type": "mention", "offset": 4, "length": 16}])
    );
    assert_eq!(message["document"]["file_id"], file.file_id.as_str());
    assert_eq!(message["document"]["file_name"], "notes.txt");
    assert_eq!(message["document"]["mime_type"], "text/plain");
    assert_eq!(message["document"]["file_size"], 10);

    let info = ok(&fake, "getFile", json!({"file_id": file.file_id})).await;
    assert_eq!(
        info,
        json!({
            "file_id": file.file_id,
            "file_unique_id": file.file_unique_id,
            "file_size": 10,
            "file_path": "documents/file_1.txt",
        })
    );
    let download = client()
        .get(fake.file_url(info["file_path"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(&download.bytes().await.unwrap()[..], b"hello file");
    let missing = client()
        .get(fake.file_url("documents/nope.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        bad_request(&fake, "getFile", json!({"file_id": "nope"})).await,
        "Bad Request: invalid file_id"
    );

    let photo = fake.register_file(vec![0xff, 0xd8, 0xff], "cat.jpg");
    assert_eq!(photo.file_path, "photos/file_2.jpg");
    fake.inject_message(InjectMessage::group(-7, 8, "").with_photo(photo.clone()));
    let updates = ok(&fake, "getUpdates", json!({"offset": 2})).await;
    let message = &updates[0]["message"];
    assert!(message.get("caption").is_none());
    assert_eq!(message["photo"][0]["file_id"], photo.file_id.as_str());
    assert_eq!(message["chat"]["type"], "group");
    assert_eq!(message["chat"]["title"], "Test Group");
}

#[tokio::test]
async fn mention_entities_count_utf16() {
    let fake = FakeTelegram::start().await;
    // "👋🏽" is 4 UTF-16 code units (2 surrogate pairs), "é" 1.
    let text = "👋🏽 é @pincer_test_bot hi, /help@pincer_test_bot and @someone_else";
    fake.inject_message(InjectMessage::group(-42, 9, text).from_user(9, "Ann", Some("ann")));
    let updates = ok(&fake, "getUpdates", json!({})).await;
    let message = &updates[0]["message"];
    assert_eq!(message["text"], text);
    assert_eq!(
        message["entities"],
        json!([
            {"type": "mention", "offset": 7, "length": 16},
            {"type": "bot_command", "offset": 28, "length": 21},
            {"type": "mention", "offset": 54, "length": 13},
        ])
    );
    // Check the offsets the way a client would: slice the UTF-16 text.
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let slice =
        |offset: usize, length: usize| String::from_utf16(&utf16[offset..offset + length]).unwrap();
    assert_eq!(slice(7, 16), "@pincer_test_bot");
    assert_eq!(slice(28, 21), "/help@pincer_test_bot");
    assert_eq!(slice(54, 13), "@someone_else");
    assert_eq!(message["from"]["username"], "ann");
    assert_eq!(message["from"]["first_name"], "Ann");
    assert_eq!(message["chat"]["type"], ChatType::Group.as_str());
}

#[tokio::test]
async fn replies_and_topics_in_injected_messages() {
    let fake = FakeTelegram::start().await;
    let bot_message = ok(
        &fake,
        "sendMessage",
        json!({"chat_id": -1002, "text": "question?"}),
    )
    .await;
    let bot_message_id = bot_message["message_id"].as_i64().unwrap();
    fake.inject_message(
        InjectMessage::supergroup(-1002, 5, "answer")
            .in_topic(77)
            .reply_to(bot_message_id),
    );
    let updates = ok(&fake, "getUpdates", json!({})).await;
    let message = &updates[0]["message"];
    assert_eq!(message["message_thread_id"], 77);
    assert_eq!(message["is_topic_message"], true);
    assert_eq!(message["chat"]["is_forum"], true);
    assert_eq!(message["reply_to_message"]["message_id"], bot_message_id);
    assert_eq!(message["reply_to_message"]["from"]["id"], 4242);
    assert_eq!(message["reply_to_message"]["text"], "question?");
}

fn multipart(
    boundary: &str,
    fields: &[(&str, &str)],
    file_field: &str,
    file_name: &str,
    data: &[u8],
) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{file_name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

#[tokio::test]
async fn multipart_send_document_and_photo() {
    let fake = FakeTelegram::start().await;
    let boundary = "pincer-0123456789abcdef";
    // File bytes containing CRLF and a boundary-like line must survive.
    let data = b"line 1\r\n--pincer-not-the-boundary\r\n\x00\xffend".to_vec();
    let body = multipart(
        boundary,
        &[
            ("chat_id", "-100123"),
            ("caption", "<i>report</i>"),
            ("parse_mode", "HTML"),
            ("message_thread_id", "4"),
        ],
        "document",
        "report.bin",
        &data,
    );
    let response = post_multipart(&fake, "sendDocument", boundary, body).await;
    assert_eq!(response.status(), 200);
    let message = response.json::<Value>().await.unwrap()["result"].clone();
    assert_eq!(message["caption"], "report");
    assert_eq!(message["document"]["file_name"], "report.bin");
    assert_eq!(message["document"]["file_size"], data.len());
    assert_eq!(message["message_thread_id"], 4);

    // The uploaded file can be fetched back like any other.
    let file_id = message["document"]["file_id"].as_str().unwrap();
    let info = ok(&fake, "getFile", json!({"file_id": file_id})).await;
    let download = client()
        .get(fake.file_url(info["file_path"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(&download.bytes().await.unwrap()[..], &data[..]);

    let photo = multipart(
        boundary,
        &[("chat_id", "9")],
        "photo",
        "cat.png",
        b"\x89PNG",
    );
    let response = post_multipart(&fake, "sendPhoto", &format!("\"{boundary}\""), photo).await;
    assert_eq!(response.status(), 200);
    let message = response.json::<Value>().await.unwrap()["result"].clone();
    assert!(message["photo"][0]["file_id"].is_string());

    let files = fake.wait_for_files(2, Duration::from_secs(1)).await;
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].method, "sendDocument");
    assert_eq!(files[0].chat_id, -100_123);
    assert_eq!(files[0].caption.as_deref(), Some("<i>report</i>"));
    assert_eq!(files[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(files[0].message_thread_id, Some(4));
    assert_eq!(files[0].file_name.as_deref(), Some("report.bin"));
    assert_eq!(files[0].bytes, data);
    assert_eq!(files[1].method, "sendPhoto");
    assert_eq!(files[1].file_name.as_deref(), Some("cat.png"));
    assert_eq!(files[1].bytes, b"\x89PNG");
    // The call log shows uploads as summaries.
    let requests = fake.requests();
    assert_eq!(
        requests[0].params["document"],
        json!({"upload": "report.bin", "size": data.len()})
    );

    // Missing file, bad caption markup, malformed multipart: 400, no panic.
    let no_file = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n1\r\n--{boundary}--\r\n"
    );
    let response = post_multipart(&fake, "sendDocument", boundary, no_file).await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.json::<Value>().await.unwrap()["description"],
        "Bad Request: there is no document in the request"
    );
    let response = post_multipart(&fake, "sendDocument", boundary, "garbage").await;
    assert_eq!(response.status(), 400);
    let bad_caption = multipart(
        boundary,
        &[
            ("chat_id", "1"),
            ("caption", "<b>x"),
            ("parse_mode", "HTML"),
        ],
        "document",
        "a.txt",
        b"a",
    );
    let response = post_multipart(&fake, "sendDocument", boundary, bad_caption).await;
    assert_eq!(response.status(), 400);
    assert_eq!(fake.sent_files().len(), 2);
}

#[tokio::test]
async fn malformed_requests_get_400() {
    let fake = FakeTelegram::start().await;
    for (content_type, body) in [
        ("application/json", "{not json"),
        ("application/json", "[1, 2]"),
        ("text/plain", "hello"),
    ] {
        let response = client()
            .post(fake.method_url("sendMessage"))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{content_type} {body}");
        assert_eq!(response.json::<Value>().await.unwrap()["ok"], false);
    }
    assert_eq!(
        bad_request(&fake, "getUpdates", json!({"offset": "abc"})).await,
        "Bad Request: invalid offset specified"
    );
    assert_eq!(
        send_refused(&fake, json!({"chat_id": {"x": 1}, "text": "x"})).await,
        "Bad Request: chat not found"
    );
}
