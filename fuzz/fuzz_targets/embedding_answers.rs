//! Arbitrary bytes as an embedding API's answer (OpenAI-compatible, Gemini, Ollama): the
//! decoder never panics, and an answer it accepts has exactly the vectors asked for, all of
//! one length and finite.
//!
//! Input: byte 0 picks the provider (÷3) and how many texts were sent (1..=4); the rest is
//! the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::embeddings::EmbeddingProvider;
use pincer_ai::embeddings::wire::decode;

fuzz_target!(|data: &[u8]| {
    let [pick, body @ ..] = data else {
        return;
    };
    let provider = [
        EmbeddingProvider::OpenAi,
        EmbeddingProvider::Gemini,
        EmbeddingProvider::Ollama,
    ][usize::from(*pick) % 3];
    let expected = 1 + usize::from(*pick / 3) % 4;
    if let Ok(vectors) = decode(provider, body, expected, None) {
        assert_eq!(vectors.len(), expected);
        let dims = vectors[0].len();
        assert!(vectors.iter().all(|v| v.len() == dims));
        assert!(vectors.iter().flatten().all(|x| x.is_finite()));
    }
});
