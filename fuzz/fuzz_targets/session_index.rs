//! Arbitrary bytes as `sessions.json` beside one transcript (claiming the key "kept"):
//! opening a session never panics. It fails with a typed error about a bad sessionId or a
//! file, or leaves a strictly readable index behind; a corrupt index is rebuilt from the
//! transcript (its session found under "kept"), never treated as empty.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_store::{SessionHeader, SessionStore, StoreError, Transcript};

fuzz_target!(|input: &[u8]| {
    let root = std::env::temp_dir().join(format!("pincer-fuzz-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    if std::fs::create_dir_all(&root).is_err() {
        return;
    }
    let store = SessionStore::new(&root).with_cwd("/");
    let header = SessionHeader::new("fuzz-session", "/").with_session_key("kept");
    if Transcript::create(store.transcript_path("fuzz-session"), header).is_err()
        || std::fs::write(store.index_path(), input).is_err()
    {
        return;
    }
    let was_readable = store.index().is_ok();
    match store.get_or_create("k") {
        Ok(session) => {
            let index = store.index().expect("a readable index after get_or_create");
            assert!(index.get("k").is_some());
            assert_eq!(session.rebuilt.is_some(), !was_readable);
            if !was_readable {
                assert_eq!(
                    index.get("kept").map(|e| e.session_id.as_str()),
                    Some("fuzz-session")
                );
            }
            let listed = store.list().expect("list after get_or_create");
            assert_eq!(listed.len(), index.sessions.len());
        }
        Err(e) => assert!(
            matches!(
                e,
                StoreError::InvalidSessionId { .. }
                    | StoreError::Io { .. }
                    | StoreError::BadHeader { .. }
            ),
            "{e}"
        ),
    }
    let _ = std::fs::remove_dir_all(&root);
});
