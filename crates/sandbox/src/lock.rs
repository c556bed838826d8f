//! Landlock: what the kernel supports, and `sandbox-exec`'s body, which restricts this
//! process and then replaces it with the command.
//!
//! Landlock restricts the calling thread (and what it execs), and building a ruleset
//! allocates, so it cannot run in a `pre_exec` hook of a multi-threaded parent; the parent
//! spawns `pincer sandbox-exec --policy … -- cmd` instead (the Codex CLI pattern), which
//! applies the ruleset to itself, sets `no_new_privs`, and execs `cmd`.
//!
//! Refusals (never silently unsandboxed): a kernel without Landlock; a policy without
//! network on a kernel below ABI 4 (which cannot restrict TCP); a path to hide that lies
//! inside a granted path (Landlock only grants, it cannot carve out); a ruleset the kernel
//! reports as not enforced. Older ABIs lacking finer rights (truncate: 3, ioctl on devices:
//! 5, signal and abstract-socket scoping: 6) still run, restricted as far as they can be.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::{SandboxError, SandboxPolicy};

/// The newest ABI whose rights this code asks for.
const TARGET: ABI = ABI::V6;

/// System paths every command may read and execute.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/dev/urandom",
    "/dev/random",
];
/// Devices every command may write.
pub const SYSTEM_WRITE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
    "/dev/ptmx",
];

/// The newest Landlock ABI the kernel supports (up to the one this code uses), or `None`
/// without Landlock. Probed by creating (not applying) rulesets that require each ABI's
/// rights.
pub fn abi() -> Option<u8> {
    [ABI::V6, ABI::V5, ABI::V4, ABI::V3, ABI::V2, ABI::V1]
        .into_iter()
        .find(|abi| supports(*abi))
        .map(|abi| abi as u8)
}

fn supports(abi: ABI) -> bool {
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi));
    let ruleset = match ruleset {
        Ok(r) if abi >= ABI::V4 => r.handle_access(AccessNet::from_all(abi)),
        other => other,
    };
    let ruleset = match ruleset {
        Ok(r) if abi >= ABI::V6 => r.scope(Scope::from_all(abi)),
        other => other,
    };
    ruleset.and_then(|r| r.create()).is_ok()
}

/// Whether `policy` can be enforced on a kernel with `abi` (`None`: no Landlock).
pub fn check(policy: &SandboxPolicy, abi: Option<u8>) -> Result<(), SandboxError> {
    let Some(abi) = abi else {
        return Err(SandboxError::LandlockUnavailable);
    };
    if !policy.network && abi < 4 {
        return Err(SandboxError::LandlockNoNetworkRules { abi });
    }
    let granted = granted(policy);
    for hidden in &policy.hide {
        let hidden = canonical(hidden);
        if let Some(grant) = granted.iter().find(|g| hidden.starts_with(canonical(g))) {
            return Err(SandboxError::CannotHide {
                hidden,
                granted: grant.clone(),
            });
        }
    }
    Ok(())
}

/// Every path the policy grants (system, devices, workspace, extras).
fn granted(policy: &SandboxPolicy) -> Vec<PathBuf> {
    SYSTEM_READ
        .iter()
        .chain(SYSTEM_WRITE)
        .map(PathBuf::from)
        .chain(std::iter::once(policy.workspace.clone()))
        .chain(policy.read_only.iter().cloned())
        .chain(policy.read_write.iter().cloned())
        .collect()
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// `sandbox-exec`: restricts this process as `policy` says, changes to its start directory
/// and execs `program args`. Returns only on failure (nothing was run).
pub fn exec(policy: &SandboxPolicy, program: &OsStr, args: &[OsString]) -> SandboxError {
    if let Err(e) = restrict(policy) {
        return e;
    }
    if let Err(e) = std::env::set_current_dir(policy.start_dir()) {
        return SandboxError::Io(format!(
            "cannot enter {}: {e}",
            policy.start_dir().display()
        ));
    }
    let e = std::process::Command::new(program).args(args).exec();
    SandboxError::Io(format!("cannot run {}: {e}", program.to_string_lossy()))
}

/// Applies `policy` to the calling thread (and whatever it execs from now on).
pub fn restrict(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    policy.validate()?;
    check(policy, abi())?;
    let read = AccessFs::from_read(TARGET);
    let all = AccessFs::from_all(TARGET);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(landlock_error)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(landlock_error)?;
    }
    let mut created = ruleset
        .scope(Scope::from_all(TARGET))
        .map_err(landlock_error)?
        .create()
        .map_err(landlock_error)?;
    let read_paths = SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(policy.read_only.iter().cloned());
    for path in read_paths {
        created = add(created, &path, read)?;
    }
    let write_paths = SYSTEM_WRITE
        .iter()
        .map(PathBuf::from)
        .chain(policy.read_write.iter().cloned())
        .chain(std::iter::once(policy.workspace.clone()));
    for path in write_paths {
        created = add(created, &path, all)?;
    }
    let status = created.restrict_self().map_err(landlock_error)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::LandlockNotEnforced);
    }
    if !status.no_new_privs {
        return Err(SandboxError::Io("could not set no_new_privs".to_owned()));
    }
    Ok(())
}

/// Grants `access` beneath `path` (skipped when it does not exist; a file gets the rights
/// a file can have).
fn add(
    created: landlock::RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, SandboxError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(created);
    };
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(TARGET)
    };
    let fd = PathFd::new(path).map_err(landlock_error)?;
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(landlock_error)
}

fn landlock_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Landlock(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxMode;

    #[test]
    fn a_policy_is_checked_against_the_kernels_abi() {
        let mut policy = SandboxPolicy::new(SandboxMode::Landlock, "/w/ws");
        assert_eq!(
            check(&policy, None).unwrap_err().to_string(),
            "tools.exec.sandbox is \"landlock\" but this kernel has no Landlock (Linux 5.13 or \
             newer with landlock in the lsm= boot list): use \"bwrap\" or \"off\""
        );
        assert_eq!(
            check(&policy, Some(3)).unwrap_err().to_string(),
            "this kernel's Landlock (ABI 3) cannot restrict the network (ABI 4, Linux 6.7): \
             refusing to run without network isolation; set network: true or use \"bwrap\""
        );
        check(&policy, Some(4)).unwrap();
        policy.network = true;
        check(&policy, Some(1)).unwrap();
        policy.hide = vec!["/w/ws/.pincer".into()];
        assert_eq!(
            check(&policy, Some(6)).unwrap_err().to_string(),
            "Landlock cannot hide /w/ws/.pincer: it is inside /w/ws, which the sandbox grants; \
             use \"bwrap\" or keep it out of the workspace"
        );
        policy.hide = vec!["/w/home".into()];
        check(&policy, Some(6)).unwrap();
    }
}
