//! One command to the worker and its response: written now, or, for work that takes long
//! (`compact`, `bash`), when it ends — meanwhile other commands (`abort`) still run.

use serde_json::Value;

use crate::worker::error::{WorkerError, wire_text};
use crate::worker::output::Output;
use crate::worker::state::Worker;
use crate::{RpcCommand, RpcRequest, error_line, success_line};

/// Runs one command and writes its response.
pub(crate) async fn dispatch(worker: &mut Worker, out: &Output, request: RpcRequest) {
    let RpcRequest { id, command } = request;
    let name = command.command_type();
    let respond = {
        let out = out.clone();
        move |result: Result<Option<Value>, WorkerError>| match result {
            Ok(data) => out.line(success_line(id.as_ref(), name, data.as_ref())),
            Err(e) => out.line(error_line(id.as_ref(), name, &wire_text(&e))),
        }
    };
    let result: Result<Option<Value>, WorkerError> = match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => worker
            .prompt(&message, images.unwrap_or_default(), streaming_behavior)
            .map(|()| None),
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
            worker.set_model(&provider, &model_id).await.map(Some)
        }
        RpcCommand::CycleModel => worker.cycle_model().await.map(Some),
        RpcCommand::GetAvailableModels => Ok(Some(worker.get_available_models())),
        RpcCommand::SetThinkingLevel { level } => {
            worker.set_thinking_level(&level).await.map(|()| None)
        }
        RpcCommand::CycleThinkingLevel => worker.cycle_thinking_level().await.map(Some),
        RpcCommand::SetSteeringMode { mode } => {
            worker.set_steering_mode(mode);
            Ok(None)
        }
        RpcCommand::SetFollowUpMode { mode } => {
            worker.set_follow_up_mode(mode);
            Ok(None)
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
                    .map_err(WorkerError::from)
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
        RpcCommand::SetSessionName { name } => worker.set_session_name(&name).await.map(|()| None),
        RpcCommand::GetCommands => Ok(Some(worker.get_commands())),
        RpcCommand::ExportHtml { output_path } => worker.export_html(output_path).await.map(Some),
        RpcCommand::Fork { entry_id } => worker.fork(&entry_id).await.map(Some),
        RpcCommand::CloneSession => worker.clone_session().await.map(Some),
        RpcCommand::GetForkMessages => worker.get_fork_messages().await.map(Some),
    };
    respond(result);
}
