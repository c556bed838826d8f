//! Web origins and host names, as the gateway's browser checks compare them: one strict
//! parser for the config's lists (`gateway.controlUi.allowedOrigins`, `gateway.allowedHosts`)
//! and for what arrives in requests' `Origin` and `Host` headers, so both sides meet in the
//! same normal form (lowercase, no trailing dot, default ports made explicit, IPv6 without
//! brackets). Anything that is not plainly an origin or a host is refused, never guessed at.

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest host name (RFC 1035) and label.
const MAX_NAME: usize = 253;
const MAX_LABEL: usize = 63;

/// A value that is not an origin or a host as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidOrigin {
    #[error("`null` is the origin of a sandboxed or local page; it names no site")]
    Null,
    #[error(
        "expected an origin such as \"https://chat.example.com\" (scheme://host[:port], no path)"
    )]
    Malformed,
    #[error("invalid host: {0}")]
    Host(#[from] InvalidHost),
}

/// A host name or address that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidHost {
    #[error("empty host")]
    Empty,
    #[error("expected a host name, an IPv4 address or a bracketed IPv6 address")]
    Malformed,
    #[error("invalid port (expected 1 to 65535)")]
    Port,
}

/// A host: a lowercase DNS name without a trailing dot, or an IP address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// Parses the host part of an authority: `name`, `1.2.3.4` or `[::1]`.
    pub fn parse(text: &str) -> Result<Self, InvalidHost> {
        if text.is_empty() {
            return Err(InvalidHost::Empty);
        }
        if let Some(inner) = text.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or(InvalidHost::Malformed)?;
            // No zone ids (`%eth0`): they are local to one machine and never in a URL.
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Self::Ip(IpAddr::V6(ip)))
                .map_err(|_| InvalidHost::Malformed);
        }
        if let Ok(ip) = text.parse::<Ipv4Addr>() {
            return Ok(Self::Ip(IpAddr::V4(ip)));
        }
        let name = text.strip_suffix('.').unwrap_or(text);
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(InvalidHost::Malformed);
        }
        let mut last = "";
        for label in name.split('.') {
            let ok = !label.is_empty()
                && label.len() <= MAX_LABEL
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !ok {
                return Err(InvalidHost::Malformed);
            }
            last = label;
        }
        // A name ending in a number is an address in another spelling (`127.1`, `0x7f.1`),
        // which browsers rewrite before sending: refuse rather than guess what it means.
        if last.bytes().all(|b| b.is_ascii_digit())
            || (last.len() > 2 && last[..2].eq_ignore_ascii_case("0x"))
        {
            return Err(InvalidHost::Malformed);
        }
        Ok(Self::Name(name.to_ascii_lowercase()))
    }

    /// `localhost`, a name under `.localhost` (browsers resolve both to this machine
    /// without asking DNS), or a loopback address.
    pub fn is_loopback(&self) -> bool {
        match self {
            Self::Name(name) => name == "localhost" || name.ends_with(".localhost"),
            Self::Ip(ip) => ip.is_loopback(),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(name) => f.write_str(name),
            Self::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Self::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
        }
    }
}

/// Splits `host[:port]` (IPv6 hosts bracketed), the port checked.
fn split_port(text: &str) -> Result<(Host, Option<u16>), InvalidHost> {
    let (host, port) = match text.rfind([':', ']']) {
        Some(i) if text.as_bytes()[i] == b':' => (&text[..i], Some(&text[i + 1..])),
        _ => (text, None),
    };
    let port = match port {
        None => None,
        Some(digits) => {
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(InvalidHost::Port);
            }
            match digits.parse::<u16>() {
                Ok(p) if p != 0 => Some(p),
                _ => return Err(InvalidHost::Port),
            }
        }
    };
    Ok((Host::parse(host)?, port))
}

/// A request's `Host` header: the host and the port if one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: Host,
    pub port: Option<u16>,
}

impl FromStr for HostPort {
    type Err = InvalidHost;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (host, port) = split_port(text)?;
        Ok(Self { host, port })
    }
}

/// A web origin (`scheme://host[:port]`), with the port made explicit for `http` (80) and
/// `https` (443) so that `https://a.example` and `https://a.example:443` are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// Lowercase.
    pub scheme: String,
    pub host: Host,
    /// The port, explicit or the scheme's default; `None` for a scheme without one.
    pub port: Option<u16>,
}

impl Origin {
    /// The default port of `scheme`, for the schemes pages are served over.
    pub fn default_port(scheme: &str) -> Option<u16> {
        match scheme {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        }
    }
}

impl FromStr for Origin {
    type Err = InvalidOrigin;

