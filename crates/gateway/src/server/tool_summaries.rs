//! `verboseLevel` for chat channels (`/verbose on|off`, `sessions.patch verboseLevel`): with
//! `on` a channel turn sends one short line per tool call to the chat as the call starts,
//! before the reply — OpenClaw's tool summaries (`formatToolAggregate` with Markdown):
//! `📖 Read: `notes.md``, `🔎 Web Search: `rust``, and for a command-bearing tool (`exec`)
//! only `🛠️ Exec`, since a command may carry what the chat should not see; `full` shows the
//! command too (`🛠️ `ls -la``). `off` (the default) sends none. The lines come from the run's
//! `agent` events (`stream: "tool"`, `phase: "start"`), read until the run's lifecycle ends.

use std::sync::Arc;

use pincer_channel_port::ChatRef;
use pincer_store::SessionEntry;
use serde_json::Value;
use tokio::sync::broadcast;

use super::channel_ingress::{ChannelIngress, Endpoint};
use super::runs::GatewayEvent;

/// Most characters of a summary's detail (a path, a query, a command).
const DETAIL_CHARS: usize = 120;

/// How long a finished run's reply waits for its last summaries to be sent.
pub(super) const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// How much of a run's tool calls a chat hears about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbose {
    Off,
    /// A line per call; commands hidden.
    On,
    /// A line per call, commands shown.
    Full,
}

impl Verbose {
    /// The session's level (`off` when it has none or one Pincer does not know).
    pub fn of(entry: Option<&SessionEntry>) -> Self {
        match entry
            .and_then(|e| e.verbose_level.as_deref())
            .map(|l| l.trim().to_ascii_lowercase())
            .as_deref()
        {
            Some("on") => Self::On,
            Some("full") => Self::Full,
            _ => Self::Off,
        }
    }
}

/// A known tool's emoji, title and the argument its summary shows (OpenClaw's display
/// table, for the tools Pincer has).
const DISPLAY: &[(&str, &str, &str, &str)] = &[
    ("exec", "🛠️", "Exec", "command"),
    ("bash", "🛠️", "Bash", "command"),
    ("process", "🧰", "Process", "sessionId"),
    ("read", "📖", "Read", "path"),
    ("write", "✍️", "Write", "path"),
    ("edit", "📝", "Edit", "path"),
    ("web_search", "🔎", "Web Search", "query"),
    ("web_fetch", "📄", "Web Fetch", "url"),
    ("browser", "🌐", "Browser", "action"),
    ("image", "🖼️", "Image", "prompt"),
    ("cron", "⏰", "Cron", "action"),
    ("message", "✉️", "Message", "action"),
    ("memory_search", "🧠", "Memory Search", "query"),
    ("memory_get", "📓", "Memory Get", "path"),
    ("sessions_list", "🗂️", "Sessions", ""),
    ("sessions_history", "🧾", "Session History", "sessionKey"),
    ("sessions_send", "📨", "Session Send", "sessionKey"),
    ("sessions_spawn", "🧑‍🔧", "Sub-agent", "label"),
    ("session_status", "📊", "Session Status", "sessionKey"),
    ("subagents", "🤖", "Subagents", "action"),
    ("agents_list", "🧭", "Agents", ""),
];

/// The arguments an unknown tool's summary may show, the first present wins (OpenClaw's
/// fallback keys).
const FALLBACK_KEYS: &[&str] = &[
    "command",
    "path",
    "url",
    "targetUrl",
    "targetId",
    "ref",
    "element",
    "id",
    "to",
    "name",
    "query",
    "pattern",
];

/// The summary line of a call of `name` with `args`.
pub fn summary(name: &str, args: &Value, level: Verbose) -> String {
    let key = name.to_ascii_lowercase();
    let known = DISPLAY.iter().find(|(tool, ..)| *tool == key);
    let (emoji, title) = match known {
        Some((_, emoji, title, _)) => ((*emoji).to_owned(), (*title).to_owned()),
        None => ("🧩".to_owned(), default_title(name)),
    };
    let shell = matches!(key.as_str(), "exec" | "bash" | "shell");
    // A command may hold secrets: shown only at `full`.
    let command_bearing = shell || args.get("command").is_some_and(Value::is_string);
    let detail = if command_bearing && level != Verbose::Full {
        None
    } else {
        let keys: Vec<&str> = match known {
            Some((.., key)) => vec![*key],
            None => FALLBACK_KEYS.to_vec(),
        };
        keys.iter().find_map(|k| detail_of(args.get(*k)?))
    };
    match detail {
        None => format!("{emoji} {title}"),
        Some(detail) if shell => format!("{emoji} {}", inline_code(&detail)),
        Some(detail) => format!("{emoji} {title}: {}", inline_code(&detail)),
    }
}

