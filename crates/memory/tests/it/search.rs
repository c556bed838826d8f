//! Ranking on the fixture corpus (English and Chinese), search modes, decay, MMR and the
//! JSON shape the tools return.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use pincer_memory::{SearchMode, SearchOptions, SearchResults};

fn opts() -> SearchOptions {
    SearchOptions {
        min_score: 0.0,
        ..SearchOptions::default()
    }
}

fn top(results: &SearchResults) -> (&str, &str) {
    let hit = results.results.first().expect("at least one hit");
    (hit.path.as_str(), hit.heading.as_str())
}

#[tokio::test]
async fn hybrid_ranking_finds_the_known_chunk_in_english_and_chinese() {
    let env = Env::with_corpus();
    let before = env.snapshot();
    let (index, _) = env.open_behaving(Behaviour::Ok).await;
    let report = index.sync().await.unwrap();
    assert_eq!(report.files_scanned, 5);
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    let cases: &[(&str, &str, &str)] = &[
        (
            "flights to Lisbon for the conference",
            "memory/2026-01-10.md",
            "# Trip planning",
        ),
        (
            "what colour theme in Neovim",
            "MEMORY.md",
            "# Preferences > ## Work",
        ),
        ("peanuts allergy", "MEMORY.md", "# Preferences > ## Food"),
        (
            "soil moisture pump",
            "memory/projects.md",
            "# Projects > ## Garden robot",
        ),
        ("cat Miso", "MEMORY.md", "# Preferences > ## Family"),
        ("马拉松", "memory/zh/家庭与工作.md", "# 记忆 > ## 健康"),
        ("女儿", "memory/zh/家庭与工作.md", "# 记忆 > ## 家庭"),
        (
            "银行风险管理",
            "memory/zh/家庭与工作.md",
            "# 记忆 > ## 工作",
        ),
    ];
    for (query, path, heading) in cases {
        let results = index.search(query, &opts()).await.unwrap();
        assert_eq!(results.mode, SearchMode::Hybrid, "{query}");
        assert_eq!(top(&results), (*path, *heading), "{query}: {results:#?}");
        let scores: Vec<f32> = results.results.iter().map(|h| h.score).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "sorted: {scores:?}"
        );
        assert!(
            scores.iter().all(|s| (0.0..=1.0001).contains(s)),
            "{scores:?}"
        );
    }
    // Default options: max 6 results, min score 0.35.
    let results = index
        .search("Lisbon", &SearchOptions::default())
        .await
        .unwrap();
    assert!(results.results.len() <= 6);
    assert!(results.results.iter().all(|h| h.score >= 0.35));
    assert_eq!(env.snapshot(), before, "the Markdown must not change");
}

#[tokio::test]
async fn keyword_only_without_embedder_says_so_and_still_ranks() {
    let env = Env::with_corpus();
    let index = env.open(None, settings()).await;
    index.sync().await.unwrap();
    for (query, heading) in [
        ("Lisbon", "# Trip planning"),
        ("gruvbox", "# Preferences > ## Work"),
        ("马拉松", "# 记忆 > ## 健康"),
        ("女儿", "# 记忆 > ## 家庭"),
        ("杭州马拉松的目标", "# 记忆 > ## 健康"),
    ] {
        let results = index.search(query, &opts()).await.unwrap();
        match &results.mode {
            SearchMode::KeywordOnly { reason } => {
                assert!(reason.contains("no embedding provider"), "{reason}")
            }
            other => panic!("expected keyword-only, got {other:?}"),
        }
        assert_eq!(top(&results).1, heading, "{query}: {results:#?}");
    }
    let status = index.status().await.unwrap();
    assert!(
        status.search_mode.starts_with("keyword-only"),
        "{}",
        status.search_mode
    );
    assert_eq!(status.embedded_chunks, 0);
    // Nothing matching: no results, no error; hostile FTS syntax is just text.
    let results = index
        .search("zzzqqq \"XQZW(\" OR * AND", &opts())
        .await
        .unwrap();
    assert!(results.results.is_empty());
    assert!(
        index
            .search("   ", &opts())
            .await
            .unwrap()
            .results
            .is_empty()
    );
}

