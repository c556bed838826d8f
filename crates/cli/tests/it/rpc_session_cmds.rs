//! `pincer rpc`'s session commands through the binary, against the mock LLM: `fork` starts
//! a new session file that branches before the chosen user message and the model sees only
//! that branch next; `get_fork_messages` lists pi's `{entryId, text}`; `export_html` writes
//! an escaped, script-free page; `--no-skills` leaves only the `--skill` paths.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::rpc_worker::{Worker, home_with};

use common::replies;
use serde_json::{Value, json};

/// The text of every message the mock's last request carried, by role.
fn last_request_texts(llm: &pincer_testkit::MockLlm) -> Vec<String> {
    let body = llm.requests().last().unwrap().body.clone();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            format!("{}:{text}", m["role"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_branches_the_session_and_the_model_sees_only_the_branch() {
    let (home, llm) = home_with(replies(&[("one", "r1"), ("two", "r2"), ("three", "r3")])).await;
    let mut worker = Worker::start(&home, &[]);
    for (i, message) in ["one", "two"].iter().enumerate() {
        worker.call(
            &format!("p{i}"),
            json!({"type": "prompt", "message": message}),
        );
        worker.until("agent_end");
    }
    let old_file = worker.call("s", json!({"type": "get_state"}))["data"]["sessionFile"].clone();
    let listed = worker.call("l", json!({"type": "get_fork_messages"}));
    assert_eq!(listed["success"], true, "{listed}");
    let messages = listed["data"]["messages"].as_array().unwrap().clone();
    let texts: Vec<&str> = messages
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one", "two"]);
    let two = messages[1]["entryId"].as_str().unwrap();
    assert_eq!(two.len(), 8, "pi's 8-hex entry id: {two}");

    assert_eq!(
        worker.call("f", json!({"type": "fork", "entryId": two})),
        json!({"id": "f", "type": "response", "command": "fork", "success": true,
               "data": {"text": "two", "cancelled": false}})
    );
    // A fork of an entry that does not exist: pi's error, and the worker goes on.
    assert_eq!(
        worker.call("x", json!({"type": "fork", "entryId": "deadbeef"})),
        json!({"id": "x", "type": "response", "command": "fork", "success": false,
               "error": "Invalid entry ID for forking"})
    );
    worker.call("p3", json!({"type": "prompt", "message": "three"}));
    worker.until("agent_end");
    assert_eq!(
        last_request_texts(&llm),
        ["user:one", "assistant:r1", "user:three"]
    );
    let new_file = worker.call("s2", json!({"type": "get_state"}))["data"]["sessionFile"].clone();
    assert_ne!(new_file, old_file);
    assert_eq!(worker.finish(), Some(0));

    let text = std::fs::read_to_string(new_file.as_str().unwrap()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["parentSession"], old_file);
    let roles: Vec<&str> = lines[1..]
        .iter()
        .map(|e| {
            e["message"]["role"]
                .as_str()
                .unwrap_or(e["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        roles,
        [
            "model_change",
            "thinking_level_change",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    // One chain: every entry's parent is the one before it.
    assert_eq!(lines[1]["parentId"], Value::Null);
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    // The old session is as it was: both of its turns, nothing of the branch.
    let old = std::fs::read_to_string(old_file.as_str().unwrap()).unwrap();
    assert!(old.contains("\"r2\"") && !old.contains("\"three\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_html_writes_an_escaped_page() {
    let (home, _llm) = home_with(replies(&[(
        "<script>alert('u')</script>",
        "<img src=x onerror=alert(1)>",
    )]))
    .await;
    let mut worker = Worker::start(&home, &[]);
    worker.call(
        "p",
        json!({"type": "prompt", "message": "<script>alert('u')</script>"}),
    );
    worker.until("agent_end");
    let out = home.dir.path().join("exports").join("s.html");
    let path = out.to_str().unwrap();
    assert_eq!(
        worker.call("e", json!({"type": "export_html", "outputPath": path})),
        json!({"id": "e", "type": "response", "command": "export_html", "success": true,
               "data": {"path": path}})
    );
    assert_eq!(worker.finish(), Some(0));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(&#39;u&#39;)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script") && !html.contains("<img src=x"));
    assert!(html.contains("Model: mock/primary"), "{html}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_skills_leaves_only_the_skill_paths() {
    let (home, llm) = home_with(replies(&[("hi", "hello")])).await;
    // A skill the workspace (the worker's directory) would bring, and one given by path.
    for (root, name) in [("skills", "local"), ("lib", "deploy")] {
        let dir = home.dir.path().join(root).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Does {name}\n---\n"),
        )
        .unwrap();
    }
    let skill = home.dir.path().join("lib/deploy").display().to_string();
    let commands = |worker: &mut Worker| -> Vec<String> {
        worker.call("c", json!({"type": "get_commands"}))["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut both = Worker::start(&home, &["--skill", &skill]);
    assert_eq!(commands(&mut both), ["skill:local", "skill:deploy"]);
    assert_eq!(both.finish(), Some(0));

    let mut only = Worker::start(&home, &["--no-skills", "--skill", &skill]);
    assert_eq!(commands(&mut only), ["skill:deploy"]);
    only.call("p", json!({"type": "prompt", "message": "hi"}));
    only.until("agent_end");
    assert_eq!(only.finish(), Some(0));
    let system = llm.requests().last().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("Does deploy"), "{system}");
    assert!(!system.contains("Does local"), "{system}");

    let mut none = Worker::start(&home, &["--no-skills"]);
    assert!(commands(&mut none).is_empty());
    assert_eq!(none.finish(), Some(0));
}
