//! `pincer gateway config set|show|clear [--channel c]`, lainclaw's commands, over the
//! `gateway` section of `pincer.json5`: the gateway-wide layer (port, bind, auth.token,
//! debug and `gateway.default`, the run settings of every channel) and per channel
//! `gateway.channels.<c>` (its pairing settings, over `default`). Edits go through pincer-config: the whole
//! document is checked before it is written (atomically, 0600), so a bad value never
//! reaches the file. `show` masks the token the way `pincer config get` does.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use pincer_ai::env::EnvSource;
use pincer_config::{GatewayBind, KeyPath};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::cli::{GatewayConfigCommand, GatewayConfigSetArgs};
use crate::gateway::run_settings::{DEFAULT_PENDING_MAX, DEFAULT_PENDING_TTL_MS, TurnArgs};
use crate::service;

/// The section this command owns.
const SECTION: &str = "gateway";

pub fn run(env: &dyn EnvSource, command: GatewayConfigCommand) -> Result<ExitCode> {
    let home = pincer_config::pincer_home(env)?;
    let path = pincer_config::config_path(&home);
    match command {
        GatewayConfigCommand::Set(args) => set(env, &home, &path, *args)?,
        GatewayConfigCommand::Show { json, channel } => show(env, &path, json, channel)?,
        GatewayConfigCommand::Clear { channel } => clear(env, &home, &path, channel)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The run settings of `gateway.default` that may also be set per channel.
const PAIRING_KEYS: [&str; 4] = [
    "pairingPolicy",
    "pairingAllowFrom",
    "pairingPendingTtlMs",
    "pairingPendingMax",
];

/// `gateway config set`: each value checked here first (for a message in command-line
/// words), then the document as a whole by pincer-config before it is saved. Without
/// `--channel` the settings go to the gateway-wide layer (`gateway.port|bind|auth.token|
/// debug`, `gateway.default.*`); with it, the pairing settings to `gateway.channels.<c>`.
fn set(env: &dyn EnvSource, home: &Path, path: &Path, args: GatewayConfigSetArgs) -> Result<()> {
    let channel = match args.turn.channels.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        _ => bail!("give at most one --channel to `gateway config set`"),
    };
    let mut changes: Vec<(Vec<String>, Value)> = Vec::new();
    let wide = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
    if let Some(port) = &args.port {
        changes.push((wide(&["port"]), Value::from(parse_port(port)?)));
    }
    if let Some(bind) = &args.bind {
        changes.push((wide(&["bind"]), Value::from(parse_bind(bind)?.to_string())));
    }
    if let Some(token) = &args.token {
        check_token(token)?;
        changes.push((wide(&["auth", "token"]), Value::from(token.as_str())));
    }
    if args.turn.debug {
        changes.push((wide(&["debug"]), Value::Bool(true)));
    }
    // The flags' own JSON: `to_args` knows every one, `layer_values` reads them back.
    for (key, value) in layer_values(&args.turn) {
        let layer = match (&channel, PAIRING_KEYS.contains(&key)) {
            (Some(channel), true) => vec!["channels".to_owned(), channel.clone()],
            _ => vec!["default".to_owned()],
        };
        let mut keys = layer;
        keys.push(key.to_owned());
        changes.push((keys, value));
    }
    if let Some(channel) = &channel {
        let wide_keys: Vec<String> = changes
            .iter()
            .filter(|(keys, _)| keys.first().map(String::as_str) != Some("channels"))
            .map(|(keys, _)| keys.last().cloned().unwrap_or_default())
            .collect();
        if !wide_keys.is_empty() {
            bail!(
                "{} apply to every channel: set them without --channel (per channel, \
                 --channel {channel} takes only --pairing-policy, --pairing-allow-from, \
                 --pairing-pending-ttl-ms and --pairing-pending-max)",
                wide_keys.join(", ")
            );
        }
    }
    if changes.is_empty() {
        bail!(
            "nothing to set: give --port N, --bind loopback|lan|<ip address> and/or --token T, \
             or run settings such as --provider, --tool-max-steps N, --pairing-policy P \
             (`pincer gateway config show` prints the current settings)"
        );
    }
    let mut raw = read(path)?;
    for (keys, value) in changes {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        pincer_config::set(&mut raw, &key_path(&keys), value)?;
    }
    save(env, home, path, &raw)?;
    println!("gateway config updated");
    note_running_daemon(home);
    Ok(())
}

/// The run settings given to `gateway config set`, as config keys and JSON values.
fn layer_values(turn: &TurnArgs) -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&'static str, Value)> = Vec::new();
    if let Some(v) = &turn.provider {
        out.push(("provider", Value::from(v.as_str())));
    }
    if let Some(v) = &turn.profile {
        out.push(("profile", Value::from(v.as_str())));
    }
    let with_tools = if turn.no_with_tools {
        Some(false)
    } else {
        turn.with_tools
    };
    if let Some(v) = with_tools {
        out.push(("withTools", Value::Bool(v)));
    }
    if let Some(v) = &turn.tool_allow {
        out.push(("toolAllow", Value::from(v.clone())));
    }
    if let Some(v) = turn.tool_max_steps {
        out.push(("toolMaxSteps", Value::from(v)));
    }
    let memory = if turn.no_memory {
        Some(false)
    } else {
        turn.memory
    };
    if let Some(v) = memory {
        out.push(("memory", Value::Bool(v)));
    }
    if let Some(v) = turn.pairing_policy {
        out.push((
            "pairingPolicy",
            serde_json::to_value(v).unwrap_or(Value::Null),
        ));
    }
    if let Some(v) = &turn.pairing_allow_from {
        out.push(("pairingAllowFrom", Value::from(v.clone())));
    }
    if let Some(v) = turn.pairing_pending_ttl_ms {
        out.push(("pairingPendingTtlMs", Value::from(v)));
    }
    if let Some(v) = turn.pairing_pending_max {
        out.push(("pairingPendingMax", Value::from(v)));
    }
    out
}

