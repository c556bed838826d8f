//! The chat commands `chat.send` answers without the model (`/status`, `/model`, `/think`,
//! `/stop`, `/help`, `/usage`, `/queue`, `/verbose`, `/compact`), over a real WebSocket: what OpenClaw's TUI sends as text. The answer
//! is the run's `chat` final, `chat.send` settles (`ok`), the exchange shows in the history
//! where it was typed and reaches subscribers, and the model never sees it.

use super::*;
use crate::support::client::content_text;

fn text_of(message: &Value) -> String {
    content_text(&message["content"])
}

const KEY: &str = "agent:main:main";

/// Sends `message` as run `run_id`, expects a settled answer and returns its text (the
/// run's `chat` final).
async fn command(client: &mut Client, message: &str, run_id: &str) -> String {
    let res = client.chat_send(KEY, message, run_id).await;
    assert_eq!(
        (&res["payload"]["status"], &res["payload"]["runId"]),
        (&json!("ok"), &json!(run_id)),
        "{res}"
    );
    let frames = client
        .until(|f| f["event"] == "chat" && f["payload"]["runId"] == run_id)
        .await;
    let event = &frames.last().unwrap()["payload"];
    assert_eq!(event["state"], "final", "{event}");
    event["message"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn status_model_and_think_are_answered_by_the_gateway_and_kept_in_the_history() {
    let server = start(hi_scenario()).await;
    let (mut watcher, mut client) = clients(&server.url).await;
    watcher.ok("sessions.subscribe", json!({})).await;
    client.chat_send(KEY, "ping", "r-1").await;
    client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let session_id = client.chat_history(KEY).await["payload"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    let status = command(&mut client, "/status", "s-1").await;
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines.len(), 6, "{status}");
    assert_eq!(lines[0], "session:  agent:main:main");
    assert_eq!(lines[1], format!("id:       {session_id}"));
    assert_eq!(lines[2..4], ["model:    mock/m", "thinking: default"]);
    assert!(lines[4].starts_with("tokens:   "), "{status}");
    assert_eq!(lines[5], "runs:     idle");

    let answers = [
        ("/think high", "thinking: high"),
        (
            "/think loud",
            "Thinking level \"loud\" is not one of off, minimal, low, medium, high, xhigh (or default).",
        ),
        ("/model m", "model: mock/m"),
        (
            "/model nope/x",
            "Unknown model \"nope/x\": name one as provider/model (configured: mock/m, mock/gone).",
        ),
        ("/model default", "model: mock/m"),
    ];
    for (i, (typed, answer)) in answers.into_iter().enumerate() {
        let run_id = format!("s-{}", i + 2);
        assert_eq!(
            command(&mut client, typed, &run_id).await,
            answer,
            "{typed}"
        );
    }
    let list = client.ok("sessions.list", json!({})).await;
    assert_eq!(list["sessions"][0]["thinkingLevel"], "high");
    assert_eq!(list["sessions"][0]["model"], json!(null));

    // The history: the turn, then each exchange where it was typed; the typed message
    // carries its run's idempotency key, the answer the run, neither a position.
    let history = client.chat_history(KEY).await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2 + 2 * 6, "{history}");
    assert_eq!(history["payload"]["sessionId"], session_id.as_str());
    let (typed, answer) = (&messages[2], &messages[3]);
    assert_eq!(typed["role"], "user");
    assert_eq!(text_of(typed), "/status");
    assert_eq!(typed["idempotencyKey"], "s-1:user");
    assert_eq!(typed["__openclaw"]["idempotencyKey"], "s-1:user");
    assert_eq!(typed["__openclaw"].get("seq"), None);
    assert_eq!(answer["role"], "assistant");
    assert_eq!(text_of(answer), status);
    assert_eq!(answer["__openclaw"]["runId"], "s-1");
    let id = typed["__openclaw"]["id"].as_str().unwrap();
    let entry = id.strip_suffix(":user").unwrap();
    assert_eq!(answer["__openclaw"]["id"], format!("{entry}:reply"));
    assert_eq!(text_of(&messages[13]), "model: mock/m");

    // Subscribers heard both messages of each exchange, with the same identities.
    let frames = watcher
        .until(|f| {
            f["event"] == "session.message" && f["payload"]["messageId"] == format!("{entry}:reply")
        })
        .await;
    let heard: Vec<&Value> = frames
        .iter()
        .filter(|f| f["event"] == "session.message" && f["payload"]["runId"] == "s-1")
        .collect();
    assert_eq!(heard.len(), 2);
    assert_eq!(heard[0]["payload"]["message"]["__openclaw"]["id"], id);
    assert_eq!(heard[0]["payload"]["sessionKey"], KEY);

    // The model saw none of it: the next turn's request holds the turn before and its own
    // message only.
    client.chat_send(KEY, "ping", "r-2").await;
    client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "r-2"
                && f["payload"]["state"] == "final"
        })
        .await;
    let requests = server.llm.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body.to_string();
    assert!(
        !sent.contains("/status") && !sent.contains("thinking: high"),
        "{sent}"
    );
    assert_eq!(
        client.chat_history(KEY).await["payload"]["messages"]
            .as_array()
            .unwrap()
            .len(),
        2 + 2 * 6 + 2
    );
}

