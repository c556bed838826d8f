//! The file side of the Control UI: a request path turned into a path under the root that
//! cannot leave it, the file read on the blocking pool (with a size cap), the
//! Content-Type and caching of each kind of file, and the small changes the app's
//! `index.html` needs to run under `/control/` (what OpenClaw's gateway does to it too: the
//! mount prefix as an attribute on `<html>`, its `./` links made absolute so deep client
//! routes load the same assets) plus the hashes of its inline scripts for the CSP.
//!
//! Containment is checked twice: lexically (every segment percent-decoded, then refused if
//! it is `.`, `..`, a dot file, or hides a `/`, `\` or NUL) and on disk (the joined path is
//! canonicalized and must still be under the canonical root, so a symlink pointing out of
//! the root is refused too).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::BASE_PATH;

/// The largest file served (the app's biggest bundle is ~3.5 MB).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// A request for something under `/control/`, checked lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// The app's page: `/control/` itself.
    Index,
    /// A relative path under the root (decoded segments, none empty or special).
    Path(Vec<String>),
}

/// Why a path is refused before the disk is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

/// Reads the part of a request path after `/control/` (still percent-encoded, as sent).
pub fn wanted(rest: &str) -> Result<Wanted, Refused> {
    let mut segments = Vec::new();
    for raw in rest.split('/') {
        // `a//b` and a trailing `/` name nothing more than `a/b`.
        if raw.is_empty() {
            continue;
        }
        let bytes = percent_decode(raw).ok_or(Refused)?;
        let segment = String::from_utf8(bytes).map_err(|_| Refused)?;
        if segment.starts_with('.') || segment.contains(['/', '\\', '\0']) {
            return Err(Refused);
        }
        segments.push(segment);
    }
    Ok(if segments.is_empty() {
        Wanted::Index
    } else {
        Wanted::Path(segments)
    })
}

/// `%XX` sequences decoded; `None` for a `%` not followed by two hex digits.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let text = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(text, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Whether the last segment has a file extension (`app.js`): such a path is a file or
/// nothing; one without (`chat`, `sessions/main`) may be one of the app's own routes.
pub fn has_extension(segments: &[String]) -> bool {
    segments
        .last()
        .and_then(|last| last.rfind('.'))
        .is_some_and(|dot| dot > 0)
}

/// What the disk gave for a request.
#[derive(Debug)]
pub enum Found {
    /// A file under the root: its bytes (empty when only its size was asked) and size.
    File {
        path: PathBuf,
        body: Vec<u8>,
        size: u64,
    },
    /// No such file (or a directory, or something outside the root).
    Missing,
    /// A file over [`MAX_FILE_BYTES`].
    TooLarge { path: PathBuf, size: u64 },
}

/// Finds `relative` under `root` and reads it (only its size when `body` is false). Blocking:
/// canonicalizes, stats and reads.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: control_ui::serve_file"
)]
pub fn read_under(root: &Path, relative: &[String], body: bool) -> std::io::Result<Found> {
    let root = root.canonicalize()?;
    let mut candidate = root.clone();
    candidate.extend(relative);
    let resolved = match candidate.canonicalize() {
        Ok(resolved) => resolved,
        Err(e) if is_missing(&e) => return Ok(Found::Missing),
        Err(e) => return Err(e),
    };
    // A symlink in the root may point anywhere: only what resolves inside it is served.
    if !resolved.starts_with(&root) {
        return Ok(Found::Missing);
    }
    let mut file = match std::fs::File::open(&resolved) {
        Ok(file) => file,
        Err(e) if is_missing(&e) => return Ok(Found::Missing),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Found::Missing);
    }
    let size = meta.len();
    if size > MAX_FILE_BYTES {
        return Ok(Found::TooLarge {
            path: resolved,
            size,
        });
    }
    let mut bytes = Vec::new();
    if body {
        // Bounded even if the file grows between the stat and the read.
        (&mut file)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Ok(Found::TooLarge {
                path: resolved,
                size: bytes.len() as u64,
            });
        }
    }
    Ok(Found::File {
        path: resolved,
        size: if body { bytes.len() as u64 } else { size },
        body: bytes,
    })
}

/// Errors that mean "nothing there" rather than a broken disk.
fn is_missing(e: &std::io::Error) -> bool {
    /// Linux's ELOOP: a symlink cycle (its `ErrorKind` is not stable yet).
    const ELOOP: i32 = 40;
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound
            | std::io::ErrorKind::NotADirectory
            | std::io::ErrorKind::InvalidFilename
    ) || e.raw_os_error() == Some(ELOOP)
}

