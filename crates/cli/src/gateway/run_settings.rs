//! lainclaw's `gateway start` settings: the flags (`--provider`, `--profile`,
//! `--with-tools`, `--tool-allow`, `--tool-max-steps`, `--memory`, `--pairing-*`,
//! `--channel`, `--debug`), resolved against the config's `gateway.default` and
//! `gateway.channels.<name>` layers into the values one gateway run uses, each with where it
//! came from (`flag`, `config` or `default`). The flags are an in-memory overlay: the file is
//! never changed. `gateway start --daemon` passes them on ([`TurnArgs::to_args`]) and records
//! the result ([`RunSettings::report`]) for `gateway status`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use pincer_config::{DmPolicyName, GatewayRunSettings, PincerConfig};
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::parse_switch;

/// The channels Pincer has (`--channel`).
pub const CHANNELS: [&str; 4] = ["telegram", "discord", "slack", "feishu"];
/// lainclaw's defaults for a pairing request's life and the pending maximum.
pub const DEFAULT_PENDING_TTL_MS: u64 = 3_600_000;
pub const DEFAULT_PENDING_MAX: u32 = 3;

/// The flags `gateway start` and `gateway run` share with lainclaw.
#[derive(Debug, Args, Clone, Default)]
pub struct TurnArgs {
    /// Provider every turn uses (its default model), over the agents' configured model.
    #[arg(long)]
    pub provider: Option<String>,
    /// Auth profile every turn uses (`pincer auth status` lists them).
    #[arg(long)]
    pub profile: Option<String>,
    /// Let the model use tools (--with-tools, --no-with-tools, --with-tools=on|off).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on",
          value_parser = parse_switch, overrides_with = "no_with_tools")]
    pub with_tools: Option<bool>,
    #[arg(long, overrides_with = "with_tools", hide = true)]
    pub no_with_tools: bool,
    /// Only these tools (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    pub tool_allow: Option<Vec<String>>,
    /// Most tool rounds of one turn (at least 1).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one)]
    pub tool_max_steps: Option<u32>,
    /// Session memory on or off for every turn (--memory, --no-memory, --memory=on|off).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on",
          value_parser = parse_switch, overrides_with = "no_memory")]
    pub memory: Option<bool>,
    #[arg(long, overrides_with = "memory", hide = true)]
    pub no_memory: bool,
    /// Who may message the agent directly: open, allowlist, pairing or disabled (replaces
    /// the channels' dmPolicy for this run).
    #[arg(long, value_name = "POLICY", value_parser = parse_policy)]
    pub pairing_policy: Option<DmPolicyName>,
    /// Sender ids allowed to message the agent (comma-separated; replaces allowFrom).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub pairing_allow_from: Option<Vec<String>>,
    /// How long a pairing request stays pending, in ms (default 3600000).
    #[arg(long, value_name = "MS", value_parser = parse_ttl)]
    pub pairing_pending_ttl_ms: Option<u64>,
    /// Most pending pairing requests per channel (default 3).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one)]
    pub pairing_pending_max: Option<u32>,
    /// Run only this chat channel (repeatable; default: every configured channel).
    #[arg(long = "channel", value_name = "CHANNEL", value_parser = parse_channel)]
    pub channels: Vec<String>,
    /// Begin each reply with where it came from (`[provider/model:profile]`), for tracing.
    #[arg(long)]
    pub debug: bool,
}

fn parse_at_least_one(value: &str) -> Result<u32, String> {
    match value.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "expected a whole number of at least 1, not {value:?}"
        )),
    }
}

fn parse_ttl(value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "expected a number of milliseconds of at least 1, not {value:?}"
        )),
    }
}

/// `open|allowlist|pairing|disabled`.
pub fn parse_policy(value: &str) -> Result<DmPolicyName, String> {
    serde_json::from_value(Value::from(value.trim().to_ascii_lowercase()))
        .map_err(|_| format!("expected open, allowlist, pairing or disabled, not {value:?}"))
}

