//! `pincer rpc`: a worker speaking pi's RPC protocol (`pi --mode rpc`) on stdin/stdout, so
//! pi-gateway-style clients — and Pincer's own worker pool — can drive a Pincer agent. One
//! command per stdin line, answered by one `response` line (with the command's `id`);
//! agent events stream between them, as pi writes them. EOF on stdin ends the worker with
//! exit code 0 once what runs is stopped. Logs go to stderr only: stdout is the protocol.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use pincer_rpc::{
    DecodeError, LineError, MAX_LINE_BYTES, QueueMode, RpcCommand, RpcRequest, WorkerInput,
    decode_input, error_line, read_line_limited, success_line,
};
use serde_json::Value;
use tokio::io::BufReader;

use crate::cli::RpcArgs;
use crate::rpc_output::Output;
use crate::rpc_worker::{Worker, WorkerOptions};

pub fn main(args: RpcArgs) -> Result<ExitCode> {
    if args.mode.as_deref().is_some_and(|m| m != "rpc") {
        bail!("pincer rpc only speaks --mode rpc");
    }
    let app = Arc::new(crate::app::App::load()?);
    app.ensure_home()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let thinking = match &args.thinking {
        Some(level) => Some(
            serde_json::from_value(serde_json::json!(level)).map_err(|_| {
                anyhow::anyhow!(
                    "unknown thinking level {level:?}: use off, minimal, low, medium, high or xhigh"
                )
            })?,
        ),
        None => None,
    };
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
    let code = runtime.block_on(serve(app, options))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(code)
}

async fn serve(app: Arc<crate::app::App>, options: WorkerOptions) -> Result<ExitCode> {
    let (out, writer) = Output::spawn();
    let mut worker = Worker::start(app, options, out.clone())?;
    let mut stdin = BufReader::new(tokio::io::stdin());
    loop {
        let line = match read_line_limited(&mut stdin, MAX_LINE_BYTES).await {
            Ok(None) => break,
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(e))) => {
                out.line(error_line(None, "parse", &unreadable(&e)));
                continue;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read stdin");
                break;
            }
        };
        match decode_input(&line) {
            Ok(WorkerInput::Command(request)) => dispatch(&mut worker, &out, request).await,
            // Pincer's tools never open a dialog, so no answer is awaited: nothing to do.
            Ok(WorkerInput::UiResponse(response)) => {
                tracing::debug!(id = %response.id, "extension_ui_response with no dialog open");
            }
            Err(e) => {
                if let DecodeError::Unknown { id: Some(id), .. } = &e {
                    tracing::debug!(%id, "unknown command (answered without its id, as pi does)");
                }
                out.line(e.response_line());
            }
        }
    }
    worker.shutdown().await;
    drop(worker);
    drop(out);
    // The writer ends once every handle is gone and the queue is written.
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    Ok(ExitCode::SUCCESS)
}

fn unreadable(error: &LineError) -> String {
    format!("Failed to parse command: {error}")
}

/// Runs one command and writes its response (now, or when work that takes long ends).
async fn dispatch(worker: &mut Worker, out: &Output, request: RpcRequest) {
    let RpcRequest { id, command } = request;
    let name = command.command_type();
    let respond = {
        let out = out.clone();
        move |result: Result<Option<Value>>| match result {
            Ok(data) => out.line(success_line(id.as_ref(), name, data.as_ref())),
            Err(e) => out.line(error_line(id.as_ref(), name, &format!("{e:#}"))),
        }
    };
    let result: Result<Option<Value>> = match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => {
            let behavior = streaming_behavior.map(|b| match b {
                pincer_rpc::StreamingBehavior::Steer => "steer",
                pincer_rpc::StreamingBehavior::FollowUp => "followUp",
            });
            worker
                .prompt(&message, images.unwrap_or_default(), behavior)
                .map(|()| None)
        }
        RpcCommand::Steer { message, images } => {
            worker.steer(&message, images.unwrap_or_default());
            Ok(None)
        }
        RpcCommand::FollowUp { message, images } => {
            worker.follow_up(&message, images.unwrap_or_default());
            Ok(None)
        }
        RpcCommand::Abort => {
            worker.abort();
            Ok(None)
        }
        RpcCommand::NewSession { parent_session } => {
            worker.new_session(parent_session).await.map(Some)
        }
        RpcCommand::GetState => Ok(Some(worker.get_state())),
        RpcCommand::GetMessages => Ok(Some(worker.get_messages())),
        RpcCommand::SetModel { provider, model_id } => {
            worker.set_model(&provider, &model_id).map(Some)
        }
        RpcCommand::CycleModel => worker.cycle_model().map(Some),
        RpcCommand::GetAvailableModels => Ok(Some(worker.get_available_models())),
        RpcCommand::SetThinkingLevel { level } => worker.set_thinking_level(&level).map(|()| None),
        RpcCommand::CycleThinkingLevel => worker.cycle_thinking_level().map(Some),
        RpcCommand::SetSteeringMode { mode } => {
            worker.set_steering_mode(mode_name(mode)).map(|()| None)
        }
        RpcCommand::SetFollowUpMode { mode } => {
            worker.set_follow_up_mode(mode_name(mode)).map(|()| None)
        }
        RpcCommand::Compact {
            custom_instructions,
        } => {
            // Answered when the summary is written; meanwhile `abort` still works.
            let agent = worker.agent();
            tokio::spawn(async move {
                let result = agent
                    .compact(custom_instructions.as_deref())
                    .await
                    .map_err(anyhow::Error::from)
                    .map(|r| {
                        Some(serde_json::json!({
                            "summary": r.summary,
                            "tokensBefore": r.tokens_before,
                            "details": r.details,
                        }))
                    });
                respond(result);
            });
            return;
        }
        RpcCommand::SetAutoCompaction { enabled } => {
            worker.set_auto_compaction(enabled);
            Ok(None)
        }
        RpcCommand::SetAutoRetry { enabled } => worker.set_auto_retry(enabled).map(|()| None),
        // Pincer retries a failed model call inside the call, before anything streamed;
        // there is no retry wait of the session's own to abort.
        RpcCommand::AbortRetry => Ok(None),
        RpcCommand::Bash { command } => {
            worker.bash(command, move |result| respond(result.map(Some)));
            return;
        }
        RpcCommand::AbortBash => {
            worker.abort_bash();
            Ok(None)
        }
        RpcCommand::GetSessionStats => Ok(Some(worker.get_session_stats())),
        RpcCommand::SwitchSession { session_path } => worker
            .switch_session(std::path::Path::new(&session_path))
            .await
            .map(Some),
        RpcCommand::GetLastAssistantText => Ok(Some(worker.get_last_assistant_text())),
        RpcCommand::SetSessionName { name } => worker.set_session_name(&name).map(|()| None),
        RpcCommand::GetCommands => Ok(Some(worker.get_commands())),
        RpcCommand::ExportHtml { .. } | RpcCommand::Fork { .. } | RpcCommand::GetForkMessages => {
            Err(anyhow::anyhow!(
                "{name} is not supported by pincer rpc (pi's interactive-session features)"
            ))
        }
    };
    respond(result);
}

fn mode_name(mode: QueueMode) -> &'static str {
    match mode {
        QueueMode::All => "all",
        QueueMode::OneAtATime => "one-at-a-time",
    }
}
