//! lainclaw's `gateway start` contract: the run flags (`--channel`, `--pairing-*`,
//! `--tool-max-steps`, …) over the config for one run, shown with their sources by
//! `gateway status --json`; `gateway stop --channel`; `gateway config set|show|clear
//! --channel` as layers; pairing TTL from the config; bad flag values refused naming the flag.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{DaemonGuard, gateway_home_in, status_json};
use crate::common::{Home, mock};
use pincer_fakes::fake_feishu::{FakeFeishu, InjectFeishuMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

/// "hello" draws "hi there"; "loop" makes the model call `time_now` after every result.
fn script() -> Scenario {
    let call_again = || Reply::tool_call("time_now", json!({}));
    Scenario::new()
        .rule(Rule::when(Match::tool_result("time_now")).reply(call_again()))
        .rule(Rule::when(Match::last_user("loop")).reply(call_again()))
        .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi there")))
}

/// A home whose feishu channel points at `fake` with `dmPolicy: "pairing"` (strangers would
/// get a pairing code).
fn feishu_home(llm: &MockLlm, fake: &FakeFeishu) -> Home {
    let (home, _port) = gateway_home_in(
        Home::new(),
        llm,
        GATEWAY_TOKEN,
        "heartbeat: { every: \"0m\" }",
        &format!("channels: {{ {} }},", fake.config("dmPolicy: \"pairing\"")),
    );
    home
}

/// Waits until the mock has seen `n` requests (or `T` passed), then a moment more.
async fn settled_requests(llm: &MockLlm, n: usize) -> usize {
    let deadline = std::time::Instant::now() + T;
    while llm.requests().len() < n && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    llm.requests().len()
}

fn setting(value: Value, source: &str) -> Value {
    json!({ "value": value, "source": source })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_start_flags_apply_to_every_turn_and_status_shows_them_with_sources() {
    let llm = mock(script()).await;
    let fake = <FakeFeishu as FakeChannel>::start().await;
    let home = feishu_home(&llm, &fake);
    let config_path = home.path().join("pincer.json5");
    let before = std::fs::read_to_string(&config_path).unwrap();
    let _guard = DaemonGuard::new(&home);

    home.run_ok(&[
        "gateway",
        "start",
        "--daemon",
        "--port",
        "0",
        "--channel",
        "feishu",
        "--pairing-policy",
        "allowlist",
        "--pairing-allow-from",
        "ou_1",
        "--tool-max-steps",
        "5",
    ]);
    let status = status_json(&home);
    assert_eq!(status["status"], "running", "{status}");
    assert_eq!(status["channel"], "feishu");
    assert!(status["pid"].as_u64().is_some(), "{status}");
    assert!(status["startedAt"].as_str().is_some(), "{status}");
    assert!(status["statePath"].as_str().is_some(), "{status}");
    assert!(status["logPath"].as_str().is_some(), "{status}");
    let channels = status["channels"].as_array().unwrap();
    assert_eq!(channels.len(), 1, "{status}");
    assert_eq!(channels[0]["channel"], "feishu");
    assert_eq!(channels[0]["status"], "running");
    assert_eq!(
        channels[0]["settings"]["pairingPolicy"],
        setting(json!("allowlist"), "flag")
    );
    let settings = &status["settings"];
    assert_eq!(settings["toolMaxSteps"], setting(json!(5), "flag"));
    assert_eq!(
        settings["pairingPolicy"],
        setting(json!("allowlist"), "flag")
    );
    assert_eq!(
        settings["pairingAllowFrom"],
        setting(json!(["ou_1"]), "flag")
    );
    assert_eq!(
        settings["pairingPendingTtlMs"],
        setting(json!(3_600_000), "default")
    );
    assert_eq!(settings["pairingPendingMax"], setting(json!(3), "default"));
    assert_eq!(settings["withTools"], setting(json!(true), "default"));
    assert_eq!(settings["provider"], setting(Value::Null, "default"));
    assert_eq!(settings["debug"], setting(json!(false), "default"));
    // The flags passed on to the detached process.
    let argv: Vec<&str> = status["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        argv.windows(2).any(|w| w == ["--tool-max-steps", "5"]),
        "{argv:?}"
    );
    // The overlay is in memory: the file is untouched.
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), before);

    // The allow list admits ou_1; a stranger gets nothing (the file's `pairing` would send
    // a code).
    fake.inject_message(InjectFeishuMessage::dm("ou_1", "hello"));
    assert_eq!(fake.wait_for_messages(1, T).await[0].text(), "hi there");
    fake.inject_message(InjectFeishuMessage::dm("ou_stranger", "hello"));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(fake.sent_messages().len(), 1, "{:?}", fake.sent_messages());
    assert!(!home.path().join("credentials/feishu-pairing.json").exists());

    // The tool loop stops after 5 rounds: 6 model calls for the turn.
    let asked = llm.requests().len();
    fake.inject_message(InjectFeishuMessage::dm("ou_1", "loop"));
    assert_eq!(settled_requests(&llm, asked + 6).await, asked + 6);

    // Per-channel status and stop: another channel is not running and is not stopped.
    let telegram = super::common::json_of(&home.run(&[
        "gateway",
        "status",
        "--channel",
        "telegram",
        "--json",
    ]));
    assert_eq!(telegram["status"], "stopped");
    assert_eq!(telegram["channels"], json!([]));
    let other = home.run_ok(&["gateway", "stop", "--channel", "telegram"]);
    assert!(
        other
            .stdout()
            .starts_with("channel telegram is not running"),
        "{}",
        other.stdout()
    );
    assert_eq!(status_json(&home)["status"], "running");
    // feishu is its only channel: stopping it stops the gateway.
    let stopped = home.run_ok(&["gateway", "stop", "--channel", "feishu"]);
    assert!(
        stopped
            .stdout()
            .starts_with("gateway service stopped (pid="),
        "{}",
        stopped.stdout()
    );
    assert_eq!(status_json(&home)["status"], "stopped");
}

