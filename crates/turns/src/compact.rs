//! `/compact [instructions]` on a session, outside any turn: the older part of the
//! conversation summarised by the model a turn there would use, with pi's manual
//! compaction (`Agent::compact`: the same cut, prompts and `Additional focus: …` for the
//! instructions as the automatic compaction inside a turn), written to the transcript as
//! pi's `compaction` entry, and the one-line answer OpenClaw gives
//! (`⚙️ Compacted (12k → 3.4k) • Context 3.4k/200k (2%)`).
//!
//! The caller keeps turns off the session meanwhile (the gateway holds its lane; `pincer
//! chat` runs one thing at a time): the transcript must not grow under the summary.

use std::time::Duration;

use pincer_agent::compaction::{CompactionError, estimate_context_tokens, estimate_tokens};
use pincer_agent::{Agent, AgentError};
use pincer_store::{StoreError, on_blocking_pool};

use crate::turn::TurnPlan;

/// How long one compaction may take, summary calls included, before it is given up (the
/// session waits for it meanwhile).
pub const COMPACT_TIMEOUT: Duration = Duration::from_secs(300);

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// The estimated context before (the last reply's reported usage plus what followed).
    pub tokens_before: u64,
    /// The estimated context after: the summary and the kept messages, chars / 4.
    pub tokens_after: u64,
    /// The summary, with pi's file tags.
    pub summary: String,
    /// The transcript entry of the first message kept as it was.
    pub first_kept_entry_id: String,
}

/// What `/compact` did, and the session's context before it.
#[derive(Debug)]
pub struct CompactAttempt {
    pub outcome: Result<Compacted, CompactError>,
    /// pi's estimate of the context before: the last reply's reported context plus what
    /// followed it (`None`: the session could not be read, or there is none).
    pub context_tokens: Option<u64>,
}

/// Why a session was not compacted.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    /// The session has no conversation before what is kept anyway (or no session at all).
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// The summary could not be had (the provider's error), or was stopped.
    #[error("{0}")]
    Failed(String),
    /// The summary calls took longer than the time given.
    #[error("timed out after {0} s")]
    TimedOut(u64),
    /// The session could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Compacts the session `plan` is for with `plan.agent`'s model, stream function and
/// compaction settings (the plan's input, tools and prompt are not used), `instructions`
/// appended to the summary prompt, within `timeout` (or until `plan.abort` is cancelled).
/// The session is never created: one that does not exist has nothing to compact.
pub async fn compact_session(
    plan: TurnPlan,
    instructions: Option<&str>,
    timeout: Duration,
) -> CompactAttempt {
    let mut context_tokens = None;
    let outcome = compact(plan, instructions, timeout, &mut context_tokens).await;
    CompactAttempt {
        outcome,
        context_tokens,
    }
}

/// [`compact_session`]; `context_tokens` gets the context's estimate once it is read.
async fn compact(
    plan: TurnPlan,
    instructions: Option<&str>,
    timeout: Duration,
    context_tokens: &mut Option<u64>,
) -> Result<Compacted, CompactError> {
    let TurnPlan {
        store,
        session_key,
        mut agent,
        abort,
        ..
    } = plan;
    let (read_store, key) = (store.clone(), session_key.clone());
    #[expect(
        clippy::disallowed_methods,
        reason = "inside on_blocking_pool: the index and transcript are read there"
    )]
    let opened = on_blocking_pool(move || {
        if read_store.entry(&key)?.is_none() {
            return Ok(None);
        }
        let session = read_store.resume(&key)?;
        let messages = session.transcript.context();
        Ok(Some((session, messages)))
    })
    .await?;
    let Some((mut session, messages)) = opened else {
        return Err(CompactError::NothingToCompact);
    };
    *context_tokens = Some(estimate_context_tokens(&messages));
    agent.messages = messages;
    let agent = Agent::new(agent);
    let abort = abort.unwrap_or_default();
    let result = tokio::select! {
        result = tokio::time::timeout(timeout, agent.compact(instructions)) => match result {
            Ok(result) => result,
            Err(_) => return Err(CompactError::TimedOut(timeout.as_secs())),
        },
        () = abort.cancelled() => return Err(CompactError::Failed("Compaction cancelled".into())),
    };
    let result = match result {
        Ok(result) => result,
        Err(AgentError::Compaction(CompactionError::NothingToCompact)) => {
            return Err(CompactError::NothingToCompact);
        }
        Err(e) => return Err(CompactError::Failed(e.to_string())),
    };
    let tokens_after: u64 = result.messages.iter().map(estimate_tokens).sum();
    #[expect(
        clippy::disallowed_methods,
        reason = "inside on_blocking_pool: the entry is appended and the index updated there"
    )]
    let recorded = on_blocking_pool(move || {
        let Some(entry) = crate::turn_store::record_compaction(&store, &mut session, &result)?
        else {
            return Ok(None);
        };
        // The context is now the summary and the kept messages (OpenClaw counts the same).
        store.update_session(&mut session, |e| e.total_tokens = Some(tokens_after))?;
        Ok(Some((entry.id, result)))
    })
    .await?;
    let Some((first_kept_entry_id, result)) = recorded else {
        return Err(CompactError::Failed(
            "the first kept message is not in the transcript".into(),
        ));
    };
    tracing::info!(
        session = %session_key,
        tokens_before = result.tokens_before,
        tokens_after,
        "compacted on request"
    );
    Ok(Compacted {
        tokens_before: result.tokens_before,
        tokens_after,
        summary: result.summary,
        first_kept_entry_id,
    })
}

