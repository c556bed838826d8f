//! Chat channels into agent turns and their replies back out: every adapter runs under its
//! supervisor and hands what it receives to one ingress loop, which for each message
//! 1. drops a repeat (same channel, account, chat and message id: a platform's redelivery),
//! 2. applies the access rules — `dmPolicy` / `allowFrom` (with the pairing store's approved
//!    senders) for direct chats, `groupPolicy` / `groupAllowFrom` / `requireMention` for
//!    groups; a stranger under `pairing` gets a code instead of an agent, and the owner is
//!    told; under `allowlist` a stranger gets no answer at all,
//! 3. routes it (bindings, `/agent` prefix, default agent; session key per chat and thread),
//! 4. moves its files from the adapters' staging directory into the routed agent's
//!    workspace inbox (`inbox/<date>/…`, see [`pincer_turns::media_inbox`]) so `read` can open them,
//! 5. answers a chat command itself (`/new` resets the session; `/compact`, `/status`,
//!    `/usage`, `/model`, `/think`, `/verbose`, `/queue`, `/stop`, `/help`: see
//!    `methods/chat_commands.rs`) — in a group, the ones that
//!    change the shared session only for the channel's owners (`allowFrom`, approved by
//!    pairing, or a sender named in `groupAllowFrom`) — or else
//! 6. submits it as a run with the session's queue mode, in arrival order,
//!
//! and for each run it started, keeps "typing…" up until the run ends, then sends the reply
//! exactly once (a message steered or gathered into another run is answered by that run;
//! with block streaming, in blocks as it is written: see [`super::block_delivery`]):
//! protocol text (`HEARTBEAT_OK`) stripped, `MEDIA:` lines as attachments (only workspace
//! files and temp files this turn made; see [`pincer_turns::media_reply`]), rendered and split
//! by the adapter. A failed send is retried (rate limits honoured) before it is given up on.
//! The way out (delivery, sends with retries, `MEDIA:` files) is in `channel_ingress/delivery.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Gateway;
use super::block_delivery::BlockStreaming;
use super::methods::{answer_command, queue_mode_of};
use super::runs::{RunState, Submitted};
use super::runtime::TurnRequest;
use crate::pairing::{
    DmAccess, DmPolicy, GroupAccess, GroupPolicy, PairingRequestOutcome, PairingStore, dm_access,
    group_access, is_owner, owner_notice, pairing_full_reply, pairing_reply,
};
use pincer_channel_port::supervisor::{Backoff, supervise};
use pincer_channel_port::{ChannelAdapter, ChannelHealth, ChatRef, Inbound, InboundSink};
use pincer_turns::commands::{self, Command};
use pincer_turns::dedupe::{DEFAULT_DEDUPE_CAPACITY, DEFAULT_DEDUPE_TTL, Dedupe, DedupeKey};
use pincer_turns::media_inbox::discard_media;
use pincer_turns::router::ChatKind;

mod delivery;

/// How often "typing…" is sent again while a turn runs (platforms show it ~5 s).
pub(super) const TYPING_EVERY: Duration = Duration::from_secs(4);
/// Attempts at sending one reply.
const SEND_ATTEMPTS: u32 = 4;
/// Messages waiting for the ingress before adapters are held back.
const INBOUND_BUFFER: usize = 256;

/// Who may talk to the agent on one channel account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessSettings {
    pub dm_policy: DmPolicy,
    pub allow_from: Vec<String>,
    pub group_policy: GroupPolicy,
    pub group_allow_from: Vec<String>,
    /// Groups answer only when the bot is mentioned or replied to, unless `groups` says
    /// otherwise for a group (or for `"*"`).
    pub require_mention: bool,
    pub groups: HashMap<String, bool>,
}

impl Default for AccessSettings {
    fn default() -> Self {
        Self {
            dm_policy: DmPolicy::Pairing,
            allow_from: Vec::new(),
            group_policy: GroupPolicy::Allowlist,
            group_allow_from: Vec::new(),
            require_mention: true,
            groups: HashMap::new(),
        }
    }
}

impl AccessSettings {
    fn requires_mention(&self, group_id: &str) -> bool {
        self.groups
            .get(group_id)
            .or_else(|| self.groups.get("*"))
            .copied()
            .unwrap_or(self.require_mention)
    }
}

