//! The SSRF policy: which URLs and addresses the agent's web tools may reach. A page the
//! agent is asked to fetch must not be a way into the machine or its network (the loopback
//! admin port, the LAN router, a cloud's metadata service), so every address is checked
//! against [`blocked_class`] unless the user allowed it ([`NetworkPolicy`]).
//!
//! Three places check: [`NetworkPolicy::check_url`] (the URL as written: scheme, user info,
//! literal IPs, names such as `localhost`), the DNS resolver handed to reqwest
//! ([`NetworkPolicy::resolver`]: the addresses a name resolves to, and only those it checked
//! are connected to, so no second lookup can be rebound), and the redirect policy
//! ([`NetworkPolicy::redirect_policy`]: each hop's URL again). The browser calls
//! [`NetworkPolicy::check_navigation`] before it navigates.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

/// How long one DNS lookup may take before the fetch is refused.
pub const DNS_TIMEOUT: Duration = Duration::from_secs(10);

/// Most redirects one fetch follows (the sixth is refused).
pub const MAX_REDIRECTS: usize = 5;

/// What the user allows beyond the public internet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// Reach private, loopback, link-local and other non-public addresses (not cloud
    /// metadata services: those need `allow_hosts`).
    pub allow_private_network: bool,
    /// Host names or IP literals reached whatever they resolve to (case-insensitive, exact;
    /// `*.example.com` matches the subdomains of example.com).
    pub allow_hosts: Vec<String>,
    /// The config section the two opt-outs above live in, named by refusals so they say
    /// what to set: [`FETCH_SETTINGS`] (the default) or [`BROWSER_SETTINGS`].
    pub settings: &'static str,
}

/// Where `web_fetch`'s opt-outs are configured.
pub const FETCH_SETTINGS: &str = "tools.web.fetch";
/// Where the browser's navigation opt-outs are configured.
pub const BROWSER_SETTINGS: &str = "browser";

impl Default for NetworkPolicy {
    fn default() -> Self {
        Self {
            allow_private_network: false,
            allow_hosts: Vec::new(),
            settings: FETCH_SETTINGS,
        }
    }
}

/// Why an address is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    Loopback,
    Private,
    LinkLocal,
    /// 100.64.0.0/10, shared by carrier-grade NATs.
    CarrierGradeNat,
    Multicast,
    /// 0.0.0.0/8 and `::`.
    Unspecified,
    Broadcast,
    Documentation,
    Benchmarking,
    Reserved,
    /// 169.254.169.254, fd00:ec2::254, 100.100.100.200 and metadata.google.internal.
    CloudMetadata,
    /// 2001::/32: the tunnel's real endpoint is hidden in the address.
    Teredo,
    /// A name that only ever means this machine or its network (`localhost`, `*.local`,
    /// `*.internal`).
    LocalName,
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Loopback => "loopback",
            Self::Private => "private network",
            Self::LinkLocal => "link-local",
            Self::CarrierGradeNat => "carrier-grade NAT (100.64.0.0/10)",
            Self::Multicast => "multicast",
            Self::Unspecified => "unspecified (\"this network\")",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation-only",
            Self::Benchmarking => "benchmarking",
            Self::Reserved => "reserved",
            Self::CloudMetadata => "cloud metadata service",
            Self::Teredo => "Teredo tunnel",
            Self::LocalName => "local host name",
        })
    }
}

/// What the policy refused, said so the user knows how to allow it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsrfError {
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("refused {url:?}: only http and https URLs can be fetched, not {scheme}:")]
    Scheme { url: String, scheme: String },
    #[error("refused {url:?}: URLs with a user name or password are not fetched")]
    UserInfo { url: String },
    #[error("refused {url:?}: the URL has no host")]
    NoHost { url: String },
    #[error("refused {host}: it is {}; {}", describe(*addr, *class), how_to_allow(host, *class, settings))]
    Blocked {
        host: String,
        /// The config section that could allow it ([`NetworkPolicy::settings`]).
        settings: &'static str,
        /// `None` for a refused name (`localhost`), the address otherwise.
        addr: Option<IpAddr>,
        class: AddressClass,
    },
    #[error("could not resolve {host}: {reason}")]
    Resolve { host: String, reason: String },
    #[error("refused redirect {hop} to {url:?}: {source}")]
    Redirect {
        hop: usize,
        url: String,
        #[source]
        source: Box<SsrfError>,
    },
    #[error("stopped after {max} redirects (the next one pointed to {url:?})")]
    TooManyRedirects { max: usize, url: String },
}

