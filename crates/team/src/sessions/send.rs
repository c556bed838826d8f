//! `sessions_send`: a message from one session to another, run as a turn of the target
//! (its own lane, agent and workspace). With `timeoutSeconds > 0` the reply comes back as
//! the result; with 0 the call returns at once. Either way, once the target replied,
//! OpenClaw's agent-to-agent flow goes on in the background: up to
//! `session.agentToAgent.maxPingPongTurns` reply-back turns alternating between the two
//! sessions (either side stops it with `REPLY_SKIP`), then an announce step in which the
//! target may post to its own chat (`ANNOUNCE_SKIP` keeps it silent).

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Caller, Resolved, entry_of, expand_key, not_found, reach};
use crate::Team;
use crate::policy::{self, Action};
use crate::port::{SessionPort, TeamTurn, TurnOutcome};

/// How long the caller waits for the reply when the call does not say (OpenClaw's 30 s).
const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// The longest a caller may wait.
const MAX_TIMEOUT_SECS: u64 = 600;
/// How long each ping-pong or announce turn may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(300);
/// Stops the ping-pong.
pub const REPLY_SKIP: &str = "REPLY_SKIP";
/// Keeps the announce step silent.
pub const ANNOUNCE_SKIP: &str = "ANNOUNCE_SKIP";

/// The parameters of `sessions_send`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendArgs {
    /// The target session's key (from sessions_list); or give `label`, or `agentId` alone
    /// for that agent's main session.
    #[serde(default)]
    pub session_key: Option<String>,
    /// The target session's label (as sessions_list shows it).
    #[serde(default)]
    pub label: Option<String>,
    /// The target agent (with `label`: where to look; alone: its main session).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// What to say.
    pub message: String,
    /// Seconds to wait for the reply (default 30, at most 600); 0 sends and returns at once.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

struct SessionsSend {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for SessionsSend {
    type Args = SendArgs;
    const NAME: &'static str = "sessions_send";
    const LABEL: &'static str = "Session Send";
    const DESCRIPTION: &'static str = "Send a message to another session (by sessionKey, label, \
        or agentId for that agent's main session): it runs as a turn there, with that session's \
        agent and workspace, and its reply comes back to you (timeoutSeconds, default 30; 0 = \
        don't wait). Other agents are reachable only when agent-to-agent is enabled.";

    async fn run(&self, args: SendArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let message = args.message.trim();
        if message.is_empty() {
            return Err(ToolError::failed("message is empty: say what to send"));
        }
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let target = self.target(&port, &caller, &args).await?;
        if target.key == caller.key {
            return Err(ToolError::failed(
                "sessions_send cannot target the calling session: answer here instead",
            ));
        }
        let run_id = format!("a2a-{}", pincer_base::id::uuid_v4());
        let framed = format!(
            "[Agent-to-agent message from agent \"{}\" (session {})]\n{message}",
            caller.agent_id, caller.key
        );
        port.start_turn(TeamTurn {
            run_id: run_id.clone(),
            agent_id: target.agent_id.clone(),
            session_key: target.key.clone(),
            message: framed,
        })
        .map_err(|e| ToolError::failed(e.to_string()))?;
        let timeout = args
            .timeout_seconds
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .min(MAX_TIMEOUT_SECS);
        let flow = Flow {
            team: Arc::clone(&self.team),
            port: Arc::clone(&port),
            requester: (caller.agent_id.clone(), caller.key.clone()),
            target: (target.agent_id.clone(), target.key.clone()),
            message: message.to_owned(),
        };
        let delivery = json!({"status": "pending", "mode": "announce"});
        if timeout == 0 {
            tokio::spawn(flow.after(run_id.clone(), None));
            return Ok(crate::json::output(json!({
                "runId": run_id, "status": "accepted", "sessionKey": target.key,
                "delivery": delivery,
            })));
        }
        let waited = tokio::select! {
            waited = port.wait(&run_id, Duration::from_secs(timeout)) => waited,
            () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
        };
        let result = match waited {
            None => {
                tokio::spawn(flow.after(run_id.clone(), None));
                json!({
                    "runId": run_id, "status": "timeout", "sessionKey": target.key,
                    "error": format!("no reply within {timeout} s; the target is still working on it"),
                    "sentBeforeError": true, "delivery": delivery,
                })
            }
            Some(TurnOutcome {
                error: Some(error),
                text,
                ..
            }) if text.is_empty() => json!({
                "runId": run_id, "status": "error", "sessionKey": target.key, "error": error,
            }),
            Some(outcome) if outcome.aborted => json!({
                "runId": run_id, "status": "error", "sessionKey": target.key,
                "error": "the target's run was aborted",
            }),
            Some(outcome) => {
                tokio::spawn(flow.after(run_id.clone(), Some(outcome.text.clone())));
                json!({
                    "runId": run_id, "status": "ok", "sessionKey": target.key,
                    "reply": outcome.text, "delivery": delivery,
                })
            }
        };
        Ok(crate::json::output(result))
    }
}

