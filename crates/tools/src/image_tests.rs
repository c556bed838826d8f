//! The `image` tool's checks: exactly one of path and url, http(s) only, the size cap, the
//! image signatures, and what reaches the vision model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use super::*;
use pincer_ai::CancellationToken;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01";

/// Answers with the prompt and the image's type, and records every call.
#[derive(Default)]
struct FakeVision {
    described: Mutex<Vec<(ImageContent, String)>>,
    /// What `fetch` returns.
    download: Vec<u8>,
    fetched: Mutex<Vec<(String, u64)>>,
}

impl VisionModel for FakeVision {
    fn describe(
        &self,
        image: ImageContent,
        prompt: String,
    ) -> BoxFuture<'static, Result<String, String>> {
        let answer = format!("{prompt} -> {}", image.mime_type);
        self.described.lock().unwrap().push((image, prompt));
        Box::pin(async move { Ok(answer) })
    }

    fn fetch(&self, url: String, limit: u64) -> BoxFuture<'static, Result<Vec<u8>, String>> {
        self.fetched.lock().unwrap().push((url, limit));
        let bytes = self.download.clone();
        Box::pin(async move { Ok(bytes) })
    }
}

fn args(path: Option<&str>, url: Option<&str>, prompt: Option<&str>) -> ImageArgs {
    ImageArgs {
        path: path.map(str::to_owned),
        url: url.map(str::to_owned),
        prompt: prompt.map(str::to_owned),
    }
}

fn message(err: ToolError) -> String {
    match err {
        ToolError::Failed(m) => m,
        other => panic!("not a failure: {other:?}"),
    }
}

struct Setup {
    dir: tempfile::TempDir,
    vision: Arc<FakeVision>,
    tool: ImageTool,
}

fn setup(download: &[u8]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let vision = Arc::new(FakeVision {
        download: download.to_vec(),
        ..FakeVision::default()
    });
    let policy = PathPolicy::workspace(dir.path()).unwrap();
    let tool = ImageTool::new(policy, vision.clone());
    Setup { dir, vision, tool }
}

async fn run(tool: &ImageTool, args: ImageArgs) -> Result<ToolOutput, ToolError> {
    tool.run(args, ToolContext::new("call-1", CancellationToken::new()))
        .await
}

fn text_of(out: &ToolOutput) -> &str {
    match out.content.as_slice() {
        [ContentBlock::Text(t)] => &t.text,
        other => panic!("not one text block: {other:?}"),
    }
}

#[test]
fn exactly_one_of_path_and_url() {
    assert_eq!(
        message(
            args(Some("a.png"), Some("https://x/a.png"), None)
                .source()
                .unwrap_err()
        ),
        "give either path or url, not both"
    );
    assert_eq!(
        message(args(None, None, Some("what?")).source().unwrap_err()),
        "give the image: path (a file in the workspace) or url (http or https)"
    );
    assert_eq!(
        message(args(Some("  "), Some(""), None).source().unwrap_err()),
        "give the image: path (a file in the workspace) or url (http or https)"
    );
    assert_eq!(
        args(Some("a.png"), None, None).source().unwrap(),
        ImageSource::Path("a.png".into())
    );
    assert_eq!(
        args(None, Some("HTTPS://x/a.png"), None).source().unwrap(),
        ImageSource::Url("HTTPS://x/a.png".into())
    );
}

#[test]
fn only_http_and_https_urls() {
    for url in [
        "file:///etc/passwd",
        "ftp://x/a.png",
        "data:image/png;base64,AA",
        "x/a.png",
    ] {
        assert_eq!(
            message(args(None, Some(url), None).source().unwrap_err()),
            format!(
                "url {url:?} is not an http or https URL; for a file in the workspace use path"
            )
        );
    }
}

