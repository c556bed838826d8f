//! Pincer's base crate: the small pieces every other crate shares and none owns — the
//! [`Secret`] type (a credential that never prints), private file modes ([`private`]: 0600
//! files, 0700 directories under `$PINCER_HOME`), atomic file replacement ([`atomic`]),
//! wall-clock time and pi's ISO 8601 text ([`time`], via jiff), random ids ([`id`]), the HTTP
//! `Retry-After` parser ([`retry_after`]), OpenClaw's config durations ([`duration`]) and file
//! locks with a deadline ([`lock`]), and an error's text with its causes ([`error_chain`]). It
//! depends on nothing of Pincer's and stays tiny.

pub mod atomic;
pub mod duration;
pub mod error_chain;
pub mod id;
pub mod lock;
pub mod private;
pub mod retry_after;
pub mod secret;
pub mod time;

pub use atomic::{AtomicWrite, FileMode, write_atomic};
pub use error_chain::error_chain;
pub use lock::{DEFAULT_LOCK_TIMEOUT, HeldLock, LockTimeout, lock_within};
pub use private::{
    PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, USER_UMASK_ENV, create_private_dir_all,
    private_open_options, user_umask,
};
pub use secret::{Secret, mask_secret};
pub use time::now_ms;
