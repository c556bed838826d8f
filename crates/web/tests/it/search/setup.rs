//! The tool without a usable provider, the status line, argument checks and the
//! per-session cache.

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{ToolContext, ToolError};
use pincer_fakes::fake_search::{FakeSearch, Fault};
use pincer_web::search::{ProviderKind, SearchOptions, describe_status, web_search_tool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{SECOND, call, error_of, options, text_of, tool};

#[tokio::test]
async fn an_unconfigured_tool_says_how_to_set_it_up() {
    let tool = web_search_tool(None);
    assert_eq!(tool.name(), "web_search");
    let schema = tool.parameters();
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["additionalProperties"], false);
    let count = &schema["properties"]["count"];
    assert_eq!(
        (&count["minimum"], &count["maximum"]),
        (&json!(1), &json!(10))
    );
    let err = error_of(call(&tool, json!({"query": "anything"}), None).await);
    assert_eq!(
        err,
        "web_search is not set up: set tools.web.search.provider (brave, tavily, perplexity or \
         searxng) and its key (BRAVE_API_KEY, TAVILY_API_KEY or PERPLEXITY_API_KEY; SearXNG \
         needs tools.web.search.baseUrl instead)"
    );
}

#[tokio::test]
async fn a_provider_without_its_key_or_address_names_what_to_set() {
    let cases = [
        (
            ProviderKind::Brave,
            "web_search uses Brave but has no API key: set BRAVE_API_KEY or tools.web.search.apiKey",
        ),
        (
            ProviderKind::Tavily,
            "web_search uses Tavily but has no API key: set TAVILY_API_KEY or tools.web.search.apiKey",
        ),
        (
            ProviderKind::Perplexity,
            "web_search uses Perplexity but has no API key: set PERPLEXITY_API_KEY or OPENROUTER_API_KEY or tools.web.search.apiKey",
        ),
        (
            ProviderKind::Searxng,
            "web_search uses SearXNG but has no instance address: set tools.web.search.baseUrl \
             (or SEARXNG_BASE_URL) to it, e.g. http://localhost:8888",
        ),
    ];
    for (kind, expected) in cases {
        let mut options = SearchOptions::new(kind);
        options.api_key = Some("   ".to_owned());
        let err =
            error_of(call(&web_search_tool(Some(options)), json!({"query": "q"}), None).await);
        assert_eq!(err, expected);
    }
    let mut options = SearchOptions::new(ProviderKind::Searxng);
    options.base_url = Some("ftp://search.lan".to_owned());
    let err = error_of(call(&web_search_tool(Some(options)), json!({"query": "q"}), None).await);
    assert_eq!(
        err,
        "tools.web.search.baseUrl \"ftp://search.lan\" is not an http or https URL"
    );
}

#[test]
fn the_status_line_never_shows_a_key() {
    assert_eq!(
        describe_status(None),
        "web_search: off — no provider configured; set tools.web.search.provider (brave, tavily, \
         perplexity or searxng) and its key (BRAVE_API_KEY, TAVILY_API_KEY or PERPLEXITY_API_KEY; \
         SearXNG needs tools.web.search.baseUrl)"
    );
    let mut brave = SearchOptions::new(ProviderKind::Brave);
    assert_eq!(
        describe_status(Some(&brave)),
        "web_search: brave (no key: set BRAVE_API_KEY or tools.web.search.apiKey)"
    );
    brave.api_key = Some("BSA-secret-123".to_owned());
    assert_eq!(describe_status(Some(&brave)), "web_search: brave (key set)");
    assert!(!format!("{brave:?}").contains("secret"));

    let mut perplexity = SearchOptions::new(ProviderKind::Perplexity);
    perplexity.api_key = Some("sk-or-v1-secret".to_owned());
    assert_eq!(
        describe_status(Some(&perplexity)),
        "web_search: perplexity (key set, model perplexity/sonar)"
    );
    let mut searxng = SearchOptions::new(ProviderKind::Searxng);
    searxng.base_url = Some("http://user:pw@search.lan:8888/searx?x=1".to_owned());
    assert_eq!(
        describe_status(Some(&searxng)),
        "web_search: searxng (at http://search.lan:8888)"
    );
}

