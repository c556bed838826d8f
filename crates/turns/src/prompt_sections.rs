//! The gateway's protocol sections of the system prompt (pi-gateway's
//! `buildGatewaySystemPrompt`): how heartbeat polls, cron events and media replies work,
//! appended after the project context only for the features an agent actually has.
//!
//! A section the agent cannot use would cost tokens on every turn and invite the model to
//! follow a protocol nobody reads (an alert without a heartbeat, `MEDIA:` lines with no
//! channel to carry files), so each one is opt-in and nothing on gives no section at all.
//! The texts quote the gateway's own constants (the ack token, the default heartbeat prompt,
//! HEARTBEAT.md's name, the ack threshold), so the prompt cannot drift from the code that
//! judges the replies.

use crate::prompt::PromptSection;
use pincer_automation::heartbeat::{
    DEFAULT_ACK_MAX_CHARS, HEARTBEAT_FILENAME, HEARTBEAT_OK, HEARTBEAT_PROMPT,
};

/// Title of the heartbeat section.
pub const HEARTBEAT_SECTION_TITLE: &str = "Heartbeat Protocol";
/// Title of the cron section.
pub const CRON_SECTION_TITLE: &str = "Cron Event Protocol";
/// Title of the media section.
pub const MEDIA_SECTION_TITLE: &str = "Media Reply Protocol";

/// Which protocol sections an agent's gateway turns get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GatewayPromptFeatures {
    /// The agent's heartbeat runs.
    pub heartbeat: bool,
    /// Cron jobs run.
    pub cron: bool,
    /// A channel can carry files back to the user.
    pub media: bool,
}

/// The sections for `features`, heartbeat, cron, media in that order; empty when no feature
/// is on.
pub fn gateway_prompt_sections(features: GatewayPromptFeatures) -> Vec<PromptSection> {
    let mut sections = Vec::new();
    if features.heartbeat {
        sections.push(section(HEARTBEAT_SECTION_TITLE, heartbeat_body()));
    }
    if features.cron {
        sections.push(section(CRON_SECTION_TITLE, cron_body()));
    }
    if features.media {
        sections.push(section(MEDIA_SECTION_TITLE, media_body()));
    }
    sections
}

