//! The AWS event-stream binary framing (`application/vnd.amazon.eventstream`), which
//! Bedrock's `ConverseStream` answers in: each message is a 12-byte prelude (total length,
//! headers length, CRC32 of those 8 bytes), typed headers (`:message-type`, `:event-type`,
//! `:exception-type`, …), a payload, and a CRC32 of everything before it.
//!
//! Hand-written rather than taken from the AWS SDK crates: the format is small and fully
//! specified, the SDK crates would pull a large dependency tree into the LLM layer, and this
//! framer shares the driver's rules — bounded buffers and typed errors, never a panic, on
//! whatever bytes arrive.

/// Bytes of the prelude (two lengths and their CRC).
const PRELUDE_LEN: usize = 12;
/// The smallest message: a prelude and the message CRC, no headers, no payload.
const MIN_MESSAGE_LEN: usize = 16;
/// The AWS SDKs' cap on one message (16 MiB); a larger length is a broken or hostile stream.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The AWS SDKs' cap on one message's headers.
pub const MAX_HEADERS_BYTES: usize = 128 * 1024;

/// Why an event stream could not be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventStreamError {
    #[error("event-stream message length {total} is outside {MIN_MESSAGE_LEN}..={limit} bytes")]
    BadLength { total: u64, limit: usize },
    #[error(
        "event-stream headers length {headers} does not fit a {total}-byte message (limit {MAX_HEADERS_BYTES})"
    )]
    BadHeadersLength { headers: u64, total: u64 },
    #[error("event-stream prelude checksum mismatch (sent {sent:08x}, computed {computed:08x})")]
    PreludeCrc { sent: u32, computed: u32 },
    #[error("event-stream message checksum mismatch (sent {sent:08x}, computed {computed:08x})")]
    MessageCrc { sent: u32, computed: u32 },
    #[error("event-stream header: {0}")]
    Header(String),
    #[error("the event stream ended inside a message ({buffered} bytes left over)")]
    Truncated { buffered: usize },
}

/// A typed header value (the format's ten value types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderValue<'a> {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Bytes(&'a [u8]),
    String(&'a str),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

impl HeaderValue<'_> {
    /// The type byte on the wire.
    fn type_byte(&self) -> u8 {
        match self {
            Self::Bool(true) => 0,
            Self::Bool(false) => 1,
            Self::Byte(_) => 2,
            Self::Short(_) => 3,
            Self::Int(_) => 4,
            Self::Long(_) => 5,
            Self::Bytes(_) => 6,
            Self::String(_) => 7,
            Self::Timestamp(_) => 8,
            Self::Uuid(_) => 9,
        }
    }
}

/// One framed message, borrowing the framer's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventMessage<'a> {
    pub headers: Vec<(&'a str, HeaderValue<'a>)>,
    pub payload: &'a [u8],
}

impl<'a> EventMessage<'a> {
    /// The value of the string header `name` (`:event-type`, …), if present.
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if *n == name => Some(*s),
            _ => None,
        })
    }
}

/// Reads a big-endian integer of `N` bytes at `*at`, advancing it.
fn take<const N: usize>(bytes: &[u8], at: &mut usize) -> Result<[u8; N], EventStreamError> {
    let end = at.checked_add(N).filter(|end| *end <= bytes.len());
    let Some(end) = end else {
        return Err(EventStreamError::Header(format!(
            "a header runs past the headers section (at byte {at})"
        )));
    };
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[*at..end]);
    *at = end;
    Ok(out)
}

fn take_slice<'a>(
    bytes: &'a [u8],
    at: &mut usize,
    len: usize,
) -> Result<&'a [u8], EventStreamError> {
    let end = at.checked_add(len).filter(|end| *end <= bytes.len());
    let Some(end) = end else {
        return Err(EventStreamError::Header(format!(
            "a {len}-byte header field runs past the headers section"
        )));
    };
    let out = &bytes[*at..end];
    *at = end;
    Ok(out)
}

