//! `pincer cron …`: with no gateway running the commands work on `$PINCER_HOME/cron`
//! directly (and say so); with one they go through its `cron.*` methods, and `cron run`
//! runs a job through the agent and records it in `cron runs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::{Foreground, free_port, gateway_home, run_and_connect, text_of};
use common::{Home, json_of, mock, reply_when_containing};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::Value;

/// A home whose gateway would listen on a free port where nothing runs.
fn offline_home() -> Home {
    let home = Home::new();
    home.write_config(&format!("{{ gateway: {{ port: {} }} }}", free_port()));
    home
}

fn add_json(home: &Home, args: &[&str]) -> Value {
    let mut all = vec!["cron", "add", "--json"];
    all.extend_from_slice(args);
    json_of(&home.run(&all))
}

fn jobs_file(home: &Home) -> std::path::PathBuf {
    home.path().join("cron/jobs.json")
}

#[test]
fn add_every_then_list_without_a_gateway() {
    let home = offline_home();
    let run = home.run_ok(&[
        "cron",
        "add",
        "--every",
        "1h",
        "--message",
        "Check the build",
    ]);
    let out = run.stdout();
    assert!(out.starts_with("added job "), "{out}");
    assert!(out.contains("\"Check the build\": next run "), "{out}");
    assert!(out.contains("(in 59m)") || out.contains("(in 1h)"), "{out}");
    run.assert_stderr_has(&[
        "the gateway is not running: changed",
        "jobs run while `pincer gateway` runs",
    ]);
    let saved: Value = serde_json::from_slice(&std::fs::read(jobs_file(&home)).unwrap()).unwrap();
    let id = saved["jobs"][0]["id"].as_str().unwrap().to_owned();

    let list = home.run_ok(&["cron", "list"]);
    let table = list.stdout();
    assert!(table.starts_with("ID"), "{table}");
    assert!(table.contains(&id[..8]), "{table}");
    assert!(table.contains("Check the build"), "{table}");
    assert!(table.contains("every 1h"), "{table}");
    assert!(table.contains("isolated"), "{table}");

    let status = json_of(&home.run(&["cron", "status", "--json"]));
    assert_eq!(status["jobs"], 1, "{status}");
    assert_eq!(status["enabled"], true, "{status}");
}

#[test]
fn add_json_has_openclaws_shape() {
    let home = offline_home();
    let job = add_json(&home, &["--every", "1h", "--message", "Summarise the news"]);
    assert_eq!(job["name"], "Summarise the news", "{job}");
    assert_eq!(job["schedule"]["kind"], "every", "{job}");
    assert_eq!(job["schedule"]["everyMs"], 3_600_000, "{job}");
    assert_eq!(job["payload"]["kind"], "agentTurn", "{job}");
    assert_eq!(job["payload"]["message"], "Summarise the news", "{job}");
    assert_eq!(job["sessionTarget"], "isolated", "{job}");
    assert_eq!(job["delivery"]["mode"], "announce", "{job}");
    assert_eq!(job["enabled"], true, "{job}");
    assert!(job["state"]["nextRunAtMs"].is_i64(), "{job}");

    // A system event goes to the main session; a long text names the job by its start.
    let text = "Remind me to stretch and drink a glass of water, then look out of the window";
    let job = add_json(&home, &["--cron", "0 9 * * *", "--system-event", text]);
    assert_eq!(job["sessionTarget"], "main", "{job}");
    assert_eq!(job["payload"]["kind"], "systemEvent", "{job}");
    assert_eq!(job["payload"]["text"], text, "{job}");
    let name = job["name"].as_str().unwrap();
    assert!(
        name.chars().count() <= 40 && name.starts_with("Remind me"),
        "{name}"
    );
}

#[test]
fn edit_changes_only_what_is_given() {
    let home = offline_home();
    let job = add_json(
        &home,
        &[
            "--every",
            "1h",
            "--message",
            "Check mail",
            "--model",
            "mock/backup",
        ],
    );
    let id = job["id"].as_str().unwrap().to_owned();
    let edited = home.run_ok(&[
        "cron",
        "edit",
        &id[..8],
        "--name",
        "Morning mail",
        "--cron",
        "0 9 * * 1-5",
        "--tz",
        "Europe/Berlin",
    ]);
    assert!(
        edited.stdout().contains("updated job"),
        "{}",
        edited.stdout()
    );
    let list = json_of(&home.run(&["cron", "list", "--json"]));
    let job = &list["jobs"][0];
    assert_eq!(job["id"], id.as_str(), "{job}");
    assert_eq!(job["name"], "Morning mail", "{job}");
    assert_eq!(job["schedule"]["kind"], "cron", "{job}");
    assert_eq!(job["schedule"]["expr"], "0 9 * * 1-5", "{job}");
    assert_eq!(job["schedule"]["tz"], "Europe/Berlin", "{job}");
    // Untouched: the message and its model.
    assert_eq!(job["payload"]["message"], "Check mail", "{job}");
    assert_eq!(job["payload"]["model"], "mock/backup", "{job}");
    let table = home.run(&["cron", "list"]).stdout();
    assert!(
        table.contains("cron 0 9 * * 1-5 (Europe/Berlin)"),
        "{table}"
    );

    // Disabled jobs are listed with --all only.
    home.run(&["cron", "edit", &id, "--disable"]).assert_ok();
    let plain = home.run(&["cron", "list"]).stdout();
    assert!(plain.starts_with("no enabled cron jobs"), "{plain}");
    let all = home.run(&["cron", "list", "--all"]).stdout();
    assert!(all.contains("disabled"), "{all}");

    let nothing = home.run(&["cron", "edit", &id]);
    nothing.assert_fails(1, "nothing to change");
}

