//! Exec approvals (`tools.exec.ask`) end to end through a real gateway and the mock LLM: a
//! command held until an operator with `operator.approvals` answers over WebSocket
//! (allow-once runs it, deny and the timeout refuse it, the agent told each outcome in its
//! tool result), the methods' errors, `allow-always` recorded in `exec-approvals.json` and
//! honoured for exactly that command line, the request in the owner's Telegram chat
//! answered there with `/approve`, and `pincer ask` (no gateway) denying with a reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;

use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{Foreground, WsClient, gateway_home_in};
use crate::common::{Home, mock};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const TOKEN: &str = "approvals-token";
const KEY: &str = "agent:main:main";
const APPROVER: &[&str] = &["operator.read", "operator.write", "operator.approvals"];

/// "<user>" calls `exec` with `command`; its result is answered "done".
fn exec_turns(turns: &[(&str, &str)]) -> Scenario {
    let mut scenario = Scenario::new();
    for (user, command) in turns {
        scenario = scenario.rule(
            Rule::when(Match::last_user(*user))
                .reply(Reply::tool_call("exec", json!({ "command": command }))),
        );
    }
    scenario.rule(Rule::when(Match::tool_result("exec")).reply(Reply::text("done")))
}

/// The last tool result the model was sent.
fn last_tool_result(llm: &MockLlm) -> String {
    let requests = llm.requests();
    let last = requests.last().expect("a request");
    let message = last.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(message["role"], "tool", "{message}");
    match &message["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A gateway whose `tools.exec` is `exec`, an approver and a plain (read/write) client.
async fn start(llm: &MockLlm, exec: &str) -> (Home, Foreground, WsClient, WsClient) {
    let (home, port) = gateway_home_in(
        Home::new(),
        llm,
        TOKEN,
        "heartbeat: { every: \"0m\" },",
        &format!("tools: {{ exec: {{ {exec} }} }},"),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let approver = WsClient::connect_as(port, TOKEN, &[], APPROVER).await;
    let plain = WsClient::connect(port, TOKEN).await;
    (home, gateway, approver, plain)
}

/// Reads `client`'s frames until run `run_id` ends; fails on any approval event (a client
/// without `operator.approvals` must not see the command lines).
async fn final_without_approvals(client: &mut WsClient, run_id: &str) -> Value {
    loop {
        let frame = client.frame().await.expect("a frame");
        let event = frame["event"].as_str().unwrap_or_default();
        assert!(!event.starts_with("exec.approval"), "{frame}");
        if event == "chat" && frame["payload"]["runId"] == run_id {
            let state = &frame["payload"]["state"];
            if state != "delta" {
                return frame;
            }
        }
    }
}

fn error_message(response: &Value) -> String {
    assert_eq!(response["ok"], false, "{response}");
    response["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_holds_each_command_until_an_operator_answers() {
    let llm = mock(exec_turns(&[
        ("run it", "echo approved-output"),
        ("deny it", "echo never-ran > denied.txt"),
    ]))
    .await;
    let (home, _gateway, mut approver, mut plain) =
        start(&llm, "ask: \"always\", approvalTimeoutMs: 60000").await;

    plain.start_chat(KEY, "run it", "r1").await;
    let requested = approver.event("exec.approval.requested").await["payload"].clone();
    let id = requested["id"].as_str().unwrap().to_owned();
    let request = &requested["request"];
    assert_eq!(request["command"], "echo approved-output");
    assert_eq!(request["agentId"], "main");
    assert_eq!(request["sessionKey"], KEY);
    assert_eq!(request["ask"], "always");
    assert_eq!(request["host"], "gateway");
    assert_eq!(request["allowedDecisions"], json!(["allow-once", "deny"]));
    // The agent's workspace, where the command runs.
    let workspace = std::path::PathBuf::from(request["cwd"].as_str().unwrap());
    assert!(
        workspace.is_absolute() && workspace.is_dir(),
        "{workspace:?}"
    );
    assert!(workspace.starts_with(home.dir.path()), "{workspace:?}");
    let created = requested["createdAtMs"].as_i64().unwrap();
    assert_eq!(requested["expiresAtMs"].as_i64().unwrap() - created, 60_000);
    // Held: the model has not been sent a result.
    assert_eq!(llm.requests().len(), 1);

    let listed = approver.call("exec.approval.list", json!({})).await;
    assert_eq!(listed["payload"], json!([requested]), "{listed}");
    let got = approver
        .call("exec.approval.get", json!({ "id": id }))
        .await;
    assert_eq!(got["payload"]["commandText"], "echo approved-output");
    assert_eq!(
        got["payload"]["allowedDecisions"],
        json!(["allow-once", "deny"])
    );
    let replay = approver
        .call(
            "sessions.messages.subscribe",
            json!({ "key": KEY, "includeApprovals": true }),
        )
        .await;
    assert_eq!(
        replay["payload"]["approvalReplay"]["approvals"],
        json!([requested])
    );
    let elsewhere = approver
        .call(
            "sessions.messages.subscribe",
            json!({ "key": "agent:main:other", "includeApprovals": true }),
        )
        .await;
    assert_eq!(
        elsewhere["payload"]["approvalReplay"]["approvals"],
        json!([])
    );

    // The errors: a plain client may not answer, an unknown id, a bad decision, a decision
    // `always` does not offer, a prefix too short to be an id.
    let forbidden = plain
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "allow-once" }),
        )
        .await;
    assert_eq!(
        error_message(&forbidden),
        "missing scope: operator.approvals"
    );
    let unknown = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": "nope", "decision": "allow-once" }),
        )
        .await;
    assert_eq!(error_message(&unknown), "unknown or expired approval id");
    assert_eq!(unknown["error"]["details"]["reason"], "APPROVAL_NOT_FOUND");
    let bad = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "maybe" }),
        )
        .await;
    assert_eq!(error_message(&bad), "invalid decision");
    let always = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "allow-always" }),
        )
        .await;
    assert_eq!(
        error_message(&always),
        "allow-always is unavailable for this command (allowed: allow-once, deny)"
    );
    let short = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": &id[..4], "decision": "deny" }),
        )
        .await;
    assert_eq!(error_message(&short), "unknown or expired approval id");
    assert_eq!(llm.requests().len(), 1, "still held after the refusals");

    // A unique prefix of 8 characters is the id.
    let ok = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": &id[..8], "decision": "allow-once" }),
        )
        .await;
    assert_eq!(ok["payload"], json!({ "ok": true }), "{ok}");
    let resolved = approver.event("exec.approval.resolved").await["payload"].clone();
    assert_eq!(resolved["id"], id.as_str());
    assert_eq!(resolved["decision"], "allow-once");
    assert_eq!(resolved["request"]["command"], "echo approved-output");
    let done = final_without_approvals(&mut plain, "r1").await;
    assert_eq!(done["payload"]["state"], "final", "{done}");
    assert_eq!(last_tool_result(&llm), "approved-output");
    // The id answered its own request only: it is gone now.
    let again = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "allow-once" }),
        )
        .await;
    assert_eq!(error_message(&again), "unknown or expired approval id");
    assert_eq!(
        approver.call("exec.approval.list", json!({})).await["payload"],
        json!([])
    );

    // Denied: the command never runs and the agent is told not to retry it.
    plain.start_chat(KEY, "deny it", "r2").await;
    let requested = approver.event("exec.approval.requested").await["payload"].clone();
    assert_eq!(
        requested["request"]["command"],
        "echo never-ran > denied.txt"
    );
    let id = requested["id"].as_str().unwrap();
    let denied = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "deny" }),
        )
        .await;
    assert_eq!(denied["payload"], json!({ "ok": true }), "{denied}");
    final_without_approvals(&mut plain, "r2").await;
    assert_eq!(
        last_tool_result(&llm),
        "exec denied: the owner denied running `echo never-ran > denied.txt`. Do not retry \
         this command without asking the user."
    );
    assert!(!workspace.join("denied.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_answering_denies_after_the_timeout() {
    let llm = mock(exec_turns(&[("wait it", "echo nobody > late.txt")])).await;
    let (_home, _gateway, mut approver, mut plain) =
        start(&llm, "ask: \"always\", approvalTimeoutMs: 400").await;
    plain.start_chat(KEY, "wait it", "w1").await;
    let requested = approver.event("exec.approval.requested").await["payload"].clone();
    let id = requested["id"].as_str().unwrap().to_owned();
    // waitDecision ends with the timeout, undecided, and the end is announced.
    let wait_id = approver
        .send_request("exec.approval.waitDecision", json!({ "id": id }))
        .await;
    let (mut waited, mut resolved) = (Value::Null, Value::Null);
    while waited.is_null() || resolved.is_null() {
        let frame = approver.frame().await.expect("a frame");
        if frame["id"] == wait_id.as_str() {
            waited = frame;
        } else if frame["event"] == "exec.approval.resolved" {
            resolved = frame["payload"].clone();
        }
    }
    assert_eq!(waited["payload"]["id"], id.as_str(), "{waited}");
    assert_eq!(waited["payload"]["decision"], Value::Null, "{waited}");
    assert_eq!(resolved["resolvedBy"], "timeout");
    assert_eq!(resolved["decision"], "deny");
    final_without_approvals(&mut plain, "w1").await;
    assert_eq!(
        last_tool_result(&llm),
        "exec denied: nobody approved `echo nobody > late.txt` within 400 ms (approval timed \
         out). Do not retry this command without asking the user."
    );
    let late = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "allow-once" }),
        )
        .await;
    assert_eq!(error_message(&late), "unknown or expired approval id");
    let workspace = requested["request"]["cwd"].as_str().unwrap();
    assert!(!std::path::Path::new(workspace).join("late.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_is_remembered_for_exactly_that_command() {
    let llm = mock(exec_turns(&[
        ("first", "echo always-ok"),
        ("second", "echo always-ok"),
        ("changed", "echo always-ok; echo more"),
        ("listed", "git --version"),
    ]))
    .await;
    let (home, _gateway, mut approver, mut plain) = start(
        &llm,
        "ask: \"on-miss\", security: \"allowlist\", allow: [\"git\"], approvalTimeoutMs: 60000",
    )
    .await;

    plain.start_chat(KEY, "first", "a1").await;
    let requested = approver.event("exec.approval.requested").await["payload"].clone();
    assert_eq!(
        requested["request"]["allowedDecisions"],
        json!(["allow-once", "allow-always", "deny"])
    );
    let id = requested["id"].as_str().unwrap();
    let ok = approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "allow-always" }),
        )
        .await;
    assert_eq!(ok["payload"], json!({ "ok": true }), "{ok}");
    final_without_approvals(&mut plain, "a1").await;
    assert_eq!(last_tool_result(&llm), "always-ok");

    let file = home.path().join("exec-approvals.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["version"], 1);
    let entries = saved["agents"]["main"]["allowlist"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{saved}");
    assert_eq!(entries[0]["source"], "allow-always");
    assert_eq!(entries[0]["commandText"], "echo always-ok");
    assert!(
        entries[0]["pattern"]
            .as_str()
            .unwrap()
            .starts_with("=command:")
    );

    // The same line runs without asking (the plain client's run ends, nothing requested).
    plain.start_chat(KEY, "second", "a2").await;
    final_without_approvals(&mut plain, "a2").await;
    assert_eq!(last_tool_result(&llm), "always-ok");
    // A program on `tools.exec.allow` runs without asking too.
    plain.start_chat(KEY, "listed", "a3").await;
    final_without_approvals(&mut plain, "a3").await;
    assert!(
        last_tool_result(&llm).starts_with("git version"),
        "{}",
        last_tool_result(&llm)
    );

    // A changed line is a new request.
    plain.start_chat(KEY, "changed", "a4").await;
    let requested = loop {
        let frame = approver.event("exec.approval.requested").await;
        if frame["payload"]["request"]["command"] == "echo always-ok; echo more" {
            break frame["payload"].clone();
        }
    };
    let id = requested["id"].as_str().unwrap();
    approver
        .call(
            "exec.approval.resolve",
            json!({ "id": id, "decision": "deny" }),
        )
        .await;
    final_without_approvals(&mut plain, "a4").await;
    assert!(last_tool_result(&llm).starts_with("exec denied: the owner denied"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owners_chat_gets_the_request_and_approves_it_with_a_command() {
    const OWNER: i64 = 4242;
    let llm = mock(exec_turns(&[("run it", "echo from-telegram")])).await;
    let fake = FakeTelegram::start().await;
    let home = <FakeTelegram as FakeChannel>::home();
    let telegram = fake.config(&format!(
        "dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"
    ));
    let (home, port) = gateway_home_in(
        home,
        &llm,
        TOKEN,
        "heartbeat: { every: \"0m\" },",
        &format!(
            "tools: {{ exec: {{ ask: \"always\", approvalTimeoutMs: 60000 }} }},\n\
             channels: {{ {telegram} }},"
        ),
    );
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut approver = WsClient::connect_as(port, TOKEN, &[], APPROVER).await;

    fake.inject_message(InjectMessage::private(OWNER, "run it"));
    let requested = approver.event("exec.approval.requested").await["payload"].clone();
    let id = requested["id"].as_str().unwrap().to_owned();
    assert_eq!(requested["request"]["turnSourceChannel"], "telegram");
    assert_eq!(requested["request"]["turnSourceTo"], OWNER.to_string());
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].chat_id, OWNER);
    let workspace = requested["request"]["cwd"].as_str().unwrap();
    assert_eq!(
        sent[0].plain_text,
        format!(
            "🔒 Exec approval required\nID: {id}\nCommand:\n\necho from-telegram\n\nCWD: {}\n\
             Agent: main\nSession: {KEY}\nExpires in: 1 min (then denied)\n\
             Reply with: /approve {id} allow-once|deny",
            workspace
        )
    );

    // A malformed answer gets the usage; the owner's answer releases the command.
    fake.inject_message(InjectMessage::private(OWNER, format!("/approve {id}")));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[1].plain_text,
        "Usage: /approve <id> <decision> (see the pending approval message for available \
         decisions)"
    );
    fake.inject_message(InjectMessage::private(
        OWNER,
        format!("/approve {id} allow-once"),
    ));
    let sent = fake.wait_for_messages(4, T).await;
    let texts: Vec<&str> = sent[2..].iter().map(|m| m.plain_text.as_str()).collect();
    assert!(
        texts.contains(&format!("✅ Approval allow-once submitted for {id}.").as_str()),
        "{texts:?}"
    );
    assert!(texts.contains(&"done"), "{texts:?}");
    assert_eq!(last_tool_result(&llm), "from-telegram");
    let resolved = approver.event("exec.approval.resolved").await["payload"].clone();
    assert_eq!(resolved["resolvedBy"], format!("telegram:{OWNER}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gateway_a_command_that_needs_approval_is_denied() {
    let llm = mock(exec_turns(&[("run it", "echo unasked > unasked.txt")])).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\" } },\n\
         tools: { exec: { ask: \"always\" } },",
    );
    let run = home.run(&["ask", "run it"]);
    run.assert_ok();
    assert_eq!(
        last_tool_result(&llm),
        "exec denied: `echo unasked > unasked.txt` needs approval (tools.exec.ask: always) but \
         nobody can approve it here: approvals are answered through the gateway (`pincer \
         gateway run`, then exec.approval.resolve, the web chat or /approve in the session's \
         chat). Do not retry this command without asking the user."
    );
}