#[test]
fn the_arguments_are_parsed_strictly_and_the_prompt_has_a_default() {
    let parsed: ImageArgs = serde_json::from_value(json!({"path": "a.png"})).unwrap();
    assert_eq!(parsed.prompt(), "Describe the image.");
    let parsed: ImageArgs =
        serde_json::from_value(json!({"url": "http://x", "prompt": " colour? "})).unwrap();
    assert_eq!(parsed.prompt(), "colour?");
    assert!(serde_json::from_value::<ImageArgs>(json!({"image": "a.png"})).is_err());
}

#[test]
fn images_are_known_by_their_first_bytes() {
    assert_eq!(image_mime(PNG), Some("image/png"));
    assert_eq!(image_mime(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
    assert_eq!(image_mime(b"GIF89a..."), Some("image/gif"));
    assert_eq!(image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(image_mime(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(image_mime(b"%PDF-1.7"), None);
    assert_eq!(image_mime(b"RIFF"), None);
}

#[tokio::test]
async fn a_workspace_image_goes_to_the_model_with_the_prompt() {
    let s = setup(b"");
    std::fs::write(s.dir.path().join("cat.png"), PNG).unwrap();
    let out = run(&s.tool, args(Some("cat.png"), None, Some("what colour?")))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "what colour? -> image/png");
    assert_eq!(
        out.details,
        Some(json!({"image": "cat.png", "mimeType": "image/png"}))
    );
    let described = s.vision.described.lock().unwrap();
    assert_eq!(described.len(), 1);
    assert_eq!(
        described[0].0,
        ImageContent {
            data: base64::engine::general_purpose::STANDARD.encode(PNG),
            mime_type: "image/png".into(),
        }
    );
}

#[tokio::test]
async fn a_file_that_is_not_an_image_is_refused_before_the_model() {
    let s = setup(b"");
    std::fs::write(s.dir.path().join("notes.png"), b"just text").unwrap();
    let err = run(&s.tool, args(Some("notes.png"), None, None))
        .await
        .unwrap_err();
    assert_eq!(
        message(err),
        "notes.png is not an image: the image tool takes png, jpeg, gif and webp"
    );
    assert!(s.vision.described.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_image_over_the_cap_is_refused() {
    let s = setup(b"");
    let tool = s.tool.clone().with_limit(16);
    let mut big = PNG.to_vec();
    big.extend_from_slice(&[0; 10]);
    std::fs::write(s.dir.path().join("big.png"), &big).unwrap();
    let err = run(&tool, args(Some("big.png"), None, None))
        .await
        .unwrap_err();
    assert_eq!(
        message(err),
        "big.png is larger than 16 bytes, the most the image tool sends"
    );
    // Exactly at the cap is fine.
    std::fs::write(s.dir.path().join("fits.png"), &big[..16]).unwrap();
    run(&tool, args(Some("fits.png"), None, None))
        .await
        .unwrap();
    assert_eq!(IMAGE_MAX_BYTES, 6 * 1024 * 1024);
}

#[tokio::test]
async fn a_path_outside_the_workspace_is_refused() {
    let s = setup(b"");
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), PNG).unwrap();
    let err = run(
        &s.tool,
        args(Some(&outside.path().display().to_string()), None, None),
    )
    .await
    .unwrap_err();
    assert!(
        message(err).contains("outside"),
        "refused as outside the workspace"
    );
    assert!(s.vision.described.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_url_is_fetched_with_the_cap_and_checked() {
    let s = setup(PNG);
    let out = run(
        &s.tool,
        args(None, Some("https://example.test/cat.png"), None),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&out), "Describe the image. -> image/png");
    assert_eq!(
        *s.vision.fetched.lock().unwrap(),
        vec![("https://example.test/cat.png".to_owned(), IMAGE_MAX_BYTES)]
    );

    let s = setup(b"<html>not found</html>");
    let err = run(&s.tool, args(None, Some("http://example.test/x"), None))
        .await
        .unwrap_err();
    assert_eq!(
        message(err),
        "http://example.test/x is not an image: the image tool takes png, jpeg, gif and webp"
    );
    assert!(s.vision.described.lock().unwrap().is_empty());
}
