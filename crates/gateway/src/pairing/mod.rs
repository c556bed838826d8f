//! DM pairing and access policy, as OpenClaw's (`src/pairing/pairing-store.ts`,
//! `docs/channels/pairing.md`): who may talk to the bot in a DM or a group, and the owner
//! approval step that lets an unknown DM sender in.
//!
//! - [`store`]: the files under `$PINCER_HOME/credentials/`: pending requests
//!   (`<channel>-pairing.json`) and the approved senders (`<channel>-allowFrom.json`,
//!   `<channel>-<account>-allowFrom.json`), with their locking and atomic 0600 writes.
//! - [`code`]: the 8-character pairing codes, from the OS CSPRNG.
//! - [`policy`]: the pure access decisions ([`dm_access`], [`group_access`]) and how an
//!   allow-list entry matches a sender.
//! - [`messages`]: the texts sent to the sender and to the owner, so every channel says the
//!   same thing.
//! - [`error`]: [`PairingError`] and the channel/account name rule.

pub mod code;
pub mod error;
mod files;
pub mod messages;
pub mod policy;
pub mod store;

pub use code::{CODE_ALPHABET, CODE_LENGTH, generate_code, is_valid_code};
pub use error::{PairingError, is_valid_name};
pub use messages::{approved_notice, owner_notice, pairing_full_reply, pairing_reply};
pub use policy::{
    DmAccess, DmPolicy, GroupAccess, GroupPolicy, dm_access, entry_matches, group_access,
    is_listed, is_owner,
};
pub use store::{
    Approved, DEFAULT_LOCK_TIMEOUT, DEFAULT_MAX_PENDING, DEFAULT_TTL, PairingRequestOutcome,
    PairingStore, PendingRequest, Revoked,
};
