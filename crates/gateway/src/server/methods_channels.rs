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
    let Some(store) = ingress.pairing() else {
        return Err(MethodError::unavailable("pairing is not set up"));
    };
    match method {
        "pairing.list" => {
            let requests = store
                .list(opt_str_param(p, "channel")?, opt_str_param(p, "accountId")?)
                .map_err(refused)?;
            Ok(json!({ "requests": requests.iter().map(request_json).collect::<Vec<_>>() }))
        }
        "pairing.approve" => {
            let channel = str_param(p, "channel")?;
            let code = str_param(p, "code")?;
            let approved = store.approve(channel, code).map_err(refused)?;
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
            let entry = str_param(p, "entry")?;
            let revoked = store
                .revoke(channel, opt_str_param(p, "accountId")?, entry)
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
