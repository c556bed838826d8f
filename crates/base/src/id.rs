//! Random identifiers: one generator, [`random_u64`], and the id formats Pincer writes —
//! [`hex_id8`] (pi's transcript entry ids, `randomUUID().slice(0, 8)`), [`hex_id16`] (exec
//! sessions) and [`uuid_v4`] (session ids, shaped like a UUID v4).
//!
//! The generator is SipHash-1-3 (std's `RandomState`, whose keys the standard library draws
//! from the operating system's random source once per process) over a process-wide counter:
//! infallible, no extra dependency, and outsiders cannot predict the next id from the ones
//! they have seen. Ids are unique, not secret: never use them as credentials (those come
//! from `getrandom`).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

static KEYS: OnceLock<RandomState> = OnceLock::new();
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The next pseudo-random 64-bit value.
pub fn random_u64() -> u64 {
    let mut hasher = KEYS.get_or_init(RandomState::new).build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

/// 8 lowercase hex digits (32 random bits).
pub fn hex_id8() -> String {
    format!("{:08x}", random_u64() >> 32)
}

/// 16 lowercase hex digits (64 random bits).
pub fn hex_id16() -> String {
    format!("{:016x}", random_u64())
}

/// Shaped like a UUID v4 (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, `y` one of `89ab`): 122
/// random bits.
pub fn uuid_v4() -> String {
    let a = random_u64();
    let b = random_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn lower_hex(s: &str) -> bool {
        s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
    }

    #[test]
    fn shapes() {
        for _ in 0..200 {
            let e = hex_id8();
            assert_eq!(e.len(), 8, "{e}");
            assert!(lower_hex(&e), "{e}");
            let x = hex_id16();
            assert_eq!(x.len(), 16, "{x}");
            assert!(lower_hex(&x), "{x}");
            let s = uuid_v4();
            assert_eq!(s.len(), 36, "{s}");
            let groups: Vec<&str> = s.split('-').collect();
            assert_eq!(
                groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12],
                "{s}"
            );
            assert!(groups.iter().all(|g| lower_hex(g)), "{s}");
            assert_eq!(&s[14..15], "4", "{s}");
            assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"), "{s}");
        }
    }

    #[test]
    fn values_do_not_repeat() {
        let seen: HashSet<u64> = (0..10_000).map(|_| random_u64()).collect();
        assert_eq!(seen.len(), 10_000);
        let ids: HashSet<String> = (0..1_000).map(|_| uuid_v4()).collect();
        assert_eq!(ids.len(), 1_000);
    }
}