/// `gateway config clear`: without a channel the gateway-wide layer (everything in the
/// section but `channels`), with one only `gateway.channels.<channel>`. The rest of the
/// file is kept.
fn clear(env: &dyn EnvSource, home: &Path, path: &Path, channel: Option<String>) -> Result<()> {
    // No file, or nothing to clear: already the defaults, and nothing is written.
    if let Some(mut raw) = pincer_config::read_raw(path)? {
        let changed = match &channel {
            Some(channel) => {
                let removed =
                    pincer_config::unset(&mut raw, &key_path(&["channels", channel])).is_some();
                // An empty `channels` map left behind goes too.
                if removed && is_empty_object(pincer_config::get(&raw, &key_path(&["channels"]))) {
                    pincer_config::unset(&mut raw, &key_path(&["channels"]));
                }
                removed
            }
            None => {
                let keep = pincer_config::get(&raw, &key_path(&["channels"])).cloned();
                let removed = pincer_config::unset(&mut raw, &key_path(&[])).is_some();
                if let Some(channels) = keep {
                    pincer_config::set(&mut raw, &key_path(&["channels"]), channels)?;
                }
                removed
            }
        };
        if changed {
            save(env, home, path, &raw)?;
            note_running_daemon(home);
        }
    }
    println!("gateway config cleared");
    Ok(())
}

fn is_empty_object(value: Option<&Value>) -> bool {
    value.is_some_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty))
}

