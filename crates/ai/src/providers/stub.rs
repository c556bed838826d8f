//! The offline `stub` provider: a product feature, not a test double. It needs no key and
//! no network, so a fresh install answers at once. Replies are deterministic — an echo, or
//! a short extractive summary when asked to summarise — and always say that they come from
//! the stub and how to configure a real model.

use crate::builder::MessageBuilder;
use crate::error::ErrorKind;
use crate::event::AssistantStream;
use crate::model::{InputKind, Model, ModelCost, apis};
use crate::options::StreamOptions;
use crate::registry::ApiProvider;
use crate::types::texts;
use crate::types::{ContentBlock, Context, Message, UserContent};

/// Provider id and model id of the stub: `stub/echo`.
pub const PROVIDER: &str = "stub";
pub const MODEL_ID: &str = "echo";

/// The sentence every stub reply ends with.
pub const NOTICE: &str = "(This reply comes from Pincer's offline stub model, not a real LLM. \
To use a real model, set an API key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY \
and choose a model, e.g. anthropic/claude-sonnet-4-5.)";

/// The catalog entry of the stub model.
pub fn model() -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Offline stub (echo, no key needed)".into(),
        api: apis::STUB.into(),
        provider: PROVIDER.into(),
        base_url: String::new(),
        reasoning: false,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 4_096,
        headers: None,
        compat: None,
    }
}

/// Streams the stub's reply.
#[derive(Debug, Clone, Copy, Default)]
pub struct StubProvider;

impl ApiProvider for StubProvider {
    fn api(&self) -> &str {
        apis::STUB
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let mut out = MessageBuilder::new(model);
        if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            out.fail(
                ErrorKind::Aborted,
                format!("request to {} was aborted", model.reference()),
            );
            return AssistantStream::from_events(out.drain_events().collect());
        }
        let text = reply_text(context);
        let index = out.text_start();
        // Word-sized deltas so callers see a real stream.
        for piece in text.split_inclusive(' ') {
            out.text_delta(index, piece);
        }
        let usage = out.usage_mut();
        usage.input = estimate_tokens(context);
        usage.output = (text.len() as u64).div_ceil(4);
        out.done();
        AssistantStream::from_events(out.drain_events().collect())
    }
}

/// The deterministic reply for a context.
pub fn reply_text(context: &Context) -> String {
    let last = context.messages.last();
    let wants_summary = context
        .system_prompt
        .as_deref()
        .is_some_and(|s| s.to_lowercase().contains("summar"))
        || matches!(last, Some(Message::User(u)) if u.text().to_lowercase().contains("summar"));
    let body = if wants_summary {
        summary(context)
    } else {
        match last {
            Some(Message::User(user)) => {
                let text = user.text();
                let images = match &user.content {
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter(|b| matches!(b, ContentBlock::Image(_)))
                        .count(),
                    UserContent::Text(_) => 0,
                };
                let mut body = format!("You said: {}", text.trim());
                if images > 0 {
                    body.push_str(&format!(" (and sent {images} image(s))"));
                }
                body.push_str(&history_note(context));
                body
            }
            Some(Message::ToolResult(result)) => {
                let text: String = texts(&result.content).collect();
                format!(
                    "The tool {} returned: {}",
                    result.tool_name,
                    clip(text.trim(), 200)
                )
            }
            Some(Message::Assistant(_)) | None => "Nothing to reply to.".to_owned(),
        }
    };
    format!("[offline stub] {body}\n\n{NOTICE}")
}

/// What the stub can show of the conversation so far, so a persistent session is visible
/// without a real model: how many messages came before, and the previous user message.
fn history_note(context: &Context) -> String {
    let earlier = context.messages.len().saturating_sub(1);
    if earlier == 0 {
        return String::new();
    }
    let previous = context.messages[..earlier]
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User(u) => Some(clip(u.text().trim(), 80)),
            _ => None,
        });
    match previous {
        Some(text) => format!(
            "\n(Earlier in this session: {earlier} message(s); before this you said: \"{text}\".)"
        ),
        None => format!("\n(Earlier in this session: {earlier} message(s).)"),
    }
}

