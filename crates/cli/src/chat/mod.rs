//! `pincer chat`: an interactive chat with an agent in the terminal, for people who live
//! in a shell. Replies stream, tool calls show as one line each, the prompt has history
//! and editing, and the chat commands (`/new`, `/model`, `/think`, `/status`, `/stop`,
//! `/usage`, `/queue`, `/verbose`, `/compact`, `/sessions`) work as they do on the
//! channels. It runs the agent in process, as
//! `pincer ask` does, or talks to a running gateway (`--url ws://… --token …`).
//!
//! The pieces: `repl` (the loop), `editor` (the line editor and history), `commands`
//! (what a line asks for), `render` (how a reply shows), `local` and `remote` (the two
//! backends). This file holds the command line, the choice of backend, Ctrl-C, and the
//! text of `/status` and `/sessions`, which both backends share.

mod commands;
mod editor;
mod local;
mod remote;
mod render;
mod repl;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Args;
use futures_util::FutureExt as _;
use pincer_store::SessionEntry;
use tokio::signal::unix::{Signal, SignalKind, signal};

use self::local::{Local, LocalOptions};
use self::remote::Remote;
use self::render::{Ending, Renderer};
use crate::app::App;
use pincer_turns::commands::{Command, Setting};

/// The environment variable that gives `--token` when it is not on the command line.
const TOKEN_ENV: &str = "PINCER_GATEWAY_TOKEN";

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Session key: `main`, a name, or a full `agent:…` key.
    #[arg(long, default_value = "main")]
    pub session: String,
    /// Agent id (default: the configured default agent, else `main`).
    #[arg(long)]
    pub agent: Option<String>,
    /// Provider id, in process (its default model unless --model is given).
    #[arg(long, conflicts_with = "url")]
    pub provider: Option<String>,
    /// Model, `provider/model`, in process (`/model` changes the session's).
    #[arg(long, conflicts_with = "url")]
    pub model: Option<String>,
    /// Auth profile to use, in process.
    #[arg(long, conflicts_with = "url")]
    pub profile: Option<String>,
    /// Chat through the gateway at this WebSocket URL (e.g. ws://127.0.0.1:18789) instead
    /// of running the agent here.
    #[arg(long, value_name = "WS_URL")]
    pub url: Option<String>,
    /// The gateway's token (default: $PINCER_GATEWAY_TOKEN).
    #[arg(long, requires = "url")]
    pub token: Option<String>,
}

/// Runs `pincer chat`.
pub async fn run(app: &App, args: ChatArgs) -> Result<ExitCode> {
    // Before anything runs: from here on Ctrl-C aborts a reply instead of killing us.
    let mut ctrl_c = Interrupts::new()?;
    let mut backend = match &args.url {
        Some(url) => {
            let agent_id = app.agent_id(args.agent.as_deref())?;
            let key = app.session_key(&agent_id, &args.session)?;
            let token = args
                .token
                .clone()
                .or_else(|| app.env.var(TOKEN_ENV))
                .filter(|t| !t.trim().is_empty());
            // Ctrl-C while connecting gives up, as it would without the handler.
            let remote = tokio::select! {
                remote = Remote::connect(url, token.as_deref(), key) => remote?,
                () = ctrl_c.next() => return Ok(ExitCode::from(130)),
            };
            Backend::Remote(Box::new(remote))
        }
        None => Backend::Local(Box::new(Local::open(
            {
                // The agent's MCP servers are started before its tools are listed.
                app.prepare_mcp(&app.agent_id(args.agent.as_deref())?).await;
                app
            },
            LocalOptions {
                agent: args.agent,
                session: args.session,
                provider: args.provider,
                model: args.model,
                profile: args.profile,
            },
        )?)),
    };
    let code = if std::io::stdin().is_terminal() {
        app.ensure_home()?;
        repl::interactive(&mut backend, app.home.join("chat_history"), &mut ctrl_c).await
    } else {
        repl::piped(&mut backend, &mut ctrl_c).await
    };
    backend.close().await;
    code
}

/// Ctrl-C, caught: while it is, the terminal's SIGINT no longer ends the process.
pub struct Interrupts(Signal);

impl Interrupts {
    fn new() -> Result<Self> {
        Ok(Self(
            signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?,
        ))
    }

