//! How `pincer cron` shows jobs, runs and the scheduler's state: times in this machine's
//! zone with a relative hint (`in 59m`, `2h ago`), schedules as the user would type them
//! (`every 1h30m`, `cron 0 9 * * * (Europe/Berlin)`), the `cron list` table, one line per
//! run, and the warnings about a jobs file that could not be read fully.

use jiff::Timestamp;
use pincer_automation::cron::{
    CronJob, CronSchedule, DeliveryMode, RunLogEntry, RunStatus, SessionTarget, parse_absolute_ms,
};
use serde_json::Value;

/// `2026-05-01 09:00 CEST` in this machine's zone; the raw number if out of range.
pub fn local_time(ms: i64) -> String {
    local_time_as(ms, "%Y-%m-%d %H:%M %Z")
}

/// `ms` in this machine's zone as `format` (strftime); the raw number if out of range.
pub fn local_time_as(ms: i64, format: &str) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(ts) => ts
            .to_zoned(pincer_automation::cron::local_time_zone())
            .strftime(format)
            .to_string(),
        Err(_) => format!("{ms} ms"),
    }
}

/// `in 59m`, `2h 5m ago`, `now`: whole units, rounded down, so `in 59m` means less than an
/// hour is left.
pub fn relative(ms: i64, now_ms: i64) -> String {
    let diff = ms.saturating_sub(now_ms);
    let span = span_text(diff.unsigned_abs());
    match span {
        None => "now".to_owned(),
        Some(span) if diff > 0 => format!("in {span}"),
        Some(span) => format!("{span} ago"),
    }
}

/// `45s`, `59m`, `2h 5m`, `3d 4h`: the two largest units; `None` under a second.
fn span_text(ms: u64) -> Option<String> {
    let secs = ms / 1000;
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let pair = |big: u64, big_unit: &str, small: u64, small_unit: &str| {
        if small == 0 {
            format!("{big}{big_unit}")
        } else {
            format!("{big}{big_unit} {small}{small_unit}")
        }
    };
    Some(if d > 0 {
        pair(d, "d", h, "h")
    } else if h > 0 {
        pair(h, "h", m, "m")
    } else if m > 0 {
        format!("{m}m")
    } else if s > 0 {
        format!("{s}s")
    } else {
        return None;
    })
}

/// A time and its distance from now: `2026-05-01 09:00 CEST (in 59m)`.
pub fn when(ms: i64, now_ms: i64) -> String {
    format!("{} ({})", local_time(ms), relative(ms, now_ms))
}

