//! Files that came with a message, made into the user message the model gets: one pipeline
//! for every entry point (channels, `chat.send` attachments, the OpenAI-compatible API,
//! `pincer ask --image/--file`). The files are already in the agent's workspace inbox
//! ([`crate::media_inbox`]); each is named in the message by its workspace-relative path
//! (`[media attached: <path> (<mime>)]`, OpenClaw's note) so the agent can `read` it, and an
//! image goes to the model as an image block when the model takes images.
//!
//! What a file is comes from its first bytes ([`sniff_mime`]), then from what the sender
//! said, then from its name: a `.png` that is really a PDF is a PDF. An image that is not a
//! PNG, JPEG, GIF or WebP (what all four wire APIs take), is over
//! [`MediaLimits::image_max_bytes`], or cannot be read is not sent: the note says why, so
//! the agent can tell the user instead of answering about a picture it never saw.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use pincer_ai::{ContentBlock, ImageContent, Message, UserContent};
use pincer_channel_port::InboundMedia;

/// Default cap on one received file (OpenClaw's `mediaMaxMb` default, 20 MB).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 20 * 1024 * 1024;
/// Default cap on one image sent to the model (OpenClaw's 6 MB).
pub const DEFAULT_IMAGE_MAX_BYTES: u64 = 6 * 1024 * 1024;

/// The image types every wire API takes.
const MODEL_IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// How big received files may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Any one file (larger ones are refused where they arrive).
    pub media_max_bytes: u64,
    /// An image sent to the model.
    pub image_max_bytes: u64,
}

impl Default for MediaLimits {
    fn default() -> Self {
        Self {
            media_max_bytes: DEFAULT_MEDIA_MAX_BYTES,
            image_max_bytes: DEFAULT_IMAGE_MAX_BYTES,
        }
    }
}

impl MediaLimits {
    /// The limits with `agents.defaults.mediaMaxMb` (megabytes) applied, if set.
    pub fn with_media_max_mb(mb: Option<u64>) -> Self {
        let default = Self::default();
        Self {
            media_max_bytes: mb
                .map_or(default.media_max_bytes, |mb| mb.saturating_mul(1024 * 1024)),
            ..default
        }
    }
}

/// The MIME type of a file: from its first bytes when they are a known signature, else the
/// type the sender declared (unless that is the say-nothing `application/octet-stream`), else
/// from the name's extension, else `application/octet-stream`.
///
/// Hand-written rather than a crate: only the types Pincer treats differently matter (the
/// images models take, PDF, the audio formats voice notes come in), and those signatures are
/// a few fixed byte strings.
pub fn sniff_mime(head: &[u8], declared: Option<&str>, name: &str) -> String {
    if let Some(mime) = magic(head) {
        return mime.to_owned();
    }
    // `application/octet-stream` says nothing (platforms send it for any file): the name
    // may say more.
    if let Some(declared) = declared
        .map(str::trim)
        .filter(|d| d.contains('/') && !d.eq_ignore_ascii_case("application/octet-stream"))
    {
        return declared.to_ascii_lowercase();
    }
    by_extension(name)
        .unwrap_or("application/octet-stream")
        .to_owned()
}

fn magic(head: &[u8]) -> Option<&'static str> {
    let starts = |sig: &[u8]| head.starts_with(sig);
    let at = |offset: usize, sig: &[u8]| head.get(offset..offset + sig.len()) == Some(sig);
    Some(if starts(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if starts(b"\xff\xd8\xff") {
        "image/jpeg"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "image/gif"
    } else if starts(b"RIFF") && at(8, b"WEBP") {
        "image/webp"
    } else if starts(b"RIFF") && at(8, b"WAVE") {
        "audio/wav"
    } else if starts(b"%PDF-") {
        "application/pdf"
    } else if starts(b"OggS") {
        "audio/ogg"
    } else if starts(b"ID3") || (head.len() > 1 && head[0] == 0xff && head[1] & 0xe0 == 0xe0) {
        "audio/mpeg"
    } else if at(4, b"ftypM4A") {
        "audio/mp4"
    } else if starts(b"\x1a\x45\xdf\xa3") {
        "video/webm"
    } else {
        return None;
    })
}

fn by_extension(name: &str) -> Option<&'static str> {
    let ext = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "json" => "application/json",
        "ogg" | "oga" | "opus" => "audio/ogg",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "wav" => "audio/wav",
        _ => return None,
    })
}

