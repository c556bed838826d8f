//! Every pi v3 entry type parses and serialises back to pi's exact line.
//!
//! Entry fields keep pi's order; free-form JSON inside (`details`, `data`, unknown fields)
//! comes out with sorted keys (serde_json without `preserve_order`), so those samples use
//! sorted keys; the JSON values are equal either way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_store::{Entry, EntryBody, SessionHeader};

const LINES: &[&str] = &[
    r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1733234401000}}"#,
    r#"{"type":"message","id":"a1b2c3d5","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1733234402000}}"#,
    r#"{"type":"model_change","id":"00000001","parentId":"a1b2c3d5","timestamp":"2024-12-03T14:00:03.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
    r#"{"type":"thinking_level_change","id":"00000002","parentId":"00000001","timestamp":"2024-12-03T14:00:04.000Z","thinkingLevel":"high"}"#,
    r#"{"type":"compaction","id":"00000003","parentId":"00000002","timestamp":"2024-12-03T14:00:05.000Z","summary":"S","firstKeptEntryId":"a1b2c3d5","tokensBefore":12345}"#,
    r#"{"type":"compaction","id":"00000004","parentId":"00000003","timestamp":"2024-12-03T14:00:05.000Z","summary":"S","firstKeptEntryId":"a1b2c3d5","tokensBefore":1,"details":{"modifiedFiles":[],"readFiles":["a.rs"]},"fromHook":true}"#,
    r#"{"type":"branch_summary","id":"00000005","parentId":"00000004","timestamp":"2024-12-03T14:00:06.000Z","fromId":"00000002","summary":"tried X"}"#,
    r#"{"type":"custom","id":"00000006","parentId":"00000005","timestamp":"2024-12-03T14:00:07.000Z","customType":"ext","data":{"k":[1,2]}}"#,
    r#"{"type":"custom_message","id":"00000007","parentId":"00000006","timestamp":"2024-12-03T14:00:08.000Z","customType":"note","content":"injected","display":true}"#,
    r#"{"type":"custom_message","id":"00000008","parentId":"00000007","timestamp":"2024-12-03T14:00:09.000Z","customType":"note","content":[{"type":"text","text":"t"}],"details":{"x":1},"display":false}"#,
    r#"{"type":"label","id":"00000009","parentId":"00000008","timestamp":"2024-12-03T14:00:10.000Z","targetId":"a1b2c3d4","label":"start"}"#,
    r#"{"type":"label","id":"0000000a","parentId":"00000009","timestamp":"2024-12-03T14:00:11.000Z","targetId":"a1b2c3d4"}"#,
    r#"{"type":"session_info","id":"0000000b","parentId":"0000000a","timestamp":"2024-12-03T14:00:12.000Z","name":"My session"}"#,
    r#"{"type":"future_thing","id":"0000000c","parentId":"0000000b","timestamp":"2024-12-03T14:00:13.000Z","anything":{"nested":[true,null]}}"#,
    r#"{"type":"message","id":"0000000d","parentId":"0000000c","timestamp":"2024-12-03T14:00:14.000Z","message":{"command":"ls","output":"x","role":"bashExecution"}}"#,
];

#[test]
fn every_entry_type_round_trips_exactly() {
    let kinds: Vec<String> = LINES
        .iter()
        .map(|line| {
            let entry: Entry = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&entry).unwrap(), *line);
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&entry).unwrap(), value);
            entry.kind().to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "model_change",
            "thinking_level_change",
            "compaction",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "custom_message",
            "label",
            "label",
            "session_info",
            "future_thing",
            "message",
        ]
    );
}

#[test]
fn unknown_types_and_unreadable_fields_are_kept_raw() {
    for line in &LINES[LINES.len() - 2..] {
        let entry: Entry = serde_json::from_str(line).unwrap();
        assert!(matches!(entry.body, EntryBody::Unknown { .. }), "{line}");
    }
}