/// One adapter and its rules.
pub struct ChannelEndpoint {
    pub adapter: Arc<dyn ChannelAdapter>,
    pub access: AccessSettings,
    pub backoff: Backoff,
    /// Replies sent in blocks as they stream (`None`: whole, when the run ends).
    pub block_streaming: Option<BlockStreaming>,
}

/// A chat the owner hears about pairing requests in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyTarget {
    pub channel: String,
    pub account_id: Option<String>,
    pub to: String,
}

/// The channels of a server.
#[derive(Default)]
pub struct ChannelOptions {
    pub endpoints: Vec<ChannelEndpoint>,
    /// Where pairing requests and approved senders are kept (`credentials/`).
    pub pairing: Option<PairingStore>,
    pub pairing_notify: Option<NotifyTarget>,
    /// `Some(profile)`: each whole reply begins with a `[provider/model:profile]` line
    /// saying where it came from (lainclaw's debug switch, `gateway.debug`); `None`: the
    /// reply as written.
    pub debug_source: Option<String>,
}

pub(super) struct Endpoint {
    pub(super) adapter: Arc<dyn ChannelAdapter>,
    access: AccessSettings,
    health: ChannelHealth,
    block_streaming: Option<BlockStreaming>,
}

type EndpointKey = (String, Option<String>);

/// A chat a session heard from: channel, account, chat id.
pub type LastRoute = (String, Option<String>, String);

/// The running channels of a server.
pub struct ChannelIngress {
    pub(super) gw: Arc<Gateway>,
    endpoints: HashMap<EndpointKey, Endpoint>,
    pairing: Option<Arc<PairingStore>>,
    notify: Option<NotifyTarget>,
    debug_source: Option<String>,
    dedupe: Mutex<Dedupe>,
    /// Per session key, the channel account and chat it last heard from (heartbeat and
    /// cron deliveries to `last`).
    last: Mutex<HashMap<String, LastRoute>>,
}

/// Starts every endpoint's supervisor and the ingress loop; both stop with `stop`.
pub fn start(
    gw: &Arc<Gateway>,
    options: ChannelOptions,
    stop: &CancellationToken,
) -> Arc<ChannelIngress> {
    let (tx, rx) = mpsc::channel(INBOUND_BUFFER);
    let mut endpoints = HashMap::new();
    for endpoint in options.endpoints {
        let health = ChannelHealth::default();
        let adapter = Arc::clone(&endpoint.adapter);
        let key = (
            adapter.channel().to_owned(),
            adapter.account_id().map(str::to_owned),
        );
        tokio::spawn(supervise(
            Arc::clone(&adapter),
            InboundSink::new(tx.clone(), health.clone()),
            endpoint.backoff,
            stop.clone(),
        ));
        endpoints.insert(
            key,
            Endpoint {
                adapter,
                access: endpoint.access,
                health,
                block_streaming: endpoint.block_streaming,
            },
        );
    }
    let ingress = Arc::new(ChannelIngress {
        gw: Arc::clone(gw),
        endpoints,
        pairing: options.pairing.map(Arc::new),
        notify: options.pairing_notify,
        debug_source: options.debug_source,
        dedupe: Mutex::new(Dedupe::new(DEFAULT_DEDUPE_CAPACITY, DEFAULT_DEDUPE_TTL)),
        last: Mutex::default(),
    });
    tokio::spawn(Arc::clone(&ingress).run(rx, stop.clone()));
    ingress
}

impl ChannelIngress {
    /// `channels.status`: each endpoint's health.
    pub fn status(&self) -> Value {
        let mut rows: Vec<Value> = self
            .endpoints
            .iter()
            .map(|((channel, account), e)| {
                let mut row = e.health.to_json();
                row["channel"] = json!(channel);
                row["accountId"] = json!(account.as_deref().unwrap_or("default"));
                row
            })
            .collect();
        rows.sort_by_key(|r| (r["channel"].to_string(), r["accountId"].to_string()));
        Value::Array(rows)
    }

