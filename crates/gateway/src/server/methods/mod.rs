//! The protocol's methods, in OpenClaw's shapes (see `reference/openclaw-wire.md`): the
//! [`Method`] list (wire name, scope, params schema, all from the one table below), the
//! caller's scopes and the dispatch. Each family's module owns its methods' params structs
//! (read by [`params::parse`], which keeps OpenClaw's error messages), response structs and
//! handlers: `chat` (chat.*, agent, agent.wait, extension_ui_response), `sessions`,
//! `system` (health, status, presence, system-event, wake, tools, config), `cron`,
//! `channels` (channels.status, pairing.*), `catalog` (commands, models, chat.metadata),
//! `agents` (agents.list, agent.identity.get), `info` (usage, tools catalog, skills, system
//! info, logs, update status) and `absent` (OpenClaw's features Pincer lacks, answered
//! empty); `queue` is the `queueMode` side of `chat.send` and `agent`. Side effects need
//! `operator.write`, reads `operator.read`, and what hands out the machine (cron jobs,
//! pairing approvals, system events) `operator.admin`; each scope is OpenClaw's.

mod absent;
mod agents;
pub mod attachments;
mod blocking;
mod catalog;
pub mod channels;
mod chat;
mod chat_commands;
mod chat_commands_activation;
mod chat_commands_more;
mod chat_commands_subagents;
mod chat_media;
mod cron;
mod cron_history;
mod exec_approvals;
mod info;
mod params;
mod queue;
mod send;
mod session_events;
mod session_life;
mod sessions;
mod subagents;
mod system;
mod tools_invoke;
mod transcript_ids;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::Gateway;
use super::frames::{MethodError, Request, codes};
use super::runtime::on_blocking_pool;
use super::session_keys::known_agent_of_key;

pub(super) use catalog::model_selection;
pub(super) use chat::injected_message;
pub(super) use chat_commands::answer as answer_command;
pub(super) use chat_commands::known_model;
pub(super) use chat_commands_more::queue_mode_of;
pub use send::SentLog;
pub use session_events::{Change, Subscriptions, broadcast_change, message_observer, spawn_change};
pub(super) use system::{WakeMode, wake_main};

/// What a method needs the caller to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Read,
    Write,
    Admin,
    /// OpenClaw's scopes for approvals, questions and device pairing (which Pincer answers
    /// with empty lists).
    Approvals,
    Questions,
    Pairing,
}

impl Scope {
    /// The scope's wire name (`operator.read`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "operator.read",
            Self::Write => "operator.write",
            Self::Admin => "operator.admin",
            Self::Approvals => "operator.approvals",
            Self::Questions => "operator.questions",
            Self::Pairing => "operator.pairing",
        }
    }
}

/// No parameters.
#[derive(JsonSchema)]
pub(crate) struct NoParams {}

/// The method table: variant, wire name, scope, params type. Everything the protocol says
/// about its methods (`hello-ok`'s list, scopes, `pincer gateway protocol`) comes from here.
macro_rules! methods {
    ($( $variant:ident = $name:literal, $scope:ident, $params:ty; )*) => {
        /// A method this server answers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Method {
            $( $variant, )*
        }

        impl Method {
            /// Every method, in the order `hello-ok` lists them.
            pub const ALL: &'static [Method] = &[$( Method::$variant, )*];

            /// The wire name.
            pub fn name(self) -> &'static str {
                match self {
                    $( Method::$variant => $name, )*
                }
            }

            /// The scope a caller needs.
            pub fn scope(self) -> Scope {
                match self {
                    $( Method::$variant => Scope::$scope, )*
                }
            }

            /// The method of a wire name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $name => Some(Method::$variant), )*
                    _ => None,
                }
            }

            /// The JSON schema of the method's params.
            pub fn params_schema(self) -> Value {
                match self {
                    $( Method::$variant => schemars::schema_for!($params).to_value(), )*
                }
            }
        }

        /// The methods this server answers (the `features.methods` of `hello-ok`).
        pub const METHODS: &[&str] = &[$( $name, )*];
    };
}

