//! `channels.status` (each channel account's connection, as its supervisor sees it) and
//! `pairing.list` / `pairing.approve` / `pairing.revoke` (OpenClaw's pairing CLI over the
//! protocol): approving through the gateway also tells the sender, in the chat they wrote
//! from, that they may write again.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::channel_ingress::ChannelIngress;
use super::super::frames::MethodError;
use super::blocking;
use super::params::{NonEmpty, parse};
use super::{Method, payload};
use crate::pairing::{PairingError, PairingStore, PendingRequest};

/// `pairing.list`: pending requests, of one channel (and account) if given.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PairingListParams {
    channel: Option<String>,
    account_id: Option<String>,
}

/// `pairing.approve`: the code a stranger got, on their channel.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PairingApproveParams {
    channel: NonEmpty,
    code: NonEmpty,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PairingApproved {
    channel: String,
    id: String,
    account_id: Option<String>,
    notified: bool,
}

/// `pairing.revoke`: an allowed sender (`entry`) no longer may write.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PairingRevokeParams {
    channel: NonEmpty,
    account_id: Option<String>,
    entry: NonEmpty,
}

#[derive(Serialize)]
struct PairingRevoked {
    removed: bool,
    remaining: usize,
}

/// Answers `method` (`channels.status` or a `pairing.*` one).
pub(super) async fn call(gw: &Gateway, method: Method, p: &Value) -> Result<Value, MethodError> {
    let ingress = gw.channels.get();
    if method == Method::ChannelsStatus {
        return payload(ChannelsStatus {
            channels: ingress.map_or_else(|| Value::Array(Vec::new()), |i| i.status()),
        });
    }
    let Some(ingress) = ingress else {
        return Err(MethodError::unavailable("no chat channel is configured"));
    };
    // Checked before the parameters: without pairing, every pairing call says so.
    if !ingress.has_pairing() {
        return Err(not_set_up());
    }
    match method {
        Method::PairingList => {
            let params: PairingListParams = parse(p)?;
            let requests = on_store(ingress, move |store| {
                blocking::pairing_list(
                    store,
                    params.channel.as_deref(),
                    params.account_id.as_deref(),
                )
            })
            .await?;
            payload(RequestList::of(&requests))
        }
        Method::PairingApprove => {
            let params: PairingApproveParams = parse(p)?;
            let channel = params.channel.0;
            let code = params.code.0;
            let owned_channel = channel.clone();
            let approved = on_store(ingress, move |store| {
                blocking::pairing_approve(store, &owned_channel, &code)
            })
            .await?;
            let chat = approved
                .meta
                .as_ref()
                .and_then(|m| m.get("chatId"))
                .and_then(Value::as_str)
                .unwrap_or(&approved.sender_id)
                .to_owned();
            ingress
                .tell_approved(&channel, approved.account_id.as_deref(), &chat)
                .await;
            payload(PairingApproved {
                channel,
                id: approved.sender_id,
                account_id: approved.account_id,
                notified: true,
            })
        }
        Method::PairingRevoke => {
            let params: PairingRevokeParams = parse(p)?;
            let revoked = on_store(ingress, move |store| {
                blocking::pairing_revoke(
                    store,
                    &params.channel,
                    params.account_id.as_deref(),
                    &params.entry,
                )
            })
            .await?;
            payload(PairingRevoked {
                removed: revoked.removed,
                remaining: revoked.remaining,
            })
        }
        other => Err(MethodError::invalid(format!(
            "unknown method: {}",
            other.name()
        ))),
    }
}

/// A pending request as the protocol and `pincer pairing list --json` show it (the
/// sender's id as `id`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView<'a> {
    channel: &'a str,
    id: &'a str,
    code: &'a str,
    account_id: Option<&'a str>,
    created_at_ms: i64,
    last_seen_at_ms: i64,
    expires_at_ms: i64,
    meta: Option<&'a Value>,
}

impl<'a> From<&'a PendingRequest> for RequestView<'a> {
    fn from(r: &'a PendingRequest) -> Self {
        Self {
            channel: &r.channel,
            id: &r.sender_id,
            code: &r.code,
            account_id: r.account_id.as_deref(),
            created_at_ms: r.created_at_ms,
            last_seen_at_ms: r.last_seen_at_ms,
            expires_at_ms: r.expires_at_ms,
            meta: r.meta.as_ref(),
        }
    }
}

/// `pairing.list`'s answer.
#[derive(Serialize)]
pub struct RequestList<'a> {
    requests: Vec<RequestView<'a>>,
}

impl<'a> RequestList<'a> {
    fn of(requests: &'a [PendingRequest]) -> Self {
        Self {
            requests: requests.iter().map(RequestView::from).collect(),
        }
    }
}

#[derive(Serialize)]
struct ChannelsStatus {
    channels: Value,
}

/// `work` on the pairing store (on the blocking pool: it reads, locks and fsyncs files), its
/// failures as the protocol's errors.
async fn on_store<T, F>(ingress: &ChannelIngress, work: F) -> Result<T, MethodError>
where
    T: Send + 'static,
    F: FnOnce(&PairingStore) -> Result<T, PairingError> + Send + 'static,
{
    if !ingress.has_pairing() {
        return Err(not_set_up());
    }
    ingress
        .on_store(work)
        .await
        .ok_or_else(|| MethodError::unavailable("the pairing store's task failed"))?
        .map_err(refused)
}

fn not_set_up() -> MethodError {
    MethodError::unavailable("pairing is not set up")
}

fn refused(e: PairingError) -> MethodError {
    match e {
        PairingError::UnknownCode { .. } | PairingError::InvalidChannel { .. } => {
            MethodError::invalid(e.to_string())
        }
        other => MethodError::unavailable(other.to_string()),
    }
}

/// For the CLI's use while the gateway is stopped.
pub fn list_json(
    store: &PairingStore,
    channel: Option<&str>,
    account: Option<&str>,
) -> Result<Value, PairingError> {
    let requests = blocking::pairing_list(store, channel, account)?;
    Ok(serde_json::to_value(RequestList::of(&requests)).unwrap_or(Value::Null))
}
