//! The protocol's cron methods, in OpenClaw's shapes (`src/gateway/server-methods/cron.ts`):
//! `cron.status`, `cron.list {includeDisabled?, limit?, offset?}` (a page, with OpenClaw's
//! `snapshotRevision`, `total`, `hasMore`, `nextOffset`), `cron.add <CronJobCreate>`,
//! `cron.update {id|jobId, patch}`, `cron.remove {id|jobId}`, `cron.run {id|jobId,
//! mode?: "due"|"force"}` (answers once the run ended) and `cron.runs {id|jobId, limit?}`
//! (without a job: every job's runs as one page, `cron_history`).
//! Scopes are checked by the dispatcher in `mod.rs`; a gateway without cron says so before
//! any parameter is read.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::blocking;
use super::cron_history::{self, HistoryFilter, MAX_PAGE};
use super::params::parse;
use super::{Method, payload};
use pincer_automation::cron::{CronJob, CronServiceError, NewCronJob, RunLogEntry};

/// Most run log entries one `cron.runs` returns.
const MAX_RUNS: u64 = 500;

/// The params of `cron.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronListParams {
    include_disabled: Option<bool>,
    /// At most this many jobs (1 to 1000; all when absent), from `offset` (default 0): the
    /// Control UI's Automations page asks page by page.
    limit: Option<u64>,
    offset: Option<u64>,
}

/// Most jobs one `cron.list` page holds.
const MAX_LIST_PAGE: u64 = 1000;

/// One page of jobs, in OpenClaw's inventory shape: `total` jobs in all, `snapshotRevision`
/// changes when any of them does, `nextOffset` is where the next page starts (`null` on the
/// last).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CronListResponse {
    jobs: Vec<CronJob>,
    snapshot_revision: String,
    total: usize,
    offset: usize,
    limit: usize,
    has_more: bool,
    next_offset: Option<usize>,
    /// Why the job file could not be read (the list is then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    load_error: Option<String>,
}

impl CronListResponse {
    /// The page of `all` that `params` asks for.
    fn page(all: Vec<CronJob>, params: &CronListParams, load_error: Option<String>) -> Self {
        use base64::Engine as _;
        use sha2::Digest as _;
        let revision = sha2::Sha256::digest(serde_json::to_vec(&all).unwrap_or_default());
        let total = all.len();
        let offset = usize::try_from(params.offset.unwrap_or(0)).unwrap_or(usize::MAX);
        let limit = match params.limit {
            Some(limit) => usize::try_from(limit.clamp(1, MAX_LIST_PAGE)).unwrap_or(1),
            None => total.max(1),
        };
        let jobs: Vec<CronJob> = all.into_iter().skip(offset).take(limit).collect();
        let end = offset.saturating_add(jobs.len());
        let has_more = end < total;
        Self {
            jobs,
            snapshot_revision: format!(
                "sha256:{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(revision)
            ),
            total,
            offset,
            limit,
            has_more,
            next_offset: has_more.then_some(end),
            load_error,
        }
    }
}

/// A job named by `id`, or OpenClaw's older `jobId` (`cron.remove`).
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronJobParams {
    id: Option<String>,
    job_id: Option<String>,
}

impl CronJobParams {
    /// `id`, else `jobId`, trimmed.
    fn id(&self) -> Result<&str, MethodError> {
        match (self.id.as_deref(), self.job_id.as_deref()) {
            (Some(id), _) | (None, Some(id)) if !id.trim().is_empty() => Ok(id.trim()),
            _ => Err(MethodError::invalid("missing parameter id")),
        }
    }
}

/// The params of `cron.update`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronUpdateParams {
    id: Option<String>,
    job_id: Option<String>,
    /// The job fields to change.
    patch: Option<Value>,
}

/// How `cron.run` runs a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(rename_all = "lowercase")]
pub(crate) enum CronRunMode {
    /// Only when it is due.
    Due,
    /// Now (the default).
    Force,
}

impl<'de> Deserialize<'de> for CronRunMode {
    /// A non-string is told it must be a string, a wrong name the names there are.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "due" => Ok(Self::Due),
            "force" => Ok(Self::Force),
            _ => Err(serde::de::Error::custom("mode must be due or force")),
        }
    }
}

/// The params of `cron.run`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronRunParams {
    mode: Option<CronRunMode>,
    id: Option<String>,
    job_id: Option<String>,
}

