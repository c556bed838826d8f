//! Finding 9: secrets in a config are never printed. `pincer config get` (and WS
//! `config.get`, which shares the redaction) mask every value under `headers` and `env`
//! objects and keys naming passwords, cookies, credentials or private keys, besides
//! `*key` / `*token` / `*secret`.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Ws;

use crate::common::Home;
use crate::common::gateway::{Foreground, free_port};

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
    let run = home.run_ok(&["config", "get", "models.providers.x.headers"]);
    assert_eq!(
        run.stdout(),
        "{\n  \"Cookie\": \"ses***lue\",\n  \"X-Auth\": \"xau***r3t\",\n  \"X-Trace\": \"***\"\n}\n"
    );
    let run = home.run_ok(&["config", "get", "models.providers.x.headers.X-Auth"]);
    assert_eq!(run.stdout(), "xau***r3t\n");
}

#[test]
fn config_get_of_the_whole_document_prints_no_secret() {
    let home = home();
    let run = home.run_ok(&["config", "get"]);
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

/// The next text frame of `ws` as JSON (bounded wait).
async fn next_json<S>(ws: &mut S) -> Value
where
    S: futures_util::Stream<Item = Result<Ws, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a frame within 20 s")
            .expect("the connection stays open")
            .unwrap();
        if let Ws::Text(text) = frame {
            return serde_json::from_str(&text).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_config_get_masks_headers_like_the_cli() {
    let home = Home::new();
    let port = free_port();
    home.write_config(&CONFIG.replacen(
        "gateway: { auth:",
        &format!("gateway: {{ port: {port}, auth:"),
        1,
    ));
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap();
    let challenge = next_json(&mut ws).await;
    assert_eq!(challenge["event"], "connect.challenge", "{challenge}");
    let connect = json!({"type": "req", "id": "1", "method": "connect", "params": {
        "minProtocol": 3, "maxProtocol": 4,
        "client": {"id": "test", "version": "1", "platform": "linux", "mode": "test"},
        "auth": {"token": "gw-token-0123456789"}, "role": "operator",
        // Read scope is enough (OpenClaw's, as its CLI connects): what it shows is masked.
        "scopes": ["operator.read"]}});
    ws.send(Ws::text(connect.to_string())).await.unwrap();
    let get = json!({"type": "req", "id": "2", "method": "config.get", "params": {}});
    ws.send(Ws::text(get.to_string())).await.unwrap();
    let response = loop {
        let frame = next_json(&mut ws).await;
        if frame["type"] == "res" && frame["id"] == "1" {
            assert_eq!(frame["ok"], true, "{frame}");
        }
        if frame["type"] == "res" && frame["id"] == "2" {
            break frame;
        }
    };
    let config = &response["payload"]["config"];
    assert_eq!(
        config["models"]["providers"]["x"]["headers"],
        json!({"Cookie": "ses***lue", "X-Auth": "xau***r3t", "X-Trace": "***"}),
        "{response}"
    );
    let text = response.to_string();
    for secret in [
        "s3cr3t-cookie",
        "xauth-s3cr3t",
        "sk-live-0123456789",
        "gw-token-0123456789",
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}
