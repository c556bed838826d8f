//! The configuration of what agents do on their own: the heartbeat (`agents.defaults.heartbeat`,
//! overridden per agent in `agents.list[].heartbeat`) and cron (`cron`), in OpenClaw's shapes,
//! and the rules the loader checks on them (durations, `HH:MM` times) so a mistake is
//! reported with its line instead of surfacing when the gateway first wakes up.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::keypath::KeyPath;

/// `heartbeat`: a periodic turn in the agent's main session that reads HEARTBEAT.md and
/// stays silent unless something needs the user.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeartbeatConfig {
    /// How often, like `30m` (the default) or `2h`; `0m` turns the heartbeat off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Only between these local times (a range may cross midnight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_hours: Option<ActiveHoursConfig>,
    /// Drop a timer beat that finds the main session busy (default true); false retries it
    /// each second until the session is free. Events (an exec exit, a cron reminder, a wake)
    /// always wait for the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_when_busy: Option<bool>,
    /// A reply of at most this many characters besides `HEARTBEAT_OK` stays silent (300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_max_chars: Option<usize>,
    /// Where a reply goes: `none`, `last` (the channel the user last wrote from; the
    /// default) or a channel name with `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The recipient on `target`'s channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Replaces the default heartbeat prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// `activeHours`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActiveHoursConfig {
    /// `HH:MM`, inclusive.
    pub start: String,
    /// `HH:MM` (`24:00` for midnight at the end of the day), exclusive.
    pub end: String,
    /// An IANA zone like `Europe/Berlin`, or `local` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// `cron`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronConfig {
    /// Run scheduled jobs (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Jobs running at once (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_runs: Option<u32>,
    /// What happens after a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<CronRetryConfig>,
}

/// `cron.retry`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronRetryConfig {
    /// Retries of a failed run before a one-shot job is given up (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// The wait before each retry (default 60000, 120000, 300000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<Vec<u64>>,
}

/// Checks a heartbeat section at `path`.
pub(crate) fn check_heartbeat(
    heartbeat: &HeartbeatConfig,
    path: &KeyPath,
    fail: &mut impl FnMut(KeyPath, String),
) {
    if let Some(every) = &heartbeat.every
        && let Err(reason) = parse_heartbeat_every(every)
    {
        fail(
            path.key("every"),
            format!("{every:?} is not a duration ({reason}): use e.g. 30m, 2h or 1h30m; 0m is off"),
        );
    }
    if let Some(hours) = &heartbeat.active_hours {
        let at = path.key("activeHours");
        for (name, value, allow_24) in [("start", &hours.start, false), ("end", &hours.end, true)] {
            if parse_clock_minutes(value, allow_24).is_none() {
                fail(
                    at.key(name),
                    format!("\"{value}\" is not a time of day: use HH:MM, like \"08:30\""),
                );
            }
        }
    }
    if heartbeat.to.is_some() && matches!(heartbeat.target.as_deref(), None | Some("none" | "last"))
    {
        fail(
            path.key("to"),
            "only applies with a channel as `target`".to_owned(),
        );
    }
}

/// Checks the `cron` section.
pub(crate) fn check_cron(cron: &CronConfig, fail: &mut impl FnMut(KeyPath, String)) {
    let path = KeyPath::root().key("cron");
    if cron.max_concurrent_runs == Some(0) {
        fail(
            path.key("maxConcurrentRuns"),
            "must be at least 1 (set `enabled: false` to stop cron)".to_owned(),
        );
    }
    if let Some(retry) = &cron.retry
        && retry.max_attempts == Some(0)
    {
        fail(
            path.key("retry").key("maxAttempts"),
            "must be at least 1 (the first attempt counts)".to_owned(),
        );
    }
}

/// `HH:MM` (`^(?:([01]\d|2[0-3]):([0-5]\d)|24:00)$`, `24:00` only when `allow_24`; spaces
/// around are ignored) as minutes since midnight.
pub fn parse_clock_minutes(text: &str, allow_24: bool) -> Option<u16> {
    let text = text.trim();
    if text == "24:00" {
        return allow_24.then_some(24 * 60);
    }
    let bytes = text.as_bytes();
    if bytes.len() != 5 || bytes[2] != b':' {
        return None;
    }
    let digits = |hi: u8, lo: u8| -> Option<u16> {
        (hi.is_ascii_digit() && lo.is_ascii_digit())
            .then(|| u16::from(hi - b'0') * 10 + u16::from(lo - b'0'))
    };
    match (digits(bytes[0], bytes[1]), digits(bytes[3], bytes[4])) {
        (Some(hour), Some(minute)) if hour < 24 && minute < 60 => Some(hour * 60 + minute),
        _ => None,
    }
}

/// Parses a heartbeat's `every` as OpenClaw does: `30m`, `1h`, `1h30m`, `90s`, `1.5h`, `45`
/// (minutes), `0m` (off). The error says what is wrong.
pub fn parse_heartbeat_every(text: &str) -> Result<Duration, String> {
    let err = |reason: &str| reason.to_owned();
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(err("empty"));
    }
    let mut rest = lower.as_str();
    let mut total_ms = 0f64;
    let mut segments = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() {
            return Err(err(if segments == 0 {
                "does not start with a number"
            } else {
                "expected a number after each unit"
            }));
        }
        if number.starts_with('.') || number.ends_with('.') || number.matches('.').count() > 1 {
            return Err(err("malformed number"));
        }
        let value: f64 = number.parse().map_err(|_| err("malformed number"))?;
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let per_unit = match unit {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            "w" => 604_800_000.0,
            // A bare number is minutes, but only on its own: `1h30` is ambiguous.
            "" if segments == 0 && after.is_empty() => 60_000.0,
            "" => return Err(err("every part needs a unit")),
            _ => return Err(err("unknown unit; use ms, s, m, h, d or w")),
        };
        let ms = value * per_unit;
        if ms == 0.0 && value != 0.0 {
            return Err(err("too small"));
        }
        total_ms += ms;
        segments += 1;
        rest = after.trim_start();
    }
    let rounded = total_ms.round();
    // 2^53 ms is ~285,000 years; beyond it f64 is no longer exact.
    if !rounded.is_finite() || rounded > 9_007_199_254_740_992.0 {
        return Err(err("too large"));
    }
    // In range and non-negative (no sign is accepted), so the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Duration::from_millis(rounded as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_every_is_the_heartbeats_own_grammar() {
        let ms = |t: &str| parse_heartbeat_every(t).map(|d| d.as_millis());
        assert_eq!(ms("1h30m"), Ok(90 * 60_000));
        assert_eq!(ms("45"), Ok(45 * 60_000));
        assert_eq!(ms("0m"), Ok(0));
        assert!(ms("often").is_err());
    }

    #[test]
    fn clock_times() {
        assert_eq!(parse_clock_minutes("00:00", false), Some(0));
        assert_eq!(parse_clock_minutes("23:59", false), Some(23 * 60 + 59));
        assert_eq!(parse_clock_minutes(" 08:30 ", false), Some(8 * 60 + 30));
        assert_eq!(parse_clock_minutes("24:00", true), Some(24 * 60));
        assert_eq!(parse_clock_minutes("24:00", false), None);
        assert_eq!(parse_clock_minutes("24:01", true), None);
        assert_eq!(parse_clock_minutes("7:30", false), None);
        assert_eq!(parse_clock_minutes("07:60", false), None);
        assert_eq!(parse_clock_minutes("0730", false), None);
        assert_eq!(parse_clock_minutes("ab:cd", false), None);
    }
}
