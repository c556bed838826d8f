//! `pincer tools|sessions|config|models|auth|completions` through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, json_of, mode};
use serde_json::{Value, json};

/// The model `models --json` marks as the default.
fn default_model(home: &Home) -> Value {
    let list = json_of(&home.run(&["models", "--json"]));
    let models = list.as_array().unwrap();
    models.iter().find(|m| m["default"] == true).unwrap()["model"].clone()
}

#[test]
fn tools_list_info_and_invoke() {
    let home = Home::new();
    let list = json_of(&home.run(&["tools", "list"]));
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in [
        "time.now",
        "tools.echo",
        "read",
        "write",
        "edit",
        "exec",
        "process",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(list[0]["inputSchema"].is_object());
    let info = json_of(&home.run(&["tools", "info", "tools.echo"]));
    assert_eq!(info["name"], "tools.echo");
    let run = home.run(&["tools", "info", "nope"]);
    assert_eq!(run.code(), 1);
    assert_eq!(
        run.stderr(),
        "Tool not found: nope. `pincer tools list` shows the tools.\n"
    );

    let ok = json_of(&home.run(&[
        "tools",
        "invoke",
        "tools.echo",
        "--args",
        "{\"text\":\"hey\"}",
    ]));
    assert_eq!(
        ok["call"],
        json!({"id": "cli-1", "name": "tools.echo", "args": {"text": "hey"}, "source": "cli"})
    );
    assert_eq!(ok["result"]["ok"], true);
    assert_eq!(ok["result"]["content"], "hey");
    assert_eq!(ok["result"]["meta"]["tool"], "tools.echo");

    // A tool that fails, arguments of the wrong shape, malformed JSON: exit 1 with the log.
    for (args, code) in [
        (
            vec![
                "tools",
                "invoke",
                "read",
                "--args",
                "{\"path\":\"missing.txt\"}",
            ],
            "execution_error",
        ),
        (
            vec!["tools", "invoke", "read", "--args", "{\"nope\":1}"],
            "invalid_args",
        ),
        (
            vec!["tools", "invoke", "read", "--args", "{oops"],
            "invalid_args",
        ),
        (vec!["tools", "invoke", "teleport"], "tool_not_found"),
    ] {
        let run = home.run(&args);
        assert_eq!(run.code(), 1, "{args:?}");
        let log: Value = serde_json::from_str(&run.stdout()).unwrap();
        assert_eq!(log["result"]["ok"], false);
        assert_eq!(log["result"]["error"]["code"], code, "{args:?}: {log}");
    }
    // Files stay inside the workspace.
    let run = home.run(&[
        "tools",
        "invoke",
        "read",
        "--args",
        "{\"path\":\"../../../../etc/passwd\"}",
    ]);
    assert_eq!(run.code(), 1);
}

#[test]
fn sessions_list_show_reset_and_export() {
    let home = Home::new();
    let run = home.run_ok(&["sessions", "list"]);
    assert!(
        run.stdout().starts_with("No sessions yet"),
        "{}",
        run.stdout()
    );
    let first = home.ask_json(&["remember the milk"]);
    let list = json_of(&home.run(&["sessions", "list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["key"], "agent:main:main");
    assert_eq!(list[0]["sessionId"], first["sessionId"]);
    let text = home.run(&["sessions", "list"]);
    assert!(text.stdout().contains("agent:main:main"));

    let show = json_of(&home.run(&["sessions", "show", "main"]));
    assert_eq!(show["key"], "agent:main:main");
    assert_eq!(show["messages"], 2);
    assert_eq!(show["entry"]["sessionId"], first["sessionId"]);

    let export = home.run_ok(&["sessions", "export", "main"]);
    let md = export.stdout();
    assert!(md.starts_with("# Session agent:main:main\n"), "{md}");
    assert!(md.contains("\n## User ("), "{md}");
    assert!(md.contains("remember the milk"));
    assert!(md.contains("\n## Assistant (stub/echo, "), "{md}");
    let file = home.dir.path().join("out.md");
    home.run(&["sessions", "export", "main", "-o", file.to_str().unwrap()])
        .assert_ok();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), md);

    let reset = home.run_ok(&["sessions", "reset", "main"]);
    assert!(reset.stdout().starts_with(&format!(
        "Session agent:main:main reset: {} -> ",
        first["sessionId"].as_str().unwrap()
    )));
    let after = home.ask_json(&["hi"]);
    assert_ne!(after["sessionId"], first["sessionId"]);

    let missing = home.run(&["sessions", "show", "nope"]);
    missing.assert_fails(1, "agent:main:nope");
}

#[test]
fn config_get_set_unset_validate_path_schema() {
    let home = Home::new();
    let path = home.path().join("pincer.json5");
    let run = home.run(&["config", "path"]);
    assert_eq!(run.stdout(), format!("{}\n", path.display()));
    let run = home.run(&["config", "validate"]);
    assert_eq!(
        run.stdout(),
        format!("{}: no file; the defaults apply\n", path.display())
    );

    home.run(&["config", "set", "agents.defaults.model", "stub/echo"])
        .assert_ok();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        home.run(&["config", "get", "agents.defaults.model"])
            .stdout(),
        "stub/echo\n"
    );
    home.run(&["config", "set", "session.dmScope", "per-peer"])
        .assert_ok();
    home.run(&["config", "set", "models.providers.local", "{baseUrl: \"http://127.0.0.1:1/v1\", api: \"openai-completions\", apiKey: \"sk-secret-value\", models: [{id: \"m\"}]}"]).assert_ok();
    let all = home.run(&["config", "get"]);
    assert!(
        all.stdout().contains("\"dmScope\": \"per-peer\""),
        "{}",
        all.stdout()
    );
    assert!(
        !all.stdout().contains("sk-secret-value"),
        "secrets are masked: {}",
        all.stdout()
    );

    // An invalid value is refused and the file stays as it was.
    let before = std::fs::read_to_string(&path).unwrap();
    let run = home.run(&["config", "set", "session.dmScope", "per-galaxy"]);
    run.assert_fails(1, "session.dmScope");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);

    home.run(&["config", "unset", "session.dmScope"])
        .assert_ok();
    assert_eq!(home.run(&["config", "get", "session.dmScope"]).code(), 1);
    home.run(&["config", "validate"]).assert_ok();

    // A broken file: validate fails, other commands refuse, `config unset` repairs it.
    std::fs::write(&path, "{ bogus: 1 }").unwrap();
    let run = home.run(&["config", "validate"]);
    run.assert_fails(1, &format!("{}:1:", path.display()));
    assert_eq!(home.run(&["sessions", "list"]).code(), 1);
    home.run(&["config", "unset", "bogus"]).assert_ok();
    home.run(&["sessions", "list"]).assert_ok();

    let schema = json_of(&home.run(&["config", "schema"]));
    for key in [
        "agents", "bindings", "session", "models", "auth", "tools", "skills",
    ] {
        assert!(schema["properties"][key].is_object(), "{key}");
    }
}

