//! exec latency: from the call to the first streamed update (`echo`), and a whole short
//! foreground command. Reports; asserts nothing. Run: `cargo bench -p pincer-tools --bench exec`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use pincer_agent::{ToolContext, ToolOutput};
use pincer_tools::{ExecSecurity, PathPolicy, ProcessRegistry, exec_tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn bench_exec(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = std::env::temp_dir();
    let policy = PathPolicy::workspace(&dir).unwrap_or_else(|e| panic!("{e}"));
    let registry = ProcessRegistry::new();
    let exec = exec_tools(policy, registry.clone(), ExecSecurity::Full, "bench").remove(0);

    c.bench_function("exec/spawn_to_first_update", |b| {
        b.to_async(&runtime).iter(|| async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
            let sink = Arc::new(move |_: ToolOutput| {
                let _ = tx.send(());
            });
            let ctx = ToolContext::new("b", CancellationToken::new()).with_updates(sink);
            let call = exec.execute(json!({"command": "echo hi; sleep 0.2"}), ctx);
            tokio::pin!(call);
            tokio::select! {
                _ = rx.recv() => {}
                _ = &mut call => {}
            }
        })
    });
    c.bench_function("exec/echo_to_completion", |b| {
        b.to_async(&runtime).iter(|| async {
            let ctx = ToolContext::new("b", CancellationToken::new());
            let _ = exec.execute(json!({"command": "echo hi"}), ctx).await;
        })
    });
    runtime.block_on(registry.shutdown());
}

criterion_group!(benches, bench_exec);
criterion_main!(benches);
