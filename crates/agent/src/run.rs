//! One run of the agent loop (pi's `runLoop`): inject pending messages, stream the reply,
//! run its tool calls, repeat while there are tool calls or steering messages; then take
//! follow-ups; end with `agent_end`. An error or abort ends the run after `turn_end`.

use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::join_all;
use pincer_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Message, StopReason, ThinkingLevel, Tool,
    ToolCall, ToolResultMessage, now_ms,
};
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;
use crate::compaction::{self, CompactionEnd, CompactionReason};
use crate::event::AgentEvent;
use crate::hooks::{AfterToolCall, ToolCallInfo};
use crate::tool::{AgentTool, ExecutionMode, ToolContext, ToolOutput};

pub(crate) async fn run(inner: &Arc<Inner>, prompts: Vec<Message>, cancel: CancellationToken) {
    let mut added: Vec<Message> = Vec::new();
    inner.emit(AgentEvent::AgentStart);
    inner.emit(AgentEvent::TurnStart);
    for message in prompts {
        announce(inner, &message);
        added.push(message);
    }
    // Steering typed while the run was starting is delivered at once.
    let mut pending = inner.core().steering.poll();
    let mut first_turn = true;
    let mut overflow_retried = false;
    let mut tool_rounds = 0usize;
    let max_tool_rounds = inner.core().config.max_tool_rounds;
    loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.is_empty() {
            if !first_turn {
                inner.emit(AgentEvent::TurnStart);
            }
            first_turn = false;
            for message in pending.drain(..) {
                announce(inner, &message);
                added.push(message);
            }
            let assistant = stream_reply(inner, &cancel).await;
            added.push(Message::Assistant(assistant.clone()));
            if matches!(
                assistant.stop_reason,
                StopReason::Error | StopReason::Aborted
            ) {
                let overflow = !overflow_retried
                    && auto_compact_reason(inner, &assistant) == Some(CompactionReason::Overflow);
                inner.emit(AgentEvent::TurnEnd {
                    message: Message::Assistant(assistant),
                    tool_results: vec![],
                });
                if overflow {
                    overflow_retried = true;
                    compaction::in_agent::drop_failed_reply(inner);
                    if auto_compact(inner, CompactionReason::Overflow, &cancel).await {
                        more_tool_calls = true; // retry the turn once
                        continue;
                    }
                }
                end_run(inner, added).await;
                return;
            }
            let has_calls = assistant.tool_calls().next().is_some();
            let over_limit = has_calls && max_tool_rounds.is_some_and(|max| tool_rounds >= max);
            let results = if has_calls {
                let refusal = over_limit.then(|| tool_limit_text(max_tool_rounds.unwrap_or(0)));
                run_tool_calls(inner, Arc::new(assistant.clone()), &cancel, refusal).await
            } else {
                Vec::new()
            };
            tool_rounds += usize::from(has_calls);
            more_tool_calls = !results.is_empty();
            added.extend(results.iter().cloned());
            let threshold = auto_compact_reason(inner, &assistant);
            inner.emit(AgentEvent::TurnEnd {
                message: Message::Assistant(assistant),
                tool_results: results,
            });
            if over_limit {
                // The cap ends the run: no further LLM call, queued messages stay queued.
                inner.core().tool_limit_reached = true;
                end_run(inner, added).await;
                return;
            }
            if threshold == Some(CompactionReason::Threshold) {
                auto_compact(inner, CompactionReason::Threshold, &cancel).await;
            }
            pending = inner.core().steering.poll();
        }
        let follow_ups = inner.core().follow_up.poll();
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    end_run(inner, added).await;
}

/// Why calls past the tool-round cap were not run (lainclaw's wording).
pub(crate) fn tool_limit_text(max: usize) -> String {
    format!("tool call loop exceeded max steps ({max})")
}

fn auto_compact_reason(inner: &Inner, reply: &AssistantMessage) -> Option<CompactionReason> {
    let settings = inner.core().config.compaction;
    compaction::in_agent::trigger(inner, reply, &settings)
}

/// Compact with `compaction_start` / `compaction_end` events; true when it succeeded.
async fn auto_compact(inner: &Inner, reason: CompactionReason, cancel: &CancellationToken) -> bool {
    let settings = inner.core().config.compaction;
    inner.emit(AgentEvent::CompactionStart { reason });
    let outcome = compaction::in_agent::compact_agent(inner, &settings, None, cancel).await;
    inner.emit(AgentEvent::CompactionEnd(CompactionEnd::new(
        reason, &outcome,
    )));
    outcome.is_ok()
}

/// `message_start` + `message_end` for a message that arrives whole.
fn announce(inner: &Inner, message: &Message) {
    inner.emit(AgentEvent::MessageStart {
        message: message.clone(),
    });
    inner.emit(AgentEvent::MessageEnd {
        message: message.clone(),
    });
}

