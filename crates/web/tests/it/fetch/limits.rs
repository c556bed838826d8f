//! Size and time limits: a 50 MB body and an endless one stop at the byte cap (marked
//! truncated, not an error), a slow-loris body is cut by the total timeout, an abort ends
//! the call at once, and maxChars cuts the text (clamped to 100 and the configured cap).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use pincer_agent::{ToolContext, ToolError};
use pincer_web::fetch::web_fetch_tool;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::{content, details, fetch, fetch_with, options, site, text};

#[tokio::test]
async fn a_huge_body_stops_at_the_cap() {
    let site = site().await;
    let url = site.url("/huge");
    let started = Instant::now();
    let mut opts = options();
    opts.max_response_bytes = 100_000;
    opts.max_chars = 200_000;
    let out = fetch_with(opts, &url, json!({"maxChars": 150_000}))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(content(&out), "a".repeat(100_000));
    assert_eq!(
        text(&out).lines().take(4).collect::<Vec<_>>(),
        [
            format!("Fetched {url}").as_str(),
            "Status: 200",
            "Content-Type: text/plain",
            "Truncated: the response was cut at 100000 bytes, the most web_fetch reads.",
        ]
    );
    assert_eq!(details(&out)["truncated"], true);
    assert_eq!(details(&out)["length"], 100_000);
}

#[tokio::test]
async fn an_endless_body_stops_at_the_default_cap_and_max_chars() {
    let site = site().await;
    let out = fetch(&site.url("/endless")).await.unwrap();
    let all = out.text_content();
    let header: Vec<&str> = all.lines().skip(3).take(2).collect();
    let total = details(&out)["rawLength"].as_u64().unwrap();
    assert_eq!(
        header,
        [
            "Truncated: the response was cut at 750000 bytes, the most web_fetch reads.",
            format!("Truncated: showing the first 20000 of {total} characters (maxChars).")
                .as_str(),
        ]
    );
    assert_eq!(details(&out)["length"], 20_000);
    assert!(content(&out).starts_with("and again\n\nand again\n\n"));
}

#[tokio::test]
async fn a_slow_body_is_cut_by_the_total_timeout() {
    let site = site().await;
    let mut opts = options();
    opts.timeout = Duration::from_millis(1500);
    let started = Instant::now();
    let out = fetch_with(opts, &site.url("/slow"), json!({}))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(content(&out), "slow");
    assert!(
        text(&out).contains(
            "\nTruncated: the response was still arriving after 1.5 s and was cut there.\n"
        ),
        "{}",
        text(&out)
    );
    assert_eq!(details(&out)["truncated"], true);
}

#[tokio::test]
async fn an_abort_ends_the_call() {
    let site = site().await;
    let tool = web_fetch_tool(options());
    let cancel = CancellationToken::new();
    let ctx = ToolContext::new("call", cancel.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let result = tool.execute(json!({"url": site.url("/slow")}), ctx).await;
    assert_eq!(result.unwrap_err(), ToolError::Aborted);
    assert!(started.elapsed() < Duration::from_secs(2));
    canceller.await.unwrap();
}

#[tokio::test]
async fn max_chars_cuts_the_text_within_its_bounds() {
    let site = site().await;
    let url = site.url("/article");
    let out = fetch_with(options(), &url, json!({"maxChars": 150}))
        .await
        .unwrap();
    let body = content(&out);
    assert_eq!(
        body,
        "Title: Otters Learn to Use Tools\n\nSea otters along the northern coast have been \
         observed using rocks to open shellfish, a behaviour researchers at the [Marine Institute](https://marine"
    );
    assert!(
        text(&out).contains("\nTruncated: showing the first 150 of 998 characters (maxChars).\n")
    );
    assert_eq!(details(&out)["truncated"], true);
    assert_eq!(details(&out)["length"], 150);
    // Below the minimum: 100.
    let out = fetch_with(options(), &url, json!({"maxChars": 5}))
        .await
        .unwrap();
    assert_eq!(details(&out)["length"], 100);
    // Above the configured cap: the cap.
    let mut opts = options();
    opts.max_chars = 300;
    let out = fetch_with(opts, &url, json!({"maxChars": 1_000_000}))
        .await
        .unwrap();
    assert_eq!(details(&out)["length"], 300);
}