/// One of [`CHANNELS`].
pub fn parse_channel(value: &str) -> Result<String, String> {
    let name = value.trim().to_ascii_lowercase();
    if CHANNELS.contains(&name.as_str()) {
        Ok(name)
    } else {
        Err(format!(
            "expected one of {}, not {value:?}",
            CHANNELS.join(", ")
        ))
    }
}

fn policy_name(policy: DmPolicyName) -> &'static str {
    match policy {
        DmPolicyName::Open => "open",
        DmPolicyName::Allowlist => "allowlist",
        DmPolicyName::Pairing => "pairing",
        DmPolicyName::Disabled => "disabled",
    }
}

impl TurnArgs {
    fn with_tools(&self) -> Option<bool> {
        if self.no_with_tools {
            Some(false)
        } else {
            self.with_tools
        }
    }

    fn memory(&self) -> Option<bool> {
        if self.no_memory {
            Some(false)
        } else {
            self.memory
        }
    }

    /// The flags again, for the detached process.
    pub fn to_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut pair = |flag: &str, value: String| {
            out.push(format!("--{flag}"));
            out.push(value);
        };
        if let Some(v) = &self.provider {
            pair("provider", v.clone());
        }
        if let Some(v) = &self.profile {
            pair("profile", v.clone());
        }
        if let Some(v) = &self.tool_allow {
            pair("tool-allow", v.join(","));
        }
        if let Some(v) = self.tool_max_steps {
            pair("tool-max-steps", v.to_string());
        }
        if let Some(v) = self.pairing_policy {
            pair("pairing-policy", policy_name(v).to_owned());
        }
        if let Some(v) = &self.pairing_allow_from {
            pair("pairing-allow-from", v.join(","));
        }
        if let Some(v) = self.pairing_pending_ttl_ms {
            pair("pairing-pending-ttl-ms", v.to_string());
        }
        if let Some(v) = self.pairing_pending_max {
            pair("pairing-pending-max", v.to_string());
        }
        for channel in &self.channels {
            pair("channel", channel.clone());
        }
        let switch = |name: &str, on: bool| format!("--{name}={}", if on { "on" } else { "off" });
        if let Some(on) = self.with_tools() {
            out.push(switch("with-tools", on));
        }
        if let Some(on) = self.memory() {
            out.push(switch("memory", on));
        }
        if self.debug {
            out.push("--debug".to_owned());
        }
        out
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Flag,
    Config,
    Default,
}

/// A value and its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective<T> {
    pub value: T,
    pub source: Source,
}

/// The first of the flag, the config layers, else the default.
fn pick<T: Clone>(flag: Option<T>, layers: &[Option<T>], default: T) -> Effective<T> {
    if let Some(value) = flag {
        return Effective {
            value,
            source: Source::Flag,
        };
    }
    match layers.iter().flatten().next() {
        Some(value) => Effective {
            value: value.clone(),
            source: Source::Config,
        },
        None => Effective {
            value: default,
            source: Source::Default,
        },
    }
}

/// One channel's pairing settings for this run. `policy` / `allow_from` of `None` leave the
/// channel's own `dmPolicy` / `allowFrom` in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSettings {
    pub pairing_policy: Effective<Option<String>>,
    pub pairing_allow_from: Effective<Option<Vec<String>>>,
    pub pairing_pending_ttl_ms: Effective<u64>,
    pub pairing_pending_max: Effective<u32>,
}

impl ChannelSettings {
    /// The policy to apply over the channel's config, if this run sets one.
    pub fn policy(&self) -> Option<DmPolicyName> {
        self.pairing_policy
            .value
            .as_deref()
            .and_then(|p| parse_policy(p).ok())
    }
}

/// The settings of one gateway run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSettings {
    pub provider: Effective<Option<String>>,
    pub profile: Effective<Option<String>>,
    pub with_tools: Effective<bool>,
    pub tool_allow: Effective<Vec<String>>,
    pub tool_max_steps: Effective<Option<u32>>,
    pub memory: Effective<Option<bool>>,
    pub debug: Effective<bool>,
    /// The channels this run starts (`--channel`, else every configured one).
    #[serde(skip)]
    pub channels: Vec<String>,
    /// Each channel's pairing settings (every channel Pincer has, configured or not).
    #[serde(skip)]
    pub per_channel: BTreeMap<String, ChannelSettings>,
}