    /// The serialisation browsers send (RFC 6454): no path, query, fragment or user info.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.eq_ignore_ascii_case("null") {
            return Err(InvalidOrigin::Null);
        }
        let (scheme, authority) = text.split_once("://").ok_or(InvalidOrigin::Malformed)?;
        let scheme_ok = scheme
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !scheme_ok || authority.contains(['/', '?', '#', '@', '\\']) {
            return Err(InvalidOrigin::Malformed);
        }
        let scheme = scheme.to_ascii_lowercase();
        let (host, port) = split_port(authority)?;
        Ok(Self {
            port: port.or_else(|| Self::default_port(&scheme)),
            scheme,
            host,
        })
    }
}

impl fmt::Display for Origin {
    /// Writes the default port out too: the value reads back equal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(port) if Self::default_port(&self.scheme) != Some(port) => write!(f, ":{port}"),
            _ => Ok(()),
        }
    }
}

/// An entry of `gateway.controlUi.allowedOrigins`: an exact origin, or `*` for any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginPattern {
    Any,
    Exact(Origin),
}

impl OriginPattern {
    pub fn matches(&self, origin: &Origin) -> bool {
        match self {
            Self::Any => true,
            Self::Exact(allowed) => allowed == origin,
        }
    }
}

impl FromStr for OriginPattern {
    type Err = InvalidOrigin;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "*" {
            return Ok(Self::Any);
        }
        text.parse().map(Self::Exact)
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Exact(origin) => origin.fmt(f),
        }
    }
}

/// An entry of `gateway.allowedHosts`: a host (`chat.example.com`, `192.168.1.5`), every
/// name under a domain (`*.example.com`, not the domain itself), or `*` for any host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    Any,
    Exact(Host),
    /// The domain (normal form) whose subdomains match.
    Subdomains(String),
}

impl HostPattern {
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (Self::Any, _) => true,
            (Self::Exact(allowed), host) => allowed == host,
            (Self::Subdomains(domain), Host::Name(name)) => name
                .strip_suffix(domain.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            (Self::Subdomains(_), Host::Ip(_)) => false,
        }
    }
}

impl FromStr for HostPattern {
    type Err = InvalidHost;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "*" {
            return Ok(Self::Any);
        }
        if let Some(domain) = text.strip_prefix("*.") {
            return match Host::parse(domain)? {
                Host::Name(name) => Ok(Self::Subdomains(name)),
                Host::Ip(_) => Err(InvalidHost::Malformed),
            };
        }
        Host::parse(text).map(Self::Exact)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Exact(host) => host.fmt(f),
            Self::Subdomains(domain) => write!(f, "*.{domain}"),
        }
    }
}

/// Serde and schema for a type read from a string through `FromStr`.
macro_rules! string_value {
    ($type:ty, $name:literal, $description:literal) => {
        impl Serialize for $type {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $type {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = Cow::<str>::deserialize(deserializer)?;
                text.parse().map_err(|e| {
                    serde::de::Error::custom(format!("\"{text}\" is not {}: {e}", $description))
                })
            }
        }

        impl JsonSchema for $type {
            fn schema_name() -> Cow<'static, str> {
                $name.into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "description": $description })
            }
        }
    };
}

