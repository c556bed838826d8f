//! The long connection's wire format: `pbbp2.Frame`, a protobuf message per binary
//! WebSocket frame (derived with prost from the two-message schema, so no protoc and no
//! build script), the frames the client itself sends (ping, ack), and the reassembly of an
//! event Feishu split over several data frames (`sum` parts, `seq` 0-based, one
//! `message_id`).
//!
//! Everything here is pure and never panics on what the server sends: a frame that does
//! not decode is a [`FrameError`], a bad part is a [`PartsError`].

use std::collections::HashMap;
use std::time::{Duration, Instant};

use prost::Message as _;

/// `method` of a control frame (ping, pong).
pub const METHOD_CONTROL: i32 = 0;
/// `method` of a data frame (events, cards).
pub const METHOD_DATA: i32 = 1;

/// One header of a frame.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Header {
    #[prost(string, required, tag = "1")]
    pub key: String,
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `pbbp2.Frame`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Frame {
    #[prost(uint64, required, tag = "1")]
    pub seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    pub log_id: u64,
    #[prost(int32, required, tag = "3")]
    pub service: i32,
    #[prost(int32, required, tag = "4")]
    pub method: i32,
    #[prost(message, repeated, tag = "5")]
    pub headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    pub payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    pub payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    pub log_id_new: Option<String>,
}

impl Frame {
    /// The value of header `key` (the first one, if repeated).
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.key == key)
            .map(|h| h.value.as_str())
    }

    /// Header `key` as a number (absent or not a number: `None`).
    pub fn header_u64(&self, key: &str) -> Option<u64> {
        self.header(key).and_then(|v| v.trim().parse().ok())
    }

    /// The `type` header: `ping`, `pong`, `event`, `card`.
    pub fn kind(&self) -> Option<&str> {
        self.header("type")
    }
}

pub use crate::frame_error::FrameError;

/// Decodes one binary WebSocket message.
pub fn decode_frame(bytes: &[u8]) -> Result<Frame, FrameError> {
    // A binary frame that is not a `pbbp2.Frame`.
    Frame::decode(bytes).map_err(|e| FrameError::new("long-connection frame", e.to_string()))
}

/// Encodes a frame for a binary WebSocket message.
pub fn encode_frame(frame: &Frame) -> Vec<u8> {
    frame.encode_to_vec()
}

fn header(key: &str, value: &str) -> Header {
    Header {
        key: key.to_owned(),
        value: value.to_owned(),
    }
}

/// The ping the client sends every ping interval (`service` is the `service_id` of the
/// connection URL's query).
pub fn ping_frame(service: i32) -> Frame {
    Frame {
        seq_id: 0,
        log_id: 0,
        service,
        method: METHOD_CONTROL,
        headers: vec![header("type", "ping")],
        ..Frame::default()
    }
}

/// The payload of an ack: HTTP-like status 200, nothing else.
pub const ACK_PAYLOAD: &[u8] = br#"{"code":200,"headers":{},"data":null}"#;

/// The ack of a data frame: the same frame (ids, service, method, headers) with a
/// `biz_rt` header (how long handling took, in ms) and [`ACK_PAYLOAD`]. Feishu redelivers
/// a data frame it got no ack for.
pub fn ack_frame(frame: &Frame, handled_ms: u64) -> Frame {
    let mut headers = frame.headers.clone();
    headers.push(header("biz_rt", &handled_ms.to_string()));
    Frame {
        headers,
        payload: Some(ACK_PAYLOAD.to_vec()),
        ..frame.clone()
    }
}

/// The `service_id` query parameter of a connection URL (0 when absent or not a number:
/// the ping is then still sent, and Feishu's fake and real servers answer it).
pub fn service_id(url: &str) -> i32 {
    let Some((_, query)) = url.split_once('?') else {
        return 0;
    };
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "service_id")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Why a part of a split event was refused (the event is dropped; Feishu redelivers what
/// it gets no ack for).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartsError {
    #[error("part {seq} of {sum} is out of range")]
    OutOfRange { seq: u64, sum: u64 },
    #[error("an event split into {sum} parts is more than {max} parts")]
    TooManyParts { sum: u64, max: u64 },
    #[error("a split event is over the {max}-byte limit")]
    TooBig { max: usize },
    #[error("a data frame without a message_id header is split")]
    NoMessageId,
}

