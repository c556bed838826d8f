//! Arbitrary bytes through Feishu's inbound decoders: as a long-connection frame (and its
//! payload, split in parts, as an event), as a callback body (plain, and encrypted with a
//! fixed key, signed or not), and as a message's content of each type. Nothing panics; what
//! decodes keeps what the input said: a frame re-encodes to itself, a message event's ids
//! are the JSON's, a resolved text never keeps the bot's placeholder.
//!
//! Input: byte 0 picks the message type for the content decoder and whether the callback
//! is signed; the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/feishu_events.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
