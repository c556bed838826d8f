//! bubblewrap: the flags that give a command a read-only view of the system, its workspace
//! read-write, a private `/tmp`, a minimal `/dev` and `/proc`, no network (unless asked),
//! the hidden paths replaced by empty ones, and its own PID namespace, which dies with
//! `bwrap` (`--die-with-parent`): killing the process group kills everything inside.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{SandboxError, SandboxPolicy};

/// How long the probe (`bwrap --ro-bind / / true`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// `bwrap` on `PATH` (the first executable one).
pub fn locate() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    locate_in(&path)
}

/// `bwrap` in the directories of `path` (a `PATH` value).
pub fn locate_in(path: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bwrap"))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What the machine's bubblewrap can do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BwrapSupport {
    Missing,
    /// Found, and `bwrap --ro-bind / / true` worked.
    Working {
        path: PathBuf,
        version: String,
    },
    /// Found, but it cannot create its namespaces here (why: its stderr).
    Broken {
        path: PathBuf,
        why: String,
    },
}

/// Finds bwrap and runs it once (blocking, at most [`PROBE_TIMEOUT`]).
pub fn probe() -> BwrapSupport {
    let Some(path) = locate() else {
        return BwrapSupport::Missing;
    };
    let version = run(&path, &["--version"])
        .map(|(_, out)| out.trim().trim_start_matches("bubblewrap ").to_owned())
        .unwrap_or_default();
    match run(&path, &["--ro-bind", "/", "/", "true"]) {
        Ok((true, _)) => BwrapSupport::Working { path, version },
        Ok((false, out)) => BwrapSupport::Broken {
            path,
            why: out.trim().to_owned(),
        },
        Err(why) => BwrapSupport::Broken { path, why },
    }
}

/// Runs `program args` with a deadline: (success, stdout then stderr).
fn run(program: &Path, args: &[&str]) -> Result<(bool, String), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + PROBE_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish within {PROBE_TIMEOUT:?}"));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

