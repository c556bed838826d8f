//! The browser runtime's supervisor as a binary of its own, for this crate's tests (the
//! shipped one is `pincer browser supervise`, which calls the same
//! `pincer_browser::runtime::supervise`).

use std::process::ExitCode;

use pincer_browser::runtime::{SupervisorArgs, supervise};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match SupervisorArgs::parse(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match supervise(args).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
