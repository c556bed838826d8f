//! `channel_section!`: the one definition of the fields every channel's section shares (the
//! access fields, `mediaMaxMb`, the block-streaming keys, `accounts`), of their docs, and
//! of the [`ChannelSection`](super::ChannelSection) impl over them. A channel states only
//! what is its own: its name, its own fields (credentials, API address, …: all optional),
//! which of them are credentials, and the words its platform puts into the shared docs
//! (what kind of ids, which defaults).

/// Defines a channel's section struct and its `ChannelSection` impl. The shared fields keep
/// their place in the struct (after `enabled` and the channel's own fields), so the
/// serialized form and the schema are what the hand-written structs had.
///
/// The shared fields' docs (which are the schema's descriptions) are composed from the
/// channel's words under `docs`:
/// - `enabled: "a token is set"`: "Off without deleting the settings (default on when a
///   token is set)."
/// - `allow_from: "Discord user ids"`: "Discord user ids allowed to DM the agent; …".
/// - `group_allow_from`: the whole doc, written as a doc comment (its wording differs by
///   platform beyond a fill-in).
/// - `groups: "channel id"`: "Per channel id, or `"*"` for all."
/// - `media_max_mb: "attachment", 8`: "Largest inbound attachment taken, in MB (default 8)."
/// - `text_chunk_limit: 2000`: "The most chars of one streamed message (default 2000)."
/// - `accounts: "bots"`: "Further bots, by account id; …".
///
/// `own_keys` are the keys an account never inherits from the channel;
/// `credentials` are the own fields any one of which, set, makes the section a bot itself.
macro_rules! channel_section {
    (
        name: $channel:literal,
        pub struct $name:ident {
            $($(#[$own_doc:meta])* pub $own:ident: Option<$own_ty:ty>,)*
        }
        own_keys: [$($own_key:literal),* $(,)?],
        credentials: [$($credential:ident),+ $(,)?],
        docs {
            enabled: $enabled_when:literal,
            allow_from: $dm_senders:literal,
            $(#[$group_allow_doc:meta])*
            group_allow_from,
            groups: $group_key:literal,
            media_max_mb: $media_kind:literal, $media_default:literal,
            text_chunk_limit: $chunk_default:literal,
            accounts: $accounts_are:literal,
        }
    ) => {
        #[doc = concat!("`channels.", $channel, "` (and each of its `accounts`).")]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            #[doc = concat!(
                "Off without deleting the settings (default on when ", $enabled_when, ")."
            )]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub enabled: Option<bool>,
            $(
                $(#[$own_doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $own: Option<$own_ty>,
            )*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dm_policy: Option<$crate::channels::DmPolicyName>,
            #[doc = concat!($dm_senders, " allowed to DM the agent; `\"*\"` with `open`.")]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub allow_from: Option<Vec<String>>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub group_policy: Option<$crate::channels::GroupPolicyName>,
            $(#[$group_allow_doc])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub group_allow_from: Option<Vec<String>>,
            #[doc = concat!("Per ", $group_key, ", or `\"*\"` for all.")]
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub groups: BTreeMap<String, $crate::channels::GroupConfig>,
            #[doc = concat!(
                "Largest inbound ", $media_kind, " taken, in MB (default ", $media_default, ")."
            )]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub media_max_mb: Option<u64>,
            /// Replies sent in blocks as they stream (`true`) or whole (`false`); unset:
            /// `agents.defaults.blockStreamingDefault`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub block_streaming: Option<bool>,
            /// Overrides `agents.defaults.blockStreamingCoalesce` here.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub block_streaming_coalesce:
                Option<$crate::streaming::BlockStreamingCoalesceConfig>,
            #[doc = concat!(
                "The most chars of one streamed message (default ", $chunk_default, ")."
            )]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub text_chunk_limit: Option<std::num::NonZeroUsize>,
            #[doc = concat!(
                "Further ", $accounts_are,
                ", by account id; each field they leave out comes from the channel."
            )]
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub accounts: BTreeMap<String, $name>,
        }

        impl $crate::channels::ChannelSection for $name {
            const NAME: &'static str = $channel;
            const OWN_KEYS: &'static [&'static str] = &[$($own_key),*];

            fn has_credentials(&self) -> bool {
                $(self.$credential.is_some())||+
            }

            fn enabled(&self) -> Option<bool> {
                self.enabled
            }

            fn accounts(&self) -> &BTreeMap<String, Self> {
                &self.accounts
            }

            fn streaming(&self) -> $crate::streaming::StreamingFields {
                $crate::streaming::StreamingFields {
                    block_streaming: self.block_streaming,
                    block_streaming_coalesce: self.block_streaming_coalesce,
                    text_chunk_limit: self.text_chunk_limit,
                }
            }

            fn access(&self) -> $crate::channels::AccessFields<'_> {
                $crate::channels::AccessFields {
                    dm_policy: self.dm_policy,
                    allow_from: self.allow_from.as_deref(),
                    group_policy: self.group_policy,
                    group_allow_from: self.group_allow_from.as_deref(),
                    groups: &self.groups,
                }
            }
        }
    };
}
