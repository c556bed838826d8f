//! The pi proxy stream decoder under arbitrary input (see `decoder_check.rs`).
#![no_main]

#[path = "decoder_check.rs"]
mod decoder_check;

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::proxy;

fuzz_target!(|input: &[u8]| {
    let mut decoder: Box<dyn pincer_ai::http::StreamDecoder> =
        Box::new(proxy::ProxyDecoder::default());
    decoder_check::check(decoder.as_mut(), input);
});
