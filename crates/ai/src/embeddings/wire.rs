//! The three embedding wire formats: the request each provider expects for one batch, and
//! the decoder of its answer, which checks the shape (one finite vector per text, in order,
//! all of one length) and reports a wrong answer as an error, never a panic.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{EmbeddingConfig, EmbeddingError, EmbeddingProvider};
use crate::error::ErrorKind;

/// One HTTP request: where, which headers, what body.
#[derive(Clone)]
pub struct EmbedCall {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// The request for `texts` (one batch, already within the provider's limit).
pub fn request(config: &EmbeddingConfig, texts: &[String]) -> EmbedCall {
    let base = config.base_url();
    let mut headers = Vec::new();
    let (url, body) = match config.provider {
        EmbeddingProvider::OpenAi => {
            let mut body = json!({"model": config.model, "input": texts});
            if let Some(dims) = config.dimensions {
                body["dimensions"] = json!(dims);
            }
            (format!("{base}/embeddings"), body)
        }
        EmbeddingProvider::Gemini => {
            // The model may be configured with or without its `models/` prefix.
            let model = config
                .model
                .strip_prefix("models/")
                .unwrap_or(&config.model);
            let requests: Vec<Value> = texts
                .iter()
                .map(|text| {
                    let mut one = json!({
                        "model": format!("models/{model}"),
                        "content": {"parts": [{"text": text}]},
                    });
                    if let Some(task) = &config.task_type {
                        one["taskType"] = json!(task);
                    }
                    if let Some(dims) = config.dimensions {
                        one["outputDimensionality"] = json!(dims);
                    }
                    one
                })
                .collect();
            (
                format!("{base}/models/{model}:batchEmbedContents"),
                json!({"requests": requests}),
            )
        }
        EmbeddingProvider::Ollama => {
            let mut body = json!({"model": config.model, "input": texts});
            if let Some(dims) = config.dimensions {
                body["dimensions"] = json!(dims);
            }
            (format!("{base}/api/embed"), body)
        }
    };
    if let Some(key) = config
        .api_key
        .as_ref()
        .map(pincer_base::Secret::expose)
        .filter(|k| !k.is_empty())
    {
        match config.provider {
            EmbeddingProvider::Gemini => headers.push(("x-goog-api-key".into(), key.into())),
            _ => headers.push(("authorization".into(), format!("Bearer {key}"))),
        }
    }
    for (name, value) in &config.headers {
        headers.push((name.clone(), value.expose().to_owned()));
    }
    EmbedCall { url, headers, body }
}

#[derive(Deserialize)]
struct OpenAiAnswer {
    data: Vec<OpenAiItem>,
}

#[derive(Deserialize)]
struct OpenAiItem {
    /// Some compatible servers leave it out; then the position is the index.
    index: Option<u64>,
    embedding: Vec<f64>,
}

#[derive(Deserialize)]
struct GeminiAnswer {
    embeddings: Vec<GeminiItem>,
}

#[derive(Deserialize)]
struct GeminiItem {
    values: Vec<f64>,
}

#[derive(Deserialize)]
struct OllamaAnswer {
    embeddings: Vec<Vec<f64>>,
}

fn wrong(message: impl Into<String>) -> EmbeddingError {
    EmbeddingError::new(ErrorKind::Protocol, message)
}

/// Decodes a successful answer to a batch of `expected` texts. `dims`, when known, is the
/// length every vector must have; otherwise the vectors must agree with each other.
pub fn decode(
    provider: EmbeddingProvider,
    body: &[u8],
    expected: usize,
    dims: Option<usize>,
) -> Result<Vec<Vec<f32>>, EmbeddingError> {
    let bad_json = |e: serde_json::Error| {
        wrong(format!(
            "the embedding answer is not what {} sends: {e}",
            provider.name()
        ))
    };
    let raw: Vec<Vec<f64>> = match provider {
        EmbeddingProvider::OpenAi => {
            let answer: OpenAiAnswer = serde_json::from_slice(body).map_err(bad_json)?;
            order_by_index(answer.data, expected)?
        }
        EmbeddingProvider::Gemini => {
            let answer: GeminiAnswer = serde_json::from_slice(body).map_err(bad_json)?;
            answer.embeddings.into_iter().map(|e| e.values).collect()
        }
        EmbeddingProvider::Ollama => {
            let answer: OllamaAnswer = serde_json::from_slice(body).map_err(bad_json)?;
            answer.embeddings
        }
    };
    if raw.len() != expected {
        return Err(wrong(format!(
            "asked for {expected} embeddings, got {}",
            raw.len()
        )));
    }
    let mut want = dims;
    let mut out = Vec::with_capacity(raw.len());
    for (i, values) in raw.into_iter().enumerate() {
        if values.is_empty() {
            return Err(wrong(format!("embedding {i} is empty")));
        }
        match want {
            Some(d) if d != values.len() => {
                return Err(wrong(format!(
                    "embedding {i} has {} dimensions, expected {d}",
                    values.len()
                )));
            }
            Some(_) => {}
            None => want = Some(values.len()),
        }
        let mut vector = Vec::with_capacity(values.len());
        for value in values {
            // f64 -> f32 can overflow to infinity; such a vector is useless for cosine.
            let x = value as f32;
            if !x.is_finite() {
                return Err(wrong(format!(
                    "embedding {i} has a value that is not a finite f32 ({value})"
                )));
            }
            vector.push(x);
        }
        out.push(vector);
    }
    Ok(out)
}

/// OpenAI may answer out of order: put each vector at its `index`, which must name every
/// position exactly once.
fn order_by_index(
    items: Vec<OpenAiItem>,
    expected: usize,
) -> Result<Vec<Vec<f64>>, EmbeddingError> {
    if items.len() != expected {
        return Err(wrong(format!(
            "asked for {expected} embeddings, got {}",
            items.len()
        )));
    }
    let mut slots: Vec<Option<Vec<f64>>> = vec![None; expected];
    for (position, item) in items.into_iter().enumerate() {
        let index = item.index.unwrap_or(position as u64);
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| slots.get_mut(i))
            .ok_or_else(|| {
                wrong(format!(
                    "embedding index {index} is out of range 0..{expected}"
                ))
            })?;
        if slot.is_some() {
            return Err(wrong(format!("embedding index {index} appears twice")));
        }
        *slot = Some(item.embedding);
    }
    // Every slot is filled: as many items as slots, none twice.
    Ok(slots.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn openai_answers_are_put_in_index_order() {
        let body = br#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
        let v = decode(EmbeddingProvider::OpenAi, body, 2, None).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        let dup = br#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#;
        assert!(
            decode(EmbeddingProvider::OpenAi, dup, 2, None)
                .unwrap_err()
                .message
                .contains("twice")
        );
        let out = br#"{"data":[{"index":5,"embedding":[1]}]}"#;
        assert!(decode(EmbeddingProvider::OpenAi, out, 1, None).is_err());
    }

    #[test]
    fn wrong_shapes_are_errors() {
        let p = EmbeddingProvider::Ollama;
        assert!(
            decode(p, br#"{"embeddings":[[1,2],[1]]}"#, 2, None)
                .unwrap_err()
                .message
                .contains("dimensions")
        );
        assert!(decode(p, br#"{"embeddings":[[1,2]]}"#, 1, Some(3)).is_err());
        assert!(
            decode(p, br#"{"embeddings":[[1e300]]}"#, 1, None)
                .unwrap_err()
                .message
                .contains("finite")
        );
        assert!(decode(p, br#"{"embeddings":[["a"]]}"#, 1, None).is_err());
        assert!(decode(p, br#"{"embeddings":[[]]}"#, 1, None).is_err());
        assert!(
            decode(
                EmbeddingProvider::Gemini,
                br#"{"embeddings":[{"values":[1]}]}"#,
                2,
                None
            )
            .is_err()
        );
        assert!(
            decode(EmbeddingProvider::Gemini, b"not json", 1, None)
                .unwrap_err()
                .is_wrong_answer()
        );
    }
}
