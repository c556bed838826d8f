//! `screenshot` and `pdf`: `Page.captureScreenshot` / `Page.printToPDF`, saved under
//! `<workspace>/browser/` with a timestamped name; a screenshot also comes back as an image
//! block when it is small enough to send.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use pincer_agent::{ToolError, ToolOutput};
use pincer_ai::{ContentBlock, ImageContent};
use serde_json::{Value, json};

use super::cdp::Cdp;
use super::conn::PageState;
use super::page::{cdp_failed, find_ref};

/// The largest screenshot sent back as an image (what providers take in one image part).
pub const IMAGE_BLOCK_MAX_BYTES: usize = 5 * 1024 * 1024;
/// A full-page screenshot is cut at this height (CSS pixels).
pub const FULL_PAGE_MAX_HEIGHT: f64 = 16_384.0;

/// What to capture.
#[derive(Debug, Clone, Default)]
pub struct ScreenshotRequest {
    pub full_page: bool,
    pub element: Option<String>,
}

pub async fn screenshot(
    cdp: &Cdp,
    page: &PageState,
    dir: &Path,
    req: &ScreenshotRequest,
) -> Result<ToolOutput, ToolError> {
    let mut params = json!({"format": "png"});
    let mut note = String::new();
    if let Some(r) = req.element.as_deref() {
        let b = find_ref(cdp, page, r).await?;
        if b.width < 1.0 || b.height < 1.0 {
            return Err(ToolError::failed(format!(
                "ref {r} has no size on screen (hidden?); take a new snapshot"
            )));
        }
        params["clip"] = json!({"x": b.left, "y": b.top, "width": b.width,
            "height": b.height.min(FULL_PAGE_MAX_HEIGHT), "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    } else if req.full_page {
        let metrics = cdp
            .call("Page.getLayoutMetrics", json!({}), Some(&page.session_id))
            .await
            .map_err(|e| cdp_failed("cannot measure the page", &e))?;
        let size = metrics
            .get("cssContentSize")
            .or_else(|| metrics.get("contentSize"));
        let n = |k: &str| {
            size.and_then(|s| s.get(k))
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
        };
        let (width, height) = (n("width").max(1.0), n("height").max(1.0));
        if height > FULL_PAGE_MAX_HEIGHT {
            note = format!(
                " (the page is {height:.0} px tall; the first {FULL_PAGE_MAX_HEIGHT:.0} px are shown)"
            );
        }
        params["clip"] = json!({"x": 0, "y": 0, "width": width,
            "height": height.min(FULL_PAGE_MAX_HEIGHT), "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    }
    let answer = cdp
        .call("Page.captureScreenshot", params, Some(&page.session_id))
        .await
        .map_err(|e| cdp_failed("cannot take the screenshot", &e))?;
    let bytes = decode_data(&answer)?;
    let path = save(dir, "screenshot", "png", &bytes).await?;
    let shown = path.display().to_string();
    let mut output = ToolOutput::text(format!("screenshot saved to {shown}{note}"));
    if bytes.len() <= IMAGE_BLOCK_MAX_BYTES {
        output.content.push(ContentBlock::Image(ImageContent {
            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
            mime_type: "image/png".to_owned(),
        }));
    } else {
        output.content = vec![ContentBlock::text(format!(
            "screenshot saved to {shown}{note}; it is {} bytes, too large to show here",
            bytes.len()
        ))];
    }
    Ok(output.with_details(json!({"ok": true, "path": shown, "targetId": page.target_id})))
}

pub async fn pdf(cdp: &Cdp, page: &PageState, dir: &Path) -> Result<ToolOutput, ToolError> {
    let answer = cdp
        .call(
            "Page.printToPDF",
            json!({"printBackground": true}),
            Some(&page.session_id),
        )
        .await
        .map_err(|e| cdp_failed("cannot print the page", &e))?;
    let bytes = decode_data(&answer)?;
    let path = save(dir, "page", "pdf", &bytes).await?;
    let shown = path.display().to_string();
    Ok(ToolOutput::text(format!("PDF saved to {shown}"))
        .with_details(json!({"ok": true, "path": shown, "targetId": page.target_id})))
}

fn decode_data(answer: &Value) -> Result<Vec<u8>, ToolError> {
    let data = answer
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::failed("the browser returned no data"))?;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ToolError::failed(format!("the browser returned bad data: {e}")))
}

/// Writes `bytes` as `<dir>/<stem>-<timestamp>.<ext>` (a counter when that exists).
async fn save(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> Result<PathBuf, ToolError> {
    use tokio::io::AsyncWriteExt as _;
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| ToolError::failed(format!("cannot create {}: {e}", dir.display())))?;
    let stamp = pincer_base::now_ms();
    for n in 0..100u32 {
        let name = if n == 0 {
            format!("{stem}-{stamp}.{ext}")
        } else {
            format!("{stem}-{stamp}-{n}.{ext}")
        };
        let path = dir.join(name);
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
        {
            Ok(mut file) => {
                // The flush waits for tokio's background write: the path is returned only
                // once the whole file is there (a short-lived `pincer tools invoke` exits
                // right after).
                let written = match file.write_all(bytes).await {
                    Ok(()) => file.flush().await,
                    Err(e) => Err(e),
                };
                written.map_err(|e| {
                    ToolError::failed(format!("cannot write {}: {e}", path.display()))
                })?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(ToolError::failed(format!(
                    "cannot write {}: {e}",
                    path.display()
                )));
            }
        }
    }
    Err(ToolError::failed(format!(
        "cannot find a free file name in {}",
        dir.display()
    )))
}
