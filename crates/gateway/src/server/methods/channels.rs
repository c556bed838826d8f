//! `channels.status` (each channel account's connection, as its supervisor sees it) and
//! `pairing.list` / `pairing.approve` / `pairing.revoke` (OpenClaw's pairing CLI over the
//! protocol): approving through the gateway also tells the sender, in the chat they wrote
//! from, that they may write again.

use serde_json::{Value, json};

use super::Gateway;
use super::channel_ingress::ChannelIngress;
use super::frames::{MethodError, opt_str_param, str_param};
use crate::pairing::{PairingError, PairingStore, PendingRequest};

pub(super) async fn call(gw: &Gateway, method: &str, p: &Value) -> Result<Value, MethodError> {
    let ingress = gw.channels.get();
    if method == "channels.status" {
        return Ok(json!({
            "channels": ingress.map_or_else(|| json!([]), |i| i.status()),
        }));
    }
    let Some(ingress) = ingress else {
        return Err(MethodError::unavailable("no chat channel is configured"));
    };
    // Checked before the parameters: without pairing, every pairing call says so.
    if !ingress.has_pairing() {
        return Err(not_set_up());
    }
    match method {
        "pairing.list" => {
            let channel = opt_str_param(p, "channel")?.map(str::to_owned);
            let account = opt_str_param(p, "accountId")?.map(str::to_owned);
            let requests = on_store(ingress, move |store| {
                store.list(channel.as_deref(), account.as_deref())
            })
            .await?;
            Ok(json!({ "requests": requests.iter().map(request_json).collect::<Vec<_>>() }))
        }
        "pairing.approve" => {
            let channel = str_param(p, "channel")?;
            let code = str_param(p, "code")?.to_owned();
            let owned_channel = channel.to_owned();
            let approved =
                on_store(ingress, move |store| store.approve(&owned_channel, &code)).await?;
            let chat = approved
                .meta
                .as_ref()
                .and_then(|m| m.get("chatId"))
                .and_then(Value::as_str)
                .unwrap_or(&approved.sender_id)
                .to_owned();
            ingress
                .tell_approved(channel, approved.account_id.as_deref(), &chat)
                .await;
            Ok(json!({
                "channel": channel, "id": approved.sender_id,
                "accountId": approved.account_id, "notified": true,
            }))
        }
        "pairing.revoke" => {
            let channel = str_param(p, "channel")?.to_owned();
            let account = opt_str_param(p, "accountId")?.map(str::to_owned);
            let entry = str_param(p, "entry")?.to_owned();
            let revoked = on_store(ingress, move |store| {
                store.revoke(&channel, account.as_deref(), &entry)
            })
            .await?;
            Ok(json!({ "removed": revoked.removed, "remaining": revoked.remaining }))
        }
        other => Err(MethodError::invalid(format!("unknown method: {other}"))),
    }
}

/// A pending request as the protocol and `pincer pairing list --json` show it.
pub fn request_json(r: &PendingRequest) -> Value {
    json!({
        "channel": r.channel, "id": r.sender_id, "code": r.code, "accountId": r.account_id,
        "createdAtMs": r.created_at_ms, "lastSeenAtMs": r.last_seen_at_ms,
        "expiresAtMs": r.expires_at_ms, "meta": r.meta,
    })
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
    let requests = store.list(channel, account)?;
    Ok(json!({ "requests": requests.iter().map(request_json).collect::<Vec<_>>() }))
}
