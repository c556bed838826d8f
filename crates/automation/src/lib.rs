//! pincer-automation: what makes an agent act without being asked. [`cron`] keeps the jobs
//! (OpenClaw's `cron/jobs.json` and run logs), computes when each is due and hands a due job
//! to a [`cron::CronExecutor`]; [`heartbeat`] wakes an agent's main session on its interval
//! (HEARTBEAT.md, active hours, the `HEARTBEAT_OK` token) through a
//! [`heartbeat::HeartbeatRunner`]; [`system_events`] queues what happened (exec exits, cron
//! notices, wake requests) per session until its next turn, against a [`system_events::Clock`].
//!
//! The runners that implement these ports — running a turn on the gateway's lanes — are the
//! gateway server's (`pincer-gateway`'s `server::cron_runner` and `server::heartbeat_runner`).

pub mod cron;
pub mod heartbeat;
pub mod system_events;
