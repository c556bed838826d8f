//! Arbitrary bytes as an RPC stream (a worker's stdin or stdout), cut into arbitrary chunks:
//! the line decoder never panics, never holds more than its limit plus one byte, gives the
//! same lines however the bytes were cut, and each line through the worker-side and
//! client-side decoders never panics. A decoded command re-encodes to the same command, and a
//! refused one gets a JSON error response.
//!
//! Input: byte 0 picks the line limit (0..=63), byte 1 the chunk size; the rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_rpc::{
    LineDecoder, LineError, decode_command, decode_input, decode_worker_line, encode_request,
};

fn lines(data: &[u8], max: usize, step: usize) -> Vec<Result<String, LineError>> {
    let mut decoder = LineDecoder::with_max(max);
    let mut out = Vec::new();
    for chunk in data.chunks(step) {
        out.extend(decoder.push(chunk));
        assert!(decoder.buffered() <= max + 1, "decoder holds too much");
    }
    out.extend(decoder.finish());
    out
}

fuzz_target!(|data: &[u8]| {
    let [max, step, rest @ ..] = data else {
        return;
    };
    let max = usize::from(*max % 64);
    let step = usize::from(*step % 32) + 1;
    let whole = lines(rest, max, rest.len().max(1));
    assert_eq!(lines(rest, max, step), whole, "lines depend on chunking");
    // The same stream without a limit worth speaking of, so the JSON decoders see real lines.
    for line in whole.iter().chain(&lines(rest, 1 << 20, step)).flatten() {
        assert!(!line.contains('\n'));
        match decode_command(line) {
            Ok(req) => {
                let again = decode_command(&encode_request(req.id.as_ref(), &req.command));
                assert_eq!(
                    again.as_ref().ok(),
                    Some(&req),
                    "re-encoding changed the command"
                );
            }
            Err(e) => {
                let answer: serde_json::Value =
                    serde_json::from_str(&e.response_line()).expect("response line is JSON");
                assert_eq!(answer["success"], serde_json::Value::Bool(false));
            }
        }
        let _ = decode_input(line);
        let _ = decode_worker_line(line);
    }
});