/// What became of one file in the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// Sent to the model as an image block.
    Image,
    /// Named only (not an image, or the model takes no images).
    Named,
    /// An image that was not sent, and why.
    ImageRefused(String),
}

/// The user message for `text` with `media` (paths relative to `workspace`, or absolute):
/// a note per file, then the text, then the images the model is sent. `takes_images` is
/// whether the model accepts image input. Blocking: it reads the image files.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: the turn is planned on the blocking pool"
)]
pub fn user_content(
    workspace: &Path,
    text: &str,
    media: &[InboundMedia],
    takes_images: bool,
    limits: &MediaLimits,
) -> (UserContent, Vec<Shown>) {
    if media.is_empty() {
        return (UserContent::Text(text.to_owned()), Vec::new());
    }
    let mut notes = String::new();
    let mut images = Vec::new();
    let mut shown = Vec::with_capacity(media.len());
    let mut text_budget = crate::media_text::TextBudget::default();
    for file in media {
        let full = resolve(workspace, &file.path);
        let name = file
            .file_name
            .clone()
            .unwrap_or_else(|| file.path.display().to_string());
        let head = read_head(&full);
        let mime = sniff_mime(&head, file.mime.as_deref(), &name);
        notes.push_str(&format!(
            "[media attached: {} ({mime})]\n",
            file.path.display()
        ));
        let outcome = if !mime.starts_with("image/") {
            // A PDF's or text file's text, framed with its path (empty for other files).
            let doc = crate::media_text::file_note(&full, &file.path, &mime, &mut text_budget);
            notes.push_str(&doc);
            Shown::Named
        } else if !takes_images {
            notes.push_str("(This model does not take images: the picture was not shown to it.)\n");
            Shown::ImageRefused("the model does not take images".into())
        } else {
            match image_block(&full, &mime, limits) {
                Ok(image) => {
                    images.push(ContentBlock::Image(image));
                    Shown::Image
                }
                Err(why) => {
                    notes.push_str(&format!("(The image was not sent to the model: {why}.)\n"));
                    Shown::ImageRefused(why)
                }
            }
        };
        shown.push(outcome);
    }
    let mut blocks = vec![ContentBlock::text(format!("{notes}{text}"))];
    blocks.extend(images);
    (UserContent::Blocks(blocks), shown)
}

fn resolve(workspace: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    }
}

/// The first bytes of a file (enough for every signature); empty when it cannot be read.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: the turn is planned on the blocking pool"
)]
fn read_head(path: &Path) -> Vec<u8> {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(16);
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    head
}

