//! The mock's embedding endpoints: reading OpenAI-compatible (`/v1/embeddings`), Gemini
//! (`:batchEmbedContents`) and Ollama (`/api/embed`) requests, the deterministic vectors
//! they answer ([`mock_embedding`]: hashed words and character trigrams, so texts sharing
//! words are close), and the answers in each protocol's shape, bent by the embedding faults
//! (a wrong number of vectors, wrong or ragged dimensions).

use serde_json::{Value, json};

use crate::api::Api;
use crate::request::{BadRequest, Delivery, ParsedRequest};
use crate::scenario::Fault;

/// Dimensions of a vector when the request asks for none.
pub const DEFAULT_DIMS: usize = 64;
/// Largest dimension count the mock answers (keeps a bad request from allocating gigabytes).
pub(crate) const MAX_DIMS: usize = 8192;
/// Largest number of vectors one answer may hold.
pub(crate) const MAX_INPUTS: usize = 100_000;
/// OpenAI's limit on inputs per request.
const OPENAI_MAX_INPUTS: usize = 2048;
/// Gemini's limit on requests per `batchEmbedContents` call.
const GEMINI_MAX_REQUESTS: usize = 100;

/// Weight of a whole word in the hashed vector; trigrams weigh half, so a shared word counts
/// more than a shared fragment.
const WORD_WEIGHT: f32 = 1.0;
const TRIGRAM_WEIGHT: f32 = 0.5;

/// The deterministic embedding of `text` in `dims` dimensions: every lowercase word (runs of
/// alphanumeric characters) and every character trigram inside a word is hashed (FNV-1a, so
/// the result is the same on every machine and run) to one dimension and a sign, then the
/// vector is L2-normalised. Texts that share words have a high cosine; unrelated texts are
/// near 0. A text with no words gets the unit vector on dimension 0 (never a zero vector,
/// which real providers do not return either).
pub fn mock_embedding(text: &str, dims: usize) -> Vec<f32> {
    let mut vector = vec![0.0f32; dims];
    if dims == 0 {
        return vector;
    }
    let lower = text.to_lowercase();
    for word in lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        add_feature(&mut vector, b"w:", word.as_bytes(), WORD_WEIGHT);
        let chars: Vec<char> = word.chars().collect();
        for window in chars.windows(3) {
            let trigram: String = window.iter().collect();
            add_feature(&mut vector, b"t:", trigram.as_bytes(), TRIGRAM_WEIGHT);
        }
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut vector {
            *x /= norm;
        }
    } else if let Some(first) = vector.first_mut() {
        *first = 1.0;
    }
    vector
}

fn add_feature(vector: &mut [f32], kind: &[u8], feature: &[u8], weight: f32) {
    let hash = fnv1a(kind.iter().chain(feature));
    let len = vector.len() as u64;
    let index = usize::try_from(hash % len).unwrap_or(0);
    let sign = if hash >> 63 == 1 { -1.0 } else { 1.0 };
    if let Some(slot) = vector.get_mut(index) {
        *slot += sign * weight;
    }
}

fn fnv1a<'a>(bytes: impl Iterator<Item = &'a u8>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What an embedding request asks for: the model and, per input, its text and dimensions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EmbedRequest {
    pub model: String,
    pub items: Vec<(String, usize)>,
}

impl EmbedRequest {
    /// The request as the script sees it: the inputs joined by newlines stand in for the last
    /// user message, so `lastUserContains` rules (faults) can target embedding requests.
    pub fn parsed(&self, api: Api, body_bytes: usize) -> ParsedRequest {
        let mut req = ParsedRequest::new(api, self.model.clone(), Delivery::Json, body_bytes);
        let texts: Vec<&str> = self.items.iter().map(|(text, _)| text.as_str()).collect();
        req.last_user = Some(texts.join("\n"));
        req
    }
}

fn bad(message: impl Into<String>) -> BadRequest {
    BadRequest(message.into())
}

/// `request::parse`'s entry for the embedding protocols.
pub(crate) fn parse(
    api: Api,
    body: &Value,
    body_bytes: usize,
    google_target: Option<&str>,
) -> Result<ParsedRequest, BadRequest> {
    Ok(read(api, body, google_target)?.parsed(api, body_bytes))
}

