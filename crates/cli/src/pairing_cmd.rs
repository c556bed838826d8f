//! `pincer pairing list|approve|revoke`: OpenClaw's `openclaw pairing`, through the
//! gateway's `pairing.*` methods.
//!
//! Through the gateway, an approval also tells the sender, in the chat they wrote from, that
//! they may write now. While the gateway is not running (or runs without any chat channel),
//! the commands work on `$PINCER_HOME/credentials` directly with the same store the gateway
//! uses: its files are locked per change, so nothing is lost either way; the approved sender
//! is then told nothing and simply gets in when they write again. A gateway that is there
//! but refuses us (wrong token, …) is an error, never a reason to write behind its back.
//!
//! Both ways give the same answers: the local calls build the JSON the gateway's methods
//! return, and everything is shown from that.

use std::process::ExitCode;

use anyhow::{Result, bail};
use pincer_gateway::pairing::PairingStore;
use pincer_gateway::server::methods::channels::list_json;
use serde_json::{Value, json};

use crate::app::App;
use crate::channel_setup::pairing_store;
use crate::cli::PairingCommand;
use crate::gateway::client::{CallError, Endpoint, GatewayClient, NotRunning};

pub async fn run(app: &App, command: PairingCommand) -> Result<ExitCode> {
    let mut backend = Backend::open(app).await?;
    let result = dispatch(app, &mut backend, command).await;
    backend.close().await;
    result
}

async fn dispatch(app: &App, backend: &mut Backend, command: PairingCommand) -> Result<ExitCode> {
    match command {
        PairingCommand::List {
            channel,
            channel_flag,
            account,
            json,
        } => {
            let channel = channel.or(channel_flag);
            list(backend, channel.as_deref(), account.as_deref(), json).await
        }
        PairingCommand::Approve {
            channel,
            code,
            channel_flag,
            account,
        } => {
            let channel = resolve_channel(app, channel.or(channel_flag), "approve", "<CODE>")?;
            approve(backend, &channel, &code, account.as_deref()).await
        }
        PairingCommand::Revoke {
            channel,
            entry,
            channel_flag,
            account,
        } => {
            let channel = resolve_channel(app, channel.or(channel_flag), "revoke", "<ENTRY>")?;
            revoke(backend, &channel, &entry, account.as_deref()).await
        }
    }
}

/// The channel given, else the only configured one.
fn resolve_channel(
    app: &App,
    given: Option<String>,
    command: &str,
    argument: &str,
) -> Result<String> {
    if let Some(channel) = given {
        return Ok(channel);
    }
    let configured = app.config.channels.configured();
    match configured.as_slice() {
        [only] => Ok((*only).to_owned()),
        [] => bail!(
            "no chat channel is configured, so name the channel: `pincer pairing {command} \
             telegram {argument}`"
        ),
        several => bail!(
            "several chat channels are configured ({}): name the channel, e.g. `pincer \
             pairing {command} {} {argument}`",
            several.join(", "),
            several[0]
        ),
    }
}

