//! Secrets in memory and on screen: [`Secret`] and [`mask_secret`] live in `pincer-base`
//! (one type for every crate that holds a credential) and are re-exported here so
//! `pincer_auth::Secret` keeps working.

pub use pincer_base::secret::{Secret, mask_secret};
