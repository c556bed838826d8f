//! What the channels' setups share: the loop over a channel's accounts, each account's
//! context (its required fields, the media staging directory, the HTTP client), the
//! defaults of `apiBaseUrl` and `mediaMaxMb`, the access rules from a section, and the
//! endpoint around one account's adapter. A channel's module builds only its adapter.

// A build without any channel feature uses none of this.
#![cfg_attr(
    not(any(
        feature = "telegram",
        feature = "discord",
        feature = "slack",
        feature = "feishu"
    )),
    allow(dead_code)
)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use pincer_base::Secret;
use pincer_channel_port::ChannelAdapter;
use pincer_channel_port::supervisor::Backoff;
use pincer_config::{AccessFields, ChannelSection, DmPolicyName, GroupPolicyName};
use pincer_gateway::pairing::{DmPolicy, GroupPolicy};
use pincer_gateway::server::block_delivery::BlockStreaming;
use pincer_gateway::server::channel_ingress::{AccessSettings, ChannelEndpoint};

use crate::app::App;

/// The endpoints of every enabled account of `section`, each adapter made by `adapter`
/// from the account's context and the account's view of the section.
pub(super) fn account_endpoints<C: ChannelSection>(
    app: &App,
    section: &C,
    client: &reqwest::Client,
    adapter: impl Fn(&AccountContext<'_>, &C) -> Result<Arc<dyn ChannelAdapter>>,
) -> Result<Vec<ChannelEndpoint>> {
    pincer_config::enabled_accounts(section)
        .into_iter()
        .map(|(id, config)| {
            let context = AccountContext {
                account: Account {
                    id,
                    channel: C::NAME,
                },
                app,
                client,
            };
            Ok(endpoint(app, &config, adapter(&context, &config)?))
        })
        .collect()
}

/// What one account's adapter is built from besides its section: the account, and what
/// every adapter takes from the gateway (its home, the one HTTP client).
pub(super) struct AccountContext<'a> {
    pub account: Account,
    pub app: &'a App,
    client: &'a reqwest::Client,
}

impl AccountContext<'_> {
    /// The shared HTTP client (a handle on its one connection pool).
    pub(super) fn client(&self) -> reqwest::Client {
        self.client.clone()
    }

    /// Where adapters save received files until the ingress has routed the message and
    /// moves them into the agent's workspace inbox (`pincer_turns::media_inbox`).
    pub(super) fn media_dir(&self) -> PathBuf {
        self.app.home.join("media").join("staging")
    }
}

/// One enabled account of a channel: its id, and where its settings live (for errors).
pub(super) struct Account {
    pub id: Option<String>,
    channel: &'static str,
}

impl Account {
    /// `channels.<channel>`, or `channels.<channel>.accounts.<id>`.
    pub(super) fn path(&self) -> String {
        match &self.id {
            Some(id) => format!("channels.{}.accounts.{id}", self.channel),
            None => format!("channels.{}", self.channel),
        }
    }

    /// `value` when set and not blank; else an error naming `field` and `source`, what to
    /// set it to.
    pub(super) fn required(
        &self,
        value: Option<&str>,
        field: &str,
        source: &str,
    ) -> Result<String> {
        value
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
            .with_context(|| format!("{}.{field} is empty: set it to {source}", self.path()))
    }

    /// [`Account::required`] of a secret field.
    pub(super) fn required_secret(
        &self,
        value: Option<&Secret>,
        field: &str,
        source: &str,
    ) -> Result<String> {
        self.required(value.map(Secret::expose), field, source)
    }
}

/// The endpoint of one account's `adapter`, with the access rules and block streaming of
/// its section `config`.
pub(super) fn endpoint<C: ChannelSection>(
    app: &App,
    config: &C,
    adapter: Arc<dyn ChannelAdapter>,
) -> ChannelEndpoint {
    ChannelEndpoint {
        adapter,
        access: access_settings(config.access()),
        block_streaming: BlockStreaming::resolve(
            &app.config.agents.defaults,
            C::NAME,
            config.streaming(),
        ),
        backoff: Backoff::default(),
    }
}

/// A section's `apiBaseUrl`, else the adapter's `default`.
// Feishu names its API by `domain` instead, so a Feishu-only build leaves this unused.
#[cfg_attr(
    not(any(feature = "telegram", feature = "discord", feature = "slack")),
    allow(dead_code)
)]
pub(super) fn api_base(api_base_url: Option<&str>, default: &str) -> String {
    api_base_url.unwrap_or(default).to_owned()
}

/// A section's `mediaMaxMb` in bytes, else the adapter's `default`.
pub(super) fn media_max_bytes(media_max_mb: Option<u64>, default: u64) -> u64 {
    media_max_mb.map_or(default, |mb| mb * 1024 * 1024)
}

/// The gateway's access rules from a section's `dmPolicy`, `allowFrom`, `groupPolicy`,
/// `groupAllowFrom` and `groups` (the same fields on every channel).
pub(super) fn access_settings(access: AccessFields<'_>) -> AccessSettings {
    let groups: HashMap<String, bool> = access
        .groups
        .iter()
        .filter_map(|(id, g)| g.require_mention.map(|m| (id.clone(), m)))
        .collect();
    AccessSettings {
        dm_policy: match access.dm_policy.unwrap_or_default() {
            DmPolicyName::Pairing => DmPolicy::Pairing,
            DmPolicyName::Allowlist => DmPolicy::Allowlist,
            DmPolicyName::Open => DmPolicy::Open,
            DmPolicyName::Disabled => DmPolicy::Disabled,
        },
        allow_from: access
            .allow_from
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        group_policy: match access.group_policy.unwrap_or_default() {
            GroupPolicyName::Open => GroupPolicy::Open,
            GroupPolicyName::Allowlist => GroupPolicy::Allowlist,
            GroupPolicyName::Disabled => GroupPolicy::Disabled,
        },
        group_allow_from: access
            .group_allow_from
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        require_mention: true,
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_named_with_its_section() {
        let work = Account {
            id: Some("work".into()),
            channel: "slack",
        };
        assert_eq!(work.path(), "channels.slack.accounts.work");
        assert_eq!(
            work.required(Some(" x "), "botToken", "a token").unwrap(),
            " x "
        );
        assert_eq!(
            work.required(Some(" \t"), "botToken", "a token")
                .unwrap_err()
                .to_string(),
            "channels.slack.accounts.work.botToken is empty: set it to a token"
        );
        let own = Account {
            id: None,
            channel: "telegram",
        };
        assert_eq!(
            own.required_secret(None, "botToken", "the token @BotFather gave you")
                .unwrap_err()
                .to_string(),
            "channels.telegram.botToken is empty: set it to the token @BotFather gave you"
        );
    }
}
