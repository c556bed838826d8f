//! The on-disk cache through the tool: a second call is served from it (the site is not
//! asked again), entries expire after the TTL, the directory is held under its size by
//! evicting the oldest, a corrupt entry is ignored and replaced, and entries are private.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "the tests look at the cache directory between calls, with nothing else running"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use pincer_web::fetch::{ExtractMode, WebFetchOptions, WebFetchTool, web_fetch_tool};
use serde_json::json;

use super::common::{call, details, options, site, text};

fn cached_options(dir: &Path) -> WebFetchOptions {
    WebFetchOptions {
        cache_dir: Some(dir.to_owned()),
        ..options()
    }
}

/// The file name of `url`'s Markdown entry under `opts`.
fn key(opts: &WebFetchOptions, url: &str) -> String {
    let url = opts.policy.check_url(url).unwrap();
    WebFetchTool::new(opts.clone()).cache_key(&url, ExtractMode::Markdown)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_second_call_comes_from_the_cache() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let tool = web_fetch_tool(cached_options(dir.path()));
    let url = site.url("/article");
    let first = call(&tool, json!({"url": url})).await.unwrap();
    assert_eq!(details(&first)["cached"], false);
    let second = call(&tool, json!({"url": url, "maxChars": 200}))
        .await
        .unwrap();
    assert_eq!(details(&second)["cached"], true);
    assert_eq!(details(&second)["length"], 200);
    assert!(text(&second).contains("\nFrom the cache (fetched earlier).\n"));
    assert_eq!(site.hits("/article"), 1);
    // Another extract mode is another entry.
    let third = call(&tool, json!({"url": url, "extractMode": "text"}))
        .await
        .unwrap();
    assert_eq!(details(&third)["cached"], false);
    assert_eq!(site.hits("/article"), 2);

    let key = key(&cached_options(dir.path()), &url);
    let names = entries(dir.path());
    assert_eq!(names.len(), 2);
    assert!(names.contains(&key));
    let mode = std::fs::metadata(dir.path().join(&key))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // A new tool (a restarted gateway) reads the same directory.
    let again = web_fetch_tool(cached_options(dir.path()));
    let fourth = call(&again, json!({"url": url})).await.unwrap();
    assert_eq!(details(&fourth)["cached"], true);
    assert_eq!(site.hits("/article"), 2);
    // Under another network policy the entry is another one.
    let mut other = cached_options(dir.path());
    other.policy.allow_private_network = true;
    let fifth = call(&web_fetch_tool(other), json!({"url": url}))
        .await
        .unwrap();
    assert_eq!(details(&fifth)["cached"], false);
    assert_eq!(site.hits("/article"), 3);
}

#[tokio::test]
async fn entries_expire() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let mut opts = cached_options(dir.path());
    opts.cache_ttl = Duration::from_millis(300);
    let tool = web_fetch_tool(opts);
    let url = site.url("/notes.txt");
    call(&tool, json!({"url": url})).await.unwrap();
    let hit = call(&tool, json!({"url": url})).await.unwrap();
    assert_eq!(details(&hit)["cached"], true);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let miss = call(&tool, json!({"url": url})).await.unwrap();
    assert_eq!(details(&miss)["cached"], false);
    assert_eq!(site.hits("/notes.txt"), 2);
}

#[tokio::test]
async fn the_oldest_entries_are_evicted_beyond_the_size_bound() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let mut opts = cached_options(dir.path());
    opts.cache_max_bytes = 2_000;
    let tool = web_fetch_tool(opts);
    let key = |path: &str| key(&cached_options(dir.path()), &site.url(path));
    for path in ["/notes.txt", "/readme.md", "/data.json"] {
        call(&tool, json!({"url": site.url(path)})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut all = vec![key("/notes.txt"), key("/readme.md"), key("/data.json")];
    all.sort();
    assert_eq!(entries(dir.path()), all);
    let sizes: u64 = all
        .iter()
        .map(|k| std::fs::metadata(dir.path().join(k)).unwrap().len())
        .sum();
    assert!(sizes <= 2_000, "{sizes}");
    // The article's entry (about 1.5 kB) does not fit beside all three: the oldest go.
    call(&tool, json!({"url": site.url("/article")}))
        .await
        .unwrap();
    let left = entries(dir.path());
    assert!(left.contains(&key("/article")));
    assert!(!left.contains(&key("/notes.txt")));
    let total: u64 = left
        .iter()
        .map(|k| std::fs::metadata(dir.path().join(k)).unwrap().len())
        .sum();
    assert!(total <= 2_000, "{total}");
    let again = call(&tool, json!({"url": site.url("/notes.txt")}))
        .await
        .unwrap();
    assert_eq!(details(&again)["cached"], false);
    assert_eq!(site.hits("/notes.txt"), 2);
}

#[tokio::test]
async fn an_entry_bigger_than_the_bound_is_not_kept() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let mut opts = cached_options(dir.path());
    opts.cache_max_bytes = 500;
    let tool = web_fetch_tool(opts);
    call(&tool, json!({"url": site.url("/article")}))
        .await
        .unwrap();
    assert!(entries(dir.path()).is_empty());
}

#[tokio::test]
async fn a_corrupt_entry_is_ignored_and_replaced() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let tool = web_fetch_tool(cached_options(dir.path()));
    let url = site.url("/readme.md");
    let path = dir.path().join(key(&cached_options(dir.path()), &url));
    std::fs::write(&path, b"{\"storedAtMs\": 1, \"value\": {\"url\": tru").unwrap();
    let first = call(&tool, json!({"url": url})).await.unwrap();
    assert_eq!(details(&first)["cached"], false);
    let stored: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(stored["value"]["finalUrl"], url);
    let second = call(&tool, json!({"url": url})).await.unwrap();
    assert_eq!(details(&second)["cached"], true);
    assert_eq!(site.hits("/readme.md"), 1);
}

#[tokio::test]
async fn failures_are_not_cached() {
    let site = site().await;
    let dir = tempfile::tempdir().unwrap();
    let tool = web_fetch_tool(cached_options(dir.path()));
    for _ in 0..2 {
        call(&tool, json!({"url": site.url("/missing")}))
            .await
            .unwrap_err();
    }
    assert_eq!(site.hits("/missing"), 2);
    assert!(entries(dir.path()).is_empty());
}
