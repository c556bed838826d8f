//! The `HEARTBEAT_OK` contract (OpenClaw's `stripHeartbeatToken` in
//! `src/auto-reply/heartbeat.ts`): a heartbeat reply that starts or ends with the token is an
//! acknowledgement, silent when little else remains; the token itself never reaches a user.
//!
//! [`strip_heartbeat_token_with`] is a port of OpenClaw's function, rule for rule, including
//! its quirks (they are pinned by the table test below): the token is removed at the edges
//! only, repeatedly; a copy with HTML tags, `&nbsp;` and edge Markdown markers removed is
//! tried when the raw text strips to nothing useful; up to four non-word characters after a
//! trailing token (`HEARTBEAT_OK.`, `HEARTBEAT_OK!!!`) still count as "at the end" and stay
//! attached to the text before it; whitespace runs collapse to one space. Lengths are
//! counted in UTF-16 units because that is what OpenClaw's `ackMaxChars` compares against.
//!
//! [`sanitize_for_delivery`] goes further than OpenClaw on purpose: OpenClaw keeps a token in
//! the middle of a message, Pincer removes it there too, so no channel ever shows it.

use super::prompts::PromptKind;

/// The token a model replies with when a heartbeat finds nothing needing attention.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";

/// OpenClaw's `DEFAULT_HEARTBEAT_ACK_MAX_CHARS`: an acknowledgement may carry this many
/// characters of chatter after the token is stripped and still be dropped.
pub const DEFAULT_ACK_MAX_CHARS: usize = 300;

/// How a reply is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripMode {
    /// A heartbeat reply: after stripping, at most `ack_max_chars` left means silence.
    Heartbeat { ack_max_chars: usize },
    /// Any other message: only a reply that is nothing but the token is dropped.
    Message,
}

/// What [`strip_heartbeat_token_with`] decided (OpenClaw's `{shouldSkip, text, didStrip}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripResult {
    /// Deliver nothing.
    pub should_skip: bool,
    /// The text to deliver when `should_skip` is false (empty when it is true).
    pub text: String,
    /// Whether a token was removed.
    pub did_strip: bool,
}

impl StripResult {
    fn skip(did_strip: bool) -> Self {
        Self {
            should_skip: true,
            text: String::new(),
            did_strip,
        }
    }

    fn keep(text: &str, did_strip: bool) -> Self {
        Self {
            should_skip: false,
            text: text.to_owned(),
            did_strip,
        }
    }
}

/// A heartbeat reply judged with `ack_max_chars` (OpenClaw's `mode: "heartbeat"`).
pub fn strip_heartbeat_token(text: &str, ack_max_chars: usize) -> StripResult {
    strip_heartbeat_token_with(text, StripMode::Heartbeat { ack_max_chars })
}

/// OpenClaw's `stripHeartbeatToken(raw, {mode, maxAckChars})`.
pub fn strip_heartbeat_token_with(raw: &str, mode: StripMode) -> StripResult {
    let trimmed = js_trim(raw);
    if trimmed.is_empty() {
        // Empty or whitespace-only: silent, never a "please resend".
        return StripResult::skip(false);
    }
    let normalized = strip_markup(trimmed);
    if !trimmed.contains(HEARTBEAT_OK) && !normalized.contains(HEARTBEAT_OK) {
        return StripResult::keep(trimmed, false);
    }
    let original = strip_token_at_edges(trimmed);
    // The raw text wins when it strips to something; otherwise the markup-free copy gets
    // its chance (`<b>HEARTBEAT_OK</b>` only strips once the tags are gone).
    let picked = if original.did_strip && !original.text.is_empty() {
        original
    } else {
        strip_token_at_edges(&normalized)
    };
    if !picked.did_strip {
        return StripResult::keep(trimmed, false);
    }
    if picked.text.is_empty() {
        return StripResult::skip(true);
    }
    let rest = js_trim(&picked.text);
    if let StripMode::Heartbeat { ack_max_chars } = mode
        && utf16_len(rest) <= ack_max_chars
    {
        return StripResult::skip(true);
    }
    StripResult::keep(rest, true)
}

/// The text to send for any outgoing message, or `None` to send nothing: stray tokens at
/// the edges are stripped as OpenClaw does outside heartbeats, and — unlike OpenClaw — a
/// token left in the middle is removed too, so `HEARTBEAT_OK` never reaches a user. A
/// message that held a token and is left with no letters or digits (`**HEARTBEAT_OK**`
/// strips to `****`) is dropped.
pub fn sanitize_for_delivery(text: &str) -> Option<String> {
    let stripped = strip_heartbeat_token_with(text, StripMode::Message);
    if stripped.should_skip {
        return None;
    }
    let had_token = stripped.did_strip || stripped.text.contains(HEARTBEAT_OK);
    let cleaned = remove_all_tokens(&stripped.text);
    let cleaned = js_trim(&cleaned);
    if cleaned.is_empty() || (had_token && !cleaned.chars().any(char::is_alphanumeric)) {
        return None;
    }
    Some(cleaned.to_owned())
}

