//! `pincer browser`: whether the profile's browser runs (`status`), ending it (`stop`), and
//! the hidden `supervise` the browser runtime starts Chromium under (it ends Chromium when
//! idle, when asked, and when it dies itself). `pincer doctor`: what the web tools and the
//! browser can do on this machine with this configuration.

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Subcommand;
use pincer_browser::runtime::{SupervisorArgs, supervise};

use crate::app::App;

#[derive(Debug, Subcommand)]
pub enum BrowserCommand {
    /// Whether the profile's browser runs: its pid, CDP endpoint and executable.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// End the profile's browser (its tabs are forgotten).
    Stop,
    /// Run Chromium and end it when idle (started by the browser tool; not for people).
    #[command(hide = true)]
    Supervise {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

/// `pincer browser supervise …`: needs no configuration (the runtime passed everything).
pub async fn supervise_main(args: Vec<OsString>) -> Result<ExitCode> {
    let args = SupervisorArgs::parse(args)?;
    supervise(args).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn run(app: &App, command: BrowserCommand) -> Result<ExitCode> {
    let runtime = app.browser_runtime()?;
    match command {
        BrowserCommand::Status { json } => {
            let status = runtime.status().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                println!("{}", browser_line(&status));
            }
            Ok(ExitCode::SUCCESS)
        }
        BrowserCommand::Stop => {
            let stopped = runtime.stop().await.context("stopping the browser")?;
            println!(
                "{}",
                if stopped {
                    "browser stopped"
                } else {
                    "no browser was running"
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        BrowserCommand::Supervise { args } => supervise_main(args).await,
    }
}

/// One line about the browser: running or not, and what would run.
fn browser_line(status: &pincer_browser::RuntimeStatus) -> String {
    let mode = if status.headless {
        "headless"
    } else {
        "windowed"
    };
    match (&status.executable, status.running, status.pid) {
        (_, true, pid) => format!(
            "browser: running (profile {}, pid {}, {mode}) at {}",
            status.profile,
            pid.map_or_else(|| "?".to_owned(), |p| p.to_string()),
            status.ws_url.as_deref().unwrap_or("?")
        ),
        (Some(exe), false, _) => format!(
            "browser: not running (profile {}); starts {exe} ({mode}) when first used",
            status.profile
        ),
        (None, false, _) => format!(
            "browser: unavailable — no Chromium or Chrome found; install chromium or set \
             browser.executablePath (profile {})",
            status.profile
        ),
    }
}

/// `pincer doctor`: the web tools' and the browser's state, one line each.
pub async fn doctor(app: &App) -> Result<ExitCode> {
    println!("home: {}", app.home.display());
    println!("config: {}", app.config_path.display());
    let web = app.config.tools.web.as_ref();
    let fetch = web.and_then(|w| w.fetch.as_ref());
    println!("{}", fetch_line(fetch));
    let search = web.and_then(|w| w.search.as_ref());
    if search.and_then(|s| s.enabled) == Some(false) {
        println!("web_search: off (tools.web.search.enabled is false)");
    } else {
        let options = crate::web_setup::search_options(app, search);
        println!("{}", pincer_web::search::describe_status(options.as_ref()));
    }
    if app.config.browser.enabled == Some(false) {
        println!("browser: off (browser.enabled is false)");
    } else {
        let status = app.browser_runtime()?.status().await?;
        println!("{}", browser_line(&status));
    }
    // Runs bwrap once: off the async thread.
    let support = tokio::task::spawn_blocking(pincer_sandbox::probe).await?;
    for line in crate::sandbox_cmd::doctor_lines(app, &support) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn fetch_line(fetch: Option<&pincer_config::WebFetchConfig>) -> String {
    if fetch.and_then(|f| f.enabled) == Some(false) {
        return "web_fetch: off (tools.web.fetch.enabled is false)".to_owned();
    }
    let private = fetch.and_then(|f| f.allow_private_network) == Some(true);
    let hosts = fetch.map(|f| f.allow_hosts.as_slice()).unwrap_or_default();
    let mut line = if private {
        "web_fetch: on; private and loopback addresses ALLOWED (tools.web.fetch.allowPrivateNetwork)"
            .to_owned()
    } else {
        "web_fetch: on; loopback, private, link-local and metadata addresses refused".to_owned()
    };
    if !hosts.is_empty() {
        line.push_str(&format!(" (allowed hosts: {})", hosts.join(", ")));
    }
    line
}