methods! {
    Health = "health", Read, NoParams;
    Status = "status", Read, NoParams;
    Agent = "agent", Write, chat::AgentParams;
    AgentWait = "agent.wait", Read, chat::AgentWaitParams;
    ChatSend = "chat.send", Write, chat::ChatSendParams;
    ChatHistory = "chat.history", Read, chat::ChatHistoryParams;
    ChatAbort = "chat.abort", Write, chat::ChatAbortParams;
    ChatInject = "chat.inject", Write, chat::ChatInjectParams;
    ChatMediaGet = "chat.media.get", Read, chat_media::ChatMediaGetParams;
    SessionsList = "sessions.list", Read, sessions::SessionsListParams;
    SessionsPatch = "sessions.patch", Write, sessions::SessionsPatchParams;
    SessionsReset = "sessions.reset", Write, sessions::SessionKeyParams;
    SessionsDelete = "sessions.delete", Write, sessions::SessionKeyParams;
    SessionsCompact = "sessions.compact", Write, sessions::SessionsCompactParams;
    SessionsSubscribe = "sessions.subscribe", Read, session_life::SessionsSubscribeParams;
    SessionsUnsubscribe = "sessions.unsubscribe", Read, NoParams;
    SessionsMessagesSubscribe = "sessions.messages.subscribe", Read, session_life::SessionMessagesParams;
    SessionsMessagesUnsubscribe = "sessions.messages.unsubscribe", Read, session_life::SessionMessagesParams;
    SessionsDescribe = "sessions.describe", Read, session_life::SessionsDescribeParams;
    SessionsCreate = "sessions.create", Write, session_life::SessionsCreateParams;
    SessionsResolve = "sessions.resolve", Read, session_life::SessionsResolveParams;
    ModelsList = "models.list", Read, catalog::ModelsListParams;
    ToolsList = "tools.list", Read, system::ToolsListParams;
    // Secrets are masked, so reading it is a read (OpenClaw's scope, as its CLI connects).
    ConfigGet = "config.get", Read, NoParams;
    SystemEvent = "system-event", Admin, system::SystemEventParams;
    SystemPresence = "system-presence", Read, NoParams;
    Wake = "wake", Write, system::WakeParams;
    LastHeartbeat = "last-heartbeat", Read, NoParams;
    CronStatus = "cron.status", Read, NoParams;
    CronList = "cron.list", Read, cron::CronListParams;
    // A job runs agent turns and may POST to any URL: admins only.
    CronAdd = "cron.add", Admin, pincer_automation::cron::NewCronJob;
    CronUpdate = "cron.update", Admin, cron::CronUpdateParams;
    CronRemove = "cron.remove", Admin, cron::CronJobParams;
    CronRun = "cron.run", Admin, cron::CronRunParams;
    CronRuns = "cron.runs", Read, cron::CronRunsParams;
    ExtensionUiResponse = "extension_ui_response", Write, chat::ExtensionUiResponseParams;
    ChannelsStatus = "channels.status", Read, NoParams;
    PairingList = "pairing.list", Read, channels::PairingListParams;
    // Letting a stranger talk to the agent is an owner's decision.
    PairingApprove = "pairing.approve", Admin, channels::PairingApproveParams;
    PairingRevoke = "pairing.revoke", Admin, channels::PairingRevokeParams;
    CommandsList = "commands.list", Read, catalog::CommandsListParams;
    AgentsList = "agents.list", Read, NoParams;
    AgentIdentityGet = "agent.identity.get", Read, agents::AgentIdentityParams;
    ChatStartup = "chat.startup", Read, chat::ChatHistoryParams;
    ChatMetadata = "chat.metadata", Read, catalog::ModelsListParams;
    ModelsAuthStatus = "models.authStatus", Read, catalog::AuthStatusParams;
    UsageStatus = "usage.status", Read, NoParams;
    ToolsCatalog = "tools.catalog", Read, info::ToolsCatalogParams;
    ToolsEffective = "tools.effective", Read, info::ToolsCatalogParams;
    SkillsStatus = "skills.status", Read, info::SkillsStatusParams;
    SystemInfo = "system.info", Read, NoParams;
    LogsTail = "logs.tail", Read, info::LogsTailParams;
    UpdateStatus = "update.status", Admin, NoParams;
    // An operator's message to a chat (not gated by tools.message.allowTargets).
    Send = "send", Write, send::SendParams;
    // Runs an agent's tool in the gateway (OpenClaw's; Pincer's RPC workers reach the
    // session tools through it). A tool may run commands: admins only.
    ToolsInvoke = "tools.invoke", Admin, tools_invoke::ToolsInvokeParams;
    // Background sub-agents (Pincer's own: OpenClaw's clients have no such methods).
    SubagentsList = "subagents.list", Read, subagents::SubagentsListParams;
    SubagentsInfo = "subagents.info", Read, subagents::SubagentParams;
    SubagentsLog = "subagents.log", Read, subagents::SubagentParams;
    SubagentsSend = "subagents.send", Write, subagents::SubagentParams;
    SubagentsStop = "subagents.stop", Write, subagents::SubagentParams;
    // Commands waiting for the owner's approval (tools.exec.ask; methods/exec_approvals.rs).
    ExecApprovalList = "exec.approval.list", Approvals, NoParams;
    ExecApprovalGet = "exec.approval.get", Approvals, exec_approvals::ApprovalIdParams;
    ExecApprovalResolve = "exec.approval.resolve", Approvals, exec_approvals::ApprovalResolveParams;
    ExecApprovalWaitDecision = "exec.approval.waitDecision", Approvals, exec_approvals::ApprovalIdParams;
    // OpenClaw's features Pincer does not have: empty answers (methods/absent.rs).
    PluginsControlUiList = "plugins.controlUi.list", Read, NoParams;
    PluginSurfaceRefresh = "plugin.surface.refresh", Read, NoParams;
    PluginApprovalList = "plugin.approval.list", Approvals, NoParams;
    OpenclawApprovalList = "openclaw.approval.list", Approvals, NoParams;
    QuestionList = "question.list", Questions, NoParams;
    SessionsObserverVisibility = "sessions.observer.visibility", Read, NoParams;
    UsersPrefsGet = "users.prefs.get", Read, NoParams;
    ControlUiSessionPullRequestsSubscribe = "controlUi.sessionPullRequests.subscribe", Read, NoParams;
    BoardGet = "board.get", Read, NoParams;
    ProjectsList = "projects.list", Read, NoParams;
    SessionsViewersSet = "sessions.viewers.set", Read, NoParams;
    SessionsGithubOptions = "sessions.github.options", Read, NoParams;
    TalkCatalog = "talk.catalog", Read, NoParams;
    SessionMembersListEvidence = "session.members.listEvidence", Read, NoParams;
    SessionsGroupsList = "sessions.groups.list", Read, NoParams;
    SessionsGroupsDefaults = "sessions.groups.defaults", Write, NoParams;
    MentionsList = "mentions.list", Read, NoParams;
    ProgressCardGet = "progressCard.get", Read, NoParams;
    TaskSuggestionsList = "taskSuggestions.list", Read, NoParams;
    SessionsBranchesList = "sessions.branches.list", Read, NoParams;
    SessionDiscussionInfo = "session.discussion.info", Read, NoParams;
    SessionsCompanionState = "sessions.companion.state", Read, NoParams;
    TasksList = "tasks.list", Read, NoParams;
    SessionsCatalogList = "sessions.catalog.list", Read, NoParams;
    NodeList = "node.list", Read, NoParams;
    DevicePairList = "device.pair.list", Pairing, NoParams;
    EnvironmentsList = "environments.list", Read, NoParams;
    PluginsList = "plugins.list", Read, NoParams;
    PluginsCatalogBrowse = "plugins.catalog.browse", Read, NoParams;
    ArtifactsList = "artifacts.list", Read, NoParams;
    DiagnosticsLanes = "diagnostics.lanes", Read, NoParams;
    SessionsUsage = "sessions.usage", Read, NoParams;
    SkillsLibraryList = "skills.library.list", Read, NoParams;
    SkillsSearch = "skills.search", Read, NoParams;
}