#[test]
fn provider_kinds_know_their_keys() {
    assert_eq!(
        serde_json::to_value(ProviderKind::Searxng).unwrap(),
        json!("searxng")
    );
    assert_eq!(ProviderKind::Brave.env_keys(), ["BRAVE_API_KEY"]);
    assert_eq!(
        ProviderKind::Perplexity.env_keys(),
        ["PERPLEXITY_API_KEY", "OPENROUTER_API_KEY"]
    );
    assert!(ProviderKind::Searxng.env_keys().is_empty());
    assert!(!ProviderKind::Searxng.needs_key() && ProviderKind::Tavily.needs_key());
    assert_eq!(
        ProviderKind::Searxng.env_base_url(),
        Some("SEARXNG_BASE_URL")
    );
}

#[tokio::test]
async fn bad_arguments_are_named() {
    let fake = FakeSearch::start().await;
    let tool = tool(options(ProviderKind::Brave, &fake));
    let cases = [
        (
            json!({"query": "  "}),
            "invalid arguments for web_search: query: give the words to search for",
        ),
        (
            json!({"query": "q", "freshness": "fortnight"}),
            "invalid arguments for web_search: freshness: \"fortnight\" is not day, week, month, year or a range YYYY-MM-DDtoYYYY-MM-DD (the first date not after the second)",
        ),
        (
            json!({"query": "q", "freshness": "2025-02-30to2025-03-01"}),
            "invalid arguments for web_search: freshness: \"2025-02-30to2025-03-01\" is not day, week, month, year or a range YYYY-MM-DDtoYYYY-MM-DD (the first date not after the second)",
        ),
        (
            json!({"query": "q", "country": "Germany"}),
            "invalid arguments for web_search: country: \"Germany\" is not a 2-letter ISO country code such as \"US\" or \"DE\"",
        ),
        (
            json!({"query": "q", "language": "german"}),
            "invalid arguments for web_search: language: \"german\" is not an ISO 639-1 language code such as \"en\" or \"de\"",
        ),
        (
            json!({"query": "q", "safe": true}),
            "invalid arguments for web_search: safe: unknown field `safe`, expected one of `query`, `count`, `freshness`, `country`, `language`",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(error_of(call(&tool, args, None).await), expected);
    }
    assert_eq!(fake.request_count(), 0);
    // Counts are kept within 1..=10, as OpenClaw does.
    call(&tool, json!({"query": "q", "count": 50}), None)
        .await
        .unwrap();
    call(&tool, json!({"query": "q", "count": 0}), None)
        .await
        .unwrap();
    let counts: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.query_pairs()[1].1.clone())
        .collect();
    assert_eq!(counts, ["10", "1"]);
}

#[tokio::test]
async fn the_same_search_in_the_same_session_is_answered_from_the_cache() {
    let fake = FakeSearch::start().await;
    let tool = tool(options(ProviderKind::Brave, &fake));
    let args = json!({"query": "cached query", "count": 1});
    let first = call(&tool, args.clone(), Some("agent:main:a"))
        .await
        .unwrap();
    let second = call(&tool, args.clone(), Some("agent:main:a"))
        .await
        .unwrap();
    assert_eq!(fake.request_count(), 1);
    assert_eq!(first.details.as_ref().unwrap()["cached"], false);
    assert_eq!(second.details.as_ref().unwrap()["cached"], true);
    assert_eq!(
        text_of(&second),
        text_of(&first).replace("web_search (brave):", "web_search (brave, cached):")
    );
    // Another session, another count or no session at all: asked again.
    call(&tool, args.clone(), Some("agent:main:b"))
        .await
        .unwrap();
    call(
        &tool,
        json!({"query": "cached query", "count": 2}),
        Some("agent:main:a"),
    )
    .await
    .unwrap();
    call(&tool, args.clone(), None).await.unwrap();
    assert_eq!(fake.request_count(), 4);

    let mut no_cache = options(ProviderKind::Brave, &fake);
    no_cache.cache_ttl = Duration::ZERO;
    let uncached = super::tool(no_cache);
    call(&uncached, args.clone(), Some("s")).await.unwrap();
    call(&uncached, args, Some("s")).await.unwrap();
    assert_eq!(fake.request_count(), 6);
}

#[tokio::test]
async fn an_aborted_call_stops_waiting() {
    let fake = FakeSearch::start().await;
    fake.fail_next(1, Fault::Slow(Duration::from_secs(30)));
    let tool = tool(options(ProviderKind::Brave, &fake));
    let cancel = CancellationToken::new();
    let ctx = ToolContext::new("c", cancel.clone()).with_session_key(Some(Arc::from("s")));
    let call = tokio::spawn(async move { tool.execute(json!({"query": "slow"}), ctx).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cancel.cancel();
    let result = tokio::time::timeout(SECOND, call).await.unwrap().unwrap();
    assert_eq!(result.unwrap_err(), ToolError::Aborted);
}
