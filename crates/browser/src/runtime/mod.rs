//! The browser runtime: one dedicated Chromium per profile, under
//! `$PINCER_HOME/browser/<profile>/`, shared by every process of this user.
//!
//! [`ProfileRuntime::ensure_running`] takes the profile's lock, reuses the browser that
//! `runtime.json` names if its pid still runs and `/json/version` answers with the recorded
//! WebSocket URL, and otherwise clears what is left of an older one and starts a fresh one:
//! under a supervisor process ([`supervise`], which outlives a short `pincer` command and
//! ends the browser on the idle timeout), or as a task of this process when
//! [`RuntimeOptions::supervisor`] is `None`. Either way Chromium dies with whoever holds its
//! debugging pipe, so no Chromium outlives both its starter and its supervisor.
//! With [`RuntimeOptions::navigation_guard`] set, whoever runs Chromium also keeps a CDP
//! connection that checks every page's navigations for as long as it runs (`guard`).
//!
//! Files: `runtime.json` (the record, 0600, replaced atomically), `lock` (check-or-start
//! and stop), `last-used` (the idle clock: its mtime), `user-data/` (Chromium's profile,
//! kept across starts), `chromium.log` (+ `.1`, bounded) and `supervisor.log`.

mod discover;
mod guard;
mod launch;
mod paths;
pub mod probe;
mod procs;
mod record;
mod supervisor;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use nix::sys::signal::Signal;
use pincer_web::ssrf::NetworkPolicy;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub use launch::Ended;
pub use record::RuntimeRecord;
pub use supervisor::{SupervisorArgs, supervise};

use crate::{BrowserRuntime, Endpoint, RuntimeError, RuntimeStatus};
use paths::Paths;

/// The profile used when none is configured.
pub const DEFAULT_PROFILE: &str = "default";

/// How long `ensure_running` waits for `/json/version` from a recorded browser.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a new start waits for the cleanup of an in-process browser that died (its
/// wait for the lock, then SIGTERM, SIGKILL and the profile's stragglers, each bounded).
const OLD_TASK_WAIT: Duration = Duration::from_secs(15);
/// How long `stop` waits for the browser and its supervisor to exit before killing.
const STOP_WAIT: Duration = Duration::from_secs(8);

/// How the profile's browser is found, started and ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeOptions {
    /// The profile's name: its directory under `<home>/browser/` (letters, digits, `-`, `_`).
    pub profile: String,
    /// `$PINCER_HOME`.
    pub home: PathBuf,
    /// `browser.executablePath`; `None` looks for Chromium or Chrome.
    pub executable: Option<PathBuf>,
    pub headless: bool,
    /// Unused this long, the browser is ended (by its supervisor, or by this process's
    /// task when there is none).
    pub idle_timeout: Duration,
    /// How long Chromium gets to answer `/json/version` after it was started.
    pub start_timeout: Duration,
    /// Appended to Chromium's arguments.
    pub extra_args: Vec<String>,
    /// Chromium's `--no-sandbox`. Forced when this process runs as root: Chromium refuses
    /// to start as root with its sandbox on.
    pub no_sandbox: bool,
    /// The command that runs [`supervise`] (e.g. `[current_exe, "browser", "supervise"]`;
    /// the supervisor's arguments are appended). `None`: Chromium runs as a child of this
    /// process and ends with it (or with the [`ProfileRuntime`]).
    pub supervisor: Option<Vec<OsString>>,
    /// The navigation guard the runtime itself keeps on the browser for its whole life
    /// (the supervisor, or without one this process, holds a CDP connection that checks
    /// every page's document requests against this policy), so a page that navigates by
    /// itself while no tool call is connected is still checked. `None`: no such guard
    /// (only the tool's own connections check).
    pub navigation_guard: Option<NetworkPolicy>,
}

