//! Heartbeat settings for one agent, as a plain struct with OpenClaw's defaults
//! (`agents.defaults.heartbeat` merged with `agents.list[].heartbeat`; the gateway maps its
//! config file onto it), and the parser for `every`.
//!
//! `every` follows OpenClaw's `parseDurationMs(raw, {defaultUnit: "m"})`: a bare number is
//! minutes, decimals are allowed (`1.5h`), units are `ms`, `s`, `m`, `h`, `d` (plus `w`, as
//! `pincer_store::retention::parse_duration` has), case does not matter, and `0m` turns the
//! heartbeat off. Pincer also accepts compound forms (`1h30m`). The store's
//! `parse_duration` is not reused: it wants exactly one whole-number segment with a unit.

use std::time::Duration;

use super::active_hours::ActiveHours;
use super::token::DEFAULT_ACK_MAX_CHARS;

/// OpenClaw's `DEFAULT_HEARTBEAT_EVERY` (`"30m"`).
pub const DEFAULT_EVERY: Duration = Duration::from_secs(30 * 60);

/// A heartbeat setting that cannot be used. Reported when the config is loaded, so a typo
/// never silently changes when the agent wakes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeartbeatConfigError {
    #[error("heartbeat every {input:?}: {reason} (e.g. 30m, 1h, 1h30m, 90s; 0m turns it off)")]
    InvalidDuration { input: String, reason: String },
    #[error(
        "heartbeat activeHours.{field} {value:?} is not a time of day: use HH:MM from 00:00 to 23:59 (end may also be 24:00)"
    )]
    InvalidTime { field: &'static str, value: String },
    #[error(
        "heartbeat activeHours.timezone {name:?} is not a known time zone: use \"user\", \"local\" or an IANA name such as Europe/Berlin"
    )]
    UnknownTimezone { name: String },
    #[error("heartbeat target needs a channel name (or \"last\" / \"none\")")]
    EmptyTarget,
}

/// Where a heartbeat's reply goes (OpenClaw's `target` plus `to`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HeartbeatTarget {
    /// Run, deliver nothing.
    None,
    /// The channel and peer the session last talked to.
    #[default]
    Last,
    /// A configured channel, optionally to one recipient.
    Channel { channel: String, to: Option<String> },
}

impl HeartbeatTarget {
    /// From the config's `target` and `to`: absent means `last`; `"none"`, `"last"` or a
    /// channel name. `to` only matters with a channel (OpenClaw also lets it override the
    /// recipient of `last`; Pincer does not model that).
    pub fn parse(target: Option<&str>, to: Option<&str>) -> Result<Self, HeartbeatConfigError> {
        let Some(raw) = target else {
            return Ok(Self::Last);
        };
        let name = raw.trim();
        match name.to_ascii_lowercase().as_str() {
            "" => Err(HeartbeatConfigError::EmptyTarget),
            "none" => Ok(Self::None),
            "last" => Ok(Self::Last),
            channel => Ok(Self::Channel {
                channel: channel.to_owned(),
                to: to
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned),
            }),
        }
    }
}

/// One agent's heartbeat.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatSettings {
    /// The timer's period in ms; 0 = heartbeats off (timer and `request_now` alike).
    pub every_ms: u64,
    /// When set, runs outside the window are skipped (`quiet-hours`).
    pub active_hours: Option<ActiveHours>,
    /// A timer beat that finds the session busy is dropped (pi-gateway's switch); `false`
    /// retries it each second like OpenClaw. Event-driven runs always retry.
    pub skip_when_busy: bool,
    /// Chatter allowed around `HEARTBEAT_OK` before a reply counts as an alert.
    pub ack_max_chars: usize,
    pub target: HeartbeatTarget,
    /// Replaces the default heartbeat prompt (sent verbatim; blank = default).
    pub prompt: Option<String>,
}

impl Default for HeartbeatSettings {
    /// OpenClaw's defaults: every 30 min, any hour, skip when busy, `ackMaxChars` 300,
    /// target `last` (OpenClaw's original default; later releases moved to `none` and then
    /// `owner`. `last` is what lets an exec result reach the user unasked), default prompt.
    fn default() -> Self {
        Self {
            every_ms: duration_ms(DEFAULT_EVERY),
            active_hours: None,
            skip_when_busy: true,
            ack_max_chars: DEFAULT_ACK_MAX_CHARS,
            target: HeartbeatTarget::Last,
            prompt: None,
        }
    }
}

