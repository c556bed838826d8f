//! The agent's `cron` tool (OpenClaw's `cron` agent tool): an agent schedules reminders and
//! tasks for itself and manages them — `status`, `list`, `add`, `update`, `remove`, `run`,
//! `runs` — through the gateway's [`CronService`].
//!
//! An agent sees and changes only its own jobs (`agentId` equal to its id, or unset, which
//! the gateway treats as the default agent's); `add` stamps the calling agent on a job that
//! names none. Results are pretty JSON the model reads, with the same value as details.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::job::CronJob;
use super::service::{CronService, CronServiceError};
use super::validate::NewCronJob;

/// Run history entries `runs` returns when `limit` is not given.
const DEFAULT_RUNS_LIMIT: usize = 20;
/// The most run history entries `runs` returns.
const MAX_RUNS_LIMIT: usize = 500;

const DESCRIPTION: &str = "Manage your scheduled jobs (reminders and recurring tasks). \
Actions: status; list (includeDisabled?); add (job); update (jobId, patch: the job fields to \
change); remove (jobId); run (jobId, force? default true: run now even if not due); runs \
(jobId, limit?: the last runs). \
A job is {name, schedule, payload, sessionTarget?, wakeMode?, delivery?, deleteAfterRun?, \
enabled?, description?}. \
Payload kinds: {kind:\"systemEvent\", text} puts the text in your main session as a \
reminder (sessionTarget \"main\"); {kind:\"agentTurn\", message, model?} runs an isolated \
task in its own session and announces the reply (sessionTarget \"isolated\"). \
Schedule kinds: {kind:\"at\", at:\"20m\" or an ISO 8601 time} runs once (deleted after a \
successful run unless deleteAfterRun is false); {kind:\"every\", everyMs} repeats at a fixed \
interval; {kind:\"cron\", expr:\"0 9 * * 1-5\", tz?:\"Europe/Berlin\"} follows a cron \
expression.";

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CronAction {
    Status,
    List,
    Add,
    Update,
    Remove,
    Run,
    Runs,
}

/// The `cron` tool's arguments (OpenClaw's cron tool parameters).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronToolArgs {
    pub action: CronAction,
    /// The new job (add).
    #[serde(default)]
    pub job: Option<NewCronJob>,
    /// The job's id (update, remove, run, runs).
    #[serde(default, alias = "id")]
    pub job_id: Option<String>,
    /// The job fields to change, e.g. {"enabled": false} or {"schedule": {"kind": "every",
    /// "everyMs": 3600000}} (update).
    #[serde(default)]
    pub patch: Option<Value>,
    /// Also list disabled jobs (list).
    #[serde(default)]
    pub include_disabled: Option<bool>,
    /// How many of the last runs to return (runs; default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Run even when the job is not due (run; default true).
    #[serde(default)]
    pub force: Option<bool>,
}

/// The `cron` tool of agent `agent_id`.
pub fn cron_tool(service: Arc<CronService>, agent_id: String) -> Arc<dyn AgentTool> {
    typed(CronTool { service, agent_id })
}

struct CronTool {
    service: Arc<CronService>,
    agent_id: String,
}

impl TypedTool for CronTool {
    type Args = CronToolArgs;

    const NAME: &'static str = "cron";
    const DESCRIPTION: &'static str = DESCRIPTION;

