//! Arbitrary bytes through the parsers of google-vertex and google-gemini-cli: the Cloud Code
//! Assist stream decoder (see `decoder_check.rs`), an Application Default Credentials file,
//! a Google token answer, a Code Assist key, and Code Assist's loadCodeAssist and operation
//! answers. None of them may panic.
#![no_main]

#[path = "decoder_check.rs"]
mod decoder_check;

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::google::{adc, gemini_cli};
use pincer_ai::providers::{WireApi, google};
use pincer_auth::oauth::gemini_cli::{parse_operation, plan_after_load};

fuzz_target!(|input: &[u8]| {
    let model = pincer_ai::providers::stub::model();
    let mut decoder: Box<dyn pincer_ai::http::StreamDecoder> =
        google::GoogleGeminiCli.decoder(&model);
    decoder_check::check(decoder.as_mut(), input);
    let _ = adc::parse_credentials(input);
    let _ = adc::parse_token_answer(input, std::time::Instant::now());
    let _ = plan_after_load(200, input, None);
    let _ = plan_after_load(403, input, Some("p"));
    let _ = parse_operation(input);
    if let Ok(text) = std::str::from_utf8(input) {
        let _ = gemini_cli::parse_key(Some(text));
        let _ = adc::pem_to_der(text);
    }
});
