//! `pincer sessions list|show|reset|export`: the agent's sessions as its index and
//! transcripts hold them. Export renders the current branch of a transcript as Markdown.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use pincer_ai::{ContentBlock, Message, UserContent};
use pincer_store::{EntryBody, Transcript};
use serde_json::json;

use crate::app::App;
use crate::cli::SessionsCommand;

pub fn run(app: &App, command: SessionsCommand) -> Result<ExitCode> {
    match command {
        SessionsCommand::List { agent, json } => {
            let agent_id = app.agent_id(agent.agent.as_deref())?;
            let (index, rebuilt) = app.sessions(&agent_id).index_or_rebuild()?;
            if let Some(report) = &rebuilt {
                crate::report::rebuilt(report);
            }
            let mut rows: Vec<_> = index.sessions.iter().collect();
            rows.sort_by(|a, b| b.1.updated_at.cmp(&a.1.updated_at).then(a.0.cmp(b.0)));
            if json {
                let list: Vec<_> = rows
                    .iter()
                    .map(|(key, entry)| {
                        let mut value = serde_json::to_value(entry).unwrap_or_default();
                        value["key"] = json!(key);
                        value
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if rows.is_empty() {
                println!(
                    "No sessions yet for agent {agent_id}. Start one with: pincer ask \"hello\""
                );
            } else {
                println!(
                    "{:<40} {:<36} {:<24} TOKENS",
                    "KEY", "SESSION ID", "UPDATED"
                );
                for (key, entry) in rows {
                    println!(
                        "{:<40} {:<36} {:<24} {}",
                        key,
                        entry.session_id,
                        pincer_base::time::iso_from_ms(entry.updated_at),
                        entry.total_tokens.map_or("-".into(), |t| t.to_string())
                    );
                }
            }
        }
        SessionsCommand::Show { key, agent } => {
            let agent_id = app.agent_id(agent.agent.as_deref())?;
            let key = app.session_key(&agent_id, &key)?;
            let session = app.sessions(&agent_id).resume(&key)?;
            crate::report::load_report(&session.report);
            let transcript = &session.transcript;
            let messages = transcript
                .entries()
                .iter()
                .filter(|e| matches!(e.body, EntryBody::Message(_)))
                .count();
            let out = json!({
                "key": key,
                "entry": session.entry,
                "transcript": transcript.path(),
                "entries": transcript.entries().len(),
                "messages": messages,
                "contextMessages": transcript.context().len(),
            });
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        SessionsCommand::Reset { key, agent } => {
            let agent_id = app.agent_id(agent.agent.as_deref())?;
            let key = app.session_key(&agent_id, &key)?;
            let store = app.sessions(&agent_id);
            let old = store.resume(&key)?.entry.session_id;
            let new = store.reset(&key)?;
            println!(
                "Session {key} reset: {old} -> {}. The old transcript is kept beside the new one in {}.",
                new.entry.session_id,
                store.root().display()
            );
        }
        SessionsCommand::Export { key, agent, output } => {
            let agent_id = app.agent_id(agent.agent.as_deref())?;
            let key = app.session_key(&agent_id, &key)?;
            let session = app.sessions(&agent_id).resume(&key)?;
            crate::report::load_report(&session.report);
            let markdown = export_markdown(&key, &session.transcript);
            match output {
                Some(path) => std::fs::write(&path, markdown)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => print!("{markdown}"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The current branch of a transcript as Markdown: one section per message, tool calls
/// and results included, compaction summaries shown where they happened.
pub fn export_markdown(key: &str, transcript: &Transcript) -> String {
    let header = transcript.header();
    let mut out = format!(
        "# Session {key}\n\n- Session id: {}\n- Started: {}\n- Transcript: {}\n",
        header.id,
        header.timestamp,
        transcript.path().display()
    );
    let leaf = transcript.leaf_id().unwrap_or_default().to_owned();
    for entry in transcript.branch(&leaf) {
        match &entry.body {
            EntryBody::Message(m) => write_message(&mut out, &m.message, &entry.timestamp),
            EntryBody::Compaction(c) => {
                let _ = write!(
                    out,
                    "\n## Compacted history ({})\n\n{}\n",
                    entry.timestamp, c.summary
                );
            }
            EntryBody::ModelChange(m) => {
                let _ = write!(out, "\n*Model: {}/{}*\n", m.provider, m.model_id);
            }
            _ => {}
        }
    }
    out
}

fn write_message(out: &mut String, message: &Message, timestamp: &str) {
    match message {
        Message::User(user) => {
            let text = match &user.content {
                UserContent::Text(t) => t.clone(),
                UserContent::Blocks(blocks) => blocks_text(blocks),
            };
            let _ = write!(out, "\n## User ({timestamp})\n\n{}\n", text.trim_end());
        }
        Message::Assistant(a) => {
            let _ = write!(
                out,
                "\n## Assistant ({}/{}, {timestamp})\n\n",
                a.provider, a.model
            );
            let text = a.text();
            if !text.is_empty() {
                let _ = writeln!(out, "{}", text.trim_end());
            }
            for call in a.tool_calls() {
                let _ = writeln!(out, "\n> Tool call `{}` `{}`", call.name, call.arguments);
            }
            if let Some(error) = &a.error_message {
                let _ = writeln!(out, "\n> Error: {error}");
            }
        }
        Message::ToolResult(r) => {
            let flag = if r.is_error { " (error)" } else { "" };
            let _ = write!(
                out,
                "\n### Tool result: {}{flag}\n\n```text\n{}\n```\n",
                r.tool_name,
                blocks_text(&r.content).trim_end()
            );
        }
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