#[test]
fn remove_and_unknown_ids() {
    let home = offline_home();
    let job = add_json(&home, &["--every", "10m", "--system-event", "tick"]);
    let id = job["id"].as_str().unwrap().to_owned();
    let removed = home.run_ok(&["cron", "rm", &id[..6]]);
    assert!(
        removed.stdout().contains(&format!("removed job {id}")),
        "{}",
        removed.stdout()
    );
    assert_eq!(
        home.run(&["cron", "list", "--all"]).stdout().trim(),
        "no cron jobs"
    );

    for args in [
        &["cron", "remove", "nope"][..],
        &["cron", "edit", "nope", "--name", "x"],
        &["cron", "runs", "nope"],
    ] {
        let run = home.run(args);
        assert_eq!(run.code(), 1, "{args:?}: {}", run.stdout());
        assert!(
            run.stderr()
                .contains("no cron job nope; `pincer cron list --all` shows them"),
            "{args:?}: {}",
            run.stderr()
        );
    }
}

#[test]
fn bad_schedules_are_refused_and_nothing_is_written() {
    let home = offline_home();
    for (args, expected) in [
        (
            &["--cron", "61 * * * *", "--system-event", "x"][..],
            "invalid cron expression",
        ),
        (
            &[
                "--cron",
                "0 9 * * *",
                "--tz",
                "Mars/Olympus",
                "--system-event",
                "x",
            ],
            "unknown time zone \"Mars/Olympus\"",
        ),
        (
            &["--every", "soon", "--message", "x"],
            "--every \"soon\" is not a duration",
        ),
        (
            &["--at", "2001-01-01T00:00:00Z", "--message", "x"],
            "not in the future",
        ),
    ] {
        let mut all = vec!["cron", "add"];
        all.extend_from_slice(args);
        let run = home.run(&all);
        assert_eq!(run.code(), 1, "{args:?}: {}", run.stdout());
        assert!(
            run.stderr().contains(expected),
            "{args:?}: {}",
            run.stderr()
        );
        let jobs = std::fs::read_to_string(jobs_file(&home)).unwrap_or_default();
        assert!(!jobs.contains("\"id\""), "{args:?} wrote {jobs}");
    }
}

