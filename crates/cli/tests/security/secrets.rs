//! Finding 9: secrets in a config are never printed. `pincer config get` (and WS
//! `config.get`, which shares the redaction) mask every value under `headers` and `env`
//! objects and keys naming passwords, cookies, credentials or private keys, besides
//! `*key` / `*token` / `*secret`.

use crate::common::Home;

const CONFIG: &str = r#"{
  models: { providers: { x: {
    baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "sk-live-0123456789",
    headers: { Cookie: "session=s3cr3t-cookie-value", "X-Auth": "xauth-s3cr3t", "X-Trace": "1" },
    models: [{ id: "m" }],
  } } },
  gateway: { auth: { token: "gw-token-0123456789" } },
  channels: { telegram: { botToken: "123456:telegram-s3cr3t" } },
}"#;

fn home() -> Home {
    let home = Home::new();
    home.write_config(CONFIG);
    home
}

#[test]
fn config_get_masks_every_header_value() {
    let home = home();
    let run = home.run(&["config", "get", "models.providers.x.headers"]);
    run.assert_ok();
    assert_eq!(
        run.stdout(),
        "{\n  \"Cookie\": \"ses***lue\",\n  \"X-Auth\": \"xau***r3t\",\n  \"X-Trace\": \"***\"\n}\n"
    );
    let run = home.run(&["config", "get", "models.providers.x.headers.X-Auth"]);
    run.assert_ok();
    assert_eq!(run.stdout(), "xau***r3t\n");
}

#[test]
fn config_get_of_the_whole_document_prints_no_secret() {
    let home = home();
    let run = home.run(&["config", "get"]);
    run.assert_ok();
    assert_eq!(
        run.stdout(),
        r#"{
  "channels": {
    "telegram": {
      "botToken": "123***r3t"
    }
  },
  "gateway": {
    "auth": {
      "token": "gw-***789"
    }
  },
  "models": {
    "providers": {
      "x": {
        "api": "openai-completions",
        "apiKey": "sk-***789",
        "baseUrl": "http://127.0.0.1:9/v1",
        "headers": {
          "Cookie": "ses***lue",
          "X-Auth": "xau***r3t",
          "X-Trace": "***"
        },
        "models": [
          {
            "id": "m"
          }
        ]
      }
    }
  }
}
"#
    );
}