fn describe(addr: Option<IpAddr>, class: AddressClass) -> String {
    match addr {
        Some(addr) => format!("{addr}, a {class} address"),
        None => format!("a {class}"),
    }
}

fn how_to_allow(host: &str, class: AddressClass, settings: &str) -> String {
    let list = format!("add \"{host}\" to {settings}.allowHosts");
    if class == AddressClass::CloudMetadata {
        format!("to reach it anyway {list}")
    } else {
        format!("to allow it set {settings}.allowPrivateNetwork: true or {list}")
    }
}

/// The class of a non-public address, `None` for a public one.
pub fn blocked_class(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<AddressClass> {
    use AddressClass::*;
    let [a, b, c, _] = ip.octets();
    let in_net = |net: [u8; 4], bits: u32| {
        let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
        u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
    };
    Some(match () {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) => {
            CloudMetadata
        }
        _ if a == 0 => Unspecified,
        _ if a == 127 => Loopback,
        _ if a == 10 || in_net([172, 16, 0, 0], 12) || (a == 192 && b == 168) => Private,
        _ if a == 169 && b == 254 => LinkLocal,
        _ if in_net([100, 64, 0, 0], 10) => CarrierGradeNat,
        _ if ip.is_broadcast() => Broadcast,
        _ if in_net([224, 0, 0, 0], 4) => Multicast,
        _ if in_net([240, 0, 0, 0], 4) => Reserved,
        _ if (a, b, c) == (192, 0, 2)
            || (a, b, c) == (198, 51, 100)
            || (a, b, c) == (203, 0, 113) =>
        {
            Documentation
        }
        _ if in_net([198, 18, 0, 0], 15) => Benchmarking,
        // 192.0.0.0/24 (IETF protocol assignments) and 192.88.99.0/24 (the retired 6to4
        // relay anycast).
        _ if (a, b, c) == (192, 0, 0) || (a, b, c) == (192, 88, 99) => Reserved,
        _ => return None,
    })
}

fn v6_class(ip: Ipv6Addr) -> Option<AddressClass> {
    use AddressClass::*;
    let seg = ip.segments();
    let embedded_v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip == Ipv6Addr::UNSPECIFIED {
        return Some(Unspecified);
    }
    if ip == Ipv6Addr::LOCALHOST {
        return Some(Loopback);
    }
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254) {
        return Some(CloudMetadata);
    }
    // ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d
    // (IPv4-translated) reach the IPv4 address: judge that.
    if seg[..5] == [0; 5] && (seg[5] == 0 || seg[5] == 0xffff)
        || seg[..4] == [0; 4] && seg[4] == 0xffff && seg[5] == 0
    {
        return v4_class(embedded_v4(seg[6], seg[7]));
    }
    // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address; the local-use prefix
    // 64:ff9b:1::/48 is a site's own.
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return v4_class(embedded_v4(seg[6], seg[7]));
    }
    if seg[..3] == [0x64, 0xff9b, 1] {
        return Some(Private);
    }
    // 6to4 (2002::/16) tunnels to the IPv4 address in its next 32 bits.
    if seg[0] == 0x2002 {
        return v4_class(embedded_v4(seg[1], seg[2]));
    }
    Some(match seg[0] {
        0x2001 if seg[1] == 0 => Teredo,
        0x2001 if seg[1] == 0x0db8 => Documentation,
        0x2001 if seg[1] == 2 && seg[2] == 0 => Benchmarking,
        // ORCHID (2001:10::/28).
        0x2001 if seg[1] & 0xfff0 == 0x0010 => Reserved,
        // 3fff::/20 is documentation too (RFC 9637).
        0x3fff if seg[1] & 0xf000 == 0 => Documentation,
        s if s & 0xfe00 == 0xfc00 => Private,
        s if s & 0xffc0 == 0xfe80 => LinkLocal,
        // fec0::/10: the deprecated site-local addresses, a private network's.
        s if s & 0xffc0 == 0xfec0 => Private,
        s if s & 0xff00 == 0xff00 => Multicast,
        // Only 2000::/3 is global unicast; the rest is unassigned or special.
        s if s & 0xe000 == 0x2000 => return None,
        _ => Reserved,
    })
}

