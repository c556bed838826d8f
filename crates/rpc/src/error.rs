//! Errors of the RPC client, and how a worker ended ([`ExitInfo`]).

use std::time::Duration;

/// How a worker process ended, as far as the client could tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it (a worker that closed stdout and was then killed by the
    /// client reports that kill).
    pub signal: Option<i32>,
    /// The last ~4 KiB of its stderr (lossy UTF-8, trailing whitespace trimmed).
    pub stderr_tail: String,
}

impl ExitInfo {
    /// This exit as the error of a request it cut off.
    pub fn to_error(&self) -> RpcError {
        RpcError::Exited {
            code: self.code,
            signal: self.signal,
            stderr_tail: self.stderr_tail.clone(),
        }
    }
}

/// What can go wrong talking to an RPC worker. Only [`RpcError::Spawn`] and
/// [`RpcError::Exited`] mean the worker is gone; the others fail one request.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    #[error("cannot start RPC worker {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", exited_message(*code, *signal, stderr_tail))]
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
        stderr_tail: String,
    },
    #[error("RPC command {command} got no answer within {after:?}")]
    Timeout { command: String, after: Duration },
    /// The worker answered `success:false`.
    #[error("RPC command {command} failed: {message}")]
    Command { command: String, message: String },
    /// The command line would be over the limit; nothing was written.
    #[error("RPC command line of {len} bytes is over the {max}-byte limit")]
    TooLarge { len: usize, max: usize },
    /// A raw command that is not a JSON object with a string `type`.
    #[error("invalid RPC command: {message}")]
    Invalid { message: String },
    /// The worker's stdin was closed by [`super::RpcClient::stop`].
    #[error("RPC worker is stopping; its stdin is closed")]
    Closed,
}

fn exited_message(code: Option<i32>, signal: Option<i32>, stderr_tail: &str) -> String {
    let how = match (code, signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "closed its output".to_string(),
    };
    if stderr_tail.is_empty() {
        format!("RPC worker {how}")
    } else {
        format!("RPC worker {how}; stderr: {stderr_tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_messages_say_how_it_ended() {
        let e = |code, signal, tail: &str| {
            RpcError::Exited {
                code,
                signal,
                stderr_tail: tail.into(),
            }
            .to_string()
        };
        assert_eq!(
            e(Some(3), None, "boom"),
            "RPC worker exited with code 3; stderr: boom"
        );
        assert_eq!(e(None, Some(9), ""), "RPC worker was killed by signal 9");
        assert_eq!(e(None, None, ""), "RPC worker closed its output");
    }
}
