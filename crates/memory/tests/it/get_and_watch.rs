//! `read_memory` (memory_get) windows and refusals, and the watcher picking up edits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use pincer_memory::{
    MemoryError, MemoryWatcher, SearchOptions, WatchSettings, read_memory, read_memory_async,
};

#[test]
fn read_memory_windows_and_refusals() {
    let env = Env::new();
    let ws = env.ws();
    write(&ws, "MEMORY.md", "one\ntwo\r\nthree\nfour");
    write(&ws, "memory/sub/deep.md", b"caf\xe9\nok\n");
    write(&ws, "AGENTS.md", "not memory");
    let all = read_memory(&ws, "MEMORY.md", None, None).unwrap();
    assert_eq!(
        (all.from, all.to, all.total_lines, all.text.as_str()),
        (1, 4, 4, "one\ntwo\nthree\nfour")
    );
    let window = read_memory(&ws, "./MEMORY.md", Some(2), Some(2)).unwrap();
    assert_eq!(
        (window.from, window.to, window.text.as_str()),
        (2, 3, "two\nthree")
    );
    let past = read_memory(&ws, "MEMORY.md", Some(10), Some(5)).unwrap();
    assert_eq!((past.to, past.total_lines, past.text.as_str()), (9, 4, ""));
    let lossy = read_memory(&ws, "memory/sub/deep.md", None, Some(1)).unwrap();
    assert_eq!(lossy.text, "caf\u{fffd}");
    let json = serde_json::to_value(&window).unwrap();
    assert_eq!(json["path"], "MEMORY.md");
    assert_eq!(json["totalLines"], 4);

    for bad in [
        "AGENTS.md",
        "../MEMORY.md",
        "/etc/passwd",
        "memory/../AGENTS.md",
        "memory/x.txt",
        "",
    ] {
        let err = read_memory(&ws, bad, None, None).unwrap_err();
        assert!(
            matches!(err, MemoryError::PathRefused { .. }),
            "{bad}: {err:?}"
        );
    }
    assert!(matches!(
        read_memory(&ws, "memory/missing.md", None, None),
        Err(MemoryError::NotFound(_))
    ));
    #[cfg(unix)]
    {
        let outside = env.dir.path().join("outside.md");
        std::fs::write(&outside, "secret").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("memory/escape.md")).unwrap();
        let err = read_memory(&ws, "memory/escape.md", None, None).unwrap_err();
        assert!(err.to_string().contains("outside the workspace"), "{err}");
    }
}

#[tokio::test]
async fn read_memory_async_works() {
    let env = Env::new();
    write(&env.ws(), "memory/a.md", "x\ny");
    let text = read_memory_async(&env.ws(), "memory/a.md", Some(2), None)
        .await
        .unwrap();
    assert_eq!(text.text, "y");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_syncs_on_start_and_after_an_edit() {
    let env = Env::with_corpus();
    let index = env.open_hashed(settings()).await;
    let settings = WatchSettings {
        debounce: Duration::from_millis(300),
        ..WatchSettings::default()
    };
    let watcher = MemoryWatcher::start(index.clone(), settings);
    let options = SearchOptions {
        min_score: 0.0,
        ..SearchOptions::default()
    };
    let found = |query: &'static str, path: &'static str| {
        let index = index.clone();
        let options = options.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(results) = index.search(query, &options).await
                    && results.results.iter().any(|h| h.path == path)
                {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            false
        }
    };
    assert!(
        found("Lisbon", "memory/2026-01-10.md").await,
        "initial sync"
    );
    let changes = [
        (
            "memory/2026-01-10.md",
            "# Trip\nChanged plans: the conference moved to Porto.\n",
            "Porto",
            "edit picked up",
        ),
        // A new subdirectory and file appearing later are picked up too.
        (
            "memory/new/kayak.md",
            "# Kayak\nRented a kayak on the river.\n",
            "kayak",
            "new file picked up",
        ),
    ];
    for (path, content, word, what) in changes {
        write(&env.ws(), path, content);
        assert!(found(word, path).await, "{what}");
    }
    assert!(!watcher.is_polling());
    drop(watcher);
}