impl RunSettings {
    /// The flags over the config. A `--channel` that is not configured is an error.
    pub fn resolve(args: &TurnArgs, config: &PincerConfig) -> Result<Self> {
        let gateway = &config.gateway;
        let default = &gateway.default;
        let configured = config.channels.configured();
        for channel in &args.channels {
            if !configured.contains(&channel.as_str()) {
                bail!(
                    "--channel {channel}: channels.{channel} is not configured \
                     (configured: {})",
                    if configured.is_empty() {
                        "none".to_owned()
                    } else {
                        configured.join(", ")
                    }
                );
            }
        }
        let mut channels: Vec<String> = Vec::new();
        for channel in &args.channels {
            if !channels.contains(channel) {
                channels.push(channel.clone());
            }
        }
        if channels.is_empty() {
            channels = configured.iter().map(|c| (*c).to_owned()).collect();
        }
        let per_channel = CHANNELS
            .iter()
            .map(|name| {
                let own = gateway.channels.get(*name);
                ((*name).to_owned(), channel_settings(args, default, own))
            })
            .collect();
        Ok(Self {
            provider: pick(
                args.provider.clone().map(Some),
                &[default.provider.clone().map(Some)],
                None,
            ),
            profile: pick(
                args.profile.clone().map(Some),
                &[default.profile.clone().map(Some)],
                None,
            ),
            with_tools: pick(args.with_tools(), &[default.with_tools], true),
            tool_allow: pick(
                args.tool_allow.clone(),
                std::slice::from_ref(&default.tool_allow),
                Vec::new(),
            ),
            tool_max_steps: pick(
                args.tool_max_steps.map(Some),
                &[default.tool_max_steps.map(|n| Some(n.get()))],
                None,
            ),
            memory: pick(args.memory().map(Some), &[default.memory.map(Some)], None),
            debug: pick(args.debug.then_some(true), &[gateway.debug], false),
            channels,
            per_channel,
        })
    }

    /// A profile this run pins must exist: said at start, not by every turn.
    pub fn check_profile(&self, app: &crate::app::App) -> Result<()> {
        if let Some(profile) = &self.profile.value {
            crate::credentials::for_run(app, Some(profile)).map_err(|e| {
                e.context(format!(
                    "--profile {profile}: no such auth profile (`pincer auth status` lists them)"
                ))
            })?;
        }
        Ok(())
    }

    /// A channel's pairing settings.
    pub fn channel(&self, name: &str) -> Option<&ChannelSettings> {
        self.per_channel.get(name)
    }

    /// The JSON `gateway status` shows: `{settings: {key: {value, source}}, channels: [{channel,
    /// settings}]}` for the channels of this run.
    pub fn report(&self) -> Value {
        let channels: Vec<Value> = self
            .channels
            .iter()
            .map(|name| {
                json!({
                    "channel": name,
                    "settings": self.per_channel.get(name),
                })
            })
            .collect();
        let mut settings = serde_json::to_value(self).unwrap_or_else(|_| json!({}));
        // The first channel's pairing settings at the top too, as lainclaw shows one channel.
        if let (Some(map), Some(first)) = (
            settings.as_object_mut(),
            self.channels.first().and_then(|c| self.per_channel.get(c)),
        ) && let Ok(Value::Object(pairing)) = serde_json::to_value(first)
        {
            map.extend(pairing);
        }
        json!({ "settings": settings, "channels": channels })
    }
}

