//! `pincer ask` as a user runs it: the real binary, a temporary home, the offline stub or
//! the mock LLM. Text and `--json` output, sessions across invocations, `/new`, `tool:`,
//! the tool-round cap, real providers' environment keys, failover on injected failures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, long_story, mock, mode, replies, roles};
use pincer_testkit::{Fault, Match, Reply, Rule, Scenario};
use serde_json::{Value, json};

const NOTICE: &str = "(This reply comes from Pincer's offline stub model, not a real LLM. To use a real model, set an API key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY and choose a model, e.g. anthropic/claude-sonnet-4-5.)";

#[test]
fn a_fresh_machine_gets_an_answer_from_the_stub() {
    let home = Home::new();
    let run = home.run_ok(&["ask", "hello"]);
    assert_eq!(
        run.stdout(),
        format!("[offline stub] You said: hello\n\n{NOTICE}\n")
    );
    // State was created, private.
    assert_eq!(mode(&home.path()), 0o700);
    assert_eq!(mode(&home.sessions_dir().join("sessions.json")), 0o600);
    for file in [
        "AGENTS.md",
        "SOUL.md",
        "TOOLS.md",
        "USER.md",
        "IDENTITY.md",
        "HEARTBEAT.md",
        "MEMORY.md",
    ] {
        assert!(
            home.path()
                .join("agents/main/workspace")
                .join(file)
                .is_file(),
            "{file}"
        );
    }
}

/// The `--json` object with its run-specific values replaced.
fn redacted(mut v: Value) -> Value {
    for (field, placeholder) in [
        ("requestId", "<requestId>"),
        ("createdAt", "<createdAt>"),
        ("sessionId", "<sessionId>"),
    ] {
        assert!(v[field].is_string(), "{field} in {v}");
        v[field] = json!(placeholder);
    }
    v
}

#[test]
fn json_output_is_lainclaws_result_object() {
    let home = Home::new();
    let first = home.ask_json(&["hello"]);
    assert!(first["requestId"].as_str().unwrap().starts_with("pc-"));
    assert_eq!(
        redacted(first.clone()),
        json!({
            "success": true,
            "requestId": "<requestId>",
            "createdAt": "<createdAt>",
            "route": "echo",
            "stage": "adapter.stub.echo",
            "result": format!("[offline stub] You said: hello\n\n{NOTICE}"),
            "provider": "stub",
            "model": "echo",
            "sessionKey": "agent:main:main",
            "sessionId": "<sessionId>",
            "memoryEnabled": false,
            "memoryUpdated": false,
            "sessionContextUpdated": true
        })
    );
    // The next invocation continues the same session and sees the first exchange.
    let second = home.ask_json(&["--memory", "please summarise"]);
    assert_eq!(second["sessionId"], first["sessionId"]);
    assert_eq!(second["route"], "summary");
    assert_eq!(second["stage"], "adapter.stub.summary");
    assert_eq!(second["memoryEnabled"], true);
    let third = home.ask_json(&["and now?"]);
    assert_eq!(
        third["memoryEnabled"], true,
        "the switch is kept per session"
    );
    assert_eq!(
        third["result"],
        format!(
            "[offline stub] You said: and now?\n(Earlier in this session: 4 message(s); before this you said: \"please summarise\".)\n\n{NOTICE}"
        )
    );
}

#[test]
fn new_starts_a_new_session_and_keeps_the_old_one() {
    let home = Home::new();
    let first = home.ask_json(&["hello"]);
    let new = home.ask_json(&["/new"]);
    assert_eq!(new["route"], "system");
    assert_eq!(new["stage"], "gateway.new_session");
    assert_ne!(new["sessionId"], first["sessionId"]);
    assert_eq!(
        new["result"],
        format!(
            "New session started. sessionId={}",
            new["sessionId"].as_str().unwrap()
        )
    );
    let after = home.ask_json(&["hi again"]);
    assert_eq!(after["sessionId"], new["sessionId"]);
    assert_eq!(
        after["result"],
        format!("[offline stub] You said: hi again\n\n{NOTICE}"),
        "the new session starts empty"
    );
    let flagged = home.ask_json(&["--new-session", "fresh"]);
    assert_ne!(flagged["sessionId"], after["sessionId"]);
    let files = home.session_files();
    let kept = files.iter().filter(|n| n.contains(".jsonl.reset.")).count();
    assert_eq!(kept, 2, "both old transcripts are kept");
    // Named sessions are separate.
    let other = home.ask_json(&["--session", "work", "x"]);
    assert_eq!(other["sessionKey"], "agent:main:work");
    assert_ne!(other["sessionId"], flagged["sessionId"]);
}