/// Reads an embedding request of `api`. `google_target` is Gemini's `{model}:{method}`.
pub(crate) fn read(
    api: Api,
    body: &Value,
    google_target: Option<&str>,
) -> Result<EmbedRequest, BadRequest> {
    if !body.is_object() {
        return Err(bad("the request body must be a JSON object"));
    }
    match api {
        Api::GoogleEmbeddings => read_gemini(body, google_target.unwrap_or_default()),
        Api::OllamaEmbeddings => read_list(body, "input", usize::MAX),
        _ => read_list(body, "input", OPENAI_MAX_INPUTS),
    }
}

fn dims_field(value: Option<&Value>, name: &str) -> Result<usize, BadRequest> {
    match value {
        None | Some(Value::Null) => Ok(DEFAULT_DIMS),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=MAX_DIMS).contains(n))
            .ok_or_else(|| bad(format!("{name}: an integer in 1..={MAX_DIMS} is required"))),
    }
}

/// OpenAI and Ollama: `{"model", "input": string | [string], "dimensions"?}`.
fn read_list(body: &Value, key: &str, max_inputs: usize) -> Result<EmbedRequest, BadRequest> {
    let model = match body.get("model") {
        Some(Value::String(model)) if !model.is_empty() => model.clone(),
        _ => return Err(bad("model: a non-empty string is required")),
    };
    let dims = dims_field(body.get("dimensions"), "dimensions")?;
    let texts: Vec<String> = match body.get(key) {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    bad(format!(
                        "{key}: every item must be a string (the mock takes no token arrays)"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(bad(format!(
                "{key}: a string or an array of strings is required"
            )));
        }
    };
    if texts.len() > max_inputs.min(MAX_INPUTS) {
        return Err(bad(format!(
            "{key}: at most {} inputs per request, got {}",
            max_inputs.min(MAX_INPUTS),
            texts.len()
        )));
    }
    if max_inputs == OPENAI_MAX_INPUTS && (texts.is_empty() || texts.iter().any(String::is_empty)) {
        // OpenAI refuses empty strings and empty lists; Ollama accepts both.
        return Err(bad(format!(
            "{key}: must not be empty or contain empty strings"
        )));
    }
    Ok(EmbedRequest {
        model,
        items: texts.into_iter().map(|text| (text, dims)).collect(),
    })
}

/// Gemini: `{"requests": [{"model": "models/{m}", "content": {"parts": [{"text"}]},
/// "outputDimensionality"?}]}`, each request's model matching the one in the path.
fn read_gemini(body: &Value, target: &str) -> Result<EmbedRequest, BadRequest> {
    let model = target.split(':').next().unwrap_or_default();
    if model.is_empty() {
        return Err(bad("the model name is empty"));
    }
    let requests = body
        .get("requests")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("requests: an array is required"))?;
    if requests.is_empty() || requests.len() > GEMINI_MAX_REQUESTS {
        return Err(bad(format!(
            "requests: between 1 and {GEMINI_MAX_REQUESTS} requests per batch, got {}",
            requests.len()
        )));
    }
    let expected = format!("models/{model}");
    let mut items = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let named = request.get("model").and_then(Value::as_str);
        if named != Some(expected.as_str()) {
            return Err(bad(format!(
                "requests[{i}].model must be {expected:?}, got {named:?}"
            )));
        }
        let parts = request
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("requests[{i}].content.parts: an array is required")))?;
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect();
        let dims = dims_field(
            request.get("outputDimensionality"),
            &format!("requests[{i}].outputDimensionality"),
        )?;
        items.push((texts.join("\n"), dims));
    }
    Ok(EmbedRequest {
        model: model.to_owned(),
        items,
    })
}

