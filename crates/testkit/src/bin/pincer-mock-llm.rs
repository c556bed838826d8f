//! `pincer-mock-llm`: serves a scenario file with the mock LLM server until SIGINT/SIGTERM.
//! Prints exactly one line, `listening on http://HOST:PORT`, once it accepts connections.

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use pincer_testkit::{MockLlm, Scenario};

/// Mock LLM server speaking OpenAI, Anthropic, Google and pi-proxy streaming protocols.
#[derive(Debug, Parser)]
#[command(name = "pincer-mock-llm", version)]
struct Args {
    /// Scenario JSON file (default: echo every user message back).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Port to listen on (0 picks a free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Host to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pincer-mock-llm: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let scenario = match &args.scenario {
        // The scenario error already names the file, line and column.
        Some(path) => Scenario::from_file(path).map_err(|err| anyhow::anyhow!("{err}"))?,
        None => Scenario::new(),
    };
    let addr = resolve(&args.host, args.port)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    runtime.block_on(serve(scenario, addr))
}

fn resolve(host: &str, port: u16) -> anyhow::Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve host {host:?}"))?
        .next()
        .with_context(|| format!("host {host:?} has no address"))
}

async fn serve(scenario: Scenario, addr: SocketAddr) -> anyhow::Result<()> {
    let server = MockLlm::start_on(scenario, addr)
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.url()).context("cannot write to stdout")?;
        stdout.flush().context("cannot flush stdout")?;
    }
    wait_for_signal().await?;
    server
        .shutdown()
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))
}

#[cfg(unix)]
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.context("cannot listen for SIGINT"),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> anyhow::Result<()> {
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")
}