fn channel_settings(
    args: &TurnArgs,
    default: &GatewayRunSettings,
    own: Option<&GatewayRunSettings>,
) -> ChannelSettings {
    let layer = |f: &dyn Fn(&GatewayRunSettings) -> Option<Value>| [own.and_then(f), f(default)];
    let policy = layer(&|s| s.pairing_policy.map(|p| Value::from(policy_name(p))));
    let allow = layer(&|s| s.pairing_allow_from.clone().map(Value::from));
    let ttl = layer(&|s| s.pairing_pending_ttl_ms.map(|n| Value::from(n.get())));
    let max = layer(&|s| s.pairing_pending_max.map(|n| Value::from(n.get())));
    let strings = |v: &Option<Value>| -> Option<Option<Vec<String>>> {
        v.as_ref()
            .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok())
            .map(Some)
    };
    ChannelSettings {
        pairing_policy: pick(
            args.pairing_policy.map(|p| Some(policy_name(p).to_owned())),
            &policy.map(|v| v.and_then(|v| v.as_str().map(|s| Some(s.to_owned())))),
            None,
        ),
        pairing_allow_from: pick(
            args.pairing_allow_from.clone().map(Some),
            &[strings(&allow[0]), strings(&allow[1])],
            None,
        ),
        pairing_pending_ttl_ms: pick(
            args.pairing_pending_ttl_ms,
            &ttl.map(|v| v.and_then(|v| v.as_u64())),
            DEFAULT_PENDING_TTL_MS,
        ),
        pairing_pending_max: pick(
            args.pairing_pending_max,
            &max.map(|v| {
                v.and_then(|v| v.as_u64())
                    .and_then(|n| u32::try_from(n).ok())
            }),
            DEFAULT_PENDING_MAX,
        ),
    }
}

/// The pairing store's limits for every channel from the config alone (the CLI's
/// `pincer pairing` without a gateway).
pub fn store_limits(config: &PincerConfig) -> Vec<(String, Duration, usize)> {
    let settings = RunSettings::resolve(&TurnArgs::default(), config);
    match settings {
        Ok(s) => s.store_limits(),
        Err(_) => Vec::new(),
    }
}

impl RunSettings {
    /// Each channel's TTL and maximum, for the pairing store.
    pub fn store_limits(&self) -> Vec<(String, Duration, usize)> {
        self.per_channel
            .iter()
            .map(|(name, s)| {
                (
                    name.clone(),
                    Duration::from_millis(s.pairing_pending_ttl_ms.value),
                    s.pairing_pending_max.value as usize,
                )
            })
            .collect()
    }
}

/// The `[provider/model:profile]` line `--debug` puts before a reply.
pub fn debug_source(provider: &str, model: &str, profile: Option<&str>) -> String {
    format!("[{provider}/{model}:{}]", profile.unwrap_or("env"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_layers_and_defaults_fill_the_rest() {
        let config: PincerConfig = serde_json::from_value(json!({
            "gateway": {
                "default": {"toolMaxSteps": 4, "pairingPolicy": "pairing"},
                "channels": {"feishu": {"pairingPendingMax": 7}}
            }
        }))
        .unwrap_or_default();
        let args = TurnArgs {
            pairing_policy: Some(DmPolicyName::Allowlist),
            ..TurnArgs::default()
        };
        let s = RunSettings::resolve(&args, &config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.tool_max_steps.value, Some(4));
        assert_eq!(s.tool_max_steps.source, Source::Config);
        let feishu = &s.per_channel["feishu"];
        assert_eq!(feishu.pairing_policy.value.as_deref(), Some("allowlist"));
        assert_eq!(feishu.pairing_policy.source, Source::Flag);
        assert_eq!(feishu.pairing_pending_max.value, 7);
        assert_eq!(s.per_channel["telegram"].pairing_pending_max.value, 3);
        assert_eq!(
            s.per_channel["telegram"].pairing_pending_max.source,
            Source::Default
        );
    }

    #[test]
    fn to_args_round_trips() {
        let args = TurnArgs {
            provider: Some("openai".into()),
            tool_allow: Some(vec!["read".into(), "exec".into()]),
            tool_max_steps: Some(5),
            no_memory: true,
            channels: vec!["feishu".into()],
            debug: true,
            ..TurnArgs::default()
        };
        assert_eq!(
            args.to_args().join(" "),
            "--provider openai --tool-allow read,exec --tool-max-steps 5 --channel feishu \
             --memory=off --debug"
        );
    }
}