impl SessionsSend {
    /// The session the call names, if the caller may send to it.
    async fn target(
        &self,
        port: &Arc<dyn SessionPort>,
        caller: &Caller,
        args: &SendArgs,
    ) -> Result<Resolved, ToolError> {
        let agent = args
            .agent_id
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty());
        if let Some(agent) = agent
            && !port.agents().iter().any(|a| a.id == agent)
        {
            return Err(ToolError::failed(format!(
                "unknown agent {agent:?}: agents_list shows the agents you can reach"
            )));
        }
        if let Some(key) = args
            .session_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            let key = expand_key(port.as_ref(), caller, key);
            let target = reach(&self.team, caller, Action::Send, &key)?;
            let is_main = key == port.main_session_key(&target.agent_id);
            if !is_main && entry_of(port, &target.agent_id, &key).await?.is_none() {
                return Err(not_found(&key));
            }
            return Ok(target);
        }
        let agent = agent.unwrap_or(&caller.agent_id).to_owned();
        if agent != caller.agent_id {
            policy::check_agents(
                &self.team.settings().agent_to_agent,
                Action::Send,
                &caller.agent_id,
                &agent,
            )
            .map_err(ToolError::failed)?;
        }
        let Some(label) = args
            .label
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        else {
            if agent == caller.agent_id {
                return Err(ToolError::failed(
                    "name the target: sessionKey, label, or agentId (another agent's main session)",
                ));
            }
            let key = port.main_session_key(&agent);
            return reach(&self.team, caller, Action::Send, &key);
        };
        let store = port.store(&agent);
        let wanted = label.to_owned();
        let found = store
            .run(move |store| {
                Ok(store
                    .list()?
                    .into_iter()
                    .filter(|(_, e)| e.label.as_deref() == Some(wanted.as_str()))
                    .max_by_key(|(_, e)| e.updated_at)
                    .map(|(key, _)| key))
            })
            .await
            .map_err(|e| ToolError::failed(format!("cannot read the sessions: {e}")))?;
        match found {
            Some(key) => reach(&self.team, caller, Action::Send, &key),
            None => Err(ToolError::failed(format!(
                "no session labelled {label:?}: sessions_list shows the sessions you can reach"
            ))),
        }
    }
}

/// What happens after the first reply: the bounded ping-pong and the announce step.
struct Flow {
    team: Arc<Team>,
    port: Arc<dyn SessionPort>,
    /// (agent, session key)
    requester: (String, String),
    target: (String, String),
    message: String,
}

impl Flow {
    /// Runs the flow once the target's reply (`first`, or the run's when it was not
    /// waited for) is there.
    async fn after(self, run_id: String, first: Option<String>) {
        let first = match first {
            Some(text) => text,
            None => match self.port.wait(&run_id, STEP_TIMEOUT).await {
                Some(outcome) if outcome.error.is_none() && !outcome.aborted => outcome.text,
                _ => return,
            },
        };
        if is_skip(&first) {
            return;
        }
        let max_turns = self.team.settings().max_ping_pong_turns;
        let mut latest = first.clone();
        for turn in 1..=max_turns {
            let (current, source, role) = if turn % 2 == 1 {
                (&self.requester, &self.target, "Agent 1 (requester)")
            } else {
                (&self.target, &self.requester, "Agent 2 (target)")
            };
            let prompt = format!(
                "[Agent-to-agent reply step {turn} of {max_turns}. You are {role}; this is the \
                 reply of session {} (agent \"{}\"). If you want to stop the ping-pong, reply \
                 exactly \"{REPLY_SKIP}\".]\n{latest}",
                source.1, source.0
            );
            match self.step(current, prompt).await {
                Some(reply) if !is_skip(&reply) => latest = reply,
                _ => break,
            }
        }
        let prompt = format!(
            "[Agent-to-agent announce step. Session {} (agent \"{}\") asked you: {}\nRound 1 \
             reply: {first}\nLatest reply: {latest}\nIf you want to remain silent, reply exactly \
             \"{ANNOUNCE_SKIP}\". Any other reply is posted to the chat this session talks to. After \
             this reply, the agent-to-agent conversation is over.]",
            self.requester.1, self.requester.0, self.message
        );
        if let Some(reply) = self.step(&self.target, prompt).await
            && !is_skip(&reply)
            && let Err(e) = self
                .port
                .deliver(&self.target.0, &self.target.1, &reply)
                .await
        {
            tracing::warn!(error = %e, "agent-to-agent announcement not delivered");
        }
    }

    /// One turn of `(agent, key)` with `message`; its reply, if it gave one in time.
    async fn step(&self, (agent, key): &(String, String), message: String) -> Option<String> {
        let run_id = format!("a2a-{}", pincer_base::id::uuid_v4());
        self.port
            .start_turn(TeamTurn {
                run_id: run_id.clone(),
                agent_id: agent.clone(),
                session_key: key.clone(),
                message,
            })
            .ok()?;
        let outcome = self.port.wait(&run_id, STEP_TIMEOUT).await?;
        (outcome.error.is_none() && !outcome.aborted).then_some(outcome.text)
    }
}

/// A reply that means "nothing to say": empty, a skip token, or `NO_REPLY`.
pub(crate) fn is_skip(reply: &str) -> bool {
    matches!(
        reply.trim(),
        "" | REPLY_SKIP | ANNOUNCE_SKIP | "NO_REPLY" | "HEARTBEAT_OK"
    )
}

/// The `sessions_send` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(SessionsSend { team, agent })
}
