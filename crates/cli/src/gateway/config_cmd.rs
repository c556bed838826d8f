//! `pincer gateway config set|show|clear`, lainclaw's commands, over the `gateway` section
//! of `pincer.json5` (port, bind, auth.token). Edits go through pincer-config: the whole
//! document is checked before it is written (atomically, 0600), so a bad value never
//! reaches the file. `show` masks the token the way `pincer config get` does.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use pincer_ai::env::EnvSource;
use pincer_config::{GatewayBind, KeyPath};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{GatewayConfigCommand, GatewayConfigSetArgs};
use crate::service;

/// The section this command owns.
const SECTION: &str = "gateway";

pub fn run(env: &dyn EnvSource, command: GatewayConfigCommand) -> Result<ExitCode> {
    let home = pincer_config::pincer_home(env)?;
    let path = pincer_config::config_path(&home);
    match command {
        GatewayConfigCommand::Set(args) => set(env, &home, &path, args)?,
        GatewayConfigCommand::Show { json } => show(env, &path, json)?,
        GatewayConfigCommand::Clear => clear(env, &home, &path)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `gateway config set`: each value checked here first (for a message in command-line
/// words), then the document as a whole by pincer-config before it is saved.
fn set(env: &dyn EnvSource, home: &Path, path: &Path, args: GatewayConfigSetArgs) -> Result<()> {
    let mut changes: Vec<(&[&str], Value)> = Vec::new();
    if let Some(port) = &args.port {
        changes.push((&["port"], Value::from(parse_port(port)?)));
    }
    if let Some(bind) = &args.bind {
        changes.push((&["bind"], Value::from(parse_bind(bind)?.to_string())));
    }
    if let Some(token) = &args.token {
        check_token(token)?;
        changes.push((&["auth", "token"], Value::from(token.as_str())));
    }
    if changes.is_empty() {
        bail!(
            "nothing to set: give --port N, --bind loopback|lan|<ip address> and/or --token T \
             (`pincer gateway config show` prints the current settings)"
        );
    }
    let mut raw = read(path)?;
    for (keys, value) in changes {
        pincer_config::set(&mut raw, &key_path(keys), value)?;
    }
    save(env, home, path, &raw)?;
    println!("gateway config updated");
    note_running_daemon(home);
    Ok(())
}

/// `gateway config clear`: the section removed; the rest of the file is kept.
fn clear(env: &dyn EnvSource, home: &Path, path: &Path) -> Result<()> {
    // No file, or no section: already the defaults, and nothing is written.
    if let Some(mut raw) = pincer_config::read_raw(path)?
        && pincer_config::unset(&mut raw, &key_path(&[])).is_some()
    {
        save(env, home, path, &raw)?;
        note_running_daemon(home);
    }
    println!("gateway config cleared");
    Ok(())
}

/// One setting as `show` reports it: lainclaw's `{value, source}`.
#[derive(Serialize)]
struct Setting {
    value: Value,
    source: Source,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Source {
    /// Not in the config: the built-in default applies.
    Default,
    /// Set in the config.
    Override,
}

impl Source {
    fn of(configured: bool) -> Self {
        if configured {
            Self::Override
        } else {
            Self::Default
        }
    }
}

#[derive(Serialize)]
struct Settings {
    port: Setting,
    bind: Setting,
    token: Setting,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowReport<'a> {
    config_path: &'a Path,
    config: Settings,
}

/// `gateway config show [--json]`. The values are the loaded (checked, `${ENV}`
/// substituted) config's; the token is shown masked, or as written when it is a
/// `${NAME}` reference.
fn show(env: &dyn EnvSource, path: &Path, json: bool) -> Result<()> {
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
    let report = ShowReport {
        config_path: path,
        config: Settings {
            port: Setting {
                value: gateway.port().into(),
                source: Source::of(gateway.port.is_some()),
            },
            bind: Setting {
                value: gateway.bind().to_string().into(),
                source: Source::of(gateway.bind.is_some()),
            },
            token: Setting {
                source: Source::of(!token.is_null()),
                value: token,
            },
        },
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let settings = &report.config;
    println!("config: {}", path.display());
    println!("port: {}", line(&settings.port));
    println!("bind: {}", line(&settings.bind));
    match settings.token.source {
        Source::Override => println!("token: {}", line(&settings.token)),
        Source::Default => {
            println!("token: not set (default: the token file, see `pincer gateway token`)")
        }
    }
    Ok(())
}

/// `18789 (default)`, `abc***xyz (override)`.
fn line(setting: &Setting) -> String {
    let value = match &setting.value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let source = match setting.source {
        Source::Default => "default",
        Source::Override => "override",
    };
    format!("{value} ({source})")
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
