//! Durations as OpenClaw's config writes them (`30d`, `12h`, `500ms`): one whole number and
//! one unit. Used by `session.maintenance.pruneAfter` and checked by the config loader.

use std::time::Duration;

const DURATION_HINT: &str =
    "expected a whole number and a unit: ms, s, m, h, d or w (e.g. 30d, 12h, 90m, 45s, 500ms, 2w)";

/// Parses a duration as OpenClaw's config writes them: a whole number and one unit, `ms`,
/// `s`, `m` (minutes), `h`, `d` or `w` — `30d`, `12h`, `90m`, `45s`, `500ms`, `2w`.
/// Surrounding whitespace is ignored; anything else is an error that says what is expected.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err(format!("empty duration; {DURATION_HINT}"));
    }
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(digits);
    if number.is_empty() {
        return Err(format!(
            "duration {text:?} does not start with a number; {DURATION_HINT}"
        ));
    }
    let ms_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 604_800_000,
        "" => return Err(format!("duration {text:?} has no unit; {DURATION_HINT}")),
        other => {
            return Err(format!(
                "duration {text:?} has an unknown unit {other:?}; {DURATION_HINT}"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(ms_per_unit))
        .map(Duration::from_millis)
        .ok_or_else(|| format!("duration {text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        let cases = [
            ("30d", 30 * 86_400_000),
            ("12h", 12 * 3_600_000),
            ("90m", 90 * 60_000),
            ("45s", 45_000),
            ("500ms", 500),
            ("2w", 14 * 86_400_000),
            ("0s", 0),
            (" 7d ", 7 * 86_400_000),
        ];
        for (text, ms) in cases {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_millis(ms)),
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_durations_say_what_is_expected() {
        let hint = "expected a whole number and a unit: ms, s, m, h, d or w (e.g. 30d, 12h, 90m, 45s, 500ms, 2w)";
        let cases = [
            ("", format!("empty duration; {hint}")),
            ("   ", format!("empty duration; {hint}")),
            ("30", format!("duration \"30\" has no unit; {hint}")),
            (
                "d",
                format!("duration \"d\" does not start with a number; {hint}"),
            ),
            (
                "-5d",
                format!("duration \"-5d\" does not start with a number; {hint}"),
            ),
            (
                "30y",
                format!("duration \"30y\" has an unknown unit \"y\"; {hint}"),
            ),
            (
                "30D",
                format!("duration \"30D\" has an unknown unit \"D\"; {hint}"),
            ),
            (
                "1.5h",
                format!("duration \"1.5h\" has an unknown unit \".5h\"; {hint}"),
            ),
            (
                "30 d",
                format!("duration \"30 d\" has an unknown unit \" d\"; {hint}"),
            ),
            (
                "1h30m",
                format!("duration \"1h30m\" has an unknown unit \"h30m\"; {hint}"),
            ),
            (
                "99999999999999999999d",
                "duration \"99999999999999999999d\" is too large".into(),
            ),
            (
                "999999999999999w",
                "duration \"999999999999999w\" is too large".into(),
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse_duration(text), Err(message), "{text:?}");
        }
    }
}
