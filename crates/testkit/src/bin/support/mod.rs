//! What the testkit's server binaries share: the `--host`/`--port` they listen on, the
//! runtime they serve on, their stdout lines, their exit code, and serving until SIGINT or
//! SIGTERM.

use std::future::Future;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;

use anyhow::Context;

/// Where a server binary listens.
#[derive(Debug, clap::Args)]
pub struct Listen {
    /// Port to listen on (0 picks a free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Host to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
}

impl Listen {
    pub fn resolve(&self) -> anyhow::Result<SocketAddr> {
        let host = &self.host;
        (host.as_str(), self.port)
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve host {host:?}"))?
            .next()
            .with_context(|| format!("host {host:?} has no address"))
    }
}

/// Success, or the error (with its causes) on stderr after `name: ` and a failure code.
pub fn exit_code(name: &str, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{name}: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `serve` to its end on a two-thread runtime.
pub fn block_on(serve: impl Future<Output = anyhow::Result<()>>) -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?
        .block_on(serve)
}

/// One line on stdout, flushed at once: whoever reads it may be waiting for it.
pub fn print_line(line: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}").context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")
}

#[cfg(unix)]
pub async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.context("cannot listen for SIGINT"),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
pub async fn wait_for_signal() -> anyhow::Result<()> {
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")
}
