//! Dialogs of RPC workers (pi's `extension_ui_request` select / confirm / input / editor)
//! shown to the WS clients that can answer them, as pi-gateway shows them to its WebChat,
//! and their answers (`extension_ui_response`) routed back to the worker that asked.
//!
//! A client says it can answer by listing `extension-ui` in `connect`'s `caps` (and may
//! answer only with `operator.write`). While none is connected a dialog is answered
//! automatically (pi-gateway's policy), so a worker never waits for nobody. Each dialog gets
//! a gateway-wide id (`dlg-N`): workers number their dialogs on their own, and two workers'
//! ids must not cross.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::runs::Runs;
use pincer_rpc::{ExtensionUiRequest, ExtensionUiResponse};
use pincer_turns::turn_rpc::DialogBroker;

/// The `caps` entry of a client that shows dialogs.
pub const DIALOG_CAP: &str = "extension-ui";

/// Dialogs waiting for a client's answer, and how many clients can answer.
#[derive(Default)]
pub struct Dialogs {
    clients: AtomicUsize,
    next_id: AtomicU64,
    pending: Mutex<HashMap<String, Pending>>,
}

struct Pending {
    /// The id the worker gave the dialog.
    worker_id: String,
    answer: oneshot::Sender<ExtensionUiResponse>,
}

/// A connected client that answers dialogs; dropped when the connection ends.
pub struct DialogClient(Arc<Dialogs>);

impl Drop for DialogClient {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why an answer went nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no open dialog {0}: it was answered already, timed out (and was answered automatically), or its run ended"
)]
pub struct UnknownDialog(pub String);

impl Dialogs {
    fn pending(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a connection that answers dialogs, for as long as the guard lives.
    pub fn client(self: &Arc<Self>) -> DialogClient {
        self.clients.fetch_add(1, Ordering::Relaxed);
        DialogClient(Arc::clone(self))
    }

    /// Delivers a client's answer to dialog `id`.
    pub fn answer(
        &self,
        id: &str,
        value: Option<String>,
        confirmed: Option<bool>,
        cancelled: Option<bool>,
    ) -> Result<(), UnknownDialog> {
        let pending = self
            .pending()
            .remove(id)
            .ok_or_else(|| UnknownDialog(id.to_owned()))?;
        let answer = ExtensionUiResponse {
            id: pending.worker_id,
            value,
            confirmed,
            cancelled,
            ..ExtensionUiResponse::cancelled("")
        };
        // The turn stopped waiting meanwhile: as good as unknown.
        pending
            .answer
            .send(answer)
            .map_err(|_| UnknownDialog(id.to_owned()))
    }

    /// Shows `request` of run `run_id` to the clients; `None` when none can answer.
    fn ask(
        &self,
        runs: &Runs,
        run_id: &str,
        session_key: &str,
        request: &ExtensionUiRequest,
    ) -> Option<oneshot::Receiver<ExtensionUiResponse>> {
        if self.clients.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let id = format!("dlg-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending();
            // Dialogs whose turn gave up waiting are no longer anyone's to answer.
            pending.retain(|_, p| !p.answer.is_closed());
            pending.insert(
                id.clone(),
                Pending {
                    worker_id: request.id.clone(),
                    answer: tx,
                },
            );
        }
        let mut payload: Map<String, Value> = request.fields.clone();
        payload.insert("id".into(), Value::String(id));
        payload.insert("method".into(), Value::String(request.method.clone()));
        payload.insert("runId".into(), Value::String(run_id.to_owned()));
        payload.insert("sessionKey".into(), Value::String(session_key.to_owned()));
        runs.broadcast("extension_ui_request", Value::Object(payload));
        Some(rx)
    }
}

/// The broker of one run's dialogs.
pub(super) struct RunDialogs {
    pub runs: Arc<Runs>,
    pub run_id: String,
    pub session_key: String,
}

impl DialogBroker for RunDialogs {
    fn ask(&self, request: &ExtensionUiRequest) -> Option<oneshot::Receiver<ExtensionUiResponse>> {
        self.runs
            .dialogs()
            .ask(&self.runs, &self.run_id, &self.session_key, request)
    }
}
