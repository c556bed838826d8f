//! The `message` tool against a recording port: the gate (`allowTargets` and the chats that
//! talked to the agent), the checks before anything is sent, the default target, and what
//! the model reads back. The gateway's side is tested end to end in the CLI's
//! `message_tool` tests.

use std::sync::{Arc, Mutex};

use pincer_agent::{AgentTool, ToolContext, ToolError};
use pincer_team::message::{
    AllowTargets, ChatTarget, DeleteRequest, EditRequest, MessageError, MessagePort, ReactRequest,
    SendReceipt, SendRequest, TargetRule, bare_chat_id, message_tool,
};
use pincer_team::{PortFuture, PortSlot};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// What the fake port was asked to do.
#[derive(Debug, Clone, PartialEq)]
enum Done {
    Send(SendRequest),
    React(ReactRequest),
    Edit(EditRequest),
    Delete(DeleteRequest),
}

/// A port with one running channel (`telegram`), chats that talked to agent `main`, and a
/// record of every action.
#[derive(Default)]
struct FakePort {
    talked: Vec<(String, String, String)>,
    current: Option<(String, ChatTarget)>,
    done: Mutex<Vec<Done>>,
    channels: Vec<String>,
}

impl FakePort {
    fn new() -> Self {
        Self {
            talked: vec![("main".into(), "telegram".into(), "111".into())],
            channels: vec!["telegram".into()],
            ..Self::default()
        }
    }

    fn done(&self) -> Vec<Done> {
        self.done.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, done: Done) {
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(done);
    }
}

impl MessagePort for FakePort {
    fn channels(&self) -> Vec<String> {
        self.channels.clone()
    }

    fn current_chat(&self, session_key: &str) -> Option<ChatTarget> {
        let (key, chat) = self.current.as_ref()?;
        (key == session_key).then(|| chat.clone())
    }

    fn has_talked(
        &self,
        agent_id: &str,
        channel: &str,
        to: &str,
    ) -> PortFuture<'_, Result<bool, MessageError>> {
        let found = self
            .talked
            .iter()
            .any(|(a, c, t)| a == agent_id && c == channel && t == to);
        Box::pin(async move { Ok(found) })
    }

    fn send(&self, request: SendRequest) -> PortFuture<'_, Result<SendReceipt, MessageError>> {
        let channel = request.target.channel.clone();
        self.record(Done::Send(request));
        Box::pin(async move {
            Ok(SendReceipt {
                channel,
                account_id: None,
                message_ids: vec!["7".into(), "8".into()],
            })
        })
    }

    fn react(&self, request: ReactRequest) -> PortFuture<'_, Result<(), MessageError>> {
        self.record(Done::React(request));
        Box::pin(async { Ok(()) })
    }

    fn edit(&self, request: EditRequest) -> PortFuture<'_, Result<(), MessageError>> {
        self.record(Done::Edit(request));
        Box::pin(async { Ok(()) })
    }

    fn delete(&self, request: DeleteRequest) -> PortFuture<'_, Result<(), MessageError>> {
        let channel = request.target.channel.clone();
        self.record(Done::Delete(request.clone()));
        Box::pin(async move {
            Err(MessageError::Unsupported {
                channel,
                action: "delete".into(),
                supported: "send".into(),
            })
        })
    }
}

fn tool_with(port: &Arc<FakePort>, allow: &[&str]) -> Arc<dyn AgentTool> {
    let slot: PortSlot<dyn MessagePort> = PortSlot::new();
    let port: Arc<dyn MessagePort> = Arc::clone(port) as Arc<dyn MessagePort>;
    assert!(slot.bind(port));
    let allow = AllowTargets::parse(allow).unwrap_or_else(|e| panic!("{e}"));
    message_tool("main", allow, slot)
}

fn ctx(session: Option<&str>) -> ToolContext {
    ToolContext::new("call-1", CancellationToken::new()).with_session_key(session.map(Arc::from))
}

