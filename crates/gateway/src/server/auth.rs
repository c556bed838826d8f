//! Token auth for `connect` and the HTTP API (`Authorization: Bearer`), with OpenClaw's
//! failed-auth limiter: after 10 failures within 60 s an address is locked out for 5 minutes.
//! Loopback is exempt (a local client that mistypes the token is not an attack, and locking
//! it out would lock out the owner) unless the attempt comes from a web page (it carries an
//! `Origin` header): any site the owner visits runs on loopback too, and may guess tokens
//! (OpenClaw: "browser-origin attempts are always throttled").

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use serde_json::json;

use super::frames::{MethodError, codes};

const WINDOW: Duration = Duration::from_secs(60);
const MAX_FAILURES: usize = 10;
const LOCKOUT: Duration = Duration::from_secs(300);

/// A client presenting a token, as the limiter sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub addr: SocketAddr,
    /// The request came from a web page (it had an `Origin` header).
    pub browser: bool,
}

impl Peer {
    /// A client at `addr` whose request carried `headers`: a web page if it had an `Origin`.
    pub fn new(addr: SocketAddr, headers: &HeaderMap) -> Self {
        Self {
            addr,
            browser: headers.contains_key(header::ORIGIN),
        }
    }

    pub fn ip(&self) -> IpAddr {
        self.addr.ip()
    }

    /// Whether its failures count and can lock it out.
    fn limited(&self) -> bool {
        self.browser || !self.addr.ip().is_loopback()
    }
}

/// The gateway's auth.
pub struct Auth {
    token: Option<pincer_base::Secret>,
    failures: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
}

impl Auth {
    /// `None` turns auth off (allowed only on loopback; the server checks).
    pub fn new(token: Option<pincer_base::Secret>) -> Self {
        Self {
            token,
            failures: Mutex::default(),
        }
    }

    /// `token` or `none`, as `hello-ok` reports it.
    pub fn mode(&self) -> &'static str {
        if self.token.is_some() {
            "token"
        } else {
            "none"
        }
    }

    /// Checks the token `peer` presented in `connect`.
    pub fn check(&self, given: Option<&str>, peer: Peer) -> Result<(), MethodError> {
        self.verify(given, peer).map_err(|refusal| match refusal {
            Refusal::RateLimited { retry_after } => MethodError {
                code: codes::UNAVAILABLE,
                message: "too many failed auth attempts; try again later".into(),
                details: Some(
                    json!({ "code": "AUTH_RATE_LIMITED", "retryAfterMs": retry_after.as_millis() as u64 }),
                ),
            },
            Refusal::Missing | Refusal::Mismatch => {
                let (code, message) = if refusal == Refusal::Missing {
                    (
                        "AUTH_TOKEN_MISSING",
                        "this gateway needs a token: pass auth.token in connect",
                    )
                } else {
                    (
                        "AUTH_TOKEN_MISMATCH",
                        "the token does not match this gateway's",
                    )
                };
                MethodError {
                    code: codes::FORBIDDEN,
                    message: message.into(),
                    details: Some(json!({
                        "code": code,
                        "recommendedNextStep": "use the token `pincer gateway token` prints on the gateway's machine",
                    })),
                }
            }
        })
    }

    /// Checks an HTTP `Authorization` header (`Bearer <token>`, scheme case-insensitive)
    /// with the same comparison and limiter as `connect`.
    pub(crate) fn check_bearer(
        &self,
        authorization: Option<&str>,
        peer: Peer,
    ) -> Result<(), Refusal> {
        let token = authorization.and_then(|raw| {
            let raw = raw.trim();
            let (scheme, rest) = raw.split_once(' ')?;
            let token = rest.trim();
            (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
        });
        self.verify(token, peer)
    }

    fn verify(&self, given: Option<&str>, peer: Peer) -> Result<(), Refusal> {
        let Some(expected) = &self.token else {
            return Ok(());
        };
        let now = Instant::now();
        let ip = peer.ip();
        let limited = peer.limited();
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if limited && let Some(list) = failures.get_mut(&ip) {
            while list
                .front()
                .is_some_and(|t| now.duration_since(*t) > LOCKOUT)
            {
                list.pop_front();
            }
            let recent = list
                .iter()
                .filter(|t| now.duration_since(**t) <= WINDOW)
                .count();
            if recent >= MAX_FAILURES || list.len() >= MAX_FAILURES * 3 {
                let retry_after = list
                    .back()
                    .map_or(LOCKOUT, |t| LOCKOUT.saturating_sub(now.duration_since(*t)));
                return Err(Refusal::RateLimited { retry_after });
            }
        }
        if given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.expose().as_bytes())) {
            return Ok(());
        }
        if limited {
            failures.entry(ip).or_default().push_back(now);
        }
        Err(if given.is_none() {
            Refusal::Missing
        } else {
            Refusal::Mismatch
        })
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No token was presented.
    Missing,
    /// A token was presented and is wrong.
    Mismatch,
    /// Too many failures from this address; the caller may retry after this long.
    RateLimited { retry_after: Duration },
}

