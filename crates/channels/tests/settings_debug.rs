//! Every adapter's settings print without their credentials (`{:?}` reaches logs).
#![cfg(all(
    feature = "telegram",
    feature = "discord",
    feature = "slack",
    feature = "feishu"
))]

use std::path::PathBuf;
use std::time::Duration;

use pincer_channels::{discord, feishu, slack, telegram};

const SECRETS: [&str; 6] = [
    "tg-SECRET",
    "dc-SECRET",
    "xoxb-SECRET",
    "xapp-SECRET",
    "fs-SECRET",
    "enc-SECRET",
];

#[test]
fn settings_never_print_credentials() {
    let printed = [
        format!(
            "{:?}",
            telegram::TelegramSettings {
                account_id: Some("work".into()),
                bot_token: "tg-SECRET".into(),
                api_base: "https://api.telegram.org".into(),
                state_dir: PathBuf::from("/s"),
                media_dir: PathBuf::from("/m"),
                media_max_bytes: 1,
                poll_timeout: Duration::from_secs(30),
            }
        ),
        format!(
            "{:?}",
            discord::DiscordSettings {
                account_id: None,
                token: "dc-SECRET".into(),
                api_base: "https://discord.com".into(),
                media_dir: PathBuf::from("/m"),
                media_max_bytes: 1,
            }
        ),
        format!(
            "{:?}",
            slack::SlackSettings {
                account_id: None,
                bot_token: "xoxb-SECRET".into(),
                app_token: "xapp-SECRET".into(),
                api_base: "https://slack.com/api".into(),
                media_dir: PathBuf::from("/m"),
                media_max_bytes: 1,
            }
        ),
        format!(
            "{:?}",
            feishu::FeishuSettings {
                account_id: None,
                app_id: "cli_a".into(),
                app_secret: "fs-SECRET".into(),
                api_base: feishu::FEISHU_API_BASE.into(),
                mode: feishu::FeishuMode::LongConnection,
                verification_token: Some("fs-SECRET".into()),
                encrypt_key: Some("enc-SECRET".into()),
                media_dir: PathBuf::from("/m"),
                media_max_bytes: 1,
            }
        ),
    ];
    for text in &printed {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("<redacted>"), "{text}");
    }
    assert!(
        printed[0].contains("account_id: Some(\"work\")"),
        "{}",
        printed[0]
    );
    assert!(printed[3].contains("app_id: \"cli_a\""), "{}", printed[3]);
}
