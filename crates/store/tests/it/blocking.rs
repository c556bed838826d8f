//! The store's async face and its lock deadline: a store call made from async code runs on
//! the blocking pool, and an index update that cannot get the lock fails with a clear error
//! instead of hanging.

use std::time::Duration;

use pincer_store::{SessionStore, StoreError};

#[tokio::test(flavor = "current_thread")]
async fn a_store_call_runs_off_the_runtime_thread() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path().join("sessions"));
    let runtime_thread = std::thread::current().id();
    let (key, thread) = store
        .run(|s| {
            let open = s.get_or_create("agent:main:main")?;
            Ok((open.key, std::thread::current().id()))
        })
        .await
        .unwrap();
    assert_eq!(key, "agent:main:main");
    assert_ne!(thread, runtime_thread);
    // The session exists for the synchronous API too (same files, shared cache).
    assert!(store.entry("agent:main:main").unwrap().is_some());
}

#[test]
fn an_index_update_gives_up_on_a_held_lock_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let store = SessionStore::new(&root).with_lock_timeout(Duration::from_millis(200));
    store.get_or_create("agent:main:main").unwrap();
    // Another process's lock: flock locks belong to the open file description, so a second
    // open of the file conflicts with it even in this process.
    let lock_path = root.join("sessions.json.lock");
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(&lock_path)
        .unwrap();
    held.lock().unwrap();
    let err = store.get_or_create("agent:main:other").unwrap_err();
    assert!(matches!(err, StoreError::LockTimeout(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{0}: still locked by another process after 0.2 s (a stopped or hung pincer holds it; `fuser {0}` names it)",
            lock_path.display()
        )
    );
    held.unlock().unwrap();
    // Once the lock is free the same update goes through, and nothing was lost.
    store.get_or_create("agent:main:other").unwrap();
    assert_eq!(store.list().unwrap().len(), 2);
}