/// The events this server sends.
pub const EVENTS: &[&str] = &[
    "connect.challenge",
    "agent",
    "chat",
    "presence",
    "tick",
    "shutdown",
    "health",
    "heartbeat",
    "cron",
    "extension_ui_request",
    session_events::SESSIONS_CHANGED,
    session_events::SESSION_MESSAGE,
    super::approvals::REQUESTED,
    super::approvals::RESOLVED,
];

/// The protocol this server speaks, as `pincer gateway protocol` prints it: the versions,
/// each method's name, scope and params schema, and the events.
#[derive(Debug, Serialize)]
pub struct Protocol {
    pub protocol: Versions,
    pub methods: Vec<MethodInfo>,
    pub events: &'static [&'static str],
}

/// The protocol versions spoken.
#[derive(Debug, Serialize)]
pub struct Versions {
    pub min: u64,
    pub max: u64,
}

/// One method as [`Protocol`] lists it.
#[derive(Debug, Serialize)]
pub struct MethodInfo {
    pub name: &'static str,
    pub scope: &'static str,
    pub params: Value,
}

/// The protocol this server speaks.
pub fn protocol() -> Protocol {
    Protocol {
        protocol: Versions {
            min: super::frames::MIN_PROTOCOL,
            max: super::frames::MAX_PROTOCOL,
        },
        methods: Method::ALL
            .iter()
            .map(|m| MethodInfo {
                name: m.name(),
                scope: m.scope().as_str(),
                params: m.params_schema(),
            })
            .collect(),
        events: EVENTS,
    }
}

