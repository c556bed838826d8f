//! The offline model2vec embedder with a tiny model the test writes itself (a WordLevel
//! tokenizer of 8 words, an 8×16 `embeddings` tensor in hand-written safetensors, a
//! config): loading, ids, vectors, and clear errors for missing or broken directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pincer_memory::Embedder;
use pincer_memory::local::{LocalEmbedder, LocalModelError};

const VOCAB: [&str; 8] = [
    "[UNK]", "cat", "dog", "sat", "mat", "stock", "price", "fell",
];

fn tokenizer_json() -> String {
    let vocab: Vec<String> = VOCAB
        .iter()
        .enumerate()
        .map(|(i, w)| format!("\"{w}\": {i}"))
        .collect();
    format!(
        r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
  "normalizer": {{"type": "Lowercase"}}, "pre_tokenizer": {{"type": "Whitespace"}},
  "post_processor": null, "decoder": null,
  "model": {{"type": "WordLevel", "vocab": {{{}}}, "unk_token": "[UNK]"}}}}"#,
        vocab.join(", ")
    )
}

/// safetensors by hand: an 8-byte little-endian header length, the JSON header, the data.
/// Row i is the unit vector on dimension i, so a text's vector shows which words it has.
fn safetensors() -> Vec<u8> {
    let header = r#"{"embeddings":{"dtype":"F32","shape":[8,16],"data_offsets":[0,512]}}"#;
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    for row in 0..8 {
        for col in 0..16 {
            let x: f32 = if row == col { 1.0 } else { 0.0 };
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

fn write_model(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    std::fs::write(dir.join("model.safetensors"), safetensors()).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model_type": "model2vec", "normalize": true, "hidden_dim": 16}"#,
    )
    .unwrap();
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn a_tiny_model_embeds_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-m2v");
    write_model(&dir);
    let embedder = LocalEmbedder::load(&dir).unwrap();
    assert_eq!(embedder.id(), "local/tiny-m2v");
    assert_eq!(embedder.dim(), 16);
    let texts: Vec<String> = ["the cat sat", "Cat on the mat", "stock price fell", "zzz"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let vectors = embedder.embed(&texts).await.unwrap();
    assert_eq!(vectors.len(), 4);
    assert!(vectors.iter().all(|v| v.len() == 16));
    // "cat" and "sat" (rows 1 and 3), mean-pooled and normalised.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    assert!((vectors[0][1] - s).abs() < 1e-5 && (vectors[0][3] - s).abs() < 1e-5);
    assert!(cos(&vectors[0], &vectors[1]) > 0.4);
    assert!(cos(&vectors[0], &vectors[2]).abs() < 1e-6);
    // Only unknown words: a zero vector, not NaN.
    assert!(vectors[3].iter().all(|x| *x == 0.0));
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
}

#[test]
fn missing_and_broken_directories_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let nowhere = tmp.path().join("nope");
    let err = LocalEmbedder::load(&nowhere).unwrap_err();
    assert!(
        matches!(err, LocalModelError::NotADirectory { .. }),
        "{err}"
    );

    let dir = tmp.path().join("partial");
    write_model(&dir);
    std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    let err = LocalEmbedder::load(&dir).unwrap_err();
    assert!(err.to_string().contains("no model.safetensors"), "{err}");

    std::fs::write(dir.join("model.safetensors"), b"\x05\0\0\0\0\0\0\0{bad}").unwrap();
    let err = LocalEmbedder::load(&dir).unwrap_err();
    assert!(matches!(err, LocalModelError::Invalid { .. }), "{err}");

    write_model(&dir);
    std::fs::write(dir.join("tokenizer.json"), "not json").unwrap();
    let err = LocalEmbedder::load(&dir).unwrap_err();
    assert!(matches!(err, LocalModelError::Invalid { .. }), "{err}");

    write_model(&dir);
    std::fs::write(dir.join("config.json"), [0xff, 0xfe]).unwrap();
    assert!(LocalEmbedder::load(&dir).is_err());
}

#[test]
fn wrong_tensor_shapes_do_not_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("short");
    write_model(&dir);
    // The header promises 8×16 but the data is cut short.
    let mut bytes = safetensors();
    bytes.truncate(bytes.len() - 100);
    std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
    assert!(LocalEmbedder::load(&dir).is_err());

    // A table with fewer rows than the vocabulary: loading or embedding fails cleanly.
    let header = r#"{"embeddings":{"dtype":"F32","shape":[2,16],"data_offsets":[0,128]}}"#;
    let mut small = (header.len() as u64).to_le_bytes().to_vec();
    small.extend_from_slice(header.as_bytes());
    small.extend(std::iter::repeat_n(0u8, 128));
    std::fs::write(dir.join("model.safetensors"), small).unwrap();
    if let Ok(embedder) = LocalEmbedder::load(&dir) {
        let _ = embedder.embed_blocking(&["stock price fell".to_owned()]);
    }
}