/// An interval as `--every` takes it: `1h30m`, `30s`, `2d`, `250ms`.
pub fn duration_text(ms: i64) -> String {
    if ms <= 0 || ms % 1000 != 0 {
        return format!("{ms}ms");
    }
    let mut rest = ms / 1000;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

/// `every 1h`, `cron 0 9 * * * (Europe/Berlin)`, `at 2026-05-01 09:00 CEST`.
pub fn schedule_text(schedule: &CronSchedule) -> String {
    match schedule {
        CronSchedule::Every(every) => format!("every {}", duration_text(every.every_ms)),
        CronSchedule::Cron(cron) => match &cron.tz {
            Some(tz) => format!("cron {} ({tz})", cron.expr),
            None => format!("cron {}", cron.expr),
        },
        CronSchedule::At(at) => match parse_absolute_ms(&at.at) {
            Some(ms) => format!("at {}", local_time(ms)),
            None => format!("at {}", at.at),
        },
    }
}

/// Where a job's run goes: `main`, `isolated → announce`, `isolated → telegram:123`,
/// `isolated → webhook https://…`, `isolated (no delivery)`; the agent when not the default.
pub fn target_text(job: &CronJob) -> String {
    let target = match job.session_target {
        SessionTarget::Main => "main".to_owned(),
        SessionTarget::Isolated => match &job.delivery {
            None => "isolated".to_owned(),
            Some(d) => match d.mode {
                DeliveryMode::None => "isolated (no delivery)".to_owned(),
                DeliveryMode::Webhook => {
                    format!("isolated → webhook {}", d.to.as_deref().unwrap_or("?"))
                }
                DeliveryMode::Announce => match (&d.channel, &d.to) {
                    (Some(channel), Some(to)) => format!("isolated → {channel}:{to}"),
                    (Some(channel), None) => format!("isolated → {channel}"),
                    (None, Some(to)) => format!("isolated → {to}"),
                    (None, None) => "isolated → announce".to_owned(),
                },
            },
        },
    };
    match &job.agent_id {
        Some(agent) => format!("{target} [agent {agent}]"),
        None => target,
    }
}

/// A job's next run as `cron add` / `cron edit` report it: when, `none (disabled)` or
/// `none`.
pub fn next_run_text(job: &CronJob, now_ms: i64) -> String {
    match job.state.next_run_at_ms {
        Some(ms) if job.enabled => when(ms, now_ms),
        _ if !job.enabled => "none (disabled)".to_owned(),
        _ => "none".to_owned(),
    }
}

/// The `cron list` table.
pub fn jobs_table(jobs: &[CronJob], now_ms: i64) -> String {
    let header = ["ID", "NAME", "SCHEDULE", "NEXT", "LAST", "TARGET"].map(str::to_owned);
    let mut rows = vec![header];
    for job in jobs {
        let next = if !job.enabled {
            "disabled".to_owned()
        } else if job.state.running_at_ms.is_some() {
            "running".to_owned()
        } else {
            job.state
                .next_run_at_ms
                .map_or_else(|| "-".to_owned(), |ms| relative(ms, now_ms))
        };
        let last = match (
            job.state.last_run_status.or(job.state.last_status),
            job.state.last_run_at_ms,
        ) {
            (Some(status), Some(at)) => format!("{} {}", status.as_str(), relative(at, now_ms)),
            (Some(status), None) => status.as_str().to_owned(),
            (None, Some(at)) => relative(at, now_ms),
            (None, None) => "-".to_owned(),
        };
        rows.push([
            job.id.chars().take(8).collect(),
            truncate(&job.name, 32),
            schedule_text(&job.schedule),
            next,
            last,
            target_text(job),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[col] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One run: `2026-05-01 09:00 CEST  ok     3.2s  <summary or error>  (delivered)`.
pub fn run_line(entry: &RunLogEntry) -> String {
    let at = local_time(entry.run_at_ms.unwrap_or(entry.ts));
    let status = entry.status.map_or("-", RunStatus::as_str);
    let took = entry.duration_ms.map_or_else(
        || "-".to_owned(),
        |ms| format!("{}.{}s", ms / 1000, ms % 1000 / 100),
    );
    let text = match (entry.status, &entry.error, &entry.summary) {
        (Some(RunStatus::Error), Some(error), _) => error.clone(),
        (_, _, Some(summary)) => summary.clone(),
        (_, Some(error), None) => error.clone(),
        (_, None, None) => String::new(),
    };
    let mut line = format!("{at}  {status:<7}  {took:>6}  {}", one_line(&text, 100));
    let delivery = entry.delivery_status.clone().or(match entry.delivered {
        Some(true) => Some("delivered".to_owned()),
        Some(false) => Some("not-delivered".to_owned()),
        None => None,
    });
    if let Some(delivery) = delivery {
        line.push_str(&format!("  ({delivery}"));
        if let Some(error) = &entry.delivery_error {
            line.push_str(&format!(": {}", one_line(error, 80)));
        }
        line.push(')');
    }
    line.trim_end().to_owned()
}

/// `cron status` as text.
pub fn status_text(status: &Value, now_ms: i64) -> String {
    let enabled = status["enabled"].as_bool().unwrap_or(true);
    let mut out = format!(
        "cron: {}\n",
        if enabled {
            "enabled"
        } else {
            "disabled (cron.enabled is false: jobs are kept but none runs)"
        }
    );
    let jobs = status["jobs"].as_u64().unwrap_or(0);
    out.push_str(&format!("jobs: {jobs}\n"));
    if let Some(path) = status["storePath"].as_str() {
        out.push_str(&format!("file: {path}\n"));
    }
    match status["nextWakeAtMs"].as_i64() {
        Some(ms) => out.push_str(&format!("next run: {}\n", when(ms, now_ms))),
        None => out.push_str("next run: none\n"),
    }
    out
}

/// What is wrong with the jobs file, from a `cron.status` (or `cron.list`) answer, as
/// warnings that say what to do.
pub fn store_warnings(status: &Value) -> Vec<String> {
    let path = status["storePath"].as_str().unwrap_or("the jobs file");
    let mut warnings = Vec::new();
    if let Some(error) = status["loadError"].as_str() {
        warnings.push(format!(
            "the cron jobs could not be loaded: {error}\n  No job runs until this is fixed: \
             repair the file that was kept aside and move it back to {path} while the gateway \
             is stopped (or add the jobs again)."
        ));
    }
    for bad in status["unreadable"].as_array().into_iter().flatten() {
        let index = bad["index"]
            .as_u64()
            .map_or("?".to_owned(), |i| i.to_string());
        let error = bad["error"].as_str().unwrap_or("unknown error");
        let (name, fix) = match bad["id"].as_str() {
            Some(id) => (
                format!("job {id} (#{index})"),
                format!("fix it in the file, or remove it with `pincer cron remove {id}`"),
            ),
            None => (
                format!("job #{index}"),
                "fix or delete it in the file".to_owned(),
            ),
        };
        warnings.push(format!(
            "{name} in {path} cannot be used and does not run: {error}\n  It is kept as it \
             is; {fix}."
        ));
    }
    warnings
}

/// The first line of `text`, at most `max` characters (`…` marks a cut).
pub fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let more = text.trim().lines().count() > 1;
    let cut = truncate(first.trim(), max);
    if more && !cut.ends_with('…') {
        format!("{cut} …")
    } else {
        cut
    }
}

/// At most `max` characters of `text`, whitespace collapsed; `…` marks a cut.
pub fn truncate(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    // End on a whole word when one ends in the second half: `what…`, not `what nee…`.
    let mid_word = text
        .chars()
        .nth(cut.chars().count())
        .is_some_and(|c| c != ' ');
    if let Some(space) = cut.rfind(' ').filter(|i| mid_word && *i >= cut.len() / 2) {
        cut.truncate(space);
    }
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times_round_down() {
        let now = 1_000_000_000;
        assert_eq!(relative(now + 3_599_000, now), "in 59m");
        assert_eq!(relative(now + 3_600_000, now), "in 1h");
        assert_eq!(relative(now + 5_400_000, now), "in 1h 30m");
        assert_eq!(relative(now - 2 * 86_400_000 - 3_600_000, now), "2d 1h ago");
        assert_eq!(relative(now + 45_000, now), "in 45s");
        assert_eq!(relative(now + 400, now), "now");
    }

    #[test]
    fn durations_as_typed() {
        assert_eq!(duration_text(3_600_000), "1h");
        assert_eq!(duration_text(5_400_000), "1h30m");
        assert_eq!(duration_text(30_000), "30s");
        assert_eq!(duration_text(2 * 86_400_000), "2d");
        assert_eq!(duration_text(250), "250ms");
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate("short  text", 40), "short text");
        assert_eq!(truncate("abcdefghij", 5), "abcd…");
        assert_eq!(truncate("one two three", 10), "one two…");
        assert_eq!(one_line("first\nsecond", 40), "first …");
    }
}