#[test]
fn gateway_config_layers_show_their_sources_and_clear_one_layer() {
    let home = Home::new();
    let path = home.path().join("pincer.json5");
    home.run_ok(&[
        "gateway",
        "config",
        "set",
        "--tool-max-steps",
        "4",
        "--pairing-policy",
        "pairing",
        "--pairing-pending-max",
        "2",
        "--token",
        "abcdef-0123456789-xyz",
    ]);
    home.run_ok(&[
        "gateway",
        "config",
        "set",
        "--channel",
        "feishu",
        "--pairing-policy",
        "allowlist",
        "--pairing-allow-from",
        "ou_1,ou_2",
    ]);
    let show = home.run_ok(&["gateway", "config", "show", "--channel", "feishu"]);
    assert_eq!(
        show.stdout(),
        format!(
            "config: {}\nchannel: feishu\nport: 18789 (default)\nbind: loopback (default)\n\
             token: abc***xyz (override)\nprovider: not set (default)\n\
             profile: not set (default)\nwithTools: true (default)\ntoolAllow: [] (default)\n\
             toolMaxSteps: 4 (override, default)\nmemory: not set (default)\n\
             pairingPolicy: allowlist (override, channels.feishu)\n\
             pairingAllowFrom: ou_1,ou_2 (override, channels.feishu)\n\
             pairingPendingTtlMs: 3600000 (default)\n\
             pairingPendingMax: 2 (override, default)\n",
            path.display()
        )
    );
    let shown = super::common::json_of(&home.run(&[
        "gateway",
        "config",
        "show",
        "--json",
        "--channel",
        "feishu",
    ]));
    assert_eq!(shown["channel"], "feishu");
    assert_eq!(
        shown["config"]["pairingPolicy"],
        json!({"value": "allowlist", "source": "override", "layer": "channels.feishu"})
    );
    assert_eq!(
        shown["config"]["pairingPendingTtlMs"],
        json!({"value": 3_600_000, "source": "default"})
    );
    // Without --channel the default layer shows.
    let shown = super::common::json_of(&home.run(&["gateway", "config", "show", "--json"]));
    assert_eq!(
        shown["config"]["pairingPolicy"],
        json!({"value": "pairing", "source": "override", "layer": "default"})
    );

    // Settings of every channel cannot be set for one.
    let refused = home.run(&[
        "gateway",
        "config",
        "set",
        "--channel",
        "feishu",
        "--tool-max-steps",
        "2",
    ]);
    refused.assert_fails(1, "toolMaxSteps apply to every channel");

    // Clearing the channel leaves the default layer; clearing the default leaves nothing.
    home.run_ok(&["gateway", "config", "clear", "--channel", "feishu"]);
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        raw["gateway"]["default"],
        json!({"toolMaxSteps": 4, "pairingPolicy": "pairing", "pairingPendingMax": 2})
    );
    assert!(raw["gateway"].get("channels").is_none(), "{raw}");
    home.run_ok(&[
        "gateway",
        "config",
        "set",
        "--channel",
        "feishu",
        "--pairing-pending-ttl-ms",
        "60000",
    ]);
    home.run_ok(&["gateway", "config", "clear"]);
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        raw,
        json!({"gateway": {"channels": {"feishu": {"pairingPendingTtlMs": 60000}}}})
    );
}

