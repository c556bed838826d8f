//! The `ask` tool: `chat.send` on a connection of its own, then that connection's frames
//! until the run's `chat` event ends it. Streamed text and tool starts go to the client as
//! progress notifications when it asked for them (a `progressToken`); the client cancelling
//! the request, or the timeout, stops the run with `chat.abort`.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::frames::{RunStep, run_step};
use super::port::{GatewayCalls, GatewayError};
use super::tools::{AskArgs, default_session_key};

/// How long `ask` waits for a reply unless told otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest wait a client may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// Most characters of streamed text one progress message carries.
const PROGRESS_CHARS: usize = 200;

/// Where progress goes: the client, under the token it sent.
pub struct Progress {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

/// How an `ask` ended when it did not answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    #[error("{0}")]
    Run(String),
    /// The client cancelled the request; the run was stopped.
    #[error("cancelled; the run was stopped")]
    Cancelled,
}

/// One turn: the reply's text.
pub async fn ask(
    gw: &dyn GatewayCalls,
    args: AskArgs,
    progress: Option<Progress>,
    cancel: CancellationToken,
) -> Result<String, AskError> {
    let session_key = args
        .session_key
        .filter(|k| !k.trim().is_empty())
        .unwrap_or_else(|| default_session_key(args.agent_id.as_deref()));
    let timeout = args
        .timeout_seconds
        .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s.max(1)))
        .min(MAX_TIMEOUT);
    let run_id = format!(
        "mcp-{:016x}{:016x}",
        pincer_base::id::random_u64(),
        pincer_base::id::random_u64()
    );
    let params = json!({
        "sessionKey": session_key,
        "message": args.message,
        "idempotencyKey": run_id,
    });
    let mut followed = gw.send_following("chat.send", params).await?;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut streamed = String::new();
    let mut steps = 0u32;
    loop {
        let frame = tokio::select! {
            frame = followed.frames.next_frame() => frame?,
            () = cancel.cancelled() => {
                abort(gw, &session_key, &run_id).await;
                return Err(AskError::Cancelled);
            }
            () = &mut deadline => {
                abort(gw, &session_key, &run_id).await;
                return Err(AskError::Run(format!(
                    "no reply within {} s; the run was stopped",
                    timeout.as_secs()
                )));
            }
        };
        let note = match run_step(&frame, &followed.request_id, &run_id) {
            RunStep::Ignore => continue,
            RunStep::Delta(delta) => {
                streamed.push_str(&delta);
                delta
            }
            RunStep::Tool(name) => format!("running tool {name}"),
            RunStep::Steered => {
                return Ok(format!(
                    "(added to the reply already running on {session_key}; see \
                     sessions_history for its answer)"
                ));
            }
            RunStep::Done(text) => {
                let text = if text.is_empty() {
                    streamed.clone()
                } else {
                    text
                };
                // Deltas that did not arrive before the final (the gateway sends `agent` and
                // `chat` events on separate paths) still reach the client as progress, so the
                // progress messages always add up to the reply.
                if let (Some(progress), Some(rest)) = (&progress, text.strip_prefix(&streamed)) {
                    notify(progress, &mut steps, rest).await;
                }
                return Ok(text);
            }
            RunStep::Failed(message) => return Err(AskError::Run(message)),
            RunStep::Aborted => return Err(AskError::Run("the run was stopped".into())),
        };
        if let Some(progress) = &progress {
            notify(progress, &mut steps, &note).await;
        }
    }
}

/// `note` as progress messages of at most [`PROGRESS_CHARS`] characters each (split, not
/// cut, so streamed text arrives whole).
async fn notify(progress: &Progress, steps: &mut u32, note: &str) {
    let chars: Vec<char> = note.chars().collect();
    for chunk in chars.chunks(PROGRESS_CHARS) {
        *steps += 1;
        let param = ProgressNotificationParam::new(progress.token.clone(), f64::from(*steps))
            .with_message(chunk.iter().collect::<String>());
        // A client that went away cannot be told; the run goes on to its end or cancel.
        let _ = progress.peer.notify_progress(param).await;
    }
}

/// Stops the run; failing to (the gateway went away) leaves nothing more to do.
async fn abort(gw: &dyn GatewayCalls, session_key: &str, run_id: &str) {
    let params = json!({ "sessionKey": session_key, "runId": run_id });
    if let Err(e) = gw.call("chat.abort", params).await {
        tracing::warn!("could not stop run {run_id}: {e}");
    }
}
