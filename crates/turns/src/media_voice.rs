//! Voice notes and audio files that came with a message, as text for the model: each is
//! transcribed through the configured OpenAI-compatible endpoint (`tools.media.audio`,
//! [`pincer_ai::transcription`]) and put in the message as `[voice note] <text>`. The file
//! itself stays in the inbox, named in the message as every file is
//! ([`crate::media_input`]); when there is no transcriber, or it is down, the message says
//! so, so the agent can tell the user rather than guess.

use std::path::Path;

use pincer_ai::transcription::Transcriber;
use pincer_channel_port::InboundMedia;

use crate::media_input::{MediaLimits, size_text, sniff_mime};

/// The lines for the audio files among `media` (paths relative to `workspace`, or absolute),
/// in order, each ending in a newline; empty when there is none.
pub async fn voice_notes(
    workspace: &Path,
    media: &[InboundMedia],
    transcriber: Option<&Transcriber>,
    limits: &MediaLimits,
) -> String {
    let mut out = String::new();
    for file in media {
        let full = if file.path.is_absolute() {
            file.path.clone()
        } else {
            workspace.join(&file.path)
        };
        let name = file
            .file_name
            .clone()
            .unwrap_or_else(|| file.path.display().to_string());
        // Read whole only once it is known to be audio and within the limit.
        let head = read_prefix(&full, 16).await.unwrap_or_default();
        let mime = sniff_mime(&head, file.mime.as_deref(), &name);
        if !mime.starts_with("audio/") {
            continue;
        }
        let shown = file.path.display();
        let Some(transcriber) = transcriber else {
            out.push_str(&format!(
                "(No transcriber is configured (tools.media.audio), so the audio file {shown} \
                 was not transcribed.)\n"
            ));
            continue;
        };
        let size = tokio::fs::metadata(&full)
            .await
            .map(|m| m.len())
            .unwrap_or(0);
        if size > limits.media_max_bytes {
            out.push_str(&format!(
                "(The audio file {shown} was not transcribed: it is {}, over the limit of {}.)\n",
                size_text(size),
                size_text(limits.media_max_bytes)
            ));
            continue;
        }
        let text = match tokio::fs::read(&full).await {
            Ok(bytes) => transcriber
                .transcribe(&name, &mime, &bytes)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("cannot read it ({e})")),
        };
        match text {
            Ok(text) if text.is_empty() => {
                out.push_str(&format!("[voice note] (nothing was heard in {shown})\n"));
            }
            Ok(text) => out.push_str(&format!("[voice note] {text}\n")),
            Err(why) => out.push_str(&format!(
                "(The audio file {shown} could not be transcribed: {why}. The file is kept.)\n"
            )),
        }
    }
    out
}

async fn read_prefix(path: &Path, n: u64) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt as _;
    let file = tokio::fs::File::open(path).await?;
    let mut head = Vec::with_capacity(n as usize);
    file.take(n).read_to_end(&mut head).await?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::disallowed_methods,
        reason = "tests write their files directly"
    )]
    use super::*;

    fn file(ws: &Path, name: &str, bytes: &[u8]) -> InboundMedia {
        std::fs::write(ws.join(name), bytes).unwrap();
        InboundMedia {
            path: name.into(),
            mime: None,
            file_name: Some(name.to_owned()),
            size: bytes.len() as u64,
        }
    }

    #[tokio::test]
    async fn without_a_transcriber_the_message_says_so_and_other_files_are_left_alone() {
        let ws = tempfile::tempdir().unwrap();
        let media = [
            file(ws.path(), "a.ogg", b"OggS\0voice"),
            file(ws.path(), "notes.txt", b"text"),
            file(ws.path(), "b.mp3", b"ID3\x04song"),
        ];
        let lines = voice_notes(ws.path(), &media, None, &MediaLimits::default()).await;
        assert_eq!(
            lines,
            "(No transcriber is configured (tools.media.audio), so the audio file a.ogg was \
             not transcribed.)\n(No transcriber is configured (tools.media.audio), so the \
             audio file b.mp3 was not transcribed.)\n"
        );
        assert_eq!(
            voice_notes(ws.path(), &media[1..2], None, &MediaLimits::default()).await,
            ""
        );
    }
}