/// Names that mean this machine, its network or a metadata service whatever DNS says.
fn name_class(host: &str) -> Option<AddressClass> {
    let host = host.trim_end_matches('.');
    if host == "metadata.google.internal" {
        Some(AddressClass::CloudMetadata)
    } else if host == "localhost"
        || host == "localhost.localdomain"
        || [".localhost", ".local", ".internal"]
            .iter()
            .any(|s| host.ends_with(s))
    {
        Some(AddressClass::LocalName)
    } else {
        None
    }
}

impl NetworkPolicy {
    /// Whether `host` (a name or an IP literal, IPv6 with or without brackets) is in
    /// `allow_hosts`.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = normalize_host(host);
        self.allow_hosts.iter().any(|entry| {
            let entry = normalize_host(entry);
            match entry.strip_prefix("*.") {
                Some(parent) => {
                    host.len() > parent.len() + 1
                        && host.ends_with(parent)
                        && host.as_bytes()[host.len() - parent.len() - 1] == b'.'
                }
                None => !entry.is_empty() && entry == host,
            }
        })
    }

    /// Whether the policy lets a `class` address or name be reached for `host`.
    fn permits(&self, host: &str, class: AddressClass) -> bool {
        self.host_allowed(host)
            || (self.allow_private_network && class != AddressClass::CloudMetadata)
    }

    /// Checks every address `host` resolved to: one blocked address refuses the host (a DNS
    /// answer mixing public and private addresses is an attack, not a choice).
    pub fn check_addresses(&self, host: &str, addrs: &[IpAddr]) -> Result<(), SsrfError> {
        if addrs.is_empty() {
            return Err(SsrfError::Resolve {
                host: host.to_owned(),
                reason: "no addresses".to_owned(),
            });
        }
        for &addr in addrs {
            if let Some(class) = blocked_class(addr)
                && !self.permits(host, class)
            {
                return Err(SsrfError::Blocked {
                    host: host.to_owned(),
                    settings: self.settings,
                    addr: Some(addr),
                    class,
                });
            }
        }
        Ok(())
    }

    /// Parses `url` and checks what can be checked without DNS: http or https only, no
    /// user info, a host, and a literal IP (in any form the URL parser normalises: decimal,
    /// octal, hex IPv4) or a local name against the table.
    pub fn check_url(&self, url: &str) -> Result<Url, SsrfError> {
        let parsed = Url::parse(url.trim()).map_err(|e| SsrfError::InvalidUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(SsrfError::Scheme {
                url: url.to_owned(),
                scheme: parsed.scheme().to_owned(),
            });
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(SsrfError::UserInfo {
                url: url.to_owned(),
            });
        }
        let (host, class) = match parsed.host() {
            None => {
                return Err(SsrfError::NoHost {
                    url: url.to_owned(),
                });
            }
            Some(Host::Domain(name)) => (name.to_owned(), name_class(name)),
            Some(Host::Ipv4(ip)) => (ip.to_string(), v4_class(ip)),
            Some(Host::Ipv6(ip)) => (ip.to_string(), v6_class(ip)),
        };
        if let Some(class) = class
            && !self.permits(&host, class)
        {
            let addr = parsed.host().and_then(|h| match h {
                Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
                Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
                Host::Domain(_) => None,
            });
            return Err(SsrfError::Blocked {
                host,
                settings: self.settings,
                addr,
                class,
            });
        }
        Ok(parsed)
    }

    /// The addresses `url`'s host resolves to, each checked (all of them must pass).
    /// [`Self::check_url`] should have passed first.
    pub async fn resolve_checked(&self, url: &Url) -> Result<Vec<SocketAddr>, SsrfError> {
        let port = url.port_or_known_default().unwrap_or(80);
        match url.host() {
            None => Err(SsrfError::NoHost {
                url: url.to_string(),
            }),
            Some(Host::Ipv4(ip)) => self.literal(IpAddr::V4(ip), port),
            Some(Host::Ipv6(ip)) => self.literal(IpAddr::V6(ip), port),
            Some(Host::Domain(name)) => {
                let addrs = lookup(name, port).await?;
                if !self.host_allowed(name) {
                    let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
                    self.check_addresses(name, &ips)?;
                }
                Ok(addrs)
            }
        }
    }

    fn literal(&self, ip: IpAddr, port: u16) -> Result<Vec<SocketAddr>, SsrfError> {
        self.check_addresses(&ip.to_string(), &[ip])?;
        Ok(vec![SocketAddr::new(ip, port)])
    }

    /// What the browser calls before navigating: [`Self::check_url`], then
    /// [`Self::resolve_checked`].
    pub async fn check_navigation(&self, url: &str) -> Result<Url, SsrfError> {
        let parsed = self.check_url(url)?;
        self.resolve_checked(&parsed).await?;
        Ok(parsed)
    }

    /// A DNS resolver for reqwest that hands it only addresses this policy checked.
    pub fn resolver(&self) -> Arc<SsrfResolver> {
        Arc::new(SsrfResolver {
            policy: self.clone(),
        })
    }

    /// A redirect policy: at most [`MAX_REDIRECTS`] hops, each target URL checked with
    /// [`Self::check_url`] (the resolver checks a target's name when it connects).
    pub fn redirect_policy(&self) -> reqwest::redirect::Policy {
        let policy = self.clone();
        reqwest::redirect::Policy::custom(move |attempt| {
            // `previous` starts with the first URL, which was not a redirect.
            let hop = attempt.previous().len();
            let next = attempt.url().to_string();
            if hop > MAX_REDIRECTS {
                return attempt.error(SsrfError::TooManyRedirects {
                    max: MAX_REDIRECTS,
                    url: next,
                });
            }
            match policy.check_url(&next) {
                Ok(_) => attempt.follow(),
                Err(e) => attempt.error(SsrfError::Redirect {
                    hop,
                    url: next,
                    source: Box::new(e),
                }),
            }
        })
    }
}

