//! The protocol's cron methods, in OpenClaw's shapes (`src/gateway/server-methods/cron.ts`):
//! `cron.status`, `cron.list {includeDisabled?}`, `cron.add <CronJobCreate>`,
//! `cron.update {id|jobId, patch}`, `cron.remove {id|jobId}`, `cron.run {id|jobId,
//! mode?: "due"|"force"}` (answers once the run ended) and `cron.runs {id|jobId, limit?}`.
//! Scopes are checked by the dispatcher in `methods.rs`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Gateway;
use super::frames::{MethodError, opt_str_param, opt_u64_param};
use crate::cron::{CronService, CronServiceError, NewCronJob};

/// Most run log entries one `cron.runs` returns.
const MAX_RUNS: u64 = 500;

/// Answers `method` (a `cron.*` name).
pub(super) async fn call(gw: &Gateway, method: &str, p: &Value) -> Result<Value, MethodError> {
    let Some(cron) = gw.cron.as_ref() else {
        return Err(MethodError::unavailable(
            "cron is not available on this gateway",
        ));
    };
    match method {
        "cron.status" => Ok(cron.status().to_json()),
        "cron.list" => {
            let include_disabled = match p.get("includeDisabled") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(MethodError::invalid("includeDisabled must be a boolean")),
            };
            let mut out = json!({ "jobs": cron.list(include_disabled) });
            if let Some(error) = cron.load_error() {
                out["loadError"] = json!(error);
            }
            Ok(out)
        }
        "cron.add" => {
            let input: NewCronJob = serde_json::from_value(p.clone())
                .map_err(|e| MethodError::invalid(format!("invalid cron job: {e}")))?;
            Ok(json!(cron.add(input).map_err(refused)?))
        }
        "cron.update" => {
            let id = job_id(p)?;
            let Some(patch) = p.get("patch").filter(|v| v.is_object()) else {
                return Err(MethodError::invalid(
                    "patch must be an object of job fields",
                ));
            };
            Ok(json!(cron.update(id, patch).map_err(refused)?))
        }
        "cron.remove" => {
            let removed = cron.remove(job_id(p)?).map_err(refused)?;
            Ok(json!({ "ok": true, "removed": removed }))
        }
        "cron.run" => {
            let force = match opt_str_param(p, "mode")? {
                None | Some("force") => true,
                Some("due") => false,
                Some(_) => return Err(MethodError::invalid("mode must be due or force")),
            };
            let ran = run(cron, job_id(p)?, force).await?;
            let mut out = json!({ "ok": true, "ran": ran.ran });
            if let Some(reason) = ran.reason {
                out["reason"] = json!(reason);
            }
            Ok(out)
        }
        "cron.runs" => {
            let limit = opt_u64_param(p, "limit")?.unwrap_or(50).clamp(1, MAX_RUNS);
            let entries = cron
                .runs(job_id(p)?, usize::try_from(limit).unwrap_or(50))
                .map_err(refused)?;
            Ok(json!({ "entries": entries }))
        }
        _ => Err(MethodError::invalid(format!("unknown method: {method}"))),
    }
}

async fn run(
    cron: &Arc<CronService>,
    id: &str,
    force: bool,
) -> Result<crate::cron::service::RunNow, MethodError> {
    cron.run_now(id, force).await.map_err(refused)
}

/// `id`, or OpenClaw's older `jobId`.
fn job_id(p: &Value) -> Result<&str, MethodError> {
    match (opt_str_param(p, "id")?, opt_str_param(p, "jobId")?) {
        (Some(id), _) | (None, Some(id)) if !id.trim().is_empty() => Ok(id.trim()),
        _ => Err(MethodError::invalid("missing parameter id")),
    }
}

fn refused(e: CronServiceError) -> MethodError {
    match e {
        CronServiceError::NotRunning | CronServiceError::Store(_) => {
            MethodError::unavailable(e.to_string())
        }
        e => MethodError::invalid(e.to_string()),
    }
}
