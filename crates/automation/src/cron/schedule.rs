//! When a schedule fires next: OpenClaw's `computeNextRunAtMs` (`src/cron/schedule.ts`) for
//! the three kinds, with its errors made explicit and named.
//!
//! Cron expressions follow croner, the library OpenClaw uses (npm `croner` ^10, by the author
//! of the `croner` crate): 5 fields (minute first), 6 (seconds first) or 7 (year last),
//! `L`, `W`, `#`, `+` (day-of-month AND day-of-week), names, `@daily` nicknames, and
//! day-of-month OR day-of-week when both are restricted. Times are wall-clock times in the
//! job's IANA zone (the gateway's local zone when none is given).
//!
//! Daylight saving follows croner 10, which is not what the `croner` crate does on
//! a zoned time (that matches croner 11). So the expression is matched on the zone's civil
//! (wall) clock and every match is placed on the time line with Temporal's "compatible"
//! rule; the first one after the reference instant wins. That gives croner 10's results:
//! - a time that does not exist (spring forward) runs as if the clock had not jumped:
//!   02:30 in New York on 2026-03-08 is 03:30 EDT (07:30Z), 02:00 is 03:00 EDT;
//! - a time that exists twice (fall back) runs once, at its first occurrence, and the
//!   repeated wall-clock hour is not walked again: `*/30 * * * *` in New York on 2026-11-01
//!   runs 01:00 and 01:30 EDT, then 02:00 EST.
//!
//! One deliberate difference: from a reference inside the second pass of a repeated hour,
//! croner 10 can answer an instant already past (OpenClaw then retries from the next UTC
//! day); here the answer is always the first run strictly after the reference. A checked
//! differential run of 3,000 random expressions × zones × DST-heavy start times against
//! npm croner 10.0.1 (six chained runs each) found no other difference. An `every` grid
//! point equal to the reference is also skipped (OpenClaw's grid formula returns it).
//! Syntax differences seen: croner 10 refuses `0-59/61`, a bare `L` day-of-week and a lone
//! `+`, which parse here (the last two never match, so a new job with them is refused as
//! never running); `?` is `*` here but "the value at creation" in croner 10.

use std::str::FromStr;

use croner::Cron;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use super::at::parse_absolute_ms;
use super::job::{CronExprSchedule, CronSchedule};

/// Why a schedule is not usable, naming the part that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error(
        "invalid `at` time {value:?}: use an ISO 8601 time such as 2026-05-01T09:00:00+02:00, \
         epoch milliseconds, or a duration such as 20m, 2h, 1d"
    )]
    InvalidAt { value: String },
    #[error("the `at` time {at} is not in the future (now is {now})")]
    AtInPast { at: String, now: String },
    #[error("everyMs must be a positive number of milliseconds, got {every_ms}")]
    InvalidEvery { every_ms: i64 },
    #[error("anchorMs must not be negative, got {anchor_ms}")]
    InvalidAnchor { anchor_ms: i64 },
    #[error("staggerMs must not be negative, got {stagger_ms}")]
    InvalidStagger { stagger_ms: i64 },
    #[error("the cron expression is empty")]
    EmptyExpression,
    #[error(
        "invalid cron expression {expr:?}: expected 5 fields (minute hour day-of-month month \
         day-of-week), 6 (seconds first) or 7 (a year last), got {count}"
    )]
    FieldCount { expr: String, count: usize },
    #[error("invalid cron expression {expr:?}: character {ch:?} is not allowed")]
    IllegalCharacter { expr: String, ch: char },
    #[error("invalid cron expression {expr:?}: {field} field {value:?}: {reason}")]
    InvalidField {
        expr: String,
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("invalid cron expression {expr:?}: {reason}")]
    InvalidExpression { expr: String, reason: String },
    #[error("unknown time zone {tz:?}: use an IANA name such as Europe/Berlin or UTC")]
    UnknownTimeZone { tz: String },
    #[error("time {ms} ms is outside the supported range of years -9999..=9999")]
    OutOfRange { ms: i64 },
}

/// The next time `schedule` fires strictly after `after_ms`, or `None` when it never
/// does again (a past `at`, a cron expression with no further match). A `cron` schedule
/// without `tz` uses the gateway's local zone.
pub fn next_run_ms(schedule: &CronSchedule, after_ms: i64) -> Result<Option<i64>, ScheduleError> {
    next_run_ms_in(schedule, after_ms, &local_time_zone())
}

