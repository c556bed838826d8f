//! The RPC `bash` command: runs a shell command in the worker's directory for the user (not
//! the model), returns pi's `{output, exitCode, cancelled, truncated}`, and words it for the
//! next prompt as pi's `bashExecution` message reaches the model ("Ran `cmd`" and the output).

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

/// The output kept (its end): a command may print without bound.
const MAX_OUTPUT_BYTES: usize = 50 * 1024;

/// What a command did.
pub struct BashResult {
    pub output: String,
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
}

impl BashResult {
    pub fn to_json(&self) -> Value {
        json!({
            "output": self.output, "exitCode": self.exit_code,
            "cancelled": self.cancelled, "truncated": self.truncated,
        })
    }

    /// How the model learns of it with the next prompt.
    pub fn for_model(&self, command: &str) -> String {
        let mut text = format!("Ran `{command}`\n```\n{}\n```", self.output.trim_end());
        if self.cancelled {
            text.push_str("\n\n(command cancelled)");
        } else if let Some(code) = self.exit_code.filter(|c| *c != 0) {
            text.push_str(&format!("\n\nCommand exited with code {code}"));
        }
        text
    }
}

/// Runs `command` with `sh -c` in `cwd`, stdout and stderr together, until it exits or
/// `cancel` fires (then it is killed). In `sandbox` when given (the agent's exec sandbox:
/// the wrapper runs the shell; an unavailable sandbox is an error, not a fallback).
pub async fn run(
    command: &str,
    cwd: &Path,
    cancel: CancellationToken,
    sandbox: Option<&pincer_sandbox::SandboxPolicy>,
) -> std::io::Result<BashResult> {
    // stderr joins stdout in order, as a terminal shows them.
    let args: Vec<std::ffi::OsString> = vec!["-c".into(), format!("exec 2>&1; {command}").into()];
    let (program, args) = match sandbox {
        None => ("sh".into(), args),
        Some(policy) => pincer_sandbox::wrap(policy, "/bin/sh".as_ref(), &args)
            .map_err(|e| std::io::Error::other(e.to_string()))?,
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let mut kept: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    let mut cancelled = false;
    loop {
        tokio::select! {
            read = stdout.read(&mut buf) => {
                let n = read?;
                if n == 0 { break; }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > MAX_OUTPUT_BYTES {
                    let cut = kept.len() - MAX_OUTPUT_BYTES;
                    kept.drain(..cut);
                    truncated = true;
                }
            }
            () = cancel.cancelled() => {
                cancelled = true;
                let _ = child.start_kill();
                break;
            }
        }
    }
    let status = child.wait().await?;
    Ok(BashResult {
        output: String::from_utf8_lossy(&kept).into_owned(),
        exit_code: if cancelled { None } else { status.code() },
        cancelled,
        truncated,
    })
}