string_value!(
    OriginPattern,
    "OriginPattern",
    "a web origin (scheme://host[:port]) or *"
);
string_value!(
    HostPattern,
    "HostPattern",
    "a host name, an IP address, *.domain or *"
);

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(text: &str) -> Origin {
        text.parse().unwrap()
    }

    fn host(text: &str) -> Result<HostPort, InvalidHost> {
        text.parse()
    }

    #[test]
    fn origins_in_normal_form() {
        let o = origin("HTTP://LocalHost:18789");
        assert_eq!(o.scheme, "http");
        assert_eq!(o.host, Host::Name("localhost".into()));
        assert_eq!(o.port, Some(18789));
        assert_eq!(origin("https://a.example"), origin("https://a.example:443"));
        assert_eq!(origin("http://a.example"), origin("http://a.example:80"));
        assert_ne!(origin("http://a.example"), origin("https://a.example"));
        assert_eq!(origin("http://a.example."), origin("http://a.example"));
        assert_eq!(
            origin("http://[::1]:8080").host,
            Host::Ip("::1".parse().unwrap())
        );
        assert_eq!(origin("http://[::1]:8080").to_string(), "http://[::1]:8080");
        assert_eq!(
            origin("https://a.example:443").to_string(),
            "https://a.example"
        );
        let ext = origin("chrome-extension://abcdef");
        assert_eq!((ext.scheme.as_str(), ext.port), ("chrome-extension", None));
    }

    #[test]
    fn malformed_origins() {
        assert_eq!("null".parse::<Origin>(), Err(InvalidOrigin::Null));
        assert_eq!("NULL".parse::<Origin>(), Err(InvalidOrigin::Null));
        for bad in [
            "",
            "localhost",
            "http:/a.example",
            "http://",
            "http://a.example/",
            "http://a.example/path",
            "http://a.example?x",
            "http://a.example#x",
            "http://user@a.example",
            "http://a.example:0",
            "http://a.example:65536",
            "http://a.example:",
            "http://a.example:+80",
            "http://a..example",
            "http://a example",
            "http://[::1",
            "http://::1:80",
            "http://[fe80::1%eth0]",
            "http://127.1",
            "http://0x7f.1",
            "http://é.example",
            "1http://a.example",
            "http://a.example\\b",
            " http://a.example",
        ] {
            assert!(bad.parse::<Origin>().is_err(), "{bad:?} was accepted");
        }
        let long = format!("http://{}.example", "a".repeat(64));
        assert!(long.parse::<Origin>().is_err());
    }

    #[test]
    fn host_headers() {
        let h = host("127.0.0.1:18789").unwrap();
        assert_eq!(h.host, Host::Ip("127.0.0.1".parse().unwrap()));
        assert_eq!(h.port, Some(18789));
        assert_eq!(host("[::1]").unwrap().port, None);
        assert_eq!(
            host("[::1]:1").unwrap().host,
            Host::Ip("::1".parse().unwrap())
        );
        assert_eq!(
            host("Attacker.Example.").unwrap().host,
            Host::Name("attacker.example".into())
        );
        assert_eq!(host(""), Err(InvalidHost::Empty));
        assert_eq!(host(":80"), Err(InvalidHost::Empty));
        assert_eq!(host("a.example:x"), Err(InvalidHost::Port));
        assert_eq!(host("a.example:99999"), Err(InvalidHost::Port));
        assert_eq!(host("::1"), Err(InvalidHost::Malformed));
        assert_eq!(host("[::1]x"), Err(InvalidHost::Malformed));
        assert_eq!(host("a.example:80:80"), Err(InvalidHost::Malformed));
        assert_eq!(host("."), Err(InvalidHost::Malformed));
        assert_eq!(host("a/b"), Err(InvalidHost::Malformed));
        assert_eq!(host("a\0b"), Err(InvalidHost::Malformed));
    }

    #[test]
    fn loopback_hosts() {
        for name in [
            "localhost",
            "LOCALHOST.",
            "app.localhost",
            "127.0.0.2",
            "[::1]",
        ] {
            assert!(host(name).unwrap().host.is_loopback(), "{name}");
        }
        for name in ["localhost.example", "notlocalhost", "10.0.0.1", "[::2]"] {
            assert!(!host(name).unwrap().host.is_loopback(), "{name}");
        }
    }

    #[test]
    fn patterns() {
        let any: HostPattern = "*".parse().unwrap();
        let sub: HostPattern = "*.Example.com".parse().unwrap();
        let exact: HostPattern = "chat.example.com".parse().unwrap();
        let name = |n: &str| Host::parse(n).unwrap();
        assert!(any.matches(&name("anything.example")));
        assert!(sub.matches(&name("a.example.com")));
        assert!(sub.matches(&name("a.b.example.com")));
        assert!(!sub.matches(&name("example.com")));
        assert!(!sub.matches(&name("badexample.com")));
        assert!(exact.matches(&name("CHAT.example.com.")));
        assert!(!exact.matches(&name("a.chat.example.com")));
        assert_eq!(sub.to_string(), "*.example.com");
        assert!("*.1.2.3.4".parse::<HostPattern>().is_err());
        assert!("".parse::<HostPattern>().is_err());
        assert!("a.example:80".parse::<HostPattern>().is_err());

        let allowed: OriginPattern = "https://chat.example.com:443".parse().unwrap();
        assert!(allowed.matches(&origin("https://chat.example.com")));
        assert!(!allowed.matches(&origin("http://chat.example.com")));
        assert!(!allowed.matches(&origin("https://chat.example.com:8443")));
        assert!(
            "*".parse::<OriginPattern>()
                .unwrap()
                .matches(&origin("http://x.example"))
        );
        assert!("null".parse::<OriginPattern>().is_err());
    }

    #[test]
    fn config_values_read_back() {
        let list: Vec<OriginPattern> =
            serde_json::from_str(r#"["*", "https://a.example:443", "http://[::1]:8"]"#).unwrap();
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            r#"["*","https://a.example","http://[::1]:8"]"#
        );
        let err = serde_json::from_str::<Vec<HostPattern>>(r#"["a.example/x"]"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"a.example/x\" is not a host name"),
            "{err}"
        );
    }
}
