//! Processes: whether a recorded pid is still the process it was (its start time from
//! `/proc/<pid>/stat` tells it from a later process with the same pid), signals to a pid or
//! a process group, and finding every process of a profile's Chromium by the
//! `--user-data-dir=` argument each of them carries — which finds them even when the
//! supervisor that knew their pids is gone.
//!
//! Never signals pid 0 or 1 (`kill(0)` / `killpg(1)` would hit this process's group or
//! init's); off Linux (no `/proc`) liveness falls back to `kill(pid, 0)` and the scan finds
//! nothing.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// What `/proc` says about a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    Gone,
    /// Running (not a zombie), with its start time when `/proc` knows it.
    Alive(Option<u64>),
}

fn nix_pid(pid: u32) -> Option<Pid> {
    i32::try_from(pid)
        .ok()
        .filter(|p| *p > 1)
        .map(Pid::from_raw)
}

/// State and start time from `/proc/<pid>/stat`'s text: the command name may hold spaces and
/// parentheses, so the fields start after the last `)`; state is the first, the start time
/// (clock ticks since boot) the 20th.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// Whether `pid` runs (zombies and dead processes do not).
pub(crate) async fn liveness(pid: u32) -> Liveness {
    let Some(nix) = nix_pid(pid) else {
        return Liveness::Gone;
    };
    match tokio::fs::read_to_string(format!("/proc/{pid}/stat")).await {
        Ok(stat) => match parse_stat(&stat) {
            Some(('Z' | 'X' | 'x', _)) => Liveness::Gone,
            Some((_, start)) => Liveness::Alive(Some(start)),
            None => Liveness::Alive(None),
        },
        Err(_)
            if tokio::fs::try_exists("/proc/self/stat")
                .await
                .unwrap_or(false) =>
        {
            Liveness::Gone
        }
        Err(_) => match kill(nix, None) {
            Ok(()) => Liveness::Alive(None),
            Err(_) => Liveness::Gone,
        },
    }
}

/// The start time of `pid`, if it runs and `/proc` knows it.
pub(crate) async fn start_time(pid: u32) -> Option<u64> {
    match liveness(pid).await {
        Liveness::Alive(start) => start,
        Liveness::Gone => None,
    }
}

/// Whether `pid` is still the process that started at `start` (any live `pid` when either
/// start time is unknown).
pub(crate) async fn still_running(pid: u32, start: Option<u64>) -> bool {
    match liveness(pid).await {
        Liveness::Gone => false,
        Liveness::Alive(now) => start.is_none() || now.is_none() || now == start,
    }
}

/// Sends `signal` to `pid`; errors (it is gone) are ignored.
pub(crate) fn signal_pid(pid: u32, signal: Signal) {
    if let Some(pid) = nix_pid(pid) {
        let _ = kill(pid, signal);
    }
}

/// Sends `signal` to process group `pgid`; errors (it is empty) are ignored.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    if let Some(pgid) = nix_pid(pgid) {
        let _ = killpg(pgid, signal);
    }
}

/// Whether `cmdline` (NUL-separated, or one space-joined string when Chromium rewrote its
/// title) holds `arg` as a whole argument.
fn has_arg(cmdline: &[u8], arg: &[u8]) -> bool {
    let mut from = 0;
    while let Some(at) = cmdline
        .get(from..)
        .and_then(|rest| rest.windows(arg.len()).position(|w| w == arg))
    {
        let start = from + at;
        let end = start + arg.len();
        let starts_arg = start == 0 || matches!(cmdline[start - 1], 0 | b' ');
        let ends_arg = end == cmdline.len() || matches!(cmdline[end], 0 | b' ');
        if starts_arg && ends_arg {
            return true;
        }
        from = start + 1;
    }
    false
}

/// The live processes (not this one) whose command line holds `arg`. Blocking: reads /proc.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: profile_processes"
)]
fn scan(arg: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if !has_arg(&cmdline, arg.as_bytes()) {
            continue;
        }
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
            .is_none_or(|(state, _)| matches!(state, 'Z' | 'X' | 'x'));
        if !zombie {
            found.push(pid);
        }
    }
    found
}

/// Every live process of the Chromium whose `--user-data-dir=` argument is `user_data_arg`.
pub(crate) async fn profile_processes(user_data_arg: &str) -> Vec<u32> {
    let arg = user_data_arg.to_owned();
    tokio::task::spawn_blocking(move || scan(&arg))
        .await
        .unwrap_or_default()
}

/// Kills (SIGKILL) every process of the profile's Chromium and waits up to `timeout` for
/// them to go; the pids still alive after that (empty when all went).
pub(crate) async fn reap_profile(user_data_arg: &str, timeout: Duration) -> Vec<u32> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = profile_processes(user_data_arg).await;
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        for pid in &left {
            signal_pid(*pid, Signal::SIGKILL);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits up to `timeout` until none of `pids` (with their start times) runs; whether they
/// all went.
pub(crate) async fn wait_gone(pids: &[(u32, Option<u64>)], timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        let mut any = false;
        for (pid, start) in pids {
            any |= still_running(*pid, *start).await;
        }
        if !any {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        assert_eq!(parse_stat(stat), Some(('S', 987654)));
        assert_eq!(parse_stat("42 (x) Z 1"), None);
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    #[test]
    fn an_argument_matches_only_whole() {
        let arg = b"--user-data-dir=/h/browser/default/user-data";
        assert!(has_arg(
            b"chromium\0--user-data-dir=/h/browser/default/user-data\0",
            arg
        ));
        assert!(has_arg(
            b"chromium --type=renderer --user-data-dir=/h/browser/default/user-data --x",
            arg
        ));
        assert!(has_arg(
            b"--user-data-dir=/h/browser/default/user-data",
            arg
        ));
        assert!(!has_arg(
            b"chromium\0--user-data-dir=/h/browser/default/user-data2\0",
            arg
        ));
        assert!(!has_arg(
            b"chromium\0x--user-data-dir=/h/browser/default/user-data\0",
            arg
        ));
        assert!(!has_arg(b"", arg));
    }

    #[test]
    fn pids_0_and_1_are_never_signalled() {
        assert_eq!(nix_pid(0), None);
        assert_eq!(nix_pid(1), None);
        assert_eq!(nix_pid(u32::MAX), None);
        assert_eq!(nix_pid(2), Some(Pid::from_raw(2)));
    }
}
