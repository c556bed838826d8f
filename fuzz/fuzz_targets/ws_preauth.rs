//! Arbitrary bytes from a WebSocket client before `connect`, repeated to twice the pre-auth
//! read budget: tungstenite over the gateway's budgeted stream never panics, never reads
//! past the budget, and never yields more message bytes than it allowed in.
#![no_main]

use futures_util::StreamExt;
use libfuzzer_sys::fuzz_target;
use pincer_gateway::server::preauth_io::{BudgetedIo, PREAUTH_READ_BUDGET, ReadBudget};
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

fuzz_target!(|input: &[u8]| {
    if input.is_empty() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let sent = 2 * PREAUTH_READ_BUDGET;
        // Room for everything both ways, so neither side ever waits on the other.
        let (mut peer, ours) = tokio::io::duplex(sent + 64 * 1024);
        let data: Vec<u8> = input.iter().copied().cycle().take(sent).collect();
        peer.write_all(&data).await.expect("buffered");
        let budget = ReadBudget::new(PREAUTH_READ_BUDGET);
        let io = BudgetedIo::new(ours, budget.clone());
        // tungstenite's defaults (64 MiB messages): only the budget stands in the way.
        let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
        let mut yielded = 0usize;
        while let Some(item) = ws.next().await {
            match item {
                Ok(message) => {
                    yielded += message.len();
                    assert!(yielded <= PREAUTH_READ_BUDGET, "{yielded} bytes let in");
                }
                Err(_) => break,
            }
        }
        assert_eq!(
            budget.remaining().map(|left| left <= PREAUTH_READ_BUDGET),
            Some(true)
        );
        drop(peer);
    });
});
