//! pincer-channels: the chat apps people talk to their agent from, each an adapter behind
//! the gateway's channel ports (`pincer_channel_port`), one cargo feature each; and
//! [`markdown`], which renders an agent's Markdown reply for each platform and splits it at
//! the platform's limit.

#[cfg(any(feature = "discord", feature = "slack", feature = "feishu"))]
pub mod frame_error;
pub mod markdown;
#[cfg(any(feature = "discord", feature = "slack", feature = "feishu"))]
mod socket;
#[cfg(any(
    feature = "telegram",
    feature = "discord",
    feature = "slack",
    feature = "feishu"
))]
#[macro_use]
mod support;

#[cfg(feature = "telegram")]
pub mod telegram;

#[cfg(feature = "discord")]
pub mod discord;

#[cfg(feature = "slack")]
pub mod slack;

#[cfg(feature = "feishu")]
pub mod feishu;
