//! The `gateway` section, in OpenClaw's shape: where `pincer gateway` listens (`port`,
//! `bind`), the token clients present (`auth.token`), which web origins and host names
//! browsers may use (`controlUi.allowedOrigins`, `allowedHosts`), the Control UI's files
//! (`controlUi.root`) and the HTTP server's
//! limits (`http`). Everything is optional; the
//! defaults are port 18789 on loopback with the generated token file. Command-line flags
//! and the environment override these (the CLI decides that order).
//!
//! `port` and `bind` are checked while loading (not as later rules) so a bad value is
//! reported like a wrong type, with its line: `gateway.bind: expected "loopback", …`.

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::origin::{HostPattern, OriginPattern};

/// The port the gateway listens on when nothing says otherwise (OpenClaw's).
pub const DEFAULT_GATEWAY_PORT: u16 = 18789;

/// `gateway`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayConfig {
    /// Port to listen on, 1 to 65535 (default 18789).
    #[serde(
        default,
        deserialize_with = "deserialize_port",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<u16>", range(min = 1, max = 65535))]
    pub port: Option<u16>,
    /// `loopback` (127.0.0.1, the default), `lan` (0.0.0.0, every interface) or an IP
    /// address of this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<GatewayBind>,
    /// How clients authenticate.
    #[serde(default, skip_serializing_if = "GatewayAuthConfig::is_empty")]
    pub auth: GatewayAuthConfig,
    /// The web UI's browser checks (OpenClaw's `gateway.controlUi`).
    #[serde(default, skip_serializing_if = "ControlUiConfig::is_empty")]
    pub control_ui: ControlUiConfig,
    /// Host names clients may reach the gateway by (the `Host` header), besides
    /// `localhost`, `*.localhost` and IP addresses, which are always accepted: e.g.
    /// `"gateway.lan"`, `"*.example.com"`, or `"*"` for any (turns the DNS-rebinding check
    /// off). Requests naming another host are refused with 421.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<HostPattern>,
    /// Limits of the HTTP server.
    #[serde(default, skip_serializing_if = "GatewayHttpConfig::is_empty")]
    pub http: GatewayHttpConfig,
    /// Show where each reply came from: channel replies begin with a
    /// `[provider/model:profile]` line (default false; `gateway start --debug` for one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// lainclaw's run settings for every channel (`gateway config set`); `gateway start`
    /// flags override them for one run.
    #[serde(default, skip_serializing_if = "GatewayRunSettings::is_empty")]
    pub default: GatewayRunSettings,
    /// Per channel (`feishu`, `telegram`, …): the pairing settings of `default` overridden
    /// for that channel (`gateway config set --channel <name>`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub channels: std::collections::BTreeMap<String, GatewayRunSettings>,
}

/// `gateway.default` and `gateway.channels.<name>`: lainclaw's `gateway start` settings.
/// The model, tool and memory settings apply gateway-wide (`default` only); the pairing
/// settings may differ per channel.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayRunSettings {
    /// Provider every turn uses (its default model), above the agents' configured model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Auth profile every turn uses (`pincer auth status` lists them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Whether the model may use tools (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_tools: Option<bool>,
    /// Only these tools (empty: every tool the agent has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_allow: Option<Vec<String>>,
    /// Most tool rounds of one turn, at least 1 (default: the agent's own limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_max_steps: Option<std::num::NonZeroU32>,
    /// Session memory on or off for every turn (default: each session's own switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<bool>,
    /// Who may message the agent directly: `open`, `allowlist`, `pairing` or `disabled`
    /// (replaces the channel's `dmPolicy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_policy: Option<crate::channels::DmPolicyName>,
    /// Sender ids allowed to message the agent (replaces the channel's `allowFrom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_allow_from: Option<Vec<String>>,
    /// How long a pairing request stays pending, in ms (default 3600000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_pending_ttl_ms: Option<std::num::NonZeroU64>,
    /// Most pending pairing requests per channel (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_pending_max: Option<std::num::NonZeroU32>,
}

