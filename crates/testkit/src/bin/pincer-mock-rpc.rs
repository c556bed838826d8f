//! `pincer-mock-rpc SCRIPT.json [LOG]`: a scripted fake worker speaking pi's RPC protocol on
//! stdin/stdout, for testing RPC clients. The script format is documented in
//! `pincer_testkit::mock_rpc`.

use std::path::PathBuf;
use std::process::ExitCode;

use pincer_testkit::mock_rpc;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(script) = args.next().map(PathBuf::from) else {
        eprintln!("usage: pincer-mock-rpc SCRIPT.json [LOG]");
        return ExitCode::from(2);
    };
    let log = args.next().map(PathBuf::from);
    let script = match mock_rpc::load_script(&script) {
        Ok(script) => script,
        Err(e) => {
            eprintln!("pincer-mock-rpc: {e}");
            return ExitCode::from(2);
        }
    };
    let code = mock_rpc::run(script, log.as_deref());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
