//! Files, media and pairing against a real `pincer gateway run` with the fake Telegram and the
//! mock LLM: a file a user sends is readable by the agent's `read`; a `MEDIA:` reply cannot
//! mail out `/etc/passwd` or a temp file that was there before the turn (a workspace file
//! still goes); a `read` of a FIFO is answered at once with an error; a stranger who keeps
//! writing gets one pairing code and the pairing file is written once.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use crate::common::Script as _;
use crate::common::channels::{channel_gateway_in, last_user_text};
use crate::common::gateway::Foreground;
use crate::common::{Home, last_tool_result, mock, replies};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::json;

const OWNER: i64 = 1001;
/// Upper bound for what takes well under a second; only a hang reaches it.
const T: Duration = Duration::from_secs(20);

/// A gateway whose Telegram bot is the fake, in UTC (the inbox's date is local), with the
/// owner allowed and strangers paired.
fn gateway(llm: &MockLlm, fake: &FakeTelegram) -> (Home, Foreground) {
    channel_gateway_in(
        Home::new()
            .with_env("PINCER_TELEGRAM_POLL_SECS", "1")
            .with_env("TZ", "UTC"),
        llm,
        "0m",
        &format!(
            "telegram: {{ botToken: \"{}\", apiBaseUrl: \"{}\", allowFrom: [\"{OWNER}\"] }}",
            fake.token(),
            fake.base_url()
        ),
    )
}

fn workspace(home: &Home) -> std::path::PathBuf {
    let dir = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Today's and tomorrow's UTC dates: the inbox directory is one of them even if the test
/// runs across midnight.
fn inbox_dates() -> [String; 2] {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let tomorrow = today.tomorrow().unwrap();
    [today.to_string(), tomorrow.to_string()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_a_user_sends_is_readable_by_the_agent() {
    let mut scenario = Scenario::new();
    for date in inbox_dates() {
        let path = format!("inbox/{date}/numbers.txt");
        scenario = scenario.rule(
            Rule::when(Match::last_user_contains(format!(
                "[media attached: {path} ("
            )))
            .reply(Reply::tool_call("read", json!({ "path": path }))),
        );
    }
    let llm =
        mock(scenario.rule(Rule::when(Match::tool_result("read")).reply(Reply::text("read it"))))
            .await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(&llm, &fake);

    let file = fake.register_file(b"quarterly numbers\n".to_vec(), "numbers.txt");
    fake.inject_message(InjectMessage::private(OWNER, "").with_document(file));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].text, "read it", "{:?}", last_user_text(&llm));
    assert_eq!(last_tool_result(&llm), "     1\tquarterly numbers");
    // In the workspace, private, and gone from the staging directory.
    let prompt = last_user_text(&llm);
    let shown = prompt
        .strip_prefix("[media attached: ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap();
    let stored = workspace(&home).join(shown);
    assert_eq!(stored.metadata().unwrap().mode() & 0o777, 0o600);
    assert_eq!(
        stored.parent().unwrap().metadata().unwrap().mode() & 0o777,
        0o700
    );
    let staged = std::fs::read_dir(home.path().join("media/staging"))
        .unwrap()
        .count();
    assert_eq!(staged, 0);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_replies_send_only_workspace_files_and_this_turns_temp_files() {
    // A file in the temp directory made before the turn (someone else's, or a secret put
    // there earlier).
    let old_temp = tempfile::Builder::new()
        .prefix("pincer-security-")
        .tempfile_in("/tmp")
        .unwrap();
    std::fs::write(old_temp.path(), "not for the chat").unwrap();
    // "Before the turn" for sure: past the gateway's allowance for coarse file times.
    let meta = std::fs::metadata(old_temp.path()).unwrap();
    let made = Duration::new(
        u64::try_from(meta.ctime()).unwrap(),
        u32::try_from(meta.ctime_nsec()).unwrap(),
    );
    let settled = std::time::UNIX_EPOCH + made + pincer_turns::media_reply::FS_CLOCK_SLACK * 5;
    while std::time::SystemTime::now() < settled {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let old_temp_path = old_temp.path().to_str().unwrap().to_owned();
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("send the secrets")).reply(Reply::text(format!(
                    "Sure.\nMEDIA:/etc/passwd\nMEDIA:{old_temp_path}"
                ))),
            )
            .rule(
                Rule::when(Match::last_user("send the report"))
                    .reply(Reply::text("Here.\nMEDIA:report.txt")),
            ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(&llm, &fake);
    std::fs::write(workspace(&home).join("report.txt"), "the report").unwrap();

    fake.inject_message(InjectMessage::private(OWNER, "send the secrets"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(
        sent[0].plain_text,
        format!(
            "Sure.\n\n(not sent: /etc/passwd is outside the agent's workspace)\n\n(not sent: \
             {old_temp_path} is outside the agent's workspace and was not made by this reply)"
        )
    );
    // The report afterwards proves the refused files were not merely late.
    fake.inject_message(InjectMessage::private(OWNER, "send the report"));
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].bytes, b"the report");
    fake.wait_for_messages(2, T).await;
    assert_eq!(fake.sent_files().len(), 1, "only the report");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_a_fifo_is_answered_at_once_with_an_error() {
    let llm = mock(Scenario::new().tool_turn(
        "read the pipe",
        "read",
        json!({"path": "pipe"}),
        "could not",
    ))
    .await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(&llm, &fake);
    let pipe = workspace(&home).join("pipe");
    nix::unistd::mkfifo(&pipe, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

    fake.inject_message(InjectMessage::private(OWNER, "read the pipe"));
    let sent = fake.wait_for_messages(1, T).await;
    if sent.is_empty() {
        // Let a blocked reader go so the gateway can stop; the test fails either way.
        let _ = std::fs::OpenOptions::new().write(true).open(&pipe);
        panic!("no answer: the read blocked on the FIFO");
    }
    assert_eq!(sent[0].text, "could not");
    assert_eq!(
        last_tool_result(&llm),
        "pipe is a named pipe (FIFO); only regular files can be read"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_who_keeps_writing_gets_one_code_and_one_write() {
    let llm = mock(replies(&[("ping", "pong")])).await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(&llm, &fake);
    let stranger = 2002;

    fake.inject_message(InjectMessage::private(stranger, "hi"));
    let sent = fake.wait_for_messages(1, T).await;
    assert!(
        sent[0].plain_text.contains("Pairing code: "),
        "{}",
        sent[0].plain_text
    );
    let file = home.path().join("credentials/telegram-pairing.json");
    let first = std::fs::metadata(&file).unwrap();

    fake.inject_message(InjectMessage::private(stranger, "hi?"));
    fake.inject_message(InjectMessage::private(stranger, "hello??"));
    // Messages are taken in order: once the owner's ping is answered, both repeats were
    // handled (and any code they sent was on its way before the ping's turn began).
    fake.inject_message(InjectMessage::private(OWNER, "ping"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].text, "pong");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent = fake.sent_messages();
    let to_stranger = sent.iter().filter(|m| m.chat_id == stranger).count();
    assert_eq!(to_stranger, 1, "{sent:?}");
    let now = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (now.ino(), now.mtime(), now.mtime_nsec()),
        (first.ino(), first.mtime(), first.mtime_nsec()),
        "the pairing file is not rewritten"
    );
    drop(gateway);
}