/// The vectors the answer carries: one per input unless a fault says otherwise.
fn vectors(req: &EmbedRequest, fault: &Fault) -> Vec<Vec<f32>> {
    let count = fault.embed_count.unwrap_or(req.items.len());
    let mut out: Vec<Vec<f32>> = (0..count)
        .map(|i| {
            let (text, dims) = match req.items.len() {
                0 => ("", DEFAULT_DIMS),
                n => req
                    .items
                    .get(i % n)
                    .map_or(("", DEFAULT_DIMS), |(t, d)| (t.as_str(), *d)),
            };
            mock_embedding(text, fault.embed_dims.unwrap_or(dims))
        })
        .collect();
    if fault.embed_ragged
        && let Some(last) = out.last_mut()
    {
        last.pop();
    }
    out
}

/// A rough token count for the usage fields (4 bytes a token).
fn tokens(req: &EmbedRequest) -> usize {
    req.items
        .iter()
        .map(|(text, _)| text.len().div_ceil(4))
        .sum()
}

/// The answer document for `req` over `api`.
pub(crate) fn answer(api: Api, req: &EmbedRequest, fault: &Fault) -> Value {
    let vectors = vectors(req, fault);
    let tokens = tokens(req);
    match api {
        Api::GoogleEmbeddings => json!({
            "embeddings": vectors.into_iter().map(|v| json!({"values": v})).collect::<Vec<_>>()
        }),
        Api::OllamaEmbeddings => json!({
            "model": req.model,
            "embeddings": vectors,
            "total_duration": 1000,
            "load_duration": 0,
            "prompt_eval_count": tokens,
        }),
        _ => json!({
            "object": "list",
            "data": vectors
                .into_iter()
                .enumerate()
                .map(|(index, v)| json!({"object": "embedding", "index": index, "embedding": v}))
                .collect::<Vec<_>>(),
            "model": req.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn vectors_are_deterministic_normalised_and_close_for_shared_words() {
        let a = mock_embedding("The cat sat on the mat", 64);
        assert_eq!(a, mock_embedding("the CAT sat on the mat!", 64));
        assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
        let near = mock_embedding("a cat on a mat", 64);
        let far = mock_embedding("quarterly revenue forecast", 64);
        assert!(cos(&a, &near) > cos(&a, &far) + 0.3);
        assert_eq!(mock_embedding("", 8)[0], 1.0);
        assert!(mock_embedding("x", 0).is_empty());
        let zh = mock_embedding("我喜欢猫和狗", 64);
        assert!(
            cos(&zh, &mock_embedding("我喜欢猫", 64)) > cos(&zh, &mock_embedding("天气很好", 64))
        );
    }

    #[test]
    fn faults_bend_the_answer() {
        let req = read(
            Api::OpenAiEmbeddings,
            &json!({"model": "m", "input": ["a", "b"], "dimensions": 8}),
            None,
        )
        .unwrap();
        let fault = Fault::embed_count(3).and(Fault::embed_ragged());
        let v = vectors(&req, &fault);
        assert_eq!(v.len(), 3);
        assert_eq!((v[0].len(), v[2].len()), (8, 7));
        assert_eq!(vectors(&req, &Fault::embed_dims(5))[1].len(), 5);
    }

    #[test]
    fn bad_requests_are_refused() {
        let openai = |body: Value| read(Api::OpenAiEmbeddings, &body, None);
        assert!(openai(json!({"input": "x"})).is_err());
        assert!(openai(json!({"model": "m", "input": ""})).is_err());
        assert!(openai(json!({"model": "m", "input": [1, 2]})).is_err());
        assert!(openai(json!({"model": "m", "input": "x", "dimensions": 0})).is_err());
        let many: Vec<String> = (0..2049).map(|i| i.to_string()).collect();
        assert!(openai(json!({"model": "m", "input": many})).is_err());
        let gemini = |body: Value| read(Api::GoogleEmbeddings, &body, Some("e:batchEmbedContents"));
        assert!(gemini(json!({"requests": []})).is_err());
        assert!(
            gemini(json!({"requests": [{"model": "models/other", "content": {"parts": []}}]}))
                .is_err()
        );
        let ok = gemini(json!({"requests": [{"model": "models/e", "content": {"parts": [{"text": "hi"}]}, "outputDimensionality": 4}]}))
            .unwrap();
        assert_eq!(ok.items, vec![("hi".to_owned(), 4)]);
    }
}
