//! Perplexity Sonar: `POST {base}/chat/completions` with the query as the one user message
//! (`model` `sonar` by default) and the key as `Authorization: Bearer`. The written answer
//! is `choices[0].message.content`; its `[n]` marks number the sources, which Perplexity
//! gives as `search_results[]` (title, url, date) and `citations[]` (URLs), and OpenRouter
//! as the message's `annotations[].url_citation`. An OpenRouter key (`sk-or-…`) without a
//! configured base goes to OpenRouter's `perplexity/sonar`, as OpenClaw does.
//!
//! Filters: freshness becomes `search_recency_filter` (a range the
//! `search_after_date_filter` / `search_before_date_filter` pair, `M/D/YYYY`), country
//! `web_search_options.user_location.country`, language `search_language_filter`.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::http::{Transport, endpoint};
use super::render::{
    SNIPPET_MAX_CHARS, TITLE_MAX_CHARS, clean_age, clean_answer, clean_line, clean_url,
};
use super::{
    Freshness, ProviderKind, SearchError, SearchHit, SearchProvider, SearchRequest, SearchResults,
};

const KIND: ProviderKind = ProviderKind::Perplexity;

pub(crate) const PERPLEXITY_BASE: &str = "https://api.perplexity.ai";
const OPENROUTER_BASE: &str = "https://openrouter.ai/api/v1";

/// Most sources listed (the answer cites a handful; the rest are noise).
const MAX_SOURCES: usize = 20;

/// The endpoint base and model for `key` when the config names neither.
pub(crate) fn defaults_for(key: &str) -> (&'static str, &'static str) {
    if key.starts_with("sk-or-") {
        (OPENROUTER_BASE, "perplexity/sonar")
    } else {
        (PERPLEXITY_BASE, "sonar")
    }
}

pub(crate) struct Perplexity {
    http: Transport,
    base: Url,
    key: String,
    model: String,
}

impl Perplexity {
    pub(crate) fn new(http: Transport, base: Url, key: String, model: String) -> Self {
        Self {
            http,
            base,
            key,
            model,
        }
    }
}

/// The chat-completions body for `request`.
pub(crate) fn body(model: &str, request: &SearchRequest) -> Value {
    let mut body = json!({
        "model": model,
        "messages": [{"role": "user", "content": request.query}],
    });
    match &request.freshness {
        Some(Freshness::Range { from, to }) => {
            body["search_after_date_filter"] = json!(us_date(from));
            body["search_before_date_filter"] = json!(us_date(to));
        }
        Some(other) => body["search_recency_filter"] = json!(other.word()),
        None => {}
    }
    if let Some(language) = &request.language {
        body["search_language_filter"] = json!([language]);
    }
    if let Some(country) = &request.country {
        body["web_search_options"] = json!({"user_location": {"country": country}});
    }
    body
}

/// `YYYY-MM-DD` as Perplexity's `M/D/YYYY`.
fn us_date(iso: &str) -> String {
    let part = |range: std::ops::Range<usize>| {
        iso.get(range)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or_default()
    };
    format!(
        "{}/{}/{}",
        part(5..7),
        part(8..10),
        iso.get(..4).unwrap_or_default()
    )
}

impl SearchProvider for Perplexity {
    fn kind(&self) -> ProviderKind {
        KIND
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<SearchResults, SearchError>> {
        Box::pin(async move {
            let body = body(&self.model, request);
            let url = endpoint(&self.base, "/chat/completions");
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
    choices: Vec<Choice>,
    #[serde(default)]
    citations: Option<Vec<Value>>,
    #[serde(default)]
    search_results: Option<Vec<Source>>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    annotations: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct Source {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    date: Option<String>,
    #[serde(default)]
    snippet: Option<String>,
}

/// Sonar's answer body as an answer with numbered sources.
pub(crate) fn parse(body: &[u8], request: &SearchRequest) -> Result<SearchResults, SearchError> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| {
        SearchError::bad_answer(KIND, format!("not the chat completion JSON ({e})"))
    })?;
    let Some(choice) = answer.choices.into_iter().next() else {
        return Err(SearchError::bad_answer(
            KIND,
            "a chat completion without choices",
        ));
    };
    let text = choice.message.content.unwrap_or_default();
    let text = clean_answer(without_thinking(&text));
    let mut sources: Vec<SearchHit> = answer
        .search_results
        .unwrap_or_default()
        .into_iter()
        .filter_map(|s| {
            hit(
                s.url.as_deref()?,
                s.title.as_deref(),
                s.snippet.as_deref(),
                s.date.as_deref(),
            )
        })
        .collect();
    if sources.is_empty() {
        // Bare URLs (Perplexity), else OpenRouter's url_citation annotations.
        let urls = answer.citations.unwrap_or_default();
        let annotations = choice.message.annotations.unwrap_or_default();
        sources = urls
            .iter()
            .filter_map(|u| hit(u.as_str()?, None, None, None))
            .collect();
        if sources.is_empty() {
            sources = annotations
                .iter()
                .filter_map(|a| {
                    let cite = &a["url_citation"];
                    hit(cite["url"].as_str()?, cite["title"].as_str(), None, None)
                })
                .collect();
        }
    }
    sources.truncate(MAX_SOURCES);
    if text.is_empty() {
        if sources.is_empty() {
            return Err(SearchError::no_results(KIND, &request.query));
        }
        return Err(SearchError::bad_answer(KIND, "sources but no answer text"));
    }
    Ok(SearchResults {
        results: sources,
        answer: Some(text),
    })
}

/// A source; without a title it is named by its host.
fn hit(
    url: &str,
    title: Option<&str>,
    snippet: Option<&str>,
    date: Option<&str>,
) -> Option<SearchHit> {
    let url = clean_url(url)?;
    let title = clean_line(title.unwrap_or_default(), TITLE_MAX_CHARS);
    let title = if title.is_empty() {
        Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(|h| clean_line(h, TITLE_MAX_CHARS)))
            .unwrap_or_default()
    } else {
        title
    };
    Some(SearchHit {
        title,
        url,
        snippet: clean_line(snippet.unwrap_or_default(), SNIPPET_MAX_CHARS),
        age: clean_age(date),
    })
}

/// The answer after a reasoning model's leading `<think>…</think>`.
fn without_thinking(text: &str) -> &str {
    let trimmed = text.trim_start();
    match trimmed.strip_prefix("<think>") {
        Some(rest) => rest.split_once("</think>").map_or("", |(_, after)| after),
        None => text,
    }
}
