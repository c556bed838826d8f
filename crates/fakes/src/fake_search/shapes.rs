//! The four providers' request routing, key checks and answer shapes, as their real APIs
//! send them (fields a client does not read are included where the real answer has them,
//! so a client that leans on the wrong one fails here first).

use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{FakeHit, FakeSearchConfig, RecordedRequest, Script};

/// Which API a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeProvider {
    Brave,
    Tavily,
    Perplexity,
    Searxng,
}

impl FakeProvider {
    /// Brave's path; `/search` by method (Tavily POSTs, SearXNG GETs); Sonar's path.
    pub fn route(method: &Method, path: &str) -> Option<Self> {
        match (method.as_str(), path) {
            ("GET", "/res/v1/web/search") => Some(Self::Brave),
            ("POST", "/search") => Some(Self::Tavily),
            ("GET", "/search") => Some(Self::Searxng),
            ("POST", "/chat/completions") => Some(Self::Perplexity),
            _ => None,
        }
    }

    /// The provider's 401 when the key is missing or wrong.
    pub(crate) fn check_key(
        self,
        config: &FakeSearchConfig,
        request: &RecordedRequest,
    ) -> Option<Response> {
        let bearer = |key: &str| request.header("authorization") == Some(&format!("Bearer {key}"));
        let body = match self {
            Self::Brave if request.header("x-subscription-token") != Some(&config.brave_key) => {
                json!({
                    "type": "ErrorResponse",
                    "error": {
                        "id": "00000000-fake",
                        "status": 401,
                        "code": "SUBSCRIPTION_TOKEN_INVALID",
                        "detail": "The provided subscription token is invalid.",
                        "meta": {"component": "authentication"}
                    },
                    "time": 0
                })
            }
            Self::Tavily if !bearer(&config.tavily_key) => {
                json!({"detail": {"error": "Unauthorized: missing or invalid API key."}})
            }
            Self::Perplexity if !bearer(&config.perplexity_key) => json!({
                "error": {"message": "Invalid API key provided.", "type": "invalid_api_key", "code": 401}
            }),
            _ => return None,
        };
        Some(json_response(StatusCode::UNAUTHORIZED, &body))
    }

