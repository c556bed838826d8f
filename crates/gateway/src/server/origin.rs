//! Which browsers may reach the gateway, checked on every request before its route:
//! - `Host` must name this gateway: `localhost`, `*.localhost`, an IP address, or one of
//!   `gateway.allowedHosts`. A page whose own host name was re-pointed at this machine (DNS
//!   rebinding) sends its own name and is refused (421). IP addresses are always fine: a
//!   page can only carry an address as its origin by being served from it, so rebinding
//!   needs a name.
//! - A request with an `Origin` header comes from a web page (every WebSocket a page opens,
//!   every cross-site POST); it must be the gateway's own origin (the same host and port as
//!   the `Host` it was sent to, i.e. the page at `/`) or one of
//!   `gateway.controlUi.allowedOrigins`, else 403. Clients that are not browsers (the CLI,
//!   node `ws`, pi) send no `Origin` and are not affected.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use pincer_config::origin::{Host, HostPattern, HostPort, Origin, OriginPattern};

use super::Gateway;

/// The hosts and origins the gateway accepts besides its own.
#[derive(Debug, Clone, Default)]
pub struct BrowserPolicy {
    pub allowed_hosts: Vec<HostPattern>,
    pub allowed_origins: Vec<OriginPattern>,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A `Host` (or absolute URI) that is not a host, or more than one.
    MalformedHost,
    /// A host this gateway does not answer to.
    ForeignHost(Host),
    /// An `Origin` that is not an origin (`null`, a path, more than one, …).
    MalformedOrigin,
    /// A web page from another site.
    ForeignOrigin(Origin),
}

impl BrowserPolicy {
    /// Checks a request's `Host` (and the authority of an absolute URI) and `Origin`.
    pub fn check(&self, headers: &HeaderMap, uri_authority: Option<&str>) -> Result<(), Refused> {
        let host = match single(headers, &header::HOST).map_err(|_| Refused::MalformedHost)? {
            Some(text) => Some(self.host(text)?),
            // HTTP/1.0 clients may send none; browsers always do.
            None => None,
        };
        if let Some(authority) = uri_authority {
            self.host(authority)?;
        }
        match single(headers, &header::ORIGIN).map_err(|_| Refused::MalformedOrigin)? {
            Some(origin) => self.origin(origin, host.as_ref()),
            None => Ok(()),
        }
    }

    /// A `Host` value this gateway answers to.
    fn host(&self, text: &str) -> Result<HostPort, Refused> {
        let host: HostPort = text.parse().map_err(|_| Refused::MalformedHost)?;
        let ours = matches!(host.host, Host::Ip(_))
            || host.host.is_loopback()
            || self.allowed_hosts.iter().any(|p| p.matches(&host.host));
        if ours {
            Ok(host)
        } else {
            Err(Refused::ForeignHost(host.host))
        }
    }

    /// An `Origin` value: the gateway's own (same host and port as the request's checked
    /// `Host`) or an allowed one.
    fn origin(&self, text: &str, host: Option<&HostPort>) -> Result<(), Refused> {
        let origin: Origin = text.parse().map_err(|_| Refused::MalformedOrigin)?;
        let own = host.is_some_and(|h| {
            h.host == origin.host && h.port.or(Origin::default_port(&origin.scheme)) == origin.port
        }) && matches!(origin.scheme.as_str(), "http" | "https");
        if own || self.allowed_origins.iter().any(|p| p.matches(&origin)) {
            Ok(())
        } else {
            Err(Refused::ForeignOrigin(origin))
        }
    }
}

/// More than one value of a header that may appear once, or one that is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NotSingle;

/// The value of a header that may appear at most once, as text. Each caller picks the error
/// it answers a [`NotSingle`] with.
pub(super) fn single<'a>(
    headers: &'a HeaderMap,
    name: &header::HeaderName,
) -> Result<Option<&'a str>, NotSingle> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(NotSingle);
    }
    first.to_str().map(Some).map_err(|_| NotSingle)
}

impl Refused {
    /// The status and a message saying what to change.
    pub fn parts(&self) -> (StatusCode, String) {
        match self {
            Self::MalformedHost => (StatusCode::BAD_REQUEST, "malformed Host header".to_owned()),
            Self::ForeignHost(host) => (
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "this gateway does not answer to the host name \"{host}\"; if it is one of \
                     this machine's names, add it to gateway.allowedHosts"
                ),
            ),
            Self::MalformedOrigin => (
                StatusCode::FORBIDDEN,
                "requests from this page are not allowed (its Origin names no site)".to_owned(),
            ),
            Self::ForeignOrigin(origin) => (
                StatusCode::FORBIDDEN,
                format!(
                    "requests from pages of {origin} are not allowed; to allow that site, add \
                     it to gateway.controlUi.allowedOrigins"
                ),
            ),
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, message) = self.parts();
        (
            status,
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                ),
                (
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            format!("{message}\n"),
        )
            .into_response()
    }
}

