//! `read {path, offset?, limit?}`: a text file with line numbers (`{n:>6}\t{line}`), or an
//! image (png, jpeg, gif, webp) as an image block. Text output stops at 2000 lines or 50 KB
//! with a hint naming the offset to continue from; lines over 2000 characters are cut.
//! Other binary files and directories are refused with a message saying what to do.

use base64::Engine as _;
use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use pincer_ai::{ContentBlock, ImageContent};
use serde::Deserialize;
use serde_json::json;

use super::truncate::{LineBudget, MAX_BYTES, MAX_LINES, READ_MAX_LINE_CHARS, cut_line};
use super::{blocking, io_error, looks_binary, resolve};
use crate::paths::PathPolicy;

/// Largest image `read` returns (providers refuse bigger ones).
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadArgs {
    /// Path of the file to read, relative to the workspace (or absolute inside it).
    pub path: String,
    /// Line number to start reading from (1-based).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Maximum number of lines to read.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The `read` tool.
#[derive(Debug, Clone)]
pub struct ReadTool {
    policy: PathPolicy,
}

impl ReadTool {
    pub fn new(policy: PathPolicy) -> Self {
        Self { policy }
    }
}

const DESCRIPTION: &str = "Read the contents of a file. Text is shown with line numbers; \
images (png, jpg, gif, webp) are returned as images. Output stops at 2000 lines or 50KB; \
use offset and limit to page through large files.";

impl TypedTool for ReadTool {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        "read"
    }

    fn label(&self) -> &str {
        "Read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn run(&self, args: ReadArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let policy = self.policy.clone();
        blocking(move || read_file(&policy, &args)).await
    }
}

fn read_file(policy: &PathPolicy, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
    let path = resolve(policy, &args.path)?;
    let shown = policy.display(&path);
    let meta = std::fs::metadata(&path).map_err(|e| io_error("read", &args.path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is a directory; use ls to list its contents"
        )));
    }
    let extension_mime = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(image_mime_for_extension);
    if extension_mime.is_some() && meta.len() > MAX_IMAGE_BYTES {
        return Err(ToolError::failed(format!(
            "{shown} is an image of {} bytes; read returns images up to {MAX_IMAGE_BYTES} bytes",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| io_error("read", &args.path, &e))?;
    if let Some(mime) = image_mime_for_magic(&bytes) {
        if bytes.len() as u64 > MAX_IMAGE_BYTES {
            return Err(ToolError::failed(format!(
                "{shown} is an image of {} bytes; read returns images up to {MAX_IMAGE_BYTES} bytes",
                bytes.len()
            )));
        }
        return Ok(image_output(&shown, mime, &bytes));
    }
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "{shown} is a binary file ({} bytes); read only shows text files and png, jpg, \
             gif or webp images",
            bytes.len()
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    number_lines(&shown, text, args.offset, args.limit)
}

fn image_output(shown: &str, mime: &str, bytes: &[u8]) -> ToolOutput {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    ToolOutput {
        content: vec![
            ContentBlock::text(format!(
                "Read image file {shown} [{mime}, {} bytes]",
                bytes.len()
            )),
            ContentBlock::Image(ImageContent {
                data,
                mime_type: mime.to_owned(),
            }),
        ],
        details: Some(json!({"path": shown, "mimeType": mime, "bytes": bytes.len()})),
    }
}

/// Lines `offset..offset+limit` numbered, within the line and byte budget.
fn number_lines(
    shown: &str,
    text: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let lines: Vec<&str> = split_lines(text);
    let total = lines.len();
    if total == 0 {
        return Ok(ToolOutput::text(format!("[{shown} is empty]"))
            .with_details(json!({"path": shown, "totalLines": 0, "truncated": false})));
    }
    let start = offset.unwrap_or(1).max(1);
    if start > total {
        return Err(ToolError::failed(format!(
            "offset {start} is beyond the end of {shown} ({total} lines)"
        )));
    }
    let wanted_end = match limit {
        Some(limit) => start
            .saturating_add(limit.max(1))
            .saturating_sub(1)
            .min(total),
        None => total,
    };
    let mut budget = LineBudget::new(MAX_LINES, MAX_BYTES);
    let mut cut_lines = 0usize;
    for (index, line) in lines[start - 1..wanted_end].iter().enumerate() {
        let (line, cut) = cut_line(line, READ_MAX_LINE_CHARS);
        if !budget.push(format!("{:>6}\t{line}", start + index)) {
            break;
        }
        cut_lines += usize::from(cut);
    }
    let end = start + budget.len() - 1;
    let mut out = budget.join();
    let truncated = end < total;
    if truncated {
        out.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {total}. Use offset={} to continue.]",
            end + 1
        ));
    }
    Ok(ToolOutput::text(out).with_details(json!({
        "path": shown,
        "startLine": start,
        "endLine": end,
        "totalLines": total,
        "truncated": truncated,
        "cutLines": cut_lines,
    })))
}

/// Lines without their terminators (`\n` or `\r\n`); a final newline ends the last line
/// rather than starting an empty one.
fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

fn image_mime_for_extension(ext: &str) -> Option<&'static str> {
    match ext.to_ascii_lowercase().as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

fn image_mime_for_magic(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_like_an_editor() {
        assert_eq!(split_lines("a\r\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\n"), vec!["a", ""]);
        assert!(split_lines("").is_empty());
        assert_eq!(image_mime_for_magic(b"GIF89a..."), Some("image/gif"));
    }
}
