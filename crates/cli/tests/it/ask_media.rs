//! `pincer ask --image PATH --file PATH` with the real binary and the mock LLM: the files
//! are copied into the agent's workspace inbox and named in the message, an image reaches a
//! model that takes images as the exact image part, a text-only model is told it was not
//! shown, a file piped to standard input (`-`) is attached as `stdin.<ext>`, and a file that
//! cannot be attached (missing, a directory, too large, not an image for `--image`, nothing
//! piped) is a clear error with exit code 1 before any model call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine as _;
use common::{Home, mock};
use pincer_testkit::{MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

/// A whole PNG (pictures are decoded before they go to a model).
const PNG: &[u8] = pincer_testkit::files::PIXEL_PNG;

async fn setup(extra: &str) -> (MockLlm, Home) {
    let server = mock(Scenario::new().rule(Rule::any().reply(Reply::text("a cat")))).await;
    let home = Home::new();
    home.use_mock(
        &server,
        &format!("agents: {{ defaults: {{ model: \"mock/primary\" {extra} }} }},"),
    );
    (server, home)
}

/// Writes `bytes` to `name` in a directory of the test's own (not the workspace).
fn file(home: &Home, name: &str, bytes: &[u8]) -> String {
    let dir = home.dir.path().join("files");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

fn today() -> String {
    jiff::Zoned::now().strftime("%Y-%m-%d").to_string()
}

fn workspace(home: &Home) -> std::path::PathBuf {
    home.path().join("agents/main/workspace")
}

/// The content of the user message in the model's only request.
fn user_content_sent(server: &MockLlm) -> Value {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let messages = requests[0].body["messages"].as_array().unwrap();
    messages.iter().rfind(|m| m["role"] == "user").unwrap()["content"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_and_a_file_reach_a_model_that_takes_images() {
    let (server, home) = setup("").await;
    let image = file(&home, "cat.png", PNG);
    let notes = file(&home, "notes.txt", b"the cat is called Tom");
    let run = home.run_ok(&[
        "ask", "--image", &image, "--file", &notes, "what", "is", "this?",
    ]);
    assert_eq!(run.stdout(), "a cat\n");
    let inbox = format!("inbox/{}", today());
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(
        user_content_sent(&server),
        json!([
            {"type": "text", "text": format!(
                "[media attached: {inbox}/cat.png (image/png)]\n\
                 [media attached: {inbox}/notes.txt (text/plain)]\n\
                 <file name=\"{inbox}/notes.txt\" mime=\"text/plain\">\n\
                 the cat is called Tom\n</file>\nwhat is this?")},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}},
        ])
    );
    let saved = workspace(&home).join(&inbox);
    assert_eq!(std::fs::read(saved.join("cat.png")).unwrap(), PNG);
    assert_eq!(
        std::fs::read_to_string(saved.join("notes.txt")).unwrap(),
        "the cat is called Tom"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_model_is_told_the_image_was_not_shown() {
    let (server, home) = setup("").await;
    let image = file(&home, "cat.png", PNG);
    home.run_ok(&[
        "ask",
        "--model",
        "mock/backup",
        "--image",
        &image,
        "what is this?",
    ]);
    assert_eq!(
        user_content_sent(&server),
        json!([{"type": "text", "text": format!(
            "[media attached: inbox/{}/cat.png (image/png)]\n\
             (This model does not take images: the picture was not shown to it.)\nwhat is this?",
            today()
        )}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_cannot_be_attached_stops_before_any_model_call() {
    let (server, home) = setup(", mediaMaxMb: 1").await;
    let missing = home.dir.path().join("files/gone.png").display().to_string();
    let dir = home.dir.path().join("files/album");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.display().to_string();
    let mut big_bytes = PNG.to_vec();
    big_bytes.resize(1024 * 1024 + 1, 0);
    let big = file(&home, "big.png", &big_bytes);
    let text = file(&home, "notes.png", b"not a picture");
    let cases = [
        (
            vec!["--image", missing.as_str()],
            format!("error: cannot attach {missing}: no such file\n"),
        ),
        (
            vec!["--file", dir.as_str()],
            format!("error: cannot attach {dir}: it is a directory, not a file\n"),
        ),
        (
            vec!["--file", big.as_str()],
            format!(
                "error: cannot attach {big}: it is 1.1 MB, over the limit of 1 MB \
                 (agents.defaults.mediaMaxMb)\n"
            ),
        ),
        (
            vec!["--image", text.as_str()],
            format!(
                "error: cannot attach {text} as an image: its first bytes are not a PNG, JPEG, \
                 GIF or WebP image's; attach it with --file instead\n"
            ),
        ),
    ];
    for (flags, stderr) in cases {
        let mut args = vec!["ask"];
        args.extend(flags);
        args.push("what is this?");
        let run = home.run(&args);
        assert_eq!((run.code(), run.stderr()), (1, stderr), "{args:?}");
        assert_eq!(run.stdout(), "");
    }
    assert!(server.requests().is_empty(), "no model call");
    assert!(!workspace(&home).join("inbox").exists(), "nothing copied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picture_piped_to_standard_input_is_attached() {
    use std::io::Write as _;
    let (server, home) = setup("").await;
    let run = |args: &[&str], piped: &[u8]| {
        let mut child = home
            .command(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A refusal may come before the input is read: a closed pipe is not the test's failure.
        let _ = child.stdin.take().unwrap().write_all(piped);
        child.wait_with_output().unwrap()
    };
    let out = run(&["ask", "--image", "-", "what is this?"], PNG);
    assert!(out.status.success(), "{out:?}");
    let inbox = format!("inbox/{}", today());
    let content = user_content_sent(&server);
    assert_eq!(
        content[0]["text"],
        format!("[media attached: {inbox}/stdin.png (image/png)]\nwhat is this?")
    );
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(
        std::fs::read(workspace(&home).join(&inbox).join("stdin.png")).unwrap(),
        PNG
    );
    // Not a picture, nothing piped, or `-` twice: refused before any model call.
    let refusals: [(&[&str], &[u8], &str); 3] = [
        (
            &["ask", "--image", "-", "q"],
            b"plain text",
            "error: cannot attach standard input as an image: its first bytes are not a PNG, \
             JPEG, GIF or WebP image's; attach it with --file - instead\n",
        ),
        (
            &["ask", "--file", "-", "q"],
            b"",
            "error: cannot attach standard input: nothing was piped to it\n",
        ),
        (
            &["ask", "--file", "-", "--image", "-", "q"],
            PNG,
            "error: only one --image or --file may be - (standard input)\n",
        ),
    ];
    for (args, piped, want) in refusals {
        let out = run(args, piped);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
    assert_eq!(server.requests().len(), 1);
}
