//! The Anthropic Messages decoder under arbitrary input (see `decoder_check.rs`).
#![no_main]

#[path = "decoder_check.rs"]
mod decoder_check;

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::{WireApi, anthropic};

fuzz_target!(|input: &[u8]| {
    let model = pincer_ai::providers::stub::model();
    let mut decoder: Box<dyn pincer_ai::http::StreamDecoder> =
        anthropic::AnthropicMessages.decoder(&model);
    decoder_check::check(decoder.as_mut(), input);
});