    /// Forgets a Ctrl-C that came while nothing ran, so it does not abort what comes next.
    pub fn forget_earlier(&mut self) {
        while let Some(Some(())) = self.0.recv().now_or_never() {}
    }

    /// Waits for the next Ctrl-C.
    pub async fn next(&mut self) {
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// Where the chat's turns run.
pub enum Backend<'a> {
    Local(Box<Local<'a>>),
    Remote(Box<Remote>),
}

impl Backend<'_> {
    fn session_key(&self) -> &str {
        match self {
            Self::Local(local) => local.session_key(),
            Self::Remote(remote) => remote.session_key(),
        }
    }

    /// Whether the backend can no longer be used (the gateway's connection is gone).
    fn is_lost(&self) -> bool {
        match self {
            Self::Local(_) => false,
            Self::Remote(remote) => remote.is_lost(),
        }
    }

    /// One message (after starting the session over, with `new_session`).
    async fn send(
        &mut self,
        text: String,
        new_session: bool,
        renderer: &mut Renderer,
        ctrl_c: &mut Interrupts,
    ) -> Result<Ending> {
        match self {
            Self::Local(local) => local.send(text, new_session, renderer, ctrl_c).await,
            // The gateway starts a session over itself when a message begins with `/new`.
            Self::Remote(remote) => {
                let text = if new_session {
                    format!("/new {text}")
                } else {
                    text
                };
                remote.send(text, renderer, ctrl_c).await
            }
        }
    }

    /// `/new` alone.
    async fn new_session(
        &mut self,
        renderer: &mut Renderer,
        ctrl_c: &mut Interrupts,
    ) -> Result<()> {
        match self {
            Self::Local(local) => renderer.line(&local.new_session()?),
            Self::Remote(remote) => {
                let ending = remote.send("/new".to_owned(), renderer, ctrl_c).await?;
                renderer.end(&ending);
            }
        }
        Ok(())
    }

    async fn model(&mut self, setting: Option<Setting>) -> Result<String> {
        match self {
            Self::Local(local) => local.model(setting),
            Self::Remote(remote) => remote.model(setting).await,
        }
    }

    async fn think(&mut self, setting: Option<Setting>) -> Result<String> {
        match self {
            Self::Local(local) => local.think(setting),
            Self::Remote(remote) => remote.think(setting).await,
        }
    }

    async fn status(&mut self) -> Result<Vec<String>> {
        match self {
            Self::Local(local) => local.status(),
            Self::Remote(remote) => remote.status().await,
        }
    }

    async fn sessions(&mut self) -> Result<Vec<(String, SessionEntry)>> {
        match self {
            Self::Local(local) => local.sessions(),
            Self::Remote(remote) => remote.sessions().await,
        }
    }

    /// `/usage`, `/queue`, `/verbose`, `/compact`: answered here in process; through a
    /// gateway the line goes as typed, for the gateway to answer as it answers every client.
    async fn answer(
        &mut self,
        line: &str,
        command: Command,
        renderer: &mut Renderer,
        ctrl_c: &mut Interrupts,
    ) -> Result<()> {
        match self {
            Self::Local(local) => renderer.line(&local.answer(command, ctrl_c).await?),
            Self::Remote(remote) => {
                let ending = remote
                    .send(line.trim().to_owned(), renderer, ctrl_c)
                    .await?;
                renderer.end(&ending);
            }
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<String> {
        match self {
            Self::Local(local) => Ok(local.stop()),
            Self::Remote(remote) => remote.stop().await,
        }
    }

    async fn close(self) {
        match self {
            Self::Local(local) => local.close().await,
            Self::Remote(remote) => remote.close().await,
        }
    }
}

/// `/sessions`' lines: most recent first, the chat's own marked with `*`.
fn session_lines(rows: &[(String, SessionEntry)], current: &str) -> Vec<String> {
    if rows.is_empty() {
        return vec!["no sessions yet".to_owned()];
    }
    rows.iter()
        .map(|(key, entry)| {
            let mark = if key == current { "*" } else { " " };
            let tokens = entry
                .total_tokens
                .map_or_else(|| "-".to_owned(), |t| t.to_string());
            format!(
                "{mark} {key:<40} {:<36} {} {tokens} tokens",
                entry.session_id,
                pincer_base::time::iso_from_ms(entry.updated_at),
            )
        })
        .collect()
}