/// What a connection is allowed to do.
#[derive(Debug, Clone)]
pub struct Caller {
    pub scopes: Vec<String>,
    /// The session events this connection asked for (shared by its requests).
    pub sessions: Arc<Subscriptions>,
}

impl Caller {
    /// Whether the caller has `scope` (see [`Caller::require`]).
    pub fn may(&self, scope: &str) -> bool {
        self.require(scope).is_ok()
    }

    /// `operator.admin` grants everything, `operator.write` also grants reading.
    fn require(&self, scope: &str) -> Result<(), MethodError> {
        let granted = |s: &String| {
            s == scope
                || s == "operator.admin"
                || (scope == "operator.read" && s == "operator.write")
        };
        if self.scopes.iter().any(granted) {
            return Ok(());
        }
        Err(MethodError {
            code: codes::FORBIDDEN,
            message: format!("missing scope: {scope}"),
            details: Some(json!({
                "code": "MISSING_SCOPE", "missingScope": scope, "requiredScopes": [scope],
            })),
        })
    }
}

/// The session a request names that its connection watches from then on (see
/// `session_events.rs`): the chat it reads, writes to or subscribes to. `agent` names its
/// session itself, the default one included (`chat::agent`).
fn watched_session(method: Method, p: &Value) -> Option<&str> {
    let field = match method {
        Method::ChatHistory | Method::ChatStartup | Method::ChatSend => "sessionKey",
        Method::SessionsMessagesSubscribe => "key",
        _ => return None,
    };
    p.get(field)
        .and_then(Value::as_str)
        .filter(|k| !k.trim().is_empty())
}

/// Sends frames on the caller's connection (for interim responses).
pub type FrameSender = Arc<dyn Fn(String) + Send + Sync>;

