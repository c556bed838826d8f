//! `pincer gateway protocol`: the WebSocket protocol this build's gateway speaks, as JSON —
//! the protocol versions, each method with the scope it needs and its params' JSON schema,
//! and the events. It reads the server's method table, so it cannot drift from it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

/// Prints the protocol to stdout.
pub fn run() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", render()?).context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The protocol as pretty-printed JSON.
fn render() -> Result<String> {
    serde_json::to_string_pretty(&pincer_gateway::server::methods::protocol())
        .context("cannot encode the protocol")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{Value, json};

    use super::*;

    fn method<'a>(protocol: &'a Value, name: &str) -> &'a Value {
        protocol["methods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()
    }

    #[test]
    fn it_prints_each_method_with_its_scope_and_params() {
        let protocol: Value = serde_json::from_str(&render().unwrap()).unwrap();
        assert_eq!(protocol["protocol"], json!({"min": 3, "max": 4}));
        assert_eq!(protocol["methods"].as_array().unwrap().len(), 98);
        assert_eq!(protocol["methods"][0]["name"], "health");

        let abort = method(&protocol, "chat.abort");
        assert_eq!(abort["scope"], "operator.write");
        assert_eq!(abort["params"]["required"], json!(["sessionKey"]));
        assert_eq!(
            abort["params"]["properties"]["runId"]["type"],
            json!(["string", "null"])
        );

        let media = method(&protocol, "chat.media.get");
        assert_eq!(media["scope"], "operator.read");
        assert_eq!(media["params"]["required"], json!(["sessionKey", "path"]));

        let approve = method(&protocol, "pairing.approve");
        assert_eq!(approve["scope"], "operator.admin");
        assert_eq!(approve["params"]["required"], json!(["channel", "code"]));

        let wait = method(&protocol, "agent.wait");
        assert_eq!(wait["scope"], "operator.read");
        assert_eq!(
            wait["params"]["properties"]["timeoutMs"]["type"],
            json!(["integer", "null"])
        );
        assert!(
            protocol["events"]
                .as_array()
                .unwrap()
                .contains(&json!("tick"))
        );
    }
}
