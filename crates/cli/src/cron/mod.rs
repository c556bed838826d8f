//! `pincer cron add|list|edit|remove|run|runs|status`: OpenClaw's `openclaw cron`, through
//! the gateway's `cron.*` methods.
//!
//! The gateway owns the jobs while it runs (its scheduler holds them in memory), so every
//! command goes through it. While it is not running, everything but `run` works on
//! `$PINCER_HOME/cron` directly with the same library the gateway uses, and says so on
//! stderr; the gateway loads the changes when it starts. A gateway that is there but
//! refuses us (wrong token, …) is an error, never a reason to write behind its back.
//!
//! Flags become `cron.add` params / `cron.update` patches in `spec.rs`; how jobs and
//! runs are shown is in `view.rs`.

mod spec;
mod view;

pub(crate) use view::local_time_as;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use pincer_automation::cron::{
    CronJob, CronService, CronSettings, NewCronJob, RunLogEntry, RunStatus,
};
use pincer_automation::system_events::SystemClock;
use pincer_base::now_ms;
use serde_json::{Value, json};

use crate::app::App;
use crate::cli::{CronAddArgs, CronCommand, CronEditArgs};
use crate::gateway::client::{Endpoint, GatewayClient, NotRunning};

/// How long `cron run` waits for the run to finish: an agent turn with tools can take
/// minutes.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// The config's `cron` section as the scheduler's settings (OpenClaw's defaults where
/// unset). The gateway uses the same mapping, so both sides agree on e.g. `enabled`.
pub fn cron_settings(config: &pincer_config::CronConfig) -> CronSettings {
    let mut settings = CronSettings::default();
    if let Some(enabled) = config.enabled {
        settings.enabled = enabled;
    }
    if let Some(max) = config.max_concurrent_runs {
        settings.max_concurrent_runs = usize::try_from(max.max(1)).unwrap_or(1);
    }
    if let Some(retry) = &config.retry {
        if let Some(attempts) = retry.max_attempts {
            settings.retry_max_attempts = attempts.max(1);
        }
        if let Some(backoff) = retry.backoff_ms.as_ref().filter(|b| !b.is_empty()) {
            settings.retry_backoff_ms = backoff.clone();
        }
    }
    settings
}

/// `$PINCER_HOME/cron`.
pub fn cron_dir(app: &App) -> PathBuf {
    app.home.join("cron")
}

pub async fn run(app: &App, command: CronCommand) -> Result<ExitCode> {
    // Jobs run only inside the gateway: without it `run` has nothing to fall back to.
    let local_ok = !matches!(command, CronCommand::Run { .. });
    let mut backend = Backend::open(app, local_ok).await?;
    let code = match command {
        CronCommand::Add(args) => add(app, &mut backend, *args).await?,
        CronCommand::List { all, json } => list(&mut backend, all, json).await?,
        CronCommand::Edit(args) => edit(app, &mut backend, *args).await?,
        CronCommand::Remove { id, json } => remove(&mut backend, &id, json).await?,
        CronCommand::Run { id, due } => run_job(&mut backend, &id, due).await?,
        CronCommand::Runs { id, limit, json } => runs(&mut backend, &id, limit, json).await?,
        CronCommand::Status { json } => status(&mut backend, json).await?,
    };
    backend.close().await;
    Ok(code)
}

async fn add(app: &App, backend: &mut Backend, args: CronAddArgs) -> Result<ExitCode> {
    let agent = job_agent(app, &args.job)?;
    let params = spec::add_params(&args.job, args.disabled, agent, now_ms())?;
    let job = backend.add(params).await?;
    if args.json {
        print_json(&serde_json::to_value(&job)?)?;
    } else {
        let next = view::next_run_text(&job, now_ms());
        println!("added job {} \"{}\": next run {next}", job.id, job.name);
    }
    backend.changed_note();
    Ok(ExitCode::SUCCESS)
}

