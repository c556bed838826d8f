//! `pincer`: the command-line front door and the composition root. Parses the command
//! line, loads `$PINCER_HOME` and the configuration, and hands over to one command module.
//! Errors print as one clear message on stderr with exit code 1 (clap's usage errors: 2).

mod app;
mod approval_setup;
mod ask;
mod ask_result;
mod auth_browser;
mod auth_cmd;
mod auth_gemini;
mod auth_logins;
mod browser_cmd;
mod channel_setup;
mod chat;
mod cli;
mod config_cmd;
mod credentials;
mod cron;
mod gateway;
mod heartbeat_setup;
mod log_writer;
mod malloc_arenas;
mod manual_tools;
mod mcp_cmd;
mod mcp_http;
mod mcp_login;
mod mcp_serve;
mod media_setup;
mod memory_cmd;
mod memory_setup;
mod message_cmd;
mod message_setup;
mod models_cmd;
mod output;
mod pairing_cmd;
mod private_home;
mod prompt;
mod report;
mod rpc;
mod sandbox_cmd;
mod service;
mod sessions_cmd;
mod team_setup;
mod tools_cmd;
mod turn_setup;
mod vision_setup;
mod web_setup;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    // First, while this is the only thread: see `private_home`.
    private_home::restrict_umask();
    // Hidden, and before anything else: Landlock must be applied while this is the only
    // thread, just before the exec.
    if let Some(code) = sandbox_cmd::intercept() {
        return code;
    }
    let cli = Cli::parse();
    let command = match cli.command {
        // The gateway sets up its own logging and runtime (a daemon logs to a file, with
        // timestamps, and serves on a worker pool).
        Command::Gateway(args) => return exit_code(gateway::main(args)),
        command => command,
    };
    init_logging();
    if let Command::Rpc(args) = command {
        // Its own runtime; stdout is the protocol, so errors go to stderr only.
        return exit_code(rpc::cmd::main(args));
    }
    if let Command::Completions { shell } = command {
        clap_complete::generate(shell, &mut Cli::command(), "pincer", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    // One turn at a time: a single-threaded runtime starts faster and uses less memory
    // than a pool of workers (the spinner has a thread of its own).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    exit_code(runtime.block_on(dispatch(command)))
}

/// A command's outcome as the process's exit code; an error is one line on stderr.
fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    if let Command::Config(command) = command {
        // Works on a broken config too, so it can be repaired.
        if let Ok(home) = pincer_config::pincer_home(&pincer_ai::env::ProcessEnv) {
            private_home::secure_home(&home)?;
        }
        return config_cmd::run(&pincer_ai::env::ProcessEnv, command);
    }
    if let Command::Browser(browser_cmd::BrowserCommand::Supervise { args }) = command {
        // Started by the browser tool with everything it needs: no configuration read.
        return browser_cmd::supervise_main(args).await;
    }
    let app = app::App::load()?;
    let result = run_command(&app, command).await;
    // MCP servers started by this command (and their process groups) end with it.
    app.mcp.shutdown().await;
    result
}

async fn run_command(app: &app::App, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Ask(args) => ask::run(app, args).await,
        Command::Chat(args) => chat::run(app, args).await,
        Command::Tools(command) => tools_cmd::run(app, command).await,
        Command::Sessions(command) => sessions_cmd::run(app, command),
        Command::Auth(command) => auth_cmd::run(app, command).await,
        Command::Models(args) => models_cmd::run(app, args),
        Command::Cron(command) => cron::run(app, command).await,
        Command::Pairing(command) => pairing_cmd::run(app, command).await,
        Command::Message(command) => message_cmd::run(app, command).await,
        Command::Memory(command) => memory_cmd::run(app, command).await,
        Command::Browser(command) => browser_cmd::run(app, command).await,
        Command::Mcp(command) => mcp_cmd::run(app, command).await,
        Command::Doctor => browser_cmd::doctor(app).await,
        Command::Config(_)
        | Command::Completions { .. }
        | Command::Gateway(_)
        | Command::Rpc(_) => Ok(ExitCode::SUCCESS),
    }
}

/// Warnings and errors of the libraries go to stderr; `PINCER_LOG` (e.g. `debug`,
/// `pincer_store=trace`) asks for more. The store's warnings are left out by default
/// because every one of them reaches the user as a worded report (`report.rs`) instead.
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PINCER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,pincer_store=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