#[test]
fn bad_run_flags_are_refused_naming_the_flag() {
    let home = Home::new();
    for (args, message) in [
        (vec!["--tool-max-steps", "0"], "'--tool-max-steps <N>'"),
        (vec!["--tool-max-steps", "many"], "'--tool-max-steps <N>'"),
        (
            vec!["--pairing-policy", "maybe"],
            "'--pairing-policy <POLICY>'",
        ),
        (
            vec!["--pairing-pending-max", "0"],
            "'--pairing-pending-max <N>'",
        ),
        (
            vec!["--pairing-pending-ttl-ms", "0"],
            "'--pairing-pending-ttl-ms <MS>'",
        ),
        (vec!["--channel", "irc"], "'--channel <CHANNEL>'"),
    ] {
        for command in ["start", "run"] {
            let mut all = vec!["gateway", command, "--port", "0"];
            all.extend(&args);
            let run = home.run(&all);
            assert_eq!(run.code(), 2, "{all:?}: {}", run.stderr());
            assert!(run.stderr().contains(message), "{all:?}: {}", run.stderr());
        }
    }
    // A profile that does not exist is refused at start.
    let run = home.run(&[
        "gateway",
        "start",
        "--daemon",
        "--port",
        "0",
        "--profile",
        "nope",
    ]);
    run.assert_fails(1, "--profile nope: no such auth profile");
    // A channel Pincer has but this config does not.
    let run = home.run(&[
        "gateway",
        "start",
        "--daemon",
        "--port",
        "0",
        "--channel",
        "feishu",
    ]);
    run.assert_fails(
        1,
        "--channel feishu: channels.feishu is not configured (configured: none)",
    );
    assert!(!home.path().join("service/gateway.json").exists());
}

