//! Tavily: `POST {base}/search` with a JSON body (`query`, `max_results`, `search_depth`,
//! `topic`, `include_answer`, `time_range` or `start_date`/`end_date`) and the key as
//! `Authorization: Bearer`; the answer has `results[]` (`title`, `url`, `content`,
//! `published_date` for news) and `answer` when one was asked for.
//!
//! Tavily filters by country with full English country names (and only for the general
//! topic) and has no language filter, so both are refused with a clear error rather than
//! silently ignored: the model would otherwise believe its results were filtered.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::http::{Transport, endpoint};
use super::render::{clean_answer, hit};
use super::{
    Freshness, ProviderKind, SearchError, SearchHit, SearchProvider, SearchRequest, SearchResults,
};

const KIND: ProviderKind = ProviderKind::Tavily;

/// Tavily's largest `max_results`.
const MAX_COUNT: usize = 20;

pub(crate) struct Tavily {
    http: Transport,
    base: Url,
    key: String,
}

impl Tavily {
    pub(crate) fn new(http: Transport, base: Url, key: String) -> Self {
        Self { http, base, key }
    }
}

/// The JSON body for `request`, or why Tavily cannot do it.
pub(crate) fn body(request: &SearchRequest) -> Result<Value, SearchError> {
    if request.country.is_some() {
        return Err(SearchError::Unsupported {
            provider: KIND,
            what: "country filtering",
            hint: "leave country out (Brave and Perplexity filter by country)",
        });
    }
    if request.language.is_some() {
        return Err(SearchError::Unsupported {
            provider: KIND,
            what: "language filtering",
            hint: "leave language out, or write the query in the language wanted",
        });
    }
    let mut body = json!({
        "query": request.query,
        "max_results": request.count.min(MAX_COUNT),
        "search_depth": "basic",
        "topic": "general",
        "include_answer": true,
    });
    match &request.freshness {
        Some(Freshness::Range { from, to }) => {
            body["start_date"] = json!(from);
            body["end_date"] = json!(to);
        }
        Some(other) => body["time_range"] = json!(other.word()),
        None => {}
    }
    Ok(body)
}

impl SearchProvider for Tavily {
    fn kind(&self) -> ProviderKind {
        KIND
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<SearchResults, SearchError>> {
        Box::pin(async move {
            let body = body(request)?;
            let url = endpoint(&self.base, "/search");
            let auth = self.http.secret(&format!("Bearer {}", self.key))?;
            let answer = self
                .http
                .send(|client| {
                    client
                        .post(url.clone())
                        .header(reqwest::header::AUTHORIZATION, auth.clone())
                        .json(&body)
                })
                .await?;
            parse(&answer, request)
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    results: Vec<Item>,
    #[serde(default)]
    answer: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    published_date: Option<String>,
}

/// Tavily's answer body as results (its answer first when it wrote one).
pub(crate) fn parse(body: &[u8], request: &SearchRequest) -> Result<SearchResults, SearchError> {
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|e| SearchError::bad_answer(KIND, format!("not the search JSON ({e})")))?;
    let results: Vec<SearchHit> = answer
        .results
        .into_iter()
        .filter_map(|item| {
            hit(
                item.url.as_deref(),
                item.title.as_deref().unwrap_or_default(),
                item.content.as_deref().unwrap_or_default(),
                item.published_date.as_deref(),
            )
        })
        .take(request.count)
        .collect();
    let answer = answer
        .answer
        .map(|a| clean_answer(&a))
        .filter(|a| !a.is_empty());
    if results.is_empty() && answer.is_none() {
        return Err(SearchError::no_results(KIND, &request.query));
    }
    Ok(SearchResults { results, answer })
}
