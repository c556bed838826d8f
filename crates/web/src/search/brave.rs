//! Brave Search API: `GET {base}/res/v1/web/search?q=…&count=…[&country=…][&search_lang=…]
//! [&freshness=…]` with the key in `X-Subscription-Token`; results are `web.results[]`
//! (`title`, `url`, `description` with `<strong>` highlights, `age` / `page_age`). Brave
//! leaves `web` out when nothing matched.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use url::Url;

use super::http::{Transport, endpoint};
use super::render::{hit, strip_tags};
use super::{
    Freshness, ProviderKind, SearchError, SearchHit, SearchProvider, SearchRequest, SearchResults,
};

const KIND: ProviderKind = ProviderKind::Brave;

/// Brave's largest `count`.
const MAX_COUNT: usize = 20;

pub(crate) struct Brave {
    http: Transport,
    base: Url,
    key: String,
}

impl Brave {
    pub(crate) fn new(http: Transport, base: Url, key: String) -> Self {
        Self { http, base, key }
    }

    fn url(&self, request: &SearchRequest) -> Url {
        let mut url = endpoint(&self.base, "/res/v1/web/search");
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("q", &request.query);
            query.append_pair("count", &request.count.min(MAX_COUNT).to_string());
            if let Some(country) = &request.country {
                query.append_pair("country", country);
            }
            if let Some(language) = &request.language {
                query.append_pair("search_lang", &search_lang(language));
            }
            if let Some(freshness) = &request.freshness {
                query.append_pair("freshness", &freshness_param(freshness));
            }
        }
        url
    }
}

/// Brave's `search_lang` codes are ISO 639-1 with a few of its own: Japanese is `jp`,
/// Chinese is `zh-hans` / `zh-hant`, and regions are lower case (`en-gb`, `pt-br`).
fn search_lang(language: &str) -> String {
    match language {
        "ja" => "jp".to_owned(),
        "zh" | "zh-cn" | "zh-sg" => "zh-hans".to_owned(),
        "zh-tw" | "zh-hk" => "zh-hant".to_owned(),
        other => other.to_owned(),
    }
}

/// `pd`/`pw`/`pm`/`py`, or `YYYY-MM-DDtoYYYY-MM-DD`.
fn freshness_param(freshness: &Freshness) -> String {
    match freshness {
        Freshness::Day => "pd".to_owned(),
        Freshness::Week => "pw".to_owned(),
        Freshness::Month => "pm".to_owned(),
        Freshness::Year => "py".to_owned(),
        Freshness::Range { from, to } => format!("{from}to{to}"),
    }
}

impl SearchProvider for Brave {
    fn kind(&self) -> ProviderKind {
        KIND
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<SearchResults, SearchError>> {
        Box::pin(async move {
            let url = self.url(request);
            let token = self.http.secret(&self.key)?;
            let body = self
                .http
                .send(|client| {
                    client
                        .get(url.clone())
                        .header(reqwest::header::ACCEPT, "application/json")
                        .header("X-Subscription-Token", token.clone())
                })
                .await?;
            parse(&body, request)
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "type")]
    kind: Option<String>,
    web: Option<Web>,
}

#[derive(Deserialize)]
struct Web {
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    age: Option<String>,
    #[serde(default)]
    page_age: Option<String>,
}

/// Brave's answer body as results.
pub(crate) fn parse(body: &[u8], request: &SearchRequest) -> Result<SearchResults, SearchError> {
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|e| SearchError::bad_answer(KIND, format!("not the web search JSON ({e})")))?;
    let items = match answer.web {
        Some(web) => web.results,
        None if answer.kind.as_deref() == Some("search") => Vec::new(),
        None => {
            return Err(SearchError::bad_answer(
                KIND,
                "neither web results nor a search answer",
            ));
        }
    };
    let results: Vec<SearchHit> = items
        .into_iter()
        .filter_map(|item| {
            hit(
                item.url.as_deref(),
                &strip_tags(item.title.as_deref().unwrap_or_default()),
                &strip_tags(item.description.as_deref().unwrap_or_default()),
                item.age.or(item.page_age).as_deref(),
            )
        })
        .take(request.count)
        .collect();
    if results.is_empty() {
        return Err(SearchError::no_results(KIND, &request.query));
    }
    Ok(SearchResults {
        results,
        answer: None,
    })
}
