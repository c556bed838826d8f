//! What a heartbeat run says to the model: OpenClaw's default heartbeat prompt
//! (`src/auto-reply/heartbeat.ts`), its cron-event and exec-event prompts
//! (`src/infra/heartbeat-events-filter.ts`, the release that still answers with
//! `HEARTBEAT_OK`), verbatim, and the choice between them (`resolveHeartbeatRunPrompt` in
//! `src/infra/heartbeat-runner.ts`): an exec completion among the pending events → the exec
//! prompt; else cron events → the cron prompt with their text embedded; else the configured
//! prompt or the default. The pending events go in front as the system-events module
//! renders them (`System: [<time>] <text>`).
//!
//! OpenClaw only looks at pending events for exec/cron wake reasons or cron-tagged events.
//! Pincer looks at the events it is given: the caller passes exactly the session's pending
//! events, so an exec completion waiting there is always relayed with the exec prompt.
//! Cron events are those tagged `[CRON:<id>]` (Pincer's cron tag, where OpenClaw has a
//! `cron:` context key) or any event when the reason is `cron:<id>`.

use super::reason::ReasonKind;
use super::token::HEARTBEAT_OK;
use crate::system_events::{SystemEvent, format_for_prompt};

/// OpenClaw's `HEARTBEAT_PROMPT`.
pub const HEARTBEAT_PROMPT: &str = "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK.";

/// OpenClaw's `buildExecEventPrompt({deliverToUser: true})`.
pub const EXEC_EVENT_PROMPT: &str = "An async command you ran earlier has completed. The result is shown in the system messages above. Please relay the command output to the user in a helpful way. If the command succeeded, share the relevant output. If it failed, explain what went wrong.";

/// OpenClaw's `buildExecEventPrompt({deliverToUser: false})` (the target is `none`).
pub const EXEC_EVENT_PROMPT_INTERNAL: &str = "An async command you ran earlier has completed. The result is shown in the system messages above. Handle the result internally. Do not relay it to the user unless explicitly requested.";

/// Which prompt a run uses; the reply rules differ (see
/// [`super::token::heartbeat_reply_delivery`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Heartbeat,
    CronEvent,
    ExecEvent,
}

/// Inputs beyond the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptOptions<'a> {
    /// The configured `prompt` (blank = the default).
    pub override_prompt: Option<&'a str>,
    /// The wake reason (`cron:<id>` makes every pending event a cron event).
    pub reason: Option<&'a str>,
    /// Whether the reply goes to a user (target not `none`): the event prompts ask for a
    /// relay only then.
    pub deliver_to_user: bool,
}

impl Default for PromptOptions<'_> {
    fn default() -> Self {
        Self {
            override_prompt: None,
            reason: None,
            deliver_to_user: true,
        }
    }
}

/// A run's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatPrompt {
    pub kind: PromptKind,
    /// The prompt alone, for a turn whose own hook already puts the pending events first.
    pub body: String,
    /// The events' `System:` lines, a blank line, then `body` (just `body` without events).
    pub text: String,
}

/// The prompt for `events` (the session's pending events, oldest first) with the default
/// options and `override_prompt` as the configured prompt.
pub fn build_heartbeat_prompt(
    events: &[SystemEvent],
    override_prompt: Option<&str>,
) -> HeartbeatPrompt {
    build_heartbeat_prompt_with(
        events,
        &PromptOptions {
            override_prompt,
            ..PromptOptions::default()
        },
    )
}

