//! Bedrock's `ConverseStream` under arbitrary bytes: AWS event-stream framing (lengths,
//! CRCs, typed headers) and the event decoder, in arbitrary chunks. Never a panic, and the
//! stream always ends with exactly one terminal event. Half the inputs are wrapped in valid
//! frames first, so the decoder behind the checksums is reached too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::framing::event_stream::{HeaderValue, encode_message};
use pincer_ai::http::{Framing, decode_recorded};
use pincer_ai::providers::bedrock;

const EVENTS: [&str; 7] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "throttlingException",
];

fuzz_target!(|input: &[u8]| {
    let Some((&control, body)) = input.split_first() else {
        return;
    };
    let step = usize::from(control % 16) + 1;
    let framed;
    let body = if control & 0x80 != 0 {
        // Each `\n`-separated piece becomes the payload of one well-formed event.
        let mut out = Vec::new();
        for (i, piece) in body.split(|b| *b == b'\n').enumerate() {
            let kind = EVENTS[i % EVENTS.len()];
            let message_type = if kind.ends_with("Exception") {
                "exception"
            } else {
                "event"
            };
            let type_header = if message_type == "event" {
                ":event-type"
            } else {
                ":exception-type"
            };
            out.extend(encode_message(
                &[
                    (":message-type", HeaderValue::String(message_type)),
                    (type_header, HeaderValue::String(kind)),
                ],
                piece,
            ));
        }
        framed = out;
        &framed[..]
    } else {
        body
    };
    let model = pincer_ai::providers::stub::model();
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let mut decoder = bedrock::decoder(&model);
    let events = decode_recorded(&model, Framing::AwsEventStream, decoder.as_mut(), &chunks);
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:?}");
    assert!(events.last().is_some_and(|e| e.is_terminal()));
});
