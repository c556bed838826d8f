//! `channel_section!`: the one definition of the fields every channel's section shares (the
//! access fields, `mediaMaxMb`, the block-streaming keys, `accounts`) and of the
//! [`ChannelSection`](super::ChannelSection) accessors over them. A channel writes only its
//! own fields (credentials, API address, …: all optional), its docs for the shared ones
//! (which differ by platform: ids, defaults) and its name, own keys and `has_credentials`.

/// Defines a channel's section struct and its `ChannelSection` impl. The shared fields keep
/// their place in the struct (after `enabled` and the channel's own fields), so the
/// serialized form and the schema are what the hand-written structs had.
macro_rules! channel_section {
    (
        $(#[$struct_doc:meta])*
        pub struct $name:ident {
            $(#[$enabled_doc:meta])*
            enabled,
            own {
                $($(#[$own_doc:meta])* pub $own:ident: Option<$own_ty:ty>,)*
            }
            $(#[$allow_doc:meta])*
            allow_from,
            $(#[$group_allow_doc:meta])*
            group_allow_from,
            $(#[$groups_doc:meta])*
            groups,
            $(#[$media_doc:meta])*
            media_max_mb,
            $(#[$limit_doc:meta])*
            text_chunk_limit,
            $(#[$accounts_doc:meta])*
            accounts,
        }
        impl ChannelSection {
            $($section_item:tt)*
        }
    ) => {
        $(#[$struct_doc])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            $(#[$enabled_doc])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub enabled: Option<bool>,
            $(
                $(#[$own_doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $own: Option<$own_ty>,
            )*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dm_policy: Option<$crate::channels::DmPolicyName>,
            $(#[$allow_doc])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub allow_from: Option<Vec<String>>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub group_policy: Option<$crate::channels::GroupPolicyName>,
            $(#[$group_allow_doc])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub group_allow_from: Option<Vec<String>>,
            $(#[$groups_doc])*
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub groups: BTreeMap<String, $crate::channels::GroupConfig>,
            $(#[$media_doc])*
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
            $(#[$limit_doc])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub text_chunk_limit: Option<std::num::NonZeroUsize>,
            $(#[$accounts_doc])*
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub accounts: BTreeMap<String, $name>,
        }

        impl $crate::channels::ChannelSection for $name {
            $($section_item)*

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