/// `path` as an image block of type `mime`, if the model can be sent it.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: the turn is planned on the blocking pool"
)]
fn image_block(path: &Path, mime: &str, limits: &MediaLimits) -> Result<ImageContent, String> {
    if !MODEL_IMAGE_TYPES.contains(&mime) {
        return Err(format!(
            "{mime} is not a type models take (PNG, JPEG, GIF or WebP)"
        ));
    }
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read it ({e})"))?
        .len();
    // Larger pictures than the model takes are shrunk (`media_image`), up to the file limit.
    if size > limits.media_max_bytes {
        return Err(format!(
            "it is {}, over the limit of {} for files",
            size_text(size),
            size_text(limits.media_max_bytes)
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it ({e})"))?;
    let prepared = crate::media_image::prepare(bytes, mime, limits.image_max_bytes)?;
    Ok(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(prepared.bytes),
        mime_type: prepared.mime,
    })
}

/// How many of the latest user messages keep their images in the context a turn sends;
/// older images become [`OLD_IMAGE_NOTE`], so a long chat with photos does not send every
/// photo again on every turn (the file stays in the inbox, named in its message).
pub const IMAGE_HISTORY_TURNS: usize = 3;

/// What an image older than [`IMAGE_HISTORY_TURNS`] user messages is replaced with.
pub const OLD_IMAGE_NOTE: &str = "(An image was attached here; it is no longer sent. `read` the file named above to see it again.)";

/// Replaces the images of every user message but the last `keep` ones with
/// [`OLD_IMAGE_NOTE`]. The transcript keeps them: only what is sent changes.
pub fn drop_old_images(messages: &mut [Message], keep: usize) {
    let mut users_seen = 0;
    for message in messages.iter_mut().rev() {
        let Message::User(user) = message else {
            continue;
        };
        users_seen += 1;
        if users_seen <= keep {
            continue;
        }
        if let UserContent::Blocks(blocks) = &mut user.content
            && blocks.iter().any(|b| matches!(b, ContentBlock::Image(_)))
        {
            blocks.retain(|b| !matches!(b, ContentBlock::Image(_)));
            blocks.push(ContentBlock::text(OLD_IMAGE_NOTE));
        }
    }
}

/// A size as people read it: `512 bytes`, `12 KB`, `6.5 MB`.
pub fn size_text(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    match bytes {
        0..KB => format!("{bytes} bytes"),
        KB..MB => format!("{} KB", bytes.div_ceil(KB)),
        _ => {
            let tenths = (bytes * 10).div_ceil(MB);
            match tenths % 10 {
                0 => format!("{} MB", tenths / 10),
                t => format!("{}.{t} MB", tenths / 10),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::disallowed_methods,
        reason = "tests write their files directly"
    )]
    use super::*;

    const PNG: &[u8] = pincer_testkit::files::PIXEL_PNG;

    #[test]
    fn the_first_bytes_win_over_what_was_declared_and_the_name() {
        let cases: &[(&[u8], Option<&str>, &str, &str)] = &[
            (PNG, Some("application/pdf"), "a.pdf", "image/png"),
            (b"\xff\xd8\xff\xe0", None, "x", "image/jpeg"),
            (b"GIF89a..", None, "x", "image/gif"),
            (b"RIFF\0\0\0\0WEBPVP8 ", None, "x", "image/webp"),
            (b"RIFF\0\0\0\0WAVEfmt ", None, "x", "audio/wav"),
            (
                b"%PDF-1.7",
                Some("image/png"),
                "photo.png",
                "application/pdf",
            ),
            (b"OggS\0", None, "voice", "audio/ogg"),
            (b"ID3\x04", None, "x", "audio/mpeg"),
            (b"\0\0\0\x20ftypM4A ", None, "x", "audio/mp4"),
            (b"hello", Some("Text/Plain"), "x.png", "text/plain"),
            (b"hello", None, "notes.MD", "text/markdown"),
            (b"hello", Some("nonsense"), "x", "application/octet-stream"),
            (
                b"hello",
                Some("application/octet-stream"),
                "a.txt",
                "text/plain",
            ),
            (
                b"hello",
                Some("application/octet-stream"),
                "a",
                "application/octet-stream",
            ),
            (b"", None, "", "application/octet-stream"),
        ];
        for (head, declared, name, want) in cases {
            assert_eq!(sniff_mime(head, *declared, name), *want, "{name} {head:?}");
        }
    }

    fn file(dir: &Path, name: &str, bytes: &[u8], mime: Option<&str>) -> InboundMedia {
        std::fs::create_dir_all(dir.join("inbox")).unwrap();
        std::fs::write(dir.join("inbox").join(name), bytes).unwrap();
        InboundMedia {
            path: Path::new("inbox").join(name),
            mime: mime.map(str::to_owned),
            file_name: Some(name.to_owned()),
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn images_go_to_a_vision_model_and_every_file_is_named() {
        let ws = tempfile::tempdir().unwrap();
        let media = [
            file(ws.path(), "cat.png", PNG, Some("image/png")),
            file(ws.path(), "doc.txt", b"notes", None),
        ];
        let (content, shown) = user_content(
            ws.path(),
            "what is this?",
            &media,
            true,
            &MediaLimits::default(),
        );
        assert_eq!(shown, [Shown::Image, Shown::Named]);
        let UserContent::Blocks(blocks) = content else {
            panic!("blocks expected")
        };
        assert_eq!(
            blocks,
            [
                ContentBlock::text(
                    "[media attached: inbox/cat.png (image/png)]\n\
                     [media attached: inbox/doc.txt (text/plain)]\n\
                     <file name=\"inbox/doc.txt\" mime=\"text/plain\">\nnotes\n</file>\n\
                     what is this?"
                ),
                ContentBlock::Image(ImageContent {
                    data: base64::engine::general_purpose::STANDARD.encode(PNG),
                    mime_type: "image/png".into(),
                }),
            ]
        );
    }

    #[test]
    fn an_image_the_model_cannot_get_is_named_with_the_reason() {
        let ws = tempfile::tempdir().unwrap();
        let media = [file(ws.path(), "cat.png", PNG, None)];
        let text_of = |content: UserContent| match content {
            UserContent::Blocks(blocks) => {
                assert_eq!(blocks.len(), 1, "no image block");
                pincer_ai::texts(&blocks).collect::<String>()
            }
            UserContent::Text(t) => t,
        };
        let (content, shown) =
            user_content(ws.path(), "hi", &media, false, &MediaLimits::default());
        assert_eq!(
            shown,
            [Shown::ImageRefused("the model does not take images".into())]
        );
        assert_eq!(
            text_of(content),
            "[media attached: inbox/cat.png (image/png)]\n\
             (This model does not take images: the picture was not shown to it.)\nhi"
        );
        let small = MediaLimits {
            image_max_bytes: 4,
            ..MediaLimits::default()
        };
        let (content, shown) = user_content(ws.path(), "hi", &media, true, &small);
        let text = text_of(content);
        assert!(
            text.contains("(The image was not sent to the model: it is "),
            "{text}"
        );
        assert!(matches!(&shown[0], Shown::ImageRefused(_)));
        // A picture cut short is not sent (the provider would refuse the whole request).
        #[cfg(feature = "images")]
        {
            let cut = [file(ws.path(), "cut.png", &PNG[..40], None)];
            let (_, shown) = user_content(ws.path(), "", &cut, true, &MediaLimits::default());
            assert!(
                matches!(&shown[0], Shown::ImageRefused(why) if why.starts_with("the picture could not be read")),
                "{shown:?}"
            );
        }
        // A BMP is an image no wire API takes; a missing file is said so.
        let bmp = [file(ws.path(), "old.bmp", b"BM....", Some("image/bmp"))];
        let (_, shown) = user_content(ws.path(), "", &bmp, true, &MediaLimits::default());
        assert_eq!(
            shown,
            [Shown::ImageRefused(
                "image/bmp is not a type models take (PNG, JPEG, GIF or WebP)".into()
            )]
        );
        let gone = [InboundMedia {
            path: "inbox/gone.png".into(),
            mime: Some("image/png".into()),
            file_name: None,
            size: 0,
        }];
        let (_, shown) = user_content(ws.path(), "", &gone, true, &MediaLimits::default());
        assert!(matches!(&shown[0], Shown::ImageRefused(why) if why.starts_with("cannot read it")));
    }

    #[test]
    fn only_the_latest_user_messages_keep_their_images() {
        let image = || {
            ContentBlock::Image(ImageContent {
                data: "AAAA".into(),
                mime_type: "image/png".into(),
            })
        };
        let user = |n: usize| {
            Message::User(pincer_ai::UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::text(format!("photo {n}")),
                    image(),
                ]),
                timestamp: 0,
            })
        };
        let mut messages: Vec<Message> = (1..=4)
            .flat_map(|n| {
                [
                    user(n),
                    Message::Assistant(pincer_ai::AssistantMessage::default()),
                ]
            })
            .collect();
        drop_old_images(&mut messages, 2);
        let kept: Vec<(String, bool)> = messages
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => {
                    let UserContent::Blocks(blocks) = &u.content else {
                        return None;
                    };
                    let images = blocks.iter().any(|b| matches!(b, ContentBlock::Image(_)));
                    Some((
                        pincer_ai::texts(blocks).collect::<Vec<_>>().join("|"),
                        images,
                    ))
                }
                _ => None,
            })
            .collect();
        let old = |n: usize| (format!("photo {n}|{OLD_IMAGE_NOTE}"), false);
        assert_eq!(
            kept,
            [
                old(1),
                old(2),
                ("photo 3".into(), true),
                ("photo 4".into(), true)
            ]
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        let cases = [
            (0, "0 bytes"),
            (1023, "1023 bytes"),
            (1024, "1 KB"),
            (1025, "2 KB"),
            (6 * 1024 * 1024, "6 MB"),
            (6 * 1024 * 1024 + 1, "6.1 MB"),
            (20 * 1024 * 1024 + 512 * 1024, "20.5 MB"),
        ];
        for (bytes, want) in cases {
            assert_eq!(size_text(bytes), want);
        }
    }

    #[test]
    fn a_message_without_files_stays_plain_text() {
        let (content, shown) = user_content(
            Path::new("/nowhere"),
            "hi",
            &[],
            true,
            &MediaLimits::default(),
        );
        assert_eq!(content, UserContent::Text("hi".into()));
        assert!(shown.is_empty());
    }
}