/// One mount, applied in order of depth (a deeper path always wins over a shallower one,
/// so a workspace inside a hidden directory stays visible, and a hidden directory inside
/// the workspace stays hidden).
enum Mount<'a> {
    RoBind(&'a Path),
    RoBindTry(&'a Path),
    Bind(&'a Path),
    BindTry(&'a Path),
    Dev(&'a Path),
    Proc(&'a Path),
    Tmpfs(&'a Path),
    /// A hidden file: `/dev/null` over it.
    NullFile(&'a Path),
}

impl<'a> Mount<'a> {
    fn path(&self) -> &'a Path {
        match self {
            Self::RoBind(p)
            | Self::RoBindTry(p)
            | Self::Bind(p)
            | Self::BindTry(p)
            | Self::Dev(p)
            | Self::Proc(p)
            | Self::Tmpfs(p)
            | Self::NullFile(p) => p,
        }
    }

    fn push(&self, args: &mut Vec<OsString>) {
        let (flag, source) = match self {
            Self::RoBind(_) => ("--ro-bind", None),
            Self::RoBindTry(_) => ("--ro-bind-try", None),
            Self::Bind(_) => ("--bind", None),
            Self::BindTry(_) => ("--bind-try", None),
            Self::Dev(_) => ("--dev", Some(None)),
            Self::Proc(_) => ("--proc", Some(None)),
            Self::Tmpfs(_) => ("--tmpfs", Some(None)),
            Self::NullFile(_) => ("--ro-bind", Some(Some("/dev/null"))),
        };
        args.push(flag.into());
        match source {
            None => args.push(self.path().into()),
            Some(Some(source)) => args.push(source.into()),
            Some(None) => {}
        }
        args.push(self.path().into());
    }
}

/// `bwrap`'s arguments for `policy`, ending with `-- program args`.
pub fn args(policy: &SandboxPolicy, program: &OsStr, rest: &[OsString]) -> Vec<OsString> {
    let mut out: Vec<OsString> = ["--die-with-parent", "--unshare-all"]
        .into_iter()
        .map(OsString::from)
        .collect();
    if policy.network {
        out.push("--share-net".into());
    }
    // A new session keeps the command from pushing input into our terminal (TIOCSTI); a
    // pty command needs its terminal as its controlling one.
    if !policy.tty {
        out.push("--new-session".into());
    }
    let mut mounts = vec![
        Mount::RoBind(Path::new("/")),
        Mount::Dev(Path::new("/dev")),
        Mount::Proc(Path::new("/proc")),
        Mount::Tmpfs(Path::new("/tmp")),
    ];
    mounts.extend(policy.read_only.iter().map(|p| Mount::RoBindTry(p)));
    mounts.extend(policy.read_write.iter().map(|p| Mount::BindTry(p)));
    mounts.push(Mount::Bind(&policy.workspace));
    for hidden in &policy.hide {
        match std::fs::metadata(hidden) {
            Ok(meta) if meta.is_dir() => mounts.push(Mount::Tmpfs(hidden)),
            Ok(_) => mounts.push(Mount::NullFile(hidden)),
            // Nothing there to hide.
            Err(_) => {}
        }
    }
    // Stable: at equal depth the later (hidden) one wins.
    mounts.sort_by_key(|m| m.path().components().count());
    for mount in &mounts {
        mount.push(&mut out);
    }
    out.push("--chdir".into());
    out.push(policy.start_dir().into());
    out.push("--".into());
    out.push(program.to_owned());
    out.extend(rest.iter().cloned());
    out
}

/// The refusal when bwrap was asked for and is not installed.
pub(crate) fn missing() -> SandboxError {
    SandboxError::BwrapMissing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxMode;

    fn strings(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn the_flags_order_mounts_by_depth_and_end_with_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let workspace = home.join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        let secret = dir.path().join("secret.json");
        std::fs::write(&secret, "{}").unwrap();
        let mut policy = SandboxPolicy::new(SandboxMode::Bwrap, &workspace);
        policy.hide = vec![home.clone(), secret.clone(), dir.path().join("absent")];
        let args = args(&policy, OsStr::new("sh"), &["-c".into(), "true".into()]);
        let (home, ws, secret) = (
            home.to_str().unwrap(),
            workspace.to_str().unwrap(),
            secret.to_str().unwrap(),
        );
        let want = [
            "--die-with-parent",
            "--unshare-all",
            "--new-session",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            // The home and the secret file are at the same depth (in the order given),
            // the workspace one deeper: visible inside the hidden home.
            "--tmpfs",
            home,
            "--ro-bind",
            "/dev/null",
            secret,
            "--bind",
            ws,
            ws,
            "--chdir",
            ws,
            "--",
            "sh",
            "-c",
            "true",
        ];
        assert_eq!(strings(&args), want);
    }

    #[test]
    fn network_and_tty_change_the_namespace_flags() {
        let mut policy = SandboxPolicy::new(SandboxMode::Bwrap, "/w/ws");
        policy.network = true;
        policy.tty = true;
        policy.workdir = Some("/w/ws/sub".into());
        let args = args(&policy, OsStr::new("sh"), &[]);
        assert_eq!(
            strings(&args),
            [
                "--die-with-parent",
                "--unshare-all",
                "--share-net",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--tmpfs",
                "/tmp",
                "--bind",
                "/w/ws",
                "/w/ws",
                "--chdir",
                "/w/ws/sub",
                "--",
                "sh",
            ]
        );
    }

    #[test]
    fn locate_finds_only_an_executable_bwrap_in_absolute_directories() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("bwrap"), "").unwrap();
        std::fs::write(b.join("bwrap"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("bwrap"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("rel"), &a, &b]).unwrap();
        assert_eq!(locate_in(&path), Some(b.join("bwrap")));
        assert_eq!(locate_in(&std::env::join_paths([&a]).unwrap()), None);
    }
}