/// The prompt for `events` with every option.
pub fn build_heartbeat_prompt_with(
    events: &[SystemEvent],
    options: &PromptOptions<'_>,
) -> HeartbeatPrompt {
    let cron_reason = options
        .reason
        .is_some_and(|r| ReasonKind::of(r) == ReasonKind::Cron);
    let (kind, body) = if events.iter().any(|e| is_exec_completion_event(&e.text)) {
        (
            PromptKind::ExecEvent,
            exec_event_prompt(options.deliver_to_user).to_owned(),
        )
    } else {
        let cron: Vec<&str> = events
            .iter()
            .map(|e| e.text.as_str())
            .filter(|t| is_cron_system_event(t) && (cron_reason || has_cron_tag(t)))
            .collect();
        if cron.is_empty() {
            let prompt = resolve_heartbeat_prompt(options.override_prompt);
            (PromptKind::Heartbeat, prompt.to_owned())
        } else {
            let prompt = cron_event_prompt(&cron, options.deliver_to_user);
            (PromptKind::CronEvent, prompt)
        }
    };
    let text = if events.is_empty() {
        body.clone()
    } else {
        format!("{}\n\n{body}", format_for_prompt(events))
    };
    HeartbeatPrompt { kind, body, text }
}

/// OpenClaw's `resolveHeartbeatPrompt`: the configured prompt, trimmed, unless blank.
pub fn resolve_heartbeat_prompt(override_prompt: Option<&str>) -> &str {
    match override_prompt.map(str::trim) {
        Some(prompt) if !prompt.is_empty() => prompt,
        _ => HEARTBEAT_PROMPT,
    }
}

/// OpenClaw's `buildExecEventPrompt`.
pub fn exec_event_prompt(deliver_to_user: bool) -> &'static str {
    if deliver_to_user {
        EXEC_EVENT_PROMPT
    } else {
        EXEC_EVENT_PROMPT_INTERNAL
    }
}

/// OpenClaw's `buildCronEventPrompt`: the reminders' text embedded, so the model sees it
/// even when the `System:` lines are out of view.
pub fn cron_event_prompt(cron_events: &[&str], deliver_to_user: bool) -> String {
    let event_text = cron_events.join("\n");
    let event_text = event_text.trim();
    if event_text.is_empty() {
        return if deliver_to_user {
            format!(
                "A scheduled cron event was triggered, but no event content was found. Reply {HEARTBEAT_OK}."
            )
        } else {
            format!(
                "A scheduled cron event was triggered, but no event content was found. Handle this internally and reply {HEARTBEAT_OK} when nothing needs user-facing follow-up."
            )
        };
    }
    let instruction = if deliver_to_user {
        "Please relay this reminder to the user in a helpful and friendly way."
    } else {
        "Handle this reminder internally. Do not relay it to the user unless explicitly requested."
    };
    format!(
        "A scheduled reminder has been triggered. The reminder content is:\n\n{event_text}\n\n{instruction}"
    )
}

/// OpenClaw's `isExecCompletionEvent`: the notifier's `Exec completed|failed (…)` lines
/// (and the older `Exec finished`).
pub fn is_exec_completion_event(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["exec finished", "exec completed", "exec failed"]
        .iter()
        .any(|marker| lower.contains(marker))
}

/// OpenClaw's `isCronSystemEvent`: real content, not heartbeat noise or an exec completion.
pub fn is_cron_system_event(text: &str) -> bool {
    !text.trim().is_empty() && !is_heartbeat_noise_event(text) && !is_exec_completion_event(text)
}

/// OpenClaw's `isHeartbeatNoiseEvent`: a stray ack or a heartbeat's own chatter.
fn is_heartbeat_noise_event(text: &str) -> bool {
    let lower = text.trim().to_lowercase();
    if lower.is_empty() {
        return false;
    }
    let ack = lower
        .strip_prefix("heartbeat_ok")
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
    ack || lower.contains("heartbeat poll") || lower.contains("heartbeat wake")
}