#[test]
fn empty_input_and_bad_flags_fail_clearly() {
    let home = Home::new();
    let run = home.run(&["ask"]);
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr().starts_with("[ASK_INPUT_REQUIRED]"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("Usage: pincer ask"));
    let run = home.run(&["ask", "   "]);
    assert_eq!(run.code(), 1);
    let run = home.run(&["ask", "--bogus", "x"]);
    run.assert_fails(2, "--bogus");
    let run = home.run(&["ask", "--tool-max-steps", "0", "x"]);
    run.assert_fails(2, "--tool-max-steps");
    let run = home.run(&["ask", "--memory=maybe", "x"]);
    run.assert_fails(2, "expected on, off");
    let run = home.run(&["ask", "--session", "bad key!", "x"]);
    assert_eq!(run.code(), 1);
    assert!(run.stderr().starts_with("error: "), "{}", run.stderr());
}

#[test]
fn the_tool_prefix_runs_tools_by_hand() {
    let home = Home::new();
    let out = home.ask_json(&["tool: tools.echo {\"text\": \"ping\"}"]);
    assert_eq!(out["route"], "tool");
    assert_eq!(out["stage"], "tool.manual");
    assert_eq!(
        out["toolCalls"],
        json!([{"id": "cli-1", "name": "tools.echo", "args": {"text": "ping"}, "source": "cli"}])
    );
    assert_eq!(out["toolResults"][0]["result"]["ok"], true);
    assert_eq!(out["toolResults"][0]["result"]["content"], "ping");
    assert_eq!(out["sessionContextUpdated"], false);
    // A question after the call goes to the model with the results.
    let out = home.ask_json(&["tool: tools.echo {\"text\": \"pong\"}\nwhat came back?"]);
    assert_eq!(out["route"], "echo");
    assert!(out["result"].as_str().unwrap().contains("what came back?"));
    assert!(
        out["result"]
            .as_str()
            .unwrap()
            .contains("tools.echo {\"text\":\"pong\"}: pong")
    );
    // Unknown and disallowed tools.
    let run = home.run(&["ask", "--json", "tool: teleport {}"]);
    assert_eq!(run.code(), 1);
    let out: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(
        out["toolError"],
        json!({"code": "tool_not_found", "tool": "teleport", "message": "Tool teleport not found"})
    );
    let run = home.run(&[
        "ask",
        "--json",
        "--tool-allow",
        "time.now",
        "tool: tools.echo {\"text\":\"x\"}",
    ]);
    let out: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(out["toolError"]["message"], "tool not allowed: tools.echo");
    let run = home.run(&["ask", "tool: tools.echo {oops"]);
    run.assert_fails(1, "[invalid_args]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_provider_answers_and_remembers_across_invocations() {
    let (server, home) = Home::on_script(replies(&[
        ("my name is Ana", "Nice to meet you, Ana."),
        ("what is my name?", "Your name is Ana."),
    ]))
    .await;
    let run = home.run_ok(&["ask", "my name is Ana"]);
    assert_eq!(run.stdout(), "Nice to meet you, Ana.\n");
    let out = home.ask_json(&["what is my name?"]);
    assert_eq!(out["result"], "Your name is Ana.");
    assert_eq!(
        (out["route"].as_str(), out["stage"].as_str()),
        (Some("mock"), Some("adapter.mock.env"))
    );
    assert_eq!(
        (out["provider"].as_str(), out["model"].as_str()),
        (Some("mock"), Some("primary"))
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        roles(&requests[1].body),
        ["system", "user", "assistant", "user"]
    );
    assert_eq!(requests[1].header("authorization"), Some("Bearer mock-key"));
    let system = requests[1].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("# Project Context") || system.contains("AGENTS.md"),
        "{system}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_and_anthropic_keys_in_the_environment_pick_those_providers() {
    let server = mock(replies(&[("hi", "hello from the api")])).await;
    // (key variable, key, base-URL variable, wire API, provider, model, the header the key goes in)
    let cases = [
        (
            "OPENAI_API_KEY",
            "sk-test-openai",
            "OPENAI_BASE_URL",
            pincer_testkit::Api::OpenAiResponses,
            "openai",
            "gpt-5.1",
            ("authorization", "Bearer sk-test-openai"),
        ),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-test",
            "ANTHROPIC_BASE_URL",
            pincer_testkit::Api::AnthropicMessages,
            "anthropic",
            "claude-sonnet-4-5",
            ("x-api-key", "sk-ant-test"),
        ),
    ];
    for (key_var, key, base_var, api, provider, model, (header, value)) in cases {
        let home = Home::new()
            .with_env(key_var, key)
            .with_env(base_var, &server.base_url(api));
        let out = home.ask_json(&["hi"]);
        assert_eq!(
            (out["provider"].as_str(), out["model"].as_str()),
            (Some(provider), Some(model))
        );
        assert_eq!(out["result"], "hello from the api");
        assert_eq!(
            server.requests().last().unwrap().header(header),
            Some(value)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_loop_stops_at_max_steps() {
    // The model asks for a tool after every result.
    let call_again = || Reply::tool_call("time_now", json!({}));
    let (server, home) = Home::on_script(
        Scenario::new()
            .rule(Rule::when(Match::tool_result("time_now")).reply(call_again()))
            .rule(Rule::when(Match::last_user("loop")).reply(call_again())),
    )
    .await;
    let out = home.ask_json(&["--tool-max-steps", "2", "loop"]);
    assert_eq!(
        out["toolError"],
        json!({"code": "execution_error", "tool": "time.now", "message": "tool call loop exceeded max steps (2)"})
    );
    assert_eq!(out["toolCalls"].as_array().unwrap().len(), 3);
    assert_eq!(out["toolCalls"][0]["source"], "ask");
    assert_eq!(server.requests().len(), 3, "no LLM call after the cap");
    // Without tools the model gets none (an empty list where the history has tool calls).
    let _ = home.ask_json(&["--no-with-tools", "plain"]);
    let tools = server.requests().last().unwrap().body.get("tools").cloned();
    assert!(tools.is_none() || tools == Some(json!([])), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_primary_falls_back_and_says_which_model_answered() {
    let server = mock(
        Scenario::new()
            .rule(Rule::when(Match::model("primary")).fault(Fault::status(503)))
            .rule(Rule::when(Match::model("backup")).reply(Reply::text("backup here"))),
    )
    .await;
    let home = Home::new();
    home.use_mock(
        &server,
        "agents: { defaults: { model: { primary: \"mock/primary\", fallbacks: [\"mock/backup\"] } } },",
    );
    let run = home.run_ok(&["ask", "hi"]);
    assert_eq!(run.stdout(), "backup here\n");
    run.assert_stderr_has(&["note: answered by mock/backup after mock/primary (server) failed"]);
    let out = home.ask_json(&["again"]);
    assert_eq!(out["model"], "backup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_profile_rotates_to_the_next_and_cools_down() {
    let (server, home) = Home::on_script(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("hi"))
                    .times(1)
                    .fault(Fault::status(429).retry_after("30")),
            )
            .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("second profile"))),
    )
    .await;
    home.run_with_stdin(&["auth", "login", "mock", "--name", "a"], "key-aaaa-1111\n")
        .assert_ok();
    home.run_with_stdin(&["auth", "login", "mock", "--name", "b"], "key-bbbb-2222\n")
        .assert_ok();
    let out = home.ask_json(&["hi"]);
    assert_eq!(out["result"], "second profile");
    assert_eq!(out["profileId"], "mock:b");
    assert_eq!(out["stage"], "adapter.mock.mock:b");
    let auth: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(auth, ["Bearer key-aaaa-1111", "Bearer key-bbbb-2222"]);
    let status = home.run_ok(&["auth", "status"]);
    let a_line = status
        .stdout()
        .lines()
        .find(|l| l.contains("mock:a"))
        .unwrap()
        .to_owned();
    assert!(a_line.contains("cooldown="), "{a_line}");
    assert!(a_line.contains("secret=key***111"), "{a_line}");
    assert!(
        !status.stdout().contains("key-aaaa-1111"),
        "secrets are never printed"
    );
    // The cooling profile is skipped next time.
    let out = home.ask_json(&["hi"]);
    assert_eq!(out["profileId"], "mock:b");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_strict_config_error_names_the_file_line_and_key() {
    let home = Home::new();
    home.write_config("{\n  agents: {\n    defaults: { modle: \"x/y\" },\n  },\n}\n");
    let run = home.run(&["ask", "hi"]);
    let file = home.path().join("pincer.json5");
    run.assert_fails(1, &format!("{}:3:", file.display()));
    // The unknown key, and the right one suggested.
    run.assert_stderr_has(&["agents.defaults.modle", "model"]);
}

#[test]
fn a_corrupt_index_is_rebuilt_and_the_session_goes_on() {
    let home = Home::new();
    let first = home.ask_json(&["hello"]);
    let transcript = home.transcript(&first);
    assert_eq!(mode(&transcript), 0o600, "transcripts are private");
    std::fs::write(
        home.sessions_dir().join("sessions.json"),
        "{ this is not json",
    )
    .unwrap();
    let run = home.run_ok(&["ask", "--json", "still there?"]);
    run.assert_stderr_has(&[
        "warning: the session index was corrupt",
        "rebuilt from 1 transcript(s)",
    ]);
    let out: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(
        out["sessionId"], first["sessionId"],
        "the same session, not a silent reset"
    );
    assert!(
        out["result"]
            .as_str()
            .unwrap()
            .contains("before this you said: \"hello\"")
    );
    let kept: Vec<String> = home
        .session_files()
        .into_iter()
        .filter(|n| n.starts_with("sessions.json.corrupt."))
        .collect();
    assert_eq!(kept.len(), 1, "the corrupt index is kept");
    assert_eq!(
        std::fs::read_to_string(home.sessions_dir().join(&kept[0])).unwrap(),
        "{ this is not json"
    );
}

#[test]
fn garbage_in_a_transcript_is_reported_and_nothing_is_lost() {
    let home = Home::new();
    let first = home.ask_json(&["one"]);
    let transcript = home.transcript(&first);
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Garbage in the middle, and a torn last line as a crash would leave it.
    let garbled = format!(
        "{}\nnot json at all\n{}\n{{\"type\":\"message\",\"id\":\"abc",
        lines[..lines.len() - 1].join("\n"),
        lines[lines.len() - 1]
    );
    std::fs::write(&transcript, &garbled).unwrap();
    text.clear();
    let run = home.run_ok(&["ask", "--json", "two"]);
    let err = run.stderr();
    assert!(
        err.contains("is not valid JSON and was skipped (it stays in the file)"),
        "{err}"
    );
    assert!(err.contains("torn line"), "{err}");
    let out: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(out["sessionId"], first["sessionId"]);
    assert!(
        out["result"]
            .as_str()
            .unwrap()
            .contains("before this you said: \"one\"")
    );
    let after = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        after.contains("not json at all"),
        "skipped lines stay in the file"
    );
    let files = home.session_files();
    let torn = files.iter().filter(|n| n.contains(".torn.")).count();
    assert_eq!(torn, 1, "the torn bytes are kept beside the transcript");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_aborts_the_turn_and_keeps_the_partial_reply() {
    use std::io::Read;
    let (_server, home) = Home::on_script(Scenario::new().rule(long_story(100))).await;
    let mut child = home
        .command(&["ask", "long story"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4];
    stdout.read_exact(&mut first).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("aborted: the partial reply is saved in session agent:main:main"),
        "{stderr}"
    );
    let show = home.run(&["sessions", "export", "main"]).stdout();
    assert!(show.contains("once"), "{show}");
    assert!(
        !show.contains("very long story"),
        "only the part that arrived: {show}"
    );
}
