//! Files sent with `chat.send` and `agent` in OpenClaw's `attachments` shape (what the
//! Control UI sends: `{type, mimeType, fileName, content: <base64>}`), over a real
//! WebSocket: the file lands in the agent's workspace inbox (same bytes, 0600), the model
//! gets the image part of its wire API and the note naming the file, and a bad attachment
//! is refused with `INVALID_REQUEST` before anything is written or any run starts.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::*;

const KEY: &str = "agent:main:main";

/// A whole one-pixel PNG: the gateway decodes pictures before a model gets them.
const PNG: &[u8] = pincer_testkit::files::PIXEL_PNG;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn png_attachment(name: &str) -> Value {
    json!({"type": "image", "mimeType": "image/png", "fileName": name, "content": b64(PNG)})
}

fn today() -> String {
    jiff::Zoned::now().strftime("%Y-%m-%d").to_string()
}

fn workspace(server: &Server) -> PathBuf {
    server.dir.path().join("workspace")
}

/// A server whose model answers anything with `a cat`, agent `main`'s media limit
/// `media_max_mb` MB (the default when `None`), and a client with write scope.
async fn start_media(media_max_mb: Option<u64>) -> (Server, Client) {
    let mut config = support::test_config();
    config.agents.defaults.media_max_mb = media_max_mb;
    let scenario = Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("a cat")));
    let running = support::start_server_configured(scenario, TOKEN, config, |_| {}).await;
    let server = Server {
        url: format!("ws://{}/", running.addr),
        stop: running.stop,
        task: running.task,
        llm: running.llm,
        dir: running.dir,
    };
    let (client, _) = Client::connect(&server.url, &["operator.write", "operator.read"]).await;
    (server, client)
}

/// The content of the last user message the model was sent.
fn last_user_content(server: &Server) -> Value {
    let requests = server.llm.requests();
    let body = &requests.last().expect("a model request").body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].clone()
}

/// What the model gets for `text` with the PNG saved as `inbox/<today>/<name>`.
fn png_user_content(name: &str, text: &str) -> Value {
    json!([
        {"type": "text",
         "text": format!("[media attached: inbox/{}/{name} (image/png)]\n{text}", today())},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(PNG))}},
    ])
}

/// The file `inbox/<today>/<name>` of the workspace holds the PNG, readable only by its owner.
fn assert_saved_png(workspace: &Path, name: &str) {
    let path = workspace.join("inbox").join(today()).join(name);
    assert_eq!(std::fs::read(&path).unwrap(), PNG, "{}", path.display());
    assert_eq!(
        std::fs::metadata(&path).unwrap().mode() & 0o777,
        0o600,
        "{}",
        path.display()
    );
}

