//! `pincer ask`: one turn of a persistent session, from the terminal. The reply streams as
//! it arrives (or, with `--json`, lainclaw's result object is printed at the end). `/new`
//! starts a new session; `tool: <name> {json}` runs tools by hand first. `--image` and
//! `--file` attach files (`ask/media.rs`).

mod media;

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use pincer_agent::AgentEvent;
use pincer_ai::{Message, apis};
use pincer_tools::ProcessRegistry;
use pincer_turns::turn::{SessionCommand, TurnPlan, open_session, run_turn, session_command};
use serde_json::json;

use crate::app::App;
use crate::ask_result::{AskContext, AskResult, ToolLog, request_id};
use crate::cli::AskArgs;
use crate::manual_tools::{self, ManualInput};
use crate::output::StreamPrinter;
use crate::turn_setup::{AgentSetup, prepare_agent};

/// Runs `pincer ask`.
pub async fn run(app: &App, args: AskArgs) -> Result<ExitCode> {
    let input = args.input.join(" ");
    if input.trim().is_empty() {
        eprintln!(
            "[ASK_INPUT_REQUIRED] ask needs something to ask\nUsage: pincer ask [OPTIONS] <INPUT>...\nExample: pincer ask \"hello\""
        );
        return Ok(ExitCode::from(1));
    }
    // Files are checked before anything is written or a model is called.
    let limits = crate::media_setup::limits(app);
    let attachments = media::check(&args.image, &args.file, &limits)?;
    app.ensure_home()?;
    let agent_id = app.agent_id(args.agent.as_deref())?;
    let key = app.session_key(&agent_id, &args.session)?;
    let store = app.sessions(&agent_id);
    let created_at = pincer_base::time::iso_now();
    let request_id = request_id();

    let workspace = app.workspace(&agent_id);
    // lainclaw reports the memory file whenever the session's memory is on.
    let memory_file = |on: bool| {
        on.then(|| {
            pincer_turns::session_memory::memory_file(&workspace, &key)
                .display()
                .to_string()
        })
    };
    let mut new_session = args.new_session;
    let mut text = input;
    if let Some(SessionCommand::NewSession { rest }) = session_command(&text) {
        match rest {
            Some(rest) => {
                new_session = true;
                text = rest;
            }
            None => {
                let mut session = open_session(&store, &key, true)?;
                if let Some(on) = args.memory_switch() {
                    session.entry = store.patch(&key, &json!({ "memoryEnabled": on }))?;
                }
                let message = format!(
                    "New session started. sessionId={}",
                    session.entry.session_id
                );
                let memory_enabled = args
                    .memory_switch()
                    .or(session.entry.memory_enabled)
                    .unwrap_or(false);
                let cx = AskContext {
                    request_id,
                    created_at,
                    memory_file: memory_file(memory_enabled),
                    session_key: key,
                    memory_enabled,
                };
                let result = AskResult::new(
                    &cx,
                    "system",
                    "gateway.new_session",
                    message,
                    session.entry.session_id,
                );
                print_result(&args, result)?;
                return Ok(ExitCode::SUCCESS);
            }
        }
    }

    pincer_turns::workspace::ensure_workspace(&workspace)
        .with_context(|| format!("cannot prepare the workspace {}", workspace.display()))?;
    let processes = ProcessRegistry::new();
    let tools = if args.tools_on() {
        app.prepare_mcp(&agent_id).await;
        app.tools(&agent_id, &workspace, &processes, &args.tool_allow)?
    } else {
        Vec::new()
    };

    let mut log = ToolLog::for_tools(&tools);
    let manual = manual_tools::parse(&text)?;
    let wants_summary = {
        let lower = text.to_lowercase();
        lower.contains("summar") || text.contains("总结")
    };
    let question = match manual {
        ManualInput::Plain(question) => Some(question),
        ManualInput::Tools { calls, question } => {
            let all_tools = app.tools(&agent_id, &workspace, &processes, &[])?;
            let results = manual_tools::run(&calls, &tools, &all_tools, &mut log).await;
            question.map(|q| format!("{q}\n\n{results}"))
        }
    };

    // A corrupt index is rebuilt from the transcripts here (and said so), not refused.
    let index_entry = {
        let (index, rebuilt) = store.index_or_rebuild()?;
        if let Some(report) = &rebuilt {
            crate::report::rebuilt(report);
        }
        index.get(&key).cloned()
    };
    let memory_enabled = args
        .memory_switch()
        .or(index_entry.as_ref().and_then(|e| e.memory_enabled))
        .unwrap_or(false);
    let cx = AskContext {
        request_id,
        created_at,
        session_key: key.clone(),
        memory_enabled,
        memory_file: memory_file(memory_enabled),
    };

    let Some(question) = question else {
        // Only tools ran: nothing for the model, nothing added to the session.
        let session = open_session(&store, &key, new_session)?;
        let result = log
            .results
            .iter()
            .map(|r| {
                r.result
                    .content
                    .clone()
                    .or_else(|| r.result.error.as_ref().map(|e| e.message.clone()))
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n");
        let failed = log.first_error().is_some();
        let result = AskResult {
            tool_error: log.first_error(),
            tool_calls: log.calls,
            tool_results: log.results,
            ..AskResult::new(&cx, "tool", "tool.manual", result, session.entry.session_id)
        };
        print_result(&args, result)?;
        return Ok(if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    };

    let auth = crate::credentials::for_run(app, args.profile.as_deref())?;
    let prepared = prepare_agent(
        app,
        AgentSetup {
            agent_id: &agent_id,
            session_key: &key,
            workspace: &workspace,
            entry: index_entry.as_ref(),
            cli_provider: args.provider.as_deref(),
            cli_model: args.model.as_deref(),
            tools,
            auth,
            llm: &crate::turn_setup::Llm::new(app)?,
            channel: "cli",
            thinking: None,
        },
    )?;
    let attempts = prepared.attempts;
    let mut config = prepared.config;
    config.max_tool_rounds = Some(args.tool_max_steps as usize);

    let input = if attachments.is_empty() {
        Message::user(question)
    } else {
        let media = media::save(&workspace, &attachments)?;
        crate::media_setup::user_message_async(app, &workspace, &question, &media, &config.model)
            .await
    };
    // Ctrl-C aborts the turn instead of killing the process: the partial reply is saved
    // and background processes are stopped, not orphaned.
    let abort = pincer_ai::CancellationToken::new();
    // Registered here, before the turn starts, so no early Ctrl-C slips past it.
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .context("cannot listen for Ctrl-C")?;
    let interrupted = {
        let abort = abort.clone();
        tokio::spawn(async move {
            if sigint.recv().await.is_some() {
                abort.cancel();
            }
        })
    };
    // With --debug the reply is printed whole after its source line, not streamed.
    let mut printer = (!args.json && !args.debug).then(StreamPrinter::new);
    let plan = TurnPlan {
        store,
        session_key: key.clone(),
        new_session,
        agent: config,
        input: vec![input],
        session_patch: args
            .memory_switch()
            .map(|on| json!({ "memoryEnabled": on })),
        retention: Some(app.retention()?),
        abort: Some(abort.clone()),
        rpc: None,
        memory: Some(crate::memory_setup::turn_memory(
            app, &agent_id, &workspace, true,
        )),
    };
    let outcome = run_turn(plan, |event: &AgentEvent| {
        log.event(event);
        if let Some(printer) = printer.as_mut() {
            printer.event(event);
        }
    })
    .await?;
    if let Some(printer) = printer.as_mut() {
        printer.finish();
    }
    interrupted.abort();
    processes.shutdown().await;
    crate::report::load_report(&outcome.load_report);
    if let Some(report) = &outcome.pruned {
        crate::report::pruned(report);
    }
    for error in &outcome.persist_errors {
        eprintln!("warning: could not save to the transcript: {error}");
    }

    if abort.is_cancelled() {
        eprintln!(
            "aborted: the partial reply is saved in session {}",
            outcome.session_key
        );
        return Ok(ExitCode::from(130));
    }
    if let Some(error) = outcome.error() {
        eprintln!("ERROR: {error}");
        return Ok(ExitCode::from(1));
    }
    let reply = outcome.reply.clone().unwrap_or_default();
    let answered = attempts.answered();
    if !attempts.list().is_empty()
        && let Some(answer) = &answered
    {
        let failed: Vec<String> = attempts
            .list()
            .iter()
            .map(|a| format!("{} ({})", a.model, a.kind))
            .collect();
        eprintln!(
            "note: answered by {} after {} failed",
            answer.model,
            failed.join(", ")
        );
    }
    let mut tool_error = log.first_error();
    if outcome.tool_limit_reached {
        let max = args.tool_max_steps;
        let message = format!("tool call loop exceeded max steps ({max})");
        if !args.json {
            eprintln!("warning: {message}; stopped before running more tools");
        }
        tool_error = Some(crate::ask_result::ToolErrorRecord {
            code: "execution_error",
            tool: log.calls.last().map(|c| c.name.clone()).unwrap_or_default(),
            message,
        });
    }
    // lainclaw: no source prefix unless asked for.
    let shown = |text: String, profile: Option<&str>| {
        if args.debug {
            let source =
                crate::gateway::run_settings::debug_source(&reply.provider, &reply.model, profile);
            format!("{source}\n{text}")
        } else {
            text
        }
    };
    if !args.json && args.debug {
        let profile_id = answered.as_ref().and_then(|a| a.profile_id.clone());
        println!("{}", shown(reply.text(), profile_id.as_deref()));
    }
    if args.json {
        let profile_id = answered.and_then(|a| a.profile_id);
        let (route, stage) = route_and_stage(&reply, profile_id.as_deref(), wants_summary);
        let shown_text = shown(reply.text(), profile_id.as_deref());
        let result = AskResult {
            provider: Some(reply.provider.clone()),
            model: Some(reply.model.clone()),
            profile_id,
            tool_calls: log.calls,
            tool_results: log.results,
            tool_error,
            session_context_updated: !outcome.added.is_empty(),
            memory_enabled: outcome.memory.enabled,
            memory_updated: outcome.memory.updated,
            memory_file: outcome
                .memory
                .file
                .as_ref()
                .map(|f| f.display().to_string()),
            ..AskResult::new(&cx, route, stage, shown_text, outcome.session_id)
        };
        print_result(&args, result)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_result(args: &AskArgs, result: AskResult) -> Result<()> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else if !result.result.is_empty() {
        println!("{}", result.result);
    }
    Ok(())
}

/// lainclaw's `route` / `stage`: for the stub `summary` when asked to summarise (总结 or
/// "summary"), else `echo`; for a real model the provider, with the profile (or `env`)
/// whose key answered.
fn route_and_stage(
    reply: &pincer_ai::AssistantMessage,
    profile: Option<&str>,
    wants_summary: bool,
) -> (String, String) {
    if reply.api == apis::STUB {
        let route = if wants_summary { "summary" } else { "echo" };
        return (route.into(), format!("adapter.stub.{route}"));
    }
    let provider = &reply.provider;
    (
        provider.clone(),
        format!("adapter.{provider}.{}", profile.unwrap_or("env")),
    )
}
