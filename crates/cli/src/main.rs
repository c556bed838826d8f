//! `pincer`: the command-line front door and the composition root. Parses the command
//! line, loads `$PINCER_HOME` and the configuration, and hands over to one command module.
//! Errors print as one clear message on stderr with exit code 1 (clap's usage errors: 2).

mod app;
mod ask;
mod ask_result;
mod auth_cmd;
mod cli;
mod config_cmd;
mod credentials;
mod manual_tools;
mod models_cmd;
mod output;
mod prompt;
mod report;
mod sessions_cmd;
mod tools_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    if let Command::Completions { shell } = cli.command {
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
    match runtime.block_on(dispatch(cli.command)) {
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
        return config_cmd::run(&pincer_ai::env::ProcessEnv, command);
    }
    let app = app::App::load()?;
    match command {
        Command::Ask(args) => ask::run(&app, args).await,
        Command::Tools(command) => tools_cmd::run(&app, command).await,
        Command::Sessions(command) => sessions_cmd::run(&app, command),
        Command::Auth(command) => auth_cmd::run(&app, command).await,
        Command::Models(args) => models_cmd::run(&app, args),
        Command::Config(_) | Command::Completions { .. } => Ok(ExitCode::SUCCESS),
    }
}

/// Warnings and errors of the libraries go to stderr; `PINCER_LOG` (e.g. `debug`,
/// `pincer_store=trace`) asks for more. The store's warnings are left out by default
/// because every one of them reaches the user as a worded report (`report.rs`) instead.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PINCER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,pincer_store=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
