//! Tests of the RPC protocol codec: exact JSON of every command, pi's answers to malformed
//! lines, the client-side line sorter, and no panics on arbitrary input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn img() -> ImageContent {
    ImageContent {
        data: "aGk=".into(),
        mime_type: "image/png".into(),
    }
}

/// Every command with the exact line it encodes to (with `"id":"req_1"`).
fn all_commands() -> Vec<(RpcCommand, &'static str)> {
    use RpcCommand::*;
    vec![
        (
            Prompt {
                message: "hi".into(),
                images: Some(vec![img()]),
                streaming_behavior: Some(StreamingBehavior::FollowUp),
            },
            r#"{"id":"req_1","type":"prompt","message":"hi","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"streamingBehavior":"followUp"}"#,
        ),
        (
            RpcCommand::prompt("plain"),
            r#"{"id":"req_1","type":"prompt","message":"plain"}"#,
        ),
        (
            Prompt {
                message: "s".into(),
                images: None,
                streaming_behavior: Some(StreamingBehavior::Steer),
            },
            r#"{"id":"req_1","type":"prompt","message":"s","streamingBehavior":"steer"}"#,
        ),
        (
            Steer {
                message: "m".into(),
                images: None,
            },
            r#"{"id":"req_1","type":"steer","message":"m"}"#,
        ),
        (
            FollowUp {
                message: "m".into(),
                images: Some(vec![]),
            },
            r#"{"id":"req_1","type":"follow_up","message":"m","images":[]}"#,
        ),
        (Abort, r#"{"id":"req_1","type":"abort"}"#),
        (
            NewSession {
                parent_session: Some("/p.jsonl".into()),
            },
            r#"{"id":"req_1","type":"new_session","parentSession":"/p.jsonl"}"#,
        ),
        (
            NewSession {
                parent_session: None,
            },
            r#"{"id":"req_1","type":"new_session"}"#,
        ),
        (GetState, r#"{"id":"req_1","type":"get_state"}"#),
        (GetMessages, r#"{"id":"req_1","type":"get_messages"}"#),
        (
            SetModel {
                provider: "anthropic".into(),
                model_id: "claude".into(),
            },
            r#"{"id":"req_1","type":"set_model","provider":"anthropic","modelId":"claude"}"#,
        ),
        (CycleModel, r#"{"id":"req_1","type":"cycle_model"}"#),
        (
            GetAvailableModels,
            r#"{"id":"req_1","type":"get_available_models"}"#,
        ),
        (
            SetThinkingLevel {
                level: "high".into(),
            },
            r#"{"id":"req_1","type":"set_thinking_level","level":"high"}"#,
        ),
        (
            CycleThinkingLevel,
            r#"{"id":"req_1","type":"cycle_thinking_level"}"#,
        ),
        (
            SetSteeringMode {
                mode: QueueMode::All,
            },
            r#"{"id":"req_1","type":"set_steering_mode","mode":"all"}"#,
        ),
        (
            SetFollowUpMode {
                mode: QueueMode::OneAtATime,
            },
            r#"{"id":"req_1","type":"set_follow_up_mode","mode":"one-at-a-time"}"#,
        ),
        (
            Compact {
                custom_instructions: Some("short".into()),
            },
            r#"{"id":"req_1","type":"compact","customInstructions":"short"}"#,
        ),
        (
            Compact {
                custom_instructions: None,
            },
            r#"{"id":"req_1","type":"compact"}"#,
        ),
        (
            SetAutoCompaction { enabled: true },
            r#"{"id":"req_1","type":"set_auto_compaction","enabled":true}"#,
        ),
        (
            SetAutoRetry { enabled: false },
            r#"{"id":"req_1","type":"set_auto_retry","enabled":false}"#,
        ),
        (AbortRetry, r#"{"id":"req_1","type":"abort_retry"}"#),
        (
            Bash {
                command: "ls -la".into(),
            },
            r#"{"id":"req_1","type":"bash","command":"ls -la"}"#,
        ),
        (AbortBash, r#"{"id":"req_1","type":"abort_bash"}"#),
        (
            GetSessionStats,
            r#"{"id":"req_1","type":"get_session_stats"}"#,
        ),
        (
            ExportHtml {
                output_path: Some("/tmp/x.html".into()),
            },
            r#"{"id":"req_1","type":"export_html","outputPath":"/tmp/x.html"}"#,
        ),
        (
            ExportHtml { output_path: None },
            r#"{"id":"req_1","type":"export_html"}"#,
        ),
        (
            SwitchSession {
                session_path: "/s.jsonl".into(),
            },
            r#"{"id":"req_1","type":"switch_session","sessionPath":"/s.jsonl"}"#,
        ),
        (
            Fork {
                entry_id: "e1".into(),
            },
            r#"{"id":"req_1","type":"fork","entryId":"e1"}"#,
        ),
        (CloneSession, r#"{"id":"req_1","type":"clone"}"#),
        (
            GetForkMessages,
            r#"{"id":"req_1","type":"get_fork_messages"}"#,
        ),
        (
            GetLastAssistantText,
            r#"{"id":"req_1","type":"get_last_assistant_text"}"#,
        ),
        (
            SetSessionName { name: "n".into() },
            r#"{"id":"req_1","type":"set_session_name","name":"n"}"#,
        ),
        (GetCommands, r#"{"id":"req_1","type":"get_commands"}"#),
    ]
}

#[test]
fn every_command_round_trips_with_exact_json() {
    let id = json!("req_1");
    let mut seen = std::collections::BTreeSet::new();
    for (command, expected) in all_commands() {
        let line = encode_request(Some(&id), &command);
        assert_eq!(line, expected);
        let decoded = decode_command(&line).unwrap();
        assert_eq!(decoded.id, Some(id.clone()));
        assert_eq!(decoded.command, command);
        assert!(is_known_command(command.command_type()));
        assert!(line.contains(&format!("\"type\":\"{}\"", command.command_type())));
        seen.insert(command.command_type());
        // Without an id, no `id` key at all.
        let bare = encode_request(None, &command);
        assert!(!bare.contains("\"id\""), "{bare}");
        assert_eq!(decode_command(&bare).unwrap().id, None);
    }
    assert_eq!(
        seen.len(),
        COMMAND_TYPES.len(),
        "a command type has no test"
    );
}

#[test]
fn ids_of_any_json_type_are_kept_verbatim_and_extra_fields_ignored() {
    for id in [json!(7), json!(null), json!({"a":[1]}), json!("x")] {
        let line = json!({"type":"abort","id":id,"extra":true}).to_string();
        let req = decode_command(&line).unwrap();
        assert_eq!(req.id, Some(id.clone()));
        assert_eq!(req.command, RpcCommand::Abort);
        assert_eq!(
            success_line(req.id.as_ref(), "abort", None),
            format!(r#"{{"id":{id},"type":"response","command":"abort","success":true}}"#)
        );
    }
}

#[test]
fn images_without_their_type_tag_are_accepted_other_tags_are_not() {
    let req = decode_command(
        r#"{"type":"steer","message":"m","images":[{"data":"aGk=","mimeType":"image/png"}]}"#,
    )
    .unwrap();
    assert_eq!(
        req.command,
        RpcCommand::Steer {
            message: "m".into(),
            images: Some(vec![img()])
        }
    );
    let req = decode_command(r#"{"type":"prompt","message":"m","images":null}"#).unwrap();
    assert_eq!(req.command, RpcCommand::prompt("m"));
    let err = decode_command(r#"{"id":"a","type":"prompt","message":"m","images":[{"type":"text","data":"","mimeType":""}]}"#).unwrap_err();
    assert!(
        matches!(err, DecodeError::Invalid { ref command, .. } if command == "prompt"),
        "{err:?}"
    );
}

#[test]
fn response_lines_are_exactly_pis() {
    let id = json!("req_3");
    assert_eq!(
        success_line(Some(&id), "get_state", Some(&json!({"isStreaming":false}))),
        r#"{"id":"req_3","type":"response","command":"get_state","success":true,"data":{"isStreaming":false}}"#
    );
    assert_eq!(
        success_line(None, "cycle_model", Some(&Value::Null)),
        r#"{"type":"response","command":"cycle_model","success":true,"data":null}"#
    );
    assert_eq!(
        error_line(Some(&id), "set_model", "Model not found: a/b"),
        r#"{"id":"req_3","type":"response","command":"set_model","success":false,"error":"Model not found: a/b"}"#
    );
    // Line separators inside strings are escaped, as pi's serializeRpcJsonLine does.
    assert_eq!(
        json_line(&json!({"type":"x","t":"a\u{2028}b\u{2029}"})),
        r#"{"t":"a\u2028b\u2029","type":"x"}"#
    );
}

fn parse_err_line(input: &str) -> String {
    decode_command(input).unwrap_err().response_line()
}

#[test]
fn malformed_lines_get_pis_answers() {
    for input in [
        "",
        "{",
        "not json",
        "{\"type\":\"abort\"",
        "1e999999",
        "\u{feff}{}",
    ] {
        let line = parse_err_line(input);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["type"], "response", "{input}");
        assert_eq!(v["command"], "parse", "{input}");
        assert_eq!(v["success"], false);
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse command: "),
            "{line}"
        );
        assert!(v.get("id").is_none());
    }
    assert_eq!(
        parse_err_line("null"),
        r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: Cannot read properties of null (reading 'type')"}"#
    );
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert!(matches!(
        decode_command(&deep),
        Err(DecodeError::Parse { .. })
    ));
    let deep_obj = format!("{{\"type\":\"abort\",\"x\":{}}}", deep);
    assert!(matches!(
        decode_command(&deep_obj),
        Err(DecodeError::Parse { .. })
    ));
}

#[test]
fn unknown_types_are_answered_without_id() {
    let cases = [
        (r#"{"type":"nope","id":"r1"}"#, "nope", Some(json!("r1"))),
        (r#"{"type":"nope"}"#, "nope", None),
        (r#"{"type":5}"#, "5", None),
        (r#"{"id":"x"}"#, "undefined", Some(json!("x"))),
        ("[]", "undefined", None),
        ("42", "undefined", None),
        (
            r#"{"type":"navigate_tree","id":1}"#,
            "navigate_tree",
            Some(json!(1)),
        ),
        (
            r#"{"type":"extension_ui_response","id":"u"}"#,
            "extension_ui_response",
            Some(json!("u")),
        ),
    ];
    for (input, ty, id) in cases {
        let err = decode_command(input).unwrap_err();
        assert_eq!(
            err,
            DecodeError::Unknown {
                command_type: ty.into(),
                id
            },
            "{input}"
        );
        assert_eq!(
            err.response_line(),
            format!(
                r#"{{"type":"response","command":"{ty}","success":false,"error":"Unknown command: {ty}"}}"#
            )
        );
    }
}

#[test]
fn bad_fields_are_answered_with_id_and_command() {
    let err = decode_command(r#"{"id":"r9","type":"set_model","provider":"p"}"#).unwrap_err();
    assert_eq!(
        err.response_line(),
        r#"{"id":"r9","type":"response","command":"set_model","success":false,"error":"missing field `modelId`"}"#
    );
    for input in [
        r#"{"type":"prompt"}"#,
        r#"{"type":"prompt","message":5}"#,
        r#"{"type":"set_auto_retry","enabled":"yes"}"#,
        r#"{"type":"set_steering_mode","mode":"some"}"#,
        r#"{"type":"prompt","message":"m","streamingBehavior":"later"}"#,
        r#"{"type":"set_model","provider":"p","modelId":123456789012345678901234567890}"#,
    ] {
        let err = decode_command(input).unwrap_err();
        let DecodeError::Invalid { id, command, .. } = &err else {
            panic!("{input}: {err:?}")
        };
        assert_eq!(id, &None);
        assert_eq!(command, input.split('"').nth(3).unwrap());
        assert!(err.response_line().contains(r#""success":false"#));
    }
    // Huge numbers that still parse are fine where a number is not expected to be exact.
    let req = decode_command(r#"{"id":123456789012345678901234567890,"type":"abort"}"#).unwrap();
    assert!(req.id.unwrap().is_f64());
}

#[test]
fn worker_input_separates_ui_responses() {
    let input = decode_input(r#"{"type":"extension_ui_response","id":"u1","value":"b"}"#).unwrap();
    assert_eq!(
        input,
        WorkerInput::UiResponse(ExtensionUiResponse::value("u1", "b"))
    );
    let input = decode_input(r#"{"type":"abort","id":"a"}"#).unwrap();
    assert!(matches!(
        input,
        WorkerInput::Command(RpcRequest {
            command: RpcCommand::Abort,
            ..
        })
    ));
    let err = decode_input(r#"{"type":"extension_ui_response","confirmed":true}"#).unwrap_err();
    assert!(
        matches!(err, DecodeError::Invalid { ref command, .. } if command == "extension_ui_response")
    );
    assert!(matches!(decode_input("{"), Err(DecodeError::Parse { .. })));
}

#[test]
fn worker_lines_are_sorted_into_responses_and_events() {
    assert_eq!(
        decode_worker_line(r#"{"id":"req_1","type":"response","command":"get_state","success":true,"data":{"a":1}}"#).unwrap(),
        WorkerLine::Response {
            id: Some(json!("req_1")),
            command: "get_state".into(),
            success: true,
            data: Some(json!({"a":1})),
            error: None
        }
    );
    assert_eq!(
        decode_worker_line(
            r#"{"type":"response","success":false,"error":"Unknown command: undefined"}"#
        )
        .unwrap(),
        WorkerLine::Response {
            id: None,
            command: String::new(),
            success: false,
            data: None,
            error: Some("Unknown command: undefined".into())
        }
    );
    let ev =
        json!({"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"x"}});
    assert_eq!(
        decode_worker_line(&ev.to_string()).unwrap(),
        WorkerLine::Event(ev)
    );
    let bad = [
        (
            "",
            WorkerLineError::NotJson {
                message: String::new(),
            },
        ),
        (
            "garbage",
            WorkerLineError::NotJson {
                message: String::new(),
            },
        ),
        ("[1]", WorkerLineError::NotObject),
        ("\"s\"", WorkerLineError::NotObject),
        ("null", WorkerLineError::NotObject),
        ("{}", WorkerLineError::NoType),
        (r#"{"type":5}"#, WorkerLineError::NoType),
        (
            r#"{"type":"response","command":"x"}"#,
            WorkerLineError::BadResponse {
                message: String::new(),
            },
        ),
        (
            r#"{"type":"response","command":1,"success":true}"#,
            WorkerLineError::BadResponse {
                message: String::new(),
            },
        ),
    ];
    for (line, want) in bad {
        let got = decode_worker_line(line).unwrap_err();
        assert_eq!(
            std::mem::discriminant(&got),
            std::mem::discriminant(&want),
            "{line}: {got:?}"
        );
    }
}

proptest! {
    #[test]
    fn decoders_never_panic_on_text(s in ".{0,200}") {
        let _ = decode_command(&s).map_err(|e| e.response_line());
        let _ = decode_input(&s);
        let _ = decode_worker_line(&s);
    }

    #[test]
    fn decoders_never_panic_on_json_shapes(
        ty in prop_oneof![Just(json!("prompt")), Just(json!("set_model")), Just(json!("response")), Just(json!(5)), Just(json!(null)), ".{0,12}".prop_map(Value::from)],
        id in prop_oneof![Just(None), Just(Some(json!("r"))), Just(Some(json!([1, {}])))],
        extra in proptest::collection::btree_map("[a-zA-Z]{1,12}", prop_oneof![Just(json!(1)), Just(json!("s")), Just(json!(true)), Just(json!([])), Just(json!(null))], 0..6),
    ) {
        let mut obj: Map<String, Value> = extra.into_iter().collect();
        obj.insert("type".into(), ty);
        if let Some(id) = id { obj.insert("id".into(), id); }
        let line = Value::Object(obj).to_string();
        match decode_command(&line) {
            Ok(req) => {
                // Whatever decodes re-encodes to something that decodes the same.
                let again = decode_command(&encode_request(req.id.as_ref(), &req.command)).unwrap();
                prop_assert_eq!(again, req);
            }
            Err(e) => {
                let answer: Value = serde_json::from_str(&e.response_line()).unwrap();
                prop_assert_eq!(&answer["success"], &json!(false));
            }
        }
        let _ = decode_worker_line(&line);
    }
}
