//! One-shot times and durations as OpenClaw reads them.
//!
//! - [`parse_absolute_ms`] is `parseAbsoluteTimeMs` (`src/cron/parse.ts`): epoch milliseconds
//!   as digits, or ISO 8601 where an offset-less date-time is UTC and a bare date is midnight
//!   UTC. This is how a stored `schedule.at` is read.
//! - [`parse_duration_ms`] is the CLI's `parseDurationMs`: `<number><ms|s|m|h|d>`, decimals
//!   allowed (`1.5h`), case-insensitive.
//! - [`resolve_at`] is the CLI's `parseAt` plus Pincer's rule that a one-shot time must lie in
//!   the future: what a user typed (`20m`, `2026-05-01T09:00:00+02:00`) becomes the ISO 8601
//!   UTC string that is stored (`2026-05-01T07:00:00.000Z`, JavaScript's `toISOString`).

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use super::schedule::ScheduleError;

/// Reads a stored `at`: epoch ms digits or ISO 8601. `None` when it is neither.
pub fn parse_absolute_ms(input: &str) -> Option<i64> {
    let raw = input.trim();
    if raw.is_empty() {
        return None;
    }
    if raw.bytes().all(|b| b.is_ascii_digit()) {
        // OpenClaw takes a positive digit string as epoch milliseconds.
        return raw.parse::<i64>().ok().filter(|ms| *ms > 0);
    }
    let normalized = normalize_utc_iso(raw)?;
    let ts: Timestamp = normalized.parse().ok()?;
    Some(ts.as_millisecond())
}

