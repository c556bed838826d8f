//! Next-run tables checked against OpenClaw's own cron library: time zones, daylight
//! saving, croner's syntax, and expressions that never match.
//!
//! The expectations were produced by npm `croner` 10.0.1 (OpenClaw depends on
//! `croner ^10.0.1`), with `new Cron(expr, {timezone}).nextRun(from)` chained from the
//! previous result; they are exact instants, not properties.

use jiff::Timestamp;
use pincer_automation::cron::next_run_ms_in;

use super::{cron, ms, utc};

fn iso(ms: i64) -> String {
    Timestamp::from_millisecond(ms).unwrap().to_string()
}

/// The next `n` runs of `expr` in `tz` after `from`, each counted from the previous one.
fn runs(expr: &str, tz: &str, from: &str, n: usize) -> Vec<String> {
    let schedule = cron(expr, tz);
    let mut after = ms(from);
    let mut out = Vec::new();
    for _ in 0..n {
        match next_run_ms_in(&schedule, after, &utc()).unwrap() {
            Some(next) => {
                out.push(iso(next));
                after = next;
            }
            None => {
                out.push("none".to_string());
                break;
            }
        }
    }
    out
}

/// Asserts each case's next runs: `(expr, tz, from, want)`, where `want` lists the next
/// `want.len()` instants, each counted from the one before (`"none"` once there is none).
fn assert_runs(cases: &[(&str, &str, &str, &[&str])]) {
    for (expr, tz, from, want) in cases {
        assert_eq!(
            runs(expr, tz, from, want.len()),
            *want,
            "{expr:?} in {tz} from {from}"
        );
    }
}

#[test]
fn new_york_daylight_saving_matches_croner_10() {
    assert_runs(&[
        // 2026-03-08: 02:00 EST jumps to 03:00 EDT. 02:30 does not exist and runs as if the
        // clock had not jumped (07:30Z = 03:30 EDT); 02:00 runs at 03:00 EDT.
        (
            "30 2 * * *",
            "America/New_York",
            "2026-03-07T12:00:00Z",
            &[
                "2026-03-08T07:30:00Z",
                "2026-03-09T06:30:00Z",
                "2026-03-10T06:30:00Z",
            ],
        ),
        (
            "0 2 * * *",
            "America/New_York",
            "2026-03-07T12:00:00Z",
            &["2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"],
        ),
        (
            "*/30 * * * *",
            "America/New_York",
            "2026-03-08T06:15:00Z",
            &[
                "2026-03-08T06:30:00Z",
                "2026-03-08T07:00:00Z",
                "2026-03-08T07:30:00Z",
            ],
        ),
        // Already past the gap on the same day: the next 02:30 is tomorrow's.
        (
            "30 2 * * *",
            "America/New_York",
            "2026-03-08T07:00:00Z",
            &["2026-03-09T06:30:00Z"],
        ),
        // 2026-11-01: 02:00 EDT falls back to 01:00 EST. 01:30 happens twice and runs once,
        // at the first (EDT) one.
        (
            "30 1 * * *",
            "America/New_York",
            "2026-10-31T12:00:00Z",
            &[
                "2026-11-01T05:30:00Z",
                "2026-11-02T06:30:00Z",
                "2026-11-03T06:30:00Z",
            ],
        ),
        // An interval expression does not walk the repeated hour again: 01:00 and 01:30 EDT,
        // then 02:00 EST.
        (
            "*/30 * * * *",
            "America/New_York",
            "2026-11-01T04:45:00Z",
            &[
                "2026-11-01T05:00:00Z",
                "2026-11-01T05:30:00Z",
                "2026-11-01T07:00:00Z",
                "2026-11-01T07:30:00Z",
                "2026-11-01T08:00:00Z",
                "2026-11-01T08:30:00Z",
            ],
        ),
    ]);
}

#[test]
fn berlin_daylight_saving_matches_croner_10() {
    assert_runs(&[
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2026-03-28T12:00:00Z",
            &[
                "2026-03-29T01:30:00Z",
                "2026-03-30T00:30:00Z",
                "2026-03-31T00:30:00Z",
            ],
        ),
        (
            "0 2 * * *",
            "Europe/Berlin",
            "2026-03-28T12:00:00Z",
            &["2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"],
        ),
        (
            "0 * * * *",
            "Europe/Berlin",
            "2026-03-28T23:30:00Z",
            &[
                "2026-03-29T00:00:00Z",
                "2026-03-29T01:00:00Z",
                "2026-03-29T02:00:00Z",
                "2026-03-29T03:00:00Z",
            ],
        ),
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET.
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2026-10-24T12:00:00Z",
            &[
                "2026-10-25T00:30:00Z",
                "2026-10-26T01:30:00Z",
                "2026-10-27T01:30:00Z",
            ],
        ),
        (
            "0 3 * * *",
            "Europe/Berlin",
            "2026-10-24T12:00:00Z",
            &["2026-10-25T02:00:00Z", "2026-10-26T02:00:00Z"],
        ),
        (
            "*/30 * * * *",
            "Europe/Berlin",
            "2026-10-24T23:45:00Z",
            &[
                "2026-10-25T00:00:00Z",
                "2026-10-25T00:30:00Z",
                "2026-10-25T02:00:00Z",
                "2026-10-25T02:30:00Z",
                "2026-10-25T03:00:00Z",
                "2026-10-25T03:30:00Z",
            ],
        ),
    ]);
}

