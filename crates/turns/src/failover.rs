//! Failover across credentials and models (OpenClaw's model failover): a stream function
//! that tries each credential of the primary model's provider in rotation order, then each
//! fallback model, until one of them starts answering.
//!
//! Only failures before any output move on: a rate limit, overload, auth failure, server
//! or network error. Once a reply has begun streaming it is the answer, whatever happens
//! next — switching models mid-reply would splice two answers together. Every failed
//! attempt is reported to the [`CredentialSource`] (which puts the profile into cooldown)
//! and kept in the [`Attempts`] log, so the run can say which model answered and why the
//! others did not. Every call starts again from the primary model: a provider that was
//! rate-limited for one turn is not abandoned for the whole session.

use pincer_base::Secret;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use pincer_agent::StreamFn;
use pincer_ai::{
    AssistantMessageEvent, AssistantStream, Context, ErrorKind, LlmClient, Model, RetryPolicy,
    StreamOptions,
};

/// One credential to try for a provider. `Debug` is derived: the key is a [`Secret`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    /// The auth profile it comes from; `None` for the environment.
    pub profile_id: Option<String>,
    /// The key; `None` lets the client find one (environment, configured provider key).
    pub secret: Option<Secret>,
}

/// Where credentials come from and where their outcomes go (auth profiles with rotation
/// and cooldowns, in the binary).
pub trait CredentialSource: Send + Sync {
    /// The credentials to try for `provider`, best first. An empty list means "none
    /// configured": the call is made once without a key of its own. An error (all
    /// profiles cooling down, an OAuth refresh that failed) is reported as this model's
    /// failure and the next model is tried.
    fn candidates(&self, provider: &str) -> BoxFuture<'static, Result<Vec<Credential>, String>>;
    /// The credential answered. Awaited before the answer streams on, so the bookkeeping
    /// is on disk even if the process exits right after the turn.
    fn succeeded(&self, provider: &str, profile_id: &str) -> BoxFuture<'static, ()>;
    /// The credential failed with `kind` (and `message`) before any output.
    fn failed(
        &self,
        provider: &str,
        profile_id: &str,
        kind: &ErrorKind,
        message: &str,
    ) -> BoxFuture<'static, ()>;
    /// The provider refused `rejected` (an auth failure before any output): a renewed
    /// credential to try once more — an OAuth token refreshed early, a Copilot token
    /// exchanged again — or `None`. Asked at most once per credential and call.
    fn renew(
        &self,
        _provider: &str,
        _profile_id: Option<&str>,
        _rejected: &Secret,
    ) -> BoxFuture<'static, Option<Credential>> {
        Box::pin(async { None })
    }
}

/// No profiles: every call uses the client's own key resolution.
#[derive(Debug, Default, Clone, Copy)]
pub struct EnvCredentials;

impl CredentialSource for EnvCredentials {
    fn candidates(&self, _: &str) -> BoxFuture<'static, Result<Vec<Credential>, String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn succeeded(&self, _: &str, _: &str) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
    fn failed(&self, _: &str, _: &str, _: &ErrorKind, _: &str) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// `provider/model`.
    pub model: String,
    pub profile_id: Option<String>,
    /// `ErrorKind::code()`.
    pub kind: &'static str,
    pub message: String,
}

/// Who answered a call: the model and the profile whose credential it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// `provider/model`.
    pub model: String,
    pub profile_id: Option<String>,
}

#[derive(Debug, Default)]
struct Log {
    failed: Vec<Attempt>,
    answered: Option<Answer>,
}

/// The attempts of a run, shared with the caller.
#[derive(Debug, Clone, Default)]
pub struct Attempts(Arc<Mutex<Log>>);

impl Attempts {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every failed attempt so far, oldest first.
    pub fn list(&self) -> Vec<Attempt> {
        self.log().failed.clone()
    }

    /// Who answered the last call that got an answer.
    pub fn answered(&self) -> Option<Answer> {
        self.log().answered.clone()
    }

    fn push(&self, attempt: Attempt) {
        self.log().failed.push(attempt);
    }
}