/// Pincer's cron tag, `[CRON:<id>] …`.
fn has_cron_tag(text: &str) -> bool {
    text.trim_start()
        .get(..6)
        .is_some_and(|head| head.eq_ignore_ascii_case("[cron:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_736_950_205_000; // 2025-01-15 14:10:05 UTC

    fn event(text: &str) -> SystemEvent {
        SystemEvent {
            text: text.into(),
            ts: T0,
            trusted: true,
        }
    }

    #[test]
    fn no_events_use_the_default_or_the_override() {
        let p = build_heartbeat_prompt(&[], None);
        assert_eq!(p.kind, PromptKind::Heartbeat);
        assert_eq!(p.text, HEARTBEAT_PROMPT);
        assert_eq!(p.body, p.text);
        let p = build_heartbeat_prompt(&[], Some("  Check the build.  "));
        assert_eq!(p.text, "Check the build.");
        assert_eq!(
            build_heartbeat_prompt(&[], Some("   ")).text,
            HEARTBEAT_PROMPT
        );
    }

    #[test]
    fn an_exec_completion_uses_the_exec_prompt_after_the_events() {
        let events = [
            event("[CRON:daily] Stand up"),
            event("Exec completed (abcd1234, code 0) :: 142 passed"),
        ];
        let p = build_heartbeat_prompt(&events, Some("custom"));
        assert_eq!(p.kind, PromptKind::ExecEvent);
        assert_eq!(p.body, EXEC_EVENT_PROMPT);
        assert_eq!(
            p.text,
            format!(
                "System: [2025-01-15 14:10:05 UTC] [CRON:daily] Stand up\n\
                 System: [2025-01-15 14:10:05 UTC] Exec completed (abcd1234, code 0) :: 142 passed\n\n\
                 {EXEC_EVENT_PROMPT}"
            )
        );
        let quiet = build_heartbeat_prompt_with(
            &events,
            &PromptOptions {
                deliver_to_user: false,
                ..PromptOptions::default()
            },
        );
        assert_eq!(quiet.body, EXEC_EVENT_PROMPT_INTERNAL);
        let failed =
            build_heartbeat_prompt(&[event("Exec failed (abcd1234, signal SIGKILL)")], None);
        assert_eq!(failed.kind, PromptKind::ExecEvent);
    }

    #[test]
    fn cron_events_embed_their_text() {
        let events = [event("[CRON:j1] Water the plants"), event("HEARTBEAT_OK")];
        let p = build_heartbeat_prompt(&events, None);
        assert_eq!(p.kind, PromptKind::CronEvent);
        assert_eq!(
            p.body,
            "A scheduled reminder has been triggered. The reminder content is:\n\n\
             [CRON:j1] Water the plants\n\n\
             Please relay this reminder to the user in a helpful and friendly way."
        );
        // Untagged events count as cron events only when the wake says so.
        let plain = [event("Call the dentist")];
        assert_eq!(
            build_heartbeat_prompt(&plain, None).kind,
            PromptKind::Heartbeat
        );
        let by_reason = build_heartbeat_prompt_with(
            &plain,
            &PromptOptions {
                reason: Some("cron:j2"),
                ..PromptOptions::default()
            },
        );
        assert_eq!(by_reason.kind, PromptKind::CronEvent);
        assert!(by_reason.body.contains("\n\nCall the dentist\n\n"));
    }

    #[test]
    fn cron_prompt_variants_match_openclaw() {
        assert_eq!(
            cron_event_prompt(&[], true),
            "A scheduled cron event was triggered, but no event content was found. Reply HEARTBEAT_OK."
        );
        assert!(
            cron_event_prompt(&["  "], false)
                .ends_with("when nothing needs user-facing follow-up.")
        );
        assert!(cron_event_prompt(&["x"], false).ends_with("unless explicitly requested."));
    }

    #[test]
    fn event_classes_follow_openclaw() {
        assert!(is_exec_completion_event("Exec finished: ls"));
        assert!(!is_cron_system_event("Exec completed (a, code 0)"));
        assert!(!is_cron_system_event("HEARTBEAT_OK."));
        assert!(is_cron_system_event("HEARTBEAT_OKAY is a word here"));
        assert!(!is_cron_system_event("heartbeat wake requested"));
        assert!(!is_cron_system_event("   "));
        assert!(is_cron_system_event("Reminder: stand up"));
    }
}
