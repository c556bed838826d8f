//! The loop of `pincer chat`: read a line, do what it says, show the answer, again.
//! On a terminal the line editor reads (history, editing, Ctrl-C and Ctrl-D); from a pipe
//! each line of stdin is one message (a line ending in `\` goes on on the next), and the
//! chat ends at the end of the input.
//!
//! Ctrl-C while a reply streams aborts that reply. At the prompt, Ctrl-C twice in a row
//! (or Ctrl-D) leaves with exit code 0; from a pipe, Ctrl-C while waiting for input leaves
//! with 130, as an interrupted command does. A chat whose gateway connection is gone ends
//! with 1.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use tokio::io::AsyncBufReadExt as _;

use pincer_turns::commands::Command;

use super::commands::{self, ChatCommand};
use super::editor::{Input, LineReader};
use super::render::{Ending, Renderer};
use super::{Backend, Interrupts};

/// The prompt.
pub const PROMPT: &str = "> ";

/// Whether the chat goes on after a line.
enum Flow {
    Continue,
    Exit,
    /// The gateway's connection is gone (what happened was said): exit code 1.
    Lost,
}

impl Flow {
    /// The exit code of a chat that ends here (`None`: it goes on).
    fn exit_code(self) -> Option<ExitCode> {
        match self {
            Self::Continue => None,
            Self::Exit => Some(ExitCode::SUCCESS),
            Self::Lost => Some(ExitCode::from(1)),
        }
    }
}

/// The chat on a terminal.
pub async fn interactive(
    backend: &mut Backend<'_>,
    history: PathBuf,
    ctrl_c: &mut Interrupts,
) -> Result<ExitCode> {
    let mut reader = LineReader::start(history)?;
    let mut renderer = Renderer::new();
    renderer.note(&format!(
        "pincer chat · session {} · /help for commands · Ctrl-D to leave",
        backend.session_key()
    ));
    let mut interrupted = false;
    loop {
        match reader.read(PROMPT).await? {
            Input::Eof => break,
            Input::Interrupted if interrupted => break,
            Input::Interrupted => {
                interrupted = true;
                renderer.note("(Ctrl-C again or Ctrl-D to leave)");
            }
            Input::Line(line) => {
                interrupted = false;
                if let Some(code) = handle(backend, &line, &mut renderer, ctrl_c)
                    .await
                    .exit_code()
                {
                    return Ok(code);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The chat with stdin not a terminal.
pub async fn piped(backend: &mut Backend<'_>, ctrl_c: &mut Interrupts) -> Result<ExitCode> {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut renderer = Renderer::new();
    let mut message = String::new();
    loop {
        ctrl_c.forget_earlier();
        let line = tokio::select! {
            line = lines.next_line() => line.context("cannot read stdin")?,
            () = ctrl_c.next() => return Ok(ExitCode::from(130)),
        };
        let Some(line) = line else { break };
        if let Some(start) = line.strip_suffix('\\') {
            message.push_str(start);
            message.push('\n');
            continue;
        }
        message.push_str(&line);
        let text = std::mem::take(&mut message);
        if let Some(code) = handle(backend, &text, &mut renderer, ctrl_c)
            .await
            .exit_code()
        {
            return Ok(code);
        }
    }
    // Input that ended inside a continued message is still a message.
    if !message.is_empty()
        && let Some(code) = handle(backend, &message, &mut renderer, ctrl_c)
            .await
            .exit_code()
    {
        return Ok(code);
    }
    Ok(ExitCode::SUCCESS)
}

/// Does what one line says. A command that fails says why and the chat goes on.
async fn handle(
    backend: &mut Backend<'_>,
    line: &str,
    renderer: &mut Renderer,
    ctrl_c: &mut Interrupts,
) -> Flow {
    if line.trim().is_empty() {
        return Flow::Continue;
    }
    let result = match commands::parse(line) {
        ChatCommand::Exit => return Flow::Exit,
        ChatCommand::Shared(Command::Help) => {
            renderer.line(&commands::help());
            Ok(())
        }
        ChatCommand::Message(text) => backend
            .send(text, false, renderer, ctrl_c)
            .await
            .map(|ending| renderer.end(&ending)),
        ChatCommand::Shared(Command::NewSession { rest: Some(text) }) => backend
            .send(text, true, renderer, ctrl_c)
            .await
            .map(|ending| renderer.end(&ending)),
        ChatCommand::Shared(Command::NewSession { rest: None }) => {
            backend.new_session(renderer, ctrl_c).await
        }
        ChatCommand::Shared(Command::Model(setting)) => {
            backend.model(setting).await.map(|t| renderer.line(&t))
        }
        ChatCommand::Shared(Command::Think(setting)) => {
            backend.think(setting).await.map(|t| renderer.line(&t))
        }
        ChatCommand::Shared(Command::Status) => backend
            .status()
            .await
            .map(|lines| renderer.line(&lines.join("\n"))),
        ChatCommand::Sessions => backend.sessions().await.map(|rows| {
            let current = backend.session_key().to_owned();
            renderer.line(&super::session_lines(&rows, &current).join("\n"));
        }),
        ChatCommand::Shared(Command::Stop) => backend.stop().await.map(|t| renderer.line(&t)),
        ChatCommand::Shared(
            command @ (Command::Usage
            | Command::Queue(_)
            | Command::Verbose(_)
            | Command::Activation(_)
            | Command::Compact { .. }
            | Command::Subagents { .. }
            | Command::Approve { .. }),
        ) => backend.answer(line, command, renderer, ctrl_c).await,
    };
    if let Err(e) = result {
        renderer.end(&Ending::Failed(format!("{e:#}")));
        if backend.is_lost() {
            return Flow::Lost;
        }
    }
    Flow::Continue
}
