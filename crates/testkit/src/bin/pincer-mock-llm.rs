//! `pincer-mock-llm`: serves a scenario file with the mock LLM server until SIGINT/SIGTERM.
//! Prints exactly one line, `listening on http://HOST:PORT`, once it accepts connections.

mod support;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use pincer_testkit::{MockLlm, Scenario};

/// Mock LLM server speaking OpenAI, Anthropic, Google and pi-proxy streaming protocols.
#[derive(Debug, Parser)]
#[command(name = "pincer-mock-llm", version)]
struct Args {
    /// Scenario JSON file (default: echo every user message back).
    #[arg(long)]
    scenario: Option<PathBuf>,
    #[command(flatten)]
    listen: support::Listen,
}

fn main() -> ExitCode {
    support::exit_code("pincer-mock-llm", run(Args::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    let scenario = match &args.scenario {
        // The scenario error already names the file, line and column.
        Some(path) => Scenario::from_file(path).map_err(|err| anyhow::anyhow!("{err}"))?,
        None => Scenario::new(),
    };
    let addr = args.listen.resolve()?;
    support::block_on(serve(scenario, addr))
}

async fn serve(scenario: Scenario, addr: std::net::SocketAddr) -> anyhow::Result<()> {
    let server = MockLlm::start_on(scenario, addr)
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    support::print_line(&format!("listening on {}", server.url()))?;
    support::wait_for_signal().await?;
    server
        .shutdown()
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))
}
