//! Exec approvals in the owner's chat: the request as a message in the chat the session's
//! conversation came from (the exact command, cwd, agent, session, id and how to answer),
//! and `/approve <id> <decision>` typed there. Only that chat may answer an approval (one
//! sent to another chat, or to none, is "unknown" here), and only a sender the channel
//! admits; in a group only the channel's owners (`/approve` changes the session, see
//! `Command::changes_session`, checked where the message arrives).

use std::sync::Arc;

use pincer_channel_port::Inbound;
use pincer_tools::exec::approval::parse_approve_args;

use super::super::Gateway;
use super::super::message_port::{send_text, target_chat};
use super::Pending;

/// Sends `pending` to its chat, if it has one (in the background: the request is already
/// pending and announced; a chat that cannot be reached is logged).
pub(super) fn send_request(gw: &Arc<Gateway>, pending: &Arc<Pending>) {
    let Some(target) = pending.chat.clone() else {
        return;
    };
    let (gw, text, id) = (Arc::clone(gw), request_text(pending), pending.id.clone());
    tokio::spawn(async move {
        if let Err(e) = send_text(&gw, &target, text).await {
            tracing::warn!(id = %id, error = %e, "cannot send an exec approval request to its chat");
        }
    });
}

/// The request as a chat message.
pub fn request_text(pending: &Pending) -> String {
    let r = &pending.request;
    let decisions: Vec<&str> = r.allowed.iter().map(|d| d.as_str()).collect();
    let minutes = r.timeout.as_secs().div_ceil(60);
    format!(
        "🔒 Exec approval required\n\
         ID: {id}\n\
         Command:\n{command}\n\
         CWD: {cwd}\n\
         Agent: {agent}\n\
         Session: {session}\n\
         Expires in: {minutes} min (then denied)\n\
         Reply with: /approve {id} {decisions}",
        id = pending.id,
        command = fenced(&r.command),
        cwd = r.cwd,
        agent = r.agent_id,
        session = r.session_key.as_deref().unwrap_or("-"),
        decisions = decisions.join("|"),
    )
}

/// `text` in a Markdown code fence longer than any run of backticks inside it, so the
/// exact command is shown as it is.
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}")
}

/// Answers `/approve <args>` typed in `message`'s chat.
pub async fn approve_from_chat(gw: &Arc<Gateway>, message: &Inbound, args: Option<&str>) -> String {
    let (id, decision) = match parse_approve_args(args.unwrap_or_default()) {
        Ok(parsed) => parsed,
        Err(usage) => return usage.to_owned(),
    };
    let from_this_chat = |pending: &Pending| {
        pending.chat.as_ref().is_some_and(|target| {
            target.channel.eq_ignore_ascii_case(&message.channel)
                && (target.account_id.is_none()
                    || target.account_id.as_deref() == message.account_id.as_deref())
                && target_chat(target).id == message.chat.id
        })
    };
    let by = format!("{}:{}", message.channel, message.sender.id);
    match gw.approvals.resolve(gw, &id, decision, &by, from_this_chat) {
        Ok(pending) => format!(
            "✅ Approval {} submitted for {}.",
            decision.as_str(),
            pending.id
        ),
        Err(e) => format!("❌ Failed to submit approval: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_fenced_longer_than_their_backticks() {
        assert_eq!(fenced("ls"), "```\nls\n```");
        assert_eq!(fenced("echo ```x````"), "`````\necho ```x````\n`````");
    }
}
