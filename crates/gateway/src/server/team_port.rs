//! The gateway's side of [`pincer_team::SessionPort`]: the team tools' turns run through
//! this server's lanes and runs (followup: after whatever the session is doing), their
//! replies go to the chat a session last heard from, unless its send policy says `deny`.
//! Holds the server weakly: the server's runtime holds the tools that hold this port.

use std::sync::{Arc, Weak};
use std::time::Duration;

use pincer_store::SessionStore;
use pincer_team::{AgentInfo, PortError, PortFuture, SessionPort, TeamTurn, TurnOutcome};

use super::Gateway;
use super::queue::QueueMode;
use super::runs::{RunState, Submitted};
use super::runtime::TurnRequest;

/// The port, bound to a running server.
pub struct GatewaySessions {
    gw: Weak<Gateway>,
}

impl GatewaySessions {
    pub fn new(gw: &Arc<Gateway>) -> Self {
        Self {
            gw: Arc::downgrade(gw),
        }
    }

    fn gw(&self) -> Result<Arc<Gateway>, PortError> {
        let gw = self.gw.upgrade().ok_or(PortError::Stopped)?;
        if gw.shutdown.is_cancelled() {
            return Err(PortError::Stopped);
        }
        Ok(gw)
    }
}

impl SessionPort for GatewaySessions {
    fn agents(&self) -> Vec<AgentInfo> {
        let Ok(gw) = self.gw() else {
            return Vec::new();
        };
        let config = gw.runtime.config();
        let model =
            |id: &str| super::methods::model_selection(config, id).map(|m| m.primary().to_owned());
        let mut agents: Vec<AgentInfo> = config
            .agents
            .list
            .iter()
            .map(|a| AgentInfo {
                id: a.id.clone(),
                name: a.name.clone(),
                model: model(&a.id),
            })
            .collect();
        let default = gw.runtime.default_agent_id();
        if !agents.iter().any(|a| a.id == default) {
            agents.insert(
                0,
                AgentInfo {
                    model: model(&default),
                    id: default,
                    name: None,
                },
            );
        }
        agents
    }

    fn default_agent_id(&self) -> String {
        self.gw()
            .map(|gw| gw.runtime.default_agent_id())
            .unwrap_or_else(|_| "main".to_owned())
    }

    fn main_session_key(&self, agent_id: &str) -> String {
        self.gw()
            .map(|gw| gw.runtime.main_session_key(agent_id))
            .unwrap_or_else(|_| format!("agent:{agent_id}:main"))
    }

    fn store(&self, agent_id: &str) -> SessionStore {
        match self.gw() {
            Ok(gw) => gw.runtime.sessions(agent_id),
            // A store nothing is in: every read finds no session.
            Err(_) => SessionStore::new(std::env::temp_dir().join("pincer-gateway-stopped")),
        }
    }

    fn start_turn(&self, turn: TeamTurn) -> Result<(), PortError> {
        let gw = self.gw()?;
        if !gw.runtime.is_known_agent(&turn.agent_id) {
            return Err(PortError::Refused(format!(
                "unknown agent {:?}",
                turn.agent_id
            )));
        }
        let request = TurnRequest::user(&turn.agent_id, &turn.session_key, turn.message);
        match gw.runs.submit(
            Arc::clone(&gw.runtime),
            &turn.run_id,
            request,
            QueueMode::Followup,
        ) {
            Submitted::InFlight | Submitted::Finished(_) => Err(PortError::Refused(format!(
                "run id {} is taken",
                turn.run_id
            ))),
            _ => Ok(()),
        }
    }

    fn wait(&self, run_id: &str, timeout: Duration) -> PortFuture<'_, Option<TurnOutcome>> {
        let run_id = run_id.to_owned();
        Box::pin(async move {
            let gw = self.gw.upgrade()?;
            match gw.runs.wait(&run_id, timeout).await? {
                (RunState::Done(result), _) => Some(TurnOutcome {
                    text: result.text.clone(),
                    error: result.error.clone(),
                    aborted: result.aborted,
                }),
                (RunState::Running, _) => None,
            }
        })
    }

    fn resolve_model(&self, agent_id: &str, reference: &str) -> Result<String, String> {
        let gw = self.gw().map_err(|e| e.to_string())?;
        super::methods::known_model(&gw, agent_id, reference)
    }

    fn abort(&self, session_key: &str) -> usize {
        self.gw()
            .map(|gw| gw.runs.abort(session_key, None))
            .unwrap_or(0)
    }

    fn active_runs(&self, session_key: &str) -> Vec<String> {
        self.gw()
            .map(|gw| gw.runs.active_run_ids(session_key))
            .unwrap_or_default()
    }

    fn deliver<'a>(
        &'a self,
        agent_id: &'a str,
        session_key: &'a str,
        text: &'a str,
    ) -> PortFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let gw = self.gw().map_err(|e| e.to_string())?;
            let Some(channels) = gw.channels.get() else {
                return Ok(false);
            };
            let Some((channel, account, to)) = channels.last_route(session_key) else {
                return Ok(false);
            };
            if !super::send_policy::may_deliver(&gw, agent_id, session_key).await {
                return Ok(false);
            }
            channels
                .deliver_to(&channel, account.as_deref(), &to, agent_id, text)
                .await
                .map(|()| true)
        })
    }
}
