//! The prompt of an interactive `pincer chat`: rustyline's line editor on a thread of its
//! own (reading a line blocks, and the runtime has one thread), with the history kept in
//! `$PINCER_HOME/chat_history` (0600, saved after every line so a killed chat loses
//! nothing), slash commands completed with Tab, and multi-line messages: a line ending in
//! `\` goes on on the next line (a bracketed paste of several lines is one message too).

use std::borrow::Cow;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;

use anyhow::{Context as _, Result, anyhow};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Config, Context, Editor, Helper};
use tokio::sync::mpsc;

/// Most lines the history keeps.
const HISTORY_SIZE: usize = 1000;

/// What the user did at the prompt.
#[derive(Debug)]
pub enum Input {
    /// A message or command (continuation backslashes removed).
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D on an empty line.
    Eof,
}

/// The line editor's thread: asked for a line with a prompt, it answers with the input.
pub struct LineReader {
    prompts: std_mpsc::Sender<String>,
    inputs: mpsc::UnboundedReceiver<Result<Input, String>>,
}

impl LineReader {
    /// Starts the editor with the history in `history` (a missing file is a new history).
    pub fn start(history: PathBuf) -> Result<Self> {
        let (prompts, prompt_rx) = std_mpsc::channel::<String>();
        let (input_tx, inputs) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std_mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("chat-editor".into())
            .spawn(move || {
                let mut editor = match new_editor(&history) {
                    Ok(editor) => {
                        let _ = ready_tx.send(Ok(()));
                        editor
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("{e:#}")));
                        return;
                    }
                };
                // Ends when the chat drops its sender.
                while let Ok(prompt) = prompt_rx.recv() {
                    let input = read(&mut editor, &prompt, &history);
                    if input_tx.send(input).is_err() {
                        break;
                    }
                }
            })
            .context("cannot start the line editor's thread")?;
        ready_rx
            .recv()
            .map_err(|_| anyhow!("the line editor's thread ended before it started"))?
            .map_err(|e| anyhow!("cannot start the line editor: {e}"))?;
        Ok(Self { prompts, inputs })
    }

    /// Shows `prompt` and waits for the user.
    pub async fn read(&mut self, prompt: &str) -> Result<Input> {
        self.prompts
            .send(prompt.to_owned())
            .map_err(|_| anyhow!("the line editor stopped"))?;
        self.inputs
            .recv()
            .await
            .ok_or_else(|| anyhow!("the line editor stopped"))?
            .map_err(|e| anyhow!("cannot read the terminal: {e}"))
    }
}

fn new_editor(history: &Path) -> Result<Editor<ChatHelper, FileHistory>> {
    let config = Config::builder()
        .max_history_size(HISTORY_SIZE)?
        .history_ignore_dups(true)?
        .history_ignore_space(true)
        .auto_add_history(false)
        .build();
    let mut editor = Editor::with_config(config)?;
    editor.set_helper(Some(ChatHelper));
    match editor.load_history(history) {
        Ok(()) => {}
        Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!("cannot read the chat history {}: {e}", history.display());
        }
    }
    Ok(editor)
}

/// One line from the editor, added to the history (and the file) if it is a new one.
fn read(
    editor: &mut Editor<ChatHelper, FileHistory>,
    prompt: &str,
    history: &Path,
) -> Result<Input, String> {
    match editor.readline(prompt) {
        Ok(line) => {
            if !line.trim().is_empty() && editor.add_history_entry(line.as_str()).unwrap_or(false) {
                save_history(editor, history);
            }
            Ok(Input::Line(line.replace("\\\n", "\n")))
        }
        Err(ReadlineError::Interrupted) => Ok(Input::Interrupted),
        Err(ReadlineError::Eof) => Ok(Input::Eof),
        Err(e) => Err(e.to_string()),
    }
}

/// Appends the new line to the file, private to the user (it holds what they typed).
fn save_history(editor: &mut Editor<ChatHelper, FileHistory>, path: &Path) {
    if let Err(e) = editor.append_history(path) {
        tracing::warn!("cannot save the chat history to {}: {e}", path.display());
        return;
    }
    if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
        tracing::warn!("cannot make {} private: {e}", path.display());
    }
}

/// Completes slash commands and continues lines that end in a backslash.
struct ChatHelper;

impl Completer for ChatHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((0, Vec::new()));
        }
        let matches = super::commands::completions()
            .filter(|c| c.starts_with(typed))
            .map(str::to_owned)
            .collect();
        Ok((0, matches))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        Cow::Borrowed(line)
    }
}

impl Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ChatHelper {}
