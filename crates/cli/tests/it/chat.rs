//! `pincer chat` as a user runs it: on a real terminal (a pty: the line editor, streamed
//! replies, the chat commands, Ctrl-C, Ctrl-D, the history file and the up arrow), from a
//! pipe (one message a line), and through a running gateway (`--url`, `--token`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use pincer_testkit::{Match, Reply, Rule, Scenario};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::common::gateway::{Foreground, gateway_home};
use crate::common::{Home, Script as _, long_story, mock, mode, replies};

const NOTICE: &str = "(This reply comes from Pincer's offline stub model, not a real LLM. To use a real model, set an API key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY and choose a model, e.g. anthropic/claude-sonnet-4-5.)";

/// `pincer chat …` on a pty, with everything it printed so far (escape sequences removed).
struct Terminal {
    reader: pty_process::OwnedReadPty,
    writer: pty_process::OwnedWritePty,
    child: tokio::process::Child,
    /// All output, as text without terminal escapes.
    screen: String,
    /// How much of `screen` [`Terminal::expect`] has consumed.
    seen: usize,
}

impl Terminal {
    fn spawn(home: &Home, args: &[&str]) -> Self {
        let (pty, pts) = pty_process::open().unwrap();
        pty.resize(pty_process::Size::new(40, 200)).unwrap();
        let mut command = home.command(args);
        command.env("TERM", "xterm-256color");
        let child = pty_process::Command::from(tokio::process::Command::from(command))
            .kill_on_drop(true)
            .spawn(pts)
            .unwrap();
        let (reader, writer) = pty.into_split();
        Self {
            reader,
            writer,
            child,
            screen: String::new(),
            seen: 0,
        }
    }

    /// Waits until the output after what was already expected holds `needle`; returns
    /// that output up to the end of `needle`.
    async fn expect(&mut self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(at) = self.screen[self.seen..].find(needle) {
                let end = self.seen + at + needle.len();
                let out = self.screen[self.seen..end].to_owned();
                self.seen = end;
                return out;
            }
            let mut buf = [0u8; 4096];
            let read = tokio::time::timeout_at(deadline, self.reader.read(&mut buf))
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no {needle:?} on the terminal; after the last match:\n{}",
                        &self.screen[self.seen..]
                    )
                })
                .unwrap_or(0);
            assert!(
                read > 0,
                "the terminal closed before {needle:?}:\n{}",
                &self.screen[self.seen..]
            );
            self.screen
                .push_str(&strip_escapes(&String::from_utf8_lossy(&buf[..read])));
        }
    }

    /// Types `keys`.
    async fn type_keys(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Types a line and presses Enter.
    async fn enter(&mut self, line: &str) {
        self.type_keys(&format!("{line}\r")).await;
    }

    /// Enters `line`, waits for `reply`, then for the next prompt.
    async fn say(&mut self, line: &str, reply: &str) {
        self.enter(line).await;
        self.expect(reply).await;
        self.prompt().await;
    }

    /// Waits for the prompt.
    async fn prompt(&mut self) {
        self.expect("> ").await;
    }

    /// Enters `line`, presses Ctrl-C once `part` of the reply has streamed, and waits for
    /// the run to end aborted and for the prompt.
    async fn abort_after(&mut self, line: &str, part: &str) {
        self.enter(line).await;
        self.expect(part).await;
        self.type_keys("\x03").await;
        self.expect("[aborted]\n").await;
        self.prompt().await;
    }

    /// Types `keys` (Ctrl-D, or the second Ctrl-C) and checks that the chat leaves with 0.
    async fn leave_with(mut self, keys: &str) {
        self.type_keys(keys).await;
        assert_eq!(self.exit_code().await, 0);
    }

    /// The exit code, waited for (bounded).
    async fn exit_code(mut self) -> i32 {
        // Drained so the child never blocks on a full terminal.
        let drain = async {
            let mut buf = [0u8; 4096];
            while let Ok(n) = self.reader.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        };
        let status = tokio::time::timeout(Duration::from_secs(30), async {
            tokio::select! {
                status = self.child.wait() => status.unwrap(),
                () = async { drain.await; std::future::pending().await } => unreachable!(),
            }
        })
        .await
        .expect("pincer chat did not exit");
        status.code().unwrap_or(-1)
    }
}

