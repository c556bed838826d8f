//! `pincer tools list|info|invoke`: the agent's tools as lainclaw prints them
//! (`{name, description, inputSchema}`), and running one by hand with its execution log
//! (`{call, result}`) as the output; the exit code is 0 only when the tool succeeded.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use pincer_agent::{AgentTool, ToolContext, ToolOutput};
use pincer_ai::CancellationToken;
use pincer_tools::ProcessRegistry;
use serde_json::{Value, json};

use crate::app::App;
use crate::ask_result::{ToolCallRecord, ToolLog};
use crate::cli::{AgentArg, ToolsCommand};

fn describe(tool: &dyn AgentTool) -> Value {
    json!({
        "name": tool.name(),
        "description": tool.description(),
        "inputSchema": tool.parameters(),
    })
}

async fn agent_tools(
    app: &App,
    agent: &AgentArg,
    processes: &ProcessRegistry,
) -> Result<Vec<Arc<dyn AgentTool>>> {
    let agent_id = app.agent_id(agent.agent.as_deref())?;
    let workspace = app.workspace(&agent_id);
    pincer_turns::workspace::ensure_workspace(&workspace)?;
    // The agent's MCP servers are started, so their tools are listed (and runnable).
    app.prepare_mcp(&agent_id).await;
    app.tools(&agent_id, &workspace, processes, &[])
}

pub async fn run(app: &App, command: ToolsCommand) -> Result<ExitCode> {
    app.ensure_home()?;
    let processes = ProcessRegistry::new();
    let code = match command {
        ToolsCommand::List(agent) => {
            let tools = agent_tools(app, &agent, &processes).await?;
            let list: Vec<Value> = tools.iter().map(|t| describe(t.as_ref())).collect();
            println!("{}", serde_json::to_string_pretty(&list)?);
            ExitCode::SUCCESS
        }
        ToolsCommand::Info { name, agent } => {
            let tools = agent_tools(app, &agent, &processes).await?;
            match tools.iter().find(|t| t.name() == name) {
                Some(tool) => {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&describe(tool.as_ref()))?
                    );
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("Tool not found: {name}. `pincer tools list` shows the tools.");
                    ExitCode::from(1)
                }
            }
        }
        ToolsCommand::Invoke { name, args, agent } => {
            let tools = agent_tools(app, &agent, &processes).await?;
            let log = invoke(&tools, &name, &args).await;
            let ok = log.results.first().is_some_and(|r| r.result.ok);
            if let Some(record) = log.results.first() {
                println!("{}", serde_json::to_string_pretty(record)?);
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    };
    processes.shutdown().await;
    Ok(code)
}

/// Runs one tool; malformed JSON and unknown tools are logged as failed calls.
async fn invoke(tools: &[Arc<dyn AgentTool>], name: &str, args: &str) -> ToolLog {
    let mut log = ToolLog::default();
    let parsed: Result<Value, _> = serde_json::from_str(args);
    let record = ToolCallRecord {
        id: "cli-1".into(),
        name: name.to_owned(),
        args: parsed
            .as_ref()
            .cloned()
            .unwrap_or(Value::String(args.to_owned())),
        source: "cli",
    };
    let started = Instant::now();
    let (output, is_error) = match (parsed, tools.iter().find(|t| t.name() == name)) {
        (_, None) => (ToolOutput::text(format!("Tool {name} not found")), true),
        (Err(e), Some(_)) => (
            ToolOutput::text(format!(
                "invalid arguments for {name}: --args is not valid JSON: {e}"
            )),
            true,
        ),
        (Ok(args), Some(tool)) => {
            let ctx = ToolContext::new(record.id.clone(), CancellationToken::new());
            match tool.execute(args, ctx).await {
                Ok(output) => (output, false),
                Err(e) => (ToolOutput::text(e.to_string()), true),
            }
        }
    };
    log.push_result(
        record,
        &output,
        is_error,
        started.elapsed().as_millis() as u64,
    );
    log
}