async fn end_run(inner: &Arc<Inner>, added: Vec<Message>) {
    let hooks = inner.core().config.hooks.agent_end.clone();
    let added = Arc::new(added);
    inner.emit(AgentEvent::AgentEnd {
        messages: added.as_ref().clone(),
    });
    join_all(hooks.iter().map(|hook| hook(Arc::clone(&added)))).await;
}

/// Stream one assistant reply, emitting message events. Always returns a message: a
/// stream that ends without a terminal event becomes an error message.
async fn stream_reply(inner: &Arc<Inner>, cancel: &CancellationToken) -> AssistantMessage {
    let (model, system_prompt, messages, tools, thinking, stream_fn, mut options, hooks) = {
        let core = inner.core();
        let c = &core.config;
        (
            c.model.clone(),
            c.system_prompt.clone(),
            c.messages.clone(),
            c.tools
                .iter()
                .map(|t| to_llm_tool(t.as_ref()))
                .collect::<Vec<Tool>>(),
            c.thinking_level,
            Arc::clone(&c.stream_fn),
            c.stream_options.clone(),
            c.hooks.clone(),
        )
    };
    let messages = match &hooks.transform_context {
        Some(transform) => transform(messages, cancel.clone()).await,
        None => messages,
    };
    let messages = match &hooks.convert_to_llm {
        Some(convert) => convert(&messages),
        None => messages,
    };
    if let Some(get_key) = &hooks.get_api_key
        && let Some(key) = get_key(model.provider.clone()).await
    {
        options.api_key = Some(key);
    }
    options.cancel = Some(cancel.clone());
    options.reasoning = (thinking != ThinkingLevel::Off).then_some(thinking);
    let context = Context {
        system_prompt: (!system_prompt.is_empty()).then_some(system_prompt),
        messages,
        tools,
    };
    let mut stream = stream_fn(&model, &context, options);
    let mut started = false;
    let mut last = None;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start => {
                started = true;
                let template = AssistantMessage {
                    api: model.api.clone(),
                    provider: model.provider.clone(),
                    model: model.id.clone(),
                    timestamp: now_ms(),
                    ..AssistantMessage::default()
                };
                inner.emit(AgentEvent::MessageStart {
                    message: Message::Assistant(template),
                });
            }
            AssistantMessageEvent::Done { message, .. } => {
                last = Some(message);
                break;
            }
            AssistantMessageEvent::Error { error, .. } => {
                last = Some(error);
                break;
            }
            other => {
                if started {
                    inner.emit(AgentEvent::MessageUpdate {
                        assistant_message_event: other,
                    });
                }
            }
        }
    }
    let message = last.unwrap_or_else(|| {
        let mut m = inner
            .core()
            .partial
            .as_ref()
            .map(|p| p.message().clone())
            .unwrap_or_default();
        m.stop_reason = if cancel.is_cancelled() {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        m.error_message = Some("the reply stream ended without a final event".into());
        m
    });
    if !started {
        inner.emit(AgentEvent::MessageStart {
            message: Message::Assistant(message.clone()),
        });
    }
    inner.emit(AgentEvent::MessageEnd {
        message: Message::Assistant(message.clone()),
    });
    message
}

fn to_llm_tool(tool: &dyn AgentTool) -> Tool {
    Tool {
        name: wire_name(tool.name()),
        description: tool.description().to_owned(),
        parameters: tool.parameters().clone(),
    }
}

/// The name a tool is offered under. Provider APIs accept only `[A-Za-z0-9_-]` in tool
/// names, while lainclaw's basics are dotted (`time.now`); other characters become `_`
/// and calls are matched back by either form.
pub fn wire_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn tool_named(tools: &[Arc<dyn AgentTool>], name: &str) -> Option<Arc<dyn AgentTool>> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .or_else(|| tools.iter().find(|t| wire_name(t.name()) == name))
        .cloned()
}

/// A tool call ready to run, or already finished (unknown tool, blocked, aborted).
enum Prepared {
    Ready {
        tool: Arc<dyn AgentTool>,
        info: ToolCallInfo,
    },
    Done {
        call: ToolCall,
        output: ToolOutput,
    },
}

/// The finished outcome of one call.
struct Finished {
    call: ToolCall,
    output: ToolOutput,
    is_error: bool,
}

