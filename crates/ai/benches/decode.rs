//! Decoding throughput of recorded streams, per provider: text deltas per second and bytes
//! per second through framing + decoding + message building, plus allocations per delta.
//! Reports numbers; asserts nothing. Run: `cargo bench -p pincer-ai --bench decode`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pincer_ai::http::{Framing, StreamDecoder, decode_recorded};
use pincer_ai::providers::{
    WireApi, anthropic, google, openai_completions, openai_responses, proxy,
};
use pincer_ai::{AssistantMessageEvent, Model};

/// Counts allocations so the report can show allocations per delta.
struct CountingAlloc;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is upheld by `System`; the counter is a relaxed atomic increment
// that neither allocates nor touches the memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same layout the caller gave us, see above.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout, see above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwards a pointer and layout that came from `System`, see above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const DELTAS: usize = 10_000;
const READ_SIZE: usize = 16 * 1024;

/// A recorded stream of `DELTAS` one-token text deltas, as each API sends it.
fn recorded(api: &str) -> String {
    let mut s = String::new();
    match api {
        "openai-completions" => {
            s.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
            for _ in 0..DELTAS {
                s.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}\n\n");
            }
            s.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
            s.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10000,\"total_tokens\":10010}}\n\ndata: [DONE]\n\n");
        }
        "openai-responses" => {
            s.push_str("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n");
            s.push_str("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n");
            s.push_str("event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}}\n\n");
            for i in 0..DELTAS {
                s.push_str(&format!("event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"sequence_number\":{},\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"tok \"}}\n\n", i + 3));
            }
            s.push_str("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":99999,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"...\",\"annotations\":[]}]}}\n\n");
            s.push_str("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":100000,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":10000,\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":10010}}}\n\n");
        }
        "anthropic-messages" => {
            s.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n");
            s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
            for _ in 0..DELTAS {
                s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok \"}}\n\n");
            }
            s.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
            s.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":10000}}\n\n");
            s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        }
        "google-generative-ai" => {
            for _ in 0..DELTAS {
                s.push_str("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"tok \"}],\"role\":\"model\"},\"index\":0}],\"modelVersion\":\"m\"}\r\n\r\n");
            }
            s.push_str("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":10000,\"totalTokenCount\":10010},\"modelVersion\":\"m\"}\r\n\r\n");
        }
        _ => {
            s.push_str("data: {\"type\":\"start\"}\n\ndata: {\"type\":\"text_start\",\"contentIndex\":0}\n\n");
            for _ in 0..DELTAS {
                s.push_str(
                    "data: {\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"tok \"}\n\n",
                );
            }
            s.push_str("data: {\"type\":\"text_end\",\"contentIndex\":0}\n\n");
            s.push_str("data: {\"type\":\"done\",\"reason\":\"stop\",\"usage\":{\"input\":10,\"output\":10000,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":10010,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}\n\n");
        }
    }
    s
}

fn decoder(api: &str, model: &Model) -> Box<dyn StreamDecoder> {
    match api {
        "openai-completions" => openai_completions::OpenAiCompletions.decoder(model),
        "openai-responses" => openai_responses::OpenAiResponses.decoder(model),
        "anthropic-messages" => anthropic::AnthropicMessages.decoder(model),
        "google-generative-ai" => google::GoogleGenerativeAi.decoder(model),
        _ => Box::new(proxy::ProxyDecoder::default()),
    }
}

const APIS: [&str; 5] = [
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "proxy",
];

fn decode_once(api: &str, model: &Model, chunks: &[&[u8]]) -> Vec<AssistantMessageEvent> {
    let mut d = decoder(api, model);
    decode_recorded(model, Framing::Sse, d.as_mut(), chunks)
}

fn bench_decode(c: &mut Criterion) {
    let model = pincer_ai::providers::stub::model();
    for api in APIS {
        let body = recorded(api);
        let chunks: Vec<&[u8]> = body.as_bytes().chunks(READ_SIZE).collect();
        // One untimed run checks the recording decodes and counts allocations per delta.
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let events = decode_once(api, &model, &chunks);
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        let deltas = events
            .iter()
            .filter(|e| matches!(e, AssistantMessageEvent::TextDelta { .. }))
            .count();
        let ok = matches!(events.last(), Some(AssistantMessageEvent::Done { .. }));
        println!(
            "{api}: {deltas} deltas, {} bytes, {:.2} allocations per delta, finished: {ok}",
            body.len(),
            allocations as f64 / deltas.max(1) as f64
        );

        let mut group = c.benchmark_group(format!("decode/{api}"));
        group
            .sample_size(20)
            .measurement_time(std::time::Duration::from_secs(2));
        group.throughput(Throughput::Elements(DELTAS as u64));
        group.bench_function("deltas", |b| b.iter(|| decode_once(api, &model, &chunks)));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function("bytes", |b| b.iter(|| decode_once(api, &model, &chunks)));
        group.finish();
    }
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
