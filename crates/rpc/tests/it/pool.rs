//! `RpcPool` over real worker processes (the scripted `pincer-mock-rpc` of pincer-testkit):
//! the acquire order (bound, exact, adapted, spawned, evicted), priority waits, maintenance
//! (idle workers stopped, the pool topped up to `min`), a crashed worker replaced, and
//! `find_best_match` never starting a process.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pincer_rpc::{
    CapabilityProfile, PoolSettings, Reuse, RpcClient, RpcError, RpcPool, WorkerSpawner, WorkerSpec,
};
use pincer_testkit::mock_rpc::write_script;
use pincer_testkit::mock_rpc_path;
use serde_json::json;

/// Starts fake workers; each logs what it received to `<dir>/<n>.log`.
struct FakeSpawner {
    script: PathBuf,
    dir: PathBuf,
    count: std::sync::atomic::AtomicUsize,
}

impl WorkerSpawner for FakeSpawner {
    fn spawn(&self, _profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        let n = self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let spec = WorkerSpec::new(mock_rpc_path().unwrap())
            .arg(self.script.display().to_string())
            .arg(self.dir.join(format!("{n}.log")).display().to_string());
        RpcClient::spawn(spec)
    }
}

fn pool(settings: PoolSettings) -> (RpcPool, tempfile::TempDir) {
    pool_with(settings, json!({"rules": []}))
}

fn pool_with(settings: PoolSettings, script: serde_json::Value) -> (RpcPool, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "script.json", &script).unwrap();
    let spawner = FakeSpawner {
        script,
        dir: dir.path().to_path_buf(),
        count: Default::default(),
    };
    (RpcPool::new(settings, spawner), dir)
}

fn profile(model: &str) -> CapabilityProfile {
    CapabilityProfile {
        role: "main".into(),
        cwd: "/work".into(),
        hard_args: vec!["--tools".into(), "read".into()],
        provider: Some("mock".into()),
        model: Some(model.into()),
        ..CapabilityProfile::default()
    }
}

fn other_hard() -> CapabilityProfile {
    CapabilityProfile {
        role: "ops".into(),
        ..profile("primary")
    }
}

fn received(dir: &Path, n: usize) -> String {
    std::fs::read_to_string(dir.join(format!("{n}.log"))).unwrap_or_default()
}

fn settings(min: usize, max: usize) -> PoolSettings {
    PoolSettings {
        min,
        max,
        idle_timeout: Duration::from_secs(300),
        auto_answer_ui: true,
    }
}