/// Parses `20m`, `1.5h`, `250ms`, `1d`: a positive number and a unit. `None` otherwise.
pub fn parse_duration_ms(input: &str) -> Option<i64> {
    let raw = input.trim();
    let split = raw
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(raw.len());
    let (number, unit) = raw.split_at(split);
    if !is_decimal(number) {
        return None;
    }
    let factor: f64 = match unit.to_ascii_lowercase().as_str() {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    let n: f64 = number.parse().ok()?;
    let ms = (n * factor).floor();
    // Beyond ~285,000 years the value cannot be a time offset anyway; refusing it keeps the
    // float-to-int conversion exact.
    (1.0..=MAX_DURATION_MS).contains(&ms).then_some(ms as i64)
}

/// Resolves what a user typed for a one-shot job to the ISO 8601 UTC string to store.
///
/// An absolute time is taken as it is; an offset-less date-time is read in `tz` when given
/// (as OpenClaw's `--at … --tz …`), else as UTC. A duration counts from `now_ms`. The result
/// must be after `now_ms`: a one-shot time in the past would never run.
pub fn resolve_at(
    input: &str,
    now_ms: i64,
    tz: Option<&TimeZone>,
) -> Result<String, ScheduleError> {
    let raw = input.trim();
    let invalid = || ScheduleError::InvalidAt {
        value: input.to_string(),
    };
    let at_ms = match tz {
        Some(tz) if is_offsetless_date_time(raw) => {
            let civil: DateTime = raw.parse().map_err(|_| invalid())?;
            // In a spring-forward gap this is the instant the clock would have shown had it
            // not jumped; in a fall-back overlap the earlier one (Temporal's "compatible").
            let ts = tz
                .to_ambiguous_timestamp(civil)
                .compatible()
                .map_err(|_| invalid())?;
            ts.as_millisecond()
        }
        _ => match parse_absolute_ms(raw) {
            Some(ms) => ms,
            None => {
                let duration = parse_duration_ms(raw).ok_or_else(invalid)?;
                now_ms.checked_add(duration).ok_or_else(invalid)?
            }
        },
    };
    let iso = format_iso_ms(at_ms).ok_or_else(invalid)?;
    if at_ms <= now_ms {
        return Err(ScheduleError::AtInPast {
            at: iso,
            now: format_iso_ms(now_ms).unwrap_or_else(|| now_ms.to_string()),
        });
    }
    Ok(iso)
}

/// Formats epoch milliseconds like JavaScript's `Date.prototype.toISOString`
/// (`2026-05-01T07:00:00.000Z`). `None` outside the years jiff supports (-9999..=9999).
pub fn format_iso_ms(ms: i64) -> Option<String> {
    let ts = Timestamp::from_millisecond(ms).ok()?;
    Some(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// Largest duration [`parse_duration_ms`] accepts (2^53 ms, where f64 stops being exact).
const MAX_DURATION_MS: f64 = 9_007_199_254_740_992.0;

/// `\d+(\.\d+)?`
fn is_decimal(s: &str) -> bool {
    let (int, frac) = match s.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (s, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

/// `YYYY-MM-DD`.
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// `YYYY-MM-DDT…`.
fn has_iso_date_time_prefix(s: &str) -> bool {
    s.len() > 11 && s.is_char_boundary(10) && is_iso_date(&s[..10]) && s.as_bytes()[10] == b'T'
}

/// Ends in `Z` or a numeric offset (`+02:00`, `-0500`), as OpenClaw's `ISO_TZ_RE`.
fn has_zone_suffix(s: &str) -> bool {
    if s.ends_with(['Z', 'z']) {
        return true;
    }
    let b = s.as_bytes();
    let offset_at = |len: usize| {
        b.len() > len && {
            let tail = &b[b.len() - len..];
            matches!(tail[0], b'+' | b'-')
                && tail[1..].iter().enumerate().all(|(i, c)| {
                    if len == 6 && i == 2 {
                        *c == b':'
                    } else {
                        c.is_ascii_digit()
                    }
                })
        }
    };
    offset_at(6) || offset_at(5)
}

/// An ISO date-time with no zone: read in the job's zone when the caller has one.
fn is_offsetless_date_time(s: &str) -> bool {
    has_iso_date_time_prefix(s) && !has_zone_suffix(s)
}

/// OpenClaw's `normalizeUtcIso`: a zone-less ISO time is UTC.
fn normalize_utc_iso(raw: &str) -> Option<String> {
    if has_zone_suffix(raw) {
        Some(raw.to_string())
    } else if is_iso_date(raw) {
        Some(format!("{raw}T00:00:00Z"))
    } else if has_iso_date_time_prefix(raw) {
        Some(format!("{raw}Z"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("20m"), Some(1_200_000));
        assert_eq!(parse_duration_ms("2H"), Some(7_200_000));
        assert_eq!(parse_duration_ms("1d"), Some(86_400_000));
        assert_eq!(parse_duration_ms("1.5h"), Some(5_400_000));
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms(" 30s "), Some(30_000));
        for bad in [
            "", "m", "20", "20 m", "-5m", "1.m", ".5m", "5w", "0m", "1e3s", "٣m",
        ] {
            assert_eq!(parse_duration_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn absolute_times() {
        assert_eq!(parse_absolute_ms("2026-01-01T00:00:00Z"), Some(NOW));
        assert_eq!(parse_absolute_ms("2026-01-01T02:00:00+02:00"), Some(NOW));
        assert_eq!(parse_absolute_ms("2025-12-31T19:00:00-0500"), Some(NOW));
        // No zone: UTC, as OpenClaw.
        assert_eq!(parse_absolute_ms("2026-01-01T00:00:00"), Some(NOW));
        assert_eq!(parse_absolute_ms("2026-01-01"), Some(NOW));
        assert_eq!(
            parse_absolute_ms("2026-01-01T00:00:00.250Z"),
            Some(NOW + 250)
        );
        assert_eq!(parse_absolute_ms("1767225600000"), Some(NOW));
        for bad in [
            "",
            "0",
            "20m",
            "tomorrow",
            "2026-13-01",
            "2026-01-01T25:00:00Z",
            "2026-01-01X",
        ] {
            assert_eq!(parse_absolute_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn resolve_relative_and_absolute() {
        assert_eq!(
            resolve_at("20m", NOW, None).unwrap(),
            "2026-01-01T00:20:00.000Z"
        );
        assert_eq!(
            resolve_at("1d", NOW, None).unwrap(),
            "2026-01-02T00:00:00.000Z"
        );
        assert_eq!(
            resolve_at("2026-05-01T09:00:00+02:00", NOW, None).unwrap(),
            "2026-05-01T07:00:00.000Z"
        );
        let ny = TimeZone::get("America/New_York").unwrap();
        assert_eq!(
            resolve_at("2026-05-01T09:00:00", NOW, Some(&ny)).unwrap(),
            "2026-05-01T13:00:00.000Z"
        );
        // An explicit offset wins over the zone.
        assert_eq!(
            resolve_at("2026-05-01T09:00:00Z", NOW, Some(&ny)).unwrap(),
            "2026-05-01T09:00:00.000Z"
        );
    }

    #[test]
    fn resolve_rejects_the_past_and_garbage() {
        let err = resolve_at("2025-12-31T23:59:59Z", NOW, None).unwrap_err();
        assert!(matches!(err, ScheduleError::AtInPast { .. }), "{err}");
        assert!(
            err.to_string().contains("2025-12-31T23:59:59.000Z"),
            "{err}"
        );
        let err = resolve_at("2026-01-01T00:00:00Z", NOW, None).unwrap_err();
        assert!(matches!(err, ScheduleError::AtInPast { .. }), "{err}");
        let err = resolve_at("soon", NOW, None).unwrap_err();
        assert!(err.to_string().contains("\"soon\""), "{err}");
        assert!(resolve_at("99999999999999999d", NOW, None).is_err());
    }

    #[test]
    fn iso_format_matches_javascript() {
        assert_eq!(format_iso_ms(NOW + 7).unwrap(), "2026-01-01T00:00:00.007Z");
        assert_eq!(format_iso_ms(0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(i64::MAX), None);
    }
}
