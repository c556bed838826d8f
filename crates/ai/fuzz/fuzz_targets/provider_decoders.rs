//! Every provider decoder, fed arbitrary bytes in arbitrary chunks: never a panic, and the
//! stream always ends with exactly one terminal event (`done` or `error`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::http::{Framing, StreamDecoder, decode_recorded};
use pincer_ai::providers::{
    WireApi, anthropic, google, openai_completions, openai_responses, proxy,
};

fuzz_target!(|input: &[u8]| {
    let [which, step, body @ ..] = input else {
        return;
    };
    let model = pincer_ai::providers::stub::model();
    let mut decoder: Box<dyn StreamDecoder> = match which % 5 {
        0 => openai_completions::OpenAiCompletions.decoder(&model),
        1 => openai_responses::OpenAiResponses.decoder(&model),
        2 => anthropic::AnthropicMessages.decoder(&model),
        3 => google::GoogleGenerativeAi.decoder(&model),
        _ => Box::new(proxy::ProxyDecoder::default()),
    };
    let step = usize::from(*step % 16) + 1;
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let events = decode_recorded(&model, Framing::Sse, decoder.as_mut(), &chunks);
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:?}");
    assert!(events.last().is_some_and(|e| e.is_terminal()));
});
