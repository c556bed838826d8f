//! Sandboxed commands on the CLI side: the hidden `pincer sandbox-exec --policy <json|file>
//! -- <cmd…>` (Landlock applied to itself, then exec; handled before anything else starts,
//! while this is the only thread), an agent's sandbox from the configuration
//! (`agents.list[].sandbox` over `tools.exec.sandbox` over `agents.defaults.sandbox`), and
//! `pincer doctor`'s lines on what this machine supports.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use pincer_config::{ResolvedSandbox, SandboxBackendName, SandboxModeName};
use pincer_sandbox::{BwrapSupport, EXEC_SUBCOMMAND, SandboxMode, SandboxPolicy, Support};
use pincer_tools::exec::ExecSandbox;

use crate::app::App;

/// Exit code when the sandbox could not be set up (nothing ran), as a shell's "cannot
/// execute".
const CANNOT_RUN: u8 = 126;

/// `Some(exit code)` when this process is `pincer sandbox-exec …` (it only returns if the
/// command could not be run); `None` for every other command.
pub fn intercept() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != EXEC_SUBCOMMAND {
        return None;
    }
    let rest: Vec<OsString> = args.collect();
    let error = match parse_args(&rest) {
        Ok((policy, program, args)) => {
            pincer_sandbox::sandbox_exec(&policy, &program, &args).to_string()
        }
        Err(e) => e,
    };
    eprintln!("pincer {EXEC_SUBCOMMAND}: {error}");
    Some(ExitCode::from(CANNOT_RUN))
}

/// `--policy <json|file> -- <program> [args…]`.
fn parse_args(args: &[OsString]) -> Result<(SandboxPolicy, OsString, Vec<OsString>), String> {
    let usage =
        || format!("usage: pincer {EXEC_SUBCOMMAND} --policy <json|file> -- <command> [args…]");
    let [flag, policy, dashes, program, rest @ ..] = args else {
        return Err(usage());
    };
    if flag != "--policy" || dashes != "--" {
        return Err(usage());
    }
    let policy = policy
        .to_str()
        .ok_or_else(|| "the policy is not UTF-8".to_owned())?;
    let policy = SandboxPolicy::parse_arg(policy).map_err(|e| e.to_string())?;
    Ok((policy, program.clone(), rest.to_vec()))
}

/// The agent's sandbox setting, resolved (`None`: off).
pub fn resolved(app: &App, agent_id: &str) -> Option<ResolvedSandbox> {
    let entry = app.agent_entry(agent_id);
    let section = entry
        .and_then(|a| a.tools.as_ref())
        .unwrap_or(&app.config.tools);
    entry
        .and_then(|a| a.sandbox.as_ref())
        .or_else(|| section.exec.as_ref().and_then(|e| e.sandbox.as_ref()))
        .or(app.config.agents.defaults.sandbox.as_ref())
        .and_then(|s| s.resolve())
}

/// What `exec` of `agent_id` runs in: `$PINCER_HOME` hidden, the configured grants.
pub fn exec_sandbox(app: &App, agent_id: &str) -> Result<Option<ExecSandbox>> {
    let Some(resolved) = resolved(app, agent_id) else {
        return Ok(None);
    };
    let paths = |list: &[String], key: &str| -> Result<Vec<PathBuf>> {
        list.iter()
            .map(|p| {
                let path = PathBuf::from(p);
                if !path.is_absolute() {
                    bail!("sandbox.{key}: {p:?} is not an absolute path");
                }
                Ok(path)
            })
            .collect()
    };
    let home = std::fs::canonicalize(&app.home).unwrap_or_else(|_| app.home.clone());
    Ok(Some(ExecSandbox {
        mode: match resolved.backend {
            SandboxBackendName::Off => SandboxMode::Off,
            SandboxBackendName::Bwrap => SandboxMode::Bwrap,
            SandboxBackendName::Landlock => SandboxMode::Landlock,
        },
        non_main_only: resolved.mode == SandboxModeName::NonMain,
        network: resolved.network,
        read_only: paths(&resolved.read_only, "readOnly")?,
        read_write: paths(&resolved.read_write, "readWrite")?,
        hide: vec![home],
    }))
}

