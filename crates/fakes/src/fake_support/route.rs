//! Which calls an injected failure hits: `"POST /channels/{channel_id}/messages"` — an
//! optional method, then path segments where `*` or `{…}` matches any one segment — and
//! the queue of failures waiting for such calls.

/// A route pattern of an injected failure.
#[derive(Debug, Clone)]
pub(crate) struct RoutePattern {
    method: Option<String>,
    segments: Vec<String>,
}

impl RoutePattern {
    /// `route` as a test writes it (a query is ignored).
    pub fn parse(route: &str) -> Self {
        Self::parse_under(route, "")
    }

    /// `route`, which may or may not start with the API's `prefix` (e.g. `/api/v10`).
    pub fn parse_under(route: &str, prefix: &str) -> Self {
        let route = route.trim();
        let (method, path) = match route.split_once(' ') {
            Some((method, path)) => (Some(method.to_ascii_uppercase()), path.trim()),
            None => (None, route),
        };
        let path = path.split('?').next().unwrap_or(path);
        let path = path.strip_prefix(prefix).unwrap_or(path);
        Self {
            method,
            segments: split_path(path),
        }
    }

    pub fn matches(&self, method: &str, path: &str) -> bool {
        if self.method.as_deref().is_some_and(|m| m != method) {
            return false;
        }
        let segments = split_path(path);
        segments.len() == self.segments.len()
            && self.segments.iter().zip(&segments).all(|(want, got)| {
                want == "*" || (want.starts_with('{') && want.ends_with('}')) || want == got
            })
    }
}

/// Injected failures waiting for the call they match, the first queued first.
#[derive(Debug)]
pub(crate) struct Failures<F>(Vec<(RoutePattern, F)>);

impl<F> Default for Failures<F> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<F> Failures<F> {
    pub fn push(&mut self, pattern: RoutePattern, failure: F) {
        self.0.push((pattern, failure));
    }

    /// The first queued failure matching this call (consumed).
    pub fn take(&mut self, method: &str, path: &str) -> Option<F> {
        let index = self
            .0
            .iter()
            .position(|(pattern, _)| pattern.matches(method, path))?;
        Some(self.0.remove(index).1)
    }
}

/// The non-empty segments of `path`.
pub(crate) fn split_path(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::RoutePattern;

    #[test]
    fn route_patterns() {
        let pattern = RoutePattern::parse("POST /channels/{channel_id}/messages");
        assert!(pattern.matches("POST", "/channels/42/messages"));
        assert!(!pattern.matches("GET", "/channels/42/messages"));
        assert!(!pattern.matches("POST", "/channels/42/typing"));
        let any = RoutePattern::parse_under("/api/v10/channels/*/typing", "/api/v10");
        assert!(any.matches("POST", "/channels/7/typing"));
        assert!(RoutePattern::parse("GET /gateway/bot").matches("GET", "/gateway/bot/"));
        let query = RoutePattern::parse("GET /open-apis/im/v1/chats?page_size=20");
        assert!(query.matches("GET", "/open-apis/im/v1/chats"));
    }
}
