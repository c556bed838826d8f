//! A self-hosted SearXNG: `GET {base}/search?q=…&format=json[&language=…][&time_range=…]`,
//! no key. The answer's `results[]` carry `title`, `url`, `content` and `publishedDate`;
//! SearXNG takes no result count (a page is about twenty), so the list is cut here, and
//! when nothing came back `unresponsive_engines` says which engines failed.
//!
//! The instance must have `json` among `search.formats` in its settings.yml; without it
//! SearXNG answers 403, which the error says.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::http::{Transport, endpoint};
use super::render::{clean_line, hit};
use super::{
    Freshness, ProviderKind, SearchError, SearchHit, SearchProvider, SearchRequest, SearchResults,
};

const KIND: ProviderKind = ProviderKind::Searxng;

pub(crate) struct Searxng {
    http: Transport,
    base: Url,
}

impl Searxng {
    pub(crate) fn new(http: Transport, base: Url) -> Self {
        Self { http, base }
    }
}

/// The search URL for `request`, or why SearXNG cannot do it.
pub(crate) fn url(base: &Url, request: &SearchRequest) -> Result<Url, SearchError> {
    let language = match (&request.language, &request.country) {
        (Some(language), Some(country)) => Some(format!("{language}-{country}")),
        (Some(language), None) => Some(language.clone()),
        (None, Some(_)) => {
            return Err(SearchError::Unsupported {
                provider: KIND,
                what: "country filtering without a language",
                hint: "give language too (e.g. language \"de\" with country \"DE\"), or leave \
                       country out",
            });
        }
        (None, None) => None,
    };
    let time_range = match &request.freshness {
        Some(Freshness::Range { .. }) => {
            return Err(SearchError::Unsupported {
                provider: KIND,
                what: "a date range",
                hint: "use freshness day, week, month or year",
            });
        }
        Some(other) => other.word(),
        None => None,
    };
    let mut url = endpoint(base, "/search");
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("q", &request.query);
        query.append_pair("format", "json");
        if let Some(language) = &language {
            query.append_pair("language", language);
        }
        if let Some(time_range) = time_range {
            query.append_pair("time_range", time_range);
        }
    }
    Ok(url)
}

impl SearchProvider for Searxng {
    fn kind(&self) -> ProviderKind {
        KIND
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<SearchResults, SearchError>> {
        Box::pin(async move {
            let url = url(&self.base, request)?;
            let answer = self
                .http
                .send(|client| {
                    client
                        .get(url.clone())
                        .header(reqwest::header::ACCEPT, "application/json")
                })
                .await
                .map_err(|e| match e {
                    // SearXNG has no key: a 403 is the JSON format switched off, a 401 a
                    // proxy in front of the instance.
                    SearchError::KeyRefused { status, detail, .. } => SearchError::Rejected {
                        provider: KIND,
                        status,
                        detail: format!(
                            "{detail}: {}",
                            if status == 403 {
                                "is \"json\" listed in search.formats of the instance's settings.yml?"
                            } else {
                                "the instance (or a proxy in front of it) asks for a login"
                            }
                        ),
                    },
                    other => other,
                })?;
            parse(&answer, request)
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    results: Vec<Item>,
    #[serde(default)]
    unresponsive_engines: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default, rename = "publishedDate")]
    published_date: Option<Value>,
}

/// SearXNG's JSON answer as results.
pub(crate) fn parse(body: &[u8], request: &SearchRequest) -> Result<SearchResults, SearchError> {
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|e| SearchError::bad_answer(KIND, format!("not the format=json answer ({e})")))?;
    let results: Vec<SearchHit> = answer
        .results
        .into_iter()
        .filter_map(|item| {
            hit(
                item.url.as_deref(),
                item.title.as_deref().unwrap_or_default(),
                item.content.as_deref().unwrap_or_default(),
                item.published_date.as_ref().and_then(Value::as_str),
            )
        })
        .take(request.count)
        .collect();
    if results.is_empty() {
        // [["google", "timeout"], ["bing", "CAPTCHA"]]: say which engines let us down.
        let failed: Vec<String> = answer
            .unresponsive_engines
            .unwrap_or_default()
            .iter()
            .filter_map(|pair| {
                let engine = clean_line(pair.get(0)?.as_str()?, 40);
                let why = pair
                    .get(1)
                    .and_then(Value::as_str)
                    .map(|w| clean_line(w, 60));
                Some(match why {
                    Some(why) if !why.is_empty() => format!("{engine} ({why})"),
                    _ => engine,
                })
            })
            .take(8)
            .collect();
        let note = if failed.is_empty() {
            String::new()
        } else {
            format!("; engines that did not answer: {}", failed.join(", "))
        };
        return Err(SearchError::NoResults {
            provider: KIND,
            query: request.query.clone(),
            note,
        });
    }
    Ok(SearchResults {
        results,
        answer: None,
    })
}