#[derive(Serialize)]
struct CronRunResponse {
    ok: bool,
    ran: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

/// The params of `cron.runs`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CronRunsParams {
    /// At most this many entries (default 50; 1 to 500 of one job, 1 to 200 of all).
    limit: Option<u64>,
    /// The job (without one, every job's runs: `scope: "all"`).
    id: Option<String>,
    job_id: Option<String>,
    #[serde(flatten)]
    history: HistoryFilter,
}

#[derive(Serialize)]
struct CronRunsResponse {
    entries: Vec<RunLogEntry>,
}

#[derive(Serialize)]
struct CronRemoveResponse {
    ok: bool,
    removed: bool,
}

/// Answers `method` (a `cron.*` one).
pub(super) async fn call(gw: &Gateway, method: Method, p: &Value) -> Result<Value, MethodError> {
    let Some(cron) = gw.cron.as_ref() else {
        return Err(MethodError::unavailable(
            "cron is not available on this gateway",
        ));
    };
    match method {
        Method::CronStatus => Ok(cron.status().to_json()),
        Method::CronList => {
            let params: CronListParams = parse(p)?;
            payload(CronListResponse::page(
                cron.list(params.include_disabled.unwrap_or(false)),
                &params,
                cron.load_error().map(str::to_owned),
            ))
        }
        Method::CronAdd => {
            // The job's own schema, with serde's messages (OpenClaw's CronJobCreate).
            let input: NewCronJob = serde_json::from_value(p.clone())
                .map_err(|e| MethodError::invalid(format!("invalid cron job: {e}")))?;
            payload(
                cron.blocking(move |c| blocking::cron_add(c, input))
                    .await
                    .map_err(refused)?,
            )
        }
        Method::CronUpdate => {
            let params: CronUpdateParams = parse(p)?;
            let job = CronJobParams {
                id: params.id,
                job_id: params.job_id,
            };
            let id = job.id()?;
            let Some(patch) = params.patch.filter(Value::is_object) else {
                return Err(MethodError::invalid(
                    "patch must be an object of job fields",
                ));
            };
            let id = id.to_owned();
            payload(
                cron.blocking(move |c| blocking::cron_update(c, &id, &patch))
                    .await
                    .map_err(refused)?,
            )
        }
        Method::CronRemove => {
            let params: CronJobParams = parse(p)?;
            let id = params.id()?.to_owned();
            let removed = cron
                .blocking(move |c| blocking::cron_remove(c, &id))
                .await
                .map_err(refused)?;
            payload(CronRemoveResponse { ok: true, removed })
        }
        Method::CronRun => {
            let params: CronRunParams = parse(p)?;
            let force = match params.mode {
                None | Some(CronRunMode::Force) => true,
                Some(CronRunMode::Due) => false,
            };
            let job = CronJobParams {
                id: params.id,
                job_id: params.job_id,
            };
            let ran = cron.run_now(job.id()?, force).await.map_err(refused)?;
            payload(CronRunResponse {
                ok: true,
                ran: ran.ran,
                reason: ran.reason,
            })
        }
        Method::CronRuns => {
            let params: CronRunsParams = parse(p)?;
            let all = match params.history.scope.as_deref() {
                Some("all") => true,
                Some("job") => false,
                _ => params.id.is_none() && params.job_id.is_none(),
            };
            if all {
                let limit = usize::try_from(params.limit.unwrap_or(50)).unwrap_or(MAX_PAGE);
                let agent = params.history.agent_id.clone();
                let default_agent = gw.runtime.default_agent_id();
                let runs = cron
                    .blocking(move |c| {
                        blocking::cron_runs_of_all(c, agent.as_deref(), &default_agent)
                    })
                    .await
                    .map_err(refused)?;
                return payload(cron_history::page(runs, &params.history, limit));
            }
            let limit = params.limit.unwrap_or(50).clamp(1, MAX_RUNS);
            let job = CronJobParams {
                id: params.id,
                job_id: params.job_id,
            };
            let (id, limit) = (job.id()?.to_owned(), usize::try_from(limit).unwrap_or(50));
            let entries = cron
                .blocking(move |c| blocking::cron_runs(c, &id, limit))
                .await
                .map_err(refused)?;
            payload(CronRunsResponse { entries })
        }
        other => Err(MethodError::invalid(format!(
            "unknown method: {}",
            other.name()
        ))),
    }
}

fn refused(e: CronServiceError) -> MethodError {
    match e {
        CronServiceError::NotRunning | CronServiceError::Store(_) | CronServiceError::Task(_) => {
            MethodError::unavailable(e.to_string())
        }
        e => MethodError::invalid(e.to_string()),
    }
}
