//! Wall-clock time as Pincer stores it: milliseconds since the Unix epoch ([`now_ms`]) and
//! the ISO 8601 UTC text of JavaScript's `Date.prototype.toISOString()`
//! (`2024-12-03T14:00:00.123Z`), which pi writes into transcripts. The calendar is jiff's;
//! nothing here does date arithmetic by hand.

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::SignedDuration;
use jiff::civil::{Date, DateTime};

/// `toISOString()`: always three fraction digits and a `Z`.
const ISO_MS: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";

/// The Unix epoch as a UTC civil time. Civil times (not `Timestamp`s) carry the arithmetic
/// because they reach all of 9999-12-31 where a `Timestamp` stops a day short.
const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);

/// Milliseconds since the Unix epoch, now (0 if the system clock is before 1970).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Seconds since the Unix epoch, now (0 if the system clock is before 1970).
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `ms` as JavaScript's `toISOString()` writes it: `2024-12-03T14:00:00.000Z`. Instants
/// outside the years -9999..=9999 (jiff's range) are written as the nearest end of it.
pub fn iso_from_ms(ms: i64) -> String {
    let civil = EPOCH
        .checked_add(SignedDuration::from_millis(ms))
        .unwrap_or(if ms < 0 { DateTime::MIN } else { DateTime::MAX });
    civil.strftime(ISO_MS).to_string()
}

/// [`iso_from_ms`] of now.
pub fn iso_now() -> String {
    iso_from_ms(now_ms())
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.f…]Z` (at most nine fraction digits, a real calendar date)
/// into milliseconds since the epoch, dropping sub-millisecond digits; `None` for anything
/// else, including other offsets than `Z`.
pub fn ms_from_iso(s: &str) -> Option<i64> {
    let civil = s.strip_suffix('Z')?;
    let b = civil.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let fraction = match b.get(19..) {
        Some([]) => true,
        Some([b'.', rest @ ..]) => !rest.is_empty() && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    let shaped = fraction
        && [0..4, 5..7, 8..10, 11..13, 14..16, 17..19]
            .into_iter()
            .all(digits)
        && [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')]
            .iter()
            .all(|(i, c)| b[*i] == *c);
    if !shaped {
        return None;
    }
    let civil: DateTime = civil.parse().ok()?;
    let ms = civil.duration_since(EPOCH).as_millis();
    i64::try_from(ms).ok()
}

/// Days from 1970-01-01 to the proleptic Gregorian date `year-month-day` (negative before);
/// `None` when that date does not exist (month 13, February 30, year beyond ±9999).
pub fn epoch_day(year: i64, month: i64, day: i64) -> Option<i64> {
    let date = Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()?;
    let midnight = date.to_datetime(jiff::civil::Time::midnight());
    Some(midnight.duration_since(EPOCH).as_secs().div_euclid(86_400))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_is_to_iso_string() {
        assert_eq!(iso_from_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_from_ms(1_733_234_400_123), "2024-12-03T14:00:00.123Z");
        assert_eq!(iso_from_ms(1_709_164_800_000), "2024-02-29T00:00:00.000Z");
        assert_eq!(iso_from_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso_from_ms(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
        assert_eq!(iso_from_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(iso_from_ms(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso_from_ms(-62_167_219_200_000), "0000-01-01T00:00:00.000Z");
    }

    #[test]
    fn iso_beyond_jiffs_range_is_clamped() {
        assert_eq!(iso_from_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso_from_ms(253_402_300_800_000), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso_from_ms(i64::MIN), "-9999-01-01T00:00:00.000Z");
    }

    #[test]
    fn iso_round_trips() {
        for ms in [
            0,
            1,
            999,
            1_733_234_400_123,
            1_709_164_800_000,
            -1,
            -86_400_001,
            253_402_300_799_999,
        ] {
            assert_eq!(ms_from_iso(&iso_from_ms(ms)), Some(ms), "{ms}");
        }
    }

    #[test]
    fn iso_parses_without_and_with_long_fractions() {
        assert_eq!(ms_from_iso("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        assert_eq!(
            ms_from_iso("2024-12-03T14:00:00.1Z"),
            Some(1_733_234_400_100)
        );
        assert_eq!(
            ms_from_iso("2024-12-03T14:00:00.123456789Z"),
            Some(1_733_234_400_123)
        );
    }

    #[test]
    fn malformed_iso_is_none() {
        for bad in [
            "",
            "nope",
            "2024-12-03",
            "2024-12-03T14:00:00",
            "2024-12-03T14:00:00.123",
            "2024-12-03T14:00:00+00:00",
            "2024-12-03T14:00:00.123+01:00",
            "2024-12-03 14:00:00.123Z",
            "2024-12-03t14:00:00.123Z",
            "2024-12-03T14:00:00,123Z",
            "2024-12-03T14:00:00.Z",
            "2024-12-03T14:00:00.12aZ",
            "2024-12-03T14:00:00.1234567890Z",
            "2024-13-03T14:00:00.000Z",
            "2024-02-30T14:00:00.000Z",
            "2024-12-03T24:00:00.000Z",
            "2024-12-03T14:60:00.000Z",
            "+024-12-03T14:00:00.000Z",
            "2024-12-03T14:00:00.000z",
            "2024-12-03T14:00:00.000ZZ",
            "2024-12-03T1:00:00.000Z",
        ] {
            assert_eq!(ms_from_iso(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn epoch_days() {
        assert_eq!(epoch_day(1970, 1, 1), Some(0));
        assert_eq!(epoch_day(1970, 1, 2), Some(1));
        assert_eq!(epoch_day(2000, 3, 1), Some(11_017));
        assert_eq!(epoch_day(2024, 2, 29), Some(19_782));
        assert_eq!(epoch_day(1969, 12, 31), Some(-1));
        for (y, m, d) in [
            (2024, 13, 1),
            (2024, 0, 1),
            (2023, 2, 29),
            (2024, 4, 31),
            (2024, 1, 0),
            (10_000, 1, 1),
            (i64::MAX, 1, 1),
            (2024, i64::MIN, 1),
        ] {
            assert_eq!(epoch_day(y, m, d), None, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn now_is_after_2024() {
        assert!(now_ms() > 1_704_067_200_000);
        assert!(now_secs() > 1_704_067_200);
        assert!(ms_from_iso(&iso_now()).is_some());
    }
}
