//! `cron.runs` without a job (`scope: "all"`, what the Control UI's Automations page asks
//! for): every job's runs in one page, as OpenClaw pages its run history — filtered by
//! status, delivery status, run id and a text query, sorted by time (newest first unless
//! `sortDir: "asc"`), cut at `offset`/`limit` (1 to 200), each entry named by its job.

use pincer_automation::cron::RunLogEntry;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most entries one page holds (OpenClaw's cap).
pub(super) const MAX_PAGE: usize = 200;

/// What narrows the history (the params of `cron.runs` other than the job).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistoryFilter {
    /// `job` (one job's runs, the default with an id) or `all`.
    pub scope: Option<String>,
    /// Only the jobs of this agent.
    pub agent_id: Option<String>,
    /// Entries to skip (default 0).
    pub offset: Option<u64>,
    /// `ok`, `error`, `skipped`: any of these.
    pub statuses: Option<Vec<String>>,
    pub status: Option<String>,
    /// `delivered`, `not-delivered`, `unknown`, `not-requested`: any of these.
    pub delivery_statuses: Option<Vec<String>>,
    pub delivery_status: Option<String>,
    pub run_id: Option<String>,
    /// Text the job's name, id, summary or error contains (any case).
    pub query: Option<String>,
    /// `asc` (oldest first) or `desc` (the default).
    pub sort_dir: Option<String>,
}

/// One page of run history.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct HistoryPage {
    entries: Vec<Value>,
    total: usize,
    offset: usize,
    limit: usize,
    has_more: bool,
    next_offset: Option<usize>,
}

/// The page of `runs` (each with its job's name) that `filter` selects.
pub(super) fn page(
    runs: Vec<(RunLogEntry, String)>,
    filter: &HistoryFilter,
    limit: usize,
) -> HistoryPage {
    let statuses = either(filter.statuses.as_deref(), filter.status.as_deref());
    let deliveries = either(
        filter.delivery_statuses.as_deref(),
        filter.delivery_status.as_deref(),
    );
    let query = filter
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_lowercase);
    let mut rows: Vec<(RunLogEntry, String)> =
        runs.into_iter()
            .filter(|(entry, name)| {
                let status = entry.status.map(|s| s.as_str());
                let delivery = entry.delivery_status.as_deref().unwrap_or("not-requested");
                statuses
                    .as_ref()
                    .is_none_or(|want| status.is_some_and(|s| want.iter().any(|w| w == s)))
                    && deliveries
                        .as_ref()
                        .is_none_or(|want| want.iter().any(|w| w == delivery))
                    && filter.run_id.as_deref().is_none_or(|id| {
                        entry.extra.get("runId").and_then(Value::as_str) == Some(id)
                    })
                    && query
                        .as_deref()
                        .is_none_or(|q| searchable(entry, name).contains(q))
            })
            .collect();
    // Stable: runs written at the same millisecond keep their order.
    rows.sort_by_key(|(entry, _)| entry.ts);
    if filter.sort_dir.as_deref() != Some("asc") {
        rows.reverse();
    }
    let total = rows.len();
    let limit = limit.clamp(1, MAX_PAGE);
    let offset = usize::try_from(filter.offset.unwrap_or(0))
        .unwrap_or(usize::MAX)
        .min(total);
    let entries: Vec<Value> = rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(entry, name)| named(entry, name))
        .collect();
    let next = offset + entries.len();
    HistoryPage {
        entries,
        total,
        offset,
        limit,
        has_more: next < total,
        next_offset: (next < total).then_some(next),
    }
}

/// A list filter given as a list or as one value; `None` (no filter) when neither is.
fn either(many: Option<&[String]>, one: Option<&str>) -> Option<Vec<String>> {
    let mut all: Vec<String> = many.unwrap_or_default().to_vec();
    all.extend(one.map(str::to_owned));
    (!all.is_empty()).then_some(all)
}

/// What a query is matched against, lower-cased.
fn searchable(entry: &RunLogEntry, name: &str) -> String {
    [
        Some(name),
        Some(entry.job_id.as_str()),
        entry.summary.as_deref(),
        entry.error.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
    .to_lowercase()
}

/// The entry as the wire shows it, with `jobName`.
fn named(entry: RunLogEntry, name: String) -> Value {
    let mut value = serde_json::to_value(entry).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value
        && !name.is_empty()
    {
        map.insert("jobName".into(), Value::String(name));
    }
    value
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pincer_automation::cron::RunStatus;
    use serde_json::json;

    fn run(job: &str, ts: i64, status: RunStatus, summary: &str) -> (RunLogEntry, String) {
        let mut entry = RunLogEntry::finished(job, ts, status);
        entry.summary = Some(summary.into());
        (entry, format!("Job {job}"))
    }

    fn runs() -> Vec<(RunLogEntry, String)> {
        vec![
            run("a", 10, RunStatus::Ok, "first"),
            run("b", 30, RunStatus::Error, "broke"),
            run("a", 20, RunStatus::Ok, "second"),
        ]
    }

    fn summaries(page: &HistoryPage) -> Vec<&str> {
        page.entries
            .iter()
            .map(|e| e["summary"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn every_jobs_runs_newest_first_with_their_job_names() {
        let page = page(runs(), &HistoryFilter::default(), 50);
        assert_eq!(summaries(&page), ["broke", "second", "first"]);
        assert_eq!(page.entries[0]["jobName"], "Job b");
        assert_eq!(
            (
                page.total,
                page.offset,
                page.limit,
                page.has_more,
                page.next_offset
            ),
            (3, 0, 50, false, None)
        );
    }

    #[test]
    fn pages_filters_and_order() {
        let filter = |value: Value| serde_json::from_value::<HistoryFilter>(value).unwrap();
        let first = page(runs(), &filter(json!({"sortDir": "asc"})), 2);
        assert_eq!(summaries(&first), ["first", "second"]);
        assert_eq!((first.has_more, first.next_offset), (true, Some(2)));
        let rest = page(runs(), &filter(json!({"sortDir": "asc", "offset": 2})), 2);
        assert_eq!(summaries(&rest), ["broke"]);
        assert_eq!((rest.has_more, rest.next_offset), (false, None));

        let failed = page(runs(), &filter(json!({"statuses": ["error"]})), 50);
        assert_eq!(summaries(&failed), ["broke"]);
        let ok = page(runs(), &filter(json!({"status": "ok"})), 50);
        assert_eq!(summaries(&ok), ["second", "first"]);
        let by_name = page(runs(), &filter(json!({"query": " JOB A "})), 50);
        assert_eq!(summaries(&by_name), ["second", "first"]);
        let undelivered = page(runs(), &filter(json!({"deliveryStatus": "delivered"})), 50);
        assert_eq!(undelivered.total, 0);
        let past_the_end = page(runs(), &filter(json!({"offset": 9})), 50);
        assert_eq!((past_the_end.offset, past_the_end.entries.len()), (3, 0));
    }
}
