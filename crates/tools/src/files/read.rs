//! `read {path, offset?, limit?}`: a text file with line numbers (`{n:>6}\t{line}`), or an
//! image (png, jpeg, gif, webp) as an image block. Text output stops at 2000 lines or 50 KB
//! with a hint naming the offset to continue from; lines over 2000 characters are cut.
//! Other binary files, directories and anything not a regular file (FIFOs, sockets,
//! devices) are refused with a message saying what to do. Only what is shown is read
//! (plus a byte to know there is more), so a huge file costs no more than a small one.

use std::io::{BufRead, BufReader, Read};

use base64::Engine as _;
use pincer_agent::{ToolError, ToolOutput};
use pincer_ai::{ContentBlock, ImageContent};
use serde::Deserialize;
use serde_json::json;

use super::open::{open_regular, read_prefix, read_upto};
use super::truncate::{LineBudget, MAX_BYTES, MAX_LINES, READ_MAX_LINE_CHARS, cut_line};
use super::{SNIFF_BYTES, io_error, looks_binary, resolve_shown, utf8_prefix};
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

const DESCRIPTION: &str = "Read the contents of a file. Text is shown with line numbers; \
images (png, jpg, gif, webp) are returned as images. Output stops at 2000 lines or 50KB; \
use offset and limit to page through large files.";

path_tool! {
    /// The `read` tool.
    ReadTool {
        args: ReadArgs,
        name: "read",
        label: "Read",
        description: DESCRIPTION,
        blocking: read_file,
    }
}

fn read_file(policy: &PathPolicy, args: ReadArgs) -> Result<ToolOutput, ToolError> {
    let (path, shown) = resolve_shown(policy, &args.path)?;
    let (mut file, meta) = open_regular(&path, &shown, &args.path, "use ls to list its contents")?;
    let extension_mime = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(image_mime_for_extension);
    if extension_mime.is_some() && meta.len() > MAX_IMAGE_BYTES {
        return Err(too_big_image(&shown, meta.len()));
    }
    let mut head = read_upto(&mut file, SNIFF_BYTES, &args.path)?;
    if let Some(mime) = image_mime_for_magic(&head) {
        let max = usize::try_from(MAX_IMAGE_BYTES).unwrap_or(usize::MAX);
        let (rest, more) = read_prefix(&mut file, max - head.len().min(max), &args.path)?;
        if more {
            return Err(too_big_image(&shown, meta.len()));
        }
        head.extend_from_slice(&rest);
        return Ok(image_output(&shown, mime, &head));
    }
    if looks_binary(&head) {
        return Err(ToolError::failed(format!(
            "{shown} is a binary file ({} bytes); read only shows text files and png, jpg, \
             gif or webp images",
            meta.len()
        )));
    }
    let mut reader = BufReader::new(std::io::Cursor::new(head).chain(file));
    number_lines(
        &shown,
        &mut reader,
        meta.len(),
        args.offset,
        args.limit,
        &args.path,
    )
}

/// Most bytes of one line kept: enough for [`READ_MAX_LINE_CHARS`] characters of any width.
const MAX_LINE_BYTES: usize = READ_MAX_LINE_CHARS * 4;

