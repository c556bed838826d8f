//! The tenant access token: fetched with the app's id and secret
//! (`/open-apis/auth/v3/tenant_access_token/internal`), cached, refreshed when less than
//! 5 minutes of it are left, dropped when Feishu says it is invalid. One refresh at a time:
//! concurrent callers wait for it instead of each asking for a token.

use pincer_base::Secret;
use std::future::Future;
use std::time::{Duration, Instant};

use pincer_channel_port::ChannelError;
use serde_json::Value;

use super::CHANNEL;

/// Feishu codes for wrong app credentials: 10003 invalid app_id, 10014 app secret invalid.
pub const BAD_CREDENTIAL_CODES: [i64; 2] = [10003, 10014];
/// How long before its expiry a token is refreshed.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

#[derive(Debug)]
struct Cached {
    token: Secret,
    refresh_at: Instant,
}

/// The cached token of one app.
#[derive(Debug, Default)]
pub struct TokenCache {
    slot: tokio::sync::Mutex<Option<Cached>>,
}

impl TokenCache {
    /// The cached token if it is fresh at `now`, else the one `fetch` gives (a token and
    /// its lifetime in seconds), cached.
    pub async fn get<F, Fut>(&self, now: Instant, fetch: F) -> Result<String, ChannelError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(String, u64), ChannelError>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(cached) = slot.as_ref()
            && now < cached.refresh_at
        {
            return Ok(cached.token.expose().to_owned());
        }
        let (token, expire) = fetch().await?;
        // A short-lived token (tests, or Feishu near the end of one) is refreshed halfway.
        let margin = REFRESH_MARGIN.as_secs();
        let keep = expire.saturating_sub(margin).max(expire / 2);
        *slot = Some(Cached {
            token: Secret::new(token.clone()),
            refresh_at: now + Duration::from_secs(keep),
        });
        Ok(token)
    }

    /// Forgets `token` (Feishu called it invalid); a newer one already cached stays.
    pub async fn invalidate(&self, token: &str) {
        let mut slot = self.slot.lock().await;
        if slot.as_ref().is_some_and(|c| c.token.expose() == token) {
            *slot = None;
        }
    }
}

/// Reads the answer of the token endpoint: the token and its lifetime in seconds.
pub fn decode_token_answer(status: u16, body: &[u8]) -> Result<(String, u64), ChannelError> {
    let (parsed, code, msg) = super::answers::code_and_msg(body);
    if let Some(code) = code
        && BAD_CREDENTIAL_CODES.contains(&code)
    {
        return Err(ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!(
                "code {code}: {msg} (check channels.feishu.appId and channels.feishu.appSecret)"
            ),
        });
    }
    if status == 429 || code == Some(super::answers::RATE_LIMIT_CODE) {
        return Err(ChannelError::RateLimited {
            channel: CHANNEL.into(),
            retry_after_secs: 5,
        });
    }
    if status >= 500 {
        return Err(ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status} from the token endpoint"),
        });
    }
    match (code, parsed.as_ref()) {
        (Some(0), Some(value)) => {
            let token = value
                .get("tenant_access_token")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty());
            let expire = value.get("expire").and_then(Value::as_u64).unwrap_or(7200);
            token
                .map(|t| (t.to_owned(), expire))
                .ok_or_else(|| ChannelError::Api {
                    channel: CHANNEL.into(),
                    message: "the token endpoint gave no tenant_access_token".into(),
                })
        }
        (Some(code), _) => Err(ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("tenant token: code {code}: {msg}"),
        }),
        (None, _) => Err(ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: the token endpoint's answer is not Feishu JSON"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn token_answers() {
        assert_eq!(
            decode_token_answer(
                200,
                br#"{"code":0,"msg":"ok","tenant_access_token":"t-1","expire":7200}"#
            )
            .unwrap(),
            ("t-1".to_owned(), 7200)
        );
        let wrong = decode_token_answer(200, br#"{"code":10014,"msg":"app secret invalid"}"#);
        assert_eq!(
            wrong.unwrap_err().to_string(),
            "feishu: the platform refused the credentials: code 10014: app secret invalid \
             (check channels.feishu.appId and channels.feishu.appSecret)"
        );
        assert!(matches!(
            decode_token_answer(400, br#"{"code":10003,"msg":"invalid app_id"}"#),
            Err(ChannelError::Unauthorized { .. })
        ));
        assert!(matches!(
            decode_token_answer(200, br#"{"code":0,"msg":"ok"}"#),
            Err(ChannelError::Api { .. })
        ));
        assert!(matches!(
            decode_token_answer(502, b"<html>"),
            Err(ChannelError::Connection { .. })
        ));
        assert!(matches!(
            decode_token_answer(429, b""),
            Err(ChannelError::RateLimited { .. })
        ));
        assert_eq!(
            decode_token_answer(200, br#"{"code":7,"msg":"odd"}"#)
                .unwrap_err()
                .to_string(),
            "feishu: tenant token: code 7: odd"
        );
    }

    #[tokio::test]
    async fn cached_refreshed_and_invalidated() {
        let cache = TokenCache::default();
        let fetches = AtomicU32::new(0);
        let fetch = || async {
            let n = fetches.fetch_add(1, Ordering::SeqCst) + 1;
            Ok((format!("t-{n}"), 7200))
        };
        let start = Instant::now();
        // Seconds after the first fetch, and the token then: with less than 5 minutes
        // left, refreshed.
        for (secs, token) in [(0, "t-1"), (6000, "t-1"), (6901, "t-2")] {
            let at = start + Duration::from_secs(secs);
            assert_eq!(cache.get(at, fetch).await.unwrap(), token, "at {secs} s");
        }
        let late = start + Duration::from_secs(6901);
        // Invalidating an older token keeps the newer one.
        cache.invalidate("t-1").await;
        assert_eq!(cache.get(late, fetch).await.unwrap(), "t-2");
        cache.invalidate("t-2").await;
        assert_eq!(cache.get(late, fetch).await.unwrap(), "t-3");
        // A failed fetch is not cached.
        cache.invalidate("t-3").await;
        let failing = || async {
            Err(ChannelError::Connection {
                channel: CHANNEL.into(),
                message: "down".into(),
            })
        };
        assert!(cache.get(late, failing).await.is_err());
        assert_eq!(cache.get(late, fetch).await.unwrap(), "t-4");
    }

    #[tokio::test]
    async fn short_tokens_refresh_halfway() {
        let cache = TokenCache::default();
        let n = AtomicU32::new(0);
        let fetch = || async { Ok((format!("t-{}", n.fetch_add(1, Ordering::SeqCst)), 60)) };
        let start = Instant::now();
        for (secs, token) in [(0, "t-0"), (29, "t-0"), (30, "t-1")] {
            let at = start + Duration::from_secs(secs);
            assert_eq!(cache.get(at, fetch).await.unwrap(), token, "at {secs} s");
        }
    }
}
