//! Pincer's base crate: the small pieces every other crate shares and none owns. Today the
//! [`Secret`] type (a credential that never prints) and the private file modes
//! ([`private`]: 0600 files, 0700 directories for everything under `$PINCER_HOME`). It
//! depends on nothing of Pincer's and stays tiny.

pub mod private;
pub mod secret;

pub use private::{
    PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, USER_UMASK_ENV, create_private_dir_all,
    private_open_options, user_umask,
};
pub use secret::{Secret, mask_secret};