#[tokio::test]
async fn temporal_decay_only_touches_dated_notes_and_mmr_diversifies() {
    let env = Env::new();
    let note =
        "# Standup\n\nDiscussed the quarterly roadmap and the hiring plan for the platform team.\n";
    write(&env.ws(), "memory/2026-01-01.md", note);
    write(&env.ws(), "memory/2026-03-01.md", note);
    write(&env.ws(), "MEMORY.md", note);
    let (index, _) = env.open_behaving(Behaviour::Ok).await;
    index.sync().await.unwrap();
    let day = 86_400_000i64;
    let now = 20_513 * day; // 2026-03-01
    let options = SearchOptions {
        temporal_decay_half_life_days: Some(30.0),
        now_ms: Some(now),
        ..opts()
    };
    let results = index
        .search("quarterly roadmap hiring", &options)
        .await
        .unwrap();
    let score = |p: &str| {
        results
            .results
            .iter()
            .find(|h| h.path == p)
            .map(|h| h.score)
            .unwrap()
    };
    let (undated, fresh, old) = (
        score("MEMORY.md"),
        score("memory/2026-03-01.md"),
        score("memory/2026-01-01.md"),
    );
    assert!(
        (undated - fresh).abs() < 1e-4,
        "same day: no decay ({undated} vs {fresh})"
    );
    let expected = 0.5f32.powf(59.0 / 30.0);
    assert!(
        (old / undated - expected).abs() < 1e-3,
        "{old} / {undated} vs {expected}"
    );

    // Three identical chunks and one different: MMR with a low λ puts the different one
    // second instead of fourth.
    write(
        &env.ws(),
        "memory/other.md",
        "# Hiring\n\nThe hiring plan needs two backend engineers.\n",
    );
    index.sync().await.unwrap();
    let query = "quarterly roadmap hiring plan platform team";
    let plain = index.search(query, &opts()).await.unwrap();
    assert_eq!(plain.results.len(), 4);
    assert_eq!(plain.results[3].path, "memory/other.md", "{plain:#?}");
    let diverse = index
        .search(
            query,
            &SearchOptions {
                mmr_lambda: Some(0.3),
                ..opts()
            },
        )
        .await
        .unwrap();
    assert_eq!(diverse.results[1].path, "memory/other.md", "{diverse:#?}");
}

#[tokio::test]
async fn tool_output_shape() {
    let env = Env::with_corpus();
    let index = env.open_hashed(settings()).await;
    index.sync().await.unwrap();
    let results = index
        .search(
            "Lisbon",
            &SearchOptions {
                max_results: 1,
                ..opts()
            },
        )
        .await
        .unwrap();
    let json = serde_json::to_value(&results).unwrap();
    assert_eq!(json["mode"], "hybrid");
    assert!(json.get("reason").is_none());
    let hit = &json["results"][0];
    // serde_json's map keeps its keys sorted.
    let keys: Vec<&String> = hit.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "endLine",
            "heading",
            "path",
            "score",
            "snippet",
            "startLine"
        ]
    );
    assert_eq!(hit["path"], "memory/2026-01-10.md");
    assert_eq!(
        (hit["startLine"].as_u64(), hit["endLine"].as_u64()),
        (Some(1), Some(4))
    );
    assert!(hit["snippet"].as_str().unwrap().contains("Lisbon"));

    let keyword = env.open(None, settings()).await;
    let json = serde_json::to_value(keyword.search("Lisbon", &opts()).await.unwrap()).unwrap();
    assert_eq!(json["mode"], "keyword-only");
    assert!(json["reason"].as_str().unwrap().contains("embedding"));

    let status = serde_json::to_value(index.status().await.unwrap()).unwrap();
    for key in [
        "files",
        "chunks",
        "embeddedChunks",
        "embedder",
        "dims",
        "lastSyncMs",
        "problems",
        "dbPath",
        "searchMode",
    ] {
        assert!(status.get(key).is_some(), "status has {key}: {status}");
    }
    assert_eq!(status["dims"], 256);
    assert_eq!(status["files"], 5);
}

#[tokio::test]
async fn long_snippets_are_cut() {
    let env = Env::new();
    let long = format!("# Long\n{}\n", "lorem ipsum dolor sit amet ".repeat(30));
    write(&env.ws(), "MEMORY.md", &long);
    let index = env.open(None, Default::default()).await;
    index.sync().await.unwrap();
    let results = index.search("lorem", &opts()).await.unwrap();
    let snippet = &results.results[0].snippet;
    assert!(
        snippet.chars().count() <= 701 && snippet.ends_with('…'),
        "{}",
        snippet.len()
    );
}