/// The `--agent` of a job, checked against the configured agents.
fn job_agent(app: &App, job: &crate::cli::CronJobArgs) -> Result<Option<String>> {
    job.agent
        .as_deref()
        .map(|id| app.agent_id(Some(id)))
        .transpose()
}

async fn list(backend: &mut Backend, all: bool, json: bool) -> Result<ExitCode> {
    let status = backend.status().await?;
    let jobs = backend.list(all).await?;
    warn_store(&status);
    if json {
        let mut out = json!({ "jobs": jobs });
        if let Some(error) = status.get("loadError") {
            out["loadError"] = error.clone();
        }
        print_json(&out)?;
    } else if jobs.is_empty() {
        let total = status["jobs"].as_u64().unwrap_or(0);
        if total > 0 && !all {
            println!(
                "no enabled cron jobs ({total} disabled: `pincer cron list --all` shows them)"
            );
        } else {
            println!("no cron jobs");
        }
    } else {
        print!("{}", view::jobs_table(&jobs, now_ms()));
    }
    backend.read_note();
    Ok(ExitCode::SUCCESS)
}

async fn edit(app: &App, backend: &mut Backend, args: CronEditArgs) -> Result<ExitCode> {
    let agent = job_agent(app, &args.job)?;
    let (id, current) = backend.resolve(&args.id).await?;
    let Some(current) = current else {
        bail!(
            "cron job {id} in the jobs file cannot be used, so it cannot be edited: fix it in \
             the file or remove it with `pincer cron remove {id}` (`pincer cron status` says \
             what is wrong)"
        );
    };
    let enabled = match (args.enable, args.disable) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let patch = spec::edit_patch(&args.job, enabled, agent, &current, now_ms())?;
    let job = backend.update(&id, patch).await?;
    if args.json {
        print_json(&serde_json::to_value(&job)?)?;
    } else {
        let next = view::next_run_text(&job, now_ms());
        println!(
            "updated job {} \"{}\": {}, next run {next}",
            job.id,
            job.name,
            view::schedule_text(&job.schedule)
        );
    }
    backend.changed_note();
    Ok(ExitCode::SUCCESS)
}

async fn remove(backend: &mut Backend, input: &str, json: bool) -> Result<ExitCode> {
    let (id, _) = backend.resolve(input).await?;
    let removed = backend.remove(&id).await?;
    if json {
        print_json(&json!({ "ok": true, "removed": removed }))?;
    } else if removed {
        println!("removed job {id}");
    } else {
        println!("job {id} was already gone");
    }
    backend.changed_note();
    Ok(ExitCode::SUCCESS)
}

async fn run_job(backend: &mut Backend, input: &str, due: bool) -> Result<ExitCode> {
    let (id, _) = backend.resolve(input).await?;
    let mode = if due { "due" } else { "force" };
    let outcome = backend
        .call_gateway("cron.run", json!({ "id": id, "mode": mode }), RUN_TIMEOUT)
        .await?;
    if outcome["ran"] != true {
        let reason = outcome["reason"].as_str().unwrap_or("unknown");
        println!("not run: {reason}");
        return Ok(ExitCode::SUCCESS);
    }
    // The run is over: its entry tells how it went.
    let last = backend.runs(&id, 1).await?.pop();
    match last {
        Some(entry) => {
            println!("ran: {}", view::run_line(&entry));
            if entry.status == Some(RunStatus::Error) {
                return Ok(ExitCode::from(1));
            }
        }
        None => println!("ran"),
    }
    Ok(ExitCode::SUCCESS)
}

async fn runs(backend: &mut Backend, input: &str, limit: u32, json: bool) -> Result<ExitCode> {
    let (id, _) = backend.resolve(input).await?;
    let entries = backend.runs(&id, limit as usize).await?;
    if json {
        print_json(&json!({ "entries": entries }))?;
    } else if entries.is_empty() {
        println!("job {id} has not run yet");
    } else {
        for entry in &entries {
            println!("{}", view::run_line(entry));
        }
    }
    backend.read_note();
    Ok(ExitCode::SUCCESS)
}