/// Lower case, without IPv6 brackets or a trailing dot.
fn normalize_host(host: &str) -> String {
    let host = host.trim();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// `name`'s addresses through the system resolver, within [`DNS_TIMEOUT`].
async fn lookup(name: &str, port: u16) -> Result<Vec<SocketAddr>, SsrfError> {
    let failed = |reason: String| SsrfError::Resolve {
        host: name.to_owned(),
        reason,
    };
    let found = tokio::time::timeout(DNS_TIMEOUT, tokio::net::lookup_host((name, port)))
        .await
        .map_err(|_| failed(format!("no answer within {} s", DNS_TIMEOUT.as_secs())))?
        .map_err(|e| failed(e.to_string()))?;
    Ok(found.collect())
}

/// reqwest's DNS resolver under a [`NetworkPolicy`]: resolves, checks every address, and
/// returns only what it checked, so the connection goes to a checked address.
#[derive(Debug, Clone)]
pub struct SsrfResolver {
    policy: NetworkPolicy,
}

impl reqwest::dns::Resolve for SsrfResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            if let Some(class) = name_class(&normalize_host(&name))
                && !policy.permits(&name, class)
            {
                let refused = SsrfError::Blocked {
                    host: name,
                    settings: policy.settings,
                    addr: None,
                    class,
                };
                return Err(refused.into());
            }
            // Port 0: reqwest puts in the URL's port.
            let addrs = lookup(&name, 0).await?;
            if !policy.host_allowed(&name) {
                let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
                policy.check_addresses(&name, &ips)?;
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The [`SsrfError`] somewhere in `error`'s chain of causes (reqwest wraps what the
/// resolver and the redirect policy return).
pub fn find_ssrf_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a SsrfError> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<SsrfError>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}
