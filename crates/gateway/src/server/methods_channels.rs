//! `channels.status` (each channel account's connection, as its supervisor sees it) and
//! `pairing.list` / `pairing.approve` / `pairing.revoke` (OpenClaw's pairing CLI over the
//! protocol): approving through the gateway also tells the sender, in the chat they wrote
//! from, that they may write again.

use serde_json::{Value, json};

use super::Gateway;
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
    if ingress.pairing().is_none() {
        return Err(MethodError::unavailable("pairing is not set up"));
    }
    // The store reads, locks and fsyncs files: its work runs on the blocking pool.
    let unavailable = || MethodError::unavailable("the pairing store's task failed");
    match method {
        "pairing.list" => {
            let channel = opt_str_param(p, "channel")?.map(str::to_owned);
            let account = opt_str_param(p, "accountId")?.map(str::to_owned);
            let requests = ingress
                .on_store(move |store| store.list(channel.as_deref(), account.as_deref()))
                .await
                .ok_or_else(unavailable)?
                .map_err(refused)?;
            Ok(json!({ "requests": requests.iter().map(request_json).collect::<Vec<_>>() }))
        }
        "pairing.approve" => {
            let channel = str_param(p, "channel")?;
            let code = str_param(p, "code")?.to_owned();
            let owned_channel = channel.to_owned();
            let approved = ingress
                .on_store(move |store| store.approve(&owned_channel, &code))
                .await
                .ok_or_else(unavailable)?
                .map_err(refused)?;
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
            let channel = str_param(p, "channel")?;
            let channel = channel.to_owned();
            let account = opt_str_param(p, "accountId")?.map(str::to_owned);
            let entry = str_param(p, "entry")?.to_owned();
            let revoked = ingress
                .on_store(move |store| store.revoke(&channel, account.as_deref(), &entry))
                .await
                .ok_or_else(unavailable)?
                .map_err(refused)?;
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