#[tokio::test]
async fn stop_aborts_the_running_reply_and_help_lists_the_commands() {
    let server = start(hi_scenario()).await;
    let (mut watcher, mut client) = busy(&server.url, KEY, "slow-1").await;
    assert_eq!(
        command(&mut client, "/stop", "stop-1").await,
        "Stopped the running reply."
    );
    let frames = watcher
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "slow-1"
                && f["payload"]["state"] != "delta"
        })
        .await;
    assert_eq!(frames.last().unwrap()["payload"]["state"], "aborted");
    assert_eq!(
        command(&mut client, "/abort", "stop-2").await,
        "Nothing is running on this session."
    );
    let help = command(&mut client, "/help", "help-1").await;
    let listed = client.ok("commands.list", json!({})).await;
    let names: Vec<&str> = listed["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "new",
            "reset",
            "compact",
            "status",
            "usage",
            "model",
            "think",
            "verbose",
            "activation",
            "queue",
            "stop",
            "subagents",
            "approve",
            "help"
        ]
    );
    for name in names {
        assert!(
            help.lines().any(|l| l.starts_with(&format!("/{name}"))),
            "/{name} in {help}"
        );
    }
    // A command word followed by more text is a message for the model.
    client.chat_send(KEY, "/status please", "m-1").await;
    client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "m-1"
                && f["payload"]["state"] == "final"
        })
        .await;
    assert_eq!(server.llm.requests().len(), 2);
}

#[tokio::test]
async fn usage_queue_and_verbose_are_answered_and_kept_on_the_session() {
    let server = start(hi_scenario()).await;
    let (_watcher, mut client) = clients(&server.url).await;
    assert_eq!(
        command(&mut client, "/usage", "u-0").await,
        "replies:    0\ntokens in:  0\ntokens out: 0\ncache:      0 read, 0 written\n\
         cost:       $0.0000\ncontext:    unknown"
    );
    client.chat_send(KEY, "ping", "r-1").await;
    client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "r-1"
                && f["payload"]["state"] == "final"
        })
        .await;
    let usage = command(&mut client, "/usage", "u-1").await;
    // The counts are the reply's, as the session's index entry has them (the prompt's size
    // is not this test's business); the mock reply costs nothing.
    let row = &client.ok("sessions.list", json!({})).await["sessions"][0];
    let (input, output) = (&row["inputTokens"], &row["outputTokens"]);
    assert_eq!(
        usage,
        format!(
            "replies:    1\ntokens in:  {input}\ntokens out: {output}\n\
             cache:      0 read, 0 written\ncost:       $0.0000\ncontext:    {}",
            row["totalTokens"]
        )
    );
    assert_eq!(output, 1);

    let answers = [
        ("/queue", "queue: steer (default)"),
        ("/queue collect", "queue: collect"),
        (
            "/queue sometimes",
            "Queue mode \"sometimes\" is not one of steer, followup, collect, interrupt (or default).",
        ),
        ("/queue follow-up", "queue: followup"),
        ("/verbose", "verbose: off"),
        ("/verbose on", "verbose: on"),
        (
            "/verbose loud",
            "Verbose level \"loud\" is not one of on, off (or default).",
        ),
    ];
    for (i, (typed, answer)) in answers.into_iter().enumerate() {
        let run_id = format!("q-{i}");
        assert_eq!(
            command(&mut client, typed, &run_id).await,
            answer,
            "{typed}"
        );
    }
    let list = client.ok("sessions.list", json!({})).await;
    assert_eq!(list["sessions"][0]["verboseLevel"], "on");
    assert_eq!(list["sessions"][0]["queueMode"], "followup");
    assert_eq!(
        command(&mut client, "/queue default", "q-9").await,
        "queue: steer (default)"
    );
    assert_eq!(
        command(&mut client, "/verbose default", "q-10").await,
        "verbose: off"
    );
    let list = client.ok("sessions.list", json!({})).await;
    assert_eq!(list["sessions"][0].get("queueMode"), None, "{list}");
    assert_eq!(list["sessions"][0].get("verboseLevel"), None, "{list}");
    // The model saw none of it.
    assert_eq!(server.llm.requests().len(), 1);
}

