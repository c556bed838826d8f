//! The worker pool's own cost, over real processes (the scripted `pincer-mock-rpc`):
//! - `rpc_pool/acquire_reuse`: acquiring the worker already bound to the session and
//!   giving it back (the path every message of a warm session takes);
//! - then 200 sessions at once on a pool of at most 8: each acquires a worker, makes one
//!   request (`get_state`) and releases it; reports throughput and the wait for a worker.
//!
//! Reports; asserts nothing. Run: `cargo bench -p pincer-gateway --bench rpc_pool`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use pincer_rpc::{
    CapabilityProfile, PoolSettings, RpcClient, RpcCommand, RpcError, RpcPool, WorkerSpawner,
    WorkerSpec,
};
use pincer_testkit::mock_rpc::write_script;

struct Spawner {
    program: std::path::PathBuf,
    script: std::path::PathBuf,
}

impl WorkerSpawner for Spawner {
    fn spawn(&self, _profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        RpcClient::spawn(WorkerSpec::new(&self.program).arg(self.script.display().to_string()))
    }
}

fn pool(max: usize, dir: &std::path::Path) -> RpcPool {
    let script = write_script(dir, "script.json", &serde_json::json!({"rules": []}))
        .unwrap_or_else(|e| panic!("script: {e}"));
    let program = pincer_testkit::mock_rpc_path().unwrap_or_else(|e| panic!("mock worker: {e}"));
    RpcPool::new(
        PoolSettings {
            min: 0,
            max,
            idle_timeout: Duration::from_secs(300),
            auto_answer_ui: true,
        },
        Spawner { program, script },
    )
}

fn profile() -> CapabilityProfile {
    CapabilityProfile {
        role: "main".into(),
        cwd: "/work".into(),
        provider: Some("mock".into()),
        model: Some("primary".into()),
        ..CapabilityProfile::default()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn contention(runtime: &tokio::runtime::Runtime, dir: &std::path::Path) {
    const SESSIONS: usize = 200;
    let pool = pool(8, dir);
    let started = Instant::now();
    let (waits, spawned) = runtime.block_on(async {
        let mut tasks = Vec::new();
        for n in 0..SESSIONS {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                let asked = Instant::now();
                let worker = pool
                    .acquire(&format!("s{n}"), &profile(), 0)
                    .await
                    .unwrap_or_else(|e| panic!("acquire: {e}"));
                let waited = asked.elapsed();
                worker
                    .client()
                    .request(RpcCommand::GetState, Duration::from_secs(10))
                    .await
                    .unwrap_or_else(|e| panic!("request: {e}"));
                waited
            }));
        }
        let mut waits = Vec::new();
        for task in tasks {
            waits.push(task.await.unwrap_or_else(|e| panic!("task: {e}")));
        }
        let spawned = pool.stats().spawned;
        pool.shutdown().await;
        (waits, spawned)
    });
    let elapsed = started.elapsed();
    let mut waits = waits;
    waits.sort();
    println!(
        "rpc_pool/200 sessions on max 8: {:.0} sessions/s; wait for a worker p50 {:?}, p99 {:?} \
         ({} workers started)",
        SESSIONS as f64 / elapsed.as_secs_f64(),
        percentile(&waits, 0.5),
        percentile(&waits, 0.99),
        spawned
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let warm = pool(1, dir.path());
    let profile = Arc::new(profile());
    // The worker exists and is bound before timing starts.
    runtime.block_on(async {
        drop(warm.acquire("s", &profile, 0).await);
    });
    let mut criterion = Criterion::default().configure_from_args();
    criterion.bench_function("rpc_pool/acquire_reuse", |b| {
        b.to_async(&runtime).iter(|| async {
            let worker = warm.acquire("s", &profile, 0).await;
            drop(worker);
        })
    });
    runtime.block_on(warm.shutdown());
    contention(&runtime, dir.path());
    criterion.final_summary();
}