/// Answers one request (after `connect`): the method's scope first, then its params.
pub async fn call(
    gw: &Arc<Gateway>,
    caller: &Caller,
    req: &Request,
    send: &FrameSender,
) -> Result<Value, MethodError> {
    let Some(method) = Method::from_name(&req.method) else {
        return Err(
            MethodError::invalid(format!("unknown method: {}", req.method))
                .with_details(json!({ "methods": METHODS })),
        );
    };
    caller.require(method.scope().as_str())?;
    let p = &req.params;
    if let Some(key) = watched_session(method, p) {
        caller.sessions.watch(key);
    }
    match method {
        Method::Health => Ok(system::health(gw)),
        Method::SystemPresence => Ok(gw.state.presence()),
        Method::Status => payload(system::status(gw)),
        Method::SessionsList => payload(sessions::list(gw, p).await?),
        Method::ChatHistory => payload(chat::history(gw, p).await?),
        Method::ChatSend => payload(chat::send(gw, p).await?),
        Method::ChatAbort => payload(chat::abort(gw, p)?),
        Method::ChatInject => payload(chat::inject(gw, p).await?),
        Method::ChatMediaGet => payload(chat_media::get(gw, p).await?),
        Method::Agent => payload(chat::agent(gw, &req.id, p, send, &caller.sessions).await?),
        Method::SessionsPatch => payload(sessions::patch(gw, p).await?),
        Method::SessionsReset => payload(sessions::reset(gw, p).await?),
        Method::SessionsDelete => payload(sessions::delete(gw, p).await?),
        Method::SessionsCompact => payload(sessions::compact(gw, p).await?),
        Method::SessionsSubscribe => session_life::subscribe(gw, caller, p).await,
        Method::SessionsUnsubscribe => Ok(session_life::unsubscribe(caller)),
        Method::SessionsMessagesSubscribe => {
            payload(session_life::messages_subscribe(gw, caller, p, true)?)
        }
        Method::SessionsMessagesUnsubscribe => {
            payload(session_life::messages_subscribe(gw, caller, p, false)?)
        }
        Method::SessionsDescribe => payload(session_life::describe(gw, p).await?),
        Method::SessionsCreate => payload(session_life::create(gw, p, &caller.sessions).await?),
        Method::SessionsResolve => session_life::resolve(gw, p).await,
        Method::ModelsList => payload(catalog::models_list(gw, p)?),
        Method::ToolsList => payload(system::tools(gw, p).await?),
        Method::ConfigGet => payload(system::config(gw).await?),
        Method::SystemEvent => payload(system::system_event(gw, p)?),
        Method::Wake => payload(system::wake(gw, p)?),
        Method::CronStatus
        | Method::CronList
        | Method::CronAdd
        | Method::CronUpdate
        | Method::CronRemove
        | Method::CronRun
        | Method::CronRuns => cron::call(gw, method, p).await,
        Method::ChannelsStatus
        | Method::PairingList
        | Method::PairingApprove
        | Method::PairingRevoke => channels::call(gw, method, p).await,
        Method::ExtensionUiResponse => payload(chat::extension_ui_response(gw, p)?),
        Method::LastHeartbeat => Ok(gw.heartbeats.last_event().unwrap_or(Value::Null)),
        Method::AgentWait => payload(chat::wait(gw, p).await?),
        Method::CommandsList => payload(catalog::commands_list(p)?),
        Method::AgentsList => payload(agents::list(gw).await?),
        Method::AgentIdentityGet => payload(agents::identity(gw, p).await?),
        // The Control UI's first read of a chat: chat.history's answer.
        Method::ChatStartup => payload(chat::history(gw, p).await?),
        Method::ChatMetadata => payload(catalog::chat_metadata(gw, p)?),
        Method::ModelsAuthStatus => payload(catalog::auth_status(gw, p)?),
        Method::UsageStatus => payload(info::usage_status(gw).await?),
        Method::ToolsCatalog => payload(info::tools_catalog(gw, p).await?),
        Method::ToolsEffective => payload(info::tools_effective(gw, p).await?),
        Method::SkillsStatus => payload(info::skills_status(gw, p).await?),
        Method::SystemInfo => info::system_info(gw).await,
        Method::LogsTail => payload(info::logs_tail(gw, p).await?),
        Method::UpdateStatus => payload(info::update_status()),
        Method::Send => payload(send::send(gw, p).await?),
        Method::SubagentsList => subagents::list(gw, p),
        Method::ToolsInvoke => tools_invoke::invoke(gw, p).await,
        Method::SubagentsInfo
        | Method::SubagentsLog
        | Method::SubagentsSend
        | Method::SubagentsStop => subagents::call(gw, method, p).await,
        Method::ExecApprovalList => Ok(exec_approvals::list(gw)),
        Method::ExecApprovalGet => exec_approvals::get(gw, p),
        Method::ExecApprovalResolve => exec_approvals::resolve(gw, p),
        Method::ExecApprovalWaitDecision => exec_approvals::wait_decision(gw, p).await,
        Method::PluginsControlUiList
        | Method::PluginSurfaceRefresh
        | Method::PluginApprovalList
        | Method::OpenclawApprovalList
        | Method::QuestionList
        | Method::SessionsObserverVisibility
        | Method::UsersPrefsGet
        | Method::ControlUiSessionPullRequestsSubscribe
        | Method::BoardGet
        | Method::ProjectsList
        | Method::SessionsViewersSet
        | Method::SessionsGithubOptions
        | Method::TalkCatalog
        | Method::SessionMembersListEvidence
        | Method::SessionsGroupsList
        | Method::SessionsGroupsDefaults
        | Method::MentionsList
        | Method::ProgressCardGet
        | Method::TaskSuggestionsList
        | Method::SessionsBranchesList
        | Method::SessionDiscussionInfo
        | Method::SessionsCompanionState
        | Method::TasksList
        | Method::SessionsCatalogList
        | Method::NodeList
        | Method::DevicePairList
        | Method::EnvironmentsList
        | Method::PluginsList
        | Method::PluginsCatalogBrowse
        | Method::ArtifactsList
        | Method::DiagnosticsLanes
        | Method::SessionsUsage
        | Method::SkillsLibraryList
        | Method::SkillsSearch => absent::answer(method, p)
            .ok_or_else(|| MethodError::unavailable(format!("no answer for {}", method.name()))),
    }
}