#[test]
fn header_shape() {
    let line = r#"{"type":"session","version":3,"id":"0190a1b2-0000-4000-8000-000000000000","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/tmp/x"}"#;
    let header: SessionHeader = serde_json::from_str(line).unwrap();
    assert_eq!(header.version, 3);
    assert_eq!(serde_json::to_string(&header).unwrap(), line);
    let forked = SessionHeader {
        parent_session: Some("/p/a.jsonl".into()),
        ..header
    };
    assert!(
        serde_json::to_string(&forked)
            .unwrap()
            .ends_with(r#""cwd":"/tmp/x","parentSession":"/p/a.jsonl"}"#)
    );
    let v1: SessionHeader =
        serde_json::from_str(r#"{"type":"session","id":"x","timestamp":"t","cwd":"/"}"#).unwrap();
    assert_eq!(v1.version, 1);
}

#[test]
fn malformed_entries_are_errors() {
    for bad in [
        r#"{"id":"1","parentId":null,"timestamp":"t"}"#,
        r#"{"type":"label","parentId":null,"timestamp":"t","targetId":"x"}"#,
        r#"{"type":"label","id":"1","parentId":5,"timestamp":"t","targetId":"x"}"#,
        r#"{"type":"session","id":"1","parentId":null,"timestamp":"t"}"#,
        r#"[1,2]"#,
    ] {
        assert!(serde_json::from_str::<Entry>(bad).is_err(), "{bad}");
    }
}

#[test]
fn header_session_key_and_unknown_fields_round_trip() {
    let line = r#"{"type":"session","version":3,"id":"s","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/w","parentSession":"/p.jsonl","sessionKey":"agent:main:main","future":{"b":1},"modelId":"m"}"#;
    let header: SessionHeader = serde_json::from_str(line).unwrap();
    assert_eq!(header.session_key.as_deref(), Some("agent:main:main"));
    assert_eq!(header.parent_session.as_deref(), Some("/p.jsonl"));
    assert_eq!(
        header.extra,
        serde_json::json!({"future": {"b": 1}, "modelId": "m"})
            .as_object()
            .unwrap()
            .clone()
    );
    // pi's fields in pi's order, then the key, then the rest sorted.
    assert_eq!(
        serde_json::to_string(&header).unwrap(),
        r#"{"type":"session","version":3,"id":"s","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/w","parentSession":"/p.jsonl","sessionKey":"agent:main:main","future":{"b":1},"modelId":"m"}"#
    );
    let keyed = SessionHeader::new("x", "/").with_session_key("k");
    let text = serde_json::to_string(&keyed).unwrap();
    assert!(text.ends_with(r#""cwd":"/","sessionKey":"k"}"#), "{text}");
}

#[test]
fn unusable_session_keys_are_kept_but_not_read() {
    for raw in [r#"42"#, r#""""#, r#"null"#, r#"{"k":1}"#, r#"["a"]"#] {
        let line = format!(
            r#"{{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/","sessionKey":{raw}}}"#
        );
        let header: SessionHeader = serde_json::from_str(&line).unwrap();
        assert_eq!(header.session_key, None, "{raw}");
        assert_eq!(serde_json::to_string(&header).unwrap(), line, "{raw}");
    }
}

#[test]
fn header_fields_set_by_hand_in_extra_are_not_written_twice() {
    let mut header = SessionHeader::new("s", "/");
    header.timestamp = "t".into();
    header
        .extra
        .insert("type".into(), serde_json::json!("other"));
    header
        .extra
        .insert("id".into(), serde_json::json!("shadow"));
    header.extra.insert("z".into(), serde_json::json!(1));
    assert_eq!(
        serde_json::to_string(&header).unwrap(),
        r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/","z":1}"#
    );
}

#[test]
fn malformed_headers_are_errors_and_old_ones_are_read() {
    for bad in [
        r#"{"type":"session","version":"3","id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":-1,"id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":2.5,"id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":4294967296,"id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":3,"timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":3,"id":7,"timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":3,"id":"s","cwd":"/"}"#,
        r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":1}"#,
        r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/","parentSession":5}"#,
        r#"{"type":"message","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
        r#"["session"]"#,
        r#""session""#,
    ] {
        assert!(serde_json::from_str::<SessionHeader>(bad).is_err(), "{bad}");
    }
    // Old sessions without a cwd, and a null parent, are read.
    let old: SessionHeader =
        serde_json::from_str(r#"{"type":"session","id":"s","timestamp":"t","parentSession":null}"#)
            .unwrap();
    assert_eq!(
        (old.version, old.cwd.as_str(), old.parent_session),
        (1, "", None)
    );
}
