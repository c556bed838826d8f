//! The per-session result cache: the same search in the same session within the TTL is
//! answered from memory (the model often repeats a search after reading a page). In memory
//! only, bounded: the oldest entry goes when a new one would pass [`MEMO_CAPACITY`].

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::{ProviderKind, SearchRequest, SearchResults};

/// Most searches remembered across all sessions.
pub(crate) const MEMO_CAPACITY: usize = 256;

/// What makes two searches the same: the session and everything the provider was asked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MemoKey {
    session: Option<String>,
    provider: ProviderKind,
    request: SearchRequest,
}

impl MemoKey {
    pub(crate) fn new(
        session: Option<&str>,
        provider: ProviderKind,
        request: &SearchRequest,
    ) -> Self {
        Self {
            session: session.map(str::to_owned),
            provider,
            request: request.clone(),
        }
    }
}

pub(crate) struct Memo {
    ttl: Duration,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<MemoKey, (Instant, SearchResults)>,
    /// Keys, oldest first.
    order: VecDeque<MemoKey>,
}

impl Memo {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The remembered results, if younger than the TTL.
    pub(crate) fn get(&self, key: &MemoKey) -> Option<SearchResults> {
        if self.ttl.is_zero() {
            return None;
        }
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (at, results) = inner.entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| results.clone())
    }

    pub(crate) fn put(&self, key: MemoKey, results: SearchResults) {
        if self.ttl.is_zero() {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.entries.remove(&key).is_some() {
            inner.order.retain(|k| k != &key);
        }
        // Expired entries go first, then the oldest until there is room.
        let ttl = self.ttl;
        let Inner { entries, order } = &mut *inner;
        entries.retain(|_, (at, _)| at.elapsed() < ttl);
        order.retain(|k| entries.contains_key(k));
        while entries.len() >= MEMO_CAPACITY {
            let Some(oldest) = order.pop_front() else {
                break;
            };
            entries.remove(&oldest);
        }
        order.push_back(key.clone());
        entries.insert(key, (Instant::now(), results));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().map(|i| i.entries.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(session: &str, query: &str) -> MemoKey {
        let request = SearchRequest {
            query: query.to_owned(),
            count: 5,
            freshness: None,
            country: None,
            language: None,
        };
        MemoKey::new(Some(session), ProviderKind::Brave, &request)
    }

    fn found(n: usize) -> SearchResults {
        SearchResults {
            results: Vec::new(),
            answer: Some(n.to_string()),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn entries_expire_and_the_oldest_is_evicted() {
        let memo = Memo::new(Duration::from_secs(60));
        memo.put(key("a", "q"), found(1));
        assert_eq!(memo.get(&key("a", "q")), Some(found(1)));
        assert_eq!(memo.get(&key("b", "q")), None);
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(memo.get(&key("a", "q")), None);

        for i in 0..MEMO_CAPACITY + 3 {
            memo.put(key("a", &i.to_string()), found(i));
        }
        assert_eq!(memo.len(), MEMO_CAPACITY);
        assert_eq!(memo.get(&key("a", "0")), None);
        assert_eq!(memo.get(&key("a", "2")), None);
        assert_eq!(memo.get(&key("a", "3")), Some(found(3)));

        let off = Memo::new(Duration::ZERO);
        off.put(key("a", "q"), found(1));
        assert_eq!(off.get(&key("a", "q")), None);
    }
}
