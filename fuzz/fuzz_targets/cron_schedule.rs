//! Arbitrary bytes as a cron schedule: the first 8 bytes are the reference time (ms, i64
//! little-endian), the rest is `<expr>\n<tz>` (no newline: no zone, the machine's local
//! one). Parsing the expression, resolving the zone, computing the next run, and reading
//! the text as an `at` time or a duration never panic, and a next run always lies strictly
//! after the reference.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_automation::cron::{
    CronSchedule, next_run_ms, parse_absolute_ms, parse_duration_ms, resolve_at,
};

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let after_ms = i64::from_le_bytes(*head);
    let text = String::from_utf8_lossy(rest);
    let (expr, tz) = match text.split_once('\n') {
        Some((expr, tz)) => (expr, Some(tz.to_string())),
        None => (text.as_ref(), None),
    };
    let schedule = CronSchedule::cron(expr, tz);
    if let Ok(Some(next)) = next_run_ms(&schedule, after_ms) {
        assert!(next > after_ms, "{expr:?}: {next} is not after {after_ms}");
    }
    let _ = parse_absolute_ms(expr);
    let _ = parse_duration_ms(expr);
    let _ = resolve_at(expr, after_ms, None);
    if let Ok(Some(next)) = next_run_ms(&CronSchedule::at(expr), after_ms) {
        assert!(next > after_ms, "at {expr:?}: {next} is not after {after_ms}");
    }
});