/// The Content-Type of a file, by its extension.
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json; charset=utf-8",
        Some("webmanifest") => "application/manifest+json; charset=utf-8",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("avif") => "image/avif",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("ttf") => "font/ttf",
        Some("otf") => "font/otf",
        Some("wasm") => "application/wasm",
        Some("mp3") => "audio/mpeg",
        Some("wav") => "audio/wav",
        Some("mp4") => "video/mp4",
        Some("webm") => "video/webm",
        _ => "application/octet-stream",
    }
}

/// The precompressed copies a bundle ships next to its files (`app.js.br`, `app.js.gz`): the
/// file name's suffix and the `Content-Encoding` it is sent with, best first.
const PRECOMPRESSED: [(&str, &str); 2] = [("br", "br"), ("gz", "gzip")];

/// The precompressed copies an `Accept-Encoding` value allows, best first (`br`, then
/// `gzip`; `*` stands for both; `q=0` refuses one).
pub fn accepted_precompressed(accept_encoding: &str) -> Vec<(&'static str, &'static str)> {
    let mut allowed: Vec<(&str, bool)> = Vec::new();
    for item in accept_encoding.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = parts.any(|param| {
            param
                .trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        allowed.push((
            match coding.as_str() {
                "br" => "br",
                "gzip" | "x-gzip" => "gzip",
                "*" => "*",
                _ => continue,
            },
            !refused,
        ));
    }
    let verdict = |coding: &str| {
        allowed
            .iter()
            .find(|(c, _)| *c == coding)
            .or_else(|| allowed.iter().find(|(c, _)| *c == "*"))
            .is_some_and(|(_, ok)| *ok)
    };
    PRECOMPRESSED
        .into_iter()
        .filter(|(_, coding)| verdict(coding))
        .collect()
}

/// `relative` with `.suffix` added to its file name.
pub fn with_suffix(relative: &[String], suffix: &str) -> Vec<String> {
    let mut out = relative.to_vec();
    if let Some(last) = out.last_mut() {
        last.push('.');
        last.push_str(suffix);
    }
    out
}

/// Long caching only for the bundler's output, whose names carry a content hash
/// (`assets/index-DsEuFQRE.js`): a new build has new names. Everything else is revalidated.
pub fn is_hashed_asset(relative: &[String]) -> bool {
    relative.first().is_some_and(|first| first == "assets")
}

/// The app's page made ready to run under [`BASE_PATH`]: `<html>` gets the mount prefix
/// (`data-openclaw-control-ui-base-path`, which the app reads to find its routes, its
/// bootstrap config and its WebSocket) and says the terminal is off; `src="./…"` and
/// `href="./…"` become absolute, so a page served for a deep route (`/control/chat/x`)
/// still loads `/control/assets/…`.
pub fn prepare_index(html: &str) -> String {
    let attributes = format!(
        " data-openclaw-control-ui-base-path=\"{BASE_PATH}\" data-openclaw-terminal-enabled=\"false\""
    );
    let with_attributes = match find_html_tag(html) {
        Some(at) => {
            let mut out = String::with_capacity(html.len() + attributes.len());
            out.push_str(&html[..at + "<html".len()]);
            out.push_str(&attributes);
            out.push_str(&html[at + "<html".len()..]);
            out
        }
        None => html.to_owned(),
    };
    with_attributes
        .replace("src=\"./", &format!("src=\"{BASE_PATH}/"))
        .replace("href=\"./", &format!("href=\"{BASE_PATH}/"))
}

/// Where the `<html` tag starts (case-insensitive), if the page has one.
fn find_html_tag(html: &str) -> Option<usize> {
    let lower = html.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("<html") {
        let at = from + found;
        let next = lower.as_bytes().get(at + "<html".len());
        if next.is_some_and(|b| b.is_ascii_whitespace() || *b == b'>') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `'sha256-…'` of each inline `<script>` (one without `src`), for the page's CSP: the
/// page's own inline code runs, injected code does not.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut hashes = Vec::new();
    let mut from = 0;
    while let Some(found) = lower[from..].find("<script") {
        let open = from + found;
        let Some(tag_end) = lower[open..].find('>').map(|i| open + i + 1) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</script").map(|i| tag_end + i) else {
            break;
        };
        let tag = &lower[open..tag_end];
        if !tag.contains(" src=") {
            let digest = Sha256::digest(&html.as_bytes()[tag_end..close]);
            hashes.push(format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest)
            ));
        }
        from = close;
    }
    hashes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(segments: &[&str]) -> Result<Wanted, Refused> {
        Ok(Wanted::Path(
            segments.iter().map(|s| (*s).to_owned()).collect(),
        ))
    }

    #[test]
    fn request_paths() {
        assert_eq!(wanted(""), Ok(Wanted::Index));
        assert_eq!(wanted("/"), Ok(Wanted::Index));
        assert_eq!(wanted("assets/app.js"), path(&["assets", "app.js"]));
        assert_eq!(wanted("assets//app.js/"), path(&["assets", "app.js"]));
        assert_eq!(wanted("a%20b.css"), path(&["a b.css"]));
        assert_eq!(wanted("chat/agent%3Amain"), path(&["chat", "agent:main"]));
        for bad in [
            "..",
            "../x",
            "assets/../../x",
            "%2e%2e/x",
            "%2E%2E",
            ".",
            "assets/./x",
            ".git/config",
            "a%2fb",
            "a%2Fb",
            "..%2f..%2fetc",
            "a%5cb",
            "a%00b",
            "%zz",
            "%4",
            "%",
            "%ff%fe",
        ] {
            assert_eq!(wanted(bad), Err(Refused), "{bad:?}");
        }
    }

    #[test]
    fn extensions() {
        let has =
            |s: &[&str]| has_extension(&s.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert!(has(&["assets", "app.js"]));
        assert!(has(&["x.tar.gz"]));
        assert!(!has(&["chat"]));
        assert!(!has(&["v1.2", "chat"]));
        assert!(!has(&[]));
    }

    #[test]
    fn content_types() {
        for (name, want) in [
            ("a.js", "text/javascript; charset=utf-8"),
            ("a.MJS", "text/javascript; charset=utf-8"),
            ("a.css", "text/css; charset=utf-8"),
            ("index.html", "text/html; charset=utf-8"),
            ("m.webmanifest", "application/manifest+json; charset=utf-8"),
            ("f.woff2", "font/woff2"),
            ("i.svg", "image/svg+xml"),
            ("i.webp", "image/webp"),
            ("favicon.ico", "image/x-icon"),
            ("x.js.br", "application/octet-stream"),
            ("LICENSE", "application/octet-stream"),
        ] {
            assert_eq!(content_type(Path::new(name)), want, "{name}");
        }
    }

    #[test]
    fn precompressed_copies_follow_accept_encoding() {
        let br = ("br", "br");
        let gz = ("gz", "gzip");
        for (accept, want) in [
            ("gzip, deflate, br, zstd", vec![br, gz]),
            ("br", vec![br]),
            ("GZIP", vec![gz]),
            ("br;q=0, gzip;q=0.5", vec![gz]),
            ("br; q=0.0", vec![]),
            ("*", vec![br, gz]),
            ("*, br;q=0", vec![gz]),
            ("identity", vec![]),
            ("", vec![]),
            ("br;q=x", vec![br]),
        ] {
            assert_eq!(accepted_precompressed(accept), want, "{accept:?}");
        }
        assert_eq!(
            with_suffix(&["assets".into(), "a.js".into()], "br"),
            ["assets", "a.js.br"]
        );
    }

    #[test]
    fn index_is_prepared_for_the_prefix() {
        let html = "<!doctype html>\n<HTML lang=\"en\"><head>\
            <link rel=\"icon\" href=\"./favicon.svg\" />\
            <script type=\"module\" src=\"./assets/app.js\"></script>\
            <link href=\"https://example.com/x.css\"></head></HTML>";
        assert_eq!(
            prepare_index(html),
            "<!doctype html>\n<HTML data-openclaw-control-ui-base-path=\"/control\" \
             data-openclaw-terminal-enabled=\"false\" lang=\"en\"><head>\
             <link rel=\"icon\" href=\"/control/favicon.svg\" />\
             <script type=\"module\" src=\"/control/assets/app.js\"></script>\
             <link href=\"https://example.com/x.css\"></head></HTML>"
        );
        assert_eq!(
            prepare_index("<htmlx>"),
            "<htmlx>",
            "no <html> tag: unchanged"
        );
    }

    #[test]
    fn hashes_of_inline_scripts_only() {
        let html = "<script>a()</script><script type=\"module\" src=\"/x.js\"></script>\
                    <SCRIPT data-x=\"1\">\n b();\n</SCRIPT>";
        let hash = |s: &str| {
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s.as_bytes()))
            )
        };
        assert_eq!(
            inline_script_hashes(html),
            vec![hash("a()"), hash("\n b();\n")]
        );
        // The well-known digest of the empty script.
        assert_eq!(
            inline_script_hashes("<script></script>"),
            vec!["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='".to_owned()]
        );
        assert!(inline_script_hashes("<script>unclosed").is_empty());
    }
}