impl RuntimeOptions {
    /// The defaults for `home`: profile `default`, headless, 10 min idle timeout, 20 s start
    /// timeout, no supervisor, no runtime navigation guard.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self {
            profile: DEFAULT_PROFILE.to_owned(),
            home: home.into(),
            executable: None,
            headless: true,
            idle_timeout: Duration::from_secs(600),
            start_timeout: Duration::from_secs(20),
            extra_args: Vec::new(),
            no_sandbox: false,
            supervisor: None,
            navigation_guard: None,
        }
    }
}

/// The in-process browser of a runtime without a supervisor.
struct Direct {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Ended>,
}

/// The profile's browser, as seen by this process: [`BrowserRuntime`] over the files of
/// `<home>/browser/<profile>/`. Cheap to make; make one per process and share it.
/// Dropping it ends the browser only when it runs in this process (no supervisor).
pub struct ProfileRuntime {
    options: RuntimeOptions,
    paths: Paths,
    /// One check-or-start or stop at a time in this process (the file lock orders processes).
    op: tokio::sync::Mutex<()>,
    last_touch: Mutex<Option<Instant>>,
    direct: Mutex<Option<Direct>>,
}

impl std::fmt::Debug for ProfileRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileRuntime")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn valid_profile(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl ProfileRuntime {
    /// The runtime of `options.profile`; an error when the name cannot be a directory name.
    pub fn new(options: RuntimeOptions) -> Result<Self, RuntimeError> {
        if !valid_profile(&options.profile) {
            return Err(RuntimeError::State {
                path: options.home.join("browser").display().to_string(),
                reason: format!(
                    "profile name {:?}: use 1-64 letters, digits, - or _",
                    options.profile
                ),
            });
        }
        let paths = Paths::new(options.home.join("browser").join(&options.profile));
        Ok(Self {
            options,
            paths,
            op: tokio::sync::Mutex::new(()),
            last_touch: Mutex::new(None),
            direct: Mutex::new(None),
        })
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// The `--user-data-dir=…` argument every process of this profile's Chromium carries
    /// (what tests look for in `/proc`).
    pub fn user_data_arg(&self) -> String {
        self.paths.user_data_arg()
    }

    /// The record of the running browser, if one runs and answers.
    pub async fn record(&self) -> Result<Option<RuntimeRecord>, RuntimeError> {
        match record::read(&self.paths.record()).await? {
            Some(rec) if verify(&rec).await => Ok(Some(rec)),
            _ => Ok(None),
        }
    }

    fn lock_timeout(&self) -> Duration {
        self.options.start_timeout + Duration::from_secs(15)
    }

    fn no_sandbox(&self) -> bool {
        self.options.no_sandbox || nix::unistd::geteuid().is_root()
    }

    fn take_direct(&self) -> Option<Direct> {
        self.direct.lock().ok().and_then(|mut d| d.take())
    }

    async fn ensure(&self) -> Result<Endpoint, RuntimeError> {
        let _op = self.op.lock().await;
        record::ensure_dir(self.paths.dir()).await?;
        let _lock = record::lock(&self.paths.lock(), self.lock_timeout()).await?;
        if let Some(rec) = record::read(&self.paths.record()).await? {
            if verify(&rec).await {
                record::touch_now(&self.paths.last_used()).await;
                self.note_touch();
                return Ok(endpoint(&rec));
            }
            end_recorded(&rec).await;
        }
        // Whatever is left of an earlier browser (a crashed one, a supervisor killed before
        // it wrote its record) would hold the profile's singleton lock.
        if let Some(old) = self.take_direct() {
            old.stop.cancel();
            // Its cleanup ends every process of the profile: it must be over before the
            // new browser starts, or the new one is ended with the old.
            let _ = tokio::time::timeout(OLD_TASK_WAIT, old.task).await;
        }
        procs::reap_profile(&self.paths.user_data_arg(), Duration::from_secs(5)).await;
        record::remove(&self.paths.record()).await?;
        let executable = discover::resolve(self.options.executable.as_deref()).await?;
        let args = SupervisorArgs {
            state_dir: self.paths.dir().to_path_buf(),
            executable,
            browser_args: launch::browser_args(
                self.options.headless,
                self.no_sandbox(),
                &self.options.extra_args,
            ),
            idle_timeout: self.options.idle_timeout,
            start_timeout: self.options.start_timeout,
            headless: self.options.headless,
            navigation_guard: self.options.navigation_guard.clone(),
        };
        let rec = match &self.options.supervisor {
            Some(prefix) => supervisor::start_supervised(prefix, &args).await?,
            None => self.start_direct(args).await?,
        };
        self.note_touch();
        Ok(endpoint(&rec))
    }

    async fn start_direct(&self, args: SupervisorArgs) -> Result<RuntimeRecord, RuntimeError> {
        let stop = CancellationToken::new();
        let (ready_tx, ready_rx) = oneshot::channel();
        let wait = args.start_timeout + Duration::from_secs(10);
        let task = tokio::spawn({
            let stop = stop.clone();
            async move { launch::run_browser(&args, None, ready_tx, stop).await }
        });
        let direct = Direct { stop, task };
        match tokio::time::timeout(wait, ready_rx).await {
            Ok(Ok(Ok(rec))) => {
                if let Ok(mut slot) = self.direct.lock() {
                    *slot = Some(direct);
                }
                Ok(rec)
            }
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(RuntimeError::Start("the browser's task ended".into())),
            Err(_) => {
                direct.stop.cancel();
                let _ = direct.task.await;
                Err(RuntimeError::Start(format!("not ready within {wait:?}")))
            }
        }
    }

    async fn end(&self) -> Result<bool, RuntimeError> {
        let _op = self.op.lock().await;
        if !tokio::fs::try_exists(self.paths.dir())
            .await
            .unwrap_or(false)
        {
            return Ok(false);
        }
        let _lock = record::lock(&self.paths.lock(), self.lock_timeout()).await?;
        let mut was_running = false;
        if let Some(direct) = self.take_direct() {
            was_running = !direct.task.is_finished();
            direct.stop.cancel();
            let _ = tokio::time::timeout(STOP_WAIT, direct.task).await;
        }
        if let Some(rec) = record::read(&self.paths.record()).await? {
            was_running |= end_recorded(&rec).await;
        }
        record::remove(&self.paths.record()).await?;
        let left = procs::reap_profile(&self.paths.user_data_arg(), Duration::from_secs(5)).await;
        if left.is_empty() {
            Ok(was_running)
        } else {
            Err(RuntimeError::State {
                path: self.paths.user_data().display().to_string(),
                reason: format!("browser processes {left:?} outlived SIGKILL"),
            })
        }
    }

    fn note_touch(&self) {
        if let Ok(mut last) = self.last_touch.lock() {
            *last = Some(Instant::now());
        }
    }

    /// Whether `touch` should write now: at most every quarter idle timeout, 5 s at most.
    fn touch_due(&self) -> bool {
        let every = launch::idle_check_every(self.options.idle_timeout);
        let Ok(mut last) = self.last_touch.lock() else {
            return false;
        };
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < every) {
            return false;
        }
        *last = Some(now);
        true
    }
}

