//! `Fault`: the ways a response can go wrong on purpose (HTTP errors, broken SSE, dropped or
//! stalled connections). Each field is one independent fault, so they combine freely
//! (e.g. a slow first byte followed by a disconnect); new faults are new fields.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::builder::builder;

/// Faults to inject into a response. All fields are optional; an empty `Fault` changes nothing.
///
/// A "chunk" is one protocol event frame (one `data:` SSE event).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Fault {
    /// Answer with this HTTP status and no stream (100..=599).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `retry-after` header value sent with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// `retry-after-ms` header value sent with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<String>,
    /// Body for `status` (JSON, or a string sent as text/plain) or for `contentType`. Default:
    /// the protocol's own error shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// After the first chunk, send a data line that is not JSON (`data: {not json`).
    #[serde(skip_serializing_if = "is_false")]
    pub malformed_line: bool,
    /// After the first chunk, send a data line containing the bytes 0xff 0xfe.
    #[serde(skip_serializing_if = "is_false")]
    pub invalid_utf8: bool,
    /// Send this many chunks, then abort the connection (the chunked body never terminates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disconnect_after_chunks: Option<usize>,
    /// Send this many chunks, then keep the connection open without sending anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang_after_chunks: Option<usize>,
    /// Wait this long before sending the response headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_first_byte_ms: Option<u64>,
    /// Send an SSE comment `: keep-alive` after every n chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive_every: Option<usize>,
    /// Leave out the protocol's final marker (`[DONE]`, `message_stop`, `response.completed`,
    /// Gemini's finishReason chunk, the proxy's `done`).
    #[serde(skip_serializing_if = "is_false")]
    pub omit_done: bool,
    /// Answer 200 with this content type and an HTML body instead of a stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// After the first chunk, send one data line of this many bytes with no newline, then end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_line_bytes: Option<usize>,
    /// Embedding endpoints: answer with this many vectors, whatever the number of inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_count: Option<usize>,
    /// Embedding endpoints: vectors of this many dimensions, whatever was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_dims: Option<usize>,
    /// Embedding endpoints: the last vector is one dimension short of the others.
    #[serde(skip_serializing_if = "is_false")]
    pub embed_ragged: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

builder!(Fault {
    /// An HTTP error response with `status`.
    new status(status: u16);
    /// A non-JSON data line after the first chunk.
    new malformed_line(malformed_line);
    /// A data line with invalid UTF-8 after the first chunk.
    new invalid_utf8(invalid_utf8);
    /// Abort the connection after this many chunks.
    new disconnect_after_chunks(disconnect_after_chunks: usize);
    /// Go silent (connection open) after this many chunks.
    new hang_after_chunks(hang_after_chunks: usize);
    /// Delay the response headers by this many milliseconds.
    new slow_first_byte_ms(slow_first_byte_ms: u64);
    /// An SSE keep-alive comment after every this many chunks.
    new keep_alive_every(keep_alive_every: usize);
    /// Leave out the protocol's final marker.
    new omit_done(omit_done);
    /// Answer 200 with `content_type` and an HTML body.
    new content_type(content_type: into String);
    /// One data line of this many bytes without a newline after the first chunk.
    new huge_line_bytes(huge_line_bytes: usize);
    /// Embedding endpoints answer this many vectors whatever the number of inputs.
    new embed_count(embed_count: usize);
    /// Embedding endpoints answer vectors of this many dimensions whatever was asked for.
    new embed_dims(embed_dims: usize);
    /// Embedding endpoints answer a last vector one dimension short of the others.
    new embed_ragged(embed_ragged);
    /// Sets the `retry-after` header.
    set retry_after(retry_after: into String);
    /// Sets the `retry-after-ms` header.
    set retry_after_ms(retry_after_ms: into String);
    /// Sets the error body.
    set body(body: Value);
});

impl Fault {
    /// Combines two faults; fields set in `other` win.
    pub fn and(self, other: Fault) -> Self {
        Self {
            status: other.status.or(self.status),
            retry_after: other.retry_after.or(self.retry_after),
            retry_after_ms: other.retry_after_ms.or(self.retry_after_ms),
            body: other.body.or(self.body),
            malformed_line: other.malformed_line || self.malformed_line,
            invalid_utf8: other.invalid_utf8 || self.invalid_utf8,
            disconnect_after_chunks: other
                .disconnect_after_chunks
                .or(self.disconnect_after_chunks),
            hang_after_chunks: other.hang_after_chunks.or(self.hang_after_chunks),
            slow_first_byte_ms: other.slow_first_byte_ms.or(self.slow_first_byte_ms),
            keep_alive_every: other.keep_alive_every.or(self.keep_alive_every),
            omit_done: other.omit_done || self.omit_done,
            content_type: other.content_type.or(self.content_type),
            huge_line_bytes: other.huge_line_bytes.or(self.huge_line_bytes),
            embed_count: other.embed_count.or(self.embed_count),
            embed_dims: other.embed_dims.or(self.embed_dims),
            embed_ragged: other.embed_ragged || self.embed_ragged,
        }
    }
}
