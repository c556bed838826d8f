//! exec and process tools against real processes in a temporary workspace. Behaviour only,
//! never durations; "gone" means no live (non-zombie) process is left in the group.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use pincer_tools::exec::{ExecExitNotice, ExecSecurity, ProcessRegistry, exec_tools};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

struct Env {
    dir: tempfile::TempDir,
    policy: PathPolicy,
    registry: ProcessRegistry,
    notices: tokio::sync::mpsc::UnboundedReceiver<ExecExitNotice>,
}

fn setup() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::workspace(dir.path()).unwrap();
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    let registry = ProcessRegistry::new().with_exit_callback(Arc::new(move |n| {
        let _ = tx.send(n);
    }));
    Env {
        dir,
        policy,
        registry,
        notices,
    }
}

impl Env {
    fn tools(
        &self,
        security: ExecSecurity,
        scope: &str,
    ) -> (Arc<dyn AgentTool>, Arc<dyn AgentTool>) {
        let mut tools = exec_tools(self.policy.clone(), self.registry.clone(), security, scope);
        let process = tools.pop().unwrap();
        let exec = tools.pop().unwrap();
        assert_eq!((exec.name(), process.name()), ("exec", "process"));
        (exec, process)
    }

    fn full(&self) -> (Arc<dyn AgentTool>, Arc<dyn AgentTool>) {
        self.tools(ExecSecurity::Full, "agent-a")
    }

    /// Runs `args` in the foreground with full access; the call must succeed.
    async fn run(&self, args: Value) -> ToolOutput {
        ok(&self.full().0, args).await
    }

    async fn notice(&mut self) -> ExecExitNotice {
        tokio::time::timeout(Duration::from_secs(10), self.notices.recv())
            .await
            .unwrap()
            .unwrap()
    }

    /// The next exit notice, asserted to read `text` with `{id}` standing for the short id
    /// of session `id`.
    async fn notice_reads(&mut self, id: &str, text: &str) -> ExecExitNotice {
        let notice = self.notice().await;
        assert_eq!(notice.text, text.replace("{id}", &id[..8]));
        notice
    }
}

type Updates = Arc<Mutex<Vec<ToolOutput>>>;

fn ctx() -> (ToolContext, Updates, CancellationToken) {
    let updates: Updates = Arc::default();
    let sink = updates.clone();
    let cancel = CancellationToken::new();
    let ctx = ToolContext::new("call-1", cancel.clone())
        .with_updates(Arc::new(move |o| sink.lock().unwrap().push(o)));
    (ctx, updates, cancel)
}

async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<ToolOutput, ToolError> {
    tool.execute(args, ctx().0).await
}

/// Calls `tool` with `args`; the call must succeed.
async fn ok(tool: &Arc<dyn AgentTool>, args: Value) -> ToolOutput {
    call(tool, args).await.unwrap()
}

/// Runs `args`' command in the background (`"background": true` added); the output names
/// its session and process group.
async fn spawn(exec: &Arc<dyn AgentTool>, mut args: Value) -> ToolOutput {
    args["background"] = json!(true);
    ok(exec, args).await
}

/// The process tool's `action` on session `id`.
async fn act(
    process: &Arc<dyn AgentTool>,
    action: &str,
    id: &str,
) -> Result<ToolOutput, ToolError> {
    call(process, json!({"action": action, "sessionId": id})).await
}

/// Asserts that `out`'s text passes `check`, showing the text when it does not.
fn assert_text(out: &ToolOutput, check: impl Fn(&str) -> bool) {
    let text = out.text_content();
    assert!(check(&text), "{text}");
}

fn details(out: &ToolOutput) -> &Value {
    out.details.as_ref().unwrap()
}

fn session_id(out: &ToolOutput) -> String {
    details(out)["sessionId"].as_str().unwrap().to_owned()
}

fn pid(out: &ToolOutput) -> i32 {
    i32::try_from(details(out)["pid"].as_u64().unwrap()).unwrap()
}

