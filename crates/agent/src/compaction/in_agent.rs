//! Compaction of an agent's own conversation, for the run loop (threshold and overflow)
//! and for a manual `Agent::compact`: the check, the call with the agent's model, stream
//! function, options and API key, the swap of the message list, and the `compaction_end`
//! payload (pi 0.73's `compaction_start` / `compaction_end` events).

use pincer_ai::{AssistantMessage, Message, StopReason};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{
    CompactionError, CompactionReason, CompactionResult, CompactionSettings, compact_with_options,
    compaction_trigger,
};
use crate::agent::Inner;

/// The payload of a `compaction_end` event (pi's shape: `reason`, `result` when it
/// succeeded, `aborted`, `willRetry`, `errorMessage` when it failed).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEnd {
    pub reason: CompactionReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<CompactionResult>,
    pub aborted: bool,
    /// The failed turn is sent again (an overflow that compacted successfully).
    pub will_retry: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl CompactionEnd {
    /// The payload for an outcome, with pi's error texts.
    pub fn new(
        reason: CompactionReason,
        outcome: &Result<CompactionResult, CompactionError>,
    ) -> Self {
        match outcome {
            Ok(result) => Self {
                reason,
                result: Some(result.clone()),
                aborted: false,
                will_retry: reason == CompactionReason::Overflow,
                error_message: None,
            },
            Err(CompactionError::Aborted) => Self {
                reason,
                result: None,
                aborted: true,
                will_retry: false,
                error_message: None,
            },
            Err(e) => Self {
                reason,
                result: None,
                aborted: false,
                will_retry: false,
                error_message: Some(match reason {
                    CompactionReason::Manual => format!("Compaction failed: {e}"),
                    CompactionReason::Threshold => format!("Auto-compaction failed: {e}"),
                    CompactionReason::Overflow => format!("Context overflow recovery failed: {e}"),
                }),
            },
        }
    }
}

/// [`compaction_trigger`] for the reply that just ended, on the agent's conversation.
pub(crate) fn trigger(
    inner: &Inner,
    reply: &AssistantMessage,
    settings: &CompactionSettings,
) -> Option<CompactionReason> {
    let core = inner.core();
    compaction_trigger(reply, &core.config.messages, &core.config.model, settings)
}

/// Drop a trailing error reply from the conversation, so an overflow is not sent again
/// (it stays in the run's `agent_end` messages and in any transcript).
pub(crate) fn drop_failed_reply(inner: &Inner) {
    let mut core = inner.core();
    if matches!(core.config.messages.last(), Some(Message::Assistant(a)) if a.stop_reason == StopReason::Error)
    {
        core.config.messages.pop();
    }
}

/// Compact the agent's conversation with its own model, stream function, options and
/// API key hook, and replace its messages with the result on success. The caller must
/// hold the run (no other change to the messages while this runs).
pub(crate) async fn compact_agent(
    inner: &Inner,
    settings: &CompactionSettings,
    custom_instructions: Option<&str>,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let (stream_fn, model, messages, mut options, get_api_key) = {
        let core = inner.core();
        let c = &core.config;
        (
            c.stream_fn.clone(),
            c.model.clone(),
            c.messages.clone(),
            c.stream_options.clone(),
            c.hooks.get_api_key.clone(),
        )
    };
    if let Some(get_key) = get_api_key
        && let Some(key) = get_key(model.provider.clone()).await
    {
        options.api_key = Some(key);
    }
    options.cancel = Some(cancel.clone());
    let result = compact_with_options(
        &stream_fn,
        &model,
        &messages,
        settings,
        custom_instructions,
        options,
    )
    .await?;
    inner.core().config.messages = result.messages.clone();
    Ok(result)
}