async fn list(
    backend: &mut Backend,
    channel: Option<&str>,
    account: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    let answer = backend
        .call("pairing.list", list_params(channel, account))
        .await?;
    let requests = answer
        .get("requests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if json {
        let out = json!({ "channel": channel, "requests": requests });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if requests.is_empty() {
        let on = channel.map(|c| format!(" {c}")).unwrap_or_default();
        let of = account
            .map(|a| format!(" for account {a}"))
            .unwrap_or_default();
        println!("No pending{on} pairing requests{of}.");
    } else {
        for request in &requests {
            println!("{}", request_line(request));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list_params(channel: Option<&str>, account: Option<&str>) -> Value {
    let mut params = json!({});
    if let Some(channel) = channel {
        params["channel"] = json!(channel);
    }
    if let Some(account) = account {
        params["accountId"] = json!(account);
    }
    params
}

/// `- telegram id=123 code=ABCD2345 requested=2026-11-22 13:05 account=work name=Ada`.
fn request_line(request: &Value) -> String {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let mut line = format!(
        "- {} id={} code={} requested={}",
        text(&request["channel"]).unwrap_or_default(),
        text(&request["id"]).unwrap_or_default(),
        text(&request["code"]).unwrap_or_default(),
        request["createdAtMs"]
            .as_i64()
            .map_or_else(|| "?".to_owned(), local_minute)
    );
    if let Some(account) = text(&request["accountId"]) {
        line.push_str(&format!(" account={account}"));
    }
    if let Some(name) = text(&request["meta"]["name"]).filter(|n| !n.trim().is_empty()) {
        line.push_str(&format!(" name={}", name.trim()));
    }
    line
}

/// `2026-11-22 13:05` in this machine's zone; the raw number if out of range.
fn local_minute(ms: i64) -> String {
    crate::cron::local_time_as(ms, "%Y-%m-%d %H:%M")
}

async fn approve(
    backend: &mut Backend,
    channel: &str,
    code: &str,
    account: Option<&str>,
) -> Result<ExitCode> {
    if let Some(account) = account {
        // The store approves by code alone; `--account` only approves a request of that
        // account (OpenClaw's `approve --account`). Codes are unique within a channel, so
        // the request found here is the one approved below (unless it goes in between,
        // and then the approval fails).
        let pending = backend
            .call("pairing.list", list_params(Some(channel), Some(account)))
            .await?;
        let wanted = code.trim().to_ascii_uppercase();
        let found = pending["requests"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| {
                r["code"]
                    .as_str()
                    .is_some_and(|c| c.trim().eq_ignore_ascii_case(&wanted))
            });
        if !found {
            bail!(
                "no pending pairing request on {channel} for account {account} with code {wanted}"
            );
        }
    }
    let answer = backend
        .call(
            "pairing.approve",
            json!({ "channel": channel, "code": code }),
        )
        .await?;
    let sender = answer["id"].as_str().unwrap_or("the sender");
    println!("Approved {sender} on {channel}.");
    if answer["notified"] != true {
        println!(
            "{}: {sender} is approved, but will be told only when they write again.",
            backend.why_not_told()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn revoke(
    backend: &mut Backend,
    channel: &str,
    entry: &str,
    account: Option<&str>,
) -> Result<ExitCode> {
    let mut params = json!({ "channel": channel, "entry": entry });
    if let Some(account) = account {
        params["accountId"] = json!(account);
    }
    let answer = backend.call("pairing.revoke", params).await?;
    let entry = entry.trim();
    let of = account
        .map(|a| format!(" (account {a})"))
        .unwrap_or_default();
    if answer["removed"] == true {
        println!("Revoked {entry} on {channel}{of}.");
    } else {
        println!("{entry} was not in the allow-from list of {channel}{of}.");
    }
    let remaining = answer["remaining"].as_u64().unwrap_or(0);
    println!("Current allow-from entries: {remaining}");
    Ok(ExitCode::SUCCESS)
}

/// Where the pairing state is changed: through the gateway, or on the files.
struct Backend {
    /// The running gateway, while it has pairing.
    gateway: Option<Box<GatewayClient>>,
    /// The files of this home, for when there is no gateway to ask.
    store: PairingStore,
    /// Whether a gateway runs (it may have no chat channel, hence no pairing).
    gateway_up: bool,
}

impl Backend {
    /// The gateway; the files of this home while it is not running.
    async fn open(app: &App) -> Result<Self> {
        let endpoint = Endpoint::resolve(app)?;
        let gateway = match GatewayClient::connect(&endpoint).await {
            Ok(client) => Some(Box::new(client)),
            Err(e) if e.downcast_ref::<NotRunning>().is_some() => None,
            Err(e) => return Err(e),
        };
        Ok(Self {
            gateway_up: gateway.is_some(),
            gateway,
            store: pairing_store(app),
        })
    }

    /// `method` through the gateway, else the same on the files. A gateway without chat
    /// channels has no pairing: then the files too, from here on.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        if let Some(client) = &mut self.gateway {
            match client.call(method, params.clone()).await {
                Ok(answer) => return Ok(answer),
                Err(e) if !is_pairing_off(&e) => return Err(e),
                Err(_) => {
                    if let Some(client) = self.gateway.take() {
                        client.close().await;
                    }
                }
            }
        }
        local_call(&self.store, method, &params)
    }

    /// Why an approved sender was not told.
    fn why_not_told(&self) -> &'static str {
        if self.gateway_up {
            "The gateway runs no chat channel"
        } else {
            "The gateway is not running"
        }
    }

    async fn close(self) {
        if let Some(client) = self.gateway {
            client.close().await;
        }
    }
}

/// The gateway's answer that it has no pairing (no chat channel configured there).
fn is_pairing_off(e: &anyhow::Error) -> bool {
    e.downcast_ref::<CallError>().is_some_and(|e| {
        e.code == "UNAVAILABLE"
            && matches!(
                e.message.as_str(),
                "no chat channel is configured" | "pairing is not set up"
            )
    })
}

/// A `pairing.*` method on the files, answering as the gateway would (without telling the
/// sender: `notified` is false).
fn local_call(store: &PairingStore, method: &str, params: &Value) -> Result<Value> {
    let param = |key: &str| params.get(key).and_then(Value::as_str);
    match method {
        "pairing.list" => Ok(list_json(store, param("channel"), param("accountId"))?),
        "pairing.approve" => {
            let channel = param("channel").unwrap_or_default();
            let approved = store.approve(channel, param("code").unwrap_or_default())?;
            Ok(json!({
                "channel": channel, "id": approved.sender_id,
                "accountId": approved.account_id, "notified": false,
            }))
        }
        "pairing.revoke" => {
            let revoked = store.revoke(
                param("channel").unwrap_or_default(),
                param("accountId"),
                param("entry").unwrap_or_default(),
            )?;
            Ok(json!({ "removed": revoked.removed, "remaining": revoked.remaining }))
        }
        other => bail!("{other} has no local form"),
    }
}
