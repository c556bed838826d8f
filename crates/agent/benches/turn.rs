//! Loop overhead per turn: a prompt answered by an instant in-process provider (no I/O),
//! through the whole agent — events, state, subscribers. Reports; asserts nothing.
//! Run: `cargo bench -p pincer-agent --bench turn`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use pincer_agent::{Agent, AgentConfig, StreamFn};
use pincer_ai::{AssistantStream, MessageBuilder};

/// Replies "ok" at once: the events a provider would stream, with no network.
fn instant_provider() -> StreamFn {
    Arc::new(|model, _context, _options| {
        let mut b = MessageBuilder::new(model);
        let i = b.text_start();
        b.text_delta(i, "ok");
        b.done();
        AssistantStream::from_events(b.drain_events().collect())
    })
}

fn bench_turn(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let agent = Agent::new(AgentConfig::new(
        pincer_ai::providers::stub::model(),
        instant_provider(),
    ));
    // A subscriber draining events, as the transcript writer and the gateway would.
    let mut events = agent.subscribe();
    runtime.spawn(async move { while events.recv().await.is_some() {} });
    c.bench_function("agent/prompt_turn_instant_provider", |b| {
        b.to_async(&runtime).iter(|| async {
            agent.replace_messages(Vec::new());
            let _ = agent.prompt("hi").await;
        })
    });
}

criterion_group!(benches, bench_turn);
criterion_main!(benches);