/// An extractive summary: the first line of up to five user requests, in order.
fn summary(context: &Context) -> String {
    let mut points: Vec<String> = Vec::new();
    for message in &context.messages {
        let Message::User(user) = message else {
            continue;
        };
        let text = user.text();
        // pi's compaction prompt wraps the transcript in <conversation> with `[User]:` lines.
        let serialized: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("[User]:"))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if serialized.is_empty() {
            if !text.to_lowercase().contains("summar") {
                points.push(clip(text.lines().next().unwrap_or("").trim(), 80));
            }
        } else {
            points.extend(serialized.into_iter().map(|l| clip(l, 80)));
        }
    }
    points.retain(|p| !p.is_empty());
    if points.is_empty() {
        return "Summary: the conversation has no user requests yet.".to_owned();
    }
    let total = points.len();
    let mut out = format!("Summary of {total} user request(s):");
    for point in points.iter().take(5) {
        out.push_str("\n- ");
        out.push_str(point);
    }
    if total > 5 {
        out.push_str(&format!("\n- … and {} more", total - 5));
    }
    out
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Rough token count: characters / 4, as pi estimates.
fn estimate_tokens(context: &Context) -> u64 {
    let chars = serde_json::to_string(context).map(|s| s.len()).unwrap_or(0);
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AssistantMessageEvent;
    use crate::types::{AssistantMessage, StopReason, ToolCall};
    use futures_util::StreamExt;

    fn ctx(messages: Vec<Message>) -> Context {
        Context {
            system_prompt: None,
            messages,
            tools: vec![],
        }
    }

    #[tokio::test]
    async fn echoes_and_says_what_it_is() {
        let stream = StubProvider.stream(
            &model(),
            &ctx(vec![Message::user("hello there")]),
            StreamOptions::default(),
        );
        let events: Vec<_> = stream.collect().await;
        assert!(matches!(events[0], AssistantMessageEvent::Start));
        let AssistantMessageEvent::Done { reason, message } = events.last().unwrap() else {
            panic!()
        };
        assert_eq!(*reason, StopReason::Stop);
        assert_eq!(
            message.text(),
            format!("[offline stub] You said: hello there\n\n{NOTICE}")
        );
        assert_eq!(message.provider, "stub");
        assert!(
            events
                .iter()
                .filter(|e| matches!(e, AssistantMessageEvent::TextDelta { .. }))
                .count()
                > 3
        );
    }

    #[test]
    fn shows_what_it_remembers_of_the_session() {
        let reply = AssistantMessage::default();
        let context = ctx(vec![
            Message::user("my name is Ana"),
            Message::Assistant(reply),
            Message::user("what is my name?"),
        ]);
        assert_eq!(
            reply_text(&context),
            format!(
                "[offline stub] You said: what is my name?\n(Earlier in this session: 2 message(s); before this you said: \"my name is Ana\".)\n\n{NOTICE}"
            )
        );
    }

    #[test]
    fn summarises_when_asked() {
        let context = ctx(vec![
            Message::user("fix the login bug"),
            Message::user("then add tests"),
            Message::user("please summarise"),
        ]);
        assert_eq!(
            reply_text(&context),
            format!(
                "[offline stub] Summary of 2 user request(s):\n- fix the login bug\n- then add tests\n\n{NOTICE}"
            )
        );
        let compaction = Context {
            system_prompt: Some("You are a context summarization assistant.".into()),
            messages: vec![Message::user(
                "<conversation>\n[User]: build a cron job\n[Assistant]: ok\n</conversation>",
            )],
            tools: vec![],
        };
        assert!(
            reply_text(&compaction)
                .starts_with("[offline stub] Summary of 1 user request(s):\n- build a cron job")
        );
    }

    #[test]
    fn reports_tool_results() {
        let call = ToolCall {
            id: "c".into(),
            name: "read".into(),
            arguments: serde_json::json!({}),
            thought_signature: None,
        };
        let text = reply_text(&ctx(vec![Message::tool_result(&call, "file body", false)]));
        assert!(text.starts_with("[offline stub] The tool read returned: file body"));
    }

    #[tokio::test]
    async fn cancelled_before_start_is_aborted() {
        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let options = StreamOptions {
            cancel: Some(cancel),
            ..StreamOptions::default()
        };
        let message = StubProvider
            .stream(&model(), &ctx(vec![Message::user("x")]), options)
            .result()
            .await;
        assert_eq!(message.stop_reason, StopReason::Aborted);
    }
}
