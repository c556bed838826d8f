//! The NDJSON framer never panics and is independent of chunk boundaries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::framing::{FrameError, NdjsonFramer};

fn frame(chunks: &[&[u8]]) -> Result<Vec<String>, FrameError> {
    let mut framer = NdjsonFramer::new(4096);
    let mut out = Vec::new();
    let mut push = |d: &str| {
        out.push(d.to_owned());
        Ok::<(), FrameError>(())
    };
    for chunk in chunks {
        framer.feed(chunk, &mut push)?;
    }
    framer.finish(&mut push)?;
    Ok(out)
}

fuzz_target!(|input: &[u8]| {
    let Some((&cut, body)) = input.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let whole = frame(&[body]);
    let split = frame(&[&body[..cut], &body[cut..]]);
    if let (Ok(a), Ok(b)) = (&whole, &split) {
        assert_eq!(a, b);
    }
});