/// Compares without an early exit, so the time taken says nothing about where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: [u8; 4]) -> Peer {
        Peer::new(SocketAddr::from((ip, 40000)), &HeaderMap::new())
    }

    #[test]
    fn tokens_and_the_limiter() {
        let auth = Auth::new(Some("secret".into()));
        let lan = at([10, 0, 0, 2]);
        let local = at([127, 0, 0, 1]);
        assert!(auth.check(Some("secret"), lan).is_ok());
        assert_eq!(auth.check(None, lan).unwrap_err().code, codes::FORBIDDEN);
        for _ in 0..9 {
            assert_eq!(
                auth.check(Some("nope"), lan).unwrap_err().code,
                codes::FORBIDDEN
            );
        }
        // Ten failures: locked out, even with the right token.
        assert_eq!(
            auth.check(Some("secret"), lan).unwrap_err().code,
            codes::UNAVAILABLE
        );
        for _ in 0..20 {
            assert_eq!(
                auth.check(Some("nope"), local).unwrap_err().code,
                codes::FORBIDDEN
            );
        }
        assert!(
            auth.check(Some("secret"), local).is_ok(),
            "loopback is never locked out"
        );
        assert!(Auth::new(None).check(None, lan).is_ok());
        assert!(!constant_time_eq(b"a", b"ab"));
    }

    #[test]
    fn web_pages_on_loopback_are_limited() {
        let auth = Auth::new(Some("secret".into()));
        let page = Peer {
            browser: true,
            ..at([127, 0, 0, 1])
        };
        for _ in 0..10 {
            assert_eq!(
                auth.check_bearer(Some("Bearer nope"), page),
                Err(Refusal::Mismatch)
            );
        }
        assert!(matches!(
            auth.check_bearer(Some("Bearer secret"), page),
            Err(Refusal::RateLimited { .. })
        ));
        assert_eq!(
            auth.check(Some("secret"), page).unwrap_err().code,
            codes::UNAVAILABLE
        );
        // The owner's own clients on the same address are not locked out by the page.
        assert!(auth.check(Some("secret"), at([127, 0, 0, 1])).is_ok());
        assert_eq!(
            auth.check_bearer(Some("Bearer secret"), at([127, 0, 0, 1])),
            Ok(())
        );
    }

    #[test]
    fn bearer_headers() {
        let auth = Auth::new(Some("secret".into()));
        let lan = at([10, 0, 0, 3]);
        assert_eq!(auth.check_bearer(Some("Bearer secret"), lan), Ok(()));
        assert_eq!(auth.check_bearer(Some("bearer  secret "), lan), Ok(()));
        assert_eq!(auth.check_bearer(None, lan), Err(Refusal::Missing));
        assert_eq!(
            auth.check_bearer(Some("secret"), lan),
            Err(Refusal::Missing)
        );
        assert_eq!(
            auth.check_bearer(Some("Basic secret"), lan),
            Err(Refusal::Missing)
        );
        assert_eq!(
            auth.check_bearer(Some("Bearer nope"), lan),
            Err(Refusal::Mismatch)
        );
        // The limiter is shared with `connect`: failures from either count.
        for _ in 0..8 {
            let _ = auth.check(Some("nope"), lan);
        }
        assert!(matches!(
            auth.check_bearer(Some("Bearer secret"), lan),
            Err(Refusal::RateLimited { .. })
        ));
    }
}
