//! `image {path?, url?, prompt?}` (OpenClaw's image tool): asks a model that takes images
//! about one picture and returns its answer as text, so an agent whose own model reads
//! only text can still "see". The picture is a file in the workspace (through the tool's
//! [`PathPolicy`], as `read`) or an http(s) URL; either way it must be a PNG, JPEG, GIF or
//! WebP by its first bytes and at most [`IMAGE_MAX_BYTES`]. The model call and the
//! download go through the [`VisionModel`] port: the binary owns the LLM client, the
//! credentials and the HTTP client, this crate only the checks.

use std::sync::Arc;

use base64::Engine as _;
use futures_util::future::BoxFuture;
use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use pincer_ai::{ContentBlock, ImageContent};
use serde::Deserialize;
use serde_json::json;

use crate::files::open::{open_regular, read_prefix};
use crate::files::{blocking, resolve_shown};
use crate::paths::PathPolicy;

/// Largest picture the tool sends (pincer-turns' `DEFAULT_IMAGE_MAX_BYTES`: what providers
/// take in one image part).
pub const IMAGE_MAX_BYTES: u64 = 6 * 1024 * 1024;

/// What the model is asked when the call names no prompt (OpenClaw's default).
pub const DEFAULT_PROMPT: &str = "Describe the image.";

/// A model that takes images, and a way to download one: implemented by the binary.
pub trait VisionModel: Send + Sync {
    /// The model's answer to `prompt` about `image` (one completion, not an agent run).
    /// The error is said to the agent as it is, so it names the model.
    fn describe(
        &self,
        image: ImageContent,
        prompt: String,
    ) -> BoxFuture<'static, Result<String, String>>;

    /// GETs an http(s) `url`: its bytes, at most `limit` (more is an error, found out as the
    /// bytes arrive, not after).
    fn fetch(&self, url: String, limit: u64) -> BoxFuture<'static, Result<Vec<u8>, String>>;
}

/// Arguments of `image`: exactly one of `path` and `url`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageArgs {
    /// Path of an image file (png, jpg, gif, webp) in the workspace, relative to it or
    /// absolute inside it. Give this or url, not both.
    #[serde(default)]
    pub path: Option<String>,
    /// An http or https URL of an image. Give this or path, not both.
    #[serde(default)]
    pub url: Option<String>,
    /// What to ask about the image (default: "Describe the image.").
    #[serde(default)]
    pub prompt: Option<String>,
}

/// Where the picture comes from, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    Path(String),
    Url(String),
}

impl ImageArgs {
    /// The one source the call names, or why it cannot be used.
    pub fn source(&self) -> Result<ImageSource, ToolError> {
        match (given(self.path.as_deref()), given(self.url.as_deref())) {
            (Some(_), Some(_)) => Err(ToolError::failed("give either path or url, not both")),
            (None, None) => Err(ToolError::failed(
                "give the image: path (a file in the workspace) or url (http or https)",
            )),
            (Some(path), None) => Ok(ImageSource::Path(path.to_owned())),
            (None, Some(url)) => {
                let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
                match scheme.as_deref() {
                    Some("http" | "https") if url.contains("://") => {
                        Ok(ImageSource::Url(url.to_owned()))
                    }
                    _ => Err(ToolError::failed(format!(
                        "url {url:?} is not an http or https URL; for a file in the \
                         workspace use path"
                    ))),
                }
            }
        }
    }

    /// The prompt, or [`DEFAULT_PROMPT`] when none (or only blanks) was given.
    pub fn prompt(&self) -> String {
        self.prompt
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .unwrap_or(DEFAULT_PROMPT)
            .to_owned()
    }
}

/// `value` trimmed, unless that leaves nothing.
fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|s| !s.is_empty())
}