async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<(String, Value), ToolError> {
    let out = tool.execute(args, ctx(Some("agent:main:main"))).await?;
    Ok((out.text_content(), out.details.unwrap_or(Value::Null)))
}

fn target(channel: &str, to: &str) -> ChatTarget {
    ChatTarget {
        channel: channel.into(),
        account_id: None,
        to: to.into(),
        thread_id: None,
    }
}

#[test]
fn allow_targets_take_three_forms() {
    let parsed =
        AllowTargets::parse(&["*", "Telegram:*", "slack:user:U42", " discord:123 "]).unwrap();
    assert_eq!(
        parsed.rules(),
        [
            TargetRule::Any,
            TargetRule::Channel("telegram".into()),
            TargetRule::Chat {
                channel: "slack".into(),
                chat_id: "U42".into()
            },
            TargetRule::Chat {
                channel: "discord".into(),
                chat_id: "123".into()
            },
        ]
    );
    let shown: Vec<String> = parsed.rules().iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["*", "telegram:*", "slack:U42", "discord:123"]);
}

#[test]
fn malformed_allow_targets_are_refused_by_name() {
    for bad in [
        "",
        "telegram",
        ":123",
        "telegram:",
        "tele gram:1",
        "slack:user:",
        "**",
    ] {
        let error = AllowTargets::parse(&[bad]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "tools.message.allowTargets: {bad:?} is not a target: use \
                 \"<channel>:<chatId>\", \"<channel>:*\" or \"*\""
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn a_rule_prints_back_to_itself() {
    for entry in [
        "telegram:user:user:5",
        "slack:user: U1 ",
        "Discord:channel:*",
        "feishu:oc_1:2",
        "x:ünï",
    ] {
        let rule: TargetRule = entry.parse().unwrap();
        assert_eq!(
            rule.to_string().parse::<TargetRule>().unwrap(),
            rule,
            "{entry}"
        );
    }
    assert_eq!(
        "telegram:user:user:5"
            .parse::<TargetRule>()
            .unwrap()
            .to_string(),
        "telegram:5"
    );
    assert_eq!(
        "Discord:channel:*".parse::<TargetRule>().unwrap(),
        TargetRule::Channel("discord".into())
    );
}

#[test]
fn the_gate_names_chats_by_channel_and_bare_id() {
    let allow = AllowTargets::parse(&["telegram:-100200", "slack:*"]).unwrap();
    assert!(allow.names("telegram", "-100200"));
    assert!(allow.names("TELEGRAM", "group:-100200"));
    assert!(!allow.names("telegram", "-1002000"));
    assert!(!allow.names("discord", "-100200"));
    assert!(allow.names("slack", "C1"));
    assert!(!AllowTargets::talked_only().names("telegram", "1"));
    assert!(AllowTargets::parse(&["*"]).unwrap().names("feishu", "oc_1"));
    assert_eq!(bare_chat_id(" user:U1 "), "U1");
    assert_eq!(bare_chat_id("Channel:C9"), "C9");
    assert_eq!(bare_chat_id("12:34"), "12:34");
}

#[tokio::test]
async fn send_reaches_a_chat_that_talked_to_the_agent() {
    let port = Arc::new(FakePort::new());
    let tool = tool_with(&port, &[]);
    let (text, details) = call(
        &tool,
        json!({"action": "send", "channel": "telegram", "to": "111", "text": "**hi**",
               "media": "out/chart.png", "replyTo": "5", "threadId": "9"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Sent to telegram:111 (messageId 8).");
    assert_eq!(
        details,
        json!({"ok": true, "action": "send", "channel": "telegram", "to": "111",
               "accountId": null, "messageIds": ["7", "8"], "messageId": "8"})
    );
    assert_eq!(
        port.done(),
        [Done::Send(SendRequest {
            target: ChatTarget {
                thread_id: Some("9".into()),
                ..target("telegram", "111")
            },
            agent_id: "main".into(),
            text: "**hi**".into(),
            media: vec!["out/chart.png".into()],
            reply_to: Some("5".into()),
        })]
    );
}

#[tokio::test]
async fn openclaw_names_target_and_message_are_accepted() {
    let port = Arc::new(FakePort::new());
    let tool = tool_with(&port, &[]);
    let (text, _) = call(
        &tool,
        json!({"action": "send", "target": "111", "message": "hello"}),
    )
    .await
    .unwrap();
    // The only running channel is the default.
    assert_eq!(text, "Sent to telegram:111 (messageId 8).");
}

#[tokio::test]
async fn a_chat_that_never_talked_is_refused_and_nothing_is_sent() {
    let port = Arc::new(FakePort::new());
    let tool = tool_with(&port, &["telegram:333"]);
    let error = call(
        &tool,
        json!({"action": "send", "channel": "telegram", "to": "222", "text": "hi"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "not allowed to message telegram:222: this agent may message only chats that have \
         talked to it, or targets listed in tools.message.allowTargets (e.g. \
         \"telegram:222\", \"telegram:*\" or \"*\")"
    );
    // The same for reactions: the gate is per chat, whatever the action.
    let error = call(
        &tool,
        json!({"action": "react", "to": "222", "messageId": "1", "emoji": "👍"}),
    )
    .await
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("not allowed to message telegram:222")
    );
    assert_eq!(port.done(), []);
    // Another agent's chat is not this one's either.
    let mut other = FakePort::new();
    other.talked = vec![("helper".into(), "telegram".into(), "222".into())];
    let other = Arc::new(other);
    let error = call(
        &tool_with(&other, &[]),
        json!({"action": "send", "to": "222", "text": "hi"}),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().starts_with("not allowed"), "{error}");
    assert_eq!(other.done(), []);
}

#[tokio::test]
async fn allow_targets_open_chats_that_never_talked() {
    for allow in ["telegram:222", "telegram:*", "*"] {
        let port = Arc::new(FakePort::new());
        let tool = tool_with(&port, &[allow]);
        call(
            &tool,
            json!({"action": "send", "channel": "telegram", "to": "222", "text": "hi"}),
        )
        .await
        .unwrap();
        assert_eq!(port.done().len(), 1, "{allow}");
    }
}

#[tokio::test]
async fn the_default_target_is_the_conversations_chat() {
    let mut port = FakePort::new();
    port.current = Some((
        "agent:main:main".into(),
        ChatTarget {
            thread_id: Some("4".into()),
            ..target("telegram", "111")
        },
    ));
    port.channels = vec!["discord".into(), "telegram".into()];
    let port = Arc::new(port);
    let tool = tool_with(&port, &[]);
    let (text, _) = call(&tool, json!({"action": "send", "text": "there"}))
        .await
        .unwrap();
    assert_eq!(text, "Sent to telegram:111 (messageId 8).");
    let Done::Send(sent) = &port.done()[0] else {
        panic!("not a send")
    };
    assert_eq!(sent.target.thread_id.as_deref(), Some("4"));
    // Outside a chat, with several channels, the call must say where.
    let error = tool
        .execute(
            json!({"action": "send", "to": "111", "text": "x"}),
            ctx(Some("agent:main:other")),
        )
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "give channel: one of discord, telegram");
    let error = tool
        .execute(json!({"action": "send", "text": "x"}), ctx(None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "give to: the chat id to write to (this conversation is not in a chat channel, so \
         there is no default)"
    );
}

#[tokio::test]
async fn bad_calls_are_refused_before_the_port() {
    let port = Arc::new(FakePort::new());
    let tool = tool_with(&port, &["*"]);
    let cases = [
        (
            json!({"action": "send", "to": "111", "text": "  "}),
            "action \"send\" needs text (the message) or media (files to attach)",
        ),
        (
            json!({"action": "react", "to": "111", "messageId": "3"}),
            "action \"react\" needs emoji (e.g. \"👍\"), or remove: true",
        ),
        (
            json!({"action": "edit", "to": "111", "text": "new"}),
            "action \"edit\" needs messageId: the id of the message (send returns it)",
        ),
        (
            json!({"action": "edit", "to": "111", "messageId": "3"}),
            "action \"edit\" needs text: the message's new text",
        ),
        (
            json!({"action": "delete", "to": "111"}),
            "action \"delete\" needs messageId: the id of the message (send returns it)",
        ),
        (
            json!({"action": "send", "to": "111", "text": "x".repeat(20_001)}),
            "text is longer than 20000 characters; send less at a time",
        ),
        (
            json!({"action": "send", "to": "111", "media": vec!["a"; 11]}),
            "media names 11 files; at most 10 go in one send",
        ),
        (
            json!({"action": "send", "to": "1".repeat(300), "text": "x"}),
            "to is longer than 256 characters",
        ),
    ];
    for (args, expected) in cases {
        let error = call(&tool, args.clone()).await.unwrap_err();
        assert_eq!(error.to_string(), expected, "{args}");
    }
    for (args, expected) in [
        (
            json!({"action": "poll", "to": "111"}),
            "invalid arguments for message: action: unknown variant `poll`, expected one of \
             `send`, `react`, `edit`, `delete`",
        ),
        (
            json!({"action": "send", "to": "111", "text": "x", "silent": true}),
            "invalid arguments for message: silent: unknown field `silent`",
        ),
    ] {
        let error = call(&tool, args.clone()).await.unwrap_err();
        assert!(error.to_string().starts_with(expected), "{args}: {error}");
    }
    assert_eq!(port.done(), []);
}

#[tokio::test]
async fn react_edit_and_an_unsupported_delete() {
    let port = Arc::new(FakePort::new());
    let tool = tool_with(&port, &[]);
    let (text, _) = call(
        &tool,
        json!({"action": "react", "to": "111", "messageId": "8", "emoji": "👍"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Reaction updated in telegram:111.");
    let (text, _) = call(
        &tool,
        json!({"action": "react", "to": "111", "message_id": "8", "remove": true}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Reaction updated in telegram:111.");
    let (text, _) = call(
        &tool,
        json!({"action": "edit", "to": "111", "messageId": "8", "text": "fixed"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Edited the message in telegram:111.");
    let error = call(
        &tool,
        json!({"action": "delete", "to": "111", "messageId": "8"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "telegram does not support delete (supported there: send)"
    );
    assert_eq!(
        port.done(),
        [
            Done::React(ReactRequest {
                target: target("telegram", "111"),
                message_id: "8".into(),
                emoji: "👍".into(),
                remove: false,
            }),
            Done::React(ReactRequest {
                target: target("telegram", "111"),
                message_id: "8".into(),
                emoji: String::new(),
                remove: true,
            }),
            Done::Edit(EditRequest {
                target: target("telegram", "111"),
                message_id: "8".into(),
                text: "fixed".into(),
            }),
            // Asked, and refused by the platform.
            Done::Delete(DeleteRequest {
                target: target("telegram", "111"),
                message_id: "8".into(),
            }),
        ]
    );
}

#[tokio::test]
async fn without_a_gateway_the_tool_says_so() {
    let tool = message_tool("main", AllowTargets::talked_only(), PortSlot::new());
    let error = tool
        .execute(json!({"action": "send", "to": "1", "text": "x"}), ctx(None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the message tool works only inside a running gateway (`pincer gateway`), where the \
         channels are connected"
    );
}

#[test]
fn the_schema_names_the_parameters_the_model_sees() {
    let tool = message_tool("main", AllowTargets::talked_only(), PortSlot::new());
    let schema = tool.parameters();
    let mut names: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "accountId",
            "action",
            "channel",
            "emoji",
            "media",
            "messageId",
            "remove",
            "replyTo",
            "text",
            "threadId",
            "to"
        ]
    );
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(tool.name(), "message");
}