/// Run the reply's tool calls and return their result messages, in call order.
async fn run_tool_calls(
    inner: &Arc<Inner>,
    assistant: Arc<AssistantMessage>,
    cancel: &CancellationToken,
    refusal: Option<String>,
) -> Vec<Message> {
    let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
    let (tools, mode, hooks) = {
        let core = inner.core();
        (
            core.config.tools.clone(),
            core.config.tool_execution,
            core.config.hooks.clone(),
        )
    };
    let find = |name: &str| tool_named(&tools, name);
    let sequential = mode == ExecutionMode::Sequential
        || calls.iter().any(|c| {
            find(&c.name).is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });

    let mut finished: Vec<Finished> = Vec::with_capacity(calls.len());
    // Cut off by the token limit, arguments may be truncated; past the round cap, nothing
    // more may run. Either way every call still gets a result so the transcript stays valid.
    let refusal = refusal.or_else(|| {
        (assistant.stop_reason == StopReason::Length).then(|| {
            "the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.".to_owned()
        })
    });
    if let Some(reason) = refusal {
        for call in calls {
            start_event(inner, &call);
            let output = ToolOutput::text(format!(
                "Tool call \"{}\" was not executed: {reason}",
                call.name
            ));
            finished.push(end_event(inner, call, output, true));
        }
        return result_messages(inner, finished, &hooks);
    }

    let hooks_ref = &hooks;
    let execute = |prepared: Prepared| async move {
        match prepared {
            Prepared::Done { call, output } => end_event(inner, call, output, true),
            Prepared::Ready { tool, info } => {
                let outcome = execute_one(inner, tool, &info, cancel).await;
                let outcome = hooks_ref.run_after(&info, outcome).await;
                let call = ToolCall {
                    id: info.tool_call_id,
                    name: info.tool_name,
                    arguments: info.args,
                    thought_signature: None,
                };
                end_event(inner, call, outcome.result, outcome.is_error)
            }
        }
    };

    if sequential {
        for call in calls {
            start_event(inner, &call);
            let prepared = prepare(&find, &hooks, &assistant, call, cancel).await;
            finished.push(execute(prepared).await);
            if cancel.is_cancelled() {
                break;
            }
        }
    } else {
        let mut ready = Vec::with_capacity(calls.len());
        for call in calls {
            start_event(inner, &call);
            let prepared = prepare(&find, &hooks, &assistant, call, cancel).await;
            ready.push(execute(prepared));
            if cancel.is_cancelled() {
                break;
            }
        }
        // Calls run concurrently and end in any order; results keep the call order.
        finished = join_all(ready).await;
    }
    result_messages(inner, finished, &hooks)
}

async fn prepare(
    find: &impl Fn(&str) -> Option<Arc<dyn AgentTool>>,
    hooks: &crate::hooks::Hooks,
    assistant: &Arc<AssistantMessage>,
    call: ToolCall,
    cancel: &CancellationToken,
) -> Prepared {
    let Some(tool) = find(&call.name) else {
        let output = ToolOutput::text(format!("Tool {} not found", call.name));
        return Prepared::Done { call, output };
    };
    let info = ToolCallInfo {
        assistant: Arc::clone(assistant),
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    };
    match hooks.run_before(info.clone()).await {
        _ if cancel.is_cancelled() => Prepared::Done {
            call,
            output: ToolOutput::text("Operation aborted"),
        },
        Err(reason) => {
            let reason = if reason.is_empty() {
                "Tool execution was blocked".to_owned()
            } else {
                reason
            };
            Prepared::Done {
                call,
                output: ToolOutput::text(reason),
            }
        }
        Ok(args) => Prepared::Ready {
            tool,
            info: ToolCallInfo { args, ..info },
        },
    }
}

async fn execute_one(
    inner: &Arc<Inner>,
    tool: Arc<dyn AgentTool>,
    info: &ToolCallInfo,
    cancel: &CancellationToken,
) -> AfterToolCall {
    let updates = {
        let inner = Arc::clone(inner);
        let (id, name, args) = (
            info.tool_call_id.clone(),
            info.tool_name.clone(),
            info.args.clone(),
        );
        Arc::new(move |partial: ToolOutput| {
            inner.emit(AgentEvent::ToolExecutionUpdate {
                tool_call_id: id.clone(),
                tool_name: name.clone(),
                args: args.clone(),
                partial_result: partial,
            });
        })
    };
    let session_key = inner.core().config.session_key.clone();
    let ctx = ToolContext::new(info.tool_call_id.clone(), cancel.child_token())
        .with_updates(updates)
        .with_session_key(session_key);
    match tool.execute(info.args.clone(), ctx).await {
        Ok(result) => AfterToolCall {
            result,
            is_error: false,
        },
        Err(e) => AfterToolCall {
            result: ToolOutput::text(e.to_string()),
            is_error: true,
        },
    }
}

fn start_event(inner: &Inner, call: &ToolCall) {
    inner.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    });
}

fn end_event(inner: &Inner, call: ToolCall, output: ToolOutput, is_error: bool) -> Finished {
    inner.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: output.clone(),
        is_error,
    });
    Finished {
        call,
        output,
        is_error,
    }
}

/// Tool result messages in call order, after the persist hooks, each announced.
fn result_messages(
    inner: &Inner,
    finished: Vec<Finished>,
    hooks: &crate::hooks::Hooks,
) -> Vec<Message> {
    finished
        .into_iter()
        .map(|f| {
            let mut result = ToolResultMessage {
                tool_call_id: f.call.id,
                tool_name: f.call.name,
                content: f.output.content,
                details: f.output.details,
                is_error: f.is_error,
                timestamp: now_ms(),
            };
            for hook in &hooks.tool_result_persist {
                hook(&mut result);
            }
            let message = Message::ToolResult(result);
            announce(inner, &message);
            message
        })
        .collect()
}
