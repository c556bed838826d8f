//! `pincer ask --image PATH --file PATH`: files named on the command line, checked before
//! anything else happens (each exists, is a regular file, is at most
//! `agents.defaults.mediaMaxMb`, and an `--image` is a PNG, JPEG, GIF or WebP by its first
//! bytes), then copied into the agent's workspace inbox so the agent can `read` them. The
//! turn's user message is made from them by `media_setup::user_message_async`, as the
//! gateway makes its turns', so the notes and the image block are the same whichever way a
//! file came in.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use pincer_channel_port::InboundMedia;
use pincer_turns::media_input::{MediaLimits, size_text, sniff_mime};

/// One file the user named, checked.
#[derive(Debug)]
pub struct Attachment {
    path: PathBuf,
    /// What its name says it is (its last path component; `stdin.<ext>` for `-`).
    name: String,
    /// The bytes of `-` (standard input), read once while checking.
    piped: Option<Vec<u8>>,
}

/// The `--image` files then the `--file` files, each checked against `limits`; the first
/// that fails is the error, before any file is copied or a model is called.
pub fn check(
    images: &[PathBuf],
    files: &[PathBuf],
    limits: &MediaLimits,
) -> Result<Vec<Attachment>> {
    let images = images.iter().map(|path| (path, true));
    let files = files.iter().map(|path| (path, false));
    let named: Vec<_> = images.chain(files).collect();
    if named.iter().filter(|(path, _)| is_stdin(path)).count() > 1 {
        bail!("only one --image or --file may be - (standard input)");
    }
    named
        .into_iter()
        .map(|(path, image)| {
            if is_stdin(path) {
                check_stdin(image, limits)
            } else {
                check_one(path, image, limits)
            }
        })
        .collect()
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// `-`: the piped bytes (`cat photo.png | pincer ask --image - "what is this?"`), checked as
/// a named file is, and named by what they are.
fn check_stdin(image: bool, limits: &MediaLimits) -> Result<Attachment> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limits.media_max_bytes + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the file piped to standard input")?;
    if bytes.len() as u64 > limits.media_max_bytes {
        bail!(
            "cannot attach standard input: it is over the limit of {} (agents.defaults.mediaMaxMb)",
            size_text(limits.media_max_bytes)
        );
    }
    if bytes.is_empty() {
        bail!("cannot attach standard input: nothing was piped to it");
    }
    let mime = sniff_mime(&bytes[..bytes.len().min(16)], None, "");
    if image && !mime.starts_with("image/") {
        bail!(
            "cannot attach standard input as an image: its first bytes are not a PNG, JPEG, GIF \
             or WebP image's; attach it with --file - instead"
        );
    }
    let ext = match mime.as_str() {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "application/pdf" => ".pdf",
        "audio/ogg" => ".ogg",
        "audio/mpeg" => ".mp3",
        "audio/wav" => ".wav",
        "audio/mp4" => ".m4a",
        _ => "",
    };
    Ok(Attachment {
        path: PathBuf::from("-"),
        name: format!("stdin{ext}"),
        piped: Some(bytes),
    })
}

fn check_one(path: &Path, image: bool, limits: &MediaLimits) -> Result<Attachment> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("cannot attach {shown}: no such file")
        }
        Err(e) => bail!("cannot attach {shown}: {e}"),
    };
    if meta.is_dir() {
        bail!("cannot attach {shown}: it is a directory, not a file");
    }
    if !meta.is_file() {
        bail!("cannot attach {shown}: it is not a regular file");
    }
    if meta.len() > limits.media_max_bytes {
        bail!(
            "cannot attach {shown}: it is {}, over the limit of {} (agents.defaults.mediaMaxMb)",
            size_text(meta.len()),
            size_text(limits.media_max_bytes)
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    if image {
        let mut head = Vec::with_capacity(16);
        std::fs::File::open(path)
            .and_then(|file| file.take(16).read_to_end(&mut head))
            .with_context(|| format!("cannot attach {shown}"))?;
        // By its first bytes only: a name or an extension says nothing about what is inside.
        if !sniff_mime(&head, None, "").starts_with("image/") {
            bail!(
                "cannot attach {shown} as an image: its first bytes are not a PNG, JPEG, GIF or \
                 WebP image's; attach it with --file instead"
            );
        }
    }
    Ok(Attachment {
        path: path.to_path_buf(),
        name,
        piped: None,
    })
}

/// Copies `attachments` into `workspace`'s inbox (today's directory, under a safe unused
/// form of each name) and returns them as the turn's media, paths relative to `workspace`.
pub fn save(workspace: &Path, attachments: &[Attachment]) -> Result<Vec<InboundMedia>> {
    attachments
        .iter()
        .map(|file| {
            let bytes = match &file.piped {
                Some(bytes) => bytes.clone(),
                None => std::fs::read(&file.path)
                    .with_context(|| format!("cannot read {}", file.path.display()))?,
            };
            let path = pincer_turns::media_inbox::save_to_inbox(workspace, &file.name, &bytes)
                .with_context(|| {
                    format!(
                        "cannot copy {} into the workspace {}",
                        file.path.display(),
                        workspace.display()
                    )
                })?;
            Ok(InboundMedia {
                path,
                mime: None,
                file_name: Some(file.name.clone()),
                size: bytes.len() as u64,
            })
        })
        .collect()
}
