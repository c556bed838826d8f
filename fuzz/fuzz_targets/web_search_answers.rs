//! Arbitrary bytes as each web_search provider's answer body (Brave, Tavily, Perplexity,
//! SearXNG): reading them returns results or a clear error, never panics, and what comes
//! back keeps to the promises the tool's text relies on (never empty, bounded lines,
//! http(s) URLs only, no marker the page could use to close the untrusted block).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_web::search::{ProviderKind, SearchError, SearchRequest, parse_answer};

fuzz_target!(|input: &[u8]| {
    let request = SearchRequest {
        query: "fuzz".to_owned(),
        count: 5,
        freshness: None,
        country: None,
        language: None,
    };
    for provider in ProviderKind::ALL {
        match parse_answer(provider, input, &request) {
            Ok(found) => {
                assert!(!found.results.is_empty() || found.answer.is_some());
                assert!(found.results.len() <= 20);
                for hit in &found.results {
                    let scheme = |s: &str| {
                        hit.url
                            .get(..s.len())
                            .is_some_and(|p| p.eq_ignore_ascii_case(s))
                    };
                    assert!(scheme("http://") || scheme("https://"), "{}", hit.url);
                    for text in [&hit.title, &hit.snippet] {
                        assert!(
                            !text.contains('\n') && !text.contains("<<<") && !text.contains(">>>")
                        );
                        assert!(text.chars().count() <= 501);
                    }
                }
                if let Some(answer) = &found.answer {
                    assert!(!answer.contains("<<<") && !answer.contains(">>>"));
                }
            }
            Err(SearchError::BadAnswer { .. } | SearchError::NoResults { .. }) => {}
            Err(other) => panic!("{provider}: unexpected error {other}"),
        }
    }
});