/// The names of the files in the workspace's inbox (all days), sorted.
fn inbox_files(workspace: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let Ok(days) = std::fs::read_dir(workspace.join("inbox")) else {
        return names;
    };
    for day in days {
        for file in std::fs::read_dir(day.unwrap().path()).unwrap() {
            names.push(file.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    names
}

/// Waits for run `run_id`'s `chat` final.
async fn until_final(client: &mut Client, run_id: &str) {
    let frames = client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == run_id
                && f["payload"]["state"] == "final"
        })
        .await;
    let last = frames.last().expect("a chat final");
    assert_eq!(last["payload"]["state"], "final", "{last}");
}

#[tokio::test]
async fn a_png_sent_with_chat_send_reaches_the_model_as_an_image_and_lands_in_the_inbox() {
    let (server, mut client) = start_media(None).await;
    let params = json!({"sessionKey": KEY, "message": "what is this?", "idempotencyKey": "r-1",
                        "attachments": [png_attachment("cat photo.png")]});
    let sent = client.ok("chat.send", params).await;
    assert_eq!(sent["runId"], "r-1");
    until_final(&mut client, "r-1").await;
    assert_eq!(
        last_user_content(&server),
        png_user_content("cat_photo.png", "what is this?")
    );
    assert_saved_png(&workspace(&server), "cat_photo.png");

    // Only a file, as a data URL with no name: OpenClaw takes a message without text then.
    let url = format!("data:image/png;base64,{}", b64(PNG));
    let params = json!({"sessionKey": KEY, "message": "", "idempotencyKey": "r-2",
                        "attachments": [{"content": url}]});
    client.ok("chat.send", params).await;
    until_final(&mut client, "r-2").await;
    assert_eq!(
        last_user_content(&server),
        png_user_content("attachment-1.png", "")
    );
    assert_saved_png(&workspace(&server), "attachment-1.png");
    // A retry of a run the gateway knows writes nothing again.
    let params = json!({"sessionKey": KEY, "message": "", "idempotencyKey": "r-2",
                        "attachments": [{"content": url}]});
    client.ok("chat.send", params).await;
    assert_eq!(
        inbox_files(&workspace(&server)),
        ["attachment-1.png", "cat_photo.png"]
    );
    assert_eq!(server.llm.requests().len(), 2);
}

#[tokio::test]
async fn a_png_sent_with_agent_reaches_the_model_as_an_image() {
    let (server, mut client) = start_media(None).await;
    let accepted = client
        .call(
            "agent",
            json!({"message": "and this?", "idempotencyKey": "a-1",
                   "attachments": [png_attachment("dog.png")]}),
        )
        .await;
    assert_eq!(accepted["payload"]["status"], "accepted", "{accepted}");
    let id = accepted["id"].as_str().unwrap().to_owned();
    let last = client.response(&id).await;
    assert_eq!(last["payload"]["result"]["payloads"][0]["text"], "a cat");
    assert_eq!(
        last_user_content(&server),
        png_user_content("dog.png", "and this?")
    );
    assert_saved_png(&workspace(&server), "dog.png");
}

#[tokio::test]
async fn bad_attachments_are_refused_before_anything_is_written_or_run() {
    let (server, mut client) = start_media(Some(1)).await;
    let good = png_attachment("good.png");
    let one_mb = 1024 * 1024;
    let cases = [
        (
            json!([good, {"fileName": "a.png", "content": "not base64!"}]),
            "attachment a.png: content is not valid base64",
        ),
        (
            json!([good, {"fileName": "big.bin", "content": b64(&vec![7u8; one_mb + 1])}]),
            "attachment big.bin: 1048577 bytes is over the limit of 1048576 bytes (agents.defaults.mediaMaxMb)",
        ),
        (
            Value::Array(vec![good.clone(); 11]),
            "at most 10 attachments per message, got 11",
        ),
        (
            json!([{"type": 5, "content": b64(PNG)}]),
            "attachment attachment-1: type must be a string",
        ),
        (
            json!([{"type": "image", "mimeType": "image/png"}]),
            "attachment image: content must be a base64 string",
        ),
        (json!([]), "message or attachment required"),
    ];
    for (i, (attachments, message)) in cases.iter().enumerate() {
        let run_id = format!("bad-{i}");
        let res = client
            .call(
                "chat.send",
                json!({"sessionKey": KEY, "message": "", "idempotencyKey": run_id,
                       "attachments": attachments}),
            )
            .await;
        assert_eq!(
            (&res["ok"], &res["error"]["code"], &res["error"]["message"]),
            (&json!(false), &json!("INVALID_REQUEST"), &json!(message)),
            "chat.send {i}: {res}"
        );
        if attachments == &json!([]) {
            continue; // `agent` needs text anyway: no attachments is just no files.
        }
        let res = client
            .call(
                "agent",
                json!({"message": "look", "idempotencyKey": format!("agent-{run_id}"),
                       "attachments": attachments}),
            )
            .await;
        assert_eq!(
            (&res["ok"], &res["error"]["code"], &res["error"]["message"]),
            (&json!(false), &json!("INVALID_REQUEST"), &json!(message)),
            "agent {i}: {res}"
        );
    }
    assert_eq!(server.llm.requests().len(), 0);
    assert_eq!(inbox_files(&workspace(&server)), Vec::<String>::new());
    let history = client.ok("chat.history", json!({"sessionKey": KEY})).await;
    assert_eq!(history["messages"], json!([]));

    // The limit itself is allowed.
    let params = json!({"sessionKey": KEY, "message": "", "idempotencyKey": "ok-1",
                        "attachments": [{"fileName": "max.bin", "content": b64(&vec![7u8; one_mb])}]});
    client.ok("chat.send", params).await;
    until_final(&mut client, "ok-1").await;
    assert_eq!(inbox_files(&workspace(&server)), ["max.bin"]);
    assert_eq!(
        content_text(&last_user_content(&server)),
        format!(
            "[media attached: inbox/{}/max.bin (application/octet-stream)]\n",
            today()
        )
    );
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn chat_media_get_hands_out_workspace_files_only() {
    let (server, mut client) = start_media(Some(1)).await;
    let ws = workspace(&server);
    std::fs::create_dir_all(ws.join("out")).unwrap();
    std::fs::write(ws.join("out/chart.png"), PNG).unwrap();
    std::fs::write(ws.join("big.bin"), vec![0u8; 1024 * 1024 + 1]).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.join("link")).unwrap();
    let get = |path: &str| json!({"sessionKey": "agent:main:main", "path": path});
    let file = client.ok("chat.media.get", get("out/chart.png")).await;
    assert_eq!(
        file,
        json!({"path": "out/chart.png", "fileName": "chart.png", "mimeType": "image/png",
               "size": PNG.len(), "content": b64(PNG)})
    );
    let ws_shown = ws.display();
    let refusals = [
        (
            "/etc/passwd",
            "(not sent: /etc/passwd is outside the agent's workspace)".to_owned(),
        ),
        (
            "link",
            format!("(not sent: {ws_shown}/link is outside the agent's workspace)"),
        ),
        (
            "nope.txt",
            format!("(not sent: {ws_shown}/nope.txt: no such file)"),
        ),
        (
            "out",
            format!("(not sent: {ws_shown}/out is not a regular file)"),
        ),
        (
            "big.bin",
            format!(
                "(not sent: {}/big.bin is over the limit of 1 MB)",
                ws.canonicalize().unwrap().display()
            ),
        ),
    ];
    for (path, message) in refusals {
        let res = client.call("chat.media.get", get(path)).await;
        assert_eq!(
            (&res["error"]["code"], res["error"]["message"].as_str()),
            (&json!("INVALID_REQUEST"), Some(message.as_str())),
            "{path}"
        );
    }
    let res = client
        .call("chat.media.get", json!({"sessionKey": "agent:main:main"}))
        .await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
}
