//! `activeHours {start, end, timezone}` (OpenClaw's `src/infra/heartbeat-active-hours.ts`):
//! the daily window in which heartbeats may run; outside it a tick is skipped
//! (`quiet-hours`) until the next one inside.
//!
//! OpenClaw's rules: times are `HH:MM` (two-digit hour, 00:00–23:59) and `end` may be
//! `24:00`; `start` is inclusive, `end` exclusive; `end` before `start` wraps past
//! midnight; `start == end` is an empty window (never active); the wall-clock minute is
//! read in the zone, so DST shifts the window with local time. `timezone` is `"user"` (the
//! default: the user's configured zone, else the host's), `"local"` (the host's) or an IANA
//! name. Unlike OpenClaw, which quietly treats a bad time as "always active" and an unknown
//! zone as the user's, Pincer refuses both when the config is loaded, so a typo is seen.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::config::HeartbeatConfigError;

/// The zone a window was configured in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActiveHoursZone {
    /// The user's zone (the host's when none is configured).
    User,
    /// The gateway host's zone.
    Local,
    /// An IANA name as configured, e.g. `Europe/Berlin`.
    Iana(String),
}

/// A checked window with its zone resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveHours {
    start: String,
    end: String,
    zone: ActiveHoursZone,
    tz: TimeZone,
    start_min: u16,
    end_min: u16,
}

impl ActiveHours {
    /// A window; `timezone` `None`/`"user"` is the host's zone here (no user zone known).
    pub fn new(
        start: &str,
        end: &str,
        timezone: Option<&str>,
    ) -> Result<Self, HeartbeatConfigError> {
        Self::with_user_timezone(start, end, timezone, None)
    }

    /// A window whose `"user"` zone is `user_timezone` (OpenClaw's
    /// `agents.defaults.userTimezone`), the host's when that is `None`.
    pub fn with_user_timezone(
        start: &str,
        end: &str,
        timezone: Option<&str>,
        user_timezone: Option<&str>,
    ) -> Result<Self, HeartbeatConfigError> {
        let start_min = parse_time("start", start, false)?;
        let end_min = parse_time("end", end, true)?;
        let (zone, tz) = resolve_zone(timezone, user_timezone)?;
        Ok(Self {
            start: start.trim().to_owned(),
            end: end.trim().to_owned(),
            zone,
            tz,
            start_min,
            end_min,
        })
    }

    pub fn start(&self) -> &str {
        &self.start
    }

    pub fn end(&self) -> &str {
        &self.end
    }

    /// The zone as configured.
    pub fn zone(&self) -> &ActiveHoursZone {
        &self.zone
    }

    /// The zone the window is read in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.tz
    }

    /// Whether wall-clock time `now_ms` (ms since the epoch) falls in the window.
    pub fn is_within(&self, now_ms: i64) -> bool {
        if self.start_min == self.end_min {
            return false;
        }
        // Out of jiff's range (±9999 years): OpenClaw's answer when it cannot tell.
        let Ok(ts) = Timestamp::from_millisecond(now_ms) else {
            return true;
        };
        let local = self.tz.to_datetime(ts);
        let hour = u16::try_from(local.hour()).unwrap_or(0);
        let minute = u16::try_from(local.minute()).unwrap_or(0);
        let now = hour * 60 + minute;
        if self.end_min > self.start_min {
            now >= self.start_min && now < self.end_min
        } else {
            now >= self.start_min || now < self.end_min
        }
    }
}

/// `HH:MM` (or `24:00` when `allow_24`) as minutes since midnight, by the config's grammar
/// ([`pincer_config::parse_clock_minutes`]).
fn parse_time(field: &'static str, raw: &str, allow_24: bool) -> Result<u16, HeartbeatConfigError> {
    pincer_config::parse_clock_minutes(raw, allow_24).ok_or_else(|| {
        HeartbeatConfigError::InvalidTime {
            field,
            value: raw.to_owned(),
        }
    })
}

fn resolve_zone(
    timezone: Option<&str>,
    user_timezone: Option<&str>,
) -> Result<(ActiveHoursZone, TimeZone), HeartbeatConfigError> {
    let name = timezone.map(str::trim).unwrap_or_default();
    if name.is_empty() || name.eq_ignore_ascii_case("user") {
        let tz = match user_timezone.map(str::trim).filter(|u| !u.is_empty()) {
            Some(user) => iana(user)?,
            None => TimeZone::system(),
        };
        return Ok((ActiveHoursZone::User, tz));
    }
    if name.eq_ignore_ascii_case("local") {
        // jiff falls back to UTC (with a warning) when the host's zone cannot be found,
        // as OpenClaw does.
        return Ok((ActiveHoursZone::Local, TimeZone::system()));
    }
    Ok((ActiveHoursZone::Iana(name.to_owned()), iana(name)?))
}

