//! `pincer-fake-telegram`: serves the fake Telegram Bot API until SIGINT/SIGTERM.
//!
//! Prints `fake telegram listening on http://HOST:PORT`, then `bot token: TOKEN`. Each line
//! typed on stdin is injected as a private message from user `--chat-id`; the bot's messages
//! are printed as `bot -> CHAT: TEXT`. Over HTTP: `POST /__fake/inject {"text": …,
//! "chat_id"?: …}`, `POST /__fake/inject_raw <update>`, `GET /__fake/sent_messages`,
//! `GET /__fake/calls`.

// The server binaries' shared `--host`/`--port`, runtime, stdout lines and signal handling,
// kept once in pincer-testkit (this crate does not depend on it).
#[path = "../../../testkit/src/bin/support/mod.rs"]
mod support;

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use pincer_fakes::FakeTelegram;
use pincer_fakes::fake_telegram::{
    DEFAULT_BOT_USERNAME, DEFAULT_CHAT_ID, DEFAULT_TOKEN, FakeTelegramConfig, InjectMessage,
};
use support::print_line;

/// Fake Telegram Bot API server for testing Pincer's Telegram channel by hand.
#[derive(Debug, Parser)]
#[command(name = "pincer-fake-telegram", version)]
struct Args {
    #[command(flatten)]
    listen: support::Listen,
    /// The bot token the fake accepts.
    #[arg(long, default_value = DEFAULT_TOKEN)]
    token: String,
    /// The bot's username (without @).
    #[arg(long, default_value = DEFAULT_BOT_USERNAME)]
    username: String,
    /// The private chat (and user) stdin lines come from.
    #[arg(long, default_value_t = DEFAULT_CHAT_ID)]
    chat_id: i64,
}

fn main() -> ExitCode {
    support::exit_code("pincer-fake-telegram", run(Args::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    let addr = args.listen.resolve()?;
    support::block_on(serve(args, addr))
}

async fn serve(args: Args, addr: SocketAddr) -> anyhow::Result<()> {
    let config = FakeTelegramConfig::default()
        .token(args.token)
        .bot_username(args.username)
        .addr(addr);
    let fake = FakeTelegram::try_start_with(config).await?;
    print_line(&format!("fake telegram listening on {}", fake.base_url()))?;
    print_line(&format!("bot token: {}", fake.token()))?;

    // Stdin lines become messages; a closed stdin just stops this thread.
    let injector = fake.clone();
    let chat_id = args.chat_id;
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            injector.inject_message(InjectMessage::private(chat_id, line));
        }
    });

    let printer = fake.clone();
    let echo = tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let sent = printer
                .wait_for_messages(seen + 1, Duration::from_secs(3600))
                .await;
            for message in sent.iter().skip(seen) {
                let _ = print_line(&format!("bot -> {}: {}", message.chat_id, message.text));
            }
            seen = seen.max(sent.len());
        }
    });

    support::wait_for_signal().await?;
    echo.abort();
    fake.stop();
    Ok(())
}