/// A response struct as the frame's payload.
pub(super) fn payload<T: Serialize>(response: T) -> Result<Value, MethodError> {
    serde_json::to_value(response)
        .map_err(|e| MethodError::unavailable(format!("cannot encode the answer: {e}")))
}

/// The model facts `sessions.list` and `chat.history` show as `defaults`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Defaults {
    model_provider: String,
    model: String,
    context_tokens: u64,
}

impl Defaults {
    /// Read on the blocking pool: choosing the model reads the auth profiles.
    async fn of(gw: &Gateway, agent_id: &str) -> Result<Self, MethodError> {
        let agent_id = agent_id.to_owned();
        let d = on_blocking_pool(&gw.runtime, move |runtime| {
            runtime.model_defaults(&agent_id)
        })
        .await
        .map_err(|e| MethodError::unavailable(format!("the model defaults' task failed: {e}")))?;
        Ok(Self {
            model_provider: d.provider,
            model: d.model,
            context_tokens: d.context_tokens,
        })
    }

    /// The default model as a session names one (`provider/model`).
    fn reference(&self) -> String {
        if self.model_provider.is_empty() {
            self.model.clone()
        } else {
            format!("{}/{}", self.model_provider, self.model)
        }
    }
}

/// The agent a session key belongs to (`agent:<id>:…`), else the default agent.
pub(super) fn agent_of_key(gw: &Gateway, key: &str) -> String {
    known_agent_of_key(gw, key).unwrap_or_else(|| gw.runtime.default_agent_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_each_method_once_with_its_scope() {
        assert_eq!(Method::ALL.len(), METHODS.len());
        for (m, name) in Method::ALL.iter().zip(METHODS) {
            assert_eq!(m.name(), *name);
            assert_eq!(Method::from_name(name), Some(*m));
        }
        assert_eq!(Method::from_name("nope"), None);
        assert_eq!(Method::ChatSend.scope().as_str(), "operator.write");
        assert_eq!(Method::SystemEvent.scope(), Scope::Admin);
        assert_eq!(Method::CronRuns.scope(), Scope::Read);
        let admin: Vec<&str> = Method::ALL
            .iter()
            .filter(|m| m.scope() == Scope::Admin)
            .map(|m| m.name())
            .collect();
        assert_eq!(
            admin,
            [
                "system-event",
                "cron.add",
                "cron.update",
                "cron.remove",
                "cron.run",
                "pairing.approve",
                "pairing.revoke",
                "update.status",
                "tools.invoke"
            ]
        );
    }

    #[test]
    fn the_protocol_lists_params_schemas() {
        let p = serde_json::to_value(protocol()).unwrap_or_default();
        let send = &p["methods"][4];
        assert_eq!(send["name"], "chat.send");
        assert_eq!(send["scope"], "operator.write");
        let required = &send["params"]["required"];
        assert_eq!(
            required,
            &json!(["sessionKey", "message", "idempotencyKey"])
        );
        assert_eq!(p["events"][0], "connect.challenge");
    }
}
