//! The store's ids and timestamps, which live in pincer-base now; these names stay for the
//! callers that reach them through the store. Entry ids are 8 hex chars (as pi's
//! `randomUUID().slice(0, 8)`); session ids are shaped like a UUID v4; timestamps are
//! JavaScript's `toISOString()` text. Ids are unique, not secret: never use them as
//! credentials.

pub use pincer_base::id::{hex_id8 as entry_id, random_u64 as next_u64, uuid_v4 as session_id};
pub use pincer_base::time::{iso_from_ms, iso_now, ms_from_iso, now_ms};