    async fn run(&self, args: CronToolArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let result = match args.action {
            CronAction::Status => self.service.status().to_json(),
            CronAction::List => self.list(args.include_disabled.unwrap_or(false))?,
            CronAction::Add => self.add(args.job).await?,
            CronAction::Update => {
                let id = self.own_job_id(args.job_id.as_deref(), "update")?;
                let patch = args.patch.ok_or_else(|| {
                    ToolError::failed("update needs `patch`: an object of the job fields to change")
                })?;
                #[expect(clippy::disallowed_methods, reason = "inside CronService::blocking")]
                let job = self
                    .service
                    .blocking(move |s| s.update(&id, &patch))
                    .await
                    .map_err(failed)?;
                to_json(&job)?
            }
            CronAction::Remove => {
                let id = self.own_job_id(args.job_id.as_deref(), "remove")?;
                let removed_id = id.clone();
                #[expect(clippy::disallowed_methods, reason = "inside CronService::blocking")]
                let removed = self
                    .service
                    .blocking(move |s| s.remove(&removed_id))
                    .await
                    .map_err(failed)?;
                json!({"id": id, "removed": removed})
            }
            CronAction::Run => {
                let id = self.own_job_id(args.job_id.as_deref(), "run")?;
                let force = args.force.unwrap_or(true);
                let run = tokio::select! {
                    () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
                    run = self.service.run_now(&id, force) => run.map_err(failed)?,
                };
                let mut out = to_json(&run)?;
                if let (Some(job), Some(map)) = (self.service.get(&id), out.as_object_mut()) {
                    map.insert("job".into(), to_json(&job)?);
                }
                out
            }
            CronAction::Runs => {
                let id = self.own_job_id(args.job_id.as_deref(), "runs")?;
                let limit = args
                    .limit
                    .unwrap_or(DEFAULT_RUNS_LIMIT)
                    .clamp(1, MAX_RUNS_LIMIT);
                let runs_id = id.clone();
                #[expect(clippy::disallowed_methods, reason = "inside CronService::blocking")]
                let entries = self
                    .service
                    .blocking(move |s| s.runs(&runs_id, limit))
                    .await
                    .map_err(failed)?;
                json!({"id": id, "entries": to_json(&entries)?})
            }
        };
        let text = serde_json::to_string_pretty(&result).unwrap_or_else(|_| result.to_string());
        Ok(ToolOutput::text(text).with_details(result))
    }
}

impl CronTool {
    fn list(&self, include_disabled: bool) -> Result<Value, ToolError> {
        let jobs: Vec<CronJob> = self
            .service
            .list(include_disabled)
            .into_iter()
            .filter(|job| self.owns(job))
            .collect();
        let mut out = json!({"jobs": to_json(&jobs)?});
        if let (Some(error), Some(map)) = (self.service.load_error(), out.as_object_mut()) {
            map.insert("loadError".into(), Value::from(error));
        }
        Ok(out)
    }

    async fn add(&self, job: Option<NewCronJob>) -> Result<Value, ToolError> {
        let mut job =
            job.ok_or_else(|| ToolError::failed("add needs `job`: {name, schedule, payload, …}"))?;
        if job
            .agent_id
            .as_deref()
            .is_none_or(|id| id.trim().is_empty())
        {
            job.agent_id = Some(self.agent_id.clone());
        }
        #[expect(clippy::disallowed_methods, reason = "inside CronService::blocking")]
        let added = self
            .service
            .blocking(move |s| s.add(job))
            .await
            .map_err(failed)?;
        to_json(&added)
    }

    /// `job_id` when it names a job of this agent; another agent's job is "not found".
    fn own_job_id(&self, job_id: Option<&str>, action: &str) -> Result<String, ToolError> {
        let id = job_id
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| ToolError::failed(format!("{action} needs `jobId`")))?;
        match self.service.get(id) {
            Some(job) if self.owns(&job) => Ok(id.to_string()),
            _ => Err(failed(CronServiceError::NotFound { id: id.to_string() })),
        }
    }

    fn owns(&self, job: &CronJob) -> bool {
        job.agent_id.as_deref().is_none_or(|id| id == self.agent_id)
    }
}

fn failed(e: CronServiceError) -> ToolError {
    ToolError::Failed(e.to_string())
}