#[tokio::test]
async fn compact_without_enough_history_says_so_without_asking_the_model() {
    let server = start(hi_scenario()).await;
    let (_watcher, mut client) = clients(&server.url).await;
    assert_eq!(
        command(&mut client, "/compact", "c-0").await,
        "⚙️ Compaction unavailable (missing session id)."
    );
    client.chat_send(KEY, "ping", "r-1").await;
    client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "r-1"
                && f["payload"]["state"] == "final"
        })
        .await;
    let total = client.ok("sessions.list", json!({})).await["sessions"][0]["totalTokens"]
        .as_u64()
        .unwrap();
    assert!(total < 1000, "{total}");
    // One short exchange is all within the recent tokens a compaction keeps as they are.
    assert_eq!(
        command(&mut client, "/compact keep the plan", "c-1").await,
        format!(
            "⚙️ Compaction skipped: nothing compactable in this session yet • Context \
             {total}/128k ({}%)",
            (total * 100 + 64_000) / 128_000
        )
    );
    assert_eq!(server.llm.requests().len(), 1, "no summary was asked for");
}

#[tokio::test]
async fn compact_stops_the_running_reply_first_as_openclaw_does() {
    let server = start(hi_scenario()).await;
    let busy_key = "agent:main:busy";
    let (mut watcher, mut busy_client) = busy(&server.url, busy_key, "slow-1").await;
    let res = busy_client.chat_send(busy_key, "/compact", "c-2").await;
    assert_eq!(res["payload"]["status"], "ok", "{res}");
    let frames = busy_client
        .until(|f| f["event"] == "chat" && f["payload"]["runId"] == "c-2")
        .await;
    let event = &frames.last().unwrap()["payload"];
    // The context: "slow" and as much of the stopped reply as had streamed, chars / 4.
    let text = event["message"]["content"][0]["text"].as_str().unwrap();
    let context = text
        .strip_prefix("⚙️ Compaction skipped: nothing compactable in this session yet • Context ")
        .and_then(|rest| rest.strip_suffix("/128k (0%)"))
        .and_then(|n| n.parse::<u64>().ok());
    assert!(context.is_some_and(|n| (1..=6).contains(&n)), "{text}");
    // The reply that was streaming ended aborted before the compaction looked.
    let frames = watcher
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "slow-1"
                && f["payload"]["state"] != "delta"
        })
        .await;
    assert_eq!(frames.last().unwrap()["payload"]["state"], "aborted");
    assert_eq!(server.llm.requests().len(), 1, "no summary was asked for");
}

#[tokio::test]
async fn a_sessions_queue_mode_takes_a_busy_sessions_message_unless_the_request_names_one() {
    let server = start(hi_scenario()).await;
    let (_watcher, mut client) = busy(&server.url, KEY, "slow-1").await;
    assert_eq!(
        command(&mut client, "/queue followup", "q-1").await,
        "queue: followup"
    );
    let res = client.chat_send(KEY, "ping", "m-1").await;
    assert_eq!(
        res["payload"],
        json!({"runId": "m-1", "status": "queued", "queueMode": "followup"})
    );
    let res = client.chat_send_in("steer", KEY, "ping", "m-2").await;
    assert_eq!(res["payload"]["queueMode"], "steer", "{res}");
}
