//! The SSE framer must never panic, and how the body is split into chunks must never change
//! what comes out: feeding the input whole and feeding it cut at fuzzer-chosen points must
//! yield the same events (or the same error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::framing::{FrameError, SseEvent, SseFramer};

fn frame(chunks: &[&[u8]]) -> Result<Vec<(String, String)>, FrameError> {
    let mut framer = SseFramer::new(4096);
    let mut out = Vec::new();
    let mut push = |e: SseEvent<'_>| {
        out.push((e.event.to_owned(), e.data.to_owned()));
        Ok::<(), FrameError>(())
    };
    for chunk in chunks {
        framer.feed(chunk, &mut push)?;
    }
    framer.finish(&mut push)?;
    Ok(out)
}

fuzz_target!(|input: &[u8]| {
    let Some((&cut_seed, body)) = input.split_first() else {
        return;
    };
    let whole = frame(&[body]);
    let mut chunks = Vec::new();
    let mut rest = body;
    let step = usize::from(cut_seed % 7) + 1;
    while !rest.is_empty() {
        let n = step.min(rest.len());
        chunks.push(&rest[..n]);
        rest = &rest[n..];
    }
    let split = frame(&chunks);
    // Errors may be reported at a different offset; success must match exactly.
    match (&whole, &split) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("chunking changed the outcome: {whole:?} vs {split:?}"),
    }
});
