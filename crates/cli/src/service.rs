//! What the gateway keeps on disk and how to tell whether it runs: the service file
//! `$PINCER_HOME/service/gateway.json` (pid, port, … of the daemon), process checks (alive,
//! not a zombie, really a `pincer gateway`), the gateway token (environment, config, or the
//! file `$PINCER_HOME/gateway-token`), the `/readyz` probe, and the message for a port
//! someone else holds.

use std::io::{ErrorKind, Read as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pincer_ai::env::EnvSource;
use pincer_base::Secret;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The environment variable whose value, when set and not empty, is the gateway token.
pub const TOKEN_ENV: &str = "PINCER_GATEWAY_TOKEN";

/// `$PINCER_HOME/service/gateway.json`.
pub fn state_path(home: &Path) -> PathBuf {
    home.join("service").join("gateway.json")
}

/// `$PINCER_HOME/logs/gateway.log`.
pub fn log_path(home: &Path) -> PathBuf {
    home.join("logs").join("gateway.log")
}

/// `$PINCER_HOME/gateway-token`.
pub fn token_path(home: &Path) -> PathBuf {
    home.join("gateway-token")
}

/// The service file: what `gateway start --daemon` started (lainclaw's
/// `gateway-service.json`, plus the port and bind address).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceState {
    pub pid: u32,
    pub port: u16,
    pub bind: String,
    pub started_at: String,
    pub log_path: PathBuf,
    pub state_path: PathBuf,
    pub command: String,
    pub argv: Vec<String>,
    /// The first chat channel the daemon runs (lainclaw's `channel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Every chat channel it runs.
    #[serde(default)]
    pub channels: Vec<String>,
    /// Its run settings with their sources ([`crate::gateway::run_settings::RunSettings::report`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<serde_json::Value>,
}

impl ServiceState {
    /// Where a probe reaches the daemon (`lan` → 127.0.0.1).
    pub fn probe_addr(&self) -> SocketAddr {
        let ip = match self.bind.as_str() {
            "loopback" | "localhost" | "lan" => IpAddr::V4(Ipv4Addr::LOCALHOST),
            other => other.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        };
        probe_addr(ip, self.port)
    }
}

/// The service file, if there is one. A file that cannot be parsed is an error naming it.
pub fn read_state(path: &Path) -> Result<Option<ServiceState>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{} is not a valid service file", path.display())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// [`read_state`], with an unreadable file reported on stderr and treated as absent: a
/// broken leftover must not keep the gateway from starting or stopping.
pub fn read_state_lenient(path: &Path) -> Option<ServiceState> {
    read_state(path).unwrap_or_else(|e| {
        eprintln!("warning: {e:#}; treating the gateway as not running");
        None
    })
}

/// Writes the service file atomically, 0600.
pub fn write_state(state: &ServiceState) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(state)?;
    bytes.push(b'\n');
    pincer_store::write_atomic(&state.state_path, &bytes, Some(0o600))
        .with_context(|| format!("cannot write {}", state.state_path.display()))
}

/// Removes the service file; a missing one is fine.
pub fn remove_state(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The service file's daemon, if it names a gateway process that is still alive.
pub fn running_daemon(home: &Path) -> Option<ServiceState> {
    read_state_lenient(&state_path(home)).filter(|s| is_gateway_process(s.pid))
}

/// Whether `pid` is alive and is a `pincer gateway` process. A pid from a stale file may
/// belong to an unrelated process by now, which must never be reported as the gateway or
/// signalled.
pub fn is_gateway_process(pid: u32) -> bool {
    is_alive(pid) && looks_like_gateway(pid)
}

/// Whether `pid` exists and has not exited. A process that exited but was not reaped by
/// its parent still answers `kill(pid, 0)`; the daemon's adoptive parent (often PID 1 of a
/// container) may never reap it, so zombies count as dead.
pub fn is_alive(pid: u32) -> bool {
    let Some(pid) = to_pid(pid) else {
        return false;
    };
    match kill(pid, None) {
        Ok(()) | Err(Errno::EPERM) => !is_zombie(pid),
        Err(_) => false,
    }
}

/// Sends `signal` to `pid`; a process that is already gone is not an error.
pub fn send_signal(pid: u32, signal: Signal) -> Result<()> {
    let Some(raw) = to_pid(pid) else {
        bail!("invalid pid {pid}");
    };
    match kill(raw, signal) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot send {signal} to pid {pid}")),
    }
}