fn too_big_image(shown: &str, len: u64) -> ToolError {
    ToolError::failed(format!(
        "{shown} is an image of {len} bytes; read returns images up to {MAX_IMAGE_BYTES} bytes"
    ))
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

/// Lines `offset..offset+limit` numbered, within the line and byte budget. The file is
/// read line by line and only as far as needed: skipped lines and the tails of cut lines
/// are never kept, and nothing after the last line shown is read but one byte to tell
/// whether there is more. So a truncated result cannot know the number of lines; it
/// names the file's size instead.
fn number_lines(
    shown: &str,
    reader: &mut impl BufRead,
    size: u64,
    offset: Option<usize>,
    limit: Option<usize>,
    user_path: &str,
) -> Result<ToolOutput, ToolError> {
    let io = |e: std::io::Error| io_error("read", user_path, &e);
    let start = offset.unwrap_or(1).max(1);
    let mut line = Vec::new();
    let mut seen = 0usize;
    while seen + 1 < start {
        if next_line(reader, &mut line, 0).map_err(io)?.is_none() {
            break;
        }
        seen += 1;
    }
    let wanted = limit.map_or(usize::MAX, |l| l.max(1));
    let mut budget = LineBudget::new(MAX_LINES, MAX_BYTES);
    let mut cut_lines = 0usize;
    let mut more = false;
    if seen + 1 == start {
        loop {
            if budget.len() == wanted {
                more = !reader.fill_buf().map_err(io)?.is_empty();
                break;
            }
            let Some(overflow) = next_line(reader, &mut line, MAX_LINE_BYTES).map_err(io)? else {
                break;
            };
            let number = start + budget.len();
            let text = decode_line(&line, number == 1, overflow);
            let (text, cut) = cut_line(&text, READ_MAX_LINE_CHARS);
            let (text, cut) = match (cut, overflow) {
                (false, true) => (format!("{text}... [truncated]"), true),
                _ => (text, cut),
            };
            if !budget.push(format!("{number:>6}\t{text}")) {
                more = true;
                break;
            }
            cut_lines += usize::from(cut);
        }
    }
    if budget.is_empty() {
        if seen == 0 {
            return Ok(ToolOutput::text(format!("[{shown} is empty]"))
                .with_details(json!({"path": shown, "totalLines": 0, "truncated": false})));
        }
        return Err(ToolError::failed(format!(
            "offset {start} is beyond the end of {shown} ({seen} lines)"
        )));
    }
    let end = start + budget.len() - 1;
    let mut out = budget.join();
    if more {
        out.push_str(&format!(
            "\n\n[Showing lines {start}-{end}; the file ({size} bytes) goes on. \
             Use offset={} to continue.]",
            end + 1
        ));
    }
    Ok(ToolOutput::text(out).with_details(json!({
        "path": shown,
        "startLine": start,
        "endLine": end,
        "totalLines": (!more).then_some(end),
        "bytes": size,
        "truncated": more,
        "cutLines": cut_lines,
    })))
}

/// Reads the next line (through its `\n`, or to the end of the file) keeping at most
/// `keep` bytes of it in `line`, without the terminator; the rest is skipped, never held.
/// `None` at the end of the file; otherwise whether bytes were dropped.
fn next_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut any = false;
    let mut overflow = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        let room = keep.saturating_sub(line.len());
        overflow |= chunk.len() > room;
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if !overflow && line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(overflow))
}

/// A line's text: invalid UTF-8 replaced, the first line's BOM dropped, and a character
/// split by the byte cap (`overflow`) left out rather than shown as garbage.
fn decode_line(bytes: &[u8], first: bool, overflow: bool) -> String {
    let bytes = match first {
        true => bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes),
        false => bytes,
    };
    utf8_prefix(bytes, overflow).into_owned()
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

    fn lines(text: &[u8], keep: usize) -> Vec<(String, bool)> {
        let mut reader = text;
        let mut line = Vec::new();
        let mut out = Vec::new();
        while let Some(overflow) = next_line(&mut reader, &mut line, keep).unwrap() {
            out.push((String::from_utf8_lossy(&line).into_owned(), overflow));
        }
        out
    }

    #[test]
    fn splits_lines_like_an_editor() {
        let plain =
            |text: &[u8]| -> Vec<String> { lines(text, 100).into_iter().map(|(l, _)| l).collect() };
        assert_eq!(plain(b"a\r\nb\n"), vec!["a", "b"]);
        assert_eq!(plain(b"a\n\n"), vec!["a", ""]);
        assert_eq!(plain(b"a"), vec!["a"]);
        assert!(plain(b"").is_empty());
        assert_eq!(
            lines(b"abcdef\nxy\n", 3),
            vec![("abc".to_owned(), true), ("xy".to_owned(), false)]
        );
        assert_eq!(decode_line("\u{feff}é".as_bytes(), true, false), "é");
        assert_eq!(decode_line(&"é".as_bytes()[..1], false, true), "");
        assert_eq!(image_mime_for_magic(b"GIF89a..."), Some("image/gif"));
    }
}