async fn status(backend: &mut Backend, json: bool) -> Result<ExitCode> {
    let status = backend.status().await?;
    warn_store(&status);
    if json {
        print_json(&status)?;
    } else {
        print!("{}", view::status_text(&status, now_ms()));
        if backend.is_local() {
            println!("gateway: not running (jobs run while `pincer gateway` runs)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the jobs are: the gateway, or the files while it is not running.
enum Backend {
    // Boxed: the WebSocket stream is ten times the size of the other variant.
    Gateway(Box<GatewayClient>),
    Local {
        service: Arc<CronService>,
        dir: PathBuf,
        _lock: pincer_automation::cron::SchedulerLock,
    },
}

impl Backend {
    /// The gateway; while it is not running, the files when `local_ok`.
    async fn open(app: &App, local_ok: bool) -> Result<Self> {
        let endpoint = Endpoint::resolve(app)?;
        match GatewayClient::connect(&endpoint).await {
            Ok(client) => Ok(Self::Gateway(Box::new(client))),
            Err(e) if e.downcast_ref::<NotRunning>().is_some() && !local_ok => bail!(
                "the gateway is not running, and jobs run only inside it: start it with \
                 `pincer gateway start --daemon` (or `pincer gateway` in another terminal), \
                 then try again"
            ),
            Err(e) if e.downcast_ref::<NotRunning>().is_some() => {
                let dir = cron_dir(app);
                // Held for the whole command: a gateway of this home that runs but does
                // not answer where we looked would overwrite the edit with its next save.
                let Some(lock) = pincer_automation::cron::try_lock_scheduler(&dir)? else {
                    bail!(
                        "a gateway seems to run for this home (it holds {}) but nothing \
                         answers at {}: set PINCER_GATEWAY_PORT to the port it listens on",
                        dir.join(pincer_automation::cron::SCHEDULER_LOCK_FILE)
                            .display(),
                        endpoint.addr
                    );
                };
                let service = CronService::open(
                    dir.clone(),
                    cron_settings(&app.config.cron),
                    Arc::new(SystemClock),
                    pincer_automation::cron::local_time_zone(),
                );
                Ok(Self::Local {
                    service,
                    dir,
                    _lock: lock,
                })
            }
            Err(e) => Err(e),
        }
    }

    fn is_local(&self) -> bool {
        matches!(self, Self::Local { .. })
    }

    async fn call_gateway(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        match self {
            Self::Gateway(client) => client.call_with_timeout(method, params, timeout).await,
            Self::Local { .. } => bail!("{method} needs the running gateway"),
        }
    }

    /// `cron.status`: `{enabled, storePath, jobs, nextWakeAtMs, loadError?, unreadable}`.
    async fn status(&mut self) -> Result<Value> {
        match self {
            Self::Gateway(client) => client.call("cron.status", json!({})).await,
            Self::Local { service, .. } => Ok(service.status().to_json()),
        }
    }

    async fn list(&mut self, include_disabled: bool) -> Result<Vec<CronJob>> {
        match self {
            Self::Gateway(client) => {
                let answer = client
                    .call("cron.list", json!({ "includeDisabled": include_disabled }))
                    .await?;
                let jobs = answer.get("jobs").cloned().unwrap_or(Value::Null);
                serde_json::from_value(jobs)
                    .context("the gateway's cron.list answer has no job list")
            }
            Self::Local { service, .. } => Ok(service.list(include_disabled)),
        }
    }

    async fn add(&mut self, params: Value) -> Result<CronJob> {
        match self {
            Self::Gateway(client) => job_from(client.call("cron.add", params).await?),
            Self::Local { service, .. } => {
                let input: NewCronJob = serde_json::from_value(params)?;
                Ok(service.add(input)?)
            }
        }
    }

    async fn update(&mut self, id: &str, patch: Value) -> Result<CronJob> {
        match self {
            Self::Gateway(client) => job_from(
                client
                    .call("cron.update", json!({ "id": id, "patch": patch }))
                    .await?,
            ),
            Self::Local { service, .. } => Ok(service.update(id, &patch)?),
        }
    }

    async fn remove(&mut self, id: &str) -> Result<bool> {
        match self {
            Self::Gateway(client) => {
                let answer = client.call("cron.remove", json!({ "id": id })).await?;
                Ok(answer["removed"].as_bool().unwrap_or(false))
            }
            Self::Local { service, .. } => Ok(service.remove(id)?),
        }
    }

    async fn runs(&mut self, id: &str, limit: usize) -> Result<Vec<RunLogEntry>> {
        match self {
            Self::Gateway(client) => {
                let answer = client
                    .call("cron.runs", json!({ "id": id, "limit": limit }))
                    .await?;
                let entries = answer.get("entries").cloned().unwrap_or(Value::Null);
                serde_json::from_value(entries)
                    .context("the gateway's cron.runs answer has no entry list")
            }
            Self::Local { service, .. } => Ok(service.runs(id, limit)?),
        }
    }

    /// The job `input` names: its id exactly, or a unique prefix of it. Jobs of the file that
    /// cannot be used count too (they can be removed); for them the job is `None`.
    async fn resolve(&mut self, input: &str) -> Result<(String, Option<CronJob>)> {
        let input = input.trim();
        let unknown =
            || anyhow::anyhow!("no cron job {input}; `pincer cron list --all` shows them");
        if input.is_empty() {
            return Err(unknown());
        }
        let mut jobs = self.list(true).await?;
        if let Some(index) = jobs.iter().position(|j| j.id == input) {
            let job = jobs.swap_remove(index);
            return Ok((job.id.clone(), Some(job)));
        }
        let status = self.status().await?;
        let unreadable: Vec<String> = status["unreadable"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u["id"].as_str().map(str::to_owned))
            .collect();
        if unreadable.iter().any(|id| id == input) {
            return Ok((input.to_owned(), None));
        }
        let mut matches: Vec<(String, Option<CronJob>)> = jobs
            .into_iter()
            .filter(|j| j.id.starts_with(input))
            .map(|j| (j.id.clone(), Some(j)))
            .collect();
        matches.extend(
            unreadable
                .into_iter()
                .filter(|id| id.starts_with(input))
                .map(|id| (id, None)),
        );
        match matches.len() {
            0 => Err(unknown()),
            1 => Ok(matches.remove(0)),
            _ => {
                let ids: Vec<&str> = matches.iter().map(|(id, _)| id.as_str()).collect();
                bail!(
                    "{input:?} is the start of several job ids ({}); give more of it",
                    ids.join(", ")
                )
            }
        }
    }

    /// After a change made without the gateway: say where, and that nothing runs yet.
    fn changed_note(&self) {
        if let Self::Local { dir, .. } = self {
            eprintln!(
                "note: the gateway is not running: changed {} directly; jobs run while `pincer \
                 gateway` runs",
                dir.join(pincer_automation::cron::JOBS_FILE).display()
            );
        }
    }

    /// After a read without the gateway.
    fn read_note(&self) {
        if let Self::Local { dir, .. } = self {
            eprintln!(
                "note: the gateway is not running: read {} directly; jobs run while `pincer \
                 gateway` runs",
                dir.display()
            );
        }
    }

    async fn close(self) {
        if let Self::Gateway(client) = self {
            client.close().await;
        }
    }
}

/// A job as the gateway returned it.
fn job_from(value: Value) -> Result<CronJob> {
    serde_json::from_value(value)
        .context("the gateway answered with something that is not a cron job")
}

/// The jobs file's problems on stderr.
fn warn_store(status: &Value) {
    for warning in view::store_warnings(status) {
        eprintln!("warning: {warning}");
    }
}

fn print_json(value: &Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