/// `text` without CSI/OSC escape sequences and carriage returns.
fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for c in chars.by_ref() {
                        if c == '\x07' {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// The lines of `text` with their ends trimmed, empty ones dropped.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.trim_end().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_chat_streams_replies_and_runs_the_commands() {
    let (_llm, home) = Home::on_script(
        replies(&[
            ("hello", "Hi! How can I help?"),
            ("and now?", "Still here."),
        ])
        .rule(Rule::when(Match::last_user("line one\nline two")).reply(Reply::text("two lines"))),
    )
    .await;
    let mut term = Terminal::spawn(&home, &["chat"]);
    term.expect("session agent:main:main · /help for commands")
        .await;
    term.prompt().await;

    term.say("hello", "Hi! How can I help?\n").await;

    // A line ending in a backslash goes on on the next.
    term.enter("line one\\").await;
    term.say("line two", "two lines\n").await;

    term.enter("/status").await;
    let status = term.expect("runs:     in process").await;
    let status = lines(&status);
    let at = status
        .iter()
        .position(|l| l.starts_with("session:"))
        .unwrap();
    assert_eq!(status[at], "session:  agent:main:main");
    assert!(status[at + 1].starts_with("id:       "), "{status:?}");
    assert_eq!(
        status[at + 2..],
        [
            "model:    mock/primary",
            "thinking: off",
            status[at + 4].as_str(),
            "runs:     in process"
        ]
    );
    // Two turns' usage, as the mock reported it.
    assert!(
        status[at + 4].starts_with("tokens:   ") && status[at + 4].ends_with(" in context"),
        "{status:?}"
    );
    term.prompt().await;

    term.say("/think high", "thinking: high\n").await;
    term.say("/model mock/backup", "model: mock/backup\n").await;

    term.enter("/new").await;
    let new = term.expect("\n> ").await;
    assert!(new.contains("New session started. sessionId="), "{new}");
    term.enter("/sessions").await;
    let listed = term.expect(" tokens\n").await;
    let row = lines(&listed).pop().unwrap();
    assert!(row.starts_with("* agent:main:main "), "{row}");
    term.prompt().await;

    term.say("and now?", "Still here.\n").await;
    term.say(
        "/stop",
        "nothing is running (Ctrl-C stops a reply while it streams)\n",
    )
    .await;

    // Ctrl-D on an empty line leaves.
    term.leave_with("\x04").await;

    // The model and level set in the chat are the session's; /new kept them.
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.sessions_dir().join("sessions.json")).unwrap(),
    )
    .unwrap();
    let entry = &index["agent:main:main"];
    assert_eq!(entry["model"], "mock/backup", "{index}");
    assert_eq!(entry["thinkingLevel"], "high", "{index}");

    // What was typed is in the history, private.
    let history = home.path().join("chat_history");
    assert_eq!(mode(&history), 0o600);
    let typed = std::fs::read_to_string(&history).unwrap();
    for line in ["hello", "/status", "/new", "and now?"] {
        assert!(typed.lines().any(|l| l == line), "{line:?} in {typed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_up_arrow_brings_back_a_line_of_an_earlier_chat() {
    let home = Home::new();
    let mut term = Terminal::spawn(&home, &["chat"]);
    term.prompt().await;
    term.say(
        "first question",
        &format!("[offline stub] You said: first question\n\n{NOTICE}\n"),
    )
    .await;
    term.leave_with("\x04").await;

    let mut term = Terminal::spawn(&home, &["chat", "--session", "other"]);
    term.prompt().await;
    term.type_keys("\x1b[A").await;
    term.type_keys("\r").await;
    term.expect("[offline stub] You said: first question\n")
        .await;
    term.prompt().await;
    term.leave_with("\x04").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_aborts_a_streaming_reply_and_twice_at_the_prompt_leaves() {
    let (_llm, home) = Home::on_script(Scenario::new().rule(long_story(150))).await;
    let mut term = Terminal::spawn(&home, &["chat"]);
    term.prompt().await;
    term.abort_after("long story", "once").await;

    // The part that arrived is kept in the session, the rest never came.
    let export = home.run_ok(&["sessions", "export", "main"]).stdout();
    assert!(export.contains("once"), "{export}");
    assert!(!export.contains("very long story"), "{export}");

    term.type_keys("\x03").await;
    term.expect("(Ctrl-C again or Ctrl-D to leave)\n").await;
    term.prompt().await;
    term.leave_with("\x03").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_chat_answers_each_line() {
    let (_llm, home) = Home::on_script(replies(&[
        ("hello", "Hi!"),
        ("again", "Hello again."),
        ("/nonsense command", "not a command"),
    ]))
    .await;
    let run = home.run_with_stdin(
        &["chat"],
        "hello\n\n/think low\n/think loud\n/model mock/nope\n/model\n/new\nagain\n/sessions\n\
         /nonsense command\n",
    );
    run.assert_ok();
    let out = run.stdout();
    // A command that fails says why; the chat goes on.
    assert_eq!(
        run.stderr(),
        "error: thinking level \"loud\" is not one of off, minimal, low, medium, high, xhigh\n\
         error: Unknown model \"mock/nope\": name one as provider/model (configured: \
         mock/primary, mock/backup).\n"
    );
    let lines = lines(&out);
    assert_eq!(lines[..3], ["Hi!", "thinking: low", "model: mock/primary"]);
    assert!(
        lines[3].starts_with("New session started. sessionId="),
        "{out}"
    );
    assert_eq!(lines[4], "Hello again.");
    assert!(lines[5].starts_with("* agent:main:main "), "{out}");
    // An unknown slash word is a message like any other.
    assert_eq!(lines[6..], ["not a command"], "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_chat_continues_lines_ending_in_a_backslash() {
    let (_llm, home) = Home::on_script(
        Scenario::new()
            .rule(Rule::when(Match::last_user("one\ntwo\nthree")).reply(Reply::text("got 3"))),
    )
    .await;
    let run = home.run_with_stdin(&["chat"], "one\\\ntwo\\\nthree\n");
    run.assert_ok();
    assert_eq!(run.stdout(), "got 3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_through_the_gateway() {
    let llm = mock(replies(&[("hello", "Hi from the gateway.")]).rule(long_story(150))).await;
    let (home, port) = gateway_home(&llm, "tok-chat");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let url = format!("ws://127.0.0.1:{port}/");

    // A wrong token is refused, with the gateway's words.
    let refused = home.run(&["chat", "--url", &url, "--token", "nope"]);
    assert_eq!(refused.code(), 1, "{}", refused.stderr());
    assert!(
        refused.stderr().contains("refused the connection"),
        "{}",
        refused.stderr()
    );

    let run = home.run_with_stdin(
        &["chat", "--url", &url, "--token", "tok-chat"],
        "hello\n/think medium\n/model\n/status\n/stop\n/new\n/sessions\n",
    );
    run.assert_ok();
    let out = run.stdout();
    let lines = lines(&out);
    assert_eq!(
        lines[..3],
        [
            "Hi from the gateway.",
            "thinking: medium",
            "model: mock/primary"
        ],
        "{out}"
    );
    assert_eq!(lines[3], "session:  agent:main:main");
    assert!(lines[4].starts_with("id:       "), "{out}");
    assert_eq!(lines[5..7], ["model:    mock/primary", "thinking: medium"]);
    assert!(lines[7].starts_with("tokens:   "), "{out}");
    assert_eq!(
        lines[8..10],
        [
            format!("runs:     gateway {url}"),
            "nothing is running on this session".to_owned(),
        ]
    );
    assert!(
        lines[10].starts_with("New session started. sessionId="),
        "{out}"
    );
    assert!(lines[11].starts_with("* agent:main:main "), "{out}");

    // Ctrl-C on a terminal aborts the gateway's run (chat.abort).
    let mut term = Terminal::spawn(&home, &["chat", "--url", &url, "--token", "tok-chat"]);
    term.prompt().await;
    term.abort_after("long story", "once").await;
    term.leave_with("\x04").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_show_as_one_line_each() {
    let (_llm, home) = Home::on_script(Scenario::new().tool_turn(
        "read my note",
        "read",
        serde_json::json!({"path": "note.txt"}),
        "Your note says hello.",
    ))
    .await;
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("note.txt"), "hello\nfrom the note\n").unwrap();
    let run = home.run_with_stdin(&["chat"], "read my note\n");
    run.assert_ok();
    assert_eq!(run.stdout(), "Your note says hello.\n");
    assert_eq!(
        run.stderr(),
        "→ read {\"path\":\"note.txt\"}\n← read ok: 1 hello 2 from the note\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_whose_gateway_goes_away_ends_with_1() {
    use std::io::{BufRead as _, Write as _};
    let llm = mock(replies(&[("hello", "Hi from the gateway.")])).await;
    let (home, port) = gateway_home(&llm, "tok-chat");
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let url = format!("ws://127.0.0.1:{port}/");
    let mut chat = home.spawn_piped(&["chat", "--url", &url, "--token", "tok-chat"]);
    let mut stdin = chat.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(chat.stdout.take().unwrap());
    stdin.write_all(b"hello\n").unwrap();
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    assert_eq!(reply, "Hi from the gateway.\n");

    drop(gateway);
    stdin.write_all(b"/status\n/status\n").unwrap();
    drop(stdin);
    let output = chat.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Said once: the chat ended at the first failure. (Killed, the gateway closed nothing:
    // the connection was reset.)
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with(&format!("error: the connection to {url} failed: ")),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_chat_answers_usage_queue_verbose_and_compacts() {
    let usage = pincer_testkit::UsageSpec {
        input: Some(1000),
        output: Some(200),
        ..Default::default()
    };
    let summary = "The user said hello.";
    let llm = mock(
        crate::common::answers([
            ("hello", Reply::text("Hi!").with_usage(usage)),
            ("and now?", Reply::text("Still here.").with_usage(usage)),
        ])
        .rule(
            Rule::when(Match::last_user_contains("Additional focus: the greeting"))
                .reply(Reply::text(summary)),
        ),
    )
    .await;
    let home = Home::new();
    // A compaction keeps about 4 tokens: all of the first exchange (3), the second of two.
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\", compaction: { keepRecentTokens: 4 } } },",
    );
    let mut term = Terminal::spawn(&home, &["chat"]);
    term.prompt().await;
    term.say("hello", "Hi!\n").await;
    term.say("/queue followup", "queue: followup\n").await;
    term.say("/verbose on", "verbose: on\n").await;
    term.enter("/usage").await;
    let usage = lines(&term.expect("context:    1200\n").await);
    assert_eq!(
        usage[usage.len() - 6..],
        [
            "replies:    1",
            "tokens in:  1000",
            "tokens out: 200",
            "cache:      0 read, 0 written",
            "cost:       $0.0000",
            "context:    1200"
        ]
    );
    term.prompt().await;
    term.say(
        "/compact",
        "⚙️ Compaction skipped: nothing compactable in this session yet • Context 1.2k/128k (1%)\n",
    )
    .await;
    term.say("and now?", "Still here.\n").await;
    // The summary and the kept exchange, chars / 4 each.
    let tokens = |text: &str| (text.chars().count() as u64).div_ceil(4);
    let after = tokens(&format!(
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{summary}\n</summary>"
    )) + tokens("and now?")
        + tokens("Still here.");
    term.say(
        "/compact the greeting",
        &format!("⚙️ Compacted (1.2k → {after}) • Context {after}/128k (0%)\n"),
    )
    .await;
    term.leave_with("\x04").await;
    let asked = llm.requests().last().unwrap().body.to_string();
    assert!(asked.contains("[User]: hello"), "{asked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_compaction_and_nothing_is_compacted() {
    let usage = pincer_testkit::UsageSpec {
        input: Some(1000),
        output: Some(200),
        ..Default::default()
    };
    let llm = mock(
        crate::common::answers([
            ("hello", Reply::text("Hi!").with_usage(usage)),
            ("and now?", Reply::text("Still here.").with_usage(usage)),
        ])
        .rule(
            Rule::when(Match::last_user_contains("summary")).reply(
                Reply::text("a summary that takes its time")
                    .with_chunk_size(2)
                    .with_delay_ms(300),
            ),
        ),
    )
    .await;
    let home = Home::new();
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\", compaction: { keepRecentTokens: 4 } } },",
    );
    let mut term = Terminal::spawn(&home, &["chat"]);
    term.prompt().await;
    term.say("hello", "Hi!\n").await;
    term.say("and now?", "Still here.\n").await;
    term.enter("/compact").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while llm.requests().len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "no summary request");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    term.type_keys("\x03").await;
    term.expect("⚙️ Compaction failed: Compaction cancelled • Context 1.2k/128k (1%)\n")
        .await;
    term.prompt().await;
    term.leave_with("\x04").await;
    let transcript = std::fs::read_dir(home.sessions_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(transcript).unwrap();
    assert!(!text.contains("\"type\":\"compaction\""), "{text}");
}
