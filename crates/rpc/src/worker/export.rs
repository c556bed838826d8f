//! `export_html`: the session as one self-contained HTML page — the current branch's
//! messages (user text and images, the assistant's thinking, text and tool calls, tool
//! results), compactions and branch summaries, model and thinking changes, the system prompt
//! and the tools. Rendered here rather than by pi's template and scripts: the page carries
//! no script at all, every text is HTML-escaped, images are inlined only as checked
//! `data:` URLs, and a Content-Security-Policy forbids anything else, so a transcript that
//! holds markup (a model's reply, a fetched page) cannot run in the reader's browser.

use std::fmt::Write as _;

use pincer_ai::{ContentBlock, ImageContent, Message, StopReason, UserContent};
use pincer_store::{Entry, EntryBody, SessionHeader};

/// What a page shows.
pub struct ExportPage<'a> {
    pub header: &'a SessionHeader,
    pub name: Option<&'a str>,
    /// The current branch, root first.
    pub entries: &'a [&'a Entry],
    pub system_prompt: &'a str,
    pub tools: &'a [String],
}

/// The default file name of an export: pi's `<app>-session-<file stem>.html`.
pub fn default_file_name(session_file_stem: &str) -> String {
    format!("pincer-session-{session_file_stem}.html")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;background:#1e1e24;color:#ddd;\
margin:0;padding:1.5em}main{max-width:60em;margin:auto}h1{font-size:1.3em}\
.meta{color:#999;font-size:.85em}.entry{border-radius:6px;padding:.6em 1em;margin:.8em 0}\
.user{background:#2d3340}.assistant{background:#26262e}.toolResult{background:#22282a}\
.error{border-left:3px solid #d55}.info{color:#aaa;font-size:.85em;margin:.4em 0}\
.text,pre{white-space:pre-wrap;word-wrap:break-word;margin:.3em 0}\
pre{background:#15151a;padding:.5em;border-radius:4px;font-size:.85em}\
.role{font-weight:bold;font-size:.8em;text-transform:uppercase;color:#8ab}\
details{margin:.3em 0}summary{cursor:pointer;color:#aaa}img{max-width:100%}";

/// The page.
pub fn render(page: &ExportPage<'_>) -> String {
    let title = page.name.unwrap_or(&page.header.id);
    let mut html = String::with_capacity(16 * 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    // Nothing but the inline style and inlined images may load or run.
    html.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">",
    );
    let _ = write!(
        html,
        "<meta name=\"viewport\" content=\"width=device-width\"><title>Session {}</title>\
         <style>{STYLE}</style></head><body><main>",
        escape(title)
    );
    let _ = write!(
        html,
        "<h1>Session {}</h1><div class=\"meta\">id {} · started {} · in {}</div>",
        escape(title),
        escape(&page.header.id),
        escape(&page.header.timestamp),
        escape(&page.header.cwd)
    );
    if !page.system_prompt.is_empty() {
        let _ = write!(
            html,
            "<details><summary>System prompt</summary><pre>{}</pre></details>",
            escape(page.system_prompt)
        );
    }
    if !page.tools.is_empty() {
        let names: Vec<String> = page.tools.iter().map(|t| escape(t)).collect();
        let _ = write!(
            html,
            "<div class=\"info\">Tools: {}</div>",
            names.join(", ")
        );
    }
    for entry in page.entries {
        entry_html(&mut html, entry);
    }
    html.push_str("</main></body></html>\n");
    html
}

fn entry_html(html: &mut String, entry: &Entry) {
    let at = escape(&entry.timestamp);
    match &entry.body {
        EntryBody::Message(m) => message_html(html, &m.message, &at),
        EntryBody::ModelChange(c) => {
            let _ = write!(
                html,
                "<div class=\"info\">Model: {}/{}</div>",
                escape(&c.provider),
                escape(&c.model_id)
            );
        }
        EntryBody::ThinkingLevelChange(c) => {
            let _ = write!(
                html,
                "<div class=\"info\">Thinking: {}</div>",
                escape(&c.thinking_level)
            );
        }
        EntryBody::Compaction(c) => {
            let _ = write!(
                html,
                "<details class=\"entry\"><summary>Compacted ({} tokens before)</summary>\
                 <div class=\"text\">{}</div></details>",
                c.tokens_before,
                escape(&c.summary)
            );
        }
        EntryBody::BranchSummary(b) => {
            let _ = write!(
                html,
                "<details class=\"entry\"><summary>Branch summary</summary>\
                 <div class=\"text\">{}</div></details>",
                escape(&b.summary)
            );
        }
        EntryBody::CustomMessage(c) if c.display => {
            html.push_str("<div class=\"entry user\">");
            let _ = write!(html, "<div class=\"role\">{}</div>", escape(&c.custom_type));
            user_content_html(html, &c.content);
            html.push_str("</div>");
        }
        // Labels, names, extension state and unknown entries: not part of the conversation.
        _ => {}
    }
}

fn message_html(html: &mut String, message: &Message, at: &str) {
    match message {
        Message::User(user) => {
            let _ = write!(
                html,
                "<div class=\"entry user\"><div class=\"role\">User</div>\
                 <div class=\"meta\">{at}</div>"
            );
            user_content_html(html, &user.content);
        }
        Message::Assistant(a) => {
            let failed = matches!(a.stop_reason, StopReason::Error | StopReason::Aborted);
            let _ = write!(
                html,
                "<div class=\"entry assistant{}\"><div class=\"role\">Assistant</div>\
                 <div class=\"meta\">{at} · {}/{}</div>",
                if failed { " error" } else { "" },
                escape(&a.provider),
                escape(&a.model)
            );
            blocks_html(html, &a.content);
            if let Some(error) = &a.error_message {
                let _ = write!(html, "<div class=\"info\">Error: {}</div>", escape(error));
            }
        }
        Message::ToolResult(r) => {
            let _ = write!(
                html,
                "<div class=\"entry toolResult{}\"><div class=\"role\">Result of {}</div>\
                 <div class=\"meta\">{at}</div>",
                if r.is_error { " error" } else { "" },
                escape(&r.tool_name)
            );
            blocks_html(html, &r.content);
        }
    }
    html.push_str("</div>");
}

fn user_content_html(html: &mut String, content: &UserContent) {
    match content {
        UserContent::Text(text) => text_html(html, text),
        UserContent::Blocks(blocks) => blocks_html(html, blocks),
    }
}

fn text_html(html: &mut String, text: &str) {
    let _ = write!(html, "<div class=\"text\">{}</div>", escape(text));
}

fn blocks_html(html: &mut String, blocks: &[ContentBlock]) {
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text_html(html, &t.text),
            ContentBlock::Thinking(t) => {
                let body = if t.redacted == Some(true) {
                    "(redacted)".to_owned()
                } else {
                    escape(&t.thinking)
                };
                let _ = write!(
                    html,
                    "<details class=\"thinking\"><summary>Thinking</summary>\
                     <div class=\"text\">{body}</div></details>"
                );
            }
            ContentBlock::ToolCall(call) => {
                let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                let _ = write!(
                    html,
                    "<div class=\"info\">Tool call: {}</div><pre>{}</pre>",
                    escape(&call.name),
                    escape(&args)
                );
            }
            ContentBlock::Image(image) => image_html(html, image),
        }
    }
}

/// An image inlined as a `data:` URL, only when its type is an image type and its data
/// plain base64 (anything else could break out of the attribute).
fn image_html(html: &mut String, image: &ImageContent) {
    let mime_ok = image.mime_type.strip_prefix("image/").is_some_and(|sub| {
        !sub.is_empty()
            && sub
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
    });
    let data_ok = image
        .data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
    if mime_ok && data_ok {
        let _ = write!(
            html,
            "<img alt=\"image\" src=\"data:{};base64,{}\">",
            image.mime_type, image.data
        );
    } else {
        html.push_str("<div class=\"info\">[image]</div>");
    }
}

/// `text` safe anywhere in an HTML text node or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pincer_ai::{AssistantMessage, ThinkingContent, ToolCall, ToolResultMessage, UserMessage};
    use pincer_store::MessageEntry;
    use serde_json::json;

    use super::*;

    fn entry(body: EntryBody) -> Entry {
        Entry {
            id: "e1".into(),
            parent_id: None,
            timestamp: "2026-11-28T06:00:00.000Z".into(),
            body,
        }
    }

    fn message(message: Message) -> Entry {
        entry(EntryBody::Message(MessageEntry { message }))
    }

    fn page_with(entries: &[Entry]) -> String {
        let header = SessionHeader::new("sid-1", "/work");
        let entries: Vec<&Entry> = entries.iter().collect();
        render(&ExportPage {
            header: &header,
            name: None,
            entries: &entries,
            system_prompt: "be <brief>",
            tools: &["read".into(), "<b>".into()],
        })
    }

    #[test]
    fn markup_in_a_message_is_escaped_and_the_page_has_no_script() {
        let entries = [message(Message::User(UserMessage {
            content: UserContent::Text("<script>alert('x')</script> & \"q\"".into()),
            timestamp: 0,
        }))];
        let html = page_with(&entries);
        assert!(html.contains(
            "<div class=\"text\">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;</div>"
        ));
        assert!(!html.to_lowercase().contains("<script"), "{html}");
        assert!(html.contains("<pre>be &lt;brief&gt;</pre>"));
        assert!(html.contains("Tools: read, &lt;b&gt;"));
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("default-src 'none'"));
    }

    #[test]
    fn thinking_tool_calls_and_results_are_shown() {
        let assistant = AssistantMessage {
            content: vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "hmm <x>".into(),
                    ..ThinkingContent::default()
                }),
                ContentBlock::text("let me look"),
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "<a>"}),
                    thought_signature: None,
                }),
            ],
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "m<1>".into(),
            usage: Default::default(),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            timestamp: 0,
            response_id: None,
        };
        let result = ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("no such file")],
            details: None,
            is_error: true,
            timestamp: 0,
        };
        let html = page_with(&[
            message(Message::Assistant(assistant)),
            message(Message::ToolResult(result)),
        ]);
        assert!(html.contains(
            "<details class=\"thinking\"><summary>Thinking</summary><div class=\"text\">hmm &lt;x&gt;</div></details>"
        ));
        assert!(html.contains("mock/m&lt;1&gt;"));
        assert!(html.contains(
            "<div class=\"info\">Tool call: read</div><pre>{\n  &quot;path&quot;: &quot;&lt;a&gt;&quot;\n}</pre>"
        ));
        assert!(html.contains(
            "<div class=\"entry toolResult error\"><div class=\"role\">Result of read</div>"
        ));
        assert!(html.contains("<div class=\"text\">no such file</div>"));
    }

    #[test]
    fn only_plain_images_are_inlined() {
        let image = |mime: &str, data: &str| {
            message(Message::User(UserMessage {
                content: UserContent::Blocks(vec![ContentBlock::Image(ImageContent {
                    data: data.into(),
                    mime_type: mime.into(),
                })]),
                timestamp: 0,
            }))
        };
        let html = page_with(&[
            image("image/png", "iVBORw0KGgo="),
            image("image/png", "\"><script>"),
            image("text/html", "AAAA"),
        ]);
        assert!(html.contains("<img alt=\"image\" src=\"data:image/png;base64,iVBORw0KGgo=\">"));
        assert_eq!(html.matches("<img").count(), 1);
        assert_eq!(html.matches("[image]").count(), 2);
    }

    #[test]
    fn the_default_name_is_pis_pattern() {
        assert_eq!(
            default_file_name("2026-11-28T06-00-00-000Z_abc"),
            "pincer-session-2026-11-28T06-00-00-000Z_abc.html"
        );
    }
}