/// What a heartbeat run delivers for `reply`, or `None` for silence. A regular heartbeat
/// uses the acknowledgement rule with `ack_max_chars`. An exec-event run is a relay the
/// user is waiting for, so — as in OpenClaw, which never skips an exec completion — a short
/// reply is delivered rather than taken for an ack; only a reply that is nothing but the
/// token stays silent (OpenClaw would then fall back to the raw reply, token and all;
/// Pincer does not). Either way the result went through [`sanitize_for_delivery`].
pub fn heartbeat_reply_delivery(
    reply: &str,
    kind: PromptKind,
    ack_max_chars: usize,
) -> Option<String> {
    let mode = match kind {
        PromptKind::ExecEvent => StripMode::Message,
        PromptKind::Heartbeat | PromptKind::CronEvent => StripMode::Heartbeat { ack_max_chars },
    };
    let stripped = strip_heartbeat_token_with(reply, mode);
    if stripped.should_skip {
        return None;
    }
    sanitize_for_delivery(&stripped.text)
}

struct Edges {
    text: String,
    did_strip: bool,
}

/// OpenClaw's `stripTokenAtEdges`.
fn strip_token_at_edges(raw: &str) -> Edges {
    let mut text = js_trim(raw).to_owned();
    if text.is_empty() || !text.contains(HEARTBEAT_OK) {
        return Edges {
            text,
            did_strip: false,
        };
    }
    let mut did_strip = false;
    loop {
        let next = js_trim(&text);
        if let Some(after) = next.strip_prefix(HEARTBEAT_OK) {
            text = js_trim_start(after).to_owned();
            did_strip = true;
            continue;
        }
        // `HEARTBEAT_OK[^\w]{0,4}$`: the token ends the text but for a little punctuation,
        // which stays (it may belong to the sentence before the token).
        let Some(idx) = next.rfind(HEARTBEAT_OK) else {
            break;
        };
        let tail = &next[idx + HEARTBEAT_OK.len()..];
        if utf16_len(tail) > 4 || tail.chars().any(is_js_word) {
            break;
        }
        let joined = format!("{}{tail}", js_trim_end(&next[..idx]));
        text = js_trim_end(&joined).to_owned();
        did_strip = true;
    }
    Edges {
        text: collapse_whitespace(&text),
        did_strip,
    }
}

/// OpenClaw's `stripMarkup`: HTML tags become spaces, `&nbsp;` a space, and runs of
/// `*`, `` ` ``, `~`, `_` at either edge go.
fn strip_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        match rest[lt..].find('>') {
            Some(gt) => {
                out.push(' ');
                rest = &rest[lt + gt + 1..];
            }
            None => {
                // `<[^>]*>` needs a closing `>`; without one the rest is text.
                out.push_str(&rest[lt..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    let out = replace_ascii_case_insensitive(&out, "&nbsp;", " ");
    let wrapper = |c: char| matches!(c, '*' | '`' | '~' | '_');
    out.trim_start_matches(wrapper)
        .trim_end_matches(wrapper)
        .to_owned()
}

fn replace_ascii_case_insensitive(text: &str, needle: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let candidate = text.get(i..i + needle.len());
        if candidate.is_some_and(|c| c.eq_ignore_ascii_case(needle)) {
            out.push_str(with);
            i += needle.len();
            continue;
        }
        // Advance one whole char so slicing stays on boundaries.
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Removes every token, and one of the spaces around each so `a HEARTBEAT_OK b` reads
/// `a b`.
fn remove_all_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(idx) = rest.find(HEARTBEAT_OK) {
        out.push_str(&rest[..idx]);
        rest = &rest[idx + HEARTBEAT_OK.len()..];
        if out.ends_with(' ') && (rest.starts_with(' ') || rest.is_empty()) {
            out.pop();
        }
    }
    out.push_str(rest);
    out
}

/// JavaScript's `\s` (Rust's `White_Space` plus the BOM, which JS also trims).
fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// JavaScript's `\w` without the `u` flag: ASCII letters, digits and `_`.
fn is_js_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_space)
}

fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_space)
}

fn collapse_whitespace(s: &str) -> String {
    s.split(is_js_space)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A JavaScript string's `length`.
fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

#[cfg(test)]
#[path = "token_tests.rs"]
mod tests;
