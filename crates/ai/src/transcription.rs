//! Speech to text through OpenAI's `/audio/transcriptions` API, which OpenAI (`whisper-1`,
//! `gpt-4o-mini-transcribe`), Groq and local servers (whisper.cpp's, LocalAI…) all speak:
//! a `multipart/form-data` POST of the file and the model, answered with `{"text": …}`.
//!
//! The multipart body is written here rather than through reqwest's `multipart` feature:
//! it is two fields and a file, and the feature would add a MIME-guessing dependency for
//! what the caller already knows.

use std::time::Duration;

use serde::Deserialize;

/// Where and with what a voice note is transcribed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptionEndpoint {
    /// The API's base URL, e.g. `https://api.openai.com/v1` (`/audio/transcriptions` is
    /// appended).
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<String>,
    /// How long the whole request may take.
    pub timeout: Duration,
}

/// Why a transcription failed.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptionError {
    #[error("the transcription service could not be reached: {0}")]
    Unreachable(String),
    #[error("the transcription service answered {status}: {body}")]
    Refused { status: u16, body: String },
    #[error("the transcription service's answer had no text: {0}")]
    BadAnswer(String),
}

/// An endpoint with the HTTP client that reaches it.
#[derive(Debug, Clone)]
pub struct Transcriber {
    client: reqwest::Client,
    pub endpoint: TranscriptionEndpoint,
}

impl Transcriber {
    /// A transcriber on the built-in providers' client settings.
    pub fn new(endpoint: TranscriptionEndpoint) -> Self {
        Self {
            client: crate::client::default_http_client(),
            endpoint,
        }
    }

    /// The text spoken in `bytes`; see [`transcribe`].
    pub async fn transcribe(
        &self,
        file_name: &str,
        mime: &str,
        bytes: &[u8],
    ) -> Result<String, TranscriptionError> {
        transcribe(&self.client, &self.endpoint, file_name, mime, bytes).await
    }
}

/// The base URL of a provider known to serve `/audio/transcriptions`.
pub fn default_base_url(provider: &str) -> Option<&'static str> {
    match provider {
        "openai" => Some("https://api.openai.com/v1"),
        "groq" => Some("https://api.groq.com/openai/v1"),
        _ => None,
    }
}

#[derive(Deserialize)]
struct Answer {
    text: String,
}

/// The text spoken in `bytes` (an audio file named `file_name`, of type `mime`).
pub async fn transcribe(
    client: &reqwest::Client,
    endpoint: &TranscriptionEndpoint,
    file_name: &str,
    mime: &str,
    bytes: &[u8],
) -> Result<String, TranscriptionError> {
    let boundary = boundary_for(bytes);
    let body = multipart_body(&boundary, &endpoint.model, file_name, mime, bytes);
    let url = format!(
        "{}/audio/transcriptions",
        endpoint.base_url.trim_end_matches('/')
    );
    let mut request = client
        .post(url)
        .timeout(endpoint.timeout)
        .header(
            reqwest::header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body);
    if let Some(key) = &endpoint.api_key {
        request = request.bearer_auth(key);
    }
    let response = request
        .send()
        .await
        .map_err(|e| TranscriptionError::Unreachable(crate::error_text::error_chain(&e)))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| TranscriptionError::Unreachable(crate::error_text::error_chain(&e)))?;
    if !status.is_success() {
        return Err(TranscriptionError::Refused {
            status: status.as_u16(),
            body: crate::error_text::excerpt(&text, 300),
        });
    }
    let answer: Answer =
        serde_json::from_str(&text).map_err(|e| TranscriptionError::BadAnswer(e.to_string()))?;
    Ok(answer.text.trim().to_owned())
}

/// A boundary that does not occur in `bytes`.
fn boundary_for(bytes: &[u8]) -> String {
    let mut n: u64 = 0x5049_4e43_4552; // "PINCER"
    loop {
        let boundary = format!("----pincer-{n:016x}");
        if !bytes
            .windows(boundary.len())
            .any(|w| w == boundary.as_bytes())
        {
            return boundary;
        }
        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    }
}

fn multipart_body(
    boundary: &str,
    model: &str,
    file_name: &str,
    mime: &str,
    bytes: &[u8],
) -> Vec<u8> {
    // Quotes and line breaks would end the header's quoted string early.
    let file_name: String = file_name
        .chars()
        .map(|c| {
            if matches!(c, '"' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let mut body = Vec::with_capacity(bytes.len() + 512);
    let mut field = |name: &str, value: &str| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    };
    field("model", model);
    field("response_format", "json");
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; \
             filename=\"{file_name}\"\r\nContent-Type: {mime}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_has_the_model_the_format_and_the_file() {
        let body = multipart_body("B", "whisper-1", "a\"b.ogg", "audio/ogg", b"OggS\x00");
        assert_eq!(
            body,
            b"--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
              --B\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\njson\r\n\
              --B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a_b.ogg\"\r\n\
              Content-Type: audio/ogg\r\n\r\nOggS\x00\r\n--B--\r\n"
        );
    }

    #[test]
    fn the_boundary_never_occurs_in_the_file() {
        let first = boundary_for(b"");
        let tricky = format!("xx{first}yy");
        let other = boundary_for(tricky.as_bytes());
        assert_ne!(first, other);
        assert!(!tricky.contains(&other));
    }
}
