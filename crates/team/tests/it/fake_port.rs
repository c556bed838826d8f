//! A [`SessionPort`] for the team tests: real session stores in a temporary directory, and
//! turns answered by a script (`reply`: the agent, session key and message in, the reply
//! out after `delay`, or never when it returns `None`), every turn and delivery recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_store::SessionStore;
use pincer_team::{
    AgentInfo, PortError, PortFuture, SessionPort, Team, TeamSettings, TeamTurn, TurnOutcome,
};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub type Script = dyn Fn(&TeamTurn) -> Option<String> + Send + Sync;

/// Each run's session key and outcome (`None` while it runs).
type Runs = HashMap<String, (String, watch::Sender<Option<TurnOutcome>>)>;

pub struct FakePort {
    pub dir: tempfile::TempDir,
    pub agents: Vec<AgentInfo>,
    script: Box<Script>,
    pub delay: Duration,
    runs: Mutex<Runs>,
    pub turns: Mutex<Vec<TeamTurn>>,
    pub delivered: Mutex<Vec<(String, String, String)>>,
}

impl FakePort {
    pub fn new(
        agents: &[&str],
        script: impl Fn(&TeamTurn) -> Option<String> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            dir: tempfile::tempdir().unwrap(),
            agents: agents
                .iter()
                .map(|id| AgentInfo {
                    id: (*id).to_owned(),
                    name: None,
                    model: Some(format!("mock/{id}")),
                })
                .collect(),
            script: Box::new(script),
            delay: Duration::from_millis(20),
            runs: Mutex::default(),
            turns: Mutex::default(),
            delivered: Mutex::default(),
        })
    }

    /// Creates session `key` of `agent` with one user message and one reply.
    pub fn seed(&self, agent: &str, key: &str, user: &str, reply: &str) {
        let store = self.store(agent);
        let mut session = store.get_or_create(key).unwrap();
        session
            .transcript
            .append_message(pincer_ai::Message::user(user))
            .unwrap();
        session
            .transcript
            .append_message(pincer_ai::Message::Assistant(pincer_ai::AssistantMessage {
                content: vec![pincer_ai::ContentBlock::text(reply)],
                ..Default::default()
            }))
            .unwrap();
    }

    pub fn turns(&self) -> Vec<TeamTurn> {
        self.turns.lock().unwrap().clone()
    }

    pub fn delivered(&self) -> Vec<(String, String, String)> {
        self.delivered.lock().unwrap().clone()
    }

    /// The runs of `key` still going.
    pub fn active_runs_of(&self, key: &str) -> Vec<String> {
        self.active_runs(key)
    }
}

impl SessionPort for FakePort {
    fn agents(&self) -> Vec<AgentInfo> {
        self.agents.clone()
    }

    fn default_agent_id(&self) -> String {
        "main".into()
    }

    fn main_session_key(&self, agent_id: &str) -> String {
        format!("agent:{agent_id}:main")
    }

    fn store(&self, agent_id: &str) -> SessionStore {
        SessionStore::new(self.dir.path().join(agent_id))
    }

    fn start_turn(&self, turn: TeamTurn) -> Result<(), PortError> {
        let (tx, _) = watch::channel(None);
        let reply = (self.script)(&turn);
        self.runs
            .lock()
            .unwrap()
            .insert(turn.run_id.clone(), (turn.session_key.clone(), tx.clone()));
        self.turns.lock().unwrap().push(turn);
        if let Some(text) = reply {
            let delay = self.delay;
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                tx.send_if_modified(|state| {
                    if state.is_some() {
                        return false;
                    }
                    *state = Some(TurnOutcome {
                        text,
                        error: None,
                        aborted: false,
                    });
                    true
                });
            });
        }
        Ok(())
    }

    fn wait(&self, run_id: &str, timeout: Duration) -> PortFuture<'_, Option<TurnOutcome>> {
        let rx = self
            .runs
            .lock()
            .unwrap()
            .get(run_id)
            .map(|(_, tx)| tx.subscribe());
        Box::pin(async move {
            let mut rx = rx?;
            let done = tokio::time::timeout(timeout, rx.wait_for(Option::is_some)).await;
            match done {
                Ok(Ok(state)) => state.clone(),
                _ => None,
            }
        })
    }

    fn resolve_model(&self, _agent_id: &str, reference: &str) -> Result<String, String> {
        if reference.starts_with("mock/") {
            Ok(reference.to_owned())
        } else {
            Err(format!(
                "Unknown model {reference:?}: name one as provider/model (configured: mock/main)."
            ))
        }
    }

    fn abort(&self, session_key: &str) -> usize {
        let runs = self.runs.lock().unwrap();
        let mut n = 0;
        for (key, tx) in runs.values() {
            if key == session_key && tx.borrow().is_none() {
                tx.send_replace(Some(TurnOutcome {
                    text: String::new(),
                    error: None,
                    aborted: true,
                }));
                n += 1;
            }
        }
        n
    }

    fn active_runs(&self, session_key: &str) -> Vec<String> {
        self.runs
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, (key, tx))| key == session_key && tx.borrow().is_none())
            .map(|(id, _)| id.clone())
            .collect()
    }

    fn deliver<'a>(
        &'a self,
        agent_id: &'a str,
        session_key: &'a str,
        text: &'a str,
    ) -> PortFuture<'a, Result<bool, String>> {
        self.delivered.lock().unwrap().push((
            agent_id.to_owned(),
            session_key.to_owned(),
            text.to_owned(),
        ));
        Box::pin(async { Ok(true) })
    }
}

/// A team bound to `port`.
pub fn team(settings: TeamSettings, port: &Arc<FakePort>) -> Arc<Team> {
    let team = Team::new(settings);
    assert!(team.slot().bind(Arc::clone(port) as Arc<dyn SessionPort>));
    team
}

/// Calls `name` of `agent`'s team tools in session `key`.
pub async fn call(
    team: &Arc<Team>,
    agent: &str,
    key: &str,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let tools: Vec<Arc<dyn AgentTool>> = team.tools(agent);
    let tool = tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let ctx =
        ToolContext::new("call-1", CancellationToken::new()).with_session_key(Some(Arc::from(key)));
    tool.execute(args, ctx).await
}

/// The JSON a tool answered.
pub fn json_of(output: &ToolOutput) -> Value {
    serde_json::from_str(&output.text_content()).unwrap()
}

/// Waits until `check` holds (for background work), at most 5 s.
pub async fn eventually(mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the condition never held");
}