/// The parts of one split event received so far.
struct Partial {
    parts: Vec<Option<Vec<u8>>>,
    bytes: usize,
    first_seen: Instant,
}

/// Joins the parts of split events, by `message_id`, in `seq` order. Partials older than
/// `stale_after` are dropped (their missing parts will not come: Feishu resends the whole
/// event), and the total size of one event is capped.
pub struct PartsBuffer {
    pending: HashMap<String, Partial>,
    max_parts: u64,
    max_bytes: usize,
    stale_after: Duration,
}

impl Default for PartsBuffer {
    /// At most 64 parts and 8 MiB per event; partials dropped after 60 s.
    fn default() -> Self {
        Self::new(64, 8 * 1024 * 1024, Duration::from_secs(60))
    }
}

impl PartsBuffer {
    pub fn new(max_parts: u64, max_bytes: usize, stale_after: Duration) -> Self {
        Self {
            pending: HashMap::new(),
            max_parts,
            max_bytes,
            stale_after,
        }
    }

    /// How many split events are waiting for parts.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Adds part `seq` of `sum` of event `message_id`; the whole payload once every part
    /// is there, else `None`. `sum` ≤ 1 is an unsplit payload, returned as it is.
    pub fn add(
        &mut self,
        message_id: Option<&str>,
        sum: u64,
        seq: u64,
        payload: Vec<u8>,
        now: Instant,
    ) -> Result<Option<Vec<u8>>, PartsError> {
        let stale_after = self.stale_after;
        self.pending
            .retain(|_, p| now.saturating_duration_since(p.first_seen) < stale_after);
        if sum <= 1 {
            if payload.len() > self.max_bytes {
                return Err(PartsError::TooBig {
                    max: self.max_bytes,
                });
            }
            return Ok(Some(payload));
        }
        if sum > self.max_parts {
            return Err(PartsError::TooManyParts {
                sum,
                max: self.max_parts,
            });
        }
        if seq >= sum {
            return Err(PartsError::OutOfRange { seq, sum });
        }
        let id = message_id
            .filter(|id| !id.is_empty())
            .ok_or(PartsError::NoMessageId)?;
        let slots = usize::try_from(sum).map_err(|_| PartsError::TooManyParts {
            sum,
            max: self.max_parts,
        })?;
        let index = usize::try_from(seq).map_err(|_| PartsError::OutOfRange { seq, sum })?;
        let partial = self
            .pending
            .entry(id.to_owned())
            .or_insert_with(|| Partial {
                parts: vec![None; slots],
                bytes: 0,
                first_seen: now,
            });
        if partial.parts.len() != slots {
            // The same id with another part count: the old parts cannot be trusted.
            *partial = Partial {
                parts: vec![None; slots],
                bytes: 0,
                first_seen: now,
            };
        }
        let old = partial.parts[index].as_ref().map_or(0, Vec::len);
        let bytes = partial.bytes - old + payload.len();
        if bytes > self.max_bytes {
            self.pending.remove(id);
            return Err(PartsError::TooBig {
                max: self.max_bytes,
            });
        }
        partial.bytes = bytes;
        partial.parts[index] = Some(payload);
        if partial.parts.iter().any(Option::is_none) {
            return Ok(None);
        }
        let whole = self
            .pending
            .remove(id)
            .map(|p| p.parts.into_iter().flatten().flatten().collect());
        Ok(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event data frame of service 33 with one more header and `payload`.
    fn event_frame(seq_id: u64, log_id: u64, (key, value): (&str, &str), payload: &[u8]) -> Frame {
        Frame {
            seq_id,
            log_id,
            service: 33,
            method: METHOD_DATA,
            headers: vec![header("type", "event"), header(key, value)],
            payload: Some(payload.to_vec()),
            ..Frame::default()
        }
    }

    #[test]
    fn frames_round_trip() {
        let frame = Frame {
            log_id_new: Some("l".into()),
            ..event_frame(7, 9, ("sum", "1"), b"{}")
        };
        let bytes = encode_frame(&frame);
        let back = decode_frame(&bytes).unwrap();
        assert_eq!(back, frame);
        assert_eq!(back.kind(), Some("event"));
        assert_eq!(back.header_u64("sum"), Some(1));
        assert_eq!(back.header("nope"), None);
    }

    #[test]
    fn ping_and_ack() {
        let ping = decode_frame(&encode_frame(&ping_frame(33))).unwrap();
        assert_eq!((ping.seq_id, ping.log_id, ping.service), (0, 0, 33));
        assert_eq!(ping.method, METHOD_CONTROL);
        assert_eq!(ping.kind(), Some("ping"));
        assert_eq!(ping.payload, None);

        let data = event_frame(3, 4, ("message_id", "m"), b"{\"big\":1}");
        let ack = ack_frame(&data, 12);
        assert_eq!(
            (ack.seq_id, ack.log_id, ack.service, ack.method),
            (3, 4, 33, 1)
        );
        assert_eq!(ack.header("message_id"), Some("m"));
        assert_eq!(ack.header("biz_rt"), Some("12"));
        assert_eq!(
            ack.payload.as_deref(),
            Some(&br#"{"code":200,"headers":{},"data":null}"#[..])
        );
    }

    #[test]
    fn garbage_is_a_clear_error() {
        assert!(decode_frame(&[0xff, 0xff, 0xff]).is_err());
        assert!(decode_frame(&[0x0a]).is_err()); // field 1 as length-delimited, truncated
        let empty = decode_frame(&[]).unwrap();
        assert_eq!(empty, Frame::default());
    }

    #[test]
    fn service_ids() {
        assert_eq!(
            service_id("wss://h/ws/v2?fpid=1&aid=2&service_id=33&ticket=t"),
            33
        );
        assert_eq!(service_id("ws://h/ws/v2"), 0);
        assert_eq!(service_id("ws://h/ws/v2?service_id=x"), 0);
    }

    #[test]
    fn parts_join_in_order() {
        let now = Instant::now();
        let mut buffer = PartsBuffer::default();
        assert_eq!(
            buffer.add(None, 1, 0, b"whole".to_vec(), now).unwrap(),
            Some(b"whole".to_vec())
        );
        assert_eq!(
            buffer.add(Some("m"), 3, 2, b"c".to_vec(), now).unwrap(),
            None
        );
        assert_eq!(
            buffer.add(Some("m"), 3, 0, b"a".to_vec(), now).unwrap(),
            None
        );
        assert_eq!(buffer.pending(), 1);
        assert_eq!(
            buffer.add(Some("m"), 3, 1, b"b".to_vec(), now).unwrap(),
            Some(b"abc".to_vec())
        );
        assert_eq!(buffer.pending(), 0);
    }

    #[test]
    fn bad_parts_are_refused() {
        let now = Instant::now();
        let mut buffer = PartsBuffer::new(4, 5, Duration::from_secs(60));
        assert_eq!(
            buffer.add(Some("m"), 3, 3, vec![], now),
            Err(PartsError::OutOfRange { seq: 3, sum: 3 })
        );
        assert_eq!(
            buffer.add(Some("m"), 5, 0, vec![], now),
            Err(PartsError::TooManyParts { sum: 5, max: 4 })
        );
        assert_eq!(
            buffer.add(None, 2, 0, vec![], now),
            Err(PartsError::NoMessageId)
        );
        assert_eq!(buffer.add(Some("m"), 2, 0, b"abc".to_vec(), now), Ok(None));
        assert_eq!(
            buffer.add(Some("m"), 2, 1, b"def".to_vec(), now),
            Err(PartsError::TooBig { max: 5 })
        );
        assert_eq!(buffer.pending(), 0);
        assert_eq!(
            buffer.add(None, 1, 0, b"123456".to_vec(), now),
            Err(PartsError::TooBig { max: 5 })
        );
    }

    #[test]
    fn stale_partials_are_dropped() {
        let start = Instant::now();
        let mut buffer = PartsBuffer::new(4, 100, Duration::from_secs(60));
        assert_eq!(buffer.add(Some("m"), 2, 0, b"a".to_vec(), start), Ok(None));
        let later = start + Duration::from_secs(61);
        // The first part went stale: the second alone does not complete the event.
        assert_eq!(buffer.add(Some("m"), 2, 1, b"b".to_vec(), later), Ok(None));
        assert_eq!(buffer.pending(), 1);
        // A part resent replaces the old one.
        assert_eq!(buffer.add(Some("m"), 2, 1, b"B".to_vec(), later), Ok(None));
        assert_eq!(
            buffer.add(Some("m"), 2, 0, b"A".to_vec(), later),
            Ok(Some(b"AB".to_vec()))
        );
    }
}