#[test]
fn a_reference_inside_the_repeated_hour_never_yields_a_past_run() {
    assert_runs(&[
        // 06:15Z is 01:15 EST, the second pass of 01:xx. croner 10 answers 05:30Z here, an
        // instant already past (OpenClaw then retries from the next UTC day and loses the
        // rest of this one); Pincer answers the first run that lies ahead.
        (
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T06:15:00Z",
            &["2026-11-02T06:30:00Z"],
        ),
        (
            "*/30 * * * *",
            "America/New_York",
            "2026-11-01T06:15:00Z",
            &["2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"],
        ),
    ]);
}

#[test]
fn other_zones_and_odd_transitions_match_croner_10() {
    assert_runs(&[
        (
            "0 9 * * MON-FRI",
            "America/New_York",
            "2026-03-06T15:00:00Z",
            &["2026-03-09T13:00:00Z", "2026-03-10T13:00:00Z"],
        ),
        (
            "0 0 0 * * *",
            "Asia/Kolkata",
            "2026-01-01T00:00:00Z",
            &["2026-01-01T18:30:00Z", "2026-01-02T18:30:00Z"],
        ),
        // Lord Howe moves its clock by 30 minutes (02:00 -> 02:30 on 2026-10-04).
        (
            "0 0 * * *",
            "Australia/Lord_Howe",
            "2026-10-03T00:00:00Z",
            &[
                "2026-10-03T13:30:00Z",
                "2026-10-04T13:00:00Z",
                "2026-10-05T13:00:00Z",
            ],
        ),
        // Santiago skips midnight (00:00 -> 01:00 on 2026-09-06).
        (
            "0 0 * * *",
            "America/Santiago",
            "2026-09-05T00:00:00Z",
            &[
                "2026-09-05T04:00:00Z",
                "2026-09-06T04:00:00Z",
                "2026-09-07T03:00:00Z",
            ],
        ),
    ]);
}

#[test]
fn croner_syntax_matches_croner_10() {
    let from = "2026-01-01T00:00:00Z";
    assert_runs(&[
        // Day-of-month OR day-of-week when both are restricted; `+` makes it AND.
        (
            "0 0 1 * MON",
            "UTC",
            from,
            &[
                "2026-01-05T00:00:00Z",
                "2026-01-12T00:00:00Z",
                "2026-01-19T00:00:00Z",
                "2026-01-26T00:00:00Z",
            ],
        ),
        (
            "0 0 1 * +MON",
            "UTC",
            from,
            &["2026-06-01T00:00:00Z", "2027-02-01T00:00:00Z"],
        ),
        (
            "0 0 L * *",
            "UTC",
            from,
            &["2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z"],
        ),
        (
            "0 12 * * 5#2",
            "UTC",
            from,
            &["2026-01-09T12:00:00Z", "2026-02-13T12:00:00Z"],
        ),
        (
            "0 0 * * 5#L",
            "UTC",
            from,
            &["2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"],
        ),
        (
            "0 0 15W * *",
            "UTC",
            from,
            &["2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z"],
        ),
        ("0 0 29 2 *", "UTC", from, &["2028-02-29T00:00:00Z"]),
        (
            "0 0 31 * *",
            "UTC",
            "2026-01-31T00:00:00Z",
            &["2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z"],
        ),
        ("0 0 * * 7", "UTC", from, &["2026-01-04T00:00:00Z"]),
        (
            "0 12 * JAN,jul sun",
            "UTC",
            from,
            &["2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"],
        ),
        (
            "0 0 * * 1-5/2",
            "UTC",
            from,
            &[
                "2026-01-02T00:00:00Z",
                "2026-01-05T00:00:00Z",
                "2026-01-07T00:00:00Z",
            ],
        ),
        ("@hourly", "UTC", from, &["2026-01-01T01:00:00Z"]),
        (
            "@daily",
            "America/New_York",
            from,
            &["2026-01-01T05:00:00Z"],
        ),
        ("@midnight", "UTC", from, &["2026-01-02T00:00:00Z"]),
        ("@weekly", "UTC", from, &["2026-01-04T00:00:00Z"]),
        (" 0  0 * *  * ", "UTC", from, &["2026-01-02T00:00:00Z"]),
        // Six fields: seconds first. Seven: a year last.
        (
            "*/15 * * * * *",
            "UTC",
            "2026-01-01T00:00:00.500Z",
            &["2026-01-01T00:00:15Z", "2026-01-01T00:00:30Z"],
        ),
        (
            "0 0 1 1 * * 2027",
            "UTC",
            from,
            &["2027-01-01T01:00:00Z", "2027-02-01T01:00:00Z"],
        ),
        // Strictly after the reference, even a millisecond before the next minute.
        ("* * * * *", "UTC", from, &["2026-01-01T00:01:00Z"]),
        (
            "* * * * *",
            "UTC",
            "2026-01-01T00:00:59.999Z",
            &["2026-01-01T00:01:00Z"],
        ),
    ]);
}

#[test]
fn an_expression_that_never_matches_has_no_next_run() {
    assert_runs(&[
        ("0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", &["none"]),
        ("0 0 1 1 * * 2020", "UTC", "2026-01-01T00:00:00Z", &["none"]),
    ]);
}