fn to_json(value: &impl serde::Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::failed(format!("cannot show the result: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods, reason = "tests call the service directly")]
    use super::*;
    use crate::cron::{CronExecutor, CronRunOutput, CronSettings};
    use crate::system_events::ManualClock;
    use futures_util::future::BoxFuture;
    use jiff::tz::TimeZone;
    use tokio_util::sync::CancellationToken;

    const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    struct Quiet;

    impl CronExecutor for Quiet {
        fn enqueue_main(&self, _job: &CronJob, _text: &str) -> Result<(), String> {
            Ok(())
        }
        fn run_isolated(&self, _job: CronJob) -> BoxFuture<'static, CronRunOutput> {
            Box::pin(async { CronRunOutput::ok("done") })
        }
    }

    fn service(dir: &tempfile::TempDir) -> Arc<CronService> {
        let service = CronService::open(
            dir.path().join("cron"),
            CronSettings::default(),
            Arc::new(ManualClock::at(T0)),
            TimeZone::UTC,
        );
        service.attach(Arc::new(Quiet));
        service
    }

    async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<ToolOutput, ToolError> {
        tool.execute(args, ToolContext::new("c1", CancellationToken::new()))
            .await
    }

    fn reminder(name: &str) -> Value {
        json!({
            "name": name,
            "schedule": {"kind": "every", "everyMs": 60_000},
            "payload": {"kind": "systemEvent", "text": "stretch"},
        })
    }

    /// The details of a call that succeeded.
    async fn details(tool: &Arc<dyn AgentTool>, args: Value) -> Value {
        call(tool, args).await.unwrap().details.unwrap()
    }

    /// The tool of agent `ops` over `service`, and its answer to adding `reminder(name)`.
    async fn ops_adding(
        service: &Arc<CronService>,
        name: &str,
    ) -> (Arc<dyn AgentTool>, ToolOutput) {
        let ops = cron_tool(Arc::clone(service), "ops".into());
        let added = call(&ops, json!({"action": "add", "job": reminder(name)}))
            .await
            .unwrap();
        (ops, added)
    }

    #[tokio::test]
    async fn add_stamps_the_agent_and_list_shows_only_its_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let service = service(&dir);
        let (ops, added) = ops_adding(&service, "mine").await;
        let text = added.text_content();
        let details = added.details.unwrap();
        assert_eq!(details["agentId"], "ops");
        assert_eq!(details["state"]["nextRunAtMs"], T0 + 60_000);
        assert!(text.contains("\"agentId\": \"ops\""), "{text}");

        let mut other = reminder("theirs");
        other["agentId"] = json!("main");
        call(&ops, json!({"action": "add", "job": other}))
            .await
            .unwrap();
        let shared = reminder("shared");
        service
            .add(serde_json::from_value(shared).unwrap())
            .unwrap();

        let listed = call(&ops, json!({"action": "list"})).await.unwrap();
        let names: Vec<&str> = listed.details.as_ref().unwrap()["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["mine", "shared"]);

        // Another agent's job is not there for this one.
        let theirs = service
            .list(true)
            .into_iter()
            .find(|j| j.name == "theirs")
            .unwrap();
        let err = call(&ops, json!({"action": "remove", "jobId": theirs.id}))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no cron job with id {:?}; list the jobs to see their ids",
                theirs.id
            )
        );
        assert!(service.get(&theirs.id).is_some());
    }

    #[tokio::test]
    async fn run_update_and_runs_through_the_tool() {
        let dir = tempfile::tempdir().unwrap();
        let service = service(&dir);
        let (ops, added) = ops_adding(&service, "r").await;
        let id = added.details.unwrap()["id"].as_str().unwrap().to_string();

        let ran = details(&ops, json!({"action": "run", "jobId": id})).await;
        assert_eq!(ran["ran"], true);
        let runs = details(&ops, json!({"action": "runs", "jobId": id})).await;
        assert_eq!(runs["entries"][0]["status"], "ok");

        let patch = json!({"action": "update", "jobId": id, "patch": {"enabled": false}});
        assert_eq!(details(&ops, patch).await["enabled"], false);
        let removed = details(&ops, json!({"action": "remove", "id": id})).await;
        assert_eq!(removed["removed"], true);
    }

    #[tokio::test]
    async fn bad_calls_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let ops = cron_tool(service(&dir), "ops".into());
        let err = call(&ops, json!({"action": "explode"})).await.unwrap_err();
        assert!(
            err.to_string().starts_with(
                "invalid arguments for cron: action: unknown variant `explode`, expected one of"
            ),
            "{err}"
        );
        let err = call(&ops, json!({"action": "add"})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::failed("add needs `job`: {name, schedule, payload, …}")
        );
        let err = call(&ops, json!({"action": "remove"})).await.unwrap_err();
        assert_eq!(err, ToolError::failed("remove needs `jobId`"));
        let err = call(
            &ops,
            json!({"action": "update", "jobId": "nope", "patch": {}}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no cron job with id \"nope\"; list the jobs to see their ids"
        );
        let mut job = reminder("x");
        job["payload"]["text"] = json!("  ");
        let err = call(&ops, json!({"action": "add", "job": job}))
            .await
            .unwrap_err();
        assert_eq!(err, ToolError::failed("payload.text must not be empty"));
    }

    #[test]
    fn the_schema_names_the_actions() {
        let tool = cron_tool(
            CronService::open(
                "/nonexistent/cron",
                CronSettings::default(),
                Arc::new(ManualClock::at(T0)),
                TimeZone::UTC,
            ),
            "ops".into(),
        );
        let schema = tool.parameters().to_string();
        for word in ["status", "runs", "includeDisabled", "jobId", "everyMs"] {
            assert!(schema.contains(word), "{word} missing from {schema}");
        }
    }
}