/// [`next_run_ms`] with the zone used for a `cron` schedule without `tz` given (tests, and
/// callers that resolved the local zone once).
pub fn next_run_ms_in(
    schedule: &CronSchedule,
    after_ms: i64,
    default_tz: &TimeZone,
) -> Result<Option<i64>, ScheduleError> {
    match schedule {
        CronSchedule::At(at) => {
            let at_ms = parse_absolute_ms(&at.at).ok_or_else(|| ScheduleError::InvalidAt {
                value: at.at.clone(),
            })?;
            Ok((at_ms > after_ms).then_some(at_ms))
        }
        CronSchedule::Every(every) => every_next_ms(every.every_ms, every.anchor_ms, after_ms),
        CronSchedule::Cron(cron) => {
            let expr = CronExpr::parse(&cron.expr)?;
            let tz = resolve_time_zone_or(cron.tz.as_deref(), default_tz)?;
            expr.next_after_ms(after_ms, &tz)
        }
    }
}

/// Checks a schedule without looking at the clock: `at` parses, `every` is positive, the
/// cron expression parses and its zone exists.
pub fn validate_schedule(schedule: &CronSchedule) -> Result<(), ScheduleError> {
    match schedule {
        CronSchedule::At(at) => {
            parse_absolute_ms(&at.at)
                .map(|_| ())
                .ok_or_else(|| ScheduleError::InvalidAt {
                    value: at.at.clone(),
                })
        }
        CronSchedule::Every(every) => {
            if every.every_ms <= 0 {
                return Err(ScheduleError::InvalidEvery {
                    every_ms: every.every_ms,
                });
            }
            match every.anchor_ms {
                Some(anchor_ms) if anchor_ms < 0 => Err(ScheduleError::InvalidAnchor { anchor_ms }),
                _ => Ok(()),
            }
        }
        CronSchedule::Cron(CronExprSchedule {
            expr,
            tz,
            stagger_ms,
            ..
        }) => {
            CronExpr::parse(expr)?;
            if let Some(tz) = tz.as_deref() {
                resolve_time_zone(tz)?;
            }
            match *stagger_ms {
                Some(stagger_ms) if stagger_ms < 0 => {
                    Err(ScheduleError::InvalidStagger { stagger_ms })
                }
                _ => Ok(()),
            }
        }
    }
}

/// The next point of the grid `anchor + k * every` strictly after `after_ms`; a missing
/// anchor puts the grid on `after_ms` itself.
fn every_next_ms(
    every_ms: i64,
    anchor_ms: Option<i64>,
    after_ms: i64,
) -> Result<Option<i64>, ScheduleError> {
    if every_ms <= 0 {
        return Err(ScheduleError::InvalidEvery { every_ms });
    }
    // OpenClaw clamps a negative anchor to the epoch.
    let anchor = anchor_ms.unwrap_or(after_ms).max(0);
    if after_ms < anchor {
        return Ok(Some(anchor));
    }
    let steps = (after_ms - anchor) / every_ms + 1;
    Ok(steps
        .checked_mul(every_ms)
        .and_then(|offset| anchor.checked_add(offset)))
}

/// An IANA zone by name (case-insensitive, from the bundled tzdb).
pub fn resolve_time_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    TimeZone::get(name.trim()).map_err(|_| ScheduleError::UnknownTimeZone {
        tz: name.to_string(),
    })
}

/// `name` when given and not blank (as OpenClaw trims it), else `default`.
fn resolve_time_zone_or(name: Option<&str>, default: &TimeZone) -> Result<TimeZone, ScheduleError> {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => resolve_time_zone(name),
        None => Ok(default.clone()),
    }
}

/// The gateway's local zone (`TZ`, then `/etc/localtime`), or UTC when it cannot be told.
pub fn local_time_zone() -> TimeZone {
    TimeZone::try_system().unwrap_or(TimeZone::UTC)
}

/// Most matches skipped while looking for one after the reference instant. Skips only
/// happen inside a repeated (fall-back) wall-clock range, at most one match per second
/// of it; no zone repeats more than two hours.
const MAX_SKIPPED_MATCHES: usize = 3 * 3600;

/// A parsed cron expression.
#[derive(Debug, Clone)]
pub struct CronExpr {
    cron: Cron,
}

