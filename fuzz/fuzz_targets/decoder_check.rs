//! Shared body of the per-provider decoder fuzz targets: arbitrary bytes in arbitrary
//! chunks must never panic, and the stream always ends with exactly one terminal event.

use pincer_ai::http::{Framing, StreamDecoder, decode_recorded};

pub fn check(decoder: &mut dyn StreamDecoder, input: &[u8]) {
    let Some((step, body)) = input.split_first() else {
        return;
    };
    let model = pincer_ai::providers::stub::model();
    let step = usize::from(*step % 16) + 1;
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let events = decode_recorded(&model, Framing::Sse, decoder, &chunks);
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:?}");
    assert!(events.last().is_some_and(|e| e.is_terminal()));
}