impl HeartbeatSettings {
    /// The period as a `Duration` (zero when off).
    pub fn every(&self) -> Duration {
        Duration::from_millis(self.every_ms)
    }

    /// Whether heartbeats run at all.
    pub fn enabled(&self) -> bool {
        self.every_ms > 0
    }

    /// Whether `now_ms` is inside the active hours (always, without a window).
    pub fn is_active_at(&self, now_ms: i64) -> bool {
        self.active_hours
            .as_ref()
            .is_none_or(|hours| hours.is_within(now_ms))
    }

    /// Whether a reply goes anywhere; the prompts ask for a relay only then.
    pub fn delivers(&self) -> bool {
        self.target != HeartbeatTarget::None
    }
}

/// Parses `every`: `30m`, `1h`, `1h30m`, `90s`, `1.5h`, `45` (minutes), `0m` (off). The
/// grammar is the config's ([`pincer_config::parse_heartbeat_every`]), so what loads runs.
pub fn parse_every(text: &str) -> Result<Duration, HeartbeatConfigError> {
    pincer_config::parse_heartbeat_every(text).map_err(|reason| {
        HeartbeatConfigError::InvalidDuration {
            input: text.to_owned(),
            reason,
        }
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> Result<u64, HeartbeatConfigError> {
        parse_every(text).map(duration_ms)
    }

    #[test]
    fn every_parses_openclaw_durations_and_compounds() {
        let ok = [
            ("30m", 1_800_000),
            ("0m", 0),
            ("0", 0),
            ("45", 2_700_000),
            ("1h", 3_600_000),
            ("1h30m", 5_400_000),
            ("1h 30m", 5_400_000),
            ("90s", 90_000),
            ("500ms", 500),
            ("1.5h", 5_400_000),
            ("2D", 172_800_000),
            ("1w", 604_800_000),
            (" 30M ", 1_800_000),
        ];
        for (text, want) in ok {
            assert_eq!(ms(text), Ok(want), "{text:?}");
        }
        for bad in [
            "", "  ", "m", "30x", "1h30", "-5m", "1..5h", ".5h", "5.m", "abc", "1e3m",
        ] {
            assert!(
                matches!(
                    parse_every(bad),
                    Err(HeartbeatConfigError::InvalidDuration { .. })
                ),
                "{bad:?}"
            );
        }
        let message = parse_every("30x").map(|_| ()).unwrap_err().to_string();
        assert!(
            message.contains("\"30x\"") && message.contains("unknown unit"),
            "{message}"
        );
    }

    #[test]
    fn defaults_are_openclaws() {
        let s = HeartbeatSettings::default();
        assert_eq!(s.every(), Duration::from_secs(1800));
        assert!(s.enabled());
        assert_eq!(s.ack_max_chars, 300);
        assert!(s.skip_when_busy);
        assert_eq!(s.target, HeartbeatTarget::Last);
        assert!(s.delivers());
        assert!(s.is_active_at(0));
        let off = HeartbeatSettings {
            every_ms: 0,
            ..HeartbeatSettings::default()
        };
        assert!(!off.enabled());
    }

    #[test]
    fn targets_parse() {
        assert_eq!(
            HeartbeatTarget::parse(None, None),
            Ok(HeartbeatTarget::Last)
        );
        assert_eq!(
            HeartbeatTarget::parse(Some(" None "), None),
            Ok(HeartbeatTarget::None)
        );
        assert_eq!(
            HeartbeatTarget::parse(Some("last"), Some("x")),
            Ok(HeartbeatTarget::Last)
        );
        assert_eq!(
            HeartbeatTarget::parse(Some("Telegram"), Some(" 12345 ")),
            Ok(HeartbeatTarget::Channel {
                channel: "telegram".into(),
                to: Some("12345".into())
            })
        );
        assert_eq!(
            HeartbeatTarget::parse(Some(" "), None),
            Err(HeartbeatConfigError::EmptyTarget)
        );
    }
}
