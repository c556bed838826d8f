//! Streaming a turn to the terminal: reply text to stdout as it arrives, tool activity as
//! one compact line each on stderr (so `pincer ask … > file` captures only the reply), and
//! a spinner on stderr while nothing has arrived yet, when stdout and stderr are terminals.
//!
//! The spinner is twenty lines of our own rather than indicatif: one frame every 80 ms on
//! one line is all it does, and it keeps `pincer`'s start-up and dependency tree small.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pincer_agent::{AgentEvent, ToolOutput};
use pincer_ai::AssistantMessageEvent;

/// Most characters of tool arguments or results shown on one line.
const PREVIEW_CHARS: usize = 120;

/// Prints agent events as they happen.
pub struct StreamPrinter {
    spinner: Option<Spinner>,
    wrote_text: bool,
    ends_with_newline: bool,
}

impl StreamPrinter {
    /// A printer; the spinner runs only when both stdout and stderr are terminals.
    pub fn new() -> Self {
        let interactive = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self {
            spinner: interactive.then(Spinner::start),
            wrote_text: false,
            ends_with_newline: true,
        }
    }

    fn stop_spinner(&mut self) {
        // Dropping the spinner stops it and erases its line.
        self.spinner = None;
    }

    /// Handles one event.
    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            } => {
                self.stop_spinner();
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(delta.as_bytes());
                let _ = out.flush();
                self.wrote_text = true;
                self.ends_with_newline = delta.ends_with('\n');
            }
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => {
                self.stop_spinner();
                self.break_line();
                eprintln!("→ {tool_name} {}", preview(&args.to_string()));
            }
            AgentEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } => {
                let status = if *is_error { "error" } else { "ok" };
                eprintln!("← {tool_name} {status}: {}", preview(&result_text(result)));
            }
            _ => {}
        }
    }

    /// Ends the output: a final newline after the reply, the spinner gone.
    pub fn finish(&mut self) {
        self.stop_spinner();
        self.break_line();
    }

    fn break_line(&mut self) {
        if self.wrote_text && !self.ends_with_newline {
            println!();
            self.ends_with_newline = true;
        }
    }
}

fn result_text(result: &ToolOutput) -> String {
    result.text_content()
}

/// One line, at most [`PREVIEW_CHARS`] characters.
pub fn preview(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// A spinner on stderr, on its own thread so a busy runtime never freezes it.
struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
            let mut i = 0;
            while !flag.load(Ordering::Relaxed) {
                eprint!("\r{} thinking…", FRAMES[i % FRAMES.len()]);
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            // Erase the spinner's line.
            eprint!("\r\x1b[2K");
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