fn to_pid(pid: u32) -> Option<Pid> {
    // 0 and negative values address process groups, never one process.
    i32::try_from(pid)
        .ok()
        .filter(|p| *p > 0)
        .map(Pid::from_raw)
}

/// Linux: the state letter of `/proc/<pid>/stat` (after the command name, which may itself
/// contain spaces and parentheses). Elsewhere there is no procfs and nothing is a zombie.
fn is_zombie(pid: Pid) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next())
        .is_some_and(|state| matches!(state, 'Z' | 'X'))
}

/// Linux: the command line must hold `gateway` and `run`. Without procfs the pid is
/// trusted.
fn looks_like_gateway(pid: u32) -> bool {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) => {
            let args: Vec<&[u8]> = bytes.split(|b| *b == 0).collect();
            args.contains(&b"gateway".as_slice()) && args.contains(&b"run".as_slice())
        }
        Err(_) => !Path::new("/proc/self/cmdline").exists(),
    }
}

/// Where to probe a server listening on `ip`: the unspecified address is reached through
/// loopback.
pub fn probe_addr(ip: IpAddr, port: u16) -> SocketAddr {
    let ip = match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        other => other,
    };
    SocketAddr::new(ip, port)
}

/// Whether `GET /readyz` at `addr` answers 200 within a second. A few bytes of HTTP/1.1
/// by hand: the binary needs no HTTP client for this.
pub async fn is_ready(addr: SocketAddr) -> bool {
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let request = format!("GET /readyz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut head = Vec::with_capacity(16);
        let mut buf = [0u8; 16];
        while head.len() < 12 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        std::io::Result::Ok(head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), probe).await,
        Ok(Ok(true))
    )
}

/// A failed bind of `ip:port` as a message that says what to do.
pub fn bind_error(home: &Path, ip: IpAddr, port: u16, error: &std::io::Error) -> anyhow::Error {
    match error.kind() {
        ErrorKind::AddrInUse => anyhow::anyhow!(port_in_use_message(home, ip, port)),
        ErrorKind::AddrNotAvailable => anyhow::anyhow!(
            "cannot listen on {ip}: it is not an address of this machine; use --bind \
             loopback, lan or one of this machine's addresses"
        ),
        ErrorKind::PermissionDenied => anyhow::anyhow!(
            "not allowed to listen on port {port} ({error}); ports below 1024 need \
             privileges, choose another with --port"
        ),
        _ => anyhow::anyhow!("cannot listen on {ip} port {port}: {error}"),
    }
}

/// Why `ip:port` cannot be bound: the daemon of the service file, when it holds that port,
/// else some other program.
fn port_in_use_message(home: &Path, ip: IpAddr, port: u16) -> String {
    match running_daemon(home) {
        Some(daemon) if daemon.port == port => format!(
            "port {port} is in use by the Pincer gateway daemon (pid {}, started {}); stop it \
             with `pincer gateway stop`, or choose another port with --port",
            daemon.pid, daemon.started_at
        ),
        _ => format!(
            "port {port} on {ip} is already in use by another program; choose another port \
             with --port N (or PINCER_GATEWAY_PORT)"
        ),
    }
}

/// Where the gateway token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// `PINCER_GATEWAY_TOKEN`.
    Env,
    /// The config's `gateway.auth.token`.
    Config,
    /// The token file.
    File,
    /// The token file, created just now.
    Generated,
}