#[tokio::test]
async fn a_session_gets_its_own_worker_back_then_others_reuse_or_adapt_it() {
    let (pool, dir) = pool(settings(0, 2));
    let first = pool.acquire("s1", &profile("primary"), 0).await.unwrap();
    assert_eq!(first.reuse, Reuse::Spawned);
    let pid = first.client().pid();
    drop(first);

    let again = pool.acquire("s1", &profile("primary"), 0).await.unwrap();
    assert_eq!(again.reuse, Reuse::Bound);
    assert!(!again.reuse.needs_session_switch());
    assert_eq!(again.client().pid(), pid);
    drop(again);

    let other = pool.acquire("s2", &profile("primary"), 0).await.unwrap();
    assert_eq!(other.reuse, Reuse::Exact);
    assert!(other.reuse.needs_session_switch());
    assert_eq!(other.client().pid(), pid);
    drop(other);

    // Same hard profile, another model: the idle worker is switched over RPC.
    let adapted = pool.acquire("s3", &profile("backup"), 0).await.unwrap();
    assert_eq!(adapted.reuse, Reuse::Adapted);
    assert_eq!(adapted.client().pid(), pid);
    let log = received(dir.path(), 0);
    assert!(
        log.contains(r#""type":"set_model""#) && log.contains(r#""modelId":"backup""#),
        "{log}"
    );
    drop(adapted);
    // Now it is an exact match for the new model.
    let exact = pool.acquire("s4", &profile("backup"), 0).await.unwrap();
    assert_eq!(exact.reuse, Reuse::Exact);
    assert_eq!(pool.stats().spawned, 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn at_max_the_least_recently_used_idle_worker_makes_room() {
    let (pool, _dir) = pool(settings(0, 2));
    let a = pool.acquire("a", &profile("primary"), 0).await.unwrap();
    let a_pid = a.client().pid().unwrap();
    drop(a);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let b = pool.acquire("b", &other_hard(), 0).await.unwrap();
    drop(b);
    let third = CapabilityProfile {
        role: "third".into(),
        ..profile("primary")
    };
    let c = pool.acquire("c", &third, 0).await.unwrap();
    assert_eq!(c.reuse, Reuse::Spawned);
    let stats = pool.stats();
    assert_eq!((stats.workers, stats.spawned, stats.stopped), (2, 3, 1));
    // The evicted one (the least recently used, `a`'s) is gone.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!Path::new(&format!("/proc/{a_pid}")).exists());
    pool.shutdown().await;
}

#[tokio::test]
async fn when_every_worker_is_busy_the_highest_priority_waits_least() {
    let (pool, _dir) = pool(settings(0, 1));
    let busy = pool.acquire("x", &profile("primary"), 0).await.unwrap();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (name, priority) in [("low", 1u8), ("high", 9), ("mid", 5)] {
        let pool = pool.clone();
        let order = Arc::clone(&order);
        tasks.push(tokio::spawn(async move {
            let worker = pool
                .acquire(name, &profile("primary"), priority)
                .await
                .unwrap();
            order.lock().unwrap().push(name);
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(worker);
        }));
        // They queue in this order.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pool.stats().waiting, 3);
    drop(busy);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), ["high", "mid", "low"]);
    assert_eq!(pool.stats().spawned, 1, "one worker served them all");
    pool.shutdown().await;
}

#[tokio::test]
async fn maintenance_stops_idle_workers_above_min_and_tops_up_to_min() {
    let (pool, _dir) = pool(PoolSettings {
        min: 1,
        max: 3,
        idle_timeout: Duration::from_millis(10),
        auto_answer_ui: true,
    });
    let a = pool.acquire("a", &profile("primary"), 0).await.unwrap();
    let b = pool.acquire("b", &profile("primary"), 0).await.unwrap();
    let c = pool.acquire("c", &profile("primary"), 0).await.unwrap();
    drop((a, b, c));
    tokio::time::sleep(Duration::from_millis(30)).await;
    pool.maintain().await;
    assert_eq!(pool.stats().workers, 1, "idle ones stopped down to min");

    // A crashed worker is dropped and replaced up to min.
    let worker = pool.acquire("a", &profile("primary"), 0).await.unwrap();
    let pid = worker.client().pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    worker.client().exited().await;
    drop(worker);
    pool.maintain().await;
    let stats = pool.stats();
    assert_eq!(stats.workers, 1);
    let next = pool.acquire("a", &profile("primary"), 0).await.unwrap();
    assert_ne!(next.client().pid(), Some(pid));
    assert!(next.client().is_alive());
    pool.shutdown().await;
}

#[tokio::test]
async fn find_best_match_never_starts_a_process() {
    let (pool, _dir) = pool(settings(0, 2));
    assert!(
        pool.find_best_match("s", &profile("primary"))
            .await
            .is_none()
    );
    assert_eq!(pool.stats().spawned, 0);
    let worker = pool.acquire("s", &profile("primary"), 0).await.unwrap();
    // Busy: still nothing.
    assert!(
        pool.find_best_match("s", &profile("primary"))
            .await
            .is_none()
    );
    drop(worker);
    let found = pool
        .find_best_match("s", &profile("primary"))
        .await
        .unwrap();
    assert_eq!(found.reuse, Reuse::Bound);
    drop(found);
    pool.shutdown().await;
    assert!(pool.acquire("s", &profile("primary"), 0).await.is_err());
}

#[tokio::test]
async fn a_new_worker_is_set_up_and_its_dialogs_are_answered() {
    let (pool, dir) = pool_with(
        settings(0, 1),
        json!({"rules": [{"on": "get_state", "events": [
            {"type": "extension_ui_request", "id": "d1", "method": "confirm",
             "title": "Proceed?", "message": "really?"},
            {"type": "extension_ui_request", "id": "n1", "method": "notify", "message": "fyi"}
        ]}]}),
    );
    let worker = pool.acquire("s", &profile("primary"), 0).await.unwrap();
    let setup: Vec<String> = received(dir.path(), 0)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        setup,
        [
            "set_auto_compaction",
            "set_auto_retry",
            "set_steering_mode",
            "set_follow_up_mode"
        ]
    );
    worker
        .client()
        .request(pincer_rpc::RpcCommand::GetState, Duration::from_secs(10))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let answer = loop {
        let log = received(dir.path(), 0);
        if let Some(line) = log.lines().find(|l| l.contains("extension_ui_response")) {
            break serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "no answer: {log}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        answer,
        json!({"type": "extension_ui_response", "id": "d1", "confirmed": true})
    );
    // A notification wants no answer.
    assert!(!received(dir.path(), 0).contains(r#""id":"n1""#));
    drop(worker);
    pool.shutdown().await;
}

/// Starts a worker that dies over its model when it is given one (as pi does for a
/// provider it does not know), and a working one otherwise; notes each profile's model.
struct ModelPickySpawner {
    refuses: PathBuf,
    works: PathBuf,
    dir: PathBuf,
    models: std::sync::Mutex<Vec<Option<String>>>,
}

impl WorkerSpawner for ModelPickySpawner {
    fn spawn(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        let mut models = self.models.lock().unwrap();
        models.push(profile.model.clone());
        let script = if profile.model.is_some() {
            &self.refuses
        } else {
            &self.works
        };
        let spec = WorkerSpec::new(mock_rpc_path().unwrap())
            .arg(script.display().to_string())
            .arg(
                self.dir
                    .join(format!("{}.log", models.len() - 1))
                    .display()
                    .to_string(),
            );
        RpcClient::spawn(spec)
    }
}

#[tokio::test]
async fn a_worker_refusing_its_model_is_started_again_on_its_default_model() {
    let dir = tempfile::tempdir().unwrap();
    let refuses = write_script(
        dir.path(),
        "refuses.json",
        &json!({"rules": [{"on": "*", "silent": true,
            "stderr": "Error: Unknown provider \"nope\". Use --list-models to see available providers/models.\n",
            "then": "exit:1"}]}),
    )
    .unwrap();
    let works = write_script(dir.path(), "works.json", &json!({"rules": []})).unwrap();
    let spawner = Arc::new(ModelPickySpawner {
        refuses,
        works,
        dir: dir.path().to_path_buf(),
        models: Default::default(),
    });
    struct Shared(Arc<ModelPickySpawner>);
    impl WorkerSpawner for Shared {
        fn spawn(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
            self.0.spawn(profile)
        }
    }
    let pool = RpcPool::new(settings(0, 2), Shared(Arc::clone(&spawner)));
    let worker = pool.acquire("s1", &profile("nope"), 1).await.unwrap();
    assert_eq!(worker.reuse, Reuse::Spawned);
    assert!(worker.client().is_alive());
    assert_eq!(
        *spawner.models.lock().unwrap(),
        [Some("nope".to_owned()), None],
        "tried with the model, then without"
    );
    assert_eq!(pool.stats().workers, 1);
    drop(worker);

    // A failure that is not about the model is not retried.
    let crashes = write_script(
        dir.path(),
        "crashes.json",
        &json!({"rules": [{"on": "*", "silent": true, "stderr": "segfault\n", "then": "exit:3"}]}),
    )
    .unwrap();
    let plain = RpcPool::new(
        settings(0, 2),
        FakeSpawner {
            script: crashes,
            dir: dir.path().to_path_buf(),
            count: Default::default(),
        },
    );
    let err = plain
        .acquire("s1", &profile("primary"), 1)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("segfault"), "{err}");
    pool.shutdown().await;
}
