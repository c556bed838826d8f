//! Sandboxed commands for Pincer's agents: the [`SandboxPolicy`] (which backend, the
//! workspace read-write, extra grants, paths to hide, network or not), what this machine
//! supports ([`probe`]), and [`wrap`], which turns a program and its arguments into what
//! to spawn instead:
//!
//! - `bwrap` ([`bwrap`]): `bwrap <flags> -- program args`, a read-only system, the
//!   workspace writable, private `/tmp`, minimal `/dev` and `/proc`, no network, hidden
//!   paths replaced by empty ones, a PID namespace that dies with bwrap.
//! - `landlock` ([`lock`]): `<this exe> sandbox-exec --policy <json> -- program args`; the
//!   helper restricts itself with Landlock, sets `no_new_privs`, and execs the program.
//!
//! Nothing here falls back to running unsandboxed: a missing or unusable backend is an
//! error that says what to install or configure.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

pub mod bwrap;
pub mod lock;
mod policy;

pub use bwrap::BwrapSupport;
pub use policy::{SandboxMode, SandboxPolicy};

/// The hidden subcommand of the `pincer` binary that applies a Landlock policy.
pub const EXEC_SUBCOMMAND: &str = "sandbox-exec";

/// Why a command cannot run sandboxed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "tools.exec.sandbox is \"bwrap\" but bwrap was not found on PATH: install bubblewrap \
         (apt-get install bubblewrap) or set tools.exec.sandbox to \"landlock\" or \"off\""
    )]
    BwrapMissing,
    #[error(
        "tools.exec.sandbox is \"landlock\" but this kernel has no Landlock (Linux 5.13 or \
         newer with landlock in the lsm= boot list): use \"bwrap\" or \"off\""
    )]
    LandlockUnavailable,
    #[error(
        "this kernel's Landlock (ABI {abi}) cannot restrict the network (ABI 4, Linux 6.7): \
         refusing to run without network isolation; set network: true or use \"bwrap\""
    )]
    LandlockNoNetworkRules { abi: u8 },
    #[error(
        "Landlock cannot hide {}: it is inside {}, which the sandbox grants; use \"bwrap\" or \
         keep it out of the workspace", hidden.display(), granted.display()
    )]
    CannotHide { hidden: PathBuf, granted: PathBuf },
    #[error("the kernel did not enforce the Landlock ruleset: refusing to run unsandboxed")]
    LandlockNotEnforced,
    #[error("landlock: {0}")]
    Landlock(String),
    #[error("invalid sandbox policy: {0}")]
    InvalidPolicy(String),
    #[error("sandbox: {0}")]
    Io(String),
}

/// What this machine offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    pub bwrap: BwrapSupport,
    /// The Landlock ABI (up to the newest this code uses), `None` without Landlock.
    pub landlock_abi: Option<u8>,
}

/// Probes bubblewrap (runs it once: blocking, up to 10 s) and Landlock.
pub fn probe() -> Support {
    Support {
        bwrap: bwrap::probe(),
        landlock_abi: lock::abi(),
    }
}

/// What to spawn to run `program args` under `policy`: unchanged when the mode is `off`,
/// `bwrap … -- program args`, or this executable's `sandbox-exec` for Landlock.
pub fn wrap(
    policy: &SandboxPolicy,
    program: &OsStr,
    args: &[OsString],
) -> Result<(OsString, Vec<OsString>), SandboxError> {
    let helper = match policy.mode {
        SandboxMode::Landlock => Some(std::env::current_exe().map_err(|e| {
            SandboxError::Io(format!("cannot find this program for sandbox-exec: {e}"))
        })?),
        _ => None,
    };
    wrap_with(
        policy,
        helper.as_deref().map(|p| p.as_os_str()),
        program,
        args,
    )
}

/// [`wrap`] with `helper` as the program that has the `sandbox-exec` subcommand (the
/// `pincer` binary; tests pass it explicitly).
pub fn wrap_with(
    policy: &SandboxPolicy,
    helper: Option<&OsStr>,
    program: &OsStr,
    args: &[OsString],
) -> Result<(OsString, Vec<OsString>), SandboxError> {
    policy.validate()?;
    match policy.mode {
        SandboxMode::Off => Ok((program.to_owned(), args.to_vec())),
        SandboxMode::Bwrap => {
            let bwrap = bwrap::locate().ok_or_else(bwrap::missing)?;
            Ok((bwrap.into_os_string(), bwrap::args(policy, program, args)))
        }
        SandboxMode::Landlock => {
            lock::check(policy, lock::abi())?;
            let helper = helper.ok_or_else(|| {
                SandboxError::Io("no sandbox-exec helper program was given".to_owned())
            })?;
            let mut out: Vec<OsString> = vec![
                EXEC_SUBCOMMAND.into(),
                "--policy".into(),
                policy.to_json().into(),
                "--".into(),
                program.to_owned(),
            ];
            out.extend(args.iter().cloned());
            Ok((helper.to_owned(), out))
        }
    }
}

/// The body of `sandbox-exec` (see [`lock`]): returns only if nothing was run.
pub fn sandbox_exec(policy: &SandboxPolicy, program: &OsStr, args: &[OsString]) -> SandboxError {
    if policy.mode != SandboxMode::Landlock {
        return SandboxError::InvalidPolicy(format!(
            "sandbox-exec applies Landlock policies, not \"{}\"",
            policy.mode
        ));
    }
    lock::exec(policy, program, args)
}