    /// The query the request asks for.
    pub(crate) fn query_of(self, request: &RecordedRequest) -> Option<String> {
        let param = |name: &str| {
            request
                .query_pairs()
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
        };
        match self {
            Self::Brave | Self::Searxng => param("q"),
            Self::Tavily => request.json()["query"].as_str().map(str::to_owned),
            Self::Perplexity => request.json()["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "user")?["content"]
                .as_str()
                .map(str::to_owned),
        }
    }

    pub(crate) fn bad_request_body(self) -> String {
        match self {
            Self::Brave => json!({"type": "ErrorResponse", "error": {"status": 422, "code": "VALIDATION", "detail": "Unable to validate request parameter(s)"}}),
            Self::Tavily => json!({"detail": {"error": "Query is missing."}}),
            Self::Perplexity => json!({"error": {"message": "messages: a user message is required", "type": "invalid_request", "code": 400}}),
            Self::Searxng => json!({"error": "search error: empty query"}),
        }
        .to_string()
    }

    /// The provider's answer for `query`: the script's results, or canned ones.
    pub(crate) fn answer(
        self,
        request: &RecordedRequest,
        query: &str,
        script: Option<Script>,
    ) -> Response {
        let number = |name: &str, default: usize| {
            request
                .query_pairs()
                .into_iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(default)
        };
        let (hits, answer) = match script {
            Some(script) => (Some(script.results), script.answer),
            None => (None, None),
        };
        let hits_or = |n: usize| hits.clone().unwrap_or_else(|| canned(query, n));
        match self {
            Self::Brave => {
                let hits: Vec<FakeHit> = hits_or(number("count", 20))
                    .into_iter()
                    .take(number("count", 20))
                    .collect();
                json_response(StatusCode::OK, &brave(query, &hits))
            }
            Self::Tavily => {
                let body = request.json();
                let max = body["max_results"].as_u64().map_or(5, |n| n as usize);
                let hits: Vec<FakeHit> = hits_or(max).into_iter().take(max).collect();
                let answer = (body["include_answer"] == true)
                    .then(|| answer.unwrap_or_else(|| format!("A short answer about {query}.")));
                json_response(StatusCode::OK, &tavily(query, &hits, answer))
            }
            Self::Perplexity => {
                let model = request.json()["model"]
                    .as_str()
                    .unwrap_or("sonar")
                    .to_owned();
                let hits = hits_or(2);
                let answer = answer.unwrap_or_else(|| {
                    if hits.is_empty() {
                        String::new()
                    } else {
                        format!("Answer about {query} [1][2].")
                    }
                });
                json_response(StatusCode::OK, &perplexity(&model, &answer, &hits))
            }
            Self::Searxng => {
                if param(request, "format").as_deref() != Some("json") {
                    return (StatusCode::FORBIDDEN, "Forbidden").into_response();
                }
                json_response(StatusCode::OK, &searxng(query, &hits_or(10)))
            }
        }
    }
}

fn param(request: &RecordedRequest, name: &str) -> Option<String> {
    request
        .query_pairs()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `Result i for <query>` at `https://example.com/<slug>/i`.
pub(crate) fn canned(query: &str, n: usize) -> Vec<FakeHit> {
    let slug: String = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("-");
    (1..=n)
        .map(|i| FakeHit {
            title: format!("Result {i} for {query}"),
            url: format!("https://example.com/{slug}/{i}"),
            snippet: format!("Snippet {i} about {query}."),
            age: None,
        })
        .collect()
}

fn brave(query: &str, hits: &[FakeHit]) -> Value {
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut item = json!({
                "type": "search_result",
                "title": h.title,
                "url": h.url,
                "is_source_local": false,
                "description": h.snippet,
                "language": "en",
                "family_friendly": true,
                "profile": {"name": "Example", "url": h.url},
            });
            if let Some(age) = &h.age {
                item["age"] = json!(age);
            }
            item
        })
        .collect();
    let mut answer = json!({
        "type": "search",
        "query": {"original": query, "more_results_available": false},
        "mixed": {"type": "mixed", "main": [], "top": [], "side": []},
    });
    // Brave leaves `web` out when nothing matched.
    if !results.is_empty() {
        answer["web"] = json!({"type": "search", "results": results, "family_friendly": true});
    }
    answer
}

fn tavily(query: &str, hits: &[FakeHit], answer: Option<String>) -> Value {
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut item = json!({
                "title": h.title,
                "url": h.url,
                "content": h.snippet,
                "score": 0.9,
                "raw_content": null,
            });
            if let Some(age) = &h.age {
                item["published_date"] = json!(age);
            }
            item
        })
        .collect();
    json!({
        "query": query,
        "answer": answer,
        "images": [],
        "results": results,
        "response_time": 0.42,
        "request_id": "fake-request",
    })
}

fn perplexity(model: &str, answer: &str, hits: &[FakeHit]) -> Value {
    let search_results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut item = json!({"title": h.title, "url": h.url, "snippet": h.snippet});
            if let Some(age) = &h.age {
                item["date"] = json!(age);
            }
            item
        })
        .collect();
    json!({
        "id": "fake-completion",
        "model": model,
        "created": 0,
        "object": "chat.completion",
        "usage": {"prompt_tokens": 5, "completion_tokens": 20, "total_tokens": 25, "search_context_size": "low"},
        "citations": hits.iter().map(|h| h.url.clone()).collect::<Vec<_>>(),
        "search_results": search_results,
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": answer},
            "delta": {"role": "assistant", "content": ""}
        }]
    })
}

fn searxng(query: &str, hits: &[FakeHit]) -> Value {
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "url": h.url,
                "title": h.title,
                "content": h.snippet,
                "publishedDate": h.age,
                "engine": "fake",
                "engines": ["fake"],
                "positions": [1],
                "score": 1.0,
                "category": "general",
            })
        })
        .collect();
    json!({
        "query": query,
        "number_of_results": 0,
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    })
}
