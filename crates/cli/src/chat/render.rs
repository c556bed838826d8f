//! How a reply shows in `pincer chat`: the reply's text on stdout as it streams, each tool
//! call as one compact line on stderr (`→ name {args}`, then `← name ok: result`), and the
//! end of a reply that did not finish (`[aborted]`, `error: …`) on stderr. Both backends
//! turn their events (the agent's in process, the gateway's `agent` frames) into [`Shown`]
//! so a reply looks the same either way.

use std::io::{IsTerminal, Write};

use pincer_agent::AgentEvent;
use pincer_ai::AssistantMessageEvent;

use crate::output::preview;

/// One thing of a reply to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown<'a> {
    Text(&'a str),
    ToolStart {
        name: &'a str,
        args: String,
    },
    ToolEnd {
        name: &'a str,
        is_error: bool,
        result: String,
    },
}

impl<'a> Shown<'a> {
    /// What of an in-process agent event shows (`None`: nothing).
    pub fn of_agent_event(event: &'a AgentEvent) -> Option<Self> {
        match event {
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            } => Some(Self::Text(delta)),
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => Some(Self::ToolStart {
                name: tool_name,
                args: args.to_string(),
            }),
            AgentEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } => Some(Self::ToolEnd {
                name: tool_name,
                is_error: *is_error,
                result: result.text_content(),
            }),
            _ => None,
        }
    }
}

/// How a reply ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Done,
    Aborted,
    Failed(String),
}

/// Prints one reply at a time.
pub struct Renderer {
    /// Tool lines dimmed (stderr is a terminal).
    dim: bool,
    wrote_text: bool,
    ends_with_newline: bool,
}

impl Renderer {
    pub fn new() -> Self {
        Self {
            dim: std::io::stderr().is_terminal(),
            wrote_text: false,
            ends_with_newline: true,
        }
    }

    /// Shows one event.
    pub fn show(&mut self, shown: &Shown<'_>) {
        match shown {
            Shown::Text(delta) => self.text(delta),
            Shown::ToolStart { name, args } => {
                self.break_line();
                self.note(&format!("→ {name} {}", preview(args)));
            }
            Shown::ToolEnd {
                name,
                is_error,
                result,
            } => {
                let status = if *is_error { "error" } else { "ok" };
                self.note(&format!("← {name} {status}: {}", preview(result)));
            }
        }
    }

    /// Reply text as it streams.
    pub fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(delta.as_bytes());
        let _ = out.flush();
        self.wrote_text = true;
        self.ends_with_newline = delta.ends_with('\n');
    }

    /// Whether any reply text was shown since the last [`Renderer::end`].
    pub fn showed_text(&self) -> bool {
        self.wrote_text
    }

    /// A line of Pincer's own (a command's answer) on stdout.
    pub fn line(&mut self, text: &str) {
        self.break_line();
        println!("{text}");
    }

    /// Ends a reply: a final newline, and a word on how it ended unless it simply did.
    pub fn end(&mut self, ending: &Ending) {
        self.break_line();
        match ending {
            Ending::Done => {}
            Ending::Aborted => self.note("[aborted]"),
            Ending::Failed(message) => eprintln!("error: {message}"),
        }
        self.wrote_text = false;
        self.ends_with_newline = true;
    }

    /// A line on stderr, dimmed on a terminal.
    pub fn note(&self, text: &str) {
        if self.dim {
            eprintln!("\x1b[2m{text}\x1b[0m");
        } else {
            eprintln!("{text}");
        }
    }

    fn break_line(&mut self) {
        if self.wrote_text && !self.ends_with_newline {
            println!();
            self.ends_with_newline = true;
        }
    }
}