/// The MIME type of a PNG, JPEG, GIF or WebP by its first bytes. pincer-turns' `sniff_mime`
/// knows more kinds, but turns depends on this crate, not the other way round.
pub fn image_mime(head: &[u8]) -> Option<&'static str> {
    let at = |offset: usize, sig: &[u8]| head.get(offset..offset + sig.len()) == Some(sig);
    if at(0, b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if at(0, b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        Some("image/gif")
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        Some("image/webp")
    } else {
        None
    }
}

/// `bytes` as an image block, if they are an image within `limit` bytes; `what` names them.
pub fn image_block(bytes: &[u8], what: &str, limit: u64) -> Result<ImageContent, ToolError> {
    if bytes.len() as u64 > limit {
        return Err(too_big(what, limit));
    }
    let Some(mime) = image_mime(bytes) else {
        return Err(ToolError::failed(format!(
            "{what} is not an image: the image tool takes png, jpeg, gif and webp"
        )));
    };
    Ok(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        mime_type: mime.to_owned(),
    })
}

fn too_big(what: &str, limit: u64) -> ToolError {
    ToolError::failed(format!(
        "{what} is larger than {limit} bytes, the most the image tool sends"
    ))
}

/// The `image` tool.
#[derive(Clone)]
pub struct ImageTool {
    policy: PathPolicy,
    vision: Arc<dyn VisionModel>,
    limit: u64,
}

impl ImageTool {
    /// Images from the workspace of `policy` or the web, asked about through `vision`.
    pub fn new(policy: PathPolicy, vision: Arc<dyn VisionModel>) -> Self {
        Self {
            policy,
            vision,
            limit: IMAGE_MAX_BYTES,
        }
    }

    /// The same tool with another size cap (tests use a small one).
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }
}

const DESCRIPTION: &str = "Ask a vision model about an image: give path (an image file in \
the workspace) or url (http or https), and a prompt saying what you want to know. Takes png, \
jpg, gif and webp up to 6 MB. Returns the model's answer as text; nothing is shown or sent \
to the user. Use it to look at pictures you cannot see yourself.";

impl TypedTool for ImageTool {
    type Args = ImageArgs;

    const NAME: &'static str = "image";
    const LABEL: &'static str = "Image";
    const DESCRIPTION: &'static str = DESCRIPTION;

    async fn run(&self, args: ImageArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let source = args.source()?;
        let prompt = args.prompt();
        let limit = self.limit;
        let load = async {
            match &source {
                ImageSource::Path(path) => {
                    let policy = self.policy.clone();
                    let path = path.clone();
                    blocking(move || read_image(&policy, &path, limit)).await
                }
                ImageSource::Url(url) => {
                    let bytes = self
                        .vision
                        .fetch(url.clone(), limit)
                        .await
                        .map_err(|e| ToolError::failed(format!("cannot fetch {url}: {e}")))?;
                    Ok((image_block(&bytes, url, limit)?, url.clone()))
                }
            }
        };
        let (image, shown) = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
            loaded = load => loaded?,
        };
        let mime = image.mime_type.clone();
        let answer = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
            answer = self.vision.describe(image, prompt) => answer,
        }
        .map_err(ToolError::failed)?;
        Ok(ToolOutput {
            content: vec![ContentBlock::text(answer)],
            details: Some(json!({"image": shown, "mimeType": mime})),
        })
    }
}

/// The workspace file `user_path` as an image block, and its path as the model is shown it
/// (blocking). Only `limit` bytes and one more are read, whatever the file's size.
fn read_image(
    policy: &PathPolicy,
    user_path: &str,
    limit: u64,
) -> Result<(ImageContent, String), ToolError> {
    let (path, shown) = resolve_shown(policy, user_path)?;
    let (mut file, meta) = open_regular(&path, &shown, user_path, "name an image file in it")?;
    if meta.len() > limit {
        return Err(too_big(&shown, limit));
    }
    let max = usize::try_from(limit).unwrap_or(usize::MAX);
    let (bytes, more) = read_prefix(&mut file, max, user_path)?;
    if more {
        return Err(too_big(&shown, limit));
    }
    Ok((image_block(&bytes, &shown, limit)?, shown))
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
