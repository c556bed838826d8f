//! The configuration of what agents do on their own: the heartbeat (`agents.defaults.heartbeat`,
//! overridden per agent in `agents.list[].heartbeat`) and cron (`cron`), in OpenClaw's shapes,
//! and the rules the loader checks on them (durations, `HH:MM` times) so a mistake is
//! reported with its line instead of surfacing when the gateway first wakes up.

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
    /// Skip a beat while the main session is busy (default true).
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
    /// Attempts per due run, the first included (default 3).
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
        && every.trim() != "0"
        && let Err(e) = pincer_store::parse_duration(every)
    {
        fail(path.key("every"), e);
    }
    if let Some(hours) = &heartbeat.active_hours {
        let at = path.key("activeHours");
        for (name, value, allow_24) in [("start", &hours.start, false), ("end", &hours.end, true)] {
            if !is_clock_time(value, allow_24) {
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

/// `HH:MM` with HH 00–23 (or `24:00` when `allow_24`), MM 00–59.
fn is_clock_time(text: &str, allow_24: bool) -> bool {
    let Some((h, m)) = text.split_once(':') else {
        return false;
    };
    if h.len() != 2 || m.len() != 2 {
        return false;
    }
    match (h.parse::<u8>(), m.parse::<u8>()) {
        (Ok(24), Ok(0)) => allow_24,
        (Ok(h), Ok(m)) => h < 24 && m < 60,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times() {
        assert!(is_clock_time("00:00", false));
        assert!(is_clock_time("23:59", false));
        assert!(is_clock_time("24:00", true));
        assert!(!is_clock_time("24:00", false));
        assert!(!is_clock_time("24:01", true));
        assert!(!is_clock_time("7:30", false));
        assert!(!is_clock_time("07:60", false));
        assert!(!is_clock_time("0730", false));
        assert!(!is_clock_time("ab:cd", false));
    }
}