fn parse_headers(bytes: &[u8]) -> Result<Vec<(&str, HeaderValue<'_>)>, EventStreamError> {
    let mut headers = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let [name_len] = take::<1>(bytes, &mut at)?;
        if name_len == 0 {
            return Err(EventStreamError::Header(
                "a header has an empty name".into(),
            ));
        }
        let name = std::str::from_utf8(take_slice(bytes, &mut at, usize::from(name_len))?)
            .map_err(|_| EventStreamError::Header("a header name is not UTF-8".into()))?;
        let [kind] = take::<1>(bytes, &mut at)?;
        let value = match kind {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(i8::from_be_bytes(take::<1>(bytes, &mut at)?)),
            3 => HeaderValue::Short(i16::from_be_bytes(take::<2>(bytes, &mut at)?)),
            4 => HeaderValue::Int(i32::from_be_bytes(take::<4>(bytes, &mut at)?)),
            5 => HeaderValue::Long(i64::from_be_bytes(take::<8>(bytes, &mut at)?)),
            6 | 7 => {
                let len = u16::from_be_bytes(take::<2>(bytes, &mut at)?);
                let raw = take_slice(bytes, &mut at, usize::from(len))?;
                if kind == 6 {
                    HeaderValue::Bytes(raw)
                } else {
                    HeaderValue::String(std::str::from_utf8(raw).map_err(|_| {
                        EventStreamError::Header(format!("the value of {name} is not UTF-8"))
                    })?)
                }
            }
            8 => HeaderValue::Timestamp(i64::from_be_bytes(take::<8>(bytes, &mut at)?)),
            9 => HeaderValue::Uuid(take::<16>(bytes, &mut at)?),
            other => {
                return Err(EventStreamError::Header(format!(
                    "{name} has unknown value type {other}"
                )));
            }
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// The total length the prelude at the start of `bytes` announces, checked against the
/// limits and the prelude CRC.
fn read_prelude(bytes: &[u8], limit: usize) -> Result<usize, EventStreamError> {
    let word = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let (total, headers, sent) = (word(0), word(4), word(8));
    let computed = crc32fast::hash(&bytes[..8]);
    if computed != sent {
        return Err(EventStreamError::PreludeCrc { sent, computed });
    }
    let total_len = total as usize;
    if total_len < MIN_MESSAGE_LEN || total_len > limit {
        return Err(EventStreamError::BadLength {
            total: u64::from(total),
            limit,
        });
    }
    let headers_len = headers as usize;
    if headers_len > MAX_HEADERS_BYTES || headers_len > total_len - MIN_MESSAGE_LEN {
        return Err(EventStreamError::BadHeadersLength {
            headers: u64::from(headers),
            total: u64::from(total),
        });
    }
    Ok(total_len)
}

/// Decode one complete message (`bytes` is exactly its length).
pub fn decode_message(bytes: &[u8]) -> Result<EventMessage<'_>, EventStreamError> {
    if bytes.len() < MIN_MESSAGE_LEN {
        return Err(EventStreamError::Truncated {
            buffered: bytes.len(),
        });
    }
    let total = read_prelude(bytes, MAX_MESSAGE_BYTES.max(bytes.len()))?;
    if total != bytes.len() {
        return Err(EventStreamError::BadLength {
            total: total as u64,
            limit: bytes.len(),
        });
    }
    let body_end = total - 4;
    let sent = u32::from_be_bytes([
        bytes[body_end],
        bytes[body_end + 1],
        bytes[body_end + 2],
        bytes[body_end + 3],
    ]);
    let computed = crc32fast::hash(&bytes[..body_end]);
    if computed != sent {
        return Err(EventStreamError::MessageCrc { sent, computed });
    }
    let headers_len = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
    let headers_end = PRELUDE_LEN + headers_len;
    Ok(EventMessage {
        headers: parse_headers(&bytes[PRELUDE_LEN..headers_end])?,
        payload: &bytes[headers_end..body_end],
    })
}

/// Encode one message (the inverse of [`decode_message`]; used by tests and fuzzing).
pub fn encode_message(headers: &[(&str, HeaderValue<'_>)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        let name = &name.as_bytes()[..name.len().min(255)];
        head.push(name.len() as u8);
        head.extend_from_slice(name);
        head.push(value.type_byte());
        match value {
            HeaderValue::Bool(_) => {}
            HeaderValue::Byte(v) => head.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Short(v) => head.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Int(v) => head.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Long(v) | HeaderValue::Timestamp(v) => {
                head.extend_from_slice(&v.to_be_bytes())
            }
            HeaderValue::Bytes(raw) => push_short_bytes(&mut head, raw),
            HeaderValue::String(text) => push_short_bytes(&mut head, text.as_bytes()),
            HeaderValue::Uuid(id) => head.extend_from_slice(id),
        }
    }
    let total = (MIN_MESSAGE_LEN + head.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn push_short_bytes(out: &mut Vec<u8>, raw: &[u8]) {
    let raw = &raw[..raw.len().min(usize::from(u16::MAX))];
    out.extend_from_slice(&(raw.len() as u16).to_be_bytes());
    out.extend_from_slice(raw);
}

/// Frames a body into event-stream messages, across chunk boundaries. Lengths are checked
/// (with the prelude CRC) as soon as a prelude is complete, so an absurd length fails at
/// once instead of making the framer wait for, and buffer, gigabytes.
#[derive(Debug)]
pub struct EventStreamFramer {
    buf: Vec<u8>,
    max_message: usize,
}

impl Default for EventStreamFramer {
    fn default() -> Self {
        Self::new(MAX_MESSAGE_BYTES)
    }
}

impl EventStreamFramer {
    pub fn new(max_message: usize) -> Self {
        Self {
            buf: Vec::new(),
            max_message: max_message.max(MIN_MESSAGE_LEN),
        }
    }

    /// Feed a chunk; `on_message` gets each complete message. After an error the framer is
    /// empty (the stream cannot be resynchronised, so the caller stops).
    pub fn feed<E: From<EventStreamError>>(
        &mut self,
        chunk: &[u8],
        on_message: &mut dyn FnMut(EventMessage<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.buf.extend_from_slice(chunk);
        let buf = std::mem::take(&mut self.buf);
        let mut at = 0;
        let result = loop {
            let rest = &buf[at..];
            if rest.len() < PRELUDE_LEN {
                break Ok(());
            }
            let total = match read_prelude(rest, self.max_message) {
                Ok(total) => total,
                Err(e) => break Err(E::from(e)),
            };
            if rest.len() < total {
                break Ok(());
            }
            let message = match decode_message(&rest[..total]) {
                Ok(message) => message,
                Err(e) => break Err(E::from(e)),
            };
            at += total;
            if let Err(e) = on_message(message) {
                break Err(e);
            }
        };
        if result.is_ok() {
            self.buf = buf;
            self.buf.drain(..at);
        }
        result
    }

    /// The body ended: bytes left over mean the last message was cut off.
    pub fn finish(&mut self) -> Result<(), EventStreamError> {
        let buffered = std::mem::take(&mut self.buf).len();
        if buffered == 0 {
            Ok(())
        } else {
            Err(EventStreamError::Truncated { buffered })
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// aws-c-event-stream's `empty_message` vector: no headers, no payload.
    const EMPTY_MESSAGE: [u8; 16] = [
        0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8,
        0xff,
    ];

    fn collect(
        framer: &mut EventStreamFramer,
        chunk: &[u8],
    ) -> Result<Vec<String>, EventStreamError> {
        let mut seen = Vec::new();
        framer.feed(chunk, &mut |m: EventMessage<'_>| {
            seen.push(format!(
                "{}={}",
                m.header_str(":event-type").unwrap_or("-"),
                String::from_utf8_lossy(m.payload)
            ));
            Ok::<(), EventStreamError>(())
        })?;
        Ok(seen)
    }

    #[test]
    fn the_published_empty_message_decodes() {
        let message = decode_message(&EMPTY_MESSAGE).unwrap();
        assert!(message.headers.is_empty());
        assert!(message.payload.is_empty());
        assert_eq!(encode_message(&[], b""), EMPTY_MESSAGE);
    }

    #[test]
    fn every_header_type_round_trips() {
        let headers = [
            ("t", HeaderValue::Bool(true)),
            ("f", HeaderValue::Bool(false)),
            ("b", HeaderValue::Byte(-3)),
            ("s", HeaderValue::Short(-300)),
            ("i", HeaderValue::Int(70_000)),
            ("l", HeaderValue::Long(-5_000_000_000)),
            ("y", HeaderValue::Bytes(b"\x00\xff")),
            (":event-type", HeaderValue::String("messageStart")),
            ("ts", HeaderValue::Timestamp(1_700_000_000_000)),
            ("u", HeaderValue::Uuid([7; 16])),
        ];
        let bytes = encode_message(&headers, b"{\"role\":\"assistant\"}");
        let message = decode_message(&bytes).unwrap();
        assert_eq!(message.headers, headers.to_vec());
        assert_eq!(message.payload, b"{\"role\":\"assistant\"}");
        assert_eq!(message.header_str(":event-type"), Some("messageStart"));
        assert_eq!(message.header_str("i"), None);
    }

    #[test]
    fn messages_split_anywhere_across_chunks() {
        let mut body = encode_message(&[(":event-type", HeaderValue::String("a"))], b"1");
        body.extend(encode_message(
            &[(":event-type", HeaderValue::String("b"))],
            b"22",
        ));
        for step in 1..body.len() {
            let mut framer = EventStreamFramer::default();
            let mut seen = Vec::new();
            for chunk in body.chunks(step) {
                seen.extend(collect(&mut framer, chunk).unwrap());
            }
            assert_eq!(seen, ["a=1", "b=22"], "step {step}");
            framer.finish().unwrap();
        }
    }

    #[test]
    fn malformed_frames_are_typed_errors() {
        let good = encode_message(&[(":event-type", HeaderValue::String("x"))], b"{}");
        let mut bad_crc = good.clone();
        *bad_crc.last_mut().unwrap() ^= 1;
        assert!(matches!(
            collect(&mut EventStreamFramer::default(), &bad_crc),
            Err(EventStreamError::MessageCrc { .. })
        ));
        let mut bad_prelude = good.clone();
        bad_prelude[9] ^= 1;
        assert!(matches!(
            collect(&mut EventStreamFramer::default(), &bad_prelude),
            Err(EventStreamError::PreludeCrc { .. })
        ));
        // An absurd length with a valid prelude CRC fails before anything is buffered.
        let mut huge = Vec::new();
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        huge.extend_from_slice(&0u32.to_be_bytes());
        huge.extend_from_slice(&crc32fast::hash(&huge).to_be_bytes());
        assert_eq!(
            collect(&mut EventStreamFramer::default(), &huge),
            Err(EventStreamError::BadLength {
                total: u64::from(u32::MAX),
                limit: MAX_MESSAGE_BYTES
            })
        );
        let mut headers_too_long = Vec::new();
        headers_too_long.extend_from_slice(&16u32.to_be_bytes());
        headers_too_long.extend_from_slice(&1u32.to_be_bytes());
        headers_too_long.extend_from_slice(&crc32fast::hash(&headers_too_long).to_be_bytes());
        assert!(matches!(
            collect(&mut EventStreamFramer::default(), &headers_too_long),
            Err(EventStreamError::BadHeadersLength {
                headers: 1,
                total: 16
            })
        ));
        // A header whose string length runs past the headers section.
        let mut header = vec![1, b'a', 7, 0, 9, b'x'];
        let total = (16 + header.len()) as u32;
        let mut runs_over = Vec::new();
        runs_over.extend_from_slice(&total.to_be_bytes());
        runs_over.extend_from_slice(&(header.len() as u32).to_be_bytes());
        runs_over.extend_from_slice(&crc32fast::hash(&runs_over).to_be_bytes());
        runs_over.append(&mut header);
        runs_over.extend_from_slice(&crc32fast::hash(&runs_over).to_be_bytes());
        assert!(matches!(
            collect(&mut EventStreamFramer::default(), &runs_over),
            Err(EventStreamError::Header(_))
        ));
        // Cut short: nothing delivered, and the end of the body says so.
        let mut framer = EventStreamFramer::default();
        assert_eq!(
            collect(&mut framer, &good[..good.len() - 1]).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            framer.finish(),
            Err(EventStreamError::Truncated {
                buffered: good.len() - 1
            })
        );
        assert_eq!(
            decode_message(&good[..5]),
            Err(EventStreamError::Truncated { buffered: 5 })
        );
    }
}