/// Live (non-zombie) processes in group `pgid`.
fn group_members(pgid: i32) -> Vec<u32> {
    pincer_testkit::procfs::live_group_members(pgid.unsigned_abs())
}

async fn assert_group_gone(pgid: i32) {
    for _ in 0..100 {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("process group {pgid} still has {:?}", group_members(pgid));
}

/// Starts `sleep 100 & sleep 100` in the background with `extra` arguments added; its
/// session id and its process group, asserted to have live members.
async fn spawn_sleepers(exec: &Arc<dyn AgentTool>, extra: Value) -> (String, i32) {
    let mut args = json!({"command": "sleep 100 & sleep 100"});
    for (key, value) in extra.as_object().unwrap() {
        args[key] = value.clone();
    }
    let out = spawn(exec, args).await;
    let (id, pgid) = (session_id(&out), pid(&out));
    assert!(!group_members(pgid).is_empty());
    (id, pgid)
}

/// A background group (on a terminal with `pty`) that outlives its one-second timeout is
/// killed whole, and its exit announced as a SIGTERM failure.
async fn assert_timeout_kills_the_group(env: &mut Env, exec: &Arc<dyn AgentTool>, pty: bool) {
    let (id, pgid) = spawn_sleepers(exec, json!({"timeout": 1, "pty": pty})).await;
    env.notice_reads(&id, "Exec failed ({id}, signal SIGTERM)")
        .await;
    assert_group_gone(pgid).await;
}

/// Runs `args` in the foreground; the result and the updates streamed while it ran.
async fn run_streaming(
    exec: &Arc<dyn AgentTool>,
    args: Value,
) -> (Result<ToolOutput, ToolError>, Vec<ToolOutput>) {
    let (ctx, updates, _) = ctx();
    let result = exec.execute(args, ctx).await;
    let updates = updates.lock().unwrap().clone();
    (result, updates)
}

/// Calls `tool` with `args` and asserts it fails saying `says`.
async fn assert_refused(tool: &Arc<dyn AgentTool>, args: Value, says: &str) {
    let err = call(tool, args).await.unwrap_err();
    assert!(err.to_string().contains(says), "{err}");
}

/// Poll until the session has exited; all polled output joined.
async fn poll_to_exit(process: &Arc<dyn AgentTool>, id: &str) -> String {
    let mut all = String::new();
    for _ in 0..200 {
        let out = act(process, "poll", id).await.unwrap();
        all.push_str(&out.text_content());
        all.push('\n');
        if details(&out)["status"] != "running" {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("session {id} did not exit: {all}");
}

/// Starts `command` in the background (`pty` or not), writes `first` to it, then `last`
/// and end of input, and waits for it to exit. The session id, the answer to the last
/// write, and the session's whole log.
async fn write_then_close(
    env: &Env,
    command: &str,
    pty: bool,
    first: &str,
    last: &str,
) -> (String, String, String) {
    let (exec, process) = env.full();
    let out = spawn(&exec, json!({"command": command, "pty": pty})).await;
    let id = session_id(&out);
    let write = |data: &str, eof: bool| json!({"action": "write", "sessionId": id, "data": data, "eof": eof});
    call(&process, write(first, false)).await.unwrap();
    let wrote = call(&process, write(last, true)).await.unwrap();
    let polled = poll_to_exit(&process, &id).await;
    assert!(polled.contains("Process exited (exit code 0)."), "{polled}");
    let log = act(&process, "log", &id).await.unwrap();
    (id, wrote.text_content(), log.text_content())
}

#[tokio::test]
async fn streams_updates_and_returns_output_with_exit_code() {
    let env = setup();
    let (exec, _) = env.full();
    let args = json!({"command": "echo one; sleep 0.3; echo two >&2; exit 3", "yieldMs": 10000});
    let (out, updates) = run_streaming(&exec, args).await;
    let out = out.unwrap();
    assert_eq!(out.text_content(), "one\ntwo\n\n(exit code 3)");
    assert_eq!(details(&out)["status"], "failed");
    assert_eq!(details(&out)["exitCode"], 3);
    assert!(
        updates[0].text_content().starts_with("one\n"),
        "{updates:?}"
    );
    assert_eq!(details(&updates[0])["status"], "running");
    assert_eq!(updates.last().unwrap().text_content(), "one\ntwo\n");

    let silent = ok(&exec, json!({"command": "true"})).await;
    assert_eq!(silent.text_content(), "(no output)");
    assert_eq!(details(&silent)["exitCode"], 0);
    assert!(
        env.registry.list("agent-a").is_empty(),
        "foreground runs are not kept"
    );
}

#[tokio::test]
async fn yields_then_polls_new_output_then_logs() {
    let mut env = setup();
    let (exec, process) = env.full();
    let out = ok(
        &exec,
        json!({"command": "echo start; sleep 1; echo end", "yieldMs": 200}),
    )
    .await;
    assert_eq!(details(&out)["status"], "running");
    let id = session_id(&out);
    assert_text(&out, |text| text.contains("Use process"));
    assert_text(&out, |text| text.ends_with("Output so far:\nstart\n"));
    // The exec result already showed "start": polls report only what came after it.
    let first = act(&process, "poll", &id).await.unwrap();
    assert_eq!(
        first.text_content(),
        "(no new output)\n\nProcess still running."
    );
    let second = act(&process, "poll", &id[..8]).await.unwrap();
    assert_eq!(
        second.text_content(),
        "(no new output)\n\nProcess still running."
    );
    let rest = poll_to_exit(&process, &id).await;
    assert!(rest.contains("end\n") && !rest.contains("start"), "{rest}");
    assert!(rest.contains("Process exited (exit code 0)."), "{rest}");
    let log = act(&process, "log", &id).await.unwrap();
    assert_eq!(log.text_content(), "start\nend");
    let page = ok(
        &process,
        json!({"action": "log", "sessionId": id, "offset": 1, "limit": 1}),
    )
    .await;
    assert_eq!(page.text_content(), "end\n\n[Lines 2-2 of 2.]");
    let list = ok(&process, json!({"action": "list"})).await;
    assert_text(&list, |text| text.starts_with(&id[..8]));
    assert!(list.text_content().contains("exit code 0"));
    ok(&process, json!({"action": "clear"})).await;
    assert!(env.registry.list("agent-a").is_empty());
    // A foreground session never notifies; this one was backgrounded by the yield.
    env.notice_reads(&id, "Exec completed ({id}, code 0) :: start end")
        .await;
}

#[tokio::test]
async fn background_exits_are_announced() {
    let mut env = setup();
    let (exec, _) = env.full();
    let out = spawn(&exec, json!({"command": "echo done"})).await;
    let id = session_id(&out);
    let notice = env
        .notice_reads(&id, "Exec completed ({id}, code 0) :: done")
        .await;
    assert_eq!(
        (notice.scope.as_str(), notice.session_id.as_str()),
        ("agent-a", id.as_str())
    );
    assert_eq!(notice.exit_code, Some(0));

    let out = spawn(&exec, json!({"command": "echo bad; exit 2"})).await;
    let id = session_id(&out);
    env.notice_reads(&id, "Exec failed ({id}, code 2) :: bad")
        .await;
    let out = spawn(&exec, json!({"command": "exit 0"})).await;
    let id = session_id(&out);
    env.notice_reads(&id, "Exec completed ({id}, code 0)").await;
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let mut env = setup();
    let (exec, _) = env.full();
    assert_timeout_kills_the_group(&mut env, &exec, false).await;

    // In the foreground the timeout is an error.
    let args = json!({"command": "echo $$; sleep 100 & sleep 100", "timeout": 1});
    let (err, updates) = run_streaming(&exec, args).await;
    let err = err.unwrap_err();
    assert!(err.to_string().starts_with("Command timed out"), "{err}");
    let pgid = pid(&updates[0]);
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn process_kill_kills_the_group() {
    let mut env = setup();
    let (exec, process) = env.full();
    let (id, pgid) = spawn_sleepers(&exec, json!({})).await;
    let killed = act(&process, "kill", &id).await.unwrap();
    assert_text(&killed, |text| text.contains("SIGKILL"));
    assert_group_gone(pgid).await;
    assert_refused(
        &process,
        json!({"action": "kill", "sessionId": id}),
        "not running",
    )
    .await;
    let removed = act(&process, "remove", &id).await.unwrap();
    assert!(removed.text_content().starts_with("Removed"));
    assert!(
        env.notices.try_recv().is_err(),
        "an explicit kill is not announced"
    );
}

#[tokio::test]
async fn abort_kills_the_foreground_group() {
    let env = setup();
    let (exec, _) = env.full();
    let (ctx, updates, cancel) = ctx();
    let task = tokio::spawn(async move {
        exec.execute(json!({"command": "echo $$; sleep 100 & sleep 100"}), ctx)
            .await
    });
    let pgid = loop {
        if let Some(first) = updates.lock().unwrap().first() {
            break pid(first);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    cancel.cancel();
    let result = task.await.unwrap();
    assert_eq!(result.unwrap_err(), ToolError::Aborted);
    assert_group_gone(pgid).await;
    assert!(env.registry.list("agent-a").is_empty());
}

#[tokio::test]
async fn shutdown_leaves_no_process_behind() {
    let env = setup();
    let (exec_a, _) = env.full();
    let (exec_b, _) = env.tools(ExecSecurity::Full, "agent-b");
    let (_, a) = spawn_sleepers(&exec_a, json!({})).await;
    let b = spawn(&exec_b, json!({"command": "sleep 100 | sleep 100"})).await;
    assert_eq!(env.registry.running(), 2);
    env.registry.shutdown().await;
    assert_group_gone(a).await;
    assert_group_gone(pid(&b)).await;
    assert_eq!(env.registry.running(), 0);
    assert_refused(&exec_a, json!({"command": "true"}), "shut down").await;
}

#[tokio::test]
async fn dropping_the_registry_kills_running_groups() {
    let env = setup();
    let (exec, process) = env.full();
    let (_, pgid) = spawn_sleepers(&exec, json!({})).await;
    drop((exec, process, env.registry));
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn agents_only_see_their_own_sessions() {
    let env = setup();
    let (exec_a, process_a) = env.full();
    let (_, process_b) = env.tools(ExecSecurity::Full, "agent-b");
    let out = spawn(&exec_a, json!({"command": "sleep 5"})).await;
    let id = session_id(&out);
    let list_b = ok(&process_b, json!({"action": "list"})).await;
    assert_eq!(list_b.text_content(), "No exec sessions.");
    for action in ["poll", "log", "kill", "remove"] {
        let args = json!({"action": action, "sessionId": id});
        assert_refused(&process_b, args, "action \"list\" to see session ids").await;
    }
    let list_a = ok(&process_a, json!({"action": "list"})).await;
    assert!(list_a.text_content().contains("sleep 5"));
    // With a single session the id may be left out; B has none, so it may not.
    let implied = ok(&process_a, json!({"action": "poll"})).await;
    assert_eq!(implied.details.as_ref().unwrap()["sessionId"], json!(id));
    let poll = || json!({"action": "poll"});
    assert_refused(&process_b, poll(), "sessionId is required").await;
    spawn(&exec_a, json!({"command": "sleep 5"})).await;
    assert_refused(&process_a, poll(), "sessionId is required").await;
    env.registry.shutdown().await;
}

#[tokio::test]
async fn environment_is_cleaned() {
    let env = setup();
    let out = env
        .run(json!({"command": "env", "env": {"PASSED_VAR": "yes"}}))
        .await;
    let text = out.text_content();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(text.contains("PASSED_VAR=yes\n"), "{text}");
    // cargo runs tests with CARGO_* set; none of it may leak.
    if std::env::var_os("CARGO_MANIFEST_DIR").is_some() {
        assert!(!text.contains("CARGO_MANIFEST_DIR"), "{text}");
    }
    let allowed = pincer_tools::exec::env::INHERITED;
    for name in names {
        assert!(
            allowed.contains(&name)
                || name.starts_with("LC_")
                || ["PASSED_VAR", "PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
            "{name} leaked into the command's environment"
        );
    }
    // Outside Full, variables that pick the program are refused.
    let (exec, _) = env.tools(ExecSecurity::Allowlist(vec!["env".into()]), "agent-a");
    assert_refused(
        &exec,
        json!({"command": "env", "env": {"LD_PRELOAD": "/x.so"}}),
        "LD_PRELOAD is not allowed",
    )
    .await;
}

#[tokio::test]
async fn workdir_is_confined_to_the_workspace() {
    let env = setup();
    std::fs::create_dir(env.dir.path().join("sub")).unwrap();
    let (exec, _) = env.full();
    let out = ok(&exec, json!({"command": "pwd", "workdir": "sub"})).await;
    assert_text(&out, |text| text.ends_with("/sub"));
    for outside in ["..", "/etc"] {
        assert_refused(
            &exec,
            json!({"command": "pwd", "workdir": outside}),
            "outside the allowed directories",
        )
        .await;
    }
}

#[tokio::test]
async fn allowlist_runs_listed_programs_and_refuses_bypasses() {
    let env = setup();
    let (exec, _) = env.tools(
        ExecSecurity::Allowlist(vec!["echo".into(), "ls".into()]),
        "agent-a",
    );
    let allowed = ok(
        &exec,
        json!({"command": "echo 'hi there' | ls >/dev/null 2>&1 && echo ok"}),
    )
    .await;
    assert_eq!(allowed.text_content(), "ok");
    let cases = [
        (
            "echo a && touch pwned",
            "`touch` is not in the exec allowlist",
        ),
        (
            "echo a; touch pwned",
            "`touch` is not in the exec allowlist",
        ),
        (
            "echo a | touch pwned",
            "`touch` is not in the exec allowlist",
        ),
        (
            "echo a\ntouch pwned",
            "`touch` is not in the exec allowlist",
        ),
        (
            "echo a & touch pwned",
            "`touch` is not in the exec allowlist",
        ),
        ("echo $(touch pwned)", "command substitution ($(...))"),
        ("echo `touch pwned`", "command substitution (backticks)"),
        ("echo a > pwned", "redirection `>` to or from \"pwned\""),
        ("echo a 'unterminated", "unterminated single quote"),
        ("sh -c 'touch pwned'", "`sh` is not in the exec allowlist"),
        ("PATH=. ls", "assigning PATH is not allowed"),
    ];
    for (command, why) in cases {
        let err = call(&exec, json!({"command": command})).await.unwrap_err();
        let err = err.to_string();
        assert!(err.starts_with("exec refused: "), "{command}: {err}");
        assert!(err.contains(why), "{command}: {err}");
        assert!(err.ends_with("Allowed programs: echo, ls"), "{err}");
    }
    assert!(!env.dir.path().join("pwned").exists());
    assert!(
        exec_tools(
            env.policy.clone(),
            env.registry.clone(),
            ExecSecurity::Deny,
            "a"
        )
        .is_empty()
    );
}

#[tokio::test]
async fn writes_to_stdin_and_closes_it() {
    let env = setup();
    let command = "read line; echo got:$line; cat";
    let (id, wrote, log) = write_then_close(&env, command, false, "hello\n", "more\n").await;
    assert_eq!(
        wrote,
        format!("Wrote 5 bytes to session {} and closed stdin.", &id[..8])
    );
    assert_eq!(log, "got:hello\nmore");
    let (_, process) = env.full();
    assert_refused(
        &process,
        json!({"action": "write", "sessionId": id, "data": "x"}),
        "already exited",
    )
    .await;
}

#[tokio::test]
async fn binary_output_is_sanitised() {
    let args = json!({"command": r"printf 'a\000b\033[31mred\033[0m\377z\r\n\tend\n'"});
    let out = setup().run(args).await;
    assert_eq!(out.text_content(), "abred\u{fffd}z\n\tend");
}

#[tokio::test]
async fn long_output_is_cut_and_kept_for_log() {
    let env = setup();
    let (exec, process) = env.full();
    let out = ok(&exec, json!({"command": "seq 1 3000"})).await;
    let text = out.text_content();
    assert!(
        text.starts_with("[Output truncated: showing the last 2000 of 3000 lines."),
        "{}",
        &text[..200]
    );
    assert!(text.ends_with("\n2999\n3000"));
    let id = session_id(&out);
    let first = ok(
        &process,
        json!({"action": "log", "sessionId": id, "offset": 0, "limit": 2}),
    )
    .await;
    assert_eq!(
        first.text_content(),
        "1\n2\n\n[Lines 1-2 of 3000. Use offset=2 to continue.]"
    );
}

#[tokio::test]
async fn remove_kills_a_running_session_and_forgets_it() {
    let env = setup();
    let (exec, process) = env.full();
    let out = spawn(&exec, json!({"command": "sleep 100"})).await;
    let (id, pgid) = (session_id(&out), pid(&out));
    let removed = act(&process, "remove", &id[..8]).await.unwrap();
    assert_eq!(
        removed.text_content(),
        format!("Removed session {} (killed).", &id[..8])
    );
    assert_group_gone(pgid).await;
    let err = act(&process, "poll", &id).await.unwrap_err();
    assert!(err.to_string().starts_with("no session"), "{err}");
}

#[tokio::test]
async fn pty_gives_the_command_a_terminal() {
    let env = setup();
    let (exec, _) = env.full();
    let check = "test -t 0 && test -t 1 && test -t 2 && echo is-a-tty || echo not-a-tty";
    let piped = ok(&exec, json!({"command": check})).await;
    assert_eq!(piped.text_content(), "not-a-tty");
    let out = ok(&exec, json!({"command": check, "pty": true})).await;
    assert_eq!(out.text_content(), "is-a-tty");
    assert_eq!(details(&out)["exitCode"], 0);

    let out = ok(
        &exec,
        json!({"command": "tty; stty size; echo err >&2; exit 4", "pty": true}),
    )
    .await;
    let text = out.text_content();
    assert!(text.starts_with("/dev/pts/"), "{text}");
    assert!(text.ends_with("\n24 120\nerr\n\n(exit code 4)"), "{text}");
    let out = ok(
        &exec,
        json!({"command": "echo \"[$TERM]\"", "pty": true, "env": {"TERM": "vt100"}}),
    )
    .await;
    assert_eq!(out.text_content(), "[vt100]");
    assert!(env.registry.list("agent-a").is_empty());
}

#[tokio::test]
async fn pty_session_takes_input_and_ends_on_ctrl_d() {
    let mut env = setup();
    // A partial line, then end of input: cat prints it and exits.
    let command = "read line; echo got:$line; cat";
    let (id, wrote, log) = write_then_close(&env, command, true, "hello\n", "more").await;
    assert_eq!(
        wrote,
        format!("Wrote 4 bytes to session {} and closed stdin.", &id[..8])
    );
    // The terminal echoes input as it is written, so the order of echo and output varies.
    assert!(log.contains("got:hello\n"), "{log}");
    assert_eq!(
        (log.matches("hello").count(), log.matches("more").count()),
        (2, 2),
        "{log}"
    );
    assert!(env.notice().await.text.starts_with("Exec completed"));
}

#[tokio::test]
async fn pty_groups_are_killed_on_timeout_and_kill() {
    let mut env = setup();
    let (exec, process) = env.full();
    assert_timeout_kills_the_group(&mut env, &exec, true).await;

    let (id, pgid) = spawn_sleepers(&exec, json!({"pty": true})).await;
    act(&process, "kill", &id).await.unwrap();
    assert_group_gone(pgid).await;
    assert_eq!(
        act(&process, "poll", &id).await.unwrap().details.unwrap()["status"],
        "failed"
    );
}