    /// Whether sender pairing is set up (there is a pairing store).
    pub(super) fn has_pairing(&self) -> bool {
        self.pairing.is_some()
    }

    /// `work` on the pairing store, on the blocking pool (its files are read, locked and
    /// fsynced); `None` without a store.
    pub(super) async fn on_store<T, F>(&self, work: F) -> Option<T>
    where
        T: Send + 'static,
        F: FnOnce(&PairingStore) -> T + Send + 'static,
    {
        let store = Arc::clone(self.pairing.as_ref()?);
        match tokio::task::spawn_blocking(move || work(&store)).await {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::error!(error = %e, "the pairing store's task failed");
                None
            }
        }
    }

    async fn run(self: Arc<Self>, mut rx: mpsc::Receiver<Inbound>, stop: CancellationToken) {
        loop {
            let message = tokio::select! {
                message = rx.recv() => match message {
                    Some(message) => message,
                    None => return,
                },
                () = stop.cancelled() => return,
            };
            // In arrival order up to the submit: a chat's messages queue as they came.
            self.take(message).await;
        }
    }

    fn endpoint(&self, channel: &str, account: Option<&str>) -> Option<&Endpoint> {
        self.endpoints
            .get(&(channel.to_owned(), account.map(str::to_owned)))
    }

    /// Takes one message; its staged files are deleted unless a turn took them (here, in
    /// one place, so no early return can leave them behind).
    async fn take(self: &Arc<Self>, message: Inbound) {
        let staged = message.media.clone();
        if self.take_inner(message).await == Media::Kept {
            discard_media(&staged).await;
        }
    }

    async fn take_inner(self: &Arc<Self>, message: Inbound) -> Media {
        // Files made from here on may be this turn's (`MEDIA:` from the temp directory).
        let started = SystemTime::now();
        let Some(endpoint) = self.endpoint(&message.channel, message.account_id.as_deref()) else {
            tracing::warn!(channel = %message.channel, "message from an unknown channel account dropped");
            return Media::Kept;
        };
        let key = DedupeKey::new(
            &message.channel,
            message.account_id.as_deref().unwrap_or("default"),
            &message.chat.id,
            &message.message_id,
        );
        let first = self
            .dedupe
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first_seen(&key, Instant::now());
        if !first {
            tracing::debug!(channel = %message.channel, message = %message.message_id, "repeated message ignored");
            return Media::Kept;
        }
        if !self.admitted(endpoint, &message).await {
            return Media::Kept;
        }
        if let Some(note) = &message.refused_media {
            self.spawn_send(&message, note.clone(), Some(message.message_id.clone()));
            if message.text.trim().is_empty() {
                return Media::Kept;
            }
        }
        let route = self
            .gw
            .runtime
            .route(&super::group_activation::route_input(&message));
        let heard_from: LastRoute = (
            message.channel.clone(),
            message.account_id.clone(),
            message.chat.id.clone(),
        );
        let new_route = self
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(route.session_key.clone(), heard_from.clone())
            .as_ref()
            != Some(&heard_from);
        let run_id = format!(
            "{}:{}:{}:{}",
            message.channel,
            message.account_id.as_deref().unwrap_or("default"),
            message.chat.id,
            message.message_id
        );
        let mut text = route.text.clone();
        let command = commands::parse(&text);
        if let Some(command) = &command
            && command.changes_session()
            && message.chat.kind != ChatKind::Direct
            && !self.sent_by_owner(endpoint, &message).await
        {
            let refusal = format!(
                "⚠️ Only the owner can use {} in a group (add your id to channels.{}.allowFrom).",
                text.split_whitespace().next().unwrap_or_default(),
                message.channel
            );
            self.spawn_send(&message, refusal, Some(message.message_id.clone()));
            return Media::Kept;
        }
        match command {
            Some(Command::NewSession { rest }) => {
                let key = route.session_key.clone();
                #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
                let reset = self
                    .gw
                    .runtime
                    .sessions(&route.agent_id)
                    .run(move |s| s.reset(&key))
                    .await;
                let note = match &reset {
                    Ok(session) => format!(
                        "New session started. sessionId={}",
                        session.entry.session_id
                    ),
                    Err(e) => format!("⚠️ Could not start a new session: {e}"),
                };
                self.gw.system_events.clear(&route.session_key);
                self.spawn_send(&message, note, Some(message.message_id.clone()));
                match rest {
                    Some(rest) if reset.is_ok() => text = rest,
                    _ => {
                        return Media::Kept;
                    }
                }
            }
            Some(Command::Approve { args }) => {
                let answer =
                    super::approvals::chat::approve_from_chat(&self.gw, &message, args.as_deref())
                        .await;
                self.spawn_send(&message, answer, Some(message.message_id.clone()));
                return Media::Kept;
            }
            Some(command @ Command::Compact { .. }) => {
                // A compaction waits for the session's lane and a model's summary: the
                // other chats' messages do not wait for it.
                let (this, message) = (Arc::clone(self), message.clone());
                let (agent_id, key) = (route.agent_id.clone(), route.session_key.clone());
                tokio::spawn(async move {
                    let answer =
                        answer_command(&this.gw, &agent_id, &key, &run_id, &text, command).await;
                    this.spawn_send(&message, answer, Some(message.message_id.clone()));
                });
                return Media::Kept;
            }
            Some(command) => {
                let (agent_id, key) = (&route.agent_id, &route.session_key);
                let answer = answer_command(&self.gw, agent_id, key, &run_id, &text, command).await;
                self.spawn_send(&message, answer, Some(message.message_id.clone()));
                return Media::Kept;
            }
            None => {}
        }
        let media = self.to_inbox(&route.agent_id, &message.media).await;
        // The files are named in the message (and images shown to the model) when the
        // turn is planned: see `pincer_turns::media_input`.
        let request = TurnRequest {
            media,
            ..TurnRequest::user(&route.agent_id, &route.session_key, text)
        };
        // The session's own mode (`/queue`), else the config's.
        let mode = queue_mode_of(
            &self.gw,
            &route.agent_id,
            &route.session_key,
            self.gw.runs.queue_settings().mode,
        )
        .await;
        // Subscribed before the run can start, so a streamed reply misses none of its text
        // (nor a verbose chat a tool call).
        let events = self.gw.runs.subscribe();
        let submitted = self
            .gw
            .runs
            .submit(Arc::clone(&self.gw.runtime), &run_id, request, mode);
        let leads = match &submitted {
            Submitted::Started { .. } | Submitted::Queued { .. } => true,
            // A collect batch started by this message is answered under its run id.
            Submitted::Collected { batch_run_id, .. } => *batch_run_id == run_id,
            Submitted::Steered { .. } | Submitted::InFlight | Submitted::Finished(_) => false,
        };
        if new_route {
            self.persist_route(&route.agent_id, &route.session_key, &run_id, heard_from);
        }
        // Otherwise answered by the run that took it, or already answered.
        if leads {
            let this = Arc::clone(self);
            let (agent_id, key) = (route.agent_id.clone(), route.session_key.clone());
            tokio::spawn(async move {
                this.deliver(&message, &run_id, &agent_id, &key, started, events)
                    .await;
            });
        }
        Media::HandedOver
    }

    /// Keeps the chat a session heard from in its index entry (`lastChannel`, `lastTo`,
    /// `lastAccountId`) once run `run_id` ends (a new session's entry is made by its turn),
    /// so it outlives a restart: the `message` tool's "chats that talked to the agent",
    /// `sessions.list`. Called only when the route changed (at most once per session and
    /// gateway run otherwise).
    fn persist_route(self: &Arc<Self>, agent_id: &str, key: &str, run_id: &str, route: LastRoute) {
        let this = Arc::clone(self);
        let (agent_id, key, run_id) = (agent_id.to_owned(), key.to_owned(), run_id.to_owned());
        tokio::spawn(async move {
            while let Some((RunState::Running, _)) = this.gw.runs.wait(&run_id, TYPING_EVERY).await
            {
            }
            let (channel, account, to) = route;
            let account = account.unwrap_or_else(|| "default".to_owned());
            let stats = pincer_store::TurnStats::default().routed(channel, to, account);
            #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
            let recorded = this
                .gw
                .runtime
                .sessions(&agent_id)
                .run(move |store| match store.entry(&key)? {
                    Some(_) => store.record_turn(&key, &stats).map(|_| ()),
                    None => Ok(()),
                })
                .await;
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "could not keep the chat a session heard from");
            }
        });
    }

    /// Sends `text` to `message`'s chat on its own task: a slow or rate-limited platform
    /// never holds up the messages behind this one.
    fn spawn_send(self: &Arc<Self>, message: &Inbound, text: String, reply_to: Option<String>) {
        let this = Arc::clone(self);
        let (channel, account, chat) = (
            message.channel.clone(),
            message.account_id.clone(),
            message.chat.clone(),
        );
        tokio::spawn(async move {
            if let Some(endpoint) = this.endpoint(&channel, account.as_deref()) {
                let _ = this
                    .send(endpoint, &chat, text, Vec::new(), reply_to.as_deref())
                    .await;
            }
        });
    }

    /// The access rules for `message`; replies to strangers as the policy says.
    async fn admitted(self: &Arc<Self>, endpoint: &Endpoint, message: &Inbound) -> bool {
        let access = &endpoint.access;
        let mut ids: Vec<&str> = vec![message.sender.id.as_str()];
        ids.extend(message.sender.aliases.iter().map(String::as_str));
        if message.chat.kind != ChatKind::Direct {
            // The group session's `groupActivation` wins over the channel's rule.
            let require_mention = super::group_activation::requires_mention(
                &self.gw,
                message,
                access.requires_mention(&message.chat.id),
            )
            .await;
            // A Discord guild (or Slack team) in groupAllowFrom admits all its channels.
            let containers = std::iter::once(message.chat.id.as_str())
                .chain(message.guild_id.as_deref())
                .chain(message.team_id.as_deref());
            return containers.into_iter().any(|group| {
                group_access(
                    access.group_policy,
                    &access.group_allow_from,
                    group,
                    &ids,
                    require_mention,
                    message.mentioned,
                ) == GroupAccess::Allow
            });
        }
        let stored = self.approved_senders(message).await;
        match dm_access(access.dm_policy, &access.allow_from, &stored, &ids) {
            DmAccess::Allow => true,
            DmAccess::Ignore => {
                tracing::debug!(channel = %message.channel, sender = %message.sender.id, "direct message not admitted (no answer)");
                false
            }
            DmAccess::Pair => {
                self.pair(message).await;
                false
            }
        }
    }

    /// The senders approved by pairing on the message's channel and account.
    async fn approved_senders(self: &Arc<Self>, message: &Inbound) -> Vec<String> {
        let (channel, account) = (message.channel.clone(), message.account_id.clone());
        #[expect(clippy::disallowed_methods, reason = "inside on_store")]
        self.on_store(move |store| store.allow_from(&channel, account.as_deref()))
            .await
            .unwrap_or(Ok(Vec::new()))
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "cannot read the approved senders");
                Vec::new()
            })
    }

    /// Whether the message's sender may command a group's session: one of the channel's
    /// owners (see [`is_owner`]) or a sender named in `groupAllowFrom`.
    async fn sent_by_owner(self: &Arc<Self>, endpoint: &Endpoint, message: &Inbound) -> bool {
        let mut ids: Vec<&str> = vec![message.sender.id.as_str()];
        ids.extend(message.sender.aliases.iter().map(String::as_str));
        if is_owner(
            &endpoint.access.allow_from,
            &endpoint.access.group_allow_from,
            &ids,
        ) {
            return true;
        }
        let stored = self.approved_senders(message).await;
        is_owner(&[], &stored, &ids)
    }

    /// A stranger under `pairing`: one code per sender, sent once when the request is
    /// made (as OpenClaw does); a repeat while it is pending gets no answer, so a stranger
    /// cannot make the bot spam a chat. The owner is told about new requests.
    async fn pair(self: &Arc<Self>, message: &Inbound) {
        let meta = json!({
            "chatId": message.chat.id, "name": message.sender.name,
            "aliases": message.sender.aliases,
        });
        let (channel, account, sender, stored_meta) = (
            message.channel.clone(),
            message.account_id.clone(),
            message.sender.id.clone(),
            meta.clone(),
        );
        #[expect(clippy::disallowed_methods, reason = "inside on_store")]
        let Some(outcome) = self
            .on_store(move |store| {
                store.request(&channel, account.as_deref(), &sender, Some(stored_meta))
            })
            .await
        else {
            return;
        };
        let reply = match outcome {
            Ok(PairingRequestOutcome::Created { code }) => {
                let this = Arc::clone(self);
                let (channel, sender) = (message.channel.clone(), message.sender.id.clone());
                let code_for_owner = code.clone();
                tokio::spawn(async move {
                    this.notify_owner(&channel, &sender, &meta, &code_for_owner)
                        .await;
                });
                pairing_reply(&message.channel, &code, &message.sender.id)
            }
            Ok(PairingRequestOutcome::Existing { .. }) => {
                tracing::debug!(channel = %message.channel, sender = %message.sender.id, "pairing request still pending; not answered again");
                return;
            }
            Ok(PairingRequestOutcome::Full) => pairing_full_reply(),
            Err(e) => {
                tracing::error!(error = %e, "cannot record a pairing request");
                return;
            }
        };
        self.spawn_send(message, reply, None);
    }

    async fn notify_owner(&self, channel: &str, sender: &str, meta: &Value, code: &str) {
        let Some(target) = &self.notify else { return };
        let Some(endpoint) = self.endpoint(&target.channel, target.account_id.as_deref()) else {
            tracing::warn!(channel = %target.channel, "pairingNotify names a channel that is not running");
            return;
        };
        let chat = ChatRef {
            kind: ChatKind::Direct,
            id: target.to.clone(),
            thread: None,
        };
        let text = owner_notice(channel, sender, Some(meta), code);
        let _ = self.send(endpoint, &chat, text, Vec::new(), None).await;
    }

    /// Tells an approved sender (in the chat they wrote from).
    pub async fn tell_approved(&self, channel: &str, account: Option<&str>, chat_id: &str) {
        let Some(endpoint) = self.endpoint(channel, account) else {
            return;
        };
        let chat = ChatRef {
            kind: ChatKind::Direct,
            id: chat_id.to_owned(),
            thread: None,
        };
        let text = crate::pairing::approved_notice();
        let _ = self.send(endpoint, &chat, text, Vec::new(), None).await;
    }

    /// The running channel accounts (channel, account), sorted.
    pub(super) fn accounts(&self) -> Vec<EndpointKey> {
        let mut keys: Vec<EndpointKey> = self.endpoints.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// The endpoint of `channel`'s `account`; without an account, the channel's default
    /// one, else its only one. With the account it resolved to.
    pub(super) fn endpoint_for(
        &self,
        channel: &str,
        account: Option<&str>,
    ) -> Option<(&Endpoint, Option<String>)> {
        if let Some(endpoint) = self.endpoint(channel, account) {
            return Some((endpoint, account.map(str::to_owned)));
        }
        if account.is_some() {
            return None;
        }
        let mut of_channel = self.endpoints.iter().filter(|((c, _), _)| c == channel);
        match (of_channel.next(), of_channel.next()) {
            (Some(((_, account), endpoint)), None) => Some((endpoint, account.clone())),
            _ => None,
        }
    }

    /// Whether a session of agent `agent_id` heard from chat `chat_id` of `channel` since
    /// the gateway started.
    pub(super) fn heard_from(&self, agent_id: &str, channel: &str, chat_id: &str) -> bool {
        let prefix = format!("agent:{agent_id}:");
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|(key, (c, _, chat))| key.starts_with(&prefix) && c == channel && chat == chat_id)
    }

    /// The access rules of `channel`'s `account`, if it runs here (for `status`).
    pub(super) fn access(&self, channel: &str, account: Option<&str>) -> Option<&AccessSettings> {
        self.endpoint(channel, account).map(|e| &e.access)
    }

    /// Where `session_key` last heard from a channel: (channel, account, chat id).
    pub fn last_route(&self, session_key: &str) -> Option<LastRoute> {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(session_key)
            .cloned()
    }
}

/// Where a taken message's staged files went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Media {
    /// Moved to the agent's inbox for its turn.
    HandedOver,
    /// Still staged: the message got no turn.
    Kept,
}