/// `pincer doctor`'s sandbox lines (probes bwrap by running it: blocking).
pub fn doctor_lines(app: &App, support: &Support) -> Vec<String> {
    let bwrap = match &support.bwrap {
        BwrapSupport::Missing => {
            "sandbox bwrap: not installed (apt-get install bubblewrap)".to_owned()
        }
        BwrapSupport::Working { path, version } => {
            format!("sandbox bwrap: working ({}, {version})", path.display())
        }
        BwrapSupport::Broken { path, why } => {
            format!(
                "sandbox bwrap: found at {} but not working: {why}",
                path.display()
            )
        }
    };
    let landlock = match support.landlock_abi {
        None => "sandbox landlock: unavailable (kernel without Landlock)".to_owned(),
        Some(abi) if abi < 4 => format!(
            "sandbox landlock: ABI {abi} (files only: commands without network access are refused)"
        ),
        Some(abi) => format!("sandbox landlock: ABI {abi} (files and TCP)"),
    };
    let mut lines = vec![bwrap, landlock];
    for agent in pincer_turns::router::known_agent_ids(&app.config) {
        let line = match resolved(app, &agent) {
            None => format!("sandbox agent {agent}: off"),
            Some(r) => {
                let backend = match r.backend {
                    SandboxBackendName::Bwrap => "bwrap",
                    SandboxBackendName::Landlock => "landlock",
                    SandboxBackendName::Off => "off",
                };
                let ready = match r.backend {
                    SandboxBackendName::Bwrap => {
                        matches!(support.bwrap, BwrapSupport::Working { .. })
                    }
                    SandboxBackendName::Landlock => support
                        .landlock_abi
                        .is_some_and(|abi| r.network || abi >= 4),
                    SandboxBackendName::Off => true,
                };
                format!(
                    "sandbox agent {agent}: {backend}, {}, network {}{}",
                    if r.mode == SandboxModeName::NonMain {
                        "non-main sessions"
                    } else {
                        "all sessions"
                    },
                    if r.network { "on" } else { "off" },
                    if ready {
                        ""
                    } else {
                        " — NOT AVAILABLE here: its commands are refused"
                    }
                )
            }
        };
        lines.push(line);
    }
    lines
}

/// The WS `status` field `sandbox` (`None` when no agent has one): each sandboxed agent's
/// backend, mode and network, whether bwrap is on `PATH` and the Landlock ABI (both cheap:
/// a lookup and a syscall; `pincer doctor` runs bwrap to be sure).
pub fn status_value(app: &App) -> Option<serde_json::Value> {
    let agents: serde_json::Map<String, serde_json::Value> =
        pincer_turns::router::known_agent_ids(&app.config)
            .into_iter()
            .filter_map(|agent| {
                let r = resolved(app, &agent)?;
                let value = serde_json::json!({
                    "backend": r.backend,
                    "mode": r.mode,
                    "network": r.network,
                });
                Some((agent, value))
            })
            .collect();
    if agents.is_empty() {
        return None;
    }
    Some(serde_json::json!({
        "agents": agents,
        "bwrapFound": pincer_sandbox::bwrap::locate().is_some(),
        "landlockAbi": pincer_sandbox::lock::abi(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn sandbox_exec_arguments_are_strict() {
        let (policy, program, args) = parse_args(&os(&[
            "--policy",
            r#"{"mode":"landlock","workspace":"/w"}"#,
            "--",
            "/bin/sh",
            "-c",
            "true",
        ]))
        .unwrap();
        assert_eq!(policy, SandboxPolicy::new(SandboxMode::Landlock, "/w"));
        assert_eq!(program, "/bin/sh");
        assert_eq!(args, os(&["-c", "true"]));
        let usage = "usage: pincer sandbox-exec --policy <json|file> -- <command> [args…]";
        for bad in [
            &["--policy", "{}"][..],
            &["--policy", "{}", "sh", "x"],
            &["-p", "{}", "--", "sh"],
        ] {
            assert_eq!(parse_args(&os(bad)).unwrap_err(), usage);
        }
        assert!(
            parse_args(&os(&["--policy", "{}", "--", "sh"]))
                .unwrap_err()
                .starts_with("invalid sandbox policy: not a sandbox policy: missing field `mode`")
        );
    }
}
