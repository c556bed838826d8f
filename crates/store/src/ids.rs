//! Identifiers and timestamps without extra dependencies.
//!
//! Ids come from a splitmix64 generator (a xorshift-multiply mixer) whose seed mixes the wall
//! clock in nanoseconds, the process id and the address of a stack variable; each call adds a
//! global counter times the golden-ratio constant, so ids never repeat within a process and
//! are very unlikely to collide across processes. They are unique, not secret: never use them
//! as credentials. Entry ids are 8 hex chars (as pi's `randomUUID().slice(0, 8)`); session
//! ids are formatted like a UUID v4.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static SEED: OnceLock<u64> = OnceLock::new();
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The next pseudo-random 64-bit value.
pub fn next_u64() -> u64 {
    let seed = *SEED.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let local = 0u8;
        let addr = std::ptr::addr_of!(local) as usize as u64;
        mix(nanos ^ mix(u64::from(std::process::id())) ^ mix(addr))
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    mix(seed.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// A new entry id: 8 lowercase hex chars.
pub fn entry_id() -> String {
    format!("{:08x}", next_u64() >> 32)
}

/// A new session id shaped like a UUID v4 (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
pub fn session_id() -> String {
    let a = next_u64();
    let b = next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    pincer_ai::now_ms()
}

/// An ISO-8601 UTC timestamp with milliseconds, as JavaScript's `toISOString()`:
/// `2024-12-03T14:00:00.000Z`.
pub fn iso_from_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

/// [`iso_from_ms`] of now.
pub fn iso_now() -> String {
    iso_from_ms(now_ms())
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff…]Z` into milliseconds since the epoch; `None` otherwise.
pub fn ms_from_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let frac = s.get(19..s.len() - 1)?;
    let millis = match frac.strip_prefix('.') {
        Some(f) if !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()) => {
            let mut v = 0i64;
            for (i, c) in f.bytes().take(3).enumerate() {
                v += i64::from(c - b'0') * [100, 10, 1][i];
            }
            v
        }
        None if frac.is_empty() => 0,
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + se) * 1000) + millis)
}

// Howard Hinnant's civil-from-days / days-from-civil algorithms.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        assert_eq!(iso_from_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_from_ms(1_733_234_400_123), "2024-12-03T14:00:00.123Z");
        assert_eq!(
            ms_from_iso("2024-12-03T14:00:00.123Z"),
            Some(1_733_234_400_123)
        );
        assert_eq!(ms_from_iso("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        assert_eq!(ms_from_iso("nope"), None);
    }

    #[test]
    fn id_shapes() {
        let e = entry_id();
        assert_eq!(e.len(), 8);
        assert!(e.bytes().all(|c| c.is_ascii_hexdigit()));
        let s = session_id();
        assert_eq!(s.len(), 36);
        assert_eq!(&s[14..15], "4");
        assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(session_id(), session_id());
    }
}
