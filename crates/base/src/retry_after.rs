//! How long a server asked us to wait: the HTTP `Retry-After` header (delay-seconds or an
//! HTTP-date, RFC 9110 §10.2.3) and OpenAI's `retry-after-ms`. Numbers are capped at a day so
//! a silly value cannot overflow a `Duration`; a date is taken as it is (callers cap waits).

use std::time::{Duration, SystemTime};

/// The longest wait a number of seconds or milliseconds can ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// A `Retry-After` value: seconds (fractions tolerated, as some servers send them) or an
/// HTTP-date, read against `now` (a date in the past is no wait). `None` when it is neither,
/// or negative.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait a response asks for, from its `Retry-After` and `retry-after-ms` (OpenAI)
/// header values: `retry-after-ms` decides whenever it is a number (a negative one is no
/// wait asked for), else `Retry-After` as [`parse_retry_after`] reads it.
pub fn retry_after(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    parse_retry_after(retry_after?, now)
}

/// Whole or fractional seconds as a wait, capped at [`MAX_RETRY_AFTER`]; `None` when negative,
/// NaN or infinite.
pub fn duration_from_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0)
        .then(|| Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    const NOV_6_1994: u64 = 784_111_777;

    #[test]
    fn seconds() {
        let now = at(0);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("999999999", now), Some(MAX_RETRY_AFTER));
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        let now = at(NOV_6_1994 - 30);
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_retry_after(date, now),
                Some(Duration::from_secs(30)),
                "{date}"
            );
        }
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at(NOV_6_1994 + 5)),
            Some(Duration::ZERO),
            "a past date is no wait"
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at(0)),
            Some(Duration::from_secs(NOV_6_1994)),
            "a date is not capped"
        );
    }

    #[test]
    fn malformed_values_are_none() {
        for bad in [
            "",
            " ",
            "-1",
            "-0.5",
            "NaN",
            "inf",
            "-inf",
            "soon",
            "2s",
            "0x10",
            "Sun, 06 Nov 1994",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            "2024-12-03T14:00:00Z",
        ] {
            assert_eq!(parse_retry_after(bad, at(0)), None, "{bad:?}");
        }
    }

    #[test]
    fn milliseconds_win_when_they_are_a_number() {
        let now = at(0);
        let both = |s, ms| retry_after(s, ms, now);
        assert_eq!(both(None, Some("1500")), Some(Duration::from_millis(1500)));
        assert_eq!(
            both(Some("2"), Some(" 400 ")),
            Some(Duration::from_millis(400))
        );
        assert_eq!(both(None, Some("0.5")), Some(Duration::from_micros(500)));
        assert_eq!(both(None, Some("1e12")), Some(MAX_RETRY_AFTER));
        assert_eq!(both(Some("2"), None), Some(Duration::from_secs(2)));
        assert_eq!(
            both(Some("2"), Some("1500ms")),
            Some(Duration::from_secs(2))
        );
        assert_eq!(both(Some("2"), Some("")), Some(Duration::from_secs(2)));
        assert_eq!(
            both(Some("2"), Some("-1")),
            None,
            "a number decides, even a bad one"
        );
        assert_eq!(both(Some("2"), Some("NaN")), None);
        assert_eq!(both(None, Some("soon")), None);
        assert_eq!(both(Some("soon"), None), None);
        assert_eq!(both(None, None), None);
    }
}