/// The middleware in front of every route.
pub(super) async fn guard(
    State(gw): State<Arc<Gateway>>,
    request: Request,
    next: Next,
) -> Response {
    let authority = request.uri().authority().map(|a| a.as_str());
    match gw.browser.check(request.headers(), authority) {
        Ok(()) => next.run(request).await,
        Err(refused) => {
            tracing::debug!(path = %request.uri().path(), refused = ?refused, "browser check refused a request");
            refused.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value.as_bytes()).unwrap(),
            );
        }
        map
    }

    fn policy(hosts: &[&str], origins: &[&str]) -> BrowserPolicy {
        BrowserPolicy {
            allowed_hosts: hosts.iter().map(|h| h.parse().unwrap()).collect(),
            allowed_origins: origins.iter().map(|o| o.parse().unwrap()).collect(),
        }
    }

    fn check(p: &BrowserPolicy, pairs: &[(&str, &str)]) -> Result<(), Refused> {
        p.check(&headers(pairs), None)
    }

    fn status(r: Result<(), Refused>) -> u16 {
        r.map_or_else(|e| e.parts().0.as_u16(), |()| 200)
    }

    #[test]
    fn hosts() {
        let p = BrowserPolicy::default();
        for ok in [
            "127.0.0.1",
            "127.0.0.1:18789",
            "localhost:18789",
            "LOCALHOST.:1",
            "chat.localhost",
            "[::1]:18789",
            "[::1]",
            "192.168.1.5:18789",
            "[2001:db8::1]",
        ] {
            assert_eq!(check(&p, &[("host", ok)]), Ok(()), "{ok}");
        }
        assert_eq!(check(&p, &[]), Ok(()), "HTTP/1.0 without Host");
        assert_eq!(
            check(&p, &[("host", "attacker.example:18789")]),
            Err(Refused::ForeignHost(Host::Name("attacker.example".into())))
        );
        for (bad, code) in [
            ("attacker.example", 421),
            ("localhost.attacker.example", 421),
            ("", 400),
            ("::1", 400),
            ("127.0.0.1:0", 400),
            ("127.0.0.1:x", 400),
            ("a b", 400),
            ("127.1", 400),
        ] {
            assert_eq!(status(check(&p, &[("host", bad)])), code, "{bad:?}");
        }
        assert_eq!(
            status(check(&p, &[("host", "127.0.0.1"), ("host", "127.0.0.1")])),
            400
        );
        assert_eq!(
            status(check(&p, &[("host", "127.0.0.1\u{e9}")])),
            400,
            "bytes that are not text"
        );
        assert_eq!(
            status(p.check(&headers(&[("host", "127.0.0.1")]), Some("attacker.example"))),
            421,
            "an absolute URI's authority is checked too"
        );
        let p = policy(&["gateway.lan", "*.example.com"], &[]);
        assert_eq!(check(&p, &[("host", "Gateway.LAN:18789")]), Ok(()));
        assert_eq!(check(&p, &[("host", "chat.example.com")]), Ok(()));
        assert_eq!(status(check(&p, &[("host", "example.com")])), 421);
    }

    #[test]
    fn origins() {
        let p = BrowserPolicy::default();
        let at =
            |host: &str, origin: &str| status(check(&p, &[("host", host), ("origin", origin)]));
        // The page the gateway serves, however it was reached.
        assert_eq!(at("127.0.0.1:18789", "http://127.0.0.1:18789"), 200);
        assert_eq!(at("localhost:18789", "http://LOCALHOST:18789"), 200);
        assert_eq!(at("[::1]:18789", "http://[::1]:18789"), 200);
        assert_eq!(at("localhost", "http://localhost"), 200);
        assert_eq!(at("localhost", "https://localhost:443"), 200);
        assert_eq!(at("192.168.1.5:18789", "http://192.168.1.5:18789"), 200);
        // Other pages, also other pages on this machine.
        assert_eq!(at("127.0.0.1:18789", "https://evil.example"), 403);
        assert_eq!(at("127.0.0.1:18789", "http://127.0.0.1:3000"), 403);
        assert_eq!(at("127.0.0.1:18789", "http://localhost:18789"), 403);
        assert_eq!(at("localhost:18789", "http://localhost"), 403);
        assert_eq!(at("localhost:18789", "file://localhost:18789"), 403);
        assert_eq!(at("127.0.0.1:18789", "null"), 403);
        assert_eq!(at("127.0.0.1:18789", "http://127.0.0.1:18789/"), 403);
        assert_eq!(at("127.0.0.1:18789", ""), 403);
        assert_eq!(at("127.0.0.1:18789", "chrome-extension://abc"), 403);
        assert_eq!(
            status(check(&p, &[("origin", "http://127.0.0.1:18789")])),
            403,
            "no Host to be the same origin as"
        );
        assert_eq!(
            status(check(
                &p,
                &[
                    ("host", "127.0.0.1:18789"),
                    ("origin", "http://127.0.0.1:18789"),
                    ("origin", "http://127.0.0.1:18789")
                ]
            )),
            403
        );
        // Rebinding: the page's origin matches the host it names, which is refused.
        assert_eq!(
            at("attacker.example:18789", "http://attacker.example:18789"),
            421
        );

        let p = policy(&[], &["https://chat.example.com", "chrome-extension://abc"]);
        let at = |origin: &str| {
            status(check(
                &p,
                &[("host", "127.0.0.1:18789"), ("origin", origin)],
            ))
        };
        assert_eq!(at("https://chat.example.com:443"), 200);
        assert_eq!(at("chrome-extension://abc"), 200);
        assert_eq!(at("http://chat.example.com"), 403);
        let any = policy(&[], &["*"]);
        assert_eq!(
            status(check(
                &any,
                &[("host", "127.0.0.1"), ("origin", "https://evil.example")]
            )),
            200
        );
        assert_eq!(
            status(check(&any, &[("host", "127.0.0.1"), ("origin", "null")])),
            403,
            "`*` still needs an origin"
        );
    }
}
