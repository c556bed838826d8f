//! How many heaps glibc's allocator keeps for the gateway. glibc gives a thread that finds
//! the existing arenas busy an arena of its own, up to eight per core, and an arena keeps
//! the memory it once held. The gateway's file work runs on tokio's blocking pool, whose
//! threads come and go, so over a long run most of them end up with an arena: 11,000
//! turns left RSS at 68.5 MiB with glibc's limit and at 59.2 MiB with two arenas on two
//! cores, at the same throughput. One arena per core keeps every worker thread on a heap of
//! its own while the short-lived blocking threads share.

/// Caps glibc's arenas at the number of cores, unless the user set `MALLOC_ARENA_MAX`
/// (glibc has read it already; theirs wins). Other allocators (musl's) have no arenas.
pub fn limit_to_cores() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let arenas = libc::c_int::try_from(cores.max(2)).unwrap_or(libc::c_int::MAX);
        // SAFETY: `mallopt` takes two plain integers and is safe to call from any thread
        // at any time: glibc takes its own malloc lock to change the setting, which only
        // bounds how many arenas it creates from then on (existing ones stay valid). No
        // pointer crosses the boundary. A refusal (return value 0) leaves glibc's default,
        // which is correct, only larger.
        #[allow(unsafe_code)]
        let accepted = unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
        if accepted == 0 {
            tracing::debug!("glibc refused M_ARENA_MAX; its default arena limit stays");
        }
    }
}