/// One setting as `show` reports it: lainclaw's `{value, source}`, plus the layer that set
/// it (`default` or `channels.<name>`) when it is set.
#[derive(Serialize)]
struct Setting {
    value: Value,
    source: Source,
    #[serde(skip_serializing_if = "Option::is_none")]
    layer: Option<String>,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Source {
    /// Not in the config: the built-in default applies.
    Default,
    /// Set in the config.
    Override,
}

impl Setting {
    fn of(value: Value, configured: bool) -> Self {
        Self {
            value,
            source: if configured {
                Source::Override
            } else {
                Source::Default
            },
            layer: None,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowReport<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    config_path: &'a Path,
    config: Map<String, Value>,
}

/// `gateway config show [--json] [--channel c]`. The values are the loaded (checked,
/// `${ENV}` substituted) config's; the token is shown masked, or as written when it is a
/// `${NAME}` reference. With a channel, its pairing settings override the default layer's.
fn show(env: &dyn EnvSource, path: &Path, json: bool, channel: Option<String>) -> Result<()> {
    let loaded = pincer_config::load(path, env).map_err(|e| {
        anyhow!(
            "{e}\nfix the file, or change it with `pincer config set|unset` \
             (`pincer gateway config clear` resets the gateway section)"
        )
    })?;
    let gateway = &loaded.config.gateway;
    let token = match gateway.token() {
        Some(_) => pincer_config::redacted_get(&loaded.raw, &key_path(&["auth", "token"]))
            .unwrap_or(Value::Null),
        None => Value::Null,
    };
    let mut settings: Vec<(&str, Setting)> = vec![
        (
            "port",
            Setting::of(gateway.port().into(), gateway.port.is_some()),
        ),
        (
            "bind",
            Setting::of(gateway.bind().to_string().into(), gateway.bind.is_some()),
        ),
        ("token", Setting::of(token.clone(), !token.is_null())),
    ];
    if gateway.debug.is_some() {
        settings.push(("debug", Setting::of(gateway.debug.into(), true)));
    }
    let layers = serde_json::to_value(&gateway.default).unwrap_or(Value::Null);
    let own = channel
        .as_deref()
        .and_then(|c| gateway.channels.get(c))
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    let defaults: [(&str, Value); 10] = [
        ("provider", Value::Null),
        ("profile", Value::Null),
        ("withTools", Value::Bool(true)),
        ("toolAllow", json!([])),
        ("toolMaxSteps", Value::Null),
        ("memory", Value::Null),
        ("pairingPolicy", Value::Null),
        ("pairingAllowFrom", Value::Null),
        ("pairingPendingTtlMs", json!(DEFAULT_PENDING_TTL_MS)),
        ("pairingPendingMax", json!(DEFAULT_PENDING_MAX)),
    ];
    for (key, default) in defaults {
        let setting = match (&channel, own.get(key), layers.get(key)) {
            (Some(channel), Some(value), _) => Setting {
                layer: Some(format!("channels.{channel}")),
                ..Setting::of(value.clone(), true)
            },
            (_, _, Some(value)) => Setting {
                layer: Some("default".to_owned()),
                ..Setting::of(value.clone(), true)
            },
            _ => Setting::of(default, false),
        };
        settings.push((key, setting));
    }
    if json {
        let config: Map<String, Value> = settings
            .iter()
            .map(|(k, s)| {
                (
                    (*k).to_owned(),
                    serde_json::to_value(s).unwrap_or(Value::Null),
                )
            })
            .collect();
        let report = ShowReport {
            channel: channel.as_deref(),
            config_path: path,
            config,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("config: {}", path.display());
    if let Some(channel) = &channel {
        println!("channel: {channel}");
    }
    for (key, setting) in &settings {
        if *key == "token" && setting.source == Source::Default {
            println!("token: not set (default: the token file, see `pincer gateway token`)");
        } else {
            println!("{key}: {}", line(setting));
        }
    }
    Ok(())
}

/// `18789 (default)`, `abc***xyz (override)`, `allowlist (override, channels.feishu)`.
fn line(setting: &Setting) -> String {
    let value = match &setting.value {
        Value::String(s) => s.clone(),
        Value::Null => "not set".to_owned(),
        Value::Array(items) if items.is_empty() => "[]".to_owned(),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    };
    match (setting.source, &setting.layer) {
        (Source::Default, _) => format!("{value} (default)"),
        (Source::Override, Some(layer)) => format!("{value} (override, {layer})"),
        (Source::Override, None) => format!("{value} (override)"),
    }
}

fn parse_port(value: &str) -> Result<u16> {
    match value.trim().parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => bail!(
            "invalid --port {value:?}: expected a port number from 1 to 65535 (`--port 0` \
             picks a free port for one run of `pincer gateway`, it cannot be configured)"
        ),
    }
}

fn parse_bind(value: &str) -> Result<GatewayBind> {
    value.parse().map_err(|_| {
        anyhow!(
            "invalid --bind {value:?}: expected loopback (this machine only), lan (every \
             interface) or an IP address of this machine, e.g. 192.168.1.5"
        )
    })
}

/// A token travels in an `Authorization: Bearer` header and is typed by people: printable
/// characters without spaces, so what is stored is what a client can send.
fn check_token(token: &str) -> Result<()> {
    if token.is_empty() {
        bail!(
            "invalid --token: it must not be empty (`pincer config unset gateway.auth.token` \
             goes back to the generated token file)"
        );
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("invalid --token: it must not contain spaces or control characters");
    }
    Ok(())
}

/// `gateway.<keys…>`.
fn key_path(keys: &[&str]) -> KeyPath {
    keys.iter()
        .fold(KeyPath::root().key(SECTION), |path, key| path.key(key))
}

/// The file as written, or an empty document when there is none.
fn read(path: &Path) -> Result<Value> {
    Ok(pincer_config::read_raw(path)?.unwrap_or_else(|| Value::Object(Default::default())))
}

/// Checks and writes the document; nothing is written when the check fails.
fn save(env: &dyn EnvSource, home: &Path, path: &Path, raw: &Value) -> Result<()> {
    // The home holds secrets: created 0700 here, not by the write's `create_dir_all`.
    service::ensure_home(home)?;
    pincer_config::save(path, raw, env).map_err(|e| {
        anyhow!(
            "the gateway config was not changed: {e}\nfix the problem above (`pincer config \
             set|unset`), then try again"
        )
    })?;
    Ok(())
}

/// A running daemon read its settings when it started; say so after a change.
fn note_running_daemon(home: &Path) {
    if let Some(daemon) = service::running_daemon(home) {
        eprintln!(
            "note: the running gateway (pid {}) keeps its settings until it is restarted \
             (`pincer gateway stop`, then `pincer gateway start --daemon`)",
            daemon.pid
        );
    }
}
