//! What tests need to know about processes from `/proc` (Linux): which processes are still
//! alive in a process group, so a test can tell that a group really died, and when a process
//! started, so a test can tell it from a later one with the same pid.

/// Live (non-zombie) processes in process group `pgid`.
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: the fields start after the
        // last `)`. Then: state, ppid, pgrp.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            members.push(pid);
        }
    }
    members
}

/// Polls (blocking, every 50 ms, for at most `timeout`) until process group `pgid` has no
/// live member; the members still alive if it never empties.
pub fn wait_group_gone(pgid: u32, timeout: std::time::Duration) -> Result<(), Vec<u32>> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let members = live_group_members(pgid);
        if members.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(members);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The groups among `pgids` that still have live members after waiting up to 10 s for each,
/// with those members: empty when every group died.
pub fn groups_outliving(pgids: &[u32]) -> Vec<(u32, Vec<u32>)> {
    pgids
        .iter()
        .filter_map(|pgid| {
            wait_group_gone(*pgid, std::time::Duration::from_secs(10))
                .err()
                .map(|members| (*pgid, members))
        })
        .collect()
}

/// Starts `sleep 300` leading a process group of its own: a stand-in for a process a tool
/// left behind, which the code under test must (or must not) kill.
pub fn group_sleeper() -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    std::process::Command::new("sleep")
        .arg("300")
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .spawn()
}

/// The start time of process `pid` (field 22 of its `stat`, in clock ticks since boot): with
/// the pid it names one process, even after the pid is reused. `None` if it is gone.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}