#[test]
fn a_corrupt_jobs_file_is_kept_aside_with_a_warning() {
    let home = offline_home();
    std::fs::create_dir_all(home.path().join("cron")).unwrap();
    std::fs::write(jobs_file(&home), "{ this is not json").unwrap();
    let run = home.run_ok(&["cron", "list"]);
    assert!(run.stdout().contains("no cron jobs"), "{}", run.stdout());
    let stderr = run.stderr();
    assert!(
        stderr.contains("warning: the cron jobs could not be loaded"),
        "{stderr}"
    );
    assert!(stderr.contains("jobs.json.corrupt."), "{stderr}");
    let kept: Vec<_> = std::fs::read_dir(home.path().join("cron"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("jobs.json.corrupt."))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let text = std::fs::read_to_string(home.path().join("cron").join(&kept[0])).unwrap();
    assert_eq!(text, "{ this is not json");
}

#[test]
fn run_needs_the_gateway() {
    let home = offline_home();
    let job = add_json(&home, &["--every", "1h", "--message", "x"]);
    let run = home.run(&["cron", "run", job["id"].as_str().unwrap()]);
    run.assert_fails(1, "the gateway is not running");
    run.assert_stderr_has(&["pincer gateway start --daemon"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_an_error_not_a_fallback() {
    let llm = mock(Scenario::new()).await;
    let (home, _port) = gateway_home(&llm, "the-right-token");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let home = home.with_env("PINCER_GATEWAY_TOKEN", "a-wrong-token");
    let run = home.run(&["cron", "add", "--every", "1h", "--message", "x"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    let stderr = run.stderr();
    assert!(stderr.contains("the gateway refused the token"), "{stderr}");
    assert!(
        stderr.contains("`pincer gateway token` shows the token"),
        "{stderr}"
    );
    assert!(
        !jobs_file(&home).exists(),
        "nothing may be written behind the gateway"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_gateway_a_job_runs_and_is_recorded() {
    const TOKEN: &str = "cron-test-token";
    let llm = mock(reply_when_containing("cron ping", "pong from cron")).await;
    let (home, _port) = gateway_home(&llm, TOKEN);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);

    let added = home.run(&[
        "cron",
        "add",
        "--json",
        "--every",
        "1h",
        "--message",
        "cron ping",
        "--no-deliver",
    ]);
    let job = json_of(&added);
    assert!(
        !added.stderr().contains("not running"),
        "{}",
        added.stderr()
    );
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(job["delivery"]["mode"], "none", "{job}");
    // The gateway saved it.
    let saved = std::fs::read_to_string(jobs_file(&home)).unwrap();
    assert!(saved.contains(&id), "{saved}");
    let table = home.run_ok(&["cron", "list"]);
    assert!(table.stdout().contains("every 1h"), "{}", table.stdout());

    let ran = home.run_ok(&["cron", "run", &id[..8]]);
    assert!(ran.stdout().starts_with("ran"), "{}", ran.stdout());
    assert!(ran.stdout().contains("pong from cron"), "{}", ran.stdout());

    let runs = json_of(&home.run(&["cron", "runs", &id, "--json"]));
    let entries = runs["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{runs}");
    assert_eq!(entries[0]["status"], "ok", "{runs}");
    assert_eq!(entries[0]["summary"], "pong from cron", "{runs}");
    let text = home.run_ok(&["cron", "runs", &id]);
    assert!(text.stdout().contains("ok"), "{}", text.stdout());
    assert!(
        text.stdout().contains("pong from cron"),
        "{}",
        text.stdout()
    );

    // Each run is a fresh session: the second one's model sees only its own message.
    home.run(&["cron", "run", &id]).assert_ok();
    let runs = json_of(&home.run(&["cron", "runs", &id, "--json"]));
    let entries = runs["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{runs}");
    assert_ne!(entries[0]["sessionId"], entries[1]["sessionId"], "{runs}");
    assert_eq!(entries[1]["sessionKey"], format!("cron:{id}"), "{runs}");
    let last = llm.requests().last().cloned().unwrap();
    let users = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 1, "{}", last.body);

    let status = json_of(&home.run(&["cron", "status", "--json"]));
    assert_eq!(status["jobs"], 1, "{status}");
    home.run(&["cron", "remove", &id]).assert_ok();
    let list = home.run(&["cron", "list", "--all"]);
    assert_eq!(list.stdout().trim(), "no cron jobs", "{}", list.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_does_not_answer_where_we_look_is_never_edited_behind() {
    const TOKEN: &str = "cron-lock-token";
    let llm = mock(Scenario::new()).await;
    let (home, _port) = gateway_home(&llm, TOKEN);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let elsewhere = free_port().to_string();
    let run = common::Run(
        home.command(&["cron", "add", "--every", "1h", "--message", "x"])
            .env("PINCER_GATEWAY_PORT", &elsewhere)
            .output()
            .unwrap(),
    );
    assert_eq!(run.0.status.code(), Some(1), "{}", run.stderr());
    run.assert_stderr_has(&[
        "a gateway seems to run for this home",
        "PINCER_GATEWAY_PORT",
    ]);
    assert!(!jobs_file(&home).exists(), "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_schedules_its_own_job_with_the_cron_tool() {
    const TOKEN: &str = "cron-tool-token";
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("remind me to stretch every hour")).reply(
                    Reply::tool_call(
                        "cron",
                        serde_json::json!({"action": "add", "job": {
                            "name": "Stretch",
                            "schedule": {"kind": "every", "everyMs": 3_600_000},
                            "payload": {"kind": "systemEvent", "text": "Time to stretch"}}}),
                    ),
                ),
            )
            .rule(Rule::when(Match::tool_result("cron")).reply(Reply::text("Done: every hour."))),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;
    client
        .call(
            "chat.send",
            serde_json::json!({"sessionKey": "agent:main:main",
                "message": "remind me to stretch every hour", "idempotencyKey": "t1"}),
        )
        .await;
    let done = client.chat_event("t1", "final").await;
    assert_eq!(text_of(&done["payload"]["message"]), "Done: every hour.");

    let jobs = json_of(&home.run(&["cron", "list", "--json"]));
    let job = &jobs["jobs"][0];
    assert_eq!(job["name"], "Stretch", "{jobs}");
    assert_eq!(job["agentId"], "main");
    assert_eq!(job["sessionTarget"], "main");
    assert_eq!(job["payload"]["text"], "Time to stretch");
}