/// Whether a failure before output should move on to the next credential or model.
pub fn is_failover_reason(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::RateLimited { .. }
            | ErrorKind::Overloaded
            | ErrorKind::Auth
            | ErrorKind::Server
            | ErrorKind::Network
            | ErrorKind::Timeout
    )
}

/// A stream function that fails over from the model it is called with (the agent's primary
/// model) to `fallbacks`, trying every credential of each.
pub fn failover_stream_fn(
    client: LlmClient,
    fallbacks: Vec<Model>,
    credentials: Arc<dyn CredentialSource>,
    attempts: Attempts,
) -> StreamFn {
    let fallbacks = Arc::new(fallbacks);
    Arc::new(move |model, context, options| {
        let mut chain = vec![model.clone()];
        chain.extend(
            fallbacks
                .iter()
                .filter(|m| m.reference() != model.reference())
                .cloned(),
        );
        let job = Job {
            client: client.clone(),
            chain,
            context: context.clone(),
            options,
            credentials: Arc::clone(&credentials),
            attempts: attempts.clone(),
        };
        let (tx, rx) = AssistantStream::channel();
        let task = tokio::spawn(job.run(tx));
        AssistantStream::from_task(rx, task)
    })
}

struct Job {
    client: LlmClient,
    chain: Vec<Model>,
    context: Context,
    options: StreamOptions,
    credentials: Arc<dyn CredentialSource>,
    attempts: Attempts,
}

type Sender = tokio::sync::mpsc::Sender<AssistantMessageEvent>;

impl Job {
    async fn run(self, tx: Sender) {
        let models = self.chain.len();
        let mut last_error: Option<AssistantMessageEvent> = None;
        for (model_index, model) in self.chain.iter().enumerate() {
            let credentials = match self.credentials.candidates(&model.provider).await {
                Ok(list) if list.is_empty() => vec![Credential {
                    profile_id: None,
                    secret: None,
                }],
                Ok(list) => list,
                Err(message) => {
                    self.attempts.push(Attempt {
                        model: model.reference(),
                        profile_id: None,
                        kind: ErrorKind::Auth.code(),
                        message,
                    });
                    continue;
                }
            };
            for (cred_index, first) in credentials.iter().enumerate() {
                let last_chance = model_index + 1 == models && cred_index + 1 == credentials.len();
                let mut renewed: Option<Credential> = None;
                loop {
                    let credential = renewed.as_ref().unwrap_or(first);
                    let mut options = self.options.clone();
                    if let Some(secret) = &credential.secret {
                        options.api_key = Some(secret.expose().to_owned());
                    }
                    if !last_chance {
                        // With somewhere else to go, waiting out a rate limit here only delays
                        // the answer: fail over at once and keep the retries for the last try.
                        options.retry = RetryPolicy {
                            max_retries: 0,
                            ..options.retry
                        };
                    }
                    let stream = self.client.stream(model, &self.context, options);
                    match forward_unless_early_failure(stream, &tx).await {
                        Outcome::Forwarded { terminal } => {
                            // Book-keeping first: the consumer drops the stream (and so aborts
                            // this task) as soon as it has the terminal event.
                            let succeeded =
                                matches!(terminal, Some(AssistantMessageEvent::Done { .. }));
                            if let (true, Some(id)) = (succeeded, &credential.profile_id) {
                                self.credentials.succeeded(&model.provider, id).await;
                            }
                            self.attempts.log().answered = Some(Answer {
                                model: model.reference(),
                                profile_id: credential.profile_id.clone(),
                            });
                            if let Some(terminal) = terminal {
                                let _ = tx.send(terminal).await;
                            }
                            return;
                        }
                        Outcome::ReceiverGone => return,
                        Outcome::FailedEarly(event) => {
                            if let AssistantMessageEvent::Error { error, kind, .. } = &event {
                                let message = error.error_message.clone().unwrap_or_default();
                                if let Some(id) = &credential.profile_id {
                                    self.credentials
                                        .failed(&model.provider, id, kind, &message)
                                        .await;
                                }
                                self.attempts.push(Attempt {
                                    model: model.reference(),
                                    profile_id: credential.profile_id.clone(),
                                    kind: kind.code(),
                                    message,
                                });
                            }
                            let rejected = matches!(
                                &event,
                                AssistantMessageEvent::Error {
                                    kind: ErrorKind::Auth,
                                    ..
                                }
                            );
                            last_error = Some(event);
                            if let (true, None, Some(secret)) =
                                (rejected, &renewed, &credential.secret)
                            {
                                // Refused mid-use (a token revoked or expired early): renew it
                                // once; a second refusal is final.
                                let fresh = self
                                    .credentials
                                    .renew(
                                        &model.provider,
                                        credential.profile_id.as_deref(),
                                        secret,
                                    )
                                    .await;
                                if let Some(fresh) = fresh {
                                    renewed = Some(fresh);
                                    continue;
                                }
                            }
                        }
                    }
                    break;
                }
            }
        }
        let _ = tx.send(self.final_error(last_error)).await;
    }

