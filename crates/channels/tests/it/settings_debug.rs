//! Every adapter's settings print without their credentials (`{:?}` reaches logs): their
//! `Debug` is derived and each credential is a `Secret`, so no hand-written impl can forget one.

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
    }
    // Derived `Debug`: every credential field is a `Secret` and prints as `Secret(***)`.
    assert_eq!(
        printed[0],
        "TelegramSettings { account_id: Some(\"work\"), bot_token: Secret(***), \
         api_base: \"https://api.telegram.org\", state_dir: \"/s\", media_dir: \"/m\", \
         media_max_bytes: 1, poll_timeout: 30s }"
    );
    assert_eq!(
        printed[1],
        "DiscordSettings { account_id: None, token: Secret(***), \
         api_base: \"https://discord.com\", media_dir: \"/m\", media_max_bytes: 1 }"
    );
    assert_eq!(
        printed[2],
        "SlackSettings { account_id: None, bot_token: Secret(***), app_token: Secret(***), \
         api_base: \"https://slack.com/api\", media_dir: \"/m\", media_max_bytes: 1 }"
    );
    assert_eq!(
        printed[3],
        format!(
            "FeishuSettings {{ account_id: None, app_id: \"cli_a\", app_secret: Secret(***), \
             api_base: \"{}\", mode: LongConnection, verification_token: Some(Secret(***)), \
             encrypt_key: Some(Secret(***)), media_dir: \"/m\", media_max_bytes: 1 }}",
            feishu::FEISHU_API_BASE
        )
    );
}