#[test]
fn pairing_ttl_from_the_config_hides_and_refuses_expired_requests() {
    // Nothing listens on the configured port: the commands use the files.
    let port = crate::common::gateway::free_port();
    let home = Home::new();
    home.write_config(&format!("{{ gateway: {{ port: {port} }} }}"));
    let store = pincer_gateway::pairing::PairingStore::new(home.path().join("credentials"));
    let code = store
        .request("feishu", None, "ou_9", None)
        .unwrap()
        .code()
        .unwrap()
        .to_owned();
    let listed = super::common::json_of(&home.run(&["pairing", "list", "feishu", "--json"]));
    assert_eq!(listed["requests"].as_array().unwrap().len(), 1, "{listed}");

    std::thread::sleep(Duration::from_millis(20));
    home.write_config(&format!(
        "{{ gateway: {{ port: {port}, channels: {{ feishu: {{ pairingPendingTtlMs: 5 }} }} }} }}"
    ));
    let listed = super::common::json_of(&home.run(&["pairing", "list", "feishu", "--json"]));
    assert_eq!(listed["requests"], json!([]), "{listed}");
    let approve = home.run(&["pairing", "approve", "feishu", &code]);
    assert_eq!(approve.code(), 1, "{}", approve.stdout());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_replies_carry_a_source_prefix_only_with_debug() {
    let (_llm, home) = Home::on_script(script()).await;
    assert_eq!(home.run_ok(&["ask", "hello"]).stdout(), "hi there\n");
    assert_eq!(
        home.run_ok(&["ask", "--debug", "hello"]).stdout(),
        "[mock/primary:env]\nhi there\n"
    );
    assert_eq!(home.ask_json(&["hello"])["result"], "hi there");
    assert_eq!(
        home.ask_json(&["--debug", "hello"])["result"],
        "[mock/primary:env]\nhi there"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_replies_carry_a_source_prefix_with_gateway_debug() {
    use crate::common::gateway::Foreground;
    let llm = mock(script()).await;
    let fake = <FakeFeishu as FakeChannel>::start().await;
    let home = feishu_home(&llm, &fake);
    let config = std::fs::read_to_string(home.path().join("pincer.json5")).unwrap();

    // `--debug` for one run, with the pinned-profile-less label `auto`.
    let gateway = Foreground::start(
        &home,
        &["gateway", "run", "--debug", "--pairing-policy", "open"],
    );
    fake.inject_message(InjectFeishuMessage::dm("ou_1", "hello"));
    assert_eq!(
        fake.wait_for_messages(1, T).await[0].text(),
        "[mock/primary:auto]\nhi there"
    );
    drop(gateway);

    // `gateway.debug: true` in the config does the same; without it (the other test) the
    // reply is exactly the model's.
    home.write_config(&config.replacen("gateway: {", "gateway: { debug: true,", 1));
    let gateway = Foreground::start(&home, &["gateway", "run", "--pairing-policy", "open"]);
    fake.inject_message(InjectFeishuMessage::dm("ou_2", "hello"));
    assert_eq!(
        fake.wait_for_messages(2, T).await[1].text(),
        "[mock/primary:auto]\nhi there"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_channel_refuses_to_stop_a_gateway_that_runs_other_channels_too() {
    use pincer_fakes::fake_telegram::FakeTelegram;
    let llm = mock(script()).await;
    let feishu = <FakeFeishu as FakeChannel>::start().await;
    let telegram = <FakeTelegram as FakeChannel>::start().await;
    let (home, _port) = gateway_home_in(
        Home::new(),
        &llm,
        GATEWAY_TOKEN,
        "heartbeat: { every: \"0m\" }",
        &format!(
            "channels: {{ {}, {} }},",
            feishu.config("dmPolicy: \"pairing\""),
            telegram.config("dmPolicy: \"pairing\"")
        ),
    );
    let _guard = DaemonGuard::new(&home);
    home.run_ok(&["gateway", "start", "--daemon", "--port", "0"]);
    let status = status_json(&home);
    assert_eq!(status["channel"], "telegram", "{status}");
    let names: Vec<&str> = status["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["channel"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["telegram", "feishu"]);
    let refused = home.run(&["gateway", "stop", "--channel", "feishu"]);
    refused.assert_fails(
        1,
        "runs telegram, feishu in one process and cannot stop feishu alone",
    );
    assert_eq!(status_json(&home)["status"], "running");
    home.run_ok(&["gateway", "stop"]);
    assert_eq!(status_json(&home)["status"], "stopped");
}