impl GatewayRunSettings {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `gateway.controlUi`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlUiConfig {
    /// Web origins (`scheme://host[:port]`) whose pages may open the gateway's WebSocket,
    /// besides the gateway's own (the page it serves at `/`): e.g. a reverse proxy's
    /// `"https://chat.example.com"`. `"*"` allows any page on the web to try (it still
    /// needs the token). A WebSocket or request with any other `Origin` is refused (403).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<OriginPattern>,
    /// The directory of OpenClaw's Control UI to serve at `/control/`: an installed openclaw
    /// npm package's `dist/control-ui` (e.g. `"~/node_modules/openclaw/dist/control-ui"`; a
    /// leading `~/` is the home directory). Unset, `/control/` says how to turn it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

impl ControlUiConfig {
    fn is_empty(&self) -> bool {
        self.allowed_origins.is_empty() && self.root.is_none()
    }
}

/// `gateway.http`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayHttpConfig {
    /// How long a client has to send a request's headers, and how long a kept-alive
    /// connection may sit idle before its next request, in ms (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub header_read_timeout_ms: Option<u64>,
    /// Most connections (HTTP and WebSocket) open at once (default 1024); past it a new
    /// connection is closed at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_connections: Option<usize>,
}

impl GatewayHttpConfig {
    fn is_empty(&self) -> bool {
        self.header_read_timeout_ms.is_none() && self.max_connections.is_none()
    }
}

impl GatewayConfig {
    /// `port`, defaulting to [`DEFAULT_GATEWAY_PORT`].
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(DEFAULT_GATEWAY_PORT)
    }

    /// `bind`, defaulting to loopback.
    pub fn bind(&self) -> GatewayBind {
        self.bind.unwrap_or(GatewayBind::Loopback)
    }

    /// `auth.token`, if set.
    pub fn token(&self) -> Option<&str> {
        self.auth.token.as_ref().map(pincer_base::Secret::expose)
    }
}

/// `gateway.auth`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayAuthConfig {
    /// The shared token clients present. `${NAME}` keeps it out of the file. When absent
    /// (and `PINCER_GATEWAY_TOKEN` is not set) a token is generated into
    /// `$PINCER_HOME/gateway-token` on first start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<pincer_base::Secret>,
}

impl GatewayAuthConfig {
    fn is_empty(&self) -> bool {
        self.token.is_none()
    }
}

/// Where the gateway listens: a name or an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayBind {
    /// 127.0.0.1: only this machine.
    Loopback,
    /// 0.0.0.0: every interface.
    Lan,
    /// One address of this machine.
    Ip(IpAddr),
}

/// What a bind value may be, for error messages.
const BIND_EXPECTED: &str = "\"loopback\", \"lan\" or an IP address such as \"192.168.1.5\"";

impl GatewayBind {
    /// The address to listen on.
    pub fn ip(self) -> IpAddr {
        match self {
            Self::Loopback => Ipv4Addr::LOCALHOST.into(),
            Self::Lan => Ipv4Addr::UNSPECIFIED.into(),
            Self::Ip(ip) => ip,
        }
    }
}

impl fmt::Display for GatewayBind {
    /// The canonical spelling, which [`FromStr`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Loopback => f.write_str("loopback"),
            Self::Lan => f.write_str("lan"),
            Self::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// A bind value that is neither a name nor an IP address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {BIND_EXPECTED}, found \"{0}\"")]
pub struct InvalidBind(pub String);

impl FromStr for GatewayBind {
    type Err = InvalidBind;

    /// `loopback` (also `localhost`), `lan`, or an IPv4/IPv6 address.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "loopback" | "localhost" => Ok(Self::Loopback),
            "lan" => Ok(Self::Lan),
            other => other
                .parse()
                .map(Self::Ip)
                .map_err(|_| InvalidBind(value.to_owned())),
        }
    }
}

impl Serialize for GatewayBind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for GatewayBind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BindVisitor;

        impl serde::de::Visitor<'_> for BindVisitor {
            type Value = GatewayBind;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(BIND_EXPECTED)
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                v.parse().map_err(|e: InvalidBind| E::custom(e))
            }
        }

        deserializer.deserialize_str(BindVisitor)
    }
}

impl JsonSchema for GatewayBind {
    fn schema_name() -> Cow<'static, str> {
        "GatewayBind".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "loopback (127.0.0.1), lan (0.0.0.0) or an IP address of this machine",
            "anyOf": [
                {"type": "string", "enum": ["loopback", "localhost", "lan"]},
                {"type": "string", "format": "ipv4"},
                {"type": "string", "format": "ipv6"},
            ],
        })
    }
}

/// A port from 1 to 65535, or `null` for none. Port 0 ("any free port") makes sense for
/// one run (`--port 0`), not as a setting clients must find again.
fn deserialize_port<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u16>, D::Error> {
    struct PortVisitor;

    const EXPECTED: &str = "a port number from 1 to 65535";

    impl<'de> serde::de::Visitor<'de> for PortVisitor {
        type Value = Option<u16>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            match u16::try_from(v) {
                Ok(port) if port != 0 => Ok(Some(port)),
                _ => Err(E::custom(format!("expected {EXPECTED}, found {v}"))),
            }
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format!("expected {EXPECTED}, found {v}"))),
            }
        }
    }

    deserializer.deserialize_option(PortVisitor)
}