impl Drop for ProfileRuntime {
    fn drop(&mut self) {
        // An in-process browser ends with its runtime (its task kills it; were the task
        // never to run again, dropping the child kills it and closes its pipe).
        if let Some(direct) = self.take_direct() {
            direct.stop.cancel();
        }
    }
}

fn endpoint(rec: &RuntimeRecord) -> Endpoint {
    Endpoint {
        ws_url: rec.ws_url.clone(),
        http_base: rec.http_base.clone(),
    }
}

/// Whether the recorded browser (and its supervisor, if any) still runs and answers with
/// the recorded WebSocket URL.
async fn verify(rec: &RuntimeRecord) -> bool {
    if !procs::still_running(rec.pid, rec.pid_start).await {
        return false;
    }
    if let Some(supervisor) = rec.supervisor_pid
        && !procs::still_running(supervisor, rec.supervisor_start).await
    {
        return false;
    }
    let Some(port) = probe::port_of(&rec.http_base) else {
        return false;
    };
    probe::json_version(port, PROBE_TIMEOUT)
        .await
        .is_ok_and(|version| version.ws_url == rec.ws_url)
}

/// Ends the recorded browser: asks its supervisor (or, without one, Chromium itself) to
/// stop, waits, then kills what is left of the two. Whether the browser was running.
async fn end_recorded(rec: &RuntimeRecord) -> bool {
    let browser_alive = procs::still_running(rec.pid, rec.pid_start).await;
    let supervisor = match rec.supervisor_pid {
        Some(pid) if procs::still_running(pid, rec.supervisor_start).await => Some(pid),
        _ => None,
    };
    match supervisor {
        Some(pid) => procs::signal_pid(pid, Signal::SIGTERM),
        None if browser_alive => procs::signal_pid(rec.pid, Signal::SIGTERM),
        None => {}
    }
    let watched = [
        (rec.pid, rec.pid_start),
        (supervisor.unwrap_or(0), rec.supervisor_start),
    ];
    if !procs::wait_gone(&watched, STOP_WAIT).await {
        if browser_alive && procs::still_running(rec.pid, rec.pid_start).await {
            procs::signal_group(rec.pid, Signal::SIGKILL);
        }
        if let Some(pid) = supervisor
            && procs::still_running(pid, rec.supervisor_start).await
        {
            procs::signal_pid(pid, Signal::SIGKILL);
        }
        procs::wait_gone(&watched, Duration::from_secs(2)).await;
    }
    browser_alive
}

