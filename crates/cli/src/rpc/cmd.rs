//! `pincer rpc`: a worker speaking pi's RPC protocol (`pi --mode rpc`) on stdin/stdout, so
//! pi-gateway-style clients — and Pincer's own worker pool — can drive a Pincer agent. This
//! module reads the flags and builds the host; the worker is pincer-rpc's
//! ([`pincer_rpc::worker::serve`]). EOF on stdin ends it with exit code 0 once what runs is
//! stopped. Logs go to stderr only: stdout is the protocol.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use pincer_rpc::worker::{WorkerOptions, parse_thinking_level, serve};

use crate::cli::RpcArgs;
use crate::rpc::host::AppHost;

pub fn main(args: RpcArgs) -> Result<ExitCode> {
    if args.mode.as_deref().is_some_and(|m| m != "rpc") {
        bail!("pincer rpc only speaks --mode rpc");
    }
    let mut app = crate::app::App::load()?;
    app.ensure_home()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // pi's `--no-skills`: no skill is discovered (the standard directories and
    // `skills.load.extraDirs` alike); only the `--skill` paths load.
    if args.no_skills {
        app.discover_skills = false;
        app.config.skills.load.extra_dirs.clear();
    }
    // pi's `--skill`: one skill's directory or SKILL.md, loaded besides the agent's own
    // (lowest precedence), as the gateway passes a role's skills.
    app.config.skills.load.extra_dirs.extend(
        args.skill
            .iter()
            .map(|path| path.trim())
            .filter(|path| !path.is_empty())
            .map(|path| {
                if path.starts_with('~') {
                    path.to_owned()
                } else {
                    cwd.join(path).display().to_string()
                }
            }),
    );
    let app = Arc::new(app);
    let thinking = args
        .thinking
        .as_deref()
        .map(parse_thinking_level)
        .transpose()?;
    let tools = args.tools.as_ref().map(|list| {
        list.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    });
    for ignored in args.extension.iter().chain(&args.prompt_template) {
        tracing::warn!(%ignored, "extensions and prompt templates are pi's; ignored");
    }
    let agent_id = app.agent_id(args.agent.as_deref())?;
    let session_dir = args
        .session_dir
        .clone()
        .unwrap_or_else(|| app.agent_dir(&agent_id).join("rpc-sessions"));
    let options = WorkerOptions {
        agent_id,
        provider: args.provider.clone(),
        model: args.model.clone(),
        thinking,
        tools,
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        session_dir,
        continue_session: args.continue_session,
        session_file: args.session.clone().map(PathBuf::from),
        cwd,
    };
    // One thread: a worker serves one session, and it must be ready in milliseconds.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The agent's MCP servers start before the worker reads its first prompt (its tools are
    // listed when a turn is composed), waiting at most a few seconds: a slower server
    // goes on starting in the background for later turns. They stop with the worker.
    let mcp = Arc::clone(&app.mcp);
    let mcp_selection = app
        .agent_entry(&options.agent_id)
        .and_then(|a| a.mcp.clone());
    runtime.block_on(async {
        if !mcp.is_empty() {
            let warm = Arc::clone(&mcp);
            let started = tokio::spawn(async move { warm.prepare(mcp_selection.as_deref()).await });
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), started).await;
        }
        let host = Arc::new(AppHost::new(app)?);
        let served = serve(host, options).await;
        mcp.shutdown().await;
        served?;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}