/// The answer to `/compact`, as OpenClaw words it: what happened, then the context now
/// (after a compaction, else as it was) of the model's window (`0`: unknown).
pub fn compact_reply(attempt: &CompactAttempt, context_window: u64) -> String {
    let context_tokens = attempt.context_tokens;
    let (label, context) = match &attempt.outcome {
        Ok(done) => (
            format!(
                "Compacted ({} → {})",
                token_count(done.tokens_before),
                token_count(done.tokens_after)
            ),
            Some(done.tokens_after),
        ),
        Err(CompactError::NothingToCompact) => (
            "Compaction skipped: nothing compactable in this session yet".to_owned(),
            context_tokens,
        ),
        Err(e) => (format!("Compaction failed: {e}"), context_tokens),
    };
    format!(
        "⚙️ {label} • {}",
        context_usage(context.filter(|t| *t > 0), context_window)
    )
}

/// A token count as OpenClaw shows it: `950`, `1.2k`, `12k`, `1.5m`.
pub fn token_count(tokens: u64) -> String {
    // Exact below 2^53, which no token count reaches.
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts are far below 2^53"
    )]
    let value = tokens as f64;
    if tokens < 1000 {
        return tokens.to_string();
    }
    if tokens < 1_000_000 {
        let thousands = if tokens >= 10_000 {
            format!("{:.0}", value / 1e3)
        } else {
            format!("{:.1}", value / 1e3)
        };
        if thousands.parse::<f64>().is_ok_and(|t| t < 1000.0) {
            return format!("{thousands}k");
        }
    }
    format!("{:.1}m", value / 1e6)
}

/// `Context 3.4k/200k (2%)`: the context against the window, `?` for what is unknown.
fn context_usage(tokens: Option<u64>, window: u64) -> String {
    let window_label = if window > 0 {
        token_count(window)
    } else {
        "?".to_owned()
    };
    let Some(tokens) = tokens else {
        return format!("Context ?/{window_label}");
    };
    let percent = (window > 0).then(|| (tokens.saturating_mul(100) + window / 2) / window);
    match percent {
        Some(p) => format!(
            "Context {}/{window_label} ({}%)",
            token_count(tokens),
            p.min(999)
        ),
        None => format!("Context {}/{window_label}", token_count(tokens)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_as_openclaw_shows_them() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1000, "1.0k"),
            (3412, "3.4k"),
            (9_999, "10.0k"),
            (12_345, "12k"),
            (999_499, "999k"),
            (999_500, "1.0m"),
            (1_500_000, "1.5m"),
        ];
        for (tokens, want) in cases {
            assert_eq!(token_count(tokens), want, "{tokens}");
        }
    }

    #[test]
    fn the_answer_says_what_happened_and_the_context_now() {
        let attempt = |outcome, context_tokens| CompactAttempt {
            outcome,
            context_tokens,
        };
        let done = || {
            Ok(Compacted {
                tokens_before: 12_345,
                tokens_after: 3_412,
                summary: "s".into(),
                first_kept_entry_id: "e".into(),
            })
        };
        assert_eq!(
            compact_reply(&attempt(done(), Some(12_345)), 200_000),
            "⚙️ Compacted (12k → 3.4k) • Context 3.4k/200k (2%)"
        );
        assert_eq!(
            compact_reply(&attempt(done(), None), 0),
            "⚙️ Compacted (12k → 3.4k) • Context 3.4k/?"
        );
        let nothing = || Err(CompactError::NothingToCompact);
        assert_eq!(
            compact_reply(&attempt(nothing(), Some(640)), 128_000),
            "⚙️ Compaction skipped: nothing compactable in this session yet • Context 640/128k (1%)"
        );
        assert_eq!(
            compact_reply(&attempt(nothing(), None), 128_000),
            "⚙️ Compaction skipped: nothing compactable in this session yet • Context ?/128k"
        );
        let failed = Err(CompactError::Failed("Summarization failed: 500".into()));
        assert_eq!(
            compact_reply(&attempt(failed, Some(2_000)), 0),
            "⚙️ Compaction failed: Summarization failed: 500 • Context 2.0k/?"
        );
    }
}