impl BrowserRuntime for ProfileRuntime {
    fn ensure_running(&self) -> BoxFuture<'_, Result<Endpoint, RuntimeError>> {
        Box::pin(self.ensure())
    }

    fn running(&self) -> BoxFuture<'_, Result<Option<Endpoint>, RuntimeError>> {
        Box::pin(async move { Ok(self.record().await?.as_ref().map(endpoint)) })
    }

    fn stop(&self) -> BoxFuture<'_, Result<bool, RuntimeError>> {
        Box::pin(self.end())
    }

    fn status(&self) -> BoxFuture<'_, Result<RuntimeStatus, RuntimeError>> {
        Box::pin(async move {
            let rec = self.record().await?;
            let executable = match &rec {
                Some(rec) => Some(rec.executable.clone()),
                None => discover::resolve(self.options.executable.as_deref())
                    .await
                    .ok()
                    .map(|p| p.display().to_string()),
            };
            Ok(RuntimeStatus {
                profile: self.options.profile.clone(),
                running: rec.is_some(),
                pid: rec.as_ref().map(|r| r.pid),
                ws_url: rec.as_ref().map(|r| r.ws_url.clone()),
                executable,
                headless: rec.as_ref().map_or(self.options.headless, |r| r.headless),
            })
        })
    }

    fn touch(&self) {
        if !self.touch_due() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let path = self.paths.last_used();
        // Fire and forget: a lost touch costs at most one idle-check period.
        drop(handle.spawn_blocking(move || record::touch_blocking(&path)));
    }

    fn state_dir(&self) -> &Path {
        self.paths.dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_are_directory_names() {
        for good in ["default", "work-2", "a_b"] {
            assert!(valid_profile(good), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(65)] {
            assert!(!valid_profile(bad), "{bad}");
        }
        let err = ProfileRuntime::new(RuntimeOptions {
            profile: "../x".into(),
            ..RuntimeOptions::new("/h")
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the browser's state under /h/browser could not be used: profile name \"../x\": use 1-64 letters, digits, - or _"
        );
    }
}