/// `sections` as the system prompt shows them (`## <title>` then the body, blank lines
/// between), for a worker that is told them with `--append-system-prompt`.
pub fn render_sections(sections: &[PromptSection]) -> String {
    sections
        .iter()
        .map(|s| {
            let body = s.body.trim_end();
            match s.title.trim() {
                "" => body.to_owned(),
                title => format!("## {title}\n{body}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn section(title: &str, body: String) -> PromptSection {
    PromptSection {
        title: title.to_owned(),
        body,
    }
}

fn heartbeat_body() -> String {
    format!(
        "Heartbeat polls arrive as user messages. The default one reads:\n\
         > {HEARTBEAT_PROMPT}\n\
         - {HEARTBEAT_FILENAME} (in Project Context) is your checklist: follow it strictly. \
         Don't infer or repeat old tasks from earlier chats.\n\
         - If nothing needs attention, reply exactly `{HEARTBEAT_OK}` and nothing else.\n\
         - An alert is a reply WITHOUT `{HEARTBEAT_OK}`. A reply that has the token and at most \
         {DEFAULT_ACK_MAX_CHARS} other characters (`ackMaxChars`) is dropped as an \
         acknowledgement, so never add the token to something the user must see.\n\
         - `System:` lines before the poll are events that happened in the meantime, e.g. \
         `Exec completed (<id>, code N) :: <output>`. Handle them, or relay what matters.\n\
         - Keep {HEARTBEAT_FILENAME} a small checklist. When it is effectively empty (only \
         headings and empty checkboxes), polls are skipped."
    )
}

fn cron_body() -> String {
    format!(
        "Your user's cron jobs deliver scheduled reminders and tasks.\n\
         - `[CRON:<jobId>] <text>` among the `System:` lines is a scheduled event: do the task, \
         or relay the reminder to the user in your reply.\n\
         - A message `[cron:<jobId> <name>] <message>` is an isolated run of a job: do what it \
         asks; your reply is what gets announced.\n\
         - Nothing to report: reply `{HEARTBEAT_OK}` (it is then not announced). If something \
         failed, say plainly what failed; don't pretend it worked.\n\
         - Manage jobs with the `cron` tool. Schedules: `{{kind:\"at\", at:\"20m\"}}` (or an ISO \
         8601 time) runs once; `{{kind:\"every\", everyMs}}` repeats; `{{kind:\"cron\", expr, \
         tz?}}` follows a cron expression. Payload `systemEvent` (`text`) for a reminder in the \
         main session, `agentTurn` (`message`) for an isolated task."
    )
}

fn media_body() -> String {
    "To send a file, put `MEDIA:<path>` alone on its own line, one line per file:\n\
     MEDIA:reports/summary.pdf\n\
     - Paths are relative to your workspace. Absolute paths and `..` are refused; \
     `https://…` URLs are allowed.\n\
     - Images (png, jpg, gif, webp), audio (mp3, ogg, m4a, wav), video (mp4), documents \
     (pdf, txt, md, csv, zip).\n\
     - The rest of your reply is sent as text.\n\
     - Don't wrap the line in code or quotes: inside a code block it is just text."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(heartbeat: bool, cron: bool, media: bool) -> GatewayPromptFeatures {
        GatewayPromptFeatures {
            heartbeat,
            cron,
            media,
        }
    }

    fn titles(features: GatewayPromptFeatures) -> Vec<String> {
        gateway_prompt_sections(features)
            .into_iter()
            .map(|s| s.title)
            .collect()
    }

    #[test]
    fn sections_follow_the_features_in_a_fixed_order() {
        let h = HEARTBEAT_SECTION_TITLE;
        let c = CRON_SECTION_TITLE;
        let m = MEDIA_SECTION_TITLE;
        let cases: [(GatewayPromptFeatures, &[&str]); 8] = [
            (features(false, false, false), &[]),
            (features(true, false, false), &[h]),
            (features(false, true, false), &[c]),
            (features(false, false, true), &[m]),
            (features(true, true, false), &[h, c]),
            (features(true, false, true), &[h, m]),
            (features(false, true, true), &[c, m]),
            (features(true, true, true), &[h, c, m]),
        ];
        for (on, expected) in cases {
            assert_eq!(titles(on), expected, "{on:?}");
        }
        assert_eq!(
            [h, c, m],
            [
                "Heartbeat Protocol",
                "Cron Event Protocol",
                "Media Reply Protocol"
            ]
        );
    }

    #[test]
    fn nothing_on_appends_nothing() {
        assert!(gateway_prompt_sections(GatewayPromptFeatures::default()).is_empty());
    }

    #[test]
    fn each_body_names_its_key_tokens() {
        let all = gateway_prompt_sections(features(true, true, true));
        let body = |title: &str| {
            all.iter()
                .find(|s| s.title == title)
                .map(|s| s.body.clone())
                .unwrap_or_default()
        };
        let heartbeat = [
            "HEARTBEAT_OK",
            "HEARTBEAT.md",
            "System:",
            "Exec completed",
            "300",
        ];
        let cron = [
            "[CRON:",
            "[cron:",
            "HEARTBEAT_OK",
            "`cron` tool",
            "kind:\"at\"",
            "kind:\"every\", everyMs",
            "kind:\"cron\", expr",
            "systemEvent",
            "agentTurn",
        ];
        let media = [
            "MEDIA:", "relative", "..", "https://", "png", "mp3", "mp4", "pdf",
        ];
        for (title, tokens) in [
            (HEARTBEAT_SECTION_TITLE, &heartbeat[..]),
            (CRON_SECTION_TITLE, &cron[..]),
            (MEDIA_SECTION_TITLE, &media[..]),
        ] {
            let text = body(title);
            for token in tokens {
                assert!(
                    text.contains(token),
                    "{token} missing from {title}:\n{text}"
                );
            }
        }
        for section in &all {
            assert!(!section.body.trim().is_empty());
            assert_eq!(section.body, section.body.trim_end(), "{}", section.title);
        }
    }

    #[test]
    fn the_heartbeat_section_quotes_the_gateways_own_token_and_prompt() {
        let sections = gateway_prompt_sections(features(true, false, false));
        let body = &sections[0].body;
        assert!(
            body.contains(&format!("reply exactly `{HEARTBEAT_OK}`")),
            "{body}"
        );
        assert!(body.contains(HEARTBEAT_PROMPT), "{body}");
        assert!(body.contains(&DEFAULT_ACK_MAX_CHARS.to_string()), "{body}");
    }

    #[test]
    fn the_sections_render_as_headings_in_the_system_prompt() {
        let sections = gateway_prompt_sections(features(true, true, true));
        let inputs = crate::prompt::PromptInputs {
            agent_id: "main",
            agent_name: None,
            model: "mock/primary",
            thinking: None,
            channel: Some("webchat"),
            session_kind: crate::router::SessionKind::Main,
            workspace_dir: std::path::Path::new("/w"),
            tools: &[],
            skills: &[],
            bootstrap_files: &[],
            current_time: None,
            extra_sections: &sections,
        };
        let prompt = crate::prompt::build_system_prompt(&inputs);
        let at = |heading: &str| prompt.find(heading);
        let (h, c, m, r) = (
            at("\n## Heartbeat Protocol\n"),
            at("\n## Cron Event Protocol\n"),
            at("\n## Media Reply Protocol\n"),
            at("\n## Runtime\n"),
        );
        assert!(h.is_some() && h < c && c < m && m < r, "{prompt}");
    }
}