#[test]
fn models_lists_the_catalog_and_marks_the_default() {
    let home = Home::new();
    let run = home.run_ok(&["models", "--provider", "stub"]);
    assert!(run.stdout().starts_with("* stub/echo "), "{}", run.stdout());
    let list = json_of(&home.run(&["models", "--json"]));
    let default: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["default"] == true)
        .collect();
    assert_eq!(default.len(), 1);
    assert_eq!(default[0]["model"], "stub/echo");
    let home = home.with_env("ANTHROPIC_API_KEY", "k");
    assert_eq!(default_model(&home), "anthropic/claude-sonnet-4-5");
}

#[test]
fn auth_login_status_use_logout() {
    let home = Home::new();
    let run = home.run_with_stdin(&["auth", "login", "anthropic"], "sk-ant-0123456789\n");
    run.assert_ok();
    assert_eq!(
        run.stdout().lines().next().unwrap(),
        "Auth profile created: anthropic:default (key sk-***789)"
    );
    assert_eq!(mode(&home.path().join("auth-profiles.json")), 0o600);
    home.run_with_stdin(
        &["auth", "login", "anthropic", "--name", "work"],
        "sk-ant-work-9876\n",
    )
    .assert_ok();
    let status = home.run_ok(&["auth", "status"]);
    assert!(
        status
            .stdout()
            .contains("- anthropic:default provider=anthropic type=api_key secret=sk-***789"),
        "{}",
        status.stdout()
    );
    assert!(!status.stdout().contains("0123456789"));
    home.run(&["auth", "use", "anthropic:work"]).assert_ok();
    let status = home.run(&["auth", "status"]).stdout();
    assert!(status.contains("* anthropic:work"), "{status}");
    assert!(
        status.contains("Active profile: anthropic:work"),
        "{status}"
    );
    // A stored profile makes its provider the default model's.
    assert_eq!(default_model(&home), "anthropic/claude-sonnet-4-5");

    let run = home.run(&["auth", "logout"]);
    assert_eq!(run.code(), 1);
    home.run(&["auth", "logout", "anthropic:default"])
        .assert_ok();
    assert_eq!(home.run(&["auth", "logout", "anthropic:default"]).code(), 1);
    let run = home.run(&["auth", "logout", "--all"]);
    assert_eq!(run.stdout(), "All auth profiles removed (1).\n");
    // Bad input.
    let run = home.run_with_stdin(&["auth", "login", "anthropic"], "\n");
    run.assert_fails(1, "no key given");
    let run = home.run_with_stdin(&["auth", "login", "nowhere"], "k\n");
    run.assert_fails(1, "unknown provider \"nowhere\"");
    let run = home.run(&["ask", "--profile", "anthropic:ghost", "hi"]);
    run.assert_fails(1, "anthropic:ghost");
}

#[test]
fn help_version_and_completions() {
    let home = Home::new();
    let run = home.run(&["--version"]);
    assert_eq!(
        run.stdout(),
        format!("pincer {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(home.run(&["-v"]).stdout(), run.stdout());
    let help = home.run_ok(&["--help"]);
    for command in [
        "ask",
        "tools",
        "sessions",
        "auth",
        "config",
        "models",
        "completions",
    ] {
        assert!(help.stdout().contains(command), "{command}");
    }
    home.run(&["ask", "--help"]).assert_ok();
    let bash = home.run_ok(&["completions", "bash"]);
    assert!(bash.stdout().contains("_pincer()"));
    assert_eq!(home.run(&["nonsense"]).code(), 2);
}
