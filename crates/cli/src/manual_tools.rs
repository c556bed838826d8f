//! lainclaw's `tool:` prefix: `tool: <name> {json}` or `tool: [{"name": …, "args": …}, …]`
//! runs tools by hand before (or instead of) asking the model; text on the lines after
//! the first is the question, which the model then gets together with the results.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use pincer_agent::{AgentTool, ToolContext, ToolOutput};
use pincer_ai::CancellationToken;
use serde::Deserialize;
use serde_json::Value;

use crate::ask_result::{ToolCallRecord, ToolLog};

/// What the user typed.
#[derive(Debug, Clone, PartialEq)]
pub enum ManualInput {
    /// A plain question for the model.
    Plain(String),
    /// Tools to run, and maybe a question after them.
    Tools {
        calls: Vec<ManualCall>,
        question: Option<String>,
    },
}

/// One tool call typed by hand.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ManualCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Splits `tool:` input into calls and a question; anything else is a plain question.
pub fn parse(text: &str) -> Result<ManualInput> {
    let Some(rest) = text.trim_start().strip_prefix("tool:") else {
        return Ok(ManualInput::Plain(text.to_owned()));
    };
    let (spec, question) = match rest.split_once('\n') {
        Some((spec, question)) => (spec.trim(), Some(question.trim())),
        None => (rest.trim(), None),
    };
    let question = question.filter(|q| !q.is_empty()).map(str::to_owned);
    let usage = "write `tool: <name> {json args}` or `tool: [{\"name\": \"…\", \"args\": {…}}]`";
    let calls = if spec.starts_with('[') {
        serde_json::from_str::<Vec<ManualCall>>(spec).map_err(|e| {
            anyhow::anyhow!("[invalid_args] the tool list is not valid JSON ({e}); {usage}")
        })?
    } else {
        let (name, args) = match spec.split_once(char::is_whitespace) {
            Some((name, args)) => (name, args.trim()),
            None => (spec, ""),
        };
        if name.is_empty() {
            bail!("[invalid_args] no tool named after `tool:`; {usage}");
        }
        let args = if args.is_empty() {
            empty_object()
        } else {
            serde_json::from_str(args).map_err(|e| {
                anyhow::anyhow!(
                    "[invalid_args] arguments of {name} are not valid JSON ({e}); {usage}"
                )
            })?
        };
        vec![ManualCall {
            name: name.to_owned(),
            args,
        }]
    };
    if calls.is_empty() {
        bail!("[invalid_args] the tool list is empty; {usage}");
    }
    Ok(ManualInput::Tools { calls, question })
}

/// Runs the calls in order, logging each (source `cli`), and returns their results as text
/// for the model. A tool the agent has but `--tool-allow` excludes is refused as lainclaw
/// does: "tool not allowed: <name>".
pub async fn run(
    calls: &[ManualCall],
    allowed: &[Arc<dyn AgentTool>],
    all: &[Arc<dyn AgentTool>],
    log: &mut ToolLog,
) -> String {
    let mut summary = String::from("Results of tools the user ran:");
    for (i, call) in calls.iter().enumerate() {
        let record = ToolCallRecord {
            id: format!("cli-{}", i + 1),
            name: call.name.clone(),
            args: call.args.clone(),
            source: "cli",
        };
        log.calls.push(record.clone());
        let started = Instant::now();
        let (output, is_error) = match allowed.iter().find(|t| t.name() == call.name) {
            Some(tool) => {
                let ctx = ToolContext::new(record.id.clone(), CancellationToken::new());
                match tool.execute(call.args.clone(), ctx).await {
                    Ok(output) => (output, false),
                    Err(e) => (ToolOutput::text(e.to_string()), true),
                }
            }
            None if all.iter().any(|t| t.name() == call.name) => (
                ToolOutput::text(format!("tool not allowed: {}", call.name)),
                true,
            ),
            None => (
                ToolOutput::text(format!("Tool {} not found", call.name)),
                true,
            ),
        };
        let text = output.text_content();
        summary.push_str(&format!(
            "\n- {} {}: {}{}",
            call.name,
            call.args,
            if is_error { "error: " } else { "" },
            text
        ));
        log.push_result(
            record,
            &output,
            is_error,
            started.elapsed().as_millis() as u64,
        );
    }
    summary
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn forms() {
        assert_eq!(parse("hello").unwrap(), ManualInput::Plain("hello".into()));
        assert_eq!(
            parse("tool: time.now").unwrap(),
            ManualInput::Tools {
                calls: vec![ManualCall {
                    name: "time.now".into(),
                    args: json!({})
                }],
                question: None
            }
        );
        assert_eq!(
            parse("tool: tools.echo {\"text\": \"hi\"}\nwhat did it say?").unwrap(),
            ManualInput::Tools {
                calls: vec![ManualCall {
                    name: "tools.echo".into(),
                    args: json!({"text": "hi"})
                }],
                question: Some("what did it say?".into())
            }
        );
        let ManualInput::Tools { calls, .. } =
            parse(r#"tool: [{"name":"a","args":{"x":1}},{"name":"b"}]"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].args, json!({}));
    }

    #[test]
    fn malformed_input_is_a_clear_error() {
        let err = |s: &str| parse(s).unwrap_err().to_string();
        assert!(
            err("tool: echo {oops")
                .starts_with("[invalid_args] arguments of echo are not valid JSON")
        );
        assert!(
            err("tool: [{\"nam\": 1}]")
                .starts_with("[invalid_args] the tool list is not valid JSON")
        );
        assert!(err("tool: []").starts_with("[invalid_args] the tool list is empty"));
        assert!(err("tool:   ").starts_with("[invalid_args] no tool named"));
    }
}