/// An argument as one bounded line.
fn detail_of(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    Some(match line.char_indices().nth(DETAIL_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    })
}

/// `text` as Markdown inline code, fenced with more backticks than it holds in a row.
fn inline_code(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if longest == 0 {
        format!("{fence}{text}{fence}")
    } else {
        format!("{fence} {text} {fence}")
    }
}

/// OpenClaw's title of a tool it has no entry for: `my_tool` → `My Tool`.
fn default_title(name: &str) -> String {
    let words: Vec<String> = name
        .split(['_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect();
    if words.is_empty() {
        "Tool".to_owned()
    } else {
        words.join(" ")
    }
}

/// What one of the run's events means here.
enum Seen {
    /// A call started: its summary.
    Call(String),
    /// The run ended.
    End,
    Other,
}

fn seen(event: &GatewayEvent, run_id: &str, level: Verbose) -> Seen {
    let payload = &event.payload;
    if event.event != "agent" || payload["runId"] != run_id {
        return Seen::Other;
    }
    let data = &payload["data"];
    match (payload["stream"].as_str(), data["phase"].as_str()) {
        (Some("tool"), Some("start")) => Seen::Call(summary(
            data["name"].as_str().unwrap_or_default(),
            &data["args"],
            level,
        )),
        (Some("lifecycle"), Some("end" | "error")) => Seen::End,
        _ => Seen::Other,
    }
}

/// Sends a summary to `chat` for each tool call run `run_id` starts, in order, until the
/// run's lifecycle ends (every run ends with one). `events` was subscribed before the run
/// began. If the broadcast outran this reader, the summaries stop there (the reply still
/// goes out).
pub(super) async fn relay(
    ingress: &ChannelIngress,
    endpoint: &Endpoint,
    chat: &ChatRef,
    run_id: &str,
    level: Verbose,
    mut events: broadcast::Receiver<Arc<GatewayEvent>>,
) {
    loop {
        match events.recv().await {
            Ok(event) => match seen(&event, run_id, level) {
                Seen::Call(line) => {
                    let _ = ingress.send(endpoint, chat, line, Vec::new(), None).await;
                }
                Seen::End => return,
                Seen::Other => {}
            },
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(run = run_id, missed, "tool summaries stopped: events lost");
                return;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_read_as_openclaws() {
        let on = Verbose::On;
        assert_eq!(
            summary("read", &json!({"path": "notes.md"}), on),
            "📖 Read: `notes.md`"
        );
        assert_eq!(
            summary("exec", &json!({"command": "ls -la"}), on),
            "🛠️ Exec"
        );
        assert_eq!(
            summary("exec", &json!({"command": "ls  -la\n"}), Verbose::Full),
            "🛠️ `ls -la`"
        );
        assert_eq!(
            summary("web_search", &json!({"query": "a `b` c"}), on),
            "🔎 Web Search: `` a `b` c ``"
        );
        assert_eq!(summary("sessions_list", &json!({}), on), "🗂️ Sessions");
        assert_eq!(
            summary("my_tool", &json!({"name": "x"}), on),
            "🧩 My Tool: `x`"
        );
        let long = "x".repeat(DETAIL_CHARS + 5);
        assert_eq!(
            summary("read", &json!({"path": long}), on),
            format!("📖 Read: `{}…`", "x".repeat(DETAIL_CHARS))
        );
    }

    #[test]
    fn the_level_is_the_sessions() {
        let entry = |level: Option<&str>| SessionEntry {
            verbose_level: level.map(str::to_owned),
            ..SessionEntry::default()
        };
        assert_eq!(Verbose::of(None), Verbose::Off);
        assert_eq!(Verbose::of(Some(&entry(Some("on")))), Verbose::On);
        assert_eq!(Verbose::of(Some(&entry(Some("FULL")))), Verbose::Full);
        assert_eq!(Verbose::of(Some(&entry(Some("off")))), Verbose::Off);
    }
}