fn iana(name: &str) -> Result<TimeZone, HeartbeatConfigError> {
    TimeZone::get(name).map_err(|_| HeartbeatConfigError::UnknownTimezone {
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn at(iso: &str) -> i64 {
        iso.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn window(start: &str, end: &str, tz: &str) -> ActiveHours {
        ActiveHours::new(start, end, Some(tz)).unwrap()
    }

    #[test]
    fn a_day_window_is_start_inclusive_end_exclusive() {
        let w = window("09:00", "17:00", "UTC");
        assert!(!w.is_within(at("2025-06-01T08:59:59Z")));
        assert!(w.is_within(at("2025-06-01T09:00:00Z")));
        assert!(w.is_within(at("2025-06-01T16:59:59Z")));
        assert!(!w.is_within(at("2025-06-01T17:00:00Z")));
    }

    #[test]
    fn a_window_across_midnight_wraps() {
        let w = window("22:00", "06:00", "UTC");
        for inside in ["22:00", "23:59", "00:00", "03:15", "05:59"] {
            assert!(
                w.is_within(at(&format!("2025-06-01T{inside}:00Z"))),
                "{inside}"
            );
        }
        for outside in ["06:00", "12:00", "21:59"] {
            assert!(
                !w.is_within(at(&format!("2025-06-01T{outside}:00Z"))),
                "{outside}"
            );
        }
    }

    #[test]
    fn end_may_be_24_00_and_equal_ends_mean_never() {
        let late = window("20:00", "24:00", "UTC");
        assert!(late.is_within(at("2025-06-01T23:59:00Z")));
        assert!(!late.is_within(at("2025-06-02T00:00:00Z")));
        let never = window("08:00", "08:00", "UTC");
        assert!(!never.is_within(at("2025-06-01T08:00:00Z")));
        assert!(!never.is_within(at("2025-06-01T20:00:00Z")));
    }

    #[test]
    fn the_same_instant_differs_by_zone() {
        let now = at("2025-06-01T12:30:00Z"); // 21:30 in Tokyo, 08:30 in New York (EDT)
        let tokyo = window("08:00", "17:00", "Asia/Tokyo");
        let new_york = window("08:00", "17:00", "America/New_York");
        assert!(!tokyo.is_within(now));
        assert!(new_york.is_within(now));
        let tokyo_night = window("21:00", "07:00", "Asia/Tokyo");
        assert!(tokyo_night.is_within(now));
    }

    #[test]
    fn dst_moves_the_window_with_local_time() {
        // New York springs forward on 2025-03-09 at 02:00 EST (07:00 UTC).
        let work = window("08:00", "17:00", "America/New_York");
        assert!(!work.is_within(at("2025-03-08T12:30:00Z")), "07:30 EST");
        assert!(work.is_within(at("2025-03-09T12:30:00Z")), "08:30 EDT");
        // 02:00-03:00 does not exist that day.
        let gap = window("02:00", "03:00", "America/New_York");
        assert!(
            gap.is_within(at("2025-03-08T07:30:00Z")),
            "02:30 EST the day before"
        );
        assert!(!gap.is_within(at("2025-03-09T06:59:00Z")), "01:59 EST");
        assert!(!gap.is_within(at("2025-03-09T07:00:00Z")), "03:00 EDT");
        // Falling back on 2025-11-02, 01:00-02:00 happens twice; both are inside.
        let twice = window("01:00", "02:00", "America/New_York");
        assert!(twice.is_within(at("2025-11-02T05:30:00Z")), "01:30 EDT");
        assert!(twice.is_within(at("2025-11-02T06:30:00Z")), "01:30 EST");
        assert!(!twice.is_within(at("2025-11-02T07:00:00Z")), "02:00 EST");
        // Berlin's spring-forward day, across midnight: 23:00 CET to 07:00 CEST.
        let berlin = window("23:00", "07:00", "Europe/Berlin");
        assert!(berlin.is_within(at("2025-03-30T04:59:00Z")), "06:59 CEST");
        assert!(!berlin.is_within(at("2025-03-30T05:00:00Z")), "07:00 CEST");
    }

    #[test]
    fn zones_resolve_user_local_and_iana() {
        let user = ActiveHours::with_user_timezone("08:00", "17:00", None, Some("Asia/Tokyo"));
        let user = user.unwrap();
        assert_eq!(user.zone(), &ActiveHoursZone::User);
        assert_eq!(user.time_zone().iana_name(), Some("Asia/Tokyo"));
        let explicit = ActiveHours::with_user_timezone("08:00", "17:00", Some("user"), Some("UTC"));
        assert_eq!(explicit.unwrap().time_zone(), &TimeZone::UTC);
        let local = ActiveHours::new("08:00", "17:00", Some("local")).unwrap();
        assert_eq!(local.zone(), &ActiveHoursZone::Local);
        let berlin = window("08:00", "17:00", "europe/berlin");
        assert_eq!(berlin.time_zone().iana_name(), Some("Europe/Berlin"));
        assert_eq!(berlin.start(), "08:00");
        assert_eq!(berlin.end(), "17:00");
    }

    #[test]
    fn bad_times_and_zones_are_config_errors() {
        for (start, end) in [
            ("24:00", "08:00"),
            ("8:00", "17:00"),
            ("08:00", "12:60"),
            ("", "17:00"),
            ("08:00", "24:01"),
            ("08h00", "17:00"),
        ] {
            let err = ActiveHours::new(start, end, Some("UTC")).unwrap_err();
            assert!(
                matches!(err, HeartbeatConfigError::InvalidTime { .. }),
                "{start}-{end}"
            );
        }
        let err = ActiveHours::new("08:00", "17:00", Some("Mars/Olympus_Mons")).unwrap_err();
        assert_eq!(
            err,
            HeartbeatConfigError::UnknownTimezone {
                name: "Mars/Olympus_Mons".into()
            }
        );
        assert!(err.to_string().contains("IANA"));
        let bad_user = ActiveHours::with_user_timezone("08:00", "17:00", None, Some("Nowhere/X"));
        assert!(matches!(
            bad_user,
            Err(HeartbeatConfigError::UnknownTimezone { .. })
        ));
    }
}