    /// The error that ends a call no credential or model could answer: the last failure,
    /// with every attempt listed when there was more than one.
    fn final_error(&self, last: Option<AssistantMessageEvent>) -> AssistantMessageEvent {
        let attempts = self.attempts.list();
        let summary = attempts
            .iter()
            .map(|a| match &a.profile_id {
                Some(p) => format!("{} (profile {p}): {}", a.model, a.message),
                None => format!("{}: {}", a.model, a.message),
            })
            .collect::<Vec<_>>()
            .join("; ");
        match last {
            Some(AssistantMessageEvent::Error {
                reason,
                mut error,
                kind,
            }) => {
                if attempts.len() > 1 {
                    error.error_message =
                        Some(format!("every model and credential failed: {summary}"));
                }
                AssistantMessageEvent::Error {
                    reason,
                    error,
                    kind,
                }
            }
            _ => {
                let primary = &self.chain[0];
                let mut error = pincer_ai::AssistantMessage {
                    api: primary.api.clone(),
                    provider: primary.provider.clone(),
                    model: primary.id.clone(),
                    stop_reason: pincer_ai::StopReason::Error,
                    timestamp: pincer_ai::now_ms(),
                    ..pincer_ai::AssistantMessage::default()
                };
                error.error_message = Some(format!("no credential could be used: {summary}"));
                AssistantMessageEvent::Error {
                    reason: pincer_ai::StopReason::Error,
                    error,
                    kind: ErrorKind::Auth,
                }
            }
        }
    }
}

enum Outcome {
    /// The stream was passed on up to its terminal event, which is returned unsent.
    Forwarded {
        terminal: Option<AssistantMessageEvent>,
    },
    ReceiverGone,
    /// A failover-worthy error arrived before any output; nothing was forwarded.
    FailedEarly(AssistantMessageEvent),
}

/// Holds back `start` until the first real event: an early failover-worthy error is
/// returned unsent; otherwise everything is forwarded except the terminal event, which is
/// returned for the caller to send after its book-keeping.
async fn forward_unless_early_failure(mut stream: AssistantStream, tx: &Sender) -> Outcome {
    let mut held_start = false;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start if !held_start => held_start = true,
            AssistantMessageEvent::Error { ref kind, .. } if is_failover_reason(kind) => {
                return Outcome::FailedEarly(event);
            }
            first => {
                if held_start && tx.send(AssistantMessageEvent::Start).await.is_err() {
                    return Outcome::ReceiverGone;
                }
                let mut next = Some(first);
                while let Some(event) = next.take() {
                    if event.is_terminal() {
                        return Outcome::Forwarded {
                            terminal: Some(event),
                        };
                    }
                    if tx.send(event).await.is_err() {
                        return Outcome::ReceiverGone;
                    }
                    next = stream.next().await;
                }
                return Outcome::Forwarded { terminal: None };
            }
        }
    }
    Outcome::Forwarded { terminal: None }
}