/// The token clients must present. A [`Secret`]: its derived `Debug` hides the value, so
/// it cannot end up in a log by accident.
#[derive(Debug, Clone)]
pub struct GatewayToken {
    pub value: Secret,
    pub source: TokenSource,
}

/// Creates `$PINCER_HOME` (0700) if it does not exist yet, before anything is written
/// into it.
pub fn ensure_home(home: &Path) -> Result<()> {
    if !home.exists() {
        pincer_base::create_private_dir_all(home)
            .with_context(|| format!("cannot create {}", home.display()))?;
    }
    Ok(())
}

/// `PINCER_GATEWAY_TOKEN` when set and not empty, else `configured` (the config's
/// `gateway.auth.token`), else the token file (created if missing).
pub fn gateway_token(
    home: &Path,
    env: &dyn EnvSource,
    configured: Option<&str>,
) -> Result<GatewayToken> {
    if let Some(value) = env.var(TOKEN_ENV).filter(|v| !v.trim().is_empty()) {
        return Ok(GatewayToken {
            value: value.into(),
            source: TokenSource::Env,
        });
    }
    // The config refuses an empty token; the check here keeps a blank one from ever
    // becoming a password that anyone can guess.
    if let Some(value) = configured.filter(|v| !v.trim().is_empty()) {
        return Ok(GatewayToken {
            value: value.into(),
            source: TokenSource::Config,
        });
    }
    file_token(home)
}

/// The token of `$PINCER_HOME/gateway-token`: 32 random bytes as hex, created (0600,
/// atomically) on first use.
pub fn file_token(home: &Path) -> Result<GatewayToken> {
    let path = token_path(home);
    match std::fs::File::open(&path) {
        Ok(mut file) => {
            tighten_permissions(&path, &file);
            let mut text = String::new();
            // A token is 64 bytes; a huge file is not a token and is not read whole.
            file.by_ref()
                .take(4096)
                .read_to_string(&mut text)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let value = text.trim().to_owned();
            if value.is_empty() || value.len() >= 4096 {
                bail!(
                    "{} does not hold a token; delete it and run `pincer gateway token` to \
                     create a new one",
                    path.display()
                );
            }
            Ok(GatewayToken {
                value: value.into(),
                source: TokenSource::File,
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            ensure_home(home)?;
            let value = random_token()?;
            pincer_store::write_atomic(&path, format!("{value}\n").as_bytes(), Some(0o600))
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(GatewayToken {
                value: value.into(),
                source: TokenSource::Generated,
            })
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// A token file others can read is set back to 0600 (and said so): it is a password.
fn tighten_permissions(path: &Path, file: &std::fs::File) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = file.metadata() else {
        return;
    };
    if meta.permissions().mode() & 0o077 != 0 {
        match file.set_permissions(std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => tracing::warn!(
                "{} was readable by other users; its permissions are now 0600",
                path.display()
            ),
            Err(e) => tracing::warn!(
                "{} is readable by other users and cannot be changed ({e}); run `chmod 600` on it",
                path.display()
            ),
        }
    }
}

/// 32 bytes from the operating system's random source, as 64 hex digits.
fn random_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot generate a gateway token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let a = random_token().unwrap();
        let b = random_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_token_debug_hides_the_value() {
        let token = GatewayToken {
            value: "secret-value".into(),
            source: TokenSource::File,
        };
        assert_eq!(
            format!("{token:?}"),
            "GatewayToken { value: Secret(***), source: File }"
        );
    }

    #[test]
    fn this_process_is_alive_and_a_bogus_pid_is_not() {
        assert!(is_alive(std::process::id()));
        assert!(!is_alive(0));
        assert!(!is_alive(u32::MAX));
    }

    #[test]
    fn unspecified_addresses_are_probed_on_loopback() {
        assert_eq!(
            probe_addr(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 5),
            "127.0.0.1:5".parse().unwrap()
        );
        assert_eq!(
            probe_addr("10.0.0.2".parse().unwrap(), 5),
            "10.0.0.2:5".parse().unwrap()
        );
    }
}
