//! The worker's loop: one command per stdin line, answered by one `response` line (with
//! the command's `id`); agent events stream between them. EOF on stdin ends the worker once
//! what runs is stopped. Logs go to stderr only: stdout is the protocol.

use std::sync::Arc;

use tokio::io::BufReader;

use crate::worker::WorkerOptions;
use crate::worker::dispatch::dispatch;
use crate::worker::error::WorkerError;
use crate::worker::host::WorkerHost;
use crate::worker::output::Output;
use crate::worker::state::Worker;
use crate::{
    DecodeError, LineError, MAX_LINE_BYTES, WorkerInput, decode_input, error_line,
    read_line_limited,
};

/// Serves pi's RPC protocol on stdin/stdout until stdin ends. Fails only when the worker
/// cannot start (its session file or agent); a command's failure is its response.
pub async fn serve(host: Arc<dyn WorkerHost>, options: WorkerOptions) -> Result<(), WorkerError> {
    let (out, writer) = Output::spawn();
    let mut worker = Worker::start(host, options, out.clone()).await?;
    let mut stdin = BufReader::new(tokio::io::stdin());
    loop {
        let line = match read_line_limited(&mut stdin, MAX_LINE_BYTES).await {
            Ok(None) => break,
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(e))) => {
                out.line(error_line(None, "parse", &unreadable(&e)));
                continue;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read stdin");
                break;
            }
        };
        match decode_input(&line) {
            Ok(WorkerInput::Command(request)) => dispatch(&mut worker, &out, request).await,
            // Pincer's tools never open a dialog, so no answer is awaited: nothing to do.
            Ok(WorkerInput::UiResponse(response)) => {
                tracing::debug!(id = %response.id, "extension_ui_response with no dialog open");
            }
            Err(e) => {
                if let DecodeError::Unknown { id: Some(id), .. } = &e {
                    tracing::debug!(%id, "unknown command (answered without its id, as pi does)");
                }
                out.line(e.response_line());
            }
        }
    }
    worker.shutdown().await;
    drop(worker);
    drop(out);
    // The writer ends once every handle is gone and the queue is written.
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    Ok(())
}

fn unreadable(error: &LineError) -> String {
    format!("Failed to parse command: {error}")
}