impl CronExpr {
    /// Parses `expr` with croner's rules; an error names the field that is wrong.
    pub fn parse(expr: &str) -> Result<Self, ScheduleError> {
        let trimmed = expr.trim();
        if trimmed.is_empty() {
            return Err(ScheduleError::EmptyExpression);
        }
        // Cron syntax is ASCII; refusing anything else up front also keeps croner's
        // case folding away from text whose length it changes.
        if let Some(ch) = trimmed
            .chars()
            .find(|c| !(c.is_ascii_graphic() || *c == ' ' || *c == '\t'))
        {
            return Err(ScheduleError::IllegalCharacter {
                expr: expr.to_string(),
                ch,
            });
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        let nickname = fields.len() == 1 && fields[0].starts_with('@');
        if !nickname && !(5..=7).contains(&fields.len()) {
            return Err(ScheduleError::FieldCount {
                expr: expr.to_string(),
                count: fields.len(),
            });
        }
        if !nickname && let Some(err) = find_empty_list_entry(expr, &fields) {
            return Err(err);
        }
        // croner 10 knows `@midnight` (= `@daily`); the crate does not.
        let pattern = if trimmed.eq_ignore_ascii_case("@midnight") {
            "@daily"
        } else {
            trimmed
        };
        match parser().parse(pattern) {
            Ok(cron) => Ok(Self { cron }),
            Err(_) if nickname => Err(ScheduleError::InvalidExpression {
                expr: expr.to_string(),
                reason: "unknown nickname: use @yearly, @annually, @monthly, @weekly, @daily, \
                         @midnight or @hourly"
                    .to_string(),
            }),
            Err(err) => Err(name_bad_field(expr, &fields).unwrap_or_else(|| {
                ScheduleError::InvalidExpression {
                    expr: expr.to_string(),
                    reason: describe(&err),
                }
            })),
        }
    }

    /// The first time strictly after `after_ms` that the expression matches on `tz`'s
    /// wall clock, placed as croner 10 places it (see the module docs).
    pub fn next_after_ms(
        &self,
        after_ms: i64,
        tz: &TimeZone,
    ) -> Result<Option<i64>, ScheduleError> {
        let after = Timestamp::from_millisecond(after_ms)
            .map_err(|_| ScheduleError::OutOfRange { ms: after_ms })?;
        let mut cursor: DateTime = tz.to_datetime(after);
        for _ in 0..MAX_SKIPPED_MATCHES {
            let civil = match self.cron.find_next_occurrence(&cursor, false) {
                Ok(civil) => civil,
                // No match before croner's search horizon (year 5000) or jiff's (9999):
                // the expression never fires again, as croner's `nextRun` returning null.
                Err(_) => return Ok(None),
            };
            let Ok(at) = tz.to_ambiguous_timestamp(civil).compatible() else {
                return Ok(None);
            };
            if at > after {
                return Ok(Some(at.as_millisecond()));
            }
            // A wall-clock time of the repeated hour whose first occurrence is already
            // past: it does not run again.
            cursor = civil;
        }
        Ok(None)
    }
}

/// Croner's parser with croner 10's defaults: seconds and year optional, day-of-month OR
/// day-of-week, POSIX weekdays, no `0/10` steps.
fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Optional)
        .build()
}

/// Names of the fields of a 5, 6 or 7 field expression.
fn field_names(count: usize) -> &'static [&'static str] {
    const SEVEN: [&str; 7] = [
        "second",
        "minute",
        "hour",
        "day-of-month",
        "month",
        "day-of-week",
        "year",
    ];
    match count {
        5 => &SEVEN[1..6],
        6 => &SEVEN[..6],
        _ => &SEVEN,
    }
}

/// Finds the field that makes `expr` invalid: each field is tried alone, the others `*`.
/// `None` when every field is fine alone (a combination is wrong).
fn name_bad_field(expr: &str, fields: &[&str]) -> Option<ScheduleError> {
    let names = field_names(fields.len());
    fields.iter().enumerate().find_map(|(i, value)| {
        let mut probe = vec!["*"; fields.len()];
        probe[i] = value;
        let err = parser().parse(&probe.join(" ")).err()?;
        Some(ScheduleError::InvalidField {
            expr: expr.to_string(),
            field: names.get(i).copied().unwrap_or("unknown"),
            value: (*value).to_string(),
            reason: describe(&err),
        })
    })
}

/// A list with an empty entry (`1,2,`, `,5`): croner 10 refuses it, the crate would not.
fn find_empty_list_entry(expr: &str, fields: &[&str]) -> Option<ScheduleError> {
    let names = field_names(fields.len());
    fields.iter().enumerate().find_map(|(i, value)| {
        value
            .split(',')
            .any(str::is_empty)
            .then(|| ScheduleError::InvalidField {
                expr: expr.to_string(),
                field: names.get(i).copied().unwrap_or("unknown"),
                value: (*value).to_string(),
                reason: "a list has an empty entry".to_string(),
            })
    })
}

/// Croner's message without its "Invalid pattern: " style prefixes doubled up.
fn describe(err: &CronError) -> String {
    match err {
        CronError::InvalidPattern(msg)
        | CronError::ComponentError(msg)
        | CronError::IllegalCharacters(msg) => msg.clone(),
        other => other.to_string(),
    }
}

impl FromStr for CronExpr {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}
