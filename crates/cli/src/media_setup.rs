//! The media pipeline composed from the configuration: the limits (`agents.defaults.mediaMaxMb`),
//! the voice-note transcriber (`tools.media.audio`) and the one function every entry point
//! builds a user message with — the gateway's turns and `pincer ask` alike — so a file
//! reads the same to the model whichever way it came.

use std::path::Path;
use std::time::Duration;

use pincer_ai::transcription::{Transcriber, TranscriptionEndpoint, default_base_url};
use pincer_ai::{Message, Model, UserMessage};
use pincer_channel_port::InboundMedia;
use pincer_turns::media_input::{self, MediaLimits};
use pincer_turns::media_voice::voice_notes;

use crate::app::App;

/// How long a transcription may take unless `tools.media.audio.timeoutSeconds` says.
const DEFAULT_TRANSCRIPTION_TIMEOUT: Duration = Duration::from_secs(60);

/// Days received files stay in the inbox unless `agents.defaults.mediaRetentionDays` says.
const DEFAULT_MEDIA_RETENTION_DAYS: u32 = 30;

/// Prunes `agent_id`'s inbox folders older than `agents.defaults.mediaRetentionDays`
/// (logged; a failure is logged and the turn goes on). Blocking.
pub fn prune_inbox(app: &App, agent_id: &str, workspace: &Path) {
    let days = app
        .config
        .agents
        .defaults
        .media_retention_days
        .unwrap_or(DEFAULT_MEDIA_RETENTION_DAYS);
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    match pincer_turns::media_inbox::prune_inbox(workspace, &today, days) {
        Ok(removed) if removed.is_empty() => {}
        Ok(removed) => tracing::info!(
            agent = agent_id,
            days,
            ?removed,
            "pruned old received files"
        ),
        Err(e) => tracing::warn!(agent = agent_id, error = %e, "cannot prune the inbox"),
    }
}

/// The size limits of received files.
pub fn limits(app: &App) -> MediaLimits {
    MediaLimits::with_media_max_mb(app.config.agents.defaults.media_max_mb)
}

/// The configured transcriber, if there is one that can be reached: `baseUrl` or the
/// provider's, `apiKey` or the provider's key from the environment. A configuration that
/// names no reachable endpoint is logged and treated as none (the message then says the
/// voice note was not transcribed).
pub fn transcriber(app: &App) -> Option<Transcriber> {
    let audio = app.config.tools.media.as_ref()?.audio.as_ref()?;
    let provider = audio.provider.as_deref().unwrap_or("openai");
    let Some(base_url) = audio
        .base_url
        .clone()
        .or_else(|| default_base_url(provider).map(str::to_owned))
    else {
        tracing::warn!(
            provider,
            "tools.media.audio: no baseUrl, and {provider} has no known transcription endpoint"
        );
        return None;
    };
    let api_key = audio
        .api_key
        .clone()
        .or_else(|| pincer_ai::env::env_api_key(app.env.as_ref(), provider));
    Some(Transcriber::new(TranscriptionEndpoint {
        base_url,
        model: audio.model.clone(),
        api_key,
        timeout: audio
            .timeout_seconds
            .map_or(DEFAULT_TRANSCRIPTION_TIMEOUT, Duration::from_secs),
    }))
}

/// The user message for `text` and the files that came with it (in `workspace`): voice
/// notes transcribed, every file named, images sent when `model` takes them. Blocking: it
/// reads the files and waits for the transcriptions; the gateway calls it on the blocking
/// pool (a thread of the runtime, where [`user_message_async`] can be waited for).
pub fn user_message(
    app: &App,
    workspace: &Path,
    text: &str,
    media: &[InboundMedia],
    model: &Model,
) -> Message {
    // The common case, on every turn: nothing to wait for.
    if media.is_empty() {
        return Message::user(text.to_owned());
    }
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.block_on(user_message_async(app, workspace, text, media, model)),
        // Without a runtime there is nothing to transcribe with: the files are still named.
        Err(_) => with_voice(app, workspace, String::new(), text, media, model),
    }
}

/// [`user_message`] for async code (`pincer ask`): the transcriptions are awaited; the
/// file reads are small and bounded (one-shot commands, not the gateway's threads).
pub async fn user_message_async(
    app: &App,
    workspace: &Path,
    text: &str,
    media: &[InboundMedia],
    model: &Model,
) -> Message {
    if media.is_empty() {
        return Message::user(text.to_owned());
    }
    let voice = voice_notes(workspace, media, transcriber(app).as_ref(), &limits(app)).await;
    with_voice(app, workspace, voice, text, media, model)
}

/// The message from the voice notes' lines (`voice`), the text and the files.
fn with_voice(
    app: &App,
    workspace: &Path,
    voice: String,
    text: &str,
    media: &[InboundMedia],
    model: &Model,
) -> Message {
    let takes_images = model.input.contains(&pincer_ai::InputKind::Image);
    let (content, _) = media_input::user_content(
        workspace,
        &format!("{voice}{text}"),
        media,
        takes_images,
        &limits(app),
    );
    Message::User(UserMessage {
        content,
        timestamp: pincer_ai::now_ms(),
    })
}
